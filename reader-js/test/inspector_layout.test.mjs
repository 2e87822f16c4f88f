// slow: a headless chromium, and a PPO trained on CartPole (make test-fast leaves this file out)
// The web inspector's layout in a real headless browser (Debian's chromium,
// driven by playwright-core, helpers/inspector.mjs), on a Stable-Baselines3
// PPO trained here on CartPole (saved as an rlarchive and as SB3's zip), a SAC
// on Pendulum with its replay buffer and a recorded evaluation (valid, as an
// older writer wrote it, and with a damaged member) and on test vectors (a DQN
// with an image observation, a MaskablePPO): at desktop (1280 px) and phone
// (390 px, and 420 px) widths, screenshots are taken (to a temporary
// directory, kept when RLARCHIVE_KEEP_SCREENSHOTS is set) and the page's
// structure is checked from the DOM: the verdict first (an invalid file's
// validation report before what it holds, the verdict before the mean
// reward), the table of contents and the Policy panel within the first screen
// at desktop width, the headings in the order of the table of contents, which
// follows the scroll; nothing wider than the viewport; each card's children
// inside the card; every cell of the evaluations on one line. Then: the
// optimizer's state under the names the archive records (an older archive's
// guessed and marked ?), the replay buffer's rows filled, an invalid file's
// verdict naming its first error and where; the
// overview, the policy's diagram against the description's nodes, only what
// the policy uses (no action masks or image normalisation where it has none),
// the Box bounds in the observation form, tensor groups with `policy` first
// and the optimizer's state under the parameters PyTorch gives it, a
// tensor's histogram right under the tensor, "read so far" never above the
// file's size, and an SB3 zip dropped on the page: ARCHIVE_NOT_RLARCHIVE
// once, with the command line's advice in its words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from '../src/index.js';
import { startInspector, pythonFiles } from './helpers/inspector.mjs';

const vectorsDir = new URL('../../test-vectors/', import.meta.url);

// a tiny PPO on CartPole, trained (so that its optimizer has state), saved by the bridge and by SB3;
// the optimizer's parameter names in PyTorch's order, and the command line's error line for the zip;
// a tiny SAC on Pendulum with its replay buffer (300 of 5,000 rows) and an evaluation recorded, the same SAC as
// an older writer wrote it (no param_tensors), and a copy whose optimizer state is damaged (valid to open, invalid)
const TRAIN = `
import json, os, struct, subprocess, sys, zipfile
from stable_baselines3 import PPO, SAC
from rlarchive import sb3 as rsb3
from rlarchive.evaluate import evaluate, record
from rlarchive.sb3 import optimizer_names
out = sys.argv[1]
model = PPO("MlpPolicy", "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu", policy_kwargs={"net_arch": [8, 8]})
model.learn(32)
rsb3.save(model, os.path.join(out, "ppo.rlarchive"))
model.save(os.path.join(out, "model.zip"))
names = [n for n, _ in model.policy.named_parameters()]
r = subprocess.run([sys.executable, "-m", "rlarchive", "inspect", "model.zip"], capture_output=True, text=True, cwd=out)
sac = SAC("MlpPolicy", "Pendulum-v1", buffer_size=5000, learning_starts=250, batch_size=16, seed=0, device="cpu", policy_kwargs={"net_arch": [8]})
sac.learn(300)
path = os.path.join(out, "sac.rlarchive")
rsb3.save(sac, path, replay_buffer=True)
record(path, evaluate(path, "Pendulum-v1", episodes=2, seed=0))
named = optimizer_names.with_param_tensors
optimizer_names.with_param_tensors = lambda optimizers, model, policy: dict(optimizers)  # as before the names
rsb3.save(sac, os.path.join(out, "sac-old.rlarchive"))
optimizer_names.with_param_tensors = named
raw = bytearray(open(path, "rb").read())
with zipfile.ZipFile(path) as z:
    info = z.getinfo("tensors/optimizer.critic.optimizer.safetensors")
n, m = struct.unpack_from("<HH", raw, info.header_offset + 26)
raw[info.header_offset + 30 + n + m + info.file_size - 1] ^= 0xFF
open(os.path.join(out, "sac-bad.rlarchive"), "wb").write(raw)
by_id = {id(p): n for n, p in sac.policy.named_parameters()}
actor = [by_id[id(p)] for p in sac.actor.optimizer.param_groups[0]["params"]]
buffer = {"pos": int(sac.replay_buffer.pos), "size": int(sac.replay_buffer.buffer_size), "class": type(sac.replay_buffer).__name__}
json.dump({"parameters": names, "cli": r.stderr, "actor": actor, "buffer": buffer}, open(os.path.join(out, "facts.json"), "w"))
`;

