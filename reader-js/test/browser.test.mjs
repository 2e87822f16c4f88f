// slow: a headless chromium (make test-fast leaves this file out)
// A real headless browser (Debian's chromium, driven by playwright-core) opens
// an archive from a local HTTP server through Range requests and checks a
// tensor's values, then runs portable policies of the test vectors, with the
// WebAssembly SIMD kernel and with the pure JavaScript one, and compares their
// actions with SB3's. Reports itself skipped where chromium is
// not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from '../src/index.js';
import { archive, bytesOf, enc } from './helpers/build.mjs';
import { serve } from './helpers/server.mjs';
import { sameActions } from './helpers/actions.mjs';
import { ARGS, CHROMIUM, chromiumOrReason } from './helpers/chromium.mjs';
import { staticHandlers } from './helpers/static.mjs'; // RLARCHIVE_CHROMIUM overrides the path, to test the skip path

test('browser: open a vector over HTTP Range requests and check a tensor', { timeout: 120_000 }, async (t) => {
  const chromium = await chromiumOrReason();
  if (typeof chromium === 'string') return t.skip(chromium);

  const w = new Float32Array(256 * 1024); // 1 MiB tensor
  for (let i = 0; i < w.length; i++) w[i] = i * 0.5;
  const bytes = archive({
    data: {
      data: {
        gamma: 0.99,
        name: 'ppo',
        lr: { $type: 'schedule', kind: 'linear', start: 1, end: 0, end_fraction: 0.5 },
      },
    },
    tensors: {
      policy: {
        w: { dtype: 'F32', shape: [512, 512], data: bytesOf(w) },
        b: { dtype: 'F64', shape: [3], data: bytesOf(new Float64Array([1, 2, 3])) },
      },
    },
  });
  const files = { '/a.rlarchive': bytes, '/index.html': enc('<!doctype html><title>rlarchive-reader test</title>') };
  // portable policies of the test vectors, with the actions Stable-Baselines3 computed
  const vectors = new URL('../../test-vectors/valid/', import.meta.url);
  const policies = ['recurrent-ppo-two-layer-lstm', 'dqn-nature-cnn'].filter((id) =>
    existsSync(new URL(`policy-${id}.rlarchive`, vectors)),
  );
  for (const id of policies) files[`/${id}.rlarchive`] = readFileSync(new URL(`policy-${id}.rlarchive`, vectors));
  const extra = staticHandlers(new URL('../src/', import.meta.url), '/src'); // ES modules need their content type
  extra['/index.html'] = (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(files['/index.html']);
  };
  const srv = await serve(files, { extra });
  const profile = mkdtempSync(join(tmpdir(), 'rla-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS });
    const page = context.pages()[0] ?? (await context.newPage());
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(srv.url('/index.html'));
    srv.reset();
    const opened = await page.evaluate(async (url) => {
      const m = await import('/src/index.js');
      const ar = await m.open(url);
      globalThis.ar = ar;
      return {
        gamma: ar.data.gamma,
        name: ar.data.name,
        lr: ar.data.lr.valueAt(0.75),
        groups: ar.groups,
        fetched: ar.bytesFetched,
      };
    }, srv.url('/a.rlarchive'));
    const openBytes = srv.stats.bytes;
    assert.deepEqual(opened, { gamma: 0.99, name: 'ppo', lr: 0.5, groups: ['policy'], fetched: opened.fetched });
    assert.ok(openBytes < 200_000, `opening transferred ${openBytes} of ${bytes.length} bytes`);
    assert.ok(srv.stats.ranges.length > 0, 'Range requests were used');
    const tensor = await page.evaluate(async () => {
      const t = await globalThis.ar.tensor('policy', 'w', { verify: true });
      const b = await globalThis.ar.tensor('policy', 'b');
      return {
        ctor: t.data.constructor.name,
        shape: t.shape,
        first: Array.from(t.data.subarray(0, 4)),
        last: t.data[t.data.length - 1],
        b: Array.from(b.data),
      };
    });
    assert.deepEqual(tensor, {
      ctor: 'Float32Array',
      shape: [512, 512],
      first: [0, 0.5, 1, 1.5],
      last: (w.length - 1) * 0.5,
      b: [1, 2, 3],
    });
    const browserDump = await page.evaluate(async () => globalThis.ar.dump());
    assert.equal(browserDump, await dump(bytes), 'the browser produces the same canonical dump');
    const fromBlob = await page.evaluate(async (url) => {
      const m = await import('/src/index.js');
      const blob = await (await fetch(url)).blob();
      const ar = await m.open(blob);
      return Array.from((await ar.tensor('policy', 'b')).data);
    }, srv.url('/a.rlarchive'));
    assert.deepEqual(fromBlob, [1, 2, 3]);
    const bad = await page.evaluate(async () => {
      const m = await import('/src/index.js');
      try {
        await m.open(new Uint8Array([1, 2, 3]));
        return null;
      } catch (e) {
        return [e instanceof m.RlarchiveError, e.code];
      }
    });
    assert.deepEqual(bad, [true, 'ARCHIVE_NOT_RLARCHIVE']);
    for (const id of policies) {
      const spec = JSON.parse(readFileSync(new URL(`policy-${id}-predict.predict.json`, vectors), 'utf8'));
      const runs = await page.evaluate(
        async ({ url, spec }) => {
          const m = await import('/src/index.js');
          const d = await import('/src/decode.js');
          const g = await import('/src/extensions/policy/gemm.js');
          const value = (v) => d.decodeValue(m.parseJson(new TextEncoder().encode(JSON.stringify(v))), null);
          const masks = spec.action_masks ? spec.action_masks.map(value) : null;
          const out = { available: g.wasmAvailable() };
          for (const kernel of ['wasm', 'js']) {
            g.setWasmEnabled(kernel === 'wasm'); // the WebAssembly SIMD kernel, then the pure JavaScript one
            const policy = await (await m.open(url)).policy();
            out[kernel] = m
              .act(policy, spec.observations.map(value), {
                episodeStarts: spec.episode_starts ?? null,
                actionMasks: masks,
              })
              .map(d.inlineArray);
          }
          g.setWasmEnabled(true);
          return out;
        },
        { url: srv.url(`/${id}.rlarchive`), spec },
      );
      assert.equal(runs.available, true, 'the browser compiles the WebAssembly SIMD kernel');
      assert.equal(sameActions(runs.wasm, spec.actions), '', `the browser acts like SB3 (${id}, WebAssembly SIMD)`);
      assert.equal(sameActions(runs.js, spec.actions), '', `the browser acts like SB3 (${id}, pure JavaScript)`);
    }
    assert.deepEqual(errors, []);
    t.diagnostic(
      `browser: opening transferred ${openBytes} bytes of ${bytes.length} in ${srv.stats.ranges.length} range requests`,
    );
  } finally {
    await context?.close();
    await srv.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
