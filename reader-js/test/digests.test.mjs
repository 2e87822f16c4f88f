// slow: every vector read twice (make test-fast leaves this file out)
// CRC-32 and SHA-256: the runtime's built-ins (node:zlib, node:crypto) and the
// package's JavaScript implementations give identical results, whole and in
// chunks, and the reader gives the same outcome on every vector with either.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { crc32, crc32Js, crc32Ready, crc32Implementation } from '../src/crc32.js';
import { Sha256, sha256Hex, createSha256, sha256Implementation } from '../src/sha256.js';
import { useNativeDigests } from '../src/runtime.js';
import { open, RlarchiveError } from '../src/index.js';

/** Deterministic pseudo-random bytes (xorshift32), so that a failure can be replayed. */
function randomBytes(n, seed) {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** Splits bytes at pseudo-random points, with empty pieces among them. */
function pieces(bytes, seed) {
  const cuts = [...randomBytes(12, seed)].map((b) => Math.floor((b / 255) * bytes.length)).sort((a, b) => a - b);
  const out = [];
  let prev = 0;
  for (const c of [...cuts, bytes.length]) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  return out;
}

// lengths around SHA-256's 64-byte blocks and its 56-byte padding limit, and larger ones
const LENGTHS = [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 65537, 1 << 20];

async function withNative(enabled, fn) {
  const previous = useNativeDigests(enabled);
  try {
    return await fn();
  } finally {
    useNativeDigests(previous);
  }
}

test('the built-ins are in use under Node, and the JavaScript ones when switched off', async () => {
  await crc32Ready;
  assert.equal(crc32Implementation(), typeof zlib.crc32 === 'function' ? 'node:zlib' : 'javascript');
  assert.deepEqual(await sha256Implementation(), { oneShot: 'node:crypto', incremental: 'node:crypto' });
  await withNative(false, async () => {
    assert.equal(crc32Implementation(), 'javascript');
    assert.deepEqual(await sha256Implementation(), { oneShot: 'javascript', incremental: 'javascript' });
    assert.ok((await createSha256()) instanceof Sha256);
  });
});

test('CRC-32: the published check value, from both implementations', async () => {
  const check = new TextEncoder().encode('123456789');
  assert.equal(crc32Js(check), 0xcbf43926);
  assert.equal(crc32(check), 0xcbf43926);
  assert.equal(crc32(new Uint8Array(0)), 0);
  assert.equal(crc32Js(new Uint8Array(0)), 0);
});

test('CRC-32: built-in and JavaScript agree on random inputs, whole and chained over pieces', async () => {
  await crc32Ready;
  let seed = 1;
  for (const n of LENGTHS) {
    const bytes = randomBytes(n, seed++);
    const whole = crc32Js(bytes);
    assert.equal(crc32(bytes), whole, `length ${n}`);
    for (let k = 0; k < 3; k++) {
      const parts = pieces(bytes, seed++);
      let fast = 0,
        slow = 0;
      for (const p of parts) {
        fast = crc32(p, fast);
        slow = crc32Js(p, slow);
        assert.equal(fast, slow);
      }
      assert.equal(fast, whole, `length ${n} in ${parts.length} pieces`);
    }
    // continuing from any 32-bit value, including those with the top bit set
    for (const start of [1, 0x7fffffff, 0x80000000, 0xffffffff, whole]) {
      assert.equal(crc32(bytes, start), crc32Js(bytes, start), `length ${n} from ${start}`);
    }
  }
  await withNative(false, () => assert.equal(crc32(randomBytes(999, 7)), crc32Js(randomBytes(999, 7))));
});

test('SHA-256: node:crypto, the one-shot and the incremental JavaScript digests agree on random inputs', async () => {
  let seed = 100;
  for (const n of LENGTHS) {
    const bytes = randomBytes(n, seed++);
    const ref = createHash('sha256').update(bytes).digest('hex');
    assert.equal(await sha256Hex(bytes), ref, `fast one-shot, length ${n}`);
    assert.equal(new Sha256().update(bytes).hex(), ref, `JavaScript, length ${n}`);
    assert.equal(await withNative(false, () => sha256Hex(bytes)), ref, `fallback one-shot, length ${n}`);
    for (const enabled of [true, false]) {
      const parts = pieces(bytes, seed++);
      const h = await withNative(enabled, () => createSha256());
      for (const p of parts) h.update(p);
      assert.equal(
        h.hex(),
        ref,
        `incremental (${enabled ? 'built-in' : 'JavaScript'}), length ${n} in ${parts.length} pieces`,
      );
    }
  }
});

test('SHA-256: the JavaScript digest of chunks as a file beyond 4 GiB is read, and its length field', () => {
  // The same 1 MiB chunk fed many times, split at odd points, equals node:crypto fed the same way.
  const chunk = randomBytes(1 << 20, 9);
  const js = new Sha256(),
    ref = createHash('sha256');
  for (let i = 0; i < 24; i++) {
    for (const p of pieces(chunk, 1000 + i)) {
      js.update(p);
      ref.update(p);
    }
  }
  assert.equal(js.hex(), ref.digest('hex'));
  // The padding stores the length in bits as 64 bits: past 2^32 bits (512 MiB) the high word counts.
  const total = 2 ** 33 + 5; // a message of 8 GiB + 5 bytes, of which the last 5 are still buffered
  const blocks = [];
  const h = new Sha256();
  h._block = (p, o) => {
    blocks.push(p.slice(o, o + 64));
  };
  h.update(new Uint8Array(5));
  h.total = total;
  h.hex();
  const last = new DataView(blocks[blocks.length - 1].buffer);
  assert.equal(last.getUint32(56) * 2 ** 32 + last.getUint32(60), total * 8);
});

test('every vector: the same dump or error code with the built-in and with the JavaScript digests', async (t) => {
  const dir = new URL('../../test-vectors/', import.meta.url);
  const indexUrl = new URL('index.json', dir);
  if (!existsSync(indexUrl)) return t.skip('test-vectors/index.json is not there');
  const outcome = async (bytes) => {
    try {
      const ar = await open(bytes);
      try {
        return `dump ${await ar.dump()}`;
      } finally {
        await ar.close();
      }
    } catch (e) {
      assert.ok(e instanceof RlarchiveError, String(e?.stack ?? e));
      return `error ${e.code}`;
    }
  };
  let digestErrors = 0;
  for (const c of JSON.parse(readFileSync(indexUrl, 'utf8')).cases) {
    let bytes = readFileSync(new URL(c.file, dir));
    if (c.file.endsWith('.gz')) bytes = gunzipSync(bytes, { maxOutputLength: 1 << 28 });
    const fast = await outcome(bytes);
    const slow = await withNative(false, () => outcome(bytes));
    assert.equal(slow, fast, c.id);
    if (fast === 'error ZIP_CRC_MISMATCH' || fast === 'error MEMBER_DIGEST_MISMATCH') digestErrors++;
  }
  assert.ok(digestErrors > 0, 'the vectors include CRC-32 and digest mismatches');
});

test('browser bundles stay free of Node: no static node: import, built-ins reached only through runtime.js', () => {
  const dir = new URL('../src/', import.meta.url);
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    const text = readFileSync(new URL(f, dir), 'utf8');
    assert.doesNotMatch(text, /^\s*import\s[^;]*from\s*['"]node:/m, `${f} imports a node: module statically`);
    assert.doesNotMatch(text, /^\s*import\s*['"]node:/m, `${f} imports a node: module statically`);
    if (f !== 'runtime.js') {
      // a JSDoc type may name another module's type (import('./x.js').T): comments are not code
      const code = text.replace(/\/\*[\s\S]*?\*\//g, '');
      assert.doesNotMatch(code, /\bimport\s*\(/, `${f} imports dynamically: go through runtime.js`);
      assert.doesNotMatch(text, /getBuiltinModule\s*\(/, `${f} looks up built-ins: go through runtime.js`);
    }
  }
});