/** The page's structure where it can go wrong, read from the DOM (see the file's description). */
async function structure(page) {
  return page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const visible = (el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
    };
    // elements inside a container that scrolls sideways are allowed past its edge
    const scrolled = (el) => {
      for (let p = el.parentElement; p; p = p.parentElement)
        if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true;
      return false;
    };
    const outside = (inner, outer) => inner.left < outer.left - 1 || inner.right > outer.right + 1;
    const wide = [];
    for (const el of document.querySelectorAll('body *')) {
      if (!visible(el) || scrolled(el)) continue;
      const r = el.getBoundingClientRect();
      if (r.left < -1 || r.right > vw + 1)
        wide.push(
          `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className?.baseVal ?? el.className}: ${Math.round(r.left)}..${Math.round(r.right)}`,
        );
    }
    const escaped = [];
    for (const card of document.querySelectorAll('main section:not([hidden]), main .card, .net-box')) {
      if (!visible(card)) continue;
      const box = card.getBoundingClientRect();
      for (const el of card.querySelectorAll('*')) {
        if (!visible(el) || scrolled(el)) continue;
        if (outside(el.getBoundingClientRect(), box))
          escaped.push(
            `${card.id || card.className} > ${el.tagName.toLowerCase()}.${el.className?.baseVal ?? el.className}`,
          );
      }
    }
    const sections = Array.from(document.querySelectorAll('main > section')).filter((s) => !s.hidden);
    const toc = document.querySelector('#toc');
    // a cell on more than one line (a raw double wrapped, a header split mid-word): its text's boxes at two heights
    const lines = (el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const tops = Array.from(range.getClientRects(), (r) => r.top);
      return tops.length && Math.max(...tops) - Math.min(...tops) > 8 ? 2 : 1;
    };
    const verdict = document.querySelector('#verdict');
    const reward = document.querySelector('#agent-reward');
    return {
      wrapped: Array.from(document.querySelectorAll('#evaluations-table th, #evaluations-table td'))
        .filter((c) => lines(c) > 1)
        .map((c) => c.textContent),
      verdict: verdict.hidden ? null : verdict.dataset.verdict,
      verdictFirst: Array.from(document.querySelector('main').children).find((c) => !c.hidden) === verdict,
      verdictTop: verdict.getBoundingClientRect().top + scrollY,
      rewardTop: reward ? reward.getBoundingClientRect().top + scrollY : null,
      viewport: [vw, innerHeight],
      scrollWidth: document.documentElement.scrollWidth,
      wide: wide.slice(0, 10),
      escaped: escaped.slice(0, 10),
      headings: sections.map((s) => s.querySelector('h2').textContent),
      tops: sections.map((s) => s.getBoundingClientRect().top + scrollY),
      toc: Array.from(toc.querySelectorAll('a'), (a) => a.textContent),
      tocBox: visible(toc) ? (({ top, bottom }) => ({ top, bottom }))(toc.getBoundingClientRect()) : null,
      policyTop: document.querySelector('#policy').getBoundingClientRect().top + scrollY,
      current: toc.querySelector('a[aria-current]')?.textContent ?? null,
    };
  });
}

async function openUrl(page, url, path) {
  await page.goto(url(`/web/?url=${encodeURIComponent(path)}`));
  await page.waitForSelector('body[data-state="ready"], body[data-state="error"]');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready', path);
}

