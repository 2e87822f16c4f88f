// Sources: bytes, Blob/File, file paths (positional reads) and HTTP URLs (Range requests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { open, dump, RlarchiveError } from '../src/index.js';
import { archive, bytesOf, concat } from './helpers/build.mjs';
import { serve } from './helpers/server.mjs';

const W = new Float32Array([1.5, -2, 3.25, 4]);
const small = () =>
  archive({
    data: { data: { gamma: 0.99, lr: { $type: 'schedule', kind: 'constant', value: 0.5 } } },
    tensors: {
      policy: {
        w: { dtype: 'F32', shape: [2, 2], data: bytesOf(W) },
        i: { dtype: 'I64', shape: [2], data: bytesOf(new BigInt64Array([7n, -1n])) },
      },
    },
  });

const rejectsWith = (p, code) => assert.rejects(p, (e) => e instanceof RlarchiveError && e.code === code);

test("Uint8Array source: tensors view the caller's bytes without a copy", async () => {
  const bytes = small();
  const ar = await open(bytes);
  const t = await ar.tensor('policy', 'w');
  assert.ok(t.data instanceof Float32Array);
  assert.deepEqual([...t.data], [...W]);
  assert.equal(t.data.buffer, bytes.buffer, 'zero-copy view');
  const i = await ar.tensor('policy', 'i', { verify: true });
  assert.ok(i.data instanceof BigInt64Array);
  assert.deepEqual([...i.data], [7n, -1n]);
  assert.equal(ar.data.gamma, 0.99);
});

test('ArrayBuffer and unaligned Buffer sources', async () => {
  const bytes = small();
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
  const d1 = await dump(ab);
  const shifted = new Uint8Array(bytes.length + 3);
  shifted.set(bytes, 3);
  const unaligned = shifted.subarray(3);
  const ar = await open(unaligned);
  const t = await ar.tensor('policy', 'w');
  assert.deepEqual([...t.data], [...W], 'unaligned bytes are copied into an aligned array');
  assert.equal(await ar.dump(), d1);
  assert.equal(await dump(Buffer.from(bytes)), d1);
});

test('Blob and File sources', async () => {
  const bytes = small();
  const d = await dump(bytes);
  assert.equal(await dump(new Blob([bytes])), d);
  assert.equal(await dump(new File([bytes], 'a.rlarchive')), d);
  const ar = await open(new Blob([bytes]));
  assert.deepEqual([...(await ar.tensor('policy', 'w')).data], [...W]);
});

