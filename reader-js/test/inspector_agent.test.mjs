// slow: a headless chromium (make test-fast leaves this file out)
// The web inspector's overview and model card in a real headless browser
// (Debian's chromium, driven by playwright-core, helpers/inspector.mjs): the
// overview comes first and shows the environment, the algorithm, the mean
// reward ± std with its episodes, the timesteps and the spaces; the model
// card's facts (provenance, evaluations, how to load) follow; malformed metadata keys
// are listed with their METADATA_INVALID warning instead; text from the file
// reaches the page as text only. On the metadata-* vectors, on archives built
// here and on one the Python tools wrote (a Stable-Baselines3 PPO saved, then
// evaluated with `rlarchive evaluate --record`). The screenshot goes to
// /tmp/inspector-agent.png. Reports itself skipped where chromium is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { open } from '../src/index.js';
import { archive } from './helpers/build.mjs';
import { formatShort } from '../web/format.js';
import { startInspector, pythonFiles } from './helpers/inspector.mjs';

const vectorsDir = new URL('../../test-vectors/', import.meta.url);
const SCREENSHOT = '/tmp/inspector-agent.png';
const HOSTILE = '<img src=x onerror="window.__injected=1">';

// a tiny PPO trained on CartPole, saved by the bridge (provenance from the live model), evaluated and recorded by the CLI
const TRAIN = `
import subprocess, sys
from stable_baselines3 import PPO
from rlarchive import sb3 as rsb3
model = PPO("MlpPolicy", "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu", policy_kwargs={"net_arch": [8]})
model.learn(32)
path = sys.argv[1] + "/ppo-cartpole.rlarchive"
rsb3.save(model, path)
r = subprocess.run([sys.executable, "-m", "rlarchive", "evaluate", path, "--env", "CartPole-v1", "--episodes", "3", "--seed", "5", "--record"], capture_output=True, text=True)
sys.stderr.write(r.stderr)
sys.exit(r.returncode)
`;

/** An archive the Python tools wrote, or why there is none (a string). */
async function pythonAgent() {
  const out = await pythonFiles(TRAIN, ['ppo-cartpole.rlarchive']);
  return typeof out === 'string' ? out : out['ppo-cartpole.rlarchive'];
}

/** What the Agent section shows, read from the page. */
async function shown(page) {
  return page.evaluate(() => {
    const text = (sel) => document.querySelector(sel)?.textContent ?? null;
    const rows = (sel) =>
      Array.from(document.querySelectorAll(`${sel} tr`), (tr) => [
        tr.querySelector('th')?.textContent,
        tr.querySelector('td')?.textContent,
      ]);
    return {
      first: Array.from(document.querySelectorAll('main > section')).find((s) => !s.hidden)?.id,
      env: text('#agent-env'),
      algorithm: text('#agent-algorithm'),
      rewards: Array.from(document.querySelectorAll('#agent-reward .reward'), (d) => ({
        env: d.dataset.env,
        value: d.querySelector('.reward-value').textContent,
        text: d.textContent,
      })),
      timesteps: text('#agent-timesteps'),
      summary: rows('table.agent-summary'),
      provenance: rows('table.provenance'),
      evaluations: Array.from(document.querySelectorAll('#evaluations-table tbody tr'), (tr) => ({
        env: tr.dataset.env,
        mean: tr.querySelector('.eval-mean').dataset.value,
        std: tr.querySelector('.eval-std').dataset.value,
        meanText: tr.querySelector('.eval-mean').textContent,
        stdText: tr.querySelector('.eval-std').textContent,
        cells: tr.children.length,
      })),
      warnings: Array.from(
        document.querySelectorAll('#metadata-warnings li'),
        (li) => li.querySelector('.loc').textContent,
      ),
      noEvaluations: !!document.querySelector('#no-evaluations'),
      howToLoad: text('#how-to-load'),
      spaces: Array.from(document.querySelectorAll('#agent .space-summary'), (e) => e.dataset.space),
    };
  });
}

/** The mean reward as the page and the model card's model-index write it: two decimals. */
const meanStd = (e) => `${e.mean.toFixed(2)} ± ${e.std.toFixed(2)}`;

