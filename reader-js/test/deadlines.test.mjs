// slow: servers that drip, and time limits that must pass (make test-fast leaves this file out)
// URL sources have deadlines (spec §11.4): a server that trickles or stalls
// fails with IO_TIMEOUT, a body that does not match its headers with IO_ERROR
// at once, and honest servers, large reads included, still work. The
// inspector's source (web/source.js) has the same deadlines. The servers
// listen on 127.0.0.1 only; elapsed times are checked only against bounds far
// below what the servers would take without deadlines (hours).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { open, dump, validate, RlarchiveError } from '../src/index.js';
import { HttpSource, DEFAULT_TIMEOUT_MS, DEFAULT_MIN_RATE } from '../src/sources.js';
import { openShared } from '../web/source.js';
import { misbehavingServer } from './helpers/misbehaving_server.mjs';

const PPO = new Uint8Array(readFileSync(new URL('../../test-vectors/valid/ppo-like-agent.rlarchive', import.meta.url)));

/** The code `promise` rejects with and the milliseconds it took. */
async function failure(promise) {
  const start = Date.now();
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof RlarchiveError, `not an RlarchiveError: ${e}`);
    return { code: e.code, took: Date.now() - start, message: e.message };
  }
  assert.fail('no error');
}

async function withServer(body, options, fn) {
  const srv = await misbehavingServer(body, options);
  try {
    return await fn(srv.url);
  } finally {
    await srv.close();
  }
}

test('the defaults are finite, and a source without options has them', async () => {
  assert.ok(DEFAULT_TIMEOUT_MS > 0 && Number.isFinite(DEFAULT_TIMEOUT_MS));
  assert.ok(DEFAULT_MIN_RATE > 0 && Number.isFinite(DEFAULT_MIN_RATE));
  await withServer(PPO, {}, async (url) => {
    const src = await HttpSource.open(url);
    assert.equal(src.timeout, DEFAULT_TIMEOUT_MS);
    assert.equal(src.minRate, DEFAULT_MIN_RATE);
    const shared = await openShared(url);
    assert.equal(shared.inner.timeout, DEFAULT_TIMEOUT_MS, 'the inspector opens URLs with the same deadlines');
  });
});

for (const drip of ['all', 'body']) {
  test(`a server dripping one byte every 500 ms (${drip === 'all' ? 'headers and body' : 'body'}) ends in IO_TIMEOUT`, async () => {
    await withServer(PPO, { drip, interval: 500 }, async (url) => {
      const r = await failure(open(url, { timeout: 1000 }));
      assert.equal(r.code, 'IO_TIMEOUT', r.message);
      assert.ok(r.took < 10_000, `after ${r.took} ms with timeout 1000`);
    });
  });
}

test('validate reports the timeout as an issue', async () => {
  await withServer(PPO, { drip: 'body', interval: 500 }, async (url) => {
    const report = await validate(url, { timeout: 1000 });
    assert.equal(report.valid, false);
    assert.deepEqual(
      report.issues.map((i) => i.code),
      ['IO_TIMEOUT'],
    );
  });
});

test("the inspector's source fails with IO_TIMEOUT instead of opening forever", async () => {
  await withServer(PPO, { drip: 'body', interval: 500 }, async (url) => {
    const r = await failure(openShared(url, { timeout: 1000 }));
    assert.equal(r.code, 'IO_TIMEOUT', r.message);
    assert.ok(r.took < 10_000);
  });
});

test('a Content-Length larger than the range is IO_ERROR at once, although the server then stalls', async () => {
  await withServer(PPO, { extra: 100, stall: true }, async (url) => {
    const r = await failure(open(url)); // the default deadline (30 s) is not what ends it
    assert.equal(r.code, 'IO_ERROR', r.message);
    assert.ok(r.took < DEFAULT_TIMEOUT_MS / 3, `after ${r.took} ms`);
  });
});

test('a body that ends before its Content-Length is IO_ERROR at once', async () => {
  const lying = { extra: 100, stall: false };
  await withServer(PPO, lying, async (url) => {
    const r = await failure(open(url));
    assert.equal(r.code, 'IO_ERROR', r.message);
    assert.ok(r.took < DEFAULT_TIMEOUT_MS / 3);
  });
  // a 200 answer (no Range honoured) whose body is shorter than announced
  const whole = async () => ({
    status: 200,
    headers: new Headers({ 'content-length': String(PPO.length + 5) }),
    body: new Blob([PPO]).stream(),
  });
  const r = await failure(open('http://127.0.0.1:1/a', { fetch: whole }));
  assert.equal(r.code, 'IO_ERROR', r.message);
});

test('a fetch that ignores its abort signal still ends at the deadline', async () => {
  const never = () => new Promise(() => {});
  const r = await failure(open('http://127.0.0.1:1/a', { fetch: never, timeout: 300 }));
  assert.equal(r.code, 'IO_TIMEOUT');
  const slowBody = async () => ({ status: 200, headers: new Headers(), arrayBuffer: () => new Promise(() => {}) });
  assert.equal((await failure(open('http://127.0.0.1:1/a', { fetch: slowBody, timeout: 300 }))).code, 'IO_TIMEOUT');
});

test('an honest server works with a short timeout', async () => {
  await withServer(PPO, {}, async (url) => {
    assert.equal(await dump(url, { timeout: 1000 }), await dump(PPO));
    assert.equal((await validate(url, { timeout: 1000 })).valid, true);
  });
});

test('the total deadline grows with the bytes asked for', async () => {
  // 64 KiB every 200 ms (320 KiB/s): 1 MiB takes about 3 s, more than the 1 s timeout,
  // within 1 s + 1 MiB at the default minimum rate; a minimum rate of 4 MiB/s fails.
  const data = new Uint8Array(randomBytes(1 << 20));
  await withServer(data, { drip: 'body', interval: 200, chunk: 65536 }, async (url) => {
    const src = await HttpSource.open(url, { timeout: 1000 });
    const got = await src.read(0, data.length);
    assert.ok(Buffer.from(got).equals(Buffer.from(data)));
    const strict = await HttpSource.open(url, { timeout: 1000, minRate: 4 << 20 }); // its small reads pass
    const r = await failure(strict.read(0, data.length));
    assert.equal(r.code, 'IO_TIMEOUT', r.message);
  });
});

test('a server without Range sending the whole file above the minimum rate is not cut short', async () => {
  // asked for 64 KiB, sent 1 MiB at 320 KiB/s (about 3 s): the total deadline grows with the bytes announced
  const data = new Uint8Array(randomBytes(1 << 20));
  await withServer(data, { drip: 'body', interval: 200, chunk: 65536, ranges: false }, async (url) => {
    const src = await HttpSource.open(url, { timeout: 1000 });
    assert.equal(src.size, data.length);
    assert.ok(Buffer.from(await src.read(100_000, 5)).equals(Buffer.from(data.subarray(100_000, 100_005))));
  });
});

test('bad deadline options are IO_ERROR', async () => {
  for (const bad of [
    { timeout: 0 },
    { timeout: -5 },
    { timeout: Infinity },
    { timeout: NaN },
    { timeout: '100' },
    { minRate: 0 },
  ]) {
    const r = await failure(open('http://127.0.0.1:1/a', bad));
    assert.equal(r.code, 'IO_ERROR', JSON.stringify(bad));
  }
});
