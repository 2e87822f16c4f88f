// The requests a remote archive costs (spec §11.4), counted against a local
// server: opening sends no HEAD request and starts with one suffix range
// request (`bytes=-n`), whose answer gives the end of the file and its size;
// what the checks read next is fetched in planned rounds, so that opening an
// archive of one tensor member and reading one 1 KiB tensor takes three
// requests: the end of the file, the start of the file (the identification,
// the local headers, data.json and the safetensors header), and the tensor's
// bytes. The twin of tests/python/test_remote_requests.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open, RlarchiveError } from '../src/index.js';
import { OPEN_READAHEAD_TOTAL_BYTES } from '../src/limits.js';
import { prefetchOpening } from '../src/read_plan.js';
import { HttpSource, TAIL_BYTES } from '../src/sources.js';
import { archive, bytesOf } from './helpers/build.mjs';
import { serve } from './helpers/server.mjs';

const ONE_KIB = Float32Array.from({ length: 256 }, (_, i) => i); // the tensor read: 1 KiB

/** A float32 tensor of `n` pseudo-random values (a fixed sequence). */
function noise(n, seed) {
  const out = new Float32Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out[i] = x / 2147483648 - 0.5;
  }
  return out;
}

const f32 = (a, shape) => ({ dtype: 'F32', shape, data: bytesOf(a) });

const build = (tensors) => archive({ data: { data: { gamma: 0.99 } }, tensors });

/**
 * An archive of about 300 KB: one tensor member whose 1 KiB tensor lies
 * between two large ones, so that neither the end of the file nor the start
 * of the member holds it.
 */
const large = build({
  policy: {
    'a.weight': f32(noise(64 * 600, 1), [64, 600]),
    'b.bias': f32(ONE_KIB, [256]),
    'c.weight': f32(noise(64 * 600, 2), [64, 600]),
  },
});

/** Opens the archive at `url` and reads its 1 KiB tensor: its info. */
async function openAndRead(url) {
  const ar = await open(url);
  try {
    assert.equal(ar.data.gamma, 0.99);
    assert.deepEqual([...(await ar.tensor('policy', 'b.bias')).data], [...ONE_KIB]);
    return ar.tensorInfo('policy').find((t) => t.name === 'b.bias');
  } finally {
    await ar.close();
  }
}

const notGet = (asked) => asked.filter((a) => !a.startsWith('GET '));

test('opening and one small tensor take three requests', async () => {
  const srv = await serve({ '/a': large });
  try {
    const info = await openAndRead(srv.url('/a'));
    const { asked, ranges, requests, bytes } = srv.stats;
    assert.equal(asked[0], `GET bytes=-${TAIL_BYTES}`, 'a suffix range first, no HEAD request');
    assert.deepEqual(notGet(asked), [], 'only GET requests');
    assert.equal(requests, 3, `the end of the file, its start, the tensor: ${asked}`);
    assert.deepEqual(ranges[0], [large.length - TAIL_BYTES, large.length]);
    assert.deepEqual(ranges[2], [info.offset, info.offset + info.nbytes], "the tensor's bytes, exactly");
    assert.ok(bytes < TAIL_BYTES + 3 * 8192, `${bytes} bytes sent of ${large.length}`);
  } finally {
    await srv.close();
  }
});

test('a small archive takes one request', async () => {
  const body = build({ policy: { 'b.bias': f32(ONE_KIB, [256]) } });
  assert.ok(body.length < TAIL_BYTES);
  const srv = await serve({ '/a': body });
  try {
    await openAndRead(srv.url('/a'));
    assert.deepEqual(srv.stats.asked, [`GET bytes=-${TAIL_BYTES}`]);
    assert.equal(srv.stats.bytes, body.length);
  } finally {
    await srv.close();
  }
});

test('a server without suffix ranges costs one request more', async () => {
  // It answers a suffix range with the whole file: the size is read from the
  // headers, the body left unread, and the end of the file asked for by offset.
  const srv = await serve({ '/a': large }, { suffix: false });
  try {
    await openAndRead(srv.url('/a'));
    const { asked, requests } = srv.stats;
    const n = large.length;
    assert.deepEqual(asked.slice(0, 2), [`GET bytes=-${TAIL_BYTES}`, `GET bytes=${n - TAIL_BYTES}-${n - 1}`]);
    assert.deepEqual(notGet(asked), [], 'only GET requests');
    assert.equal(requests, 4, `${asked}`);
  } finally {
    await srv.close();
  }
});

