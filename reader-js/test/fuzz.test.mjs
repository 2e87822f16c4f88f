// slow: thousands of mutated archives (make test-fast leaves this file out)
// Random garbage, truncations and mutations: open() and dump() may only ever
// reject with RlarchiveError, and always terminate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { open, RlarchiveError } from '../src/index.js';
import { archive, bytesOf, b64 } from './helpers/build.mjs';

function rng(seed) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

async function mustNotCrash(bytes, label) {
  let ar;
  try {
    ar = await open(bytes);
    await ar.dump();
    void ar.data;
    void ar.optimizers;
    for (const g of ar.groups) for (const t of ar.tensorInfo(g)) await ar.tensor(g, t.name);
    return 'ok';
  } catch (e) {
    if (!(e instanceof RlarchiveError)) assert.fail(`${label}: threw ${e?.stack ?? e}`);
    return e.code;
  } finally {
    await ar?.close();
  }
}

const seeds = [
  readFileSync(new URL('./fixtures/python-rich.rlarchive', import.meta.url)),
  archive({
    data: {
      data: {
        a: [1, 2.5, { $type: 'tuple', items: [1, 'x'] }],
        s: {
          $type: 'space',
          kind: 'box',
          dtype: 'F32',
          shape: [1],
          low: { $type: 'ndarray', dtype: 'F32', shape: [1], base64: b64(bytesOf(new Float32Array([0]))) },
          high: { $type: 'ndarray', dtype: 'F32', shape: [1], ref: { group: 'arrays', name: 'h' } },
        },
        k: {
          $type: 'dict',
          entries: [
            [1, 2],
            [{ $type: 'bytes', base64: 'AAE=' }, null],
          ],
        },
        sch: {
          $type: 'schedule',
          kind: 'piecewise',
          points: [
            [0, 1],
            [1, 0.5],
          ],
          interpolation: 'linear',
        },
      },
    },
    tensors: {
      arrays: { h: { dtype: 'F32', shape: [1], data: bytesOf(new Float32Array([1])) } },
      policy: { w: { dtype: 'F64', shape: [3], data: bytesOf(new Float64Array([1, 2, 3])) } },
    },
  }),
];

test('the seed archives are valid', async () => {
  for (const s of seeds) assert.equal(await mustNotCrash(s, 'seed'), 'ok');
});

test('random garbage', async () => {
  const r = rng(1);
  for (let n = 0; n < 300; n++) {
    const len = Math.floor(r() * 400);
    const b = new Uint8Array(len);
    for (let i = 0; i < len; i++) b[i] = r() < 0.3 ? 0x50 + (i % 8) : Math.floor(r() * 256);
    await mustNotCrash(b, `garbage ${n}`);
  }
});

test('every truncation and extension of the seeds', async () => {
  for (const s of seeds) {
    for (let len = 0; len < s.length; len += len < 200 ? 1 : 37)
      await mustNotCrash(s.subarray(0, len), `truncated to ${len}`);
    for (const extra of [1, 22, 100]) {
      const b = new Uint8Array(s.length + extra);
      b.set(s);
      await mustNotCrash(b, `extended by ${extra}`);
    }
  }
});

test('byte mutations keep the reader well-behaved', async () => {
  const r = rng(7);
  const codes = new Map();
  const deadline = Date.now() + 20_000;
  let n = 0;
  for (; n < 4000 && Date.now() < deadline; n++) {
    const s = seeds[n % seeds.length];
    const b = Uint8Array.from(s);
    const edits = 1 + Math.floor(r() * 4);
    for (let k = 0; k < edits; k++) {
      const i = Math.floor(r() * b.length);
      const kind = r();
      if (kind < 0.5) b[i] = Math.floor(r() * 256);
      else if (kind < 0.75) b[i] ^= 1 << Math.floor(r() * 8);
      else b[i] = [0, 0xff, 0x7f, 0x80, 0x22, 0x5c, 0x7b, 0x5b][Math.floor(r() * 8)];
    }
    const c = await mustNotCrash(b, `mutation ${n}`);
    codes.set(c, (codes.get(c) ?? 0) + 1);
  }
  assert.ok(n > 500, `only ${n} mutations ran`);
  assert.ok(codes.size > 5, `few distinct outcomes: ${[...codes.keys()]}`);
});

test('mutations inside data.json text', async () => {
  const r = rng(11);
  const alphabet = '{}[]",:0123456789.eE+-tfnulrsa\\ $';
  const text =
    '{"data":{"a":[1,2.5,{"$type":"tuple","items":[1,"x"]}],"b":{"$type":"int","value":"9007199254740993"},"c":{"$type":"float","value":"nan"},"d":{"$type":"schedule","kind":"linear","start":1,"end":0,"end_fraction":0.5}}}';
  for (let n = 0; n < 1500; n++) {
    const chars = [...text];
    const edits = 1 + Math.floor(r() * 3);
    for (let k = 0; k < edits; k++) chars[Math.floor(r() * chars.length)] = alphabet[Math.floor(r() * alphabet.length)];
    await mustNotCrash(archive({ data: chars.join('') }), `data mutation ${n}`);
  }
});

test('mutations inside manifest.json and safetensors headers', async () => {
  const r = rng(13);
  const alphabet = '{}[]",:0123456789.eE+-_ abcdefFIU\\$';
  const mutate = (text) => {
    const chars = [...text];
    const edits = 1 + Math.floor(r() * 3);
    for (let k = 0; k < edits; k++) chars[Math.floor(r() * chars.length)] = alphabet[Math.floor(r() * alphabet.length)];
    return chars.join('');
  };
  const header =
    '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[1,1],"data_offsets":[8,9]}}';
  for (let n = 0; n < 800; n++) {
    await mustNotCrash(
      archive({ manifest: (m) => mutate(JSON.stringify({ ...m, extensions_used: ['e1'], metadata: { k: 'v' } })) }),
      `manifest mutation ${n}`,
    );
    const h = mutate(header);
    const st = (await import('./helpers/build.mjs')).safetensors(
      {},
      { header: h, buffer: new Uint8Array(9), pad: true },
    );
    await mustNotCrash(archive({ tensors: { g: st } }), `header mutation ${n}`);
  }
});
