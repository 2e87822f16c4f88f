// The portable policy (RLA_policy): each operation, head and observation kind
// on small inputs, against expectations this file computes in float64 from
// the spec's definitions (§4-§6), never against hard-coded results; then the
// errors. Descriptions are loaded as archive.policy() loads them: the JSON
// text checked by extensions/policy/description.js, decoded, then given to Policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Policy, ACTIVATIONS } from '../src/extensions/policy/evaluator.js';
import { check } from '../src/extensions/policy/description.js';
import { parseJson } from '../src/json.js';
import { decodeValue } from '../src/decode.js';
import { encodeBase64 } from '../src/base64.js';
import { RlarchiveError } from '../src/errors.js';

// ---------------------------------------------------------------- building descriptions

const prod = (shape) => shape.reduce((a, b) => a * b, 1);
const ARRAYS = { F32: Float32Array, F64: Float64Array, U8: Uint8Array, BOOL: Uint8Array, I64: BigInt64Array };

/** An inline ndarray value. */
function nd(dtype, shape, values) {
  const data = dtype === 'I64' ? BigInt64Array.from(values, (v) => BigInt(v)) : ARRAYS[dtype].from(values);
  return { $type: 'ndarray', dtype, shape, base64: encodeBase64(new Uint8Array(data.buffer)) };
}

/** A NDArray-like observation. */
const obs = (dtype, shape, values) => ({
  dtype,
  shape,
  data: dtype === 'I64' ? BigInt64Array.from(values, (v) => BigInt(v)) : ARRAYS[dtype].from(values),
});

const boxSpace = (shape, low, high, dtype = 'F32') => ({
  $type: 'space',
  kind: 'box',
  dtype,
  shape,
  low: nd(dtype, shape, Array.isArray(low) ? low : new Array(prod(shape)).fill(low)),
  high: nd(dtype, shape, Array.isArray(high) ? high : new Array(prod(shape)).fill(high)),
});
const discreteSpace = (n) => ({ $type: 'space', kind: 'discrete', n, start: 0, dtype: 'I64' });
const multiDiscreteSpace = (nvec) => ({
  $type: 'space',
  kind: 'multi_discrete',
  dtype: 'I64',
  nvec: nd('I64', [nvec.length], nvec),
  start: nd(
    'I64',
    [nvec.length],
    nvec.map(() => 0),
  ),
});
const multiBinarySpace = (n) => ({ $type: 'space', kind: 'multi_binary', n });

/** A head that gives the network's output itself: box actions, clipped to ±inf. */
const probe = (input, width) => ({
  action_space: boxSpace([width], -Infinity, Infinity),
  action: { op: 'box', in: input, squash: 'clip' },
});

/** archive.policy(): the description checked (RLA_policy §8), decoded, then a Policy. */
function load(desc, vecNormalize = null) {
  const text = JSON.stringify({ policy: { normalize_images: true, ...desc }, vec_normalize: vecNormalize }, (k, v) =>
    typeof v === 'number' && !Number.isFinite(v)
      ? { $type: 'float', value: v > 0 ? 'inf' : v < 0 ? '-inf' : 'nan' }
      : v,
  );
  const tree = parseJson(new TextEncoder().encode(text));
  // the archive's data holds the same observation space (RLA_policy §3, with vec_normalize)
  const data = new Map([['observation_space', tree.get('policy').get('observation_space')]]);
  check(tree.get('policy'), data, vecNormalize ? ['RLA_vec_normalize'] : []);
  const vn = vecNormalize ? decodeValue(tree.get('vec_normalize'), null) : null;
  return new Policy(decodeValue(tree.get('policy'), null), { vecNormalize: vn });
}

/** A deterministic stream of float32 values in [-scale, scale). */
function randoms(seed, n, scale = 1) {
  let s = seed >>> 0;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.fround((s / 2 ** 32 - 0.5) * 2 * scale);
  });
}