/** The description's nodes as the diagram draws them: each node's op, an activation of the node above in its box. */
function expectedBoxes(policy) {
  const boxes = [];
  let previous = null;
  for (const n of policy.desc.nodes) {
    const last = boxes[boxes.length - 1];
    if (n.op === 'activation' && last && !last.activation && n.in.length === 1 && n.in[0] === previous)
      last.activation = n.fn;
    else boxes.push({ op: n.op, activation: null, weight: n.weight?.shape.map(Number) ?? null });
    previous = n.out;
  }
  return boxes;
}

test('web inspector in chromium: layout at desktop and phone widths, overview, diagram, tensors by parameter, SB3 zip', {
  timeout: 240_000,
}, async (t) => {
  if (!existsSync(new URL('index.json', vectorsDir))) return t.skip('test-vectors/index.json is not there');
  const files = {
    '/dqn.rlarchive': readFileSync(new URL('valid/policy-dqn-nature-cnn.rlarchive', vectorsDir)),
    '/maskable.rlarchive': readFileSync(new URL('valid/policy-maskable-ppo-masks.rlarchive', vectorsDir)),
  };
  const outputs = [
    'ppo.rlarchive',
    'model.zip',
    'sac.rlarchive',
    'sac-old.rlarchive',
    'sac-bad.rlarchive',
    'facts.json',
  ];
  const training = pythonFiles(TRAIN, outputs); // while the browser starts
  const browser = await startInspector(files);
  const trained = await training;
  if (typeof browser === 'string' || typeof trained === 'string') {
    if (typeof browser !== 'string') await browser.close();
    return t.skip(typeof browser === 'string' ? browser : `no model from the Python tools: ${trained}`);
  }
  for (const name of outputs.filter((n) => n.endsWith('.rlarchive'))) files[`/${name}`] = trained[name];
  const facts = JSON.parse(trained['facts.json']);
  const shots = mkdtempSync(join(tmpdir(), 'rla-inspector-layout-'));
  let ppo;
  try {
    ppo = await open(files['/ppo.rlarchive']);
    const ppoPolicy = await ppo.policy();
    const { page, problems } = browser;
    // 1. the layout at each width, from the DOM; screenshots for a person to look at
    for (const [width, height] of [
      [1280, 900],
      [420, 900],
      [390, 844],
    ]) {
      await page.setViewportSize({ width, height });
      const paths = ['/ppo.rlarchive', '/sac.rlarchive', '/sac-bad.rlarchive', '/dqn.rlarchive'];
      for (const path of width === 420 ? ['/ppo.rlarchive'] : paths) {
        const invalid = path === '/sac-bad.rlarchive';
        await openUrl(page, browser.url, path);
        await page.waitForSelector('#policy[data-status="ready"]');
        await page.waitForSelector(`#verdict[data-verdict="${invalid ? 'invalid' : 'valid'}"]`);
        await page.screenshot({ path: join(shots, `${path.slice(1)}-${width}.png`) });
        if (path === '/ppo.rlarchive')
          await page.screenshot({ path: join(shots, `${path.slice(1)}-${width}-full.png`), fullPage: true });
        const s = await structure(page);
        const what = `${path} at ${width} px`;
        assert.deepEqual(s.wide, [], `${what}: nothing wider than the viewport`);
        assert.ok(s.scrollWidth <= width, `${what}: the page scrolls sideways (${s.scrollWidth} px)`);
        assert.deepEqual(s.escaped, [], `${what}: each card's children inside the card`);
        assert.deepEqual(s.toc, s.headings, `${what}: the table of contents lists the sections`);
        assert.deepEqual(
          [...s.tops].sort((a, b) => a - b),
          s.tops,
          `${what}: the sections in the order of the table of contents`,
        );
        // the page leads with its verdict; an invalid file's validation report comes before what the file holds
        assert.ok(s.verdictFirst, `${what}: the verdict comes first`);
        assert.equal(s.verdict, invalid ? 'invalid' : 'valid', what);
        assert.deepEqual(s.headings.slice(0, 2), invalid ? ['Validation', 'Overview'] : ['Overview', 'Policy'], what);
        assert.equal(s.current, s.headings[0], `${what}: the table of contents marks the section being read`);
        if (s.rewardTop !== null) assert.ok(s.verdictTop < s.rewardTop, `${what}: the verdict before the mean reward`);
        assert.deepEqual(s.wrapped, [], `${what}: every cell of the evaluations on one line`);
        if (width === 1280) {
          assert.ok(
            s.tocBox && s.tocBox.top >= 0 && s.tocBox.bottom <= height,
            `${what}: the table of contents within the first screen`,
          );
          assert.ok(s.policyTop < height, `${what}: the Policy panel within the first screen (at ${s.policyTop} px)`);
        }
        // the table of contents follows the scroll
        await page.evaluate(() => document.querySelector('#tensors').scrollIntoView({ block: 'start' }));
        await page.waitForFunction(() => document.querySelector('#toc a[aria-current]')?.textContent === 'Tensors');
        const toc = await page.evaluate(() => {
          const r = document.querySelector('#toc').getBoundingClientRect();
          return [r.top, r.bottom];
        });
        assert.ok(toc[0] >= 0 && toc[0] < height, `${what}: the table of contents stays on screen (${toc})`);
      }
    }

    await page.setViewportSize({ width: 1280, height: 900 });
    await openUrl(page, browser.url, '/ppo.rlarchive');
    await page.waitForSelector('#policy[data-status="ready"]');

    // 2. the overview: algorithm, environment, spaces, validation, the policy's layers
    const overview = await page.evaluate(() =>
      Object.fromEntries(
        Array.from(document.querySelectorAll('#agent table.agent-summary tr'), (tr) => [
          tr.querySelector('th').textContent,
          tr.querySelector('td').textContent,
        ]),
      ),
    );
    assert.equal(overview.algorithm.split(' ')[0], ppo.metadata['sb3.algorithm']);
    assert.equal(overview.environment.split(' ')[0], ppo.provenance.envId);
    assert.match(overview['observation space'], /^Box\(F32, \[4\]\)$/);
    assert.match(overview.validation, /^valid — 0 errors/);
    assert.equal(
      overview.policy,
      `${ppoPolicy.nodes.length} layers: ${ppoPolicy.nodes.map((n) => (n.op === 'activation' ? n.fn : n.op)).join(' → ')} → ${ppoPolicy.action.op}`,
    );

    // 3. the diagram: the observation's shape, each node (an activation in the box above it), each linear's width
    const diagram = await page.evaluate(() => ({
      inputs: Array.from(document.querySelectorAll('#policy-diagram [data-input]'), (b) => [
        b.dataset.input,
        b.dataset.shape,
      ]),
      boxes: Array.from(document.querySelectorAll('#policy-diagram .net-node'), (b) => ({
        op: b.dataset.op,
        activation: b.dataset.activation ?? null,
        shape: b.dataset.shape,
      })),
      head: document.querySelector('#policy-diagram .net-head').dataset.op,
      steps: Array.from(document.querySelectorAll('#policy-diagram > li'), (li) => li.dataset.step),
    }));
    assert.deepEqual(diagram.inputs, [
      ['obs', JSON.stringify(ppoPolicy.observationSpace.shape.map(Number)).replace(/,/g, ', ')],
    ]);
    const boxes = expectedBoxes(ppoPolicy);
    assert.deepEqual(
      diagram.boxes.map(({ op, activation }) => ({ op, activation })),
      boxes.map(({ op, activation }) => ({ op, activation })),
    );
    boxes.forEach((b, i) => b.weight && assert.equal(diagram.boxes[i].shape, `[${b.weight[0]}]`, `box ${i}`));
    assert.equal(diagram.head, ppoPolicy.action.op);
    assert.deepEqual([diagram.steps[0], ...diagram.steps.slice(-2)], ['input', 'head', 'action']);

    // 4. only what the policy uses: no masks, no image normalisation for 4 floats; the Box bounds in the form
    const rows = await page.$$eval('#policy table.policy-summary th', (ths) => ths.map((th) => th.textContent));
    assert.ok(
      !rows.includes('normalize images') && !rows.includes('VecNormalize') && !rows.includes('recurrent'),
      JSON.stringify(rows),
    );
    assert.equal(await page.locator('#action-masks, #action-masks-omitted').count(), 0);
    const bounds = await page.$$eval('#observation-form .bounds', (spans) =>
      spans.map((b) => [Number(b.dataset.low), Number(b.dataset.high), b.textContent]),
    );
    const space = ppoPolicy.observationSpace;
    assert.deepEqual(
      bounds.map(([lo, hi]) => [lo, hi]),
      Array.from(space.low.data, (lo, i) => [lo, space.high.data[i]]),
    );
    assert.ok(bounds.every(([, , text]) => / … /.test(text)));

    // 5. tensors: policy first, optimizer state last and by parameter, as PyTorch orders the optimizer's parameters
    const groups = await page.$$eval('#tensors details.group', (ds) => ds.map((d) => d.dataset.group));
    assert.equal(groups[0], 'policy');
    assert.deepEqual(groups.slice(-1), ['optimizer.policy.optimizer']);
    await page.click('#tensors details[data-group="optimizer.policy.optimizer"] > summary');
    const params = await page.$$eval('#tensors details[data-group="optimizer.policy.optimizer"] tr.param-row', (trs) =>
      trs.map((tr) => [Number(tr.dataset.position), tr.dataset.parameter]),
    );
    assert.deepEqual(
      params,
      facts.parameters.map((name, i) => [i, name]),
    );
    const stateRows = await page.$$eval(
      '#tensors details[data-group="optimizer.policy.optimizer"] tr.param-row + tr button.tensor',
      (bs) => bs.map((b) => b.textContent),
    );
    assert.ok(
      stateRows.length === facts.parameters.length && stateRows.every((n) => /^exp_avg(_sq)?$|^step$/.test(n)),
      JSON.stringify(stateRows),
    );

    // 5b. the optimizers' state under the names the archive records; an older archive's guessed and marked ?
    const actorRows = () =>
      page.$$eval('#tensors details[data-group="optimizer.actor.optimizer"] tr.param-row[data-position]', (trs) =>
        trs.map((tr) => ({
          parameter: tr.dataset.parameter,
          recorded: tr.dataset.recorded,
          name: tr.querySelector('.param-name').textContent,
        })),
      );
    await openUrl(page, browser.url, '/sac.rlarchive');
    const recorded = await actorRows();
    assert.deepEqual(
      recorded,
      facts.actor.map((n) => ({ parameter: n, recorded: 'true', name: n })),
    );
    await openUrl(page, browser.url, '/sac-old.rlarchive');
    const guessed = await actorRows();
    assert.ok(
      guessed.every((r) => r.recorded === 'false' && r.name === `${r.parameter}?`),
      JSON.stringify(guessed),
    );
    assert.notDeepEqual(
      guessed.map((r) => r.parameter),
      facts.actor,
      "the guess by shape takes PyTorch order of names (log_std before mu), not the optimizer's",
    );
    assert.match(
      await page.textContent('#tensors details[data-group="optimizer.actor.optimizer"] .optimizer-note'),
      /does not name these parameters/,
    );

    // 5c. the replay buffer in the command line's words: rows filled of its size, transitions
    await openUrl(page, browser.url, '/sac.rlarchive');
    await page.waitForSelector('#overview-replay-buffer[data-status="done"]');
    await page.waitForSelector('#replay-buffer-summary[data-status="done"]');
    const b = facts.buffer;
    const want = `${b.class}, ${b.pos} of ${b.size.toLocaleString('en-US')} rows filled in the environment (${b.pos} transitions)`;
    assert.equal(b.pos, 300);
    assert.equal(await page.textContent('#overview-replay-buffer'), want);
    assert.equal(await page.textContent('#replay-buffer-summary'), want);

    // 5d. an invalid file: the verdict names its first error, where it is, before anything the file holds
    await openUrl(page, browser.url, '/sac-bad.rlarchive');
    await page.waitForSelector('#verdict[data-verdict="invalid"]');
    const verdictText = await page.textContent('#verdict');
    assert.match(
      verdictText,
      /^INVALID — 1 error; the first: ZIP_CRC_MISMATCH at tensors\/optimizer\.critic\.optimizer\.safetensors @\d+/,
    );
    await page.screenshot({ path: join(shots, 'sac-bad-1280.png') });
    await openUrl(page, browser.url, '/ppo.rlarchive');
    await page.waitForSelector('#policy[data-status="ready"]');

    // 6. a tensor's histogram right under it, on screen
    const name = ppo.tensorInfo('policy').at(-1).name;
    const button = page.locator(`button.tensor[data-tensor="policy/${name}"]`);
    await button.scrollIntoViewIfNeeded();
    await button.click();
    await page.waitForSelector('#tensor-detail[data-status="done"] svg.histogram');
    const placed = await page.evaluate((tensor) => {
      const row = document.querySelector(`button.tensor[data-tensor="${tensor}"]`).closest('tr');
      const detail = document.querySelector('#tensor-detail').getBoundingClientRect();
      return {
        next: row.nextElementSibling?.contains(document.querySelector('#tensor-detail')),
        top: detail.top,
        bottom: detail.bottom,
        height: innerHeight,
      };
    }, `policy/${name}`);
    assert.ok(placed.next, 'the histogram is in the row after the tensor');
    assert.ok(placed.top >= 0 && placed.top < placed.height, `the histogram is on screen: ${JSON.stringify(placed)}`);

    // 7. "read so far": each byte once; the page reads some twice (validation, then its workers)
    const read = await page.evaluate(() => ({
      shown: Number(document.querySelector('#status').dataset.read),
      sum: window.rlarchiveInspector.source.bytesRead,
      size: window.rlarchiveInspector.source.size,
    }));
    assert.ok(read.sum > read.size, `the page read ${read.sum} bytes of ${read.size}`);
    assert.equal(read.shown, read.size, 'validated in full: all of the file was read, once');
    assert.match(
      await page.textContent('#status'),
      new RegExp(`read so far: ${(read.size / 1024).toFixed(1)} KiB of it`),
    );

    // 8. an image observation and a masked policy show what they use
    await openUrl(page, browser.url, '/dqn.rlarchive');
    await page.waitForSelector('#policy[data-status="ready"]');
    assert.ok(
      (await page.$$eval('#policy table.policy-summary th', (ths) => ths.map((th) => th.textContent))).includes(
        'normalize images',
      ),
    );
    assert.match(await page.textContent('[data-obs-path="obs"] .obs-label'), /bounds 0 … 255/);
    assert.equal(await page.locator('#action-masks').count(), 0);
    await openUrl(page, browser.url, '/maskable.rlarchive');
    await page.waitForSelector('#policy[data-status="ready"]');
    const maskable = await (await open(files['/maskable.rlarchive'])).policy();
    assert.equal(await page.locator('#action-masks input[type=checkbox]').count(), maskable.maskWidth);

    // 9. an SB3 zip dropped on the page: ARCHIVE_NOT_RLARCHIVE once, with the command line's advice
    await page.goto(browser.url('/web/'));
    const zip = Array.from(trained['model.zip']);
    await page.evaluate(async (bytes) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(bytes)], 'model.zip'));
      document.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      await window.rlarchiveInspector.ready;
    }, zip);
    await page.screenshot({ path: join(shots, 'sb3-zip.png') });
    const validation = await page.textContent('#validation');
    assert.equal(validation.split('ARCHIVE_NOT_RLARCHIVE').length - 1, 1, validation);
    const cliHint = /\((this is a Stable-Baselines3 model: [^)]*)\)/.exec(facts.cli)?.[1];
    assert.ok(cliHint, facts.cli);
    assert.equal(await page.textContent('#convert-hint'), cliHint);
    assert.deepEqual(problems, []);
    t.diagnostic(
      `screenshots in ${shots}${process.env.RLARCHIVE_KEEP_SCREENSHOTS ? '' : ' (removed; set RLARCHIVE_KEEP_SCREENSHOTS to keep them)'}`,
    );
  } finally {
    await browser.close();
    await ppo?.close();
    if (!process.env.RLARCHIVE_KEEP_SCREENSHOTS) rmSync(shots, { recursive: true, force: true });
  }
});
