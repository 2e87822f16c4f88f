// Decoded values, schedules (§9) and the canonical dump of a reference-writer archive.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  open,
  dump,
  evaluateSchedule,
  Tuple,
  NDArray,
  Scalar,
  Space,
  Schedule,
  ClassRef,
  Opaque,
  toFloat32,
  f16ToNumber,
  bf16ToNumber,
  fp8ToNumber,
} from '../src/index.js';
import { archive, bytesOf, b64 } from './helpers/build.mjs';

const fixture = readFileSync(new URL('./fixtures/python-rich.rlarchive', import.meta.url));
const fixtureDump = readFileSync(new URL('./fixtures/python-rich.dump.json', import.meta.url), 'utf8');

test('the dump of a reference-writer archive equals the reference dump byte for byte', async () => {
  assert.equal(await dump(fixture), fixtureDump);
});

test('values decode into the documented JavaScript types', async () => {
  const ar = await open(fixture);
  const d = ar.data;
  assert.ok(d.obs instanceof Space && d.obs.kind === 'box');
  assert.ok(d.obs.low instanceof NDArray && d.obs.low.data instanceof Float32Array);
  assert.equal(d.obs.low.data[0], -Infinity);
  assert.deepEqual(d.obs.shape, [3]);
  assert.equal(d.act.n, 4);
  assert.ok(d.md.nvec.data instanceof BigInt64Array);
  assert.deepEqual(d.mb.n, [2, 3]);
  assert.equal(d.ds.spaces[1][0], 'b');
  assert.equal(d.ds.spaces[1][1].charset, 'abc');
  assert.ok(d.lr instanceof Schedule);
  assert.ok(d.cls instanceof ClassRef && d.cls.module === 'torch.nn');
  assert.ok(d.op instanceof Opaque && d.op.bytes instanceof Uint8Array);
  assert.deepEqual([...d.bytes], [0, 1, 255]);
  assert.equal(d.big_arr.data, null);
  assert.deepEqual(d.big_arr.ref, { group: 'arrays', name: 'data/big_arr' });
  const arr = await d.big_arr.load();
  assert.ok(arr instanceof Float64Array && arr[999] === 999);
  assert.deepEqual([...toFloat32('F16', d.f16.data)], [1.5, -2]);
  assert.ok(d.sc instanceof Scalar && d.sc.value === 0.5 && d.sc.dtype === 'F32');
  assert.ok(d.keys instanceof Map);
  const keys = [...d.keys.keys()];
  assert.ok(keys[0] instanceof Tuple && Object.isFrozen(keys[0]) && keys[0][1] === 'a');
  assert.ok(keys[1] instanceof Uint8Array);
  assert.deepEqual(keys.slice(2), [null, 2.5, true]);
  assert.deepEqual(d.nested, { a: [1, 2, { b: null }], $weird: 'x' });
  assert.equal(d.strs, 'é\u2028\x00\x1f"\\/😀');
  const adam = ar.optimizers.adam;
  assert.ok(adam.state instanceof Map);
  assert.equal(adam.state.get(0).step, 3);
  assert.deepEqual([...(await adam.state.get(0).exp_avg.load())], [1, 1, 1]);
  assert.ok(adam.param_groups[0].betas instanceof Tuple);
  assert.equal(ar.formatVersion, '1.0');
  assert.deepEqual(ar.metadata, { sb3: '2.0' });
  assert.equal(ar.producer.name, 'rlarchive-python');
  await ar.close();
});

test('big integers, non-finite floats and __proto__ keys', async () => {
  const ar = await open(
    archive({
      data: '{"data":{"big":{"$type":"int","value":"-123456789012345678901234567890"},"nan":{"$type":"float","value":"nan"},"m":{"__proto__":1,"2":2,"a":3}}}',
    }),
  );
  assert.equal(ar.data.big, -123456789012345678901234567890n);
  assert.ok(Number.isNaN(ar.data.nan));
  assert.equal(Object.getPrototypeOf(ar.data.m), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(ar.data.m, '__proto__').value, 1);
  assert.equal(ar.rawData.data.get('m').get('2'), 2n);
});

