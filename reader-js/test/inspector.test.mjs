// slow: a headless chromium (make test-fast leaves this file out)
// The web inspector (web/) in a real headless browser (Debian's chromium,
// driven by playwright-core): it opens test vectors by `?url=` (Range
// requests) and through the file picker, shows the validation report,
// producer, spaces, schedules and a tensor's histogram, computes the actions
// of every portable-policy vector from its observation form as SB3 did (in
// the page's worker, as the tensor statistics are), shows
// the error codes of invalid vectors, reads no tensor bytes of a large archive
// until asked, puts the file's strings in the page as text only, and opens a
// dropped file; and that a policy slow to act on leaves the page responsive
// and is stopped by Cancel, as is the reading of a tensor, each in a worker
// that Cancel terminates. Screenshots go to a temporary directory (kept when
// RLARCHIVE_KEEP_SCREENSHOTS is set) and the main one to /tmp/inspector.png.
// Reports itself skipped where chromium is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, readFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open } from '../src/index.js';
import { DTYPES, viewElements } from '../src/dtypes.js';
import { decodeBase64 } from '../src/base64.js';
import { archive, bytesOf } from './helpers/build.mjs';
import { sameActions } from './helpers/actions.mjs';
import { startInspector } from './helpers/inspector.mjs';

const vectorsDir = new URL('../../test-vectors/', import.meta.url);
const SCREENSHOT = '/tmp/inspector.png';
const SHOWCASE = 'policy-ppo-dict-observation';

/** The elements of an inline ndarray value as numbers. */
const elements = (v) => Array.from(viewElements(v.dtype, decodeBase64(v.base64)), Number);

/** [[data-obs-path, element values]] for one observation of a predict file (an ndarray, or a map of them). */
function formFields(obs) {
  if (obs.$type === 'ndarray') return [['obs', elements(obs)]];
  return Object.entries(obs).map(([k, v]) => [`obs/${k}`, elements(v)]);
}

/** The rank of one observation of a space the portable policy takes (a Box's, 0 for Discrete, ...). */
function observationRank(space) {
  if (space.kind === 'box') return space.shape.length;
  if (space.kind === 'multi_discrete') return space.nvec.shape.length;
  if (space.kind === 'multi_binary') return Array.isArray(space.n) ? space.n.length : 1;
  return 0;
}

/** Whether the observations of a predict file come in batches (a leading dimension), which the page's form does not take. */
function batched(obs, space) {
  if (obs.$type === 'ndarray') return obs.shape.length > observationRank(space);
  const [key, sub] = space.spaces[0];
  return obs[key].shape.length > observationRank(sub);
}

/** The action the page shows, as an inline ndarray value (what sameActions compares). */
function shownAction({ dtype, shape, values }) {
  const T = DTYPES[dtype].array;
  const items = values === '(empty)' ? [] : values.split(', ');
  const parse = (x) => (x === 'inf' ? Infinity : x === '-inf' ? -Infinity : Number(x)); // the page writes NaN, inf, -inf
  const data = T === BigInt64Array || T === BigUint64Array ? T.from(items, BigInt) : T.from(items, parse);
  return {
    $type: 'ndarray',
    dtype,
    shape: JSON.parse(shape),
    base64: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64'),
  };
}

/** Sets the observation form's controls (inputs, selects, checkboxes, text areas) as a user would. */
async function fillObservation(page, fields, masks) {
  await page.evaluate(
    ({ fields, masks }) => {
      const set = (el, v) => {
        if (el.type === 'checkbox') el.checked = v !== 0;
        else el.value = String(v);
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
      };
      for (const [path, values] of fields) {
        const field = document.querySelector(`[data-obs-path="${CSS.escape(path)}"]`);
        if (!field) throw new Error(`no field ${path}`);
        if (field.dataset.form === 'text') set(field.querySelector('textarea'), values.join(' '));
        else values.forEach((v, i) => set(field.querySelector(`[data-index="${i}"]`), v));
      }
      if (masks) masks.forEach((m, i) => set(document.querySelector(`#action-masks [data-index="${i}"]`), m));
    },
    { fields, masks },
  );
}