/** float32 results against float64 expectations: within `tol` relatively (absolutely near 0). */
function assertClose(got, want, tol = 1e-5, what = '') {
  assert.equal(got.length, want.length, `${what}: ${got.length} values, expected ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    const [g, w] = [Number(got[i]), Number(want[i])];
    const ok = g === w || Math.abs(g - w) <= tol * Math.max(1, Math.abs(w));
    assert.ok(ok, `${what}[${i}]: ${g}, expected ${w}`);
  }
}

/** y = x·Wᵀ + b in float64 (W: [o, k] row-major). */
function linearRef(x, w, b, o, k) {
  const rows = x.length / k;
  const y = [];
  for (let r = 0; r < rows; r++)
    for (let j = 0; j < o; j++) {
      let s = b ? b[j] : 0;
      for (let t = 0; t < k; t++) s += x[r * k + t] * w[j * k + t];
      y.push(s);
    }
  return y;
}

// ---------------------------------------------------------------- operations (§5)

test('linear: x·Wᵀ + b over the last dimension, with and without bias, one observation and a batch', () => {
  const [k, o] = [4, 3];
  const w = randoms(1, o * k),
    b = randoms(2, o),
    x = randoms(3, 2 * k, 2);
  for (const bias of [b, null]) {
    const p = load({
      observation_space: boxSpace([k], -10, 10),
      nodes: [
        { op: 'linear', in: ['obs'], out: 'y', weight: nd('F32', [o, k], w), bias: bias && nd('F32', [o], bias) },
      ],
      ...probe('y', o),
    });
    const one = p.predict(obs('F32', [k], x.slice(0, k))).action;
    assert.deepEqual([one.dtype, one.shape], ['F32', [o]]);
    assertClose(one.data, linearRef(x.slice(0, k), w, bias, o, k), 1e-5, 'one');
    const batch = p.predict(obs('F32', [2, k], x)).action;
    assert.deepEqual(batch.shape, [2, o]);
    assertClose(batch.data, linearRef(x, w, bias, o, k), 1e-5, 'batch');
  }
});

test('linear applies over the last dimension of a matrix, then flatten gives C order', () => {
  const w = randoms(4, 2 * 3),
    x = randoms(5, 2 * 3);
  const p = load({
    observation_space: boxSpace([2, 3], -10, 10),
    nodes: [
      { op: 'linear', in: ['obs'], out: 'y', weight: nd('F32', [2, 3], w), bias: null },
      { op: 'flatten', in: ['y'], out: 'f' },
    ],
    ...probe('f', 4),
  });
  assertClose(p.predict(obs('F32', [2, 3], x)).action.data, linearRef(x, w, null, 2, 3));
});

/** 2-d cross-correlation with zero padding, in float64 (x: [C, H, W], w: [O, C, kh, kw]). */
function convRef(x, [c, h, wd], w, [o, , kh, kw], bias, [sh, sw], [ph, pw]) {
  const oh = Math.floor((h + 2 * ph - kh) / sh) + 1,
    ow = Math.floor((wd + 2 * pw - kw) / sw) + 1;
  const y = [];
  for (let q = 0; q < o; q++)
    for (let i = 0; i < oh; i++)
      for (let j = 0; j < ow; j++) {
        let s = bias ? bias[q] : 0;
        for (let ch = 0; ch < c; ch++)
          for (let u = 0; u < kh; u++)
            for (let v = 0; v < kw; v++) {
              const yy = i * sh + u - ph,
                xx = j * sw + v - pw;
              if (yy >= 0 && yy < h && xx >= 0 && xx < wd)
                s += x[(ch * h + yy) * wd + xx] * w[((q * c + ch) * kh + u) * kw + v];
            }
        y.push(s);
      }
  return { y, shape: [o, oh, ow] };
}

test('conv2d: cross-correlation with zero padding and strides, output size ⌊(H + 2p − k)/s⌋ + 1', () => {
  const xs = [2, 5, 6];
  const x = randoms(6, prod(xs), 3);
  const combos = [
    [
      [3, 2, 3, 3],
      [1, 1],
      [0, 0],
    ],
    [
      [2, 2, 3, 2],
      [2, 1],
      [1, 0],
    ],
    [
      [1, 2, 1, 1],
      [1, 1],
      [0, 0],
    ],
    [
      [3, 2, 2, 3],
      [2, 3],
      [1, 2],
    ],
    [
      [2, 2, 5, 6],
      [1, 1],
      [0, 0],
    ], // the kernel covers the whole input
  ];
  combos.forEach(([ws, stride, padding], n) => {
    const w = randoms(10 + n, prod(ws)),
      b = n % 2 ? null : randoms(20 + n, ws[0]);
    const ref = convRef(x, xs, w, ws, b, stride, padding);
    const p = load({
      observation_space: boxSpace(xs, -10, 10),
      nodes: [
        {
          op: 'conv2d',
          in: ['obs'],
          out: 'c',
          weight: nd('F32', ws, w),
          bias: b && nd('F32', [ws[0]], b),
          stride,
          padding,
        },
        { op: 'flatten', in: ['c'], out: 'f' },
      ],
      ...probe('f', prod(ref.shape)),
    });
    assertClose(p.predict(obs('F32', xs, x)).action.data, ref.y, 1e-5, `conv ${JSON.stringify([ws, stride, padding])}`);
  });
});

test('concat: the inputs flattened and joined in the order of `in` (Dict observation keys)', () => {
  const space = {
    $type: 'space',
    kind: 'dict',
    spaces: [
      ['a', boxSpace([2], -10, 10)],
      ['b', discreteSpace(3)],
      ['c', boxSpace([2, 2], -10, 10)],
    ],
  };
  const p = load({
    observation_space: space,
    nodes: [{ op: 'concat', in: ['obs.c', 'obs.a', 'obs.b'], out: 'j' }],
    ...probe('j', 4 + 2 + 3),
  });
  const a = [0.5, -1.5],
    c = [1, 2, 3, 4];
  const got = p.predict({ a: obs('F32', [2], a), b: 2, c: obs('F32', [2, 2], c) }).action;
  assert.deepEqual(got.shape, [9]);
  assertClose(got.data, [...c, ...a, 0, 0, 1]);
  const viaMap = p.predict(
    new Map([
      ['a', obs('F32', [2], a)],
      ['b', 1n],
      ['c', obs('F32', [2, 2], c)],
    ]),
  ).action;
  assertClose(viaMap.data, [...c, ...a, 0, 1, 0]);
});

/** erf in float64 by Simpson's rule on 2/√π·e^(−t²) (an independent reference). */
function erfRef(z) {
  const n = 4000,
    h = z / n;
  let s = 1 + Math.exp(-z * z);
  for (let i = 1; i < n; i++) s += (i % 2 ? 4 : 2) * Math.exp(-((i * h) ** 2));
  return ((2 / Math.sqrt(Math.PI)) * s * h) / 3;
}
const softplus64 = (x, beta = 1, threshold = 20) =>
  beta * x > threshold ? x : Math.log(1 + Math.exp(beta * x)) / beta;
const relu6 = (x) => Math.min(Math.max(x, 0), 6);
const SELU = [1.6732632423543772, 1.0507009873554805];

/** fn -> [parameters to try, the definition of §5.5 in float64]. */
const DEFINITIONS = {
  identity: [[{}], (x) => x],
  relu: [[{}], (x) => Math.max(x, 0)],
  tanh: [[{}], (x) => Math.tanh(x)],
  sigmoid: [[{}], (x) => 1 / (1 + Math.exp(-x))],
  elu: [[{}, { alpha: 0.5 }], (x, p) => (x > 0 ? x : (p.alpha ?? 1) * (Math.exp(x) - 1))],
  leaky_relu: [[{}, { negative_slope: 0.2 }], (x, p) => (x >= 0 ? x : (p.negative_slope ?? 0.01) * x)],
  silu: [[{}], (x) => x / (1 + Math.exp(-x))],
  gelu: [
    [{}, { approximate: 'none' }, { approximate: 'tanh' }],
    (x, p) =>
      p.approximate === 'tanh'
        ? 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)))
        : 0.5 * x * (1 + erfRef(x / Math.SQRT2)),
  ],
  softplus: [[{}, { beta: 2, threshold: 3 }], (x, p) => softplus64(x, p.beta ?? 1, p.threshold ?? 20)],
  hardtanh: [[{}, { min_val: -0.5, max_val: 2.5 }], (x, p) => Math.min(Math.max(x, p.min_val ?? -1), p.max_val ?? 1)],
  selu: [[{}], (x) => SELU[1] * (x > 0 ? x : SELU[0] * (Math.exp(x) - 1))],
  celu: [[{}, { alpha: 0.5 }], (x, p) => (x > 0 ? x : (p.alpha ?? 1) * (Math.exp(x / (p.alpha ?? 1)) - 1))],
  mish: [[{}], (x) => x * Math.tanh(softplus64(x))],
  hardswish: [[{}], (x) => (x * relu6(x + 3)) / 6],
  hardsigmoid: [[{}], (x) => relu6(x + 3) / 6],
  softsign: [[{}], (x) => x / (1 + Math.abs(x))],
};

test('activation: every function of ACTIVATIONS against its float64 definition, defaults and given parameters', () => {
  const x = [...randoms(30, 40, 6), -0.0, 0, 1e-3, -1e-3, 3, -3, 6, -6].map(Math.fround);
  for (const fn of Object.keys(ACTIVATIONS)) {
    assert.ok(Object.hasOwn(DEFINITIONS, fn), `no float64 definition for the activation ${fn} in this test`);
    const [paramSets, def] = DEFINITIONS[fn];
    for (const params of paramSets) {
      const p = load({
        observation_space: boxSpace([x.length], -10, 10),
        nodes: [{ op: 'activation', in: ['obs'], out: 'a', fn, ...params }],
        ...probe('a', x.length),
      });
      assertClose(
        p.predict(obs('F32', [x.length], x)).action.data,
        x.map((v) => def(v, params)),
        2e-6,
        `${fn} ${JSON.stringify(params)}`,
      );
    }
  }
});

test('tanh: the float32 rounding of Math.tanh for float32 arguments of every exponent, Math.tanh called near rounding boundaries only', () => {
  const [tanh] = ACTIVATIONS.tanh;
  const bits = new Uint32Array(1);
  const f = new Float32Array(bits.buffer);
  for (let i = 0; i < 2 ** 32; i += 4093) {
    bits[0] = i;
    const x = f[0];
    const [got, want] = [Math.fround(tanh(x, {})), Math.fround(Math.tanh(x))];
    if (!(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want))))
      assert.fail(`tanh(${x}): ${got}, expected ${want}`);
  }
  for (const x of [0, -0, Infinity, -Infinity, NaN, 9.5, -9.5, 9.500001, 2 ** -149, -(2 ** -149), 3.4e38])
    assert.ok(Object.is(Math.fround(tanh(x, {})), Math.fround(Math.tanh(x))), `tanh(${x})`);
  // a tanh node over 2^16 values: Math.tanh for about one in 2^7 (the old evaluator called it for each)
  const n = 2 ** 16;
  const x = randoms(7, n, 4).map(Math.fround);
  const p = load({
    observation_space: boxSpace([n], -10, 10),
    nodes: [{ op: 'activation', in: ['obs'], out: 'a', fn: 'tanh' }],
    ...probe('a', n),
  });
  const native = Math.tanh;
  let calls = 0;
  Math.tanh = (v) => {
    calls++;
    return native(v);
  };
  let got;
  try {
    got = p.predict(obs('F32', [n], x)).action.data;
  } finally {
    Math.tanh = native;
  }
  assert.ok(calls < n / 32, `${calls} calls of Math.tanh for ${n} values`);
  assert.ok(got.every((v, i) => Object.is(v, Math.fround(native(x[i])))));
});

test('relu on the float32 bits: negative numbers (-0 and -inf too) give +0; positive numbers, +0, +inf and NaN of either sign stay', () => {
  const raw = new Uint32Array([
    0x3f800000, 0xbf800000, 0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 1, 0x80000001, 0x7f7fffff,
    0xff7fffff,
  ]);
  const x = Array.from(new Float32Array(raw.buffer));
  const p = load({
    observation_space: boxSpace([x.length], -10, 10),
    nodes: [{ op: 'activation', in: ['obs'], out: 'a', fn: 'relu' }],
    ...probe('a', x.length),
  });
  const got = p.predict(obs('F32', [x.length], x)).action.data;
  x.forEach((v, i) => {
    const want = Number.isNaN(v) ? v : v > 0 ? v : 0;
    assert.ok(Object.is(got[i], want) || (Number.isNaN(got[i]) && Number.isNaN(want)), `relu(${v}): ${got[i]}`);
  });
});

test('layer_norm: (x − mean)/√(var + eps) with the biased variance, then ·weight + bias when given', () => {
  const n = 5;
  const x = randoms(40, 2 * n, 3),
    w = randoms(41, n),
    b = randoms(42, n);
  for (const [weight, bias, eps] of [
    [w, b, 1e-5],
    [null, null, 0.1],
    [w, null, 1e-3],
  ]) {
    const p = load({
      observation_space: boxSpace([n], -10, 10),
      nodes: [
        {
          op: 'layer_norm',
          in: ['obs'],
          out: 'y',
          weight: weight && nd('F32', [n], weight),
          bias: bias && nd('F32', [n], bias),
          eps,
        },
      ],
      ...probe('y', n),
    });
    const want = [];
    for (let r = 0; r < 2; r++) {
      const row = x.slice(r * n, (r + 1) * n);
      const mean = row.reduce((a, v) => a + v, 0) / n;
      const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / n;
      row.forEach((v, i) =>
        want.push(((v - mean) / Math.sqrt(variance + eps)) * (weight ? weight[i] : 1) + (bias ? bias[i] : 0)),
      );
    }
    assertClose(p.predict(obs('F32', [2, n], x)).action.data, want, 1e-5, `layer_norm ${eps}`);
  }
});

test('batch_norm: evaluation mode with the running statistics, then ·weight + bias when given', () => {
  const n = 4;
  const x = randoms(50, n, 3),
    mean = randoms(51, n),
    variance = randoms(52, n).map((v) => Math.fround(Math.abs(v) + 0.1));
  const w = randoms(53, n),
    b = randoms(54, n);
  for (const [weight, bias] of [
    [w, b],
    [null, null],
    [null, b],
  ]) {
    const p = load({
      observation_space: boxSpace([n], -10, 10),
      nodes: [
        {
          op: 'batch_norm',
          in: ['obs'],
          out: 'y',
          running_mean: nd('F32', [n], mean),
          running_var: nd('F32', [n], variance),
          weight: weight && nd('F32', [n], weight),
          bias: bias && nd('F32', [n], bias),
          eps: 1e-5,
        },
      ],
      ...probe('y', n),
    });
    const want = x.map(
      (v, i) => ((v - mean[i]) / Math.sqrt(variance[i] + 1e-5)) * (weight ? weight[i] : 1) + (bias ? bias[i] : 0),
    );
    assertClose(p.predict(obs('F32', [n], x)).action.data, want, 1e-5);
  }
});

const sigmoid64 = (v) => 1 / (1 + Math.exp(-v));

/** One step of PyTorch's LSTM in float64; returns [h', c'] of every layer. */
function lstmRef(x, layers, hs, cs, hidden) {
  const outH = [],
    outC = [];
  let inp = x;
  layers.forEach((p, l) => {
    const g = linearRef(inp, p.wih, p.bih, 4 * hidden, inp.length).map(
      (v, j) => v + linearRef(hs[l], p.whh, p.bhh, 4 * hidden, hidden)[j],
    );
    const c = [],
      h = [];
    for (let j = 0; j < hidden; j++) {
      c.push(sigmoid64(g[hidden + j]) * cs[l][j] + sigmoid64(g[j]) * Math.tanh(g[2 * hidden + j]));
      h.push(sigmoid64(g[3 * hidden + j]) * Math.tanh(c[j]));
    }
    outH.push(h);
    outC.push(c);
    inp = h;
  });
  return [outH, outC];
}

test('lstm: one step per observation, the state carried, reset by episode starts, shaped [layers, batch, hidden]', () => {
  const [k, hidden] = [3, 2];
  for (const nLayers of [1, 2]) {
    const layers = Array.from({ length: nLayers }, (_, l) => {
      const w = l === 0 ? k : hidden;
      return {
        wih: randoms(60 + l, 4 * hidden * w),
        whh: randoms(70 + l, 4 * hidden * hidden),
        bih: randoms(80 + l, 4 * hidden),
        bhh: randoms(90 + l, 4 * hidden),
      };
    });
    const p = load({
      observation_space: boxSpace([k], -10, 10),
      recurrent: {
        hidden_in: 'h',
        cell_in: 'c',
        hidden_out: 'h2',
        cell_out: 'c2',
        layers: nLayers,
        hidden_size: hidden,
      },
      nodes: [
        {
          op: 'lstm',
          in: ['obs', 'h', 'c'],
          out: ['y', 'h2', 'c2'],
          layers: layers.map((q, l) => ({
            weight_ih: nd('F32', [4 * hidden, l === 0 ? k : hidden], q.wih),
            weight_hh: nd('F32', [4 * hidden, hidden], q.whh),
            bias_ih: nd('F32', [4 * hidden], q.bih),
            bias_hh: nd('F32', [4 * hidden], q.bhh),
          })),
        },
      ],
      ...probe('y', hidden),
    });
    const zeros = () => Array.from({ length: nLayers }, () => new Array(hidden).fill(0));
    let [hs, cs] = [zeros(), zeros()];
    let state = null;
    const starts = [true, false, false, true, false];
    starts.forEach((start, t) => {
      const x = randoms(100 + t, k, 2);
      if (start) [hs, cs] = [zeros(), zeros()];
      [hs, cs] = lstmRef(x, layers, hs, cs, hidden);
      const r = p.predict(obs('F32', [k], x), { state, episodeStart: [start] });
      assertClose(r.action.data, hs[nLayers - 1], 1e-5, `step ${t} output`);
      assert.deepEqual(
        [r.state.hidden.dtype, r.state.hidden.shape, r.state.cell.shape],
        ['F32', [nLayers, 1, hidden], [nLayers, 1, hidden]],
      );
      assertClose(r.state.hidden.data, hs.flat(), 1e-5, `step ${t} hidden`);
      assertClose(r.state.cell.data, cs.flat(), 1e-5, `step ${t} cell`);
      state = r.state;
    });
    // without a state the LSTM starts from zeros
    const fresh = p.predict(obs('F32', [k], randoms(100, k, 2))).action.data;
    assertClose(fresh, lstmRef(randoms(100, k, 2), layers, zeros(), zeros(), hidden)[0][nLayers - 1], 1e-5, 'fresh');
  }
});

// ---------------------------------------------------------------- heads (§6)

/** A description whose network is `logits = bias` (a zero weight), so the logits are exactly chosen. */
function constantLogits(head, actionSpace, logits) {
  return load({
    observation_space: boxSpace([1], -10, 10),
    nodes: [
      {
        op: 'linear',
        in: ['obs'],
        out: 'l',
        weight: nd('F32', [logits.length, 1], new Array(logits.length).fill(0)),
        bias: nd('F32', [logits.length], logits),
      },
    ],
    action_space: actionSpace,
    action: { in: 'l', ...head },
  });
}
const argmax64 = (v) => v.reduce((best, x, i) => (x > v[best] ? i : best), 0);
const one = obs('F32', [1], [0]);

test('argmax: the first largest logit, I64, without start; action masks count masked-out logits as −1e8', () => {
  const logits = [0.5, 2, 2, -1, 1.5];
  const p = constantLogits({ op: 'argmax' }, discreteSpace(5), logits);
  assert.equal(p.maskWidth, 5);
  const a = p.predict(one).action;
  assert.deepEqual([a.dtype, a.shape, a.data[0]], ['I64', [], BigInt(argmax64(logits))]);
  const masks = [true, false, false, true, true];
  const want = argmax64(logits.map((v, i) => (masks[i] ? v : -1e8)));
  assert.equal(p.predict(one, { actionMasks: masks }).action.data[0], BigInt(want));
  assert.equal(p.predict(one, { actionMasks: [false, false, false, true, false] }).action.data[0], 3n);
  const batch = p.predict(obs('F32', [3, 1], [0, 0, 0])).action;
  assert.deepEqual([batch.shape, [...batch.data]], [[3], [1n, 1n, 1n].map(() => BigInt(argmax64(logits)))]);
});

test('quantile_argmax: the mean over quantiles of the [n_quantiles, n] row, then argmax', () => {
  const [nq, n] = [3, 4];
  const logits = randoms(110, nq * n, 5);
  const means = Array.from({ length: n }, (_, j) => (logits[j] + logits[n + j] + logits[2 * n + j]) / nq);
  const p = constantLogits({ op: 'quantile_argmax', n_quantiles: nq }, discreteSpace(n), logits);
  const a = p.predict(one).action;
  assert.deepEqual([a.dtype, a.shape, a.data[0]], ['I64', [], BigInt(argmax64(means))]);
});

test('multi_argmax: argmax of each consecutive part of the given sizes, masks over the whole row', () => {
  const sizes = [3, 1, 2];
  const logits = randoms(120, 6, 5);
  const parts = (v) => [v.slice(0, 3), v.slice(3, 4), v.slice(4, 6)].map(argmax64).map(BigInt);
  const p = constantLogits({ op: 'multi_argmax', sizes }, multiDiscreteSpace(sizes), logits);
  assert.equal(p.maskWidth, 6);
  const a = p.predict(one).action;
  assert.deepEqual([a.dtype, a.shape, [...a.data]], ['I64', [3], parts(logits)]);
  const masks = [false, true, true, true, true, false];
  assert.deepEqual(
    [...p.predict(one, { actionMasks: masks }).action.data],
    parts(logits.map((v, i) => (masks[i] ? v : -1e8))),
  );
});

test('bernoulli: 1.0 exactly where the float32 logit is above 3·2^-25 (SB3: round(sigmoid(x)) in float32), else 0.0, F32', () => {
  const t = 3 * 2 ** -25;
  const above = new Float32Array(new Uint32Array([0x33c00001]).buffer)[0]; // the float32 after 3·2^-25
  const logits = [-2, 0, 0.25, 3, -1e-3, t, above, 1e-7, 2 ** -23, Number.NaN];
  const p = constantLogits({ op: 'bernoulli' }, multiBinarySpace(logits.length), logits);
  assert.equal(p.maskWidth, null);
  const a = p.predict(one).action;
  // 1e-7 and 2^-23: the rounded exact sigmoid is 0.5 there (0.0), PyTorch's float32 sigmoid is above it (1.0)
  assert.deepEqual([a.dtype, a.shape, [...a.data]], ['F32', [logits.length], [0, 0, 1, 1, 0, 0, 1, 1, 1, 0]]);
});

test('box: clip to [low, high], tanh then rescale, rescale; the action space dtype and shape', () => {
  const logits = [-3, -0.5, 0.25, 2, 0.9, -0.99];
  const low = [-1, -2, 0, -1, 0.5, -3],
    high = [1, 2, 0.1, 3, 4, -2];
  const rescale = (a, i) => low[i] + 0.5 * (a + 1) * (high[i] - low[i]);
  const want = {
    clip: logits.map((v, i) => Math.min(Math.max(v, low[i]), high[i])),
    tanh: logits.map((v, i) => rescale(Math.tanh(v), i)),
    rescale: logits.map(rescale),
  };
  for (const dtype of ['F32', 'F64']) {
    for (const squash of ['clip', 'tanh', 'rescale']) {
      const p = constantLogits({ op: 'box', squash }, boxSpace([2, 3], low, high, dtype), logits);
      const a = p.predict(one).action;
      assert.deepEqual([a.dtype, a.shape], [dtype, [2, 3]], `${squash} ${dtype}`);
      assert.ok(a.data instanceof ARRAYS[dtype]);
      assertClose(a.data, want[squash], 1e-6, `${squash} ${dtype}`);
    }
  }
});

// ---------------------------------------------------------------- observations (§4) and VecNormalize (RLA_vec_normalize §4)

test('Discrete, MultiDiscrete and MultiBinary observations: one-hot vectors (start not added) and float32 casts', () => {
  const d = load({ observation_space: { ...discreteSpace(4), start: 7 }, nodes: [], ...probe('obs', 4) });
  assert.deepEqual([...d.predict(2).action.data], [0, 0, 1, 0]);
  assert.deepEqual([...d.predict(3n).action.data], [0, 0, 0, 1]);
  assert.deepEqual([...d.predict(obs('I64', [], [1])).action.data], [0, 1, 0, 0]);
  const batch = d.predict(obs('I64', [2], [0, 3])).action;
  assert.deepEqual(
    [batch.shape, [...batch.data]],
    [
      [2, 4],
      [1, 0, 0, 0, 0, 0, 0, 1],
    ],
  );
  const md = load({ observation_space: multiDiscreteSpace([2, 3, 1]), nodes: [], ...probe('obs', 6) });
  assert.deepEqual([...md.predict(obs('I64', [3], [1, 2, 0])).action.data], [0, 1, 0, 0, 1, 1]);
  const mb = load({
    observation_space: multiBinarySpace([2, 2]),
    nodes: [{ op: 'flatten', in: ['obs'], out: 'f' }],
    ...probe('f', 4),
  });
  assert.deepEqual([...mb.predict(obs('I64', [2, 2], [1, 0, 0, 1])).action.data], [1, 0, 0, 1]);
});

test('images: divided by 255 when normalize_images, given channel-last (H, W, C) they are transposed first', () => {
  const [c, h, w] = [3, 2, 4];
  const image = {
    $type: 'space',
    kind: 'box',
    dtype: 'U8',
    shape: [c, h, w],
    low: nd('U8', [c, h, w], new Array(24).fill(0)),
    high: nd('U8', [c, h, w], new Array(24).fill(255)),
  };
  const pixels = Array.from({ length: 24 }, (_, i) => (i * 37) % 256); // C order (C, H, W)
  const hwc = [];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) for (let k = 0; k < c; k++) hwc.push(pixels[(k * h + y) * w + x]);
  for (const normalize of [true, false]) {
    const p = load({
      observation_space: image,
      normalize_images: normalize,
      nodes: [{ op: 'flatten', in: ['obs'], out: 'f' }],
      ...probe('f', 24),
    });
    const want = pixels.map((v) => (normalize ? v / 255 : v));
    assertClose(p.predict(obs('U8', [c, h, w], pixels)).action.data, want, 1e-6, 'CHW');
    assertClose(p.predict(obs('U8', [h, w, c], hwc)).action.data, want, 1e-6, 'HWC');
    const batch = p.predict(obs('U8', [2, h, w, c], [...hwc, ...hwc])).action;
    assert.deepEqual(batch.shape, [2, 24]);
    assertClose(batch.data, [...want, ...want], 1e-6, 'HWC batch');
  }
});

const statsValue = (shape, mean, variance) => ({
  mean: nd('F64', shape, mean),
  var: nd('F64', shape, variance),
  count: 100.5,
});
const vecNormalizeValue = (obsStats, obsKeys, clip) => ({
  norm_obs: true,
  norm_reward: false,
  clip_obs: clip,
  clip_reward: 10.0,
  epsilon: 1e-8,
  gamma: 0.99,
  training: false,
  obs: obsStats,
  obs_keys: obsKeys,
  ret: statsValue([], [0], [1]),
});

test('vec_normalize: (o − mean)/√(var + ε) in float64, clipped to ±clip_obs, then float32, before preprocessing', () => {
  const x = [0.5, -3, 12, 1e-3],
    mean = [0.25, 1, -2, 0],
    variance = [0.5, 4, 1e-3, 2];
  for (const clip of [10.0, 0.5, Infinity]) {
    const p = load(
      { observation_space: boxSpace([4], -Infinity, Infinity), vec_normalize: true, nodes: [], ...probe('obs', 4) },
      vecNormalizeValue(statsValue([4], mean, variance), null, clip),
    );
    const want = x.map((v, i) => Math.min(Math.max((v - mean[i]) / Math.sqrt(variance[i] + 1e-8), -clip), clip));
    assertClose(p.predict(obs('F64', [4], x)).action.data, want, 1e-6, `clip ${clip}`);
  }
  // a Dict observation: only the keys of obs_keys are normalised
  const space = {
    $type: 'space',
    kind: 'dict',
    spaces: [
      ['a', boxSpace([2], -10, 10)],
      ['b', boxSpace([2], -10, 10)],
    ],
  };
  const p = load(
    {
      observation_space: space,
      vec_normalize: true,
      nodes: [{ op: 'concat', in: ['obs.a', 'obs.b'], out: 'j' }],
      ...probe('j', 4),
    },
    vecNormalizeValue({ b: statsValue([2], [1, -1], [4, 0.25]) }, ['b'], 5.0),
  );
  const got = p.predict({ a: obs('F32', [2], [3, 4]), b: obs('F32', [2], [2, 2]) }).action.data;
  assertClose(got, [3, 4, (2 - 1) / Math.sqrt(4 + 1e-8), Math.min((2 + 1) / Math.sqrt(0.25 + 1e-8), 5)], 1e-6, 'dict');
  // without the statistics the policy is refused
  assert.throws(
    () =>
      new Policy(
        decodeValue(
          parseJson(
            new TextEncoder().encode(
              JSON.stringify({
                ...probe('obs', 4),
                observation_space: { $type: 'space', kind: 'discrete', n: 4, start: 0, dtype: 'I64' },
                normalize_images: true,
                vec_normalize: true,
                nodes: [],
              }),
            ),
          ),
          null,
        ),
      ),
  );
});

// ---------------------------------------------------------------- errors

/** A valid small MLP description, to break one piece at a time. */
function mlp() {
  return {
    observation_space: boxSpace([3], -10, 10),
    nodes: [
      { op: 'linear', in: ['obs'], out: 'h', weight: nd('F32', [2, 3], randoms(130, 6)), bias: null },
      { op: 'activation', in: ['h'], out: 'a', fn: 'tanh' },
    ],
    action_space: discreteSpace(2),
    action: { op: 'argmax', in: 'a' },
  };
}

function assertInvalid(desc, pointer) {
  assert.throws(
    () => load(desc),
    (e) => {
      assert.ok(e instanceof RlarchiveError, `not an RlarchiveError: ${e}`);
      assert.equal(e.code, 'EXTENSION_INVALID', e.message);
      assert.equal(e.member, 'extensions/RLA_policy/policy.json');
      assert.equal(e.pointer, pointer, e.message);
      return true;
    },
  );
}

test('malformed descriptions: EXTENSION_INVALID with the JSON Pointer of the offending value', () => {
  assert.doesNotThrow(() => load(mlp()));
  const d1 = mlp();
  d1.nodes[1].op = 'softmax';
  assertInvalid(d1, '/policy/nodes/1/op');
  const d2 = mlp();
  d2.nodes[1].in = ['z'];
  assertInvalid(d2, '/policy/nodes/1/in/0');
  const d3 = mlp();
  d3.action.op = 'sample';
  assertInvalid(d3, '/policy/action/op');
  const d4 = mlp();
  d4.action.in = 'nowhere';
  assertInvalid(d4, '/policy/action/in');
  const d5 = mlp();
  d5.nodes[0].weight = nd('F32', [2, 4], randoms(131, 8));
  assertInvalid(d5, '/policy/nodes/0/weight');
  const d6 = mlp();
  d6.nodes[1].fn = 'swish';
  assertInvalid(d6, '/policy/nodes/1/fn');
  const d7 = mlp();
  d7.nodes.push({ op: 'flatten', in: ['a'], out: 'h' });
  assertInvalid(d7, '/policy/nodes/2/out');
  const conv = {
    observation_space: boxSpace([2, 4, 4], -10, 10),
    nodes: [
      {
        op: 'conv2d',
        in: ['obs'],
        out: 'c',
        weight: nd('F32', [1, 3, 2, 2], randoms(132, 12)),
        bias: null,
        stride: [1, 1],
        padding: [0, 0],
      },
      { op: 'flatten', in: ['c'], out: 'f' },
    ],
    ...probe('f', 9),
  };
  assertInvalid(conv, '/policy/nodes/0/weight'); // 3 input channels for a 2-channel observation
});

test('calls that do not fit the policy are refused', () => {
  const p = load(mlp());
  assert.throws(() => p.predict(obs('F32', [4], [1, 2, 3, 4])), /shape/);
  assert.throws(() => p.predict(obs('F32', [2, 2], [1, 2, 3, 4])));
  assert.throws(() => p.predict(obs('F32', [3], [1, 2, 3]), { actionMasks: [true, false, true] }));
  const d = load({ observation_space: discreteSpace(3), nodes: [], ...probe('obs', 3) });
  assert.throws(() => d.predict(3));
  assert.throws(() => d.predict(-1));
});

// ---------------------------------------------------------------- numerical edges (§5-§7): NaN, infinities, sums, empty values

test('activation: a NaN input gives NaN for every function; ±inf give the IEEE (torch) values', () => {
  for (const [fn, [f, defaults]] of Object.entries(ACTIVATIONS)) {
    assert.ok(Number.isNaN(f(NaN, defaults)), `${fn}(NaN)`);
    const p = load({
      observation_space: boxSpace([3], -Infinity, Infinity),
      nodes: [{ op: 'activation', in: ['obs'], out: 'a', fn }],
      ...probe('a', 3),
    });
    const got = p.predict(obs('F32', [3], [NaN, Infinity, -Infinity])).action.data;
    assert.ok(Number.isNaN(got[0]), `${fn}(NaN) through predict`);
  }
  const [relu] = ACTIVATIONS.relu;
  assert.deepEqual([relu(Infinity, {}), relu(-Infinity, {}), relu(-2, {})], [Infinity, 0, 0]);
  const inf = (fn) => [
    ACTIVATIONS[fn][0](Infinity, ACTIVATIONS[fn][1]),
    ACTIVATIONS[fn][0](-Infinity, ACTIVATIONS[fn][1]),
  ];
  assert.deepEqual(inf('elu'), [Infinity, -1]);
  assert.ok(
    Number.isNaN(inf('silu')[1]) &&
      Number.isNaN(inf('gelu')[1]) &&
      Number.isNaN(inf('mish')[1]) &&
      Number.isNaN(inf('hardswish')[1]),
  ); // −inf·0
  assert.ok(Number.isNaN(inf('softsign')[0]) && Number.isNaN(inf('softsign')[1])); // inf/inf
  assert.deepEqual(inf('softplus'), [Infinity, 0]);
  assert.deepEqual(inf('hardtanh'), [1, -1]);
});

test('softplus: x itself above the threshold, else (max(z, 0) + log1p(e^−|z|))/beta with no clamping (threshold 800, x = 750 gives 750)', () => {
  const p = load({
    observation_space: boxSpace([4], -1000, 1000),
    nodes: [{ op: 'activation', in: ['obs'], out: 'a', fn: 'softplus', beta: 1, threshold: 800 }],
    ...probe('a', 4),
  });
  const x = [750, 801, -750, 0.5];
  assertClose(p.predict(obs('F32', [4], x)).action.data, [750, 801, 0, Math.log1p(Math.exp(0.5))], 1e-7);
});

test('linear and conv2d sums: binary64, rounded once, so float32 partial sums never overflow; an empty sum gives the bias', () => {
  const w = [1, 1, 1, 1, 0.5, 0.5, 0.5, -1];
  const x = [3e38, 3e38, -3e38, -2e38].map(Math.fround);
  const p = load({
    observation_space: boxSpace([4], -3.4e38, 3.4e38),
    nodes: [{ op: 'linear', in: ['obs'], out: 'y', weight: nd('F32', [2, 4], w), bias: nd('F32', [2], [0, 1]) }],
    ...probe('y', 2),
  });
  const want = [x[0] + x[1] + x[2] + x[3], 0.5 * (x[0] + x[1] + x[2]) - x[3] + 1]; // exact in binary64 here
  assertClose(p.predict(obs('F32', [4], x)).action.data, want.map(Math.fround), 1e-7, 'overflowing partial sums');
  const empty = load({
    observation_space: boxSpace([0], -1, 1),
    nodes: [{ op: 'linear', in: ['obs'], out: 'y', weight: nd('F32', [2, 0], []), bias: nd('F32', [2], [0.25, -1.5]) }],
    ...probe('y', 2),
  });
  const one = empty.predict(obs('F32', [0], [])).action;
  assert.deepEqual([one.shape, [...one.data]], [[2], [0.25, -1.5]]);
  const batch = empty.predict(obs('F32', [3, 0], [])).action;
  assert.deepEqual(
    [batch.shape, [...batch.data]],
    [
      [3, 2],
      [0.25, -1.5, 0.25, -1.5, 0.25, -1.5],
    ],
  );
  const none = load({
    observation_space: boxSpace([0], -1, 1),
    nodes: [{ op: 'linear', in: ['obs'], out: 'y', weight: nd('F32', [2, 0], []), bias: null }],
    ...probe('y', 2),
  });
  assert.deepEqual([...none.predict(obs('F32', [0], [])).action.data], [0, 0]);
});

test('batch_norm with a negative running variance makes NaN from a finite observation; relu keeps it; argmax takes the first NaN', () => {
  const p = load({
    observation_space: boxSpace([3], -10, 10),
    nodes: [
      {
        op: 'batch_norm',
        in: ['obs'],
        out: 'n',
        running_mean: nd('F32', [3], [0, 0, 0]),
        running_var: nd('F32', [3], [1, -1, 1]),
        weight: null,
        bias: null,
        eps: 1e-5,
      },
      { op: 'activation', in: ['n'], out: 'r', fn: 'relu' },
    ],
    action_space: discreteSpace(3),
    action: { op: 'argmax', in: 'r' },
  });
  assert.equal(p.predict(obs('F32', [3], [5, -1, 7])).action.data[0], 1n);
});

test('box rescale in binary64 from float32 a, low and high, rounded once: bounds near ±3.4e38 do not overflow', () => {
  const low = [-3e38, -1e30].map(Math.fround),
    high = [3e38, 3.4e38].map(Math.fround);
  const x = [0.25, -0.5];
  for (const squash of ['rescale', 'tanh']) {
    const p = load({
      observation_space: boxSpace([2], -1, 1),
      nodes: [],
      action_space: boxSpace([2], low, high),
      action: { op: 'box', in: 'obs', squash },
    });
    const a = x.map((v) => (squash === 'tanh' ? Math.fround(Math.tanh(v)) : v));
    const want = a.map((v, i) => Math.fround(low[i] + 0.5 * (v + 1) * (high[i] - low[i])));
    const got = p.predict(obs('F32', [2], x)).action.data;
    assert.ok(want.every(Number.isFinite) && got.every(Number.isFinite), `${squash}: ${[...got]}`);
    assertClose(got, want, 1e-6, squash);
  }
  const clip = load({
    observation_space: boxSpace([2], -Infinity, Infinity),
    nodes: [],
    action_space: boxSpace([2], -1, 1),
    action: { op: 'box', in: 'obs', squash: 'clip' },
  });
  const c = clip.predict(obs('F32', [2], [NaN, 5])).action.data;
  assert.ok(Number.isNaN(c[0]) && c[1] === 1, 'clip keeps NaN');
});

test('prelu: x where x ≥ 0, else the slope (shared, or per channel along the first dimension) times x; NaN stays NaN', () => {
  const x = [-2, 3, -0.5, NaN, 1.5, -4];
  const shared = load({
    observation_space: boxSpace([6], -10, 10),
    nodes: [{ op: 'prelu', in: ['obs'], out: 'y', weight: nd('F32', [1], [0.25]) }],
    ...probe('y', 6),
  });
  const got = shared.predict(obs('F32', [6], x)).action.data;
  assert.ok(Number.isNaN(got[3]));
  assertClose(
    [...got].filter((_, i) => i !== 3),
    [-0.5, 3, -0.125, 1.5, -1],
    1e-7,
    'shared',
  );
  const slopes = [0.1, -0.7];
  const xs = randoms(140, 2 * 2 * 3, 2);
  const perChannel = load({
    observation_space: boxSpace([2, 2, 3], -10, 10),
    nodes: [
      { op: 'prelu', in: ['obs'], out: 'p', weight: nd('F32', [2], slopes) },
      { op: 'flatten', in: ['p'], out: 'f' },
    ],
    ...probe('f', 12),
  });
  const want = xs.map((v, i) => (v >= 0 ? v : Math.fround(slopes[Math.floor(i / 6)] * v)));
  assertClose(perChannel.predict(obs('F32', [2, 2, 3], xs)).action.data, want, 1e-7, 'per channel');
});

test('conv2d with four or more output channels (im2col and the blocked GEMM) against the float64 definition', () => {
  const xs = [3, 7, 6];
  const x = randoms(150, prod(xs), 2);
  for (const [ws, stride, padding] of [
    [
      [5, 3, 3, 2],
      [1, 2],
      [1, 0],
    ],
    [
      [8, 3, 2, 2],
      [2, 1],
      [0, 1],
    ],
    [
      [4, 3, 7, 6],
      [1, 1],
      [0, 0],
    ],
  ]) {
    const w = randoms(151, prod(ws)),
      b = randoms(152, ws[0]);
    const ref = convRef(x, xs, w, ws, b, stride, padding);
    const p = load({
      observation_space: boxSpace(xs, -10, 10),
      nodes: [
        { op: 'conv2d', in: ['obs'], out: 'c', weight: nd('F32', ws, w), bias: nd('F32', [ws[0]], b), stride, padding },
        { op: 'flatten', in: ['c'], out: 'f' },
      ],
      ...probe('f', prod(ref.shape)),
    });
    assertClose(
      p.predict(obs('F32', [2, ...xs], [...x, ...x])).action.data,
      [...ref.y, ...ref.y],
      1e-5,
      JSON.stringify(ws),
    );
  }
});

test('conv2d works in blocks: no array larger than its input, its output or POLICY_BLOCK_ELEMENTS, whatever the whole im2col', () => {
  const [C, H, W, O, K] = [1, 300, 300, 4, 8]; // the whole im2col would be 293² · 64 ≈ 5.5M floats
  const x = randoms(160, C * H * W, 1);
  const w = randoms(161, O * C * K * K);
  const p = load({
    observation_space: boxSpace([C, H, W], -1, 1),
    nodes: [
      {
        op: 'conv2d',
        in: ['obs'],
        out: 'c',
        weight: nd('F32', [O, C, K, K], w),
        bias: null,
        stride: [1, 1],
        padding: [0, 0],
      },
      { op: 'flatten', in: ['c'], out: 'f' },
    ],
    action_space: discreteSpace(O * (H - K + 1) ** 2),
    action: { op: 'argmax', in: 'f' },
  });
  const Original = globalThis.Float32Array;
  let largest = 0;
  globalThis.Float32Array = class extends Original {
    constructor(...args) {
      super(...args);
      largest = Math.max(largest, this.length);
    }
  };
  try {
    p.predict(obs('F32', [C, H, W], x));
  } finally {
    globalThis.Float32Array = Original;
  }
  assert.ok(largest <= Math.max(O * (H - K + 1) ** 2, C * H * W, 1 << 20), `an array of ${largest} floats`);
});

// ---------------------------------------------------------------- Dict observations: single or a batch by every key (§4)

test('Dict observations: single when every key has its space’s shape (Discrete: a number, a 0-d array, a Scalar), a batch when every key has the same leading n', () => {
  const space = {
    $type: 'space',
    kind: 'dict',
    spaces: [
      ['mode', discreteSpace(3)],
      ['pos', boxSpace([2], -10, 10)],
      ['grid', multiDiscreteSpace([2, 3])],
      ['flags', multiBinarySpace(2)],
      ['cells', multiBinarySpace([2, 2])],
      [
        'image',
        {
          $type: 'space',
          kind: 'box',
          dtype: 'U8',
          shape: [1, 2, 3],
          low: nd('U8', [1, 2, 3], new Array(6).fill(0)),
          high: nd('U8', [1, 2, 3], new Array(6).fill(255)),
        },
      ],
    ],
  };
  const width = 3 + 2 + 5 + 2 + 4 + 6;
  const p = load({
    observation_space: space,
    nodes: [{ op: 'concat', in: ['obs.mode', 'obs.pos', 'obs.grid', 'obs.flags', 'obs.cells', 'obs.image'], out: 'j' }],
    ...probe('j', width),
  });
  const keys = (mode, n = null) => {
    const lead = n === null ? [] : [n];
    const times = (a) => (n === null ? a : Array.from({ length: n }, () => a).flat());
    return {
      mode,
      pos: obs('F32', [...lead, 2], times([0.5, -1])),
      grid: obs('I64', [...lead, 2], times([1, 2])),
      flags: obs('I64', [...lead, 2], times([1, 0])),
      cells: obs('I64', [...lead, 2, 2], times([0, 1, 1, 0])),
      image: obs('U8', [...lead, 2, 3, 1], times([0, 51, 102, 153, 204, 255])), // channel-last
    };
  };
  const want = [0, 0, 1, 0.5, -1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0.2, 0.4, 0.6, 0.8, 1];
  for (const mode of [2, 2n, obs('I64', [], [2]), { $type: 'scalar', dtype: 'I64', value: 2n }]) {
    const a = p.predict(keys(mode)).action;
    assert.deepEqual(a.shape, [width]);
    assertClose(a.data, want, 1e-6, `single, mode ${typeof mode}`);
  }
  const b = p.predict(keys(obs('I64', [3], [2, 2, 2]), 3)).action;
  assert.deepEqual(b.shape, [3, width]);
  assertClose(b.data, [...want, ...want, ...want], 1e-6, 'batch of 3');
  const one = p.predict(keys([2], 1)).action;
  assert.deepEqual(one.shape, [1, width]);
  // keys that disagree, or do not fit their space, are errors of the call (TypeError)
  for (const bad of [
    keys([2]),
    keys(obs('I64', [3], [2, 2, 2]), 2),
    keys(obs('I64', [1, 1], [2])),
    { ...keys(2), pos: obs('F32', [3], [1, 2, 3]) },
    { ...keys(2), grid: undefined },
    [1, 2],
    null,
  ]) {
    assert.throws(() => p.predict(bad), TypeError);
  }
});