test('schedules evaluate exactly as §9 says', () => {
  const lin = Object.assign(new Schedule(), { kind: 'linear', start: 3e-4, end: 1e-5, end_fraction: 0.5 });
  assert.equal(evaluateSchedule(lin, 1), 3e-4);
  assert.equal(evaluateSchedule(lin, 0.75), 3e-4 + (0.25 * (1e-5 - 3e-4)) / 0.5);
  assert.equal(evaluateSchedule(lin, 0.3), 1e-5);
  assert.equal(evaluateSchedule(lin, -5), 1e-5);
  assert.equal(evaluateSchedule(lin, 7), 3e-4);
  assert.equal(lin.valueAt(0.9), 3e-4 + ((1 - 0.9) * (1e-5 - 3e-4)) / 0.5);
  const pw = {
    kind: 'piecewise',
    points: [
      [0.1, 1],
      [0.5, 3],
      [0.9, -1],
    ],
    interpolation: 'linear',
  };
  assert.equal(evaluateSchedule(pw, 1), 1);
  assert.equal(evaluateSchedule(pw, 0), -1);
  const e = 1 - 0.7;
  assert.equal(evaluateSchedule(pw, 0.7), 1 + ((e - 0.1) * (3 - 1)) / (0.5 - 0.1));
  assert.equal(evaluateSchedule({ ...pw, interpolation: 'step' }, 0.7), 1);
  assert.equal(evaluateSchedule({ ...pw, interpolation: 'step' }, 0.5), 3);
  assert.equal(evaluateSchedule({ kind: 'constant', value: 5 }, 0.2), 5);
  assert.equal(evaluateSchedule({ kind: 'piecewise', points: [[0.5, 2]], interpolation: 'linear' }, 0.9), 2);
  assert.throws(() => evaluateSchedule(lin, NaN), TypeError);
});

test('dtype converters', () => {
  assert.equal(f16ToNumber(0x3c00), 1);
  assert.equal(f16ToNumber(0xc000), -2);
  assert.equal(f16ToNumber(0x0001), 2 ** -24);
  assert.equal(f16ToNumber(0x7c00), Infinity);
  assert.ok(Number.isNaN(f16ToNumber(0x7e00)));
  assert.equal(bf16ToNumber(0x3f80), 1);
  assert.equal(bf16ToNumber(0xc0a0), -5);
  assert.equal(fp8ToNumber('F8_E4M3', 0x38), 1);
  assert.equal(fp8ToNumber('F8_E4M3', 0x7e), 448);
  assert.ok(Number.isNaN(fp8ToNumber('F8_E4M3', 0x7f)));
  assert.equal(fp8ToNumber('F8_E4M3', 0x01), 2 ** -9);
  assert.equal(fp8ToNumber('F8_E5M2', 0x3c), 1);
  assert.equal(fp8ToNumber('F8_E5M2', 0x7c), Infinity);
  assert.equal(fp8ToNumber('F8_E5M2', 0x7b), 57344);
  assert.equal(fp8ToNumber('F8_E4M3FNUZ', 0x40), 1);
  assert.ok(Number.isNaN(fp8ToNumber('F8_E4M3FNUZ', 0x80)));
  assert.equal(fp8ToNumber('F8_E5M2FNUZ', 0x40), 1);
  assert.equal(fp8ToNumber('F8_E8M0', 127), 1);
  assert.equal(fp8ToNumber('F8_E8M0', 0), 2 ** -127);
  assert.ok(Number.isNaN(fp8ToNumber('F8_E8M0', 255)));
});