async function readAction(page, count) {
  await page.waitForSelector(`#action[data-count="${count}"]`);
  return page.evaluate(() => ({
    dtype: document.querySelector('#action .action-dtype').textContent,
    shape: document.querySelector('#action .action-shape').textContent,
    values: document.querySelector('#action .action-values').textContent,
  }));
}

test('web inspector in chromium: vectors by URL, picker and drop, report, plots, histogram, policy actions, invalid codes, lazy reads, escaping', {
  timeout: 240_000,
}, async (t) => {
  if (!existsSync(new URL('index.json', vectorsDir))) return t.skip('test-vectors/index.json is not there');

  const index = JSON.parse(readFileSync(new URL('index.json', vectorsDir), 'utf8'));
  const files = {};
  const addVector = (file) => (files[`/vectors/${file}`] = readFileSync(new URL(file, vectorsDir)));
  const predictCases = index.cases.filter((c) => c.expect.result === 'actions');
  assert.ok(predictCases.length > 0, 'the vectors have predict cases');
  for (const c of predictCases) addVector(c.file);
  // one invalid vector refused by opening, one opened but refused by validation (its policy description)
  const invalid = [
    index.cases.find(
      (c) => c.expect.result === 'error' && c.issues?.[0]?.code?.startsWith('ZIP_') && !c.file.endsWith('.gz'),
    ),
    index.cases.find((c) => c.id === 'policy-weight-not-f32'),
  ].filter(Boolean);
  assert.equal(invalid.length, 2);
  for (const c of invalid) addVector(c.file);
  // a large archive: 4 MiB of weights
  const w = new Float32Array(1024 * 1024);
  for (let i = 0; i < w.length; i++) w[i] = Math.sin(i / 1000);
  // (with markup in its strings, which must reach the page as text)
  const HOSTILE = '<img src=x onerror="window.__injected=1">';
  const big = archive({
    data: {
      data: {
        gamma: 0.99,
        lr: { $type: 'schedule', kind: 'linear', start: 0.001, end: 0, end_fraction: 0.5 },
        [HOSTILE]: HOSTILE,
      },
    },
    tensors: {
      policy: {
        w: { dtype: 'F32', shape: [1024, 1024], data: bytesOf(w) },
        b: { dtype: 'F64', shape: [3], data: bytesOf(new Float64Array([1, 2, 3])) },
        [HOSTILE]: { dtype: 'U8', shape: [2], data: new Uint8Array([1, 2]) },
      },
    },
    manifest: (m) => ({ ...m, producer: { name: HOSTILE, version: '<b>1</b>' }, metadata: { [HOSTILE]: HOSTILE } }),
  });
  files['/big.rlarchive'] = big;

  const browser = await startInspector(files, { viewport: { width: 1280, height: 900 } });
  if (typeof browser === 'string') return t.skip(browser);
  const { page, problems, srv } = browser;
  const shots = mkdtempSync(join(tmpdir(), 'rla-inspector-shots-'));
  try {
    const openUrl = async (rel, extraQuery = '') => {
      await page.goto(srv.url(`/web/?url=${encodeURIComponent(rel)}${extraQuery}`));
      await page.waitForSelector('body[data-state="ready"], body[data-state="error"]');
    };

    // 1. a valid policy vector by a relative ?url=: report, producer, spaces, schedules, a tensor's histogram
    const showcase = predictCases.find((c) => c.id === `${SHOWCASE}-predict`);
    const showcaseDump = JSON.parse(readFileSync(new URL(`valid/${SHOWCASE}.dump.json`, vectorsDir), 'utf8'));
    srv.reset();
    await openUrl(`../vectors/${showcase.file}`);
    assert.ok(srv.stats.ranges.length > 0, 'the archive was read with Range requests');
    assert.equal(await page.getAttribute('#validation', 'data-status'), 'valid');
    assert.match(await page.textContent('#report .banner'), /^Valid/);
    const { producer } = showcaseDump.manifest;
    assert.equal(await page.textContent('#producer'), `${producer.name} ${producer.version}`);
    assert.equal(await page.textContent('#format-version'), showcaseDump.manifest.format_version);
    assert.match(await page.textContent('#overview'), /sb3\.algorithm/);
    assert.match(await page.textContent('#hyperparameters-table'), /gamma/);
    const spaces = await page.$$eval('#spaces .card', (cards) =>
      cards.map((c) => [c.dataset.path, c.querySelector('.space').dataset.kind]),
    );
    assert.deepEqual(spaces.sort(), [
      ['action_space', 'discrete'],
      ['observation_space', 'dict'],
    ]);
    assert.equal(
      await page.locator('#spaces [data-path="observation_space"] .space-dict > ul.tree > li').count(),
      2,
      'the Dict space is a tree of its two keys',
    );
    assert.match(
      await page.textContent('#spaces [data-path="observation_space"]'),
      /Box\(F32, \[3\]\)[\s\S]*low[\s\S]*-1/,
    );
    const plots = await page.$$eval('#schedules figure.schedule', (fs) =>
      fs.map((f) => [f.dataset.path, f.querySelector('svg path.series')?.getAttribute('d').split('L').length]),
    );
    assert.ok(plots.length >= 1 && plots.every(([, n]) => n > 100), `schedules plotted: ${JSON.stringify(plots)}`);
    // choosing a tensor reads it and shows its histogram and statistics
    const ar = await open(readFileSync(new URL(showcase.file, vectorsDir)));
    const info = ar.tensorInfo('policy')[0];
    const tensor = Array.from((await ar.tensor('policy', info.name)).data);
    await page.click(`button.tensor[data-tensor="policy/${info.name}"]`);
    await page.waitForSelector('#tensor-detail svg.histogram rect.bar');
    const stats = await page.evaluate(() =>
      ['min', 'max', 'mean'].map((k) =>
        Math.fround(Number(document.querySelector(`#tensor-detail .stat-${k}`).textContent)),
      ),
    );
    const mean = tensor.reduce((a, b) => a + b, 0) / tensor.length;
    assert.deepEqual(stats.slice(0, 2), [Math.min(...tensor), Math.max(...tensor)]);
    assert.ok(Math.abs(stats[2] - mean) <= 1e-3 * Math.max(1, Math.abs(mean)), `mean ${stats[2]} vs ${mean}`);
    assert.equal((await page.locator('#tensor-detail rect.bar').count()) > 0, true);
    assert.equal(await page.getAttribute('#tensor-detail', 'data-status'), 'done');
    // the statistics came from the tensors' worker (the policy has its own)
    assert.deepEqual(
      (await workerCounts(page)).map((w) => w.done).sort((a, b) => a.tensor - b.tensor),
      [
        { policy: 1, predict: 0, tensor: 0, array: 0 },
        { policy: 0, predict: 0, tensor: 1, array: 0 },
      ],
    );

    // 2. every portable-policy vector: the page's form and Predict button give SB3's actions
    // (through the page's URL field; the showcase, open already, comes first)
    const openByField = async (rel) => {
      await page.fill('#url-input', rel);
      await page.click('#url-form button[type=submit]');
      await page.waitForSelector('body[data-state="ready"], body[data-state="error"]');
    };
    let screenshotTaken = false;
    const formCases = [];
    for (const c of predictCases) {
      const spec = JSON.parse(readFileSync(new URL(c.expect.predict_file, vectorsDir), 'utf8'));
      const { observationSpace } = await (await open(readFileSync(new URL(c.file, vectorsDir)))).policy();
      if (!batched(spec.observations[0], observationSpace)) formCases.push(c);
    }
    assert.ok(formCases.includes(showcase));
    for (const c of [showcase, ...formCases.filter((x) => x !== showcase)]) {
      const spec = JSON.parse(readFileSync(new URL(c.expect.predict_file, vectorsDir), 'utf8'));
      if (c !== showcase) await openByField(`../vectors/${c.file}`);
      await page.waitForSelector('#policy[data-status="ready"]');
      assert.equal(await page.evaluate(() => new URLSearchParams(location.search).get('url')), `../vectors/${c.file}`);
      const got = [];
      for (let i = 0; i < spec.observations.length; i++) {
        if (spec.episode_starts?.[i]) {
          assert.ok(await page.locator('#reset-state').count(), `${c.id}: a recurrent policy has a state reset`);
          await page.click('#reset-state');
        }
        await fillObservation(
          page,
          formFields(spec.observations[i]),
          spec.action_masks ? elements(spec.action_masks[i]) : null,
        );
        await page.click('#predict');
        const shown = await readAction(page, i + 1);
        got.push(shownAction(shown));
      }
      assert.equal(sameActions(got, spec.actions), '', `${c.id}: the page acts like SB3`);
      // every action came from the policy's worker
      const predicted = (await workerCounts(page)).filter((w) => w.done.policy > 0).map((w) => w.done.predict);
      assert.deepEqual(predicted, [spec.observations.length], `${c.id}: the actions came from the worker`);
      if (c === showcase && !screenshotTaken) {
        await page.screenshot({ path: join(shots, 'inspector.png'), fullPage: true });
        copyFileSync(join(shots, 'inspector.png'), SCREENSHOT);
        screenshotTaken = true;
      }
    }
    // the random sample and reset buttons fill the form with values the policy takes
    await openUrl(`../vectors/${predictCases.find((c) => c.id === 'policy-dqn-nature-cnn-predict').file}`);
    await page.waitForSelector('#policy[data-status="ready"]');
    await page.click('#random-sample');
    await page.click('#predict');
    assert.match(await page.textContent('#action .action-values'), /^\d+$/);
    await page.click('#reset-observation');
    assert.match(await page.inputValue('[data-obs-path="obs"] textarea'), /^0( 0)+$/);
    // a referenced array of the data (the image space's bounds) is read and summarised by the worker when asked
    const low = page.locator('#spaces [data-path="observation_space"] .bound').first();
    assert.match(await low.textContent(), /→ tensors\/arrays data\/observation_space\/low \(1296 elements\)/);
    await low.locator('button').click();
    await page.waitForFunction(() =>
      document.querySelector('#spaces .bound .array-values')?.textContent.includes('all 0'),
    );
    assert.equal((await low.textContent()).trim(), 'low U8[1, 36, 36] all 0 (1296 values)');
    assert.deepEqual((await workerCounts(page)).map((w) => w.done.array).sort(), [0, 1]);

    // 3. invalid vectors: the report shows their expected error code
    // (an archive that fails to open: its error once, the report adding only what it does not say)
    for (const c of invalid) {
      await openUrl(`../vectors/${c.file}`);
      await page.waitForSelector('#validation[data-status="invalid"]');
      const opened = await page.evaluate(() => window.rlarchiveInspector.openError?.code ?? null);
      if (opened) {
        assert.equal(await page.getAttribute('#open-error .banner', 'data-code'), opened);
        const report = await page.evaluate(() => window.rlarchiveInspector.report.issues.map((i) => i.code));
        assert.ok(report.includes(c.expect.code), `${c.id}: ${report}`);
        if (report.length === 1) {
          assert.equal(
            (await page.textContent('#validation')).split(opened).length - 1,
            1,
            `${c.id}: the opening error is shown once`,
          );
          assert.equal(await page.locator('#report-same').count(), 1);
        }
      } else {
        assert.match(await page.textContent('#report .banner'), new RegExp(`^Invalid: .*${c.expect.code}`));
        const rows = await page.$$eval('#report tr[data-code]', (trs) =>
          trs.map((tr) => [tr.dataset.code, tr.querySelector('.badge').textContent]),
        );
        assert.ok(
          rows.some(([code, sev]) => code === c.expect.code && sev === 'error'),
          `${c.id}: ${JSON.stringify(rows)}`,
        );
      }
      await page.screenshot({ path: join(shots, `${c.id}.png`), fullPage: true });
    }

    // 4. the file picker (a File: sliced reads)
    await page.goto(srv.url('/web/'));
    await page.setInputFiles('#file-input', fileURLToPath(new URL(showcase.file, vectorsDir)));
    await page.waitForSelector('body[data-state="ready"]');
    assert.equal(await page.getAttribute('#validation', 'data-status'), 'valid');
    assert.equal(await page.textContent('#producer'), `${producer.name} ${producer.version}`);
    assert.match(await page.textContent('#overview'), new RegExp(showcase.file.split('/').pop().replace(/\./g, '\\.')));

    // 5. a large archive: opening reads the headers only; a tensor's bytes are read when it is chosen
    srv.reset();
    await openUrl('/big.rlarchive', '&autoread=0');
    const openBytes = srv.stats.bytes;
    assert.ok(openBytes < 200_000, `opening transferred ${openBytes} of ${big.length} bytes`);
    assert.equal(await page.locator('#run-validation').count(), 1, 'full validation waits for a click');
    assert.equal(await page.locator('#schedules figure.schedule').count(), 1);
    await page.click('button.tensor[data-tensor="policy/w"]');
    await page.waitForSelector('#tensor-detail[data-tensor="policy/w"], #tensor-detail .tensor-detail');
    const wStats = await page.evaluate(() =>
      ['min', 'max'].map((k) => Math.fround(Number(document.querySelector(`#tensor-detail .stat-${k}`).textContent))),
    );
    assert.deepEqual(
      (await workerCounts(page)).map((w) => w.done),
      [{ policy: 0, predict: 0, tensor: 1, array: 0 }],
      'the worker computed the statistics',
    );
    assert.deepEqual(wStats, [w.reduce((a, b) => Math.min(a, b)), w.reduce((a, b) => Math.max(a, b))]);
    const tensorBytes = srv.stats.bytes - openBytes;
    assert.ok(
      tensorBytes >= w.byteLength && tensorBytes < w.byteLength + 200_000,
      `choosing the tensor transferred ${tensorBytes} bytes`,
    );
    await page.click('#run-validation');
    await page.waitForSelector('#validation[data-status="valid"]');
    assert.equal(await page.textContent('#producer'), `${HOSTILE} <b>1</b>`);
    assert.ok((await page.textContent('#overview')).includes(`${HOSTILE}${HOSTILE}`), 'metadata shown as text');
    assert.ok(
      (await page.textContent('#hyperparameters')).includes(JSON.stringify(HOSTILE)),
      'a data string shown as text',
    );
    await page.click(`button.tensor[data-tensor=${JSON.stringify(`policy/${HOSTILE}`)}]`);
    await page.waitForSelector('#tensor-detail svg.histogram');
    assert.deepEqual(
      await page.evaluate(() => [document.querySelectorAll('main img, main b').length, window.__injected ?? null]),
      [0, null],
    );

    // 6. drag and drop (a File)
    await page.goto(srv.url('/web/'));
    const dropped = await page.evaluate(
      async (url) => {
        const file = new File([await (await fetch(url)).arrayBuffer()], 'dropped.rlarchive');
        const dt = new DataTransfer();
        dt.items.add(file);
        document.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
        await window.rlarchiveInspector.ready;
        return [
          document.querySelector('#validation').dataset.status,
          document.querySelector('#producer').textContent,
          document.querySelector('#status strong').textContent,
        ];
      },
      srv.url(`/vectors/${showcase.file}`),
    );
    assert.deepEqual(dropped, ['valid', `${producer.name} ${producer.version}`, 'dropped.rlarchive']);

    assert.deepEqual(problems, []);
    t.diagnostic(
      `inspector: ${formCases.length} policy vectors acted as SB3 (${predictCases.length - formCases.length} with batches of observations left out); opening a ${big.length}-byte archive transferred ${openBytes} bytes; screenshot ${SCREENSHOT}${process.env.RLARCHIVE_KEEP_SCREENSHOTS ? `, more in ${shots}` : ''}`,
    );
  } finally {
    await browser.close();
    if (!process.env.RLARCHIVE_KEEP_SCREENSHOTS) rmSync(shots, { recursive: true, force: true });
  }
});