test('opening fetches each member head once', async () => {
  // Two tensor members far apart: the start of the file (data.json, the first
  // member's header) and the second member's header are one request each,
  // none read twice; the tensor is one more.
  const big = () => f32(noise(64 * 600, 3), [64, 600]);
  const body = build({
    policy: { 'a.weight': big(), 'b.bias': f32(ONE_KIB, [256]), 'c.weight': big() },
    'optimizer.adam': { m: big(), v: big() },
  });
  const srv = await serve({ '/a': body });
  try {
    const ar = await open(srv.url('/a'));
    const opened = srv.stats.requests;
    assert.deepEqual([...(await ar.tensor('policy', 'b.bias')).data], [...ONE_KIB]);
    await ar.close();
    const { asked, ranges, requests } = srv.stats;
    assert.equal(asked[0], `GET bytes=-${TAIL_BYTES}`);
    assert.equal(opened, 3, `${asked}`);
    assert.equal(requests, 4, `${asked}`);
    const spans = [...ranges].sort((x, y) => x[0] - y[0]);
    assert.ok(
      spans.every((s, i) => i === 0 || spans[i - 1][1] <= s[0]),
      `no byte fetched twice: ${JSON.stringify(spans)}`,
    );
  } finally {
    await srv.close();
  }
});

test('a file replaced between requests is an IO_ERROR', async () => {
  // Every answer names the file's version (its ETag): one that names another
  // version than the first answer is IO_ERROR, not bytes of two files put together.
  const files = { '/a': large };
  const srv = await serve(files);
  try {
    srv.etag = '"v1"';
    const ar = await open(srv.url('/a'));
    srv.etag = '"v2"';
    await assert.rejects(
      ar.tensor('policy', 'b.bias'),
      (e) => e instanceof RlarchiveError && e.code === 'IO_ERROR' && /changed/.test(e.message),
    );
    srv.etag = '"v1"';
    assert.deepEqual([...(await ar.tensor('policy', 'b.bias')).data], [...ONE_KIB]);
    await ar.close();
    srv.etag = null; // a server that names no version: nothing to compare
    await openAndRead(srv.url('/a'));
    const again = await open(srv.url('/a')); // nor one whose file grows: its answers give another size
    files['/a'] = new Uint8Array(large.length + 100);
    files['/a'].set(large);
    await assert.rejects(
      again.tensor('policy', 'b.bias'),
      (e) => e instanceof RlarchiveError && e.code === 'IO_ERROR' && /changed size/.test(e.message),
    );
    await again.close();
  } finally {
    await srv.close();
  }
});

test('the read-ahead of opening is bounded', async () => {
  // Past the directory, opening announces at most its budget of bytes,
  // whatever the directory says (a member's extent, a JSON member's size, a
  // safetensors header's length): the ranges that do not fit are left to the
  // checks' own reads.
  const tensors = {};
  for (let i = 0; i < 12; i++)
    tensors[`g${String(i).padStart(2, '0')}`] = { w: f32(new Float32Array(5000).fill(i), [5000]) };
  const body = build(tensors);
  assert.ok(body.length > TAIL_BYTES + 150_000);
  const srv = await serve({ '/a': body });
  try {
    const wanted = [];
    for (const budget of [30_000, OPEN_READAHEAD_TOTAL_BYTES]) {
      const inner = await HttpSource.open(srv.url('/a'));
      const announced = [];
      const src = {
        size: inner.size,
        read: (o, n) => inner.read(o, n),
        peek: (o, n) => inner.peek(o, n),
        prefetch: async (ranges) => {
          announced.push(ranges);
          await inner.prefetch(ranges);
        },
      };
      await prefetchOpening(src, budget);
      const later = announced.slice(1).flatMap((ranges) => ranges.map(([, n]) => n));
      const total = later.reduce((a, n) => a + n, 0);
      assert.ok(later.length > 0 && total <= budget, JSON.stringify(announced));
      wanted.push(total);
      await inner.close();
    }
    assert.ok(wanted[0] < 30_000 && 30_000 < wanted[1], 'the small budget left ranges out');
    const ar = await open(srv.url('/a'));
    assert.equal((await ar.tensor('g07', 'w')).data[0], 7);
    await ar.close();
  } finally {
    await srv.close();
  }
});

test('a page reading from another origin asks for the start of the file first', async () => {
  // A suffix range is not a header a browser sends to another origin without
  // asking the server first (a CORS preflight request): there the first
  // request is for the start of the file, the second for its end.
  const srv = await serve({ '/a': large });
  const had = Object.getOwnPropertyDescriptor(globalThis, 'location');
  globalThis.location = { origin: 'http://elsewhere.example', href: 'http://elsewhere.example/page' };
  try {
    await openAndRead(srv.url('/a'));
    const { asked, requests } = srv.stats;
    const n = large.length;
    assert.deepEqual(asked.slice(0, 2), [`GET bytes=0-${TAIL_BYTES - 1}`, `GET bytes=${n - TAIL_BYTES}-${n - 1}`]);
    assert.equal(requests, 3, `the start (the safetensors header with it), the end, the tensor: ${asked}`);
  } finally {
    if (had) Object.defineProperty(globalThis, 'location', had);
    else delete globalThis.location;
    await srv.close();
  }
});