test('every dtype views as its typed array', async () => {
  const mk = (dtype, arr) => ({ dtype, shape: [arr.length / (dtype === 'C64' ? 2 : 1)], data: bytesOf(arr) });
  const ar = await open(
    archive({
      tensors: {
        g: {
          b: mk('BOOL', new Uint8Array([1, 0, 2])),
          u8: mk('U8', new Uint8Array([255])),
          i8: mk('I8', new Int8Array([-1])),
          u16: mk('U16', new Uint16Array([65535])),
          i16: mk('I16', new Int16Array([-2])),
          u32: mk('U32', new Uint32Array([4e9])),
          i32: mk('I32', new Int32Array([-3])),
          u64: mk('U64', new BigUint64Array([2n ** 64n - 1n])),
          i64: mk('I64', new BigInt64Array([-(2n ** 63n)])),
          f16: mk('F16', new Uint16Array([0x3c00])),
          bf16: mk('BF16', new Uint16Array([0x3f80])),
          f32: mk('F32', new Float32Array([0.5])),
          f64: mk('F64', new Float64Array([0.1])),
          c64: mk('C64', new Float32Array([1, -1])),
          e4: mk('F8_E4M3', new Uint8Array([0x38])),
        },
      },
    }),
  );
  const want = {
    b: Uint8Array,
    u8: Uint8Array,
    i8: Int8Array,
    u16: Uint16Array,
    i16: Int16Array,
    u32: Uint32Array,
    i32: Int32Array,
    u64: BigUint64Array,
    i64: BigInt64Array,
    f16: Uint16Array,
    bf16: Uint16Array,
    f32: Float32Array,
    f64: Float64Array,
    c64: Float32Array,
    e4: Uint8Array,
  };
  for (const [name, Ctor] of Object.entries(want)) {
    const t = await ar.tensor('g', name);
    assert.ok(t.data instanceof Ctor, name);
  }
  assert.equal((await ar.tensor('g', 'u64')).data[0], 2n ** 64n - 1n);
  assert.deepEqual([...(await ar.tensor('g', 'c64')).data], [1, -1]);
  assert.equal(toFloat32('BF16', (await ar.tensor('g', 'bf16')).data)[0], 1);
  assert.equal(toFloat32('F8_E4M3', (await ar.tensor('g', 'e4')).data)[0], 1);
  assert.equal((await ar.tensorSha256('g', 'f64')).length, 64);
  await assert.rejects(ar.tensor('g', 'nope'), { code: 'TENSOR_NOT_FOUND' });
  await assert.rejects(ar.tensor('nope', 'x'), { code: 'TENSOR_NOT_FOUND' });
  assert.throws(() => ar.tensorInfo('nope'), { code: 'TENSOR_NOT_FOUND' });
});

test('warnings for unknown properties and unsupported used extensions', async () => {
  const ar = await open(
    archive({
      data: '{"data":{},"later":1}',
      extensions: { 'extensions/ext_a/x.bin': 'abc' },
      manifest: (m) => ({ ...m, extensions_used: ['ext_a'], future: 1 }),
    }),
  );
  assert.deepEqual(ar.warnings.map((w) => w.code).sort(), [
    'DATA_UNKNOWN_PROPERTY',
    'EXTENSION_UNKNOWN',
    'MANIFEST_UNKNOWN_PROPERTY',
  ]);
  assert.deepEqual(ar.warnings.map((w) => w.severity).sort(), ['info', 'warning', 'warning']);
  assert.ok((await ar.dump()).includes('"extensions_used":["ext_a"]'));
});

test('inline arrays and scalars of every kind decode', async () => {
  const ar = await open(
    archive({
      data: {
        data: {
          s16: { $type: 'scalar', dtype: 'F16', base64: b64(bytesOf(new Uint16Array([0x3c00]))) },
          sb: { $type: 'scalar', dtype: 'BOOL', base64: 'Ag==' },
          sc: { $type: 'scalar', dtype: 'C64', base64: b64(bytesOf(new Float32Array([1, 2]))) },
          su: { $type: 'scalar', dtype: 'U64', base64: b64(bytesOf(new BigUint64Array([5n]))) },
          a0: { $type: 'ndarray', dtype: 'F64', shape: [], base64: b64(bytesOf(new Float64Array([7]))) },
        },
      },
    }),
  );
  const d = ar.data;
  assert.equal(d.s16.value, 1);
  assert.equal(d.sb.value, true);
  assert.deepEqual(d.sc.value, [1, 2]);
  assert.equal(d.su.value, 5n);
  assert.deepEqual(d.a0.shape, []);
  assert.equal(d.a0.data[0], 7);
});