/** The checks every archive's Agent section passes, against what the reader's API says of the same bytes. */
async function checkAgainstApi(page, bytes, what) {
  const ar = await open(bytes);
  const p = ar.provenance;
  const evals = ar.evaluations;
  const s = await shown(page);
  assert.equal(s.first, 'agent', `${what}: the Agent section comes first`);
  assert.equal(s.env, p.envId, what);
  assert.equal(
    s.timesteps === null ? null : s.timesteps.split(' ')[0],
    p.numTimesteps === null ? null : String(p.numTimesteps),
    what,
  );
  const latest = new Map(evals.map((e) => [e.env_id, e]));
  assert.deepEqual(
    s.rewards.map((r) => [r.env, r.value]),
    [...latest.values()].map((e) => [e.env_id, meanStd(e)]),
    what,
  );
  for (const r of s.rewards)
    assert.match(r.text, new RegExp(` over ${latest.get(r.env).episodes} episodes? of `), what);
  assert.deepEqual(
    s.evaluations.map((e) => [e.env, Number(e.mean), Number(e.std)]),
    evals.map((e) => [e.env_id, e.mean, e.std]),
    what,
  );
  // shown to about six significant digits, not as raw doubles (the exact value is in data-value and the title)
  assert.deepEqual(
    s.evaluations.map((e) => [e.meanText, e.stdText]),
    evals.map((e) => [formatShort(e.mean, 6), formatShort(e.std, 6)]),
    what,
  );
  assert.equal(s.noEvaluations, evals.length === 0, what);
  const prov = Object.fromEntries(s.provenance);
  for (const [lib, version] of Object.entries(p.versions)) assert.equal(prov[lib], version, `${what}: versions.${lib}`);
  assert.deepEqual(
    s.provenance.filter(([k]) => k === 'wrapper').map(([, v]) => v.split('(')[0]),
    (p.wrappers ?? []).map((w) => w.name),
    what,
  );
  assert.equal('environments in parallel' in prov, p.nEnvs !== null, what);
  assert.deepEqual(
    s.warnings,
    ar.warnings.filter((w) => w.code === 'METADATA_INVALID').map((w) => w.pointer),
    what,
  );
  await ar.close();
  return s;
}

test("web inspector in chromium: the overview first (environment, algorithm, mean reward, timesteps, spaces), then the card's facts", {
  timeout: 240_000,
}, async (t) => {
  if (!existsSync(new URL('index.json', vectorsDir))) return t.skip('test-vectors/index.json is not there');
  const index = JSON.parse(readFileSync(new URL('index.json', vectorsDir), 'utf8'));
  const files = {};
  const vectors = index.cases.filter((c) => c.id.startsWith('metadata-'));
  assert.ok(vectors.length >= 4);
  for (const c of vectors) files[`/vectors/${c.file}`] = readFileSync(new URL(c.file, vectorsDir));
  files['/hostile.rlarchive'] = archive({
    manifest: (m) => ({
      ...m,
      metadata: { env_id: HOSTILE, 'sb3.algorithm': HOSTILE, 'versions.torch': '2.13.0+cpu' },
    }),
  });
  files['/bare.rlarchive'] = archive();
  const training = pythonAgent(); // while the browser starts
  const browser = await startInspector(files, { viewport: { width: 1280, height: 900 } });
  const agent = await training;
  if (typeof browser === 'string') return t.skip(browser);
  if (typeof agent !== 'string') files['/ppo.rlarchive'] = agent;
  else t.diagnostic(`no archive from the Python tools: ${agent}`);
  const { page, problems, srv } = browser;
  try {
    const openUrl = async (path) => {
      await page.goto(srv.url(`/web/?url=${encodeURIComponent(path)}`));
      await page.waitForSelector('body[data-state="ready"], body[data-state="error"]');
      assert.equal(await page.getAttribute('body', 'data-state'), 'ready', path);
    };

    // every metadata vector: what the page shows is what the API reads, malformed keys as their warnings
    for (const c of vectors) {
      await openUrl(`/vectors/${c.file}`);
      const s = await checkAgainstApi(page, files[`/vectors/${c.file}`], c.id);
      const expected = (c.issues ?? []).filter((i) => i.code === 'METADATA_INVALID').map((i) => i.pointer);
      assert.deepEqual(s.warnings, expected, c.id);
      if (c.id === 'metadata-provenance') {
        assert.ok(s.rewards.length > 0 && s.evaluations.length > 0 && s.provenance.some(([k]) => k === 'wrapper'));
        assert.match(s.summary.find(([k]) => k === 'algorithm')[1], /not recorded/);
      }
    }

    // markup in the file's strings reaches the page as text
    await openUrl('/hostile.rlarchive');
    await checkAgainstApi(page, files['/hostile.rlarchive'], 'hostile');
    assert.equal((await shown(page)).algorithm, HOSTILE);
    assert.equal(await page.evaluate(() => window.__injected), undefined);
    assert.equal(await page.locator('#agent img').count(), 0);

    // nothing recorded: said so
    await openUrl('/bare.rlarchive');
    const bare = await checkAgainstApi(page, files['/bare.rlarchive'], 'bare');
    assert.deepEqual(
      bare.summary.slice(0, 4).map(([k, v]) => [k, /not recorded|no evaluation recorded/.test(v)]),
      [
        ['environment', true],
        ['algorithm', true],
        ['mean reward', true],
        ['timesteps', true],
      ],
    );

    // an agent the Python tools wrote and evaluated
    if (files['/ppo.rlarchive']) {
      await openUrl('/ppo.rlarchive');
      const s = await checkAgainstApi(page, files['/ppo.rlarchive'], 'python');
      const ar = await open(files['/ppo.rlarchive']);
      assert.equal(s.algorithm.split(' ')[0], ar.metadata['sb3.algorithm']);
      assert.equal(ar.provenance.envId, 'CartPole-v1');
      assert.equal(ar.evaluations.length, 1);
      assert.deepEqual(s.spaces.sort(), ['action_space', 'observation_space']);
      assert.match(s.howToLoad, /rsb3\.load\("\/ppo\.rlarchive"\)/);
      assert.match(s.howToLoad, /--env "CartPole-v1"/);
      await ar.close();
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
    }
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