/**
 * A valid policy archive that is slow to act on: a Discrete(n) observation,
 * one-hot encoded to n values, through `k` GELU activations (each element's
 * erf summed term by term), then argmax, so that the action is the observation.
 * Valid for k up to 127 with n = 2^20 (RLA_policy §5.11: a GELU costs 32 operations per element).
 */
function slowPolicyArchive(n, k) {
  const space = { $type: 'space', kind: 'discrete', n, start: 0, dtype: 'I64' };
  const nodes = Array.from({ length: k }, (_, i) => ({
    op: 'activation',
    in: [i ? `a${i - 1}` : 'obs'],
    out: `a${i}`,
    fn: 'gelu',
  }));
  const policy = {
    policy: {
      observation_space: space,
      action_space: space,
      normalize_images: true,
      nodes,
      action: { op: 'argmax', in: `a${k - 1}` },
    },
  };
  return archive({
    data: { data: { observation_space: space, action_space: space } },
    extensions: { 'extensions/RLA_policy/policy.json': JSON.stringify(policy) },
    manifest: (m) => ({ ...m, extensions_used: ['RLA_policy'] }),
  });
}

/**
 * A request handler serving `bytes` to Range requests (`bytes=start-end`, as the
 * reader sends them) that never answers a request for `stall` bytes or more:
 * reading a large tensor stays under way until it is cancelled.
 */
