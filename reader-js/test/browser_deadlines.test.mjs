// slow: a headless chromium and servers that drip (make test-fast leaves this file out)
// In a real headless browser (Debian's chromium, driven by playwright-core),
// the inspector's source (web/source.js, the reader's HttpSource) gives up on a
// server that drips its body with IO_TIMEOUT, and on a body shorter than its
// Content-Length with IO_ERROR at once, instead of leaving the page on
// "Opening…" (spec §11.4). The servers listen on 127.0.0.1 only and stop with
// the test. Reports itself skipped where chromium is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enc } from './helpers/build.mjs';
import { serve } from './helpers/server.mjs';
import { ARGS, CHROMIUM, chromiumOrReason } from './helpers/chromium.mjs';
import { staticHandlers } from './helpers/static.mjs';

const PPO = readFileSync(new URL('../../test-vectors/valid/ppo-like-agent.rlarchive', import.meta.url));

test("browser: the inspector's source ends a dripping or short response instead of waiting for ever", {
  timeout: 120_000,
}, async (t) => {
  const chromium = await chromiumOrReason();
  if (typeof chromium === 'string') return t.skip(chromium);

  const timers = new Set();
  /** A 206 answer of the first bytes asked for, its Content-Length claiming `extra` more; the body drips or stalls. */
  const misbehaving =
    ({ drip, extra }) =>
    (req, res) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
      const start = m ? Number(m[1]) : 0;
      const end = Math.min(m ? Number(m[2]) : PPO.length - 1, PPO.length - 1);
      const part = PPO.subarray(start, end + 1);
      res.writeHead(206, {
        'Content-Range': `bytes ${start}-${end}/${PPO.length}`,
        'Content-Length': part.length + extra,
        'Cache-Control': 'no-store',
      });
      if (!drip) return res.write(part); // then stall: the response never ends
      let at = 0;
      const step = () => {
        if (res.destroyed || at >= part.length) return;
        res.write(part.subarray(at, at + 1));
        at += 1;
        const timer = setTimeout(() => {
          timers.delete(timer);
          step();
        }, 500);
        timers.add(timer);
      };
      step();
    };
  const extra = {
    ...staticHandlers(new URL('../src/', import.meta.url), '/src'),
    ...staticHandlers(new URL('../web/', import.meta.url), '/web'),
    '/index.html': (req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(enc('<!doctype html><title>rlarchive-reader deadlines</title>'));
    },
    '/drip.rlarchive': misbehaving({ drip: true, extra: 0 }),
    '/short.rlarchive': misbehaving({ drip: false, extra: 1000 }),
  };
  const srv = await serve({ '/ok.rlarchive': PPO }, { extra });
  const profile = mkdtempSync(join(tmpdir(), 'rla-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS });
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(srv.url('/index.html'));
    const attempt = (path, options) =>
      page.evaluate(
        async ({ url, options }) => {
          const { openShared } = await import('/web/source.js');
          const start = performance.now();
          try {
            const src = await openShared(url, options);
            return { code: null, size: src.size, took: performance.now() - start };
          } catch (e) {
            return { code: e.code ?? String(e), took: performance.now() - start };
          }
        },
        { url: srv.url(path), options },
      );

    const ok = await attempt('/ok.rlarchive', {});
    assert.deepEqual([ok.code, ok.size], [null, PPO.length]);
    const drip = await attempt('/drip.rlarchive', { timeout: 1000 });
    assert.equal(drip.code, 'IO_TIMEOUT');
    assert.ok(drip.took < 10_000, `after ${drip.took} ms with timeout 1000`);
    const short = await attempt('/short.rlarchive', {}); // the default deadline (30 s) is not what ends it
    assert.equal(short.code, 'IO_ERROR');
    assert.ok(short.took < 10_000, `after ${short.took} ms`);
  } finally {
    for (const timer of timers) clearTimeout(timer);
    await context?.close();
    await srv.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