test('file path and file: URL sources read with positional reads', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rla-'));
  try {
    const big = new Uint8Array(8 * 1024 * 1024);
    big[12345] = 7;
    const bytes = archive({
      data: { data: { a: 1 } },
      tensors: { big: { x: { dtype: 'U8', shape: [big.length], data: big } } },
    });
    const path = join(dir, 'a.rlarchive');
    writeFileSync(path, bytes);
    const ar = await open(path);
    assert.ok(ar.bytesRead < 200_000, `open read ${ar.bytesRead} bytes of ${bytes.length}`);
    const t = await ar.tensor('big', 'x');
    assert.equal(t.data[12345], 7);
    assert.equal(await ar.dump(), await dump(bytes));
    await ar.close();
    assert.equal(await dump(pathToFileURL(path)), await dump(bytes));
    await rejectsWith(open(join(dir, 'missing.rlarchive')), 'IO_ERROR');
    await rejectsWith(open(dir), 'IO_ERROR');
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('a custom source object', async () => {
  const bytes = small();
  const src = { size: bytes.length, read: async (o, n) => bytes.slice(o, o + n) };
  assert.equal(await dump(src), await dump(bytes));
  const failing = {
    size: bytes.length,
    read: async () => {
      throw new Error('disk on fire');
    },
  };
  await rejectsWith(open(failing), 'IO_ERROR');
  const short = { size: bytes.length, read: async (o, n) => bytes.slice(o, o + n - 1) };
  await rejectsWith(open(short), 'IO_ERROR');
  await rejectsWith(open(42), 'IO_ERROR');
  await rejectsWith(open(null), 'IO_ERROR');
});

test('URL source: a 100 MB archive opens with under 1 MB transferred', async (ctx) => {
  const big = new Float32Array(25 * 1024 * 1024); // 100 MiB of tensor data
  big[0] = 1;
  big[big.length - 1] = 42;
  const opt = new Float32Array(1024).fill(0.5);
  const bytes = archive({
    data: {
      data: {
        gamma: 0.99,
        obs: { $type: 'ndarray', dtype: 'F32', shape: [4], base64: Buffer.from(bytesOf(W)).toString('base64') },
      },
    },
    tensors: {
      policy: {
        big: { dtype: 'F32', shape: [big.length], data: bytesOf(big) },
        w: { dtype: 'F32', shape: [2, 2], data: bytesOf(W) },
      },
      'optimizer.adam': { m: { dtype: 'F32', shape: [1024], data: bytesOf(opt) } },
    },
  });
  const srv = await serve({ '/a.rlarchive': bytes });
  try {
    const ar = await open(srv.url('/a.rlarchive'));
    const opened = srv.stats.bytes;
    ctx.diagnostic(
      `URL test: archive ${bytes.length} bytes, opening transferred ${opened} bytes in ${srv.stats.requests} requests`,
    );
    assert.ok(opened < 1024 * 1024, `opening transferred ${opened} bytes`);
    assert.equal(ar.data.gamma, 0.99);
    assert.deepEqual([...ar.data.obs.data], [...W]);
    assert.deepEqual(ar.groups, ['optimizer.adam', 'policy']);
    const before = srv.stats.bytes;
    const w = await ar.tensor('policy', 'w');
    assert.deepEqual([...w.data], [...W]);
    assert.ok(srv.stats.bytes - before < 64 * 1024, 'a small tensor costs a small range');
    const t = await ar.tensor('policy', 'big');
    assert.equal(t.data.length, big.length);
    assert.equal(t.data[0], 1);
    assert.equal(t.data[big.length - 1], 42);
    ctx.diagnostic(`URL test: after reading the 100 MiB tensor, ${srv.stats.bytes} bytes transferred`);
    await ar.close();
  } finally {
    await srv.close();
  }
});

test('URL source: dump over HTTP equals the in-memory dump; servers without Range still work', async () => {
  const bytes = small();
  const srv = await serve({ '/a': bytes });
  const noRange = await serve({ '/a': bytes }, { ranges: false });
  try {
    const d = await dump(bytes);
    assert.equal(await dump(srv.url('/a')), d);
    assert.equal(await dump(new URL(srv.url('/a'))), d);
    assert.equal(await dump(noRange.url('/a')), d);
    await rejectsWith(open(srv.url('/missing')), 'IO_ERROR');
  } finally {
    await srv.close();
    await noRange.close();
  }
});

test('URL source: a bigger archive with many groups and a server that lies', async () => {
  const tensors = {};
  for (let g = 0; g < 20; g++)
    tensors[`g${g}`] = { x: { dtype: 'U8', shape: [100_000], data: new Uint8Array(100_000).fill(g) } };
  const bytes = archive({ tensors });
  const liar = (req, res) => {
    res.writeHead(206, { 'Content-Range': `bytes 0-9/${bytes.length}`, 'Content-Length': 3 });
    res.end('abc');
  };
  const srv = await serve({ '/a': bytes }, { extra: { '/liar': liar } });
  try {
    const ar = await open(srv.url('/a'));
    assert.ok(srv.stats.bytes < 1024 * 1024, `opening transferred ${srv.stats.bytes}`);
    assert.equal((await ar.tensor('g7', 'x')).data[5], 7);
    assert.equal(await ar.dump(), await dump(bytes));
    await rejectsWith(open(srv.url('/liar')), 'IO_ERROR');
    await rejectsWith(open('http://127.0.0.1:1/nothing'), 'IO_ERROR');
  } finally {
    await srv.close();
  }
});

test('truncated and empty remote files', async () => {
  const bytes = small();
  const srv = await serve({
    '/empty': new Uint8Array(0),
    '/cut': bytes.subarray(0, 100),
    '/pad': concat([bytes, new Uint8Array(70000)]),
  });
  try {
    await rejectsWith(open(srv.url('/empty')), 'ARCHIVE_NOT_RLARCHIVE');
    await rejectsWith(open(srv.url('/cut')), 'ZIP_EOCD_NOT_FOUND');
    await rejectsWith(open(srv.url('/pad')), 'ZIP_EOCD_NOT_FOUND');
  } finally {
    await srv.close();
  }
});

test('hostile source objects only ever give IO_ERROR', async () => {
  const bytes = small();
  const weird = [
    {
      size: bytes.length,
      read: async () => {
        throw Symbol('x');
      },
    },
    {
      size: bytes.length,
      read: async () => {
        throw { name: 'RlarchiveError' };
      },
    },
    {
      size: bytes.length,
      read: () => {
        throw null;
      },
    },
    { size: bytes.length, read: async () => 'not bytes' },
    {
      get size() {
        throw new Error('no size');
      },
      read: async () => bytes,
    },
    { size: -1, read: async () => bytes },
  ];
  for (const src of weird) await rejectsWith(open(src), 'IO_ERROR');
  await rejectsWith(open('http://127.0.0.1:1/x', { fetch: 'nope' }), 'IO_ERROR');
  await rejectsWith(
    open('http://127.0.0.1:1/x', {
      fetch: async () => {
        throw Symbol('s');
      },
    }),
    'IO_ERROR',
  );
  await rejectsWith(
    open('http://127.0.0.1:1/x', {
      fetch: async () => ({
        status: 206,
        headers: new Headers({ 'content-range': 'bytes 0-0/1' }),
        arrayBuffer: async () => new ArrayBuffer(1),
      }),
    }),
    'ARCHIVE_NOT_RLARCHIVE',
  );
  await rejectsWith(open('http://[::1', {}), 'IO_ERROR');
});
