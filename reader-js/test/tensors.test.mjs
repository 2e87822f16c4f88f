// The checks of a safetensors header (spec §10.2) on headers built here: element counts beyond 2^53, names
// near the byte limit in characters of every UTF-8 length, tensors listed out of offset order.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readSafetensorsHeader } from '../src/tensors.js';
import { MemorySource } from '../src/sources.js';
import { MAX_NAME_BYTES } from '../src/limits.js';

/** A member holding a safetensors header (its text padded to 8 + a multiple of 64) and `buffer` bytes after it. */
function member(header, buffer) {
  let text = JSON.stringify(header);
  text += ' '.repeat((64 - ((8 + Buffer.byteLength(text)) % 64)) % 64);
  const bytes = Buffer.concat([Buffer.alloc(8), Buffer.from(text), Buffer.alloc(buffer)]);
  bytes.writeBigUInt64LE(BigInt(Buffer.byteLength(text)), 0);
  const m = { name: 'tensors/g.safetensors', dataOffset: 0, size: bytes.length };
  return { src: new MemorySource(new Uint8Array(bytes)), m, start: bytes.length - buffer };
}

async function outcome(header, buffer) {
  const { src, m, start } = member(header, buffer);
  try {
    const r = await readSafetensorsHeader(src, m);
    return [...r.tensors.values()].map((t) => [
      t.name,
      t.dtype,
      [...t.shape],
      t.begin,
      t.end,
      t.offset - start,
      t.nbytes,
    ]);
  } catch (e) {
    return [e.code, e.location?.pointer ?? e.pointer ?? null];
  }
}

test('element counts beyond 2^53 are compared exactly', async () => {
  const big = 2 ** 30;
  assert.deepEqual(await outcome({ w: { dtype: 'F32', shape: [big, big, big], data_offsets: [0, 0] } }, 0), [
    'ST_SHAPE_MISMATCH',
    '/w',
  ]);
  assert.deepEqual(await outcome({ w: { dtype: 'F32', shape: [0, 2 ** 52, 2 ** 52], data_offsets: [0, 0] } }, 0), [
    ['w', 'F32', [0, 2 ** 52, 2 ** 52], 0, 0, 0, 0], // offset: from the buffer's start
  ]);
  const near = 2 ** 51; // 2^51 · 4 bytes = 2^53: a number product would still be exact, a larger one is not
  assert.deepEqual(await outcome({ w: { dtype: 'F32', shape: [near, 3], data_offsets: [0, 8] } }, 8), [
    'ST_SHAPE_MISMATCH',
    '/w',
  ]);
});

test('a name of MAX_NAME_BYTES bytes passes, one byte more does not, in characters of 1 to 4 bytes', async () => {
  for (const ch of ['a', 'é', '€', '😀']) {
    const size = Buffer.byteLength(ch);
    const fits = ch.repeat(Math.floor(MAX_NAME_BYTES / size)) + 'a'.repeat(MAX_NAME_BYTES % size);
    const ok = await outcome({ [fits]: { dtype: 'U8', shape: [1], data_offsets: [0, 1] } }, 1);
    assert.equal(ok.length, 1, ch);
    const [code] = await outcome({ [`${fits}a`]: { dtype: 'U8', shape: [1], data_offsets: [0, 1] } }, 1);
    assert.equal(code, 'ST_HEADER_INVALID', ch);
  }
});

test('tensors listed out of offset order are laid out in offset order', async () => {
  const header = {
    b: { dtype: 'U8', shape: [2], data_offsets: [2, 4] },
    e: { dtype: 'U8', shape: [0], data_offsets: [4, 4] },
    a: { dtype: 'U8', shape: [2], data_offsets: [0, 2] },
  };
  assert.deepEqual(
    (await outcome(header, 4)).map((t) => t[0]),
    ['b', 'e', 'a'],
  );
  header.a.data_offsets = [1, 3];
  assert.deepEqual(await outcome(header, 4), ['ST_HOLE', '/a']);
});

test('a header is read without a bigint per integer: as many BigInt calls for 2,000 tensors as for 10', async () => {
  const calls = [];
  const real = globalThis.BigInt;
  for (const n of [10, 2000]) {
    const header = {};
    for (let i = 0; i < n; i++) header[`layer${i}.w`] = { dtype: 'F32', shape: [2], data_offsets: [8 * i, 8 * i + 8] };
    const { src, m } = member(header, 8 * n);
    let count = 0;
    globalThis.BigInt = Object.assign((v) => (count++, real(v)), real);
    try {
      assert.equal((await readSafetensorsHeader(src, m)).tensors.size, n);
    } finally {
      globalThis.BigInt = real;
    }
    calls.push(count);
  }
  assert.equal(calls[0], calls[1]);
});

test('integer and float literals stay apart in a header: 4.0 or 1e0 is not a shape element nor an offset', async () => {
  const text = (shape, offsets) =>
    `{"w":{"dtype":"F32","shape":[${shape}],"data_offsets":[${offsets}]}}`.padEnd(56, ' ');
  for (const [shape, offsets, want] of [
    ['1', '0,4', null],
    ['1.0', '0,4', 'ST_HEADER_INVALID'],
    ['1e0', '0,4', 'ST_HEADER_INVALID'],
    ['1', '0,4.0', 'ST_HEADER_INVALID'],
    ['-0', '0,0', null], // the integer 0 written -0
    ['1', '0,9007199254740992', 'JSON_INTEGER_RANGE'],
  ]) {
    const body = Buffer.from(text(shape, offsets));
    const bytes = Buffer.concat([Buffer.alloc(8), body, Buffer.alloc(want === null ? (shape === '-0' ? 0 : 4) : 4)]);
    bytes.writeBigUInt64LE(BigInt(body.length), 0);
    const m = { name: 'tensors/g.safetensors', dataOffset: 0, size: bytes.length };
    try {
      const r = await readSafetensorsHeader(new MemorySource(new Uint8Array(bytes)), m);
      assert.equal(want, null, shape + offsets);
      assert.ok(Object.is(r.tensors.get('w').shape[0], shape === '-0' ? 0 : 1), shape);
    } catch (e) {
      assert.equal(e.code, want, `${shape} ${offsets}: ${e.message}`);
    }
  }
});