function stallingRanges(bytes, stall) {
  const stalled = [];
  const handler = (req, res) => {
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m ? Math.min(Number(m[2]) + 1, bytes.length) : bytes.length;
    if (end - start >= stall) return stalled.push(res);
    const headers = { 'Accept-Ranges': 'bytes', 'Content-Length': end - start, 'Cache-Control': 'no-store' };
    if (m) headers['Content-Range'] = `bytes ${start}-${end - 1}/${bytes.length}`;
    res.writeHead(m ? 206 : 200, headers);
    res.end(bytes.subarray(start, end));
  };
  return { handler, stalled };
}

/** Each live inspector worker's counts of what it computed (worker.js `rlarchiveWorker.done`). */
async function workerCounts(page) {
  const out = [];
  for (const w of page.workers().filter((x) => new URL(x.url()).pathname === '/web/worker.js')) {
    try {
      out.push({ worker: w, done: await w.evaluate(() => self.rlarchiveWorker.done) });
    } catch {
      // terminated meanwhile
    }
  }
  return out;
}

test('web inspector in chromium: a slow policy runs in a worker, the page stays responsive, Cancel stops it; so are tensor statistics', {
  timeout: 180_000,
}, async (t) => {
  // as many GELU layers over 2^20 values as take about 8 s here, measured on two layers: long
  // enough for the page to be seen answering while it runs; from 8 to 100 layers (at 32 operations
  // per element, 100 layers cost 100·2^25, within MAX_POLICY_OPERATIONS = 2^32)
  const N = 2 ** 20;
  const probe = await (await open(slowPolicyArchive(N, 2))).policy();
  let started = performance.now();
  assert.equal(probe.predict(7).action.data[0], 7n);
  const probeMs = performance.now() - started;
  const K = Math.min(100, Math.max(8, Math.round((8000 / Math.max(1, probeMs)) * 2)));
  const slow = slowPolicyArchive(N, K);

  // an archive with a 1 MiB tensor whose read stalls, and a small one
  const stall = stallingRanges(
    archive({
      tensors: {
        policy: {
          big: { dtype: 'F32', shape: [512, 512] },
          small: { dtype: 'U8', shape: [3], data: new Uint8Array([3, 250, 7]) },
        },
      },
    }),
    1 << 20,
  );
  const browser = await startInspector({ '/slow.rlarchive': slow }, { extra: { '/stall.rlarchive': stall.handler } });
  if (typeof browser === 'string') return t.skip(browser);
  const { page, problems, srv } = browser;
  try {
    await page.goto(srv.url('/web/?url=/slow.rlarchive'));
    await page.waitForSelector('#policy[data-status="ready"]');
    assert.equal(await page.getAttribute('#validation', 'data-status'), 'valid');
    // the policy was loaded by a worker, not by the page
    const loaded = await workerCounts(page);
    assert.deepEqual(
      loaded.map((w) => w.done),
      [{ policy: 1, predict: 0, tensor: 0, array: 0 }],
    );
    assert.equal(await page.evaluate(() => typeof window.rlarchiveInspector.policy.predict), 'undefined');
    const first = loaded[0].worker;
    const input = '[data-obs-path="obs"] [data-index="0"]';

    // Predict: "Computing…" with a Cancel button, while the page goes on answering
    await page.fill(input, '123456');
    await page.click('#predict');
    await page.waitForSelector('#action[data-status="computing"] #cancel-predict');
    assert.match(await page.textContent('#action'), /Computing…/);
    assert.equal(await page.isDisabled('#predict'), true, 'no second prediction while one runs');
    // a script runs and a control reacts while the prediction is under way (on the main thread,
    // both would wait for the prediction's end and then see data-status="done")
    started = performance.now();
    assert.equal(await page.evaluate(() => document.querySelector('#action').dataset.status), 'computing');
    await page.click('#random-sample');
    const sampled = await page.inputValue(input);
    const reactMs = performance.now() - started;
    assert.notEqual(sampled, '123456', 'Random sample changed the observation');
    assert.equal(
      await page.getAttribute('#action', 'data-status'),
      'computing',
      'the page reacted before the prediction ended',
    );

    // Cancel terminates the worker; the page says so
    const closed = first.waitForEvent('close', { timeout: 10_000 });
    await page.click('#cancel-predict');
    await page.waitForSelector('#action[data-status="cancelled"]');
    assert.match(await page.textContent('#action'), /^Cancelled/);
    await closed;
    assert.equal(await page.isDisabled('#predict'), false);
    assert.equal(await page.locator('#action-history li').count(), 0);

    // the next Predict starts a fresh worker, which loads the policy again and computes the action
    await page.fill(input, '654321');
    started = performance.now();
    await page.click('#predict');
    await page.waitForSelector('#action[data-count="1"]', { timeout: 150_000 });
    const browserMs = performance.now() - started;
    assert.equal(await page.getAttribute('#action', 'data-status'), 'done');
    assert.equal(await page.textContent('#action .action-values'), '654321');
    const after = await workerCounts(page);
    assert.deepEqual(
      after.map((w) => w.done),
      [{ policy: 0, predict: 1, tensor: 0, array: 0 }],
    );
    assert.notEqual(after[0].worker, first);

    // choosing a tensor: its worker reads it (here a read that never ends) with Cancel offered;
    // Cancel terminates that worker, and the next tensor is read and summarised by a fresh one
    await page.goto(srv.url('/web/?url=/stall.rlarchive&autoread=0'));
    await page.waitForSelector('body[data-state="ready"]');
    await page.click('button.tensor[data-tensor="policy/big"]');
    await page.waitForSelector('#tensor-detail[data-status="computing"] #cancel-tensor');
    for (let i = 0; i < 200 && stall.stalled.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(stall.stalled.length, 1, 'the tensor is being read');
    const reading = await workerCounts(page);
    assert.deepEqual(
      reading.map((w) => w.done),
      [{ policy: 0, predict: 0, tensor: 0, array: 0 }],
    );
    const tensorsClosed = reading[0].worker.waitForEvent('close', { timeout: 10_000 });
    await page.click('#cancel-tensor');
    await page.waitForSelector('#tensor-detail[data-status="cancelled"]');
    await tensorsClosed;
    await page.click('button.tensor[data-tensor="policy/small"]');
    await page.waitForSelector('#tensor-detail[data-status="done"] svg.histogram rect.bar');
    assert.deepEqual(
      await page.evaluate(() =>
        ['min', 'max'].map((k) => document.querySelector(`#tensor-detail .stat-${k}`).textContent),
      ),
      ['3', '250'],
    );
    assert.deepEqual(
      (await workerCounts(page)).map((w) => w.done),
      [{ policy: 0, predict: 0, tensor: 1, array: 0 }],
    );

    // the Content Security Policy allows workers from the page's origin only: a blob: worker is refused
    assert.match(
      await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content'),
      /(^|; )worker-src 'self'(;|$)/,
    );
    const refused = await page.evaluate(
      () =>
        new Promise((resolve) => {
          document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true });
          try {
            new Worker(URL.createObjectURL(new Blob(['postMessage(1)'], { type: 'text/javascript' })));
          } catch (e) {
            resolve(`threw ${e.name}`);
          }
        }),
    );
    assert.equal(refused, 'worker-src');
    assert.deepEqual(
      problems.filter((p) => !/Content Security Policy/.test(p)),
      [],
    );
    t.diagnostic(
      `slow policy (${slow.length} bytes, ${K} GELU layers over ${N} values; 2 layers took ${Math.round(probeMs)} ms in Node): ${Math.round(browserMs)} ms in the worker, after a restart; while it ran the page answered a script and a click in ${Math.round(reactMs)} ms`,
    );
  } finally {
    await browser.close();
  }
});
