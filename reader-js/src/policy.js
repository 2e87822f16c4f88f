// The portable policy (extension RLA_policy): act on observations with plain
// JavaScript; the twin of python/rlarchive/policy.py, organised the same way
// (activations, the Policy class, spaces, operations, heads).
//
// A Policy takes a description checked by policy_description.js and decoded
// by decode.js (plain objects, Space objects, NDArray objects whose data is
// loaded). Values are {shape, data} with the batch first and data a
// Float32Array; every operation rounds its results to float32 (RLA_policy §5).

import { normalizeArray } from './vec_normalize.js';

const f32 = Math.fround;

// -- activations (RLA_policy §5.5): float32 in, float32 out -----------------------------

/** erf(x) to about 1e-15 relative: Taylor series near 0, a continued fraction for erfc beyond. */
function erf(x) {
  const ax = Math.abs(x);
  if (ax < 2.5) {
    // erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
    let term = ax;
    let sum = ax;
    const x2 = ax * ax;
    for (let n = 1; n < 80; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  if (ax > 6) return Math.sign(x);
  // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...)))), evaluated from the tail
  let frac = 0;
  for (let k = 60; k >= 1; k--) frac = (k / 2) / (ax + frac);
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + frac);
  return Math.sign(x) * (1 - erfc);
}

const sigmoid = (x) => 1 / (1 + Math.exp(-x));
const SELU_ALPHA = 1.6732632423543772848170429916717;
const SELU_SCALE = 1.0507009873554804934193349852946;

/** name -> [function of (x, parameters) in float64, defaults]; results are rounded to float32 by the caller. */
export const ACTIVATIONS = Object.freeze({
  identity: [(x) => x, {}],
  relu: [(x) => (x > 0 ? x : 0), {}],
  tanh: [(x) => Math.tanh(x), {}],
  sigmoid: [sigmoid, {}],
  elu: [(x, p) => (x > 0 ? x : p.alpha * Math.expm1(x)), { alpha: 1.0 }],
  leaky_relu: [(x, p) => (x >= 0 ? x : x * f32(p.negative_slope)), { negative_slope: 0.01 }],
  silu: [(x) => x * f32(sigmoid(x)), {}],
  gelu: [(x, p) => (p.approximate === 'tanh' ? 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3))) : 0.5 * x * (1 + erf(x / Math.SQRT2))), { approximate: 'none' }],
  softplus: [(x, p) => (x * p.beta > p.threshold ? x : Math.log1p(Math.exp(x * p.beta)) / p.beta), { beta: 1.0, threshold: 20.0 }],
  hardtanh: [(x, p) => Math.min(Math.max(x, p.min_val), p.max_val), { min_val: -1.0, max_val: 1.0 }],
  selu: [(x) => SELU_SCALE * (x > 0 ? x : SELU_ALPHA * Math.expm1(x)), {}],
  celu: [(x, p) => (x > 0 ? x : p.alpha * Math.expm1(x / p.alpha)), { alpha: 1.0 }],
  mish: [(x) => x * Math.tanh(x > 20 ? x : Math.log1p(Math.exp(x))), {}],
  hardswish: [(x) => (x * Math.min(Math.max(x + 3, 0), 6)) / 6, {}],
  hardsigmoid: [(x) => Math.min(Math.max(x + 3, 0), 6) / 6, {}],
  softsign: [(x) => x / (1 + Math.abs(x)), {}],
});

// -- the policy ---------------------------------------------------------------------------

const num = (v) => (typeof v === 'bigint' ? Number(v) : v);
const prod = (shape) => shape.reduce((a, b) => a * b, 1);

/** A policy description, ready to act (open it with `await archive.policy()`). */
export class Policy {
  /**
   * @param {object} desc the decoded description (the value under `policy`), checked, every NDArray loaded
   * @param {{vecNormalize?: object|null}} [options] the archive's RLA_vec_normalize statistics (decoded), needed when `desc.vec_normalize`
   */
  constructor(desc, { vecNormalize = null } = {}) {
    this.desc = desc;
    this.observationSpace = desc.observation_space;
    this.actionSpace = desc.action_space;
    this.normalizeImages = desc.normalize_images !== false;
    if (desc.vec_normalize && !vecNormalize) throw new TypeError("the policy takes normalised observations: give the archive's RLA_vec_normalize statistics");
    this.vecNormalize = desc.vec_normalize ? vecNormalize : null;
    this.nodes = desc.nodes;
    this.action = desc.action;
    this.recurrent = desc.recurrent ?? null;
  }

  /**
   * How many action-mask entries the head takes (RLA_policy §6: `argmax` one per action,
   * `multi_argmax` one per choice of every component), or null for heads that take no masks.
   * @returns {number|null}
   */
  get maskWidth() {
    if (this.action.op === 'argmax') return Number(this.actionSpace.n);
    if (this.action.op === 'multi_argmax') return this.action.sizes.reduce((a, n) => a + Number(n), 0);
    return null;
  }

  /**
   * The deterministic action for `observation` (one, or a batch with a leading dimension), and the next recurrent state.
   * Shaped like Stable-Baselines3's `predict`. An observation is an NDArray-like `{dtype, shape, data}`, a number (Discrete),
   * or nested arrays of numbers; a Dict observation an object (or Map) of those.
   * @returns {{action: {dtype: string, shape: number[], data: ArrayLike<number|bigint>}, state: {hidden: object, cell: object}|null}}
   */
  predict(observation, { state = null, episodeStart = null, actionMasks = null } = {}) {
    const { obs, single, n } = this._batch(observation);
    const values = this._preprocess(obs, n);
    if (this.recurrent !== null) Object.assign(values, this._stateIn(this.recurrent, state, episodeStart, n));
    for (const node of this.nodes) {
      const out = OPS[node.op](node, node.in.map((name) => values[name]));
      if (Array.isArray(node.out)) node.out.forEach((name, i) => (values[name] = out[i]));
      else values[node.out] = out;
    }
    const masks = actionMasks === null || actionMasks === undefined ? null : Uint8Array.from(flatten(actionMasks), (m) => (m ? 1 : 0));
    const action = HEADS[this.action.op](this.action, values[this.action.in], masks, this.actionSpace);
    action.shape = [n, ...obsShape(this.actionSpace)]; // SB3 gives actions the action space's shape
    if (single) action.shape = action.shape.slice(1);
    let next = null;
    if (this.recurrent !== null) {
      const h = values[this.recurrent.hidden_out];
      const c = values[this.recurrent.cell_out];
      next = { hidden: { dtype: 'F32', shape: h.shape, data: h.data }, cell: { dtype: 'F32', shape: c.shape, data: c.data } };
    }
    return { action, state: next };
  }

  _batch(observation) {
    const sp = this.observationSpace;
    if (sp.kind === 'dict') {
      const get = (k) => (observation instanceof Map ? observation.get(k) : observation?.[k]);
      const obs = {};
      let single = null;
      let n = null;
      for (const [key, sub] of sp.spaces) {
        if (get(key) === undefined) throw new TypeError(`the observation lacks the key ${JSON.stringify(key)}`);
        const b = asBatch(get(key), sub);
        single ??= b.single;
        n ??= b.n;
        if (b.single !== single || b.n !== n) throw new TypeError('the keys of a Dict observation differ in batch size');
        obs[key] = b;
      }
      return { obs, single, n };
    }
    const b = asBatch(observation, sp);
    return { obs: b, single: b.single, n: b.n };
  }

  _preprocess(obs, n) {
    const sp = this.observationSpace;
    const vn = this.vecNormalize;
    if (sp.kind === 'dict') {
      const out = {};
      for (const [key, sub] of sp.spaces) {
        const keys = vn && vn.norm_obs && vn.obs !== null ? vn.obs_keys ?? [] : [];
        const stats = keys.includes(key) ? vn.obs[key] : null;
        out[`obs.${key}`] = preprocessOne(obs[key], sub, this.normalizeImages, stats && { stats, vn }, n);
      }
      return out;
    }
    const stats = vn && vn.norm_obs && vn.obs !== null ? { stats: vn.obs, vn } : null;
    return { obs: preprocessOne(obs, sp, this.normalizeImages, stats, n) };
  }

  _stateIn(rec, state, episodeStart, n) {
    const L = num(rec.layers);
    const H = num(rec.hidden_size);
    const size = L * n * H;
    const h = new Float32Array(size);
    const c = new Float32Array(size);
    if (state) {
      const hs = flatten(state.hidden?.data ?? state.hidden);
      const cs = flatten(state.cell?.data ?? state.cell);
      if (hs.length !== size || cs.length !== size) throw new TypeError(`a state of ${hs.length} values for ${L} layers, ${n} observations and ${H} units`);
      h.set(hs);
      c.set(cs);
    }
    if (episodeStart !== null && episodeStart !== undefined) {
      const starts = flatten(episodeStart);
      if (starts.length !== n) throw new TypeError(`${starts.length} episode starts for ${n} observations`);
      for (let l = 0; l < L; l++) {
        for (let b = 0; b < n; b++) {
          if (starts[b]) {
            h.fill(0, (l * n + b) * H, (l * n + b + 1) * H);
            c.fill(0, (l * n + b) * H, (l * n + b + 1) * H);
          }
        }
      }
    }
    return { [rec.hidden_in]: { shape: [L, n, H], data: h }, [rec.cell_in]: { shape: [L, n, H], data: c } };
  }
}

/**
 * The actions for a sequence of single observations, in order (the conformance `predict` request):
 * a recurrent policy carries its state and resets it where `episodeStarts[i]` is true.
 */
export function act(policy, observations, { episodeStarts = null, actionMasks = null } = {}) {
  let state = null;
  return observations.map((obs, i) => {
    const r = policy.predict(obs, {
      state,
      episodeStart: episodeStarts ? [episodeStarts[i]] : null,
      actionMasks: actionMasks ? actionMasks[i] : null,
    });
    state = r.state;
    return r.action;
  });
}

// -- spaces ---------------------------------------------------------------------------------

/** Every element of nested arrays, typed arrays or an NDArray-like, as a flat array (a typed array is returned as it is). */
function flatten(v) {
  if (v === null || v === undefined) return [];
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return [v];
  if (ArrayBuffer.isView(v)) return v;
  if (Array.isArray(v)) return v.flatMap(flatten);
  if (v.data !== undefined) return flatten(v.data);
  if (v.value !== undefined && v.dtype !== undefined) return flatten(v.value); // a Scalar
  throw new TypeError(`not an array: ${typeof v}`);
}

function shapeOf(v) {
  if (v && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) && Array.isArray(v.shape)) return v.shape.map(num);
  if (Array.isArray(v)) return v.length === 0 ? [0] : [v.length, ...shapeOf(v[0])];
  if (ArrayBuffer.isView(v)) return [v.length];
  return [];
}

const IMAGES = new WeakMap();

/** SB3's is_image_space without the channel check: a U8 Box of rank 3 with bounds 0 and 255 (remembered per space). */
function isImage(space) {
  if (space.kind !== 'box' || space.shape.length !== 3 || space.low.dtype !== 'U8') return false;
  if (!IMAGES.has(space)) IMAGES.set(space, space.low.data.every((x) => x === 0) && space.high.data.every((x) => x === 255));
  return IMAGES.get(space);
}

function obsShape(space) {
  switch (space.kind) {
    case 'box': return space.shape.map(num);
    case 'discrete': return [];
    case 'multi_discrete': return space.nvec.shape.map(num);
    case 'multi_binary': return Array.isArray(space.n) ? space.n.map(num) : [num(space.n)];
    default: throw new TypeError(`no observation shape for a ${space.kind} space`);
  }
}

const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

/** {values (flat, C order), n, single}, transposing channel-last images as SB3 does. */
function asBatch(obs, space) {
  let shape = shapeOf(obs);
  let values = flatten(obs);
  const want = obsShape(space);
  if (isImage(space) && !sameShape(shape.slice(-3), want) && sameShape(shape.slice(-3), [want[1], want[2], want[0]])) {
    const [C, H, W] = want; // SB3's maybe_transpose: the env gives channel-last (H, W, C)
    const n = values.length / (C * H * W);
    const t = new Array(values.length);
    for (let b = 0; b < n; b++) {
      for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) for (let c = 0; c < C; c++) t[b * C * H * W + (c * H + y) * W + x] = values[b * C * H * W + (y * W + x) * C + c];
    }
    values = t;
    shape = [...shape.slice(0, -3), C, H, W];
  }
  if (sameShape(shape, want)) return { values, n: 1, single: true };
  if (shape.length === want.length + 1 && sameShape(shape.slice(1), want)) return { values, n: shape[0], single: false };
  throw new TypeError(`observation of shape [${shape}] for a space of shape [${want}]`);
}

/** Spec RLA_policy §4 (and RLA_vec_normalize §4 first when `norm` is given): a {shape, data} of float32. */
function preprocessOne(b, space, normalizeImages, norm, n) {
  let values = b.values instanceof BigInt64Array || b.values instanceof BigUint64Array || Array.isArray(b.values) ? Array.from(b.values, num) : b.values;
  if (norm) values = normalizeArray(values, norm.stats, num(norm.vn.epsilon), num(norm.vn.clip_obs));
  switch (space.kind) {
    case 'box': {
      const data = Float32Array.from(values);
      if (normalizeImages && isImage(space)) for (let i = 0; i < data.length; i++) data[i] = f32(data[i] / 255);
      return { shape: [n, ...obsShape(space)], data };
    }
    case 'discrete':
      return oneHot(values, [num(space.n)], n);
    case 'multi_discrete':
      return oneHot(values, Array.from(space.nvec.data, num), n);
    case 'multi_binary':
      return { shape: [n, ...obsShape(space)], data: Float32Array.from(values) };
    default:
      throw new TypeError(`no preprocessing for a ${space.kind} space`);
  }
}

/** The one-hot vectors of each component (sizes `nvec`), concatenated per observation. */
function oneHot(values, nvec, n) {
  const width = nvec.reduce((a, b) => a + b, 0);
  const data = new Float32Array(n * width);
  for (let b = 0; b < n; b++) {
    let offset = 0;
    nvec.forEach((size, k) => {
      const v = values[b * nvec.length + k];
      if (!Number.isInteger(v) || v < 0 || v >= size) throw new TypeError(`a discrete observation outside 0..${size - 1}`);
      data[b * width + offset + v] = 1;
      offset += size;
    });
  }
  return { shape: [n, width], data };
}

// -- operations (RLA_policy §5) -----------------------------------------------------------------

const weights = (nd) => nd.data;

/** sum over j < n of a[ai + j] * b[bi + j], in float64 with four partial sums (§5 lets sums associate in any order). */
function dot(a, ai, b, bi, n) {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < n; j += 4) {
    s0 += a[ai + j] * b[bi + j];
    s1 += a[ai + j + 1] * b[bi + j + 1];
    s2 += a[ai + j + 2] * b[bi + j + 2];
    s3 += a[ai + j + 3] * b[bi + j + 3];
  }
  for (; j < n; j++) s0 += a[ai + j] * b[bi + j];
  return s0 + s1 + (s2 + s3);
}

/**
 * out[r·O + o] = Σ_k a[r·K + k] · b[o·K + k] (a: R×K, b: O×K, row-major), each sum in binary64 and
 * rounded once to float32 by the Float32Array. Four rows by four columns at a time, so that each
 * loaded value serves four products.
 */
function gemm(a, R, b, O, K, out) {
  let r = 0;
  for (; r + 3 < R; r += 4) {
    const a0 = r * K, a1 = a0 + K, a2 = a1 + K, a3 = a2 + K;
    let o = 0;
    for (; o + 3 < O; o += 4) {
      const b0 = o * K, b1 = b0 + K, b2 = b1 + K, b3 = b2 + K;
      let s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
      let s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
      for (let k = 0; k < K; k++) {
        const x0 = a[a0 + k], x1 = a[a1 + k], x2 = a[a2 + k], x3 = a[a3 + k];
        const w0 = b[b0 + k], w1 = b[b1 + k], w2 = b[b2 + k], w3 = b[b3 + k];
        s00 += x0 * w0; s01 += x0 * w1; s02 += x0 * w2; s03 += x0 * w3;
        s10 += x1 * w0; s11 += x1 * w1; s12 += x1 * w2; s13 += x1 * w3;
        s20 += x2 * w0; s21 += x2 * w1; s22 += x2 * w2; s23 += x2 * w3;
        s30 += x3 * w0; s31 += x3 * w1; s32 += x3 * w2; s33 += x3 * w3;
      }
      const row = r * O + o;
      out[row] = s00; out[row + 1] = s01; out[row + 2] = s02; out[row + 3] = s03;
      out[row + O] = s10; out[row + O + 1] = s11; out[row + O + 2] = s12; out[row + O + 3] = s13;
      out[row + 2 * O] = s20; out[row + 2 * O + 1] = s21; out[row + 2 * O + 2] = s22; out[row + 2 * O + 3] = s23;
      out[row + 3 * O] = s30; out[row + 3 * O + 1] = s31; out[row + 3 * O + 2] = s32; out[row + 3 * O + 3] = s33;
    }
    for (; o < O; o++) for (let i = 0; i < 4; i++) out[(r + i) * O + o] = dot(a, (r + i) * K, b, o * K, K);
  }
  for (; r < R; r++) {
    let o = 0;
    for (; o + 3 < O; o += 4) {
      const a0 = r * K, b0 = o * K, b1 = b0 + K, b2 = b1 + K, b3 = b2 + K;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let k = 0; k < K; k++) {
        const x = a[a0 + k];
        s0 += x * b[b0 + k]; s1 += x * b[b1 + k]; s2 += x * b[b2 + k]; s3 += x * b[b3 + k];
      }
      out[r * O + o] = s0; out[r * O + o + 1] = s1; out[r * O + o + 2] = s2; out[r * O + o + 3] = s3;
    }
    for (; o < O; o++) out[r * O + o] = dot(a, r * K, b, o * K, K);
  }
}

/** Adds `bias` (length O) to every row of the R×O float32 matrix `m`, rounding each sum to float32. */
function addBias(m, O, bias) {
  for (let i = 0; i < m.length; i++) m[i] = f32(m[i] + bias[i % O]);
}

function linear(node, [x]) {
  const w = weights(node.weight);
  const [O, I] = node.weight.shape.map(num);
  const rows = x.data.length / I;
  const out = new Float32Array(rows * O);
  gemm(x.data, rows, w, O, I, out);
  if (node.bias) addBias(out, O, weights(node.bias));
  return { shape: [...x.shape.slice(0, -1), O], data: out };
}

function conv2d(node, [x]) {
  const w = weights(node.weight);
  const [O, C, KH, KW] = node.weight.shape.map(num);
  const [sh, sw] = node.stride.map(num);
  const [ph, pw] = node.padding.map(num);
  const [n, , H, W] = x.shape;
  const OH = Math.floor((H + 2 * ph - KH) / sh) + 1;
  const OW = Math.floor((W + 2 * pw - KW) / sw) + 1;
  const P = OH * OW;
  const K = C * KH * KW; // one patch, in the weights' (c, ky, kx) order, zero outside the image
  const cols = new Float32Array(P * K); // im2col: one patch per output position
  const prod = new Float32Array(P * O);
  const out = new Float32Array(n * O * P);
  const bias = node.bias ? weights(node.bias) : null;
  const xd = x.data;
  for (let b = 0; b < n; b++) {
    let k = 0;
    for (let oy = 0; oy < OH; oy++) {
      for (let ox = 0; ox < OW; ox++) {
        for (let c = 0; c < C; c++) {
          for (let ky = 0; ky < KH; ky++) {
            const iy = oy * sh + ky - ph;
            for (let kx = 0; kx < KW; kx++, k++) {
              const ix = ox * sw + kx - pw;
              cols[k] = iy < 0 || iy >= H || ix < 0 || ix >= W ? 0 : xd[((b * C + c) * H + iy) * W + ix];
            }
          }
        }
      }
    }
    gemm(cols, P, w, O, K, prod); // [P, O]
    for (let o = 0; o < O; o++) {
      const base = (b * O + o) * P;
      for (let p = 0; p < P; p++) out[base + p] = bias ? f32(prod[p * O + o] + bias[o]) : prod[p * O + o];
    }
  }
  return { shape: [n, O, OH, OW], data: out };
}

function activation(node, [x]) {
  const [fn, defaults] = ACTIVATIONS[node.fn];
  const p = {};
  for (const [k, d] of Object.entries(defaults)) p[k] = node[k] === undefined ? d : typeof d === 'string' ? node[k] : num(node[k]);
  return { shape: x.shape, data: x.data.map((v) => fn(v, p)) };
}

function flattenOp(node, [x]) {
  return { shape: [x.shape[0], x.data.length / x.shape[0]], data: x.data };
}

function concat(node, xs) {
  const n = xs[0].shape[0];
  const widths = xs.map((x) => x.data.length / n);
  const total = widths.reduce((a, b) => a + b, 0);
  const out = new Float32Array(n * total);
  for (let b = 0; b < n; b++) {
    let offset = 0;
    xs.forEach((x, k) => {
      out.set(x.data.subarray(b * widths[k], (b + 1) * widths[k]), b * total + offset);
      offset += widths[k];
    });
  }
  return { shape: [n, total], data: out };
}

/** `y * weight + bias` over the last dimension, each only when the node has it. */
function affine(node, y, N) {
  const w = node.weight ? weights(node.weight) : null;
  const bias = node.bias ? weights(node.bias) : null;
  for (let i = 0; i < y.length; i++) {
    if (w) y[i] = f32(y[i] * w[i % N]);
    if (bias) y[i] = f32(y[i] + bias[i % N]);
  }
  return y;
}

function layerNorm(node, [x]) {
  const N = x.shape[x.shape.length - 1];
  const eps = num(node.eps ?? 1e-5);
  const out = new Float32Array(x.data.length);
  for (let r = 0; r < x.data.length / N; r++) {
    let mean = 0;
    for (let i = 0; i < N; i++) mean += x.data[r * N + i];
    mean /= N;
    let v = 0;
    for (let i = 0; i < N; i++) v += (x.data[r * N + i] - mean) ** 2;
    v /= N;
    for (let i = 0; i < N; i++) out[r * N + i] = (x.data[r * N + i] - mean) / Math.sqrt(v + eps);
  }
  return { shape: x.shape, data: affine(node, out, N) };
}

function batchNorm(node, [x]) {
  const N = x.shape[x.shape.length - 1];
  const mean = weights(node.running_mean);
  const variance = weights(node.running_var);
  const eps = f32(num(node.eps ?? 1e-5));
  const out = x.data.map((v, i) => f32(v - mean[i % N]) / Math.sqrt(f32(variance[i % N] + eps)));
  return { shape: x.shape, data: affine(node, out, N) };
}

/** One step of a (multi-layer) LSTM: in = [x, hidden, cell], out = [output, hidden, cell]. */
function lstm(node, [x, h, c]) {
  const [L, n, H] = h.shape;
  const hOut = new Float32Array(h.data.length);
  const cOut = new Float32Array(c.data.length);
  let input = x;
  node.layers.forEach((p, l) => {
    const I = input.data.length / n;
    const wih = weights(p.weight_ih);
    const whh = weights(p.weight_hh);
    const bih = weights(p.bias_ih);
    const bhh = weights(p.bias_hh);
    const next = new Float32Array(n * H);
    for (let b = 0; b < n; b++) {
      const gates = new Float32Array(4 * H);
      for (let g = 0; g < 4 * H; g++) {
        gates[g] = bih[g] + bhh[g] + dot(input.data, b * I, wih, g * I, I) + dot(h.data, (l * n + b) * H, whh, g * H, H);
      }
      for (let k = 0; k < H; k++) {
        const i = f32(sigmoid(gates[k]));
        const f = f32(sigmoid(gates[H + k]));
        const gg = f32(Math.tanh(gates[2 * H + k]));
        const o = f32(sigmoid(gates[3 * H + k]));
        const cNew = f32(f * c.data[(l * n + b) * H + k] + i * gg);
        const hNew = f32(o * Math.tanh(cNew));
        cOut[(l * n + b) * H + k] = cNew;
        hOut[(l * n + b) * H + k] = hNew;
        next[b * H + k] = hNew;
      }
    }
    input = { shape: [n, H], data: next };
  });
  return [input, { shape: [L, n, H], data: hOut }, { shape: [L, n, H], data: cOut }];
}

const OPS = Object.freeze({
  linear,
  conv2d,
  activation,
  flatten: flattenOp,
  concat,
  layer_norm: layerNorm,
  batch_norm: batchNorm,
  lstm,
});

// -- heads (RLA_policy §6) ------------------------------------------------------------------------

/**
 * The index of the largest of `width` values from `start` (the first on ties), masked-out entries
 * counting as -1e8; a NaN is larger than every number, so the first NaN wins (RLA_policy §6).
 */
function argmaxRow(data, start, width, masks) {
  let best = 0;
  let bestValue = -Infinity;
  for (let k = 0; k < width; k++) {
    const v = masks && !masks[start + k] ? -1e8 : data[start + k];
    if (Number.isNaN(v)) return k;
    if (v > bestValue) {
      bestValue = v;
      best = k;
    }
  }
  return best;
}

function checkMasks(masks, length) {
  if (masks && masks.length !== length) throw new TypeError(`action masks of ${masks.length} values for ${length}`);
}

function argmax(head, x, masks) {
  const n = x.shape[0];
  const width = x.data.length / n;
  checkMasks(masks, x.data.length);
  const data = new BigInt64Array(n);
  for (let b = 0; b < n; b++) data[b] = BigInt(argmaxRow(x.data, b * width, width, masks));
  return { dtype: 'I64', shape: [n], data };
}

function multiArgmax(head, x, masks) {
  const n = x.shape[0];
  const width = x.data.length / n;
  const sizes = head.sizes.map(num);
  checkMasks(masks, x.data.length);
  const data = new BigInt64Array(n * sizes.length);
  for (let b = 0; b < n; b++) {
    let offset = 0;
    sizes.forEach((size, k) => {
      data[b * sizes.length + k] = BigInt(argmaxRow(x.data, b * width + offset, size, masks));
      offset += size;
    });
  }
  return { dtype: 'I64', shape: [n, sizes.length], data };
}

function bernoulli(head, x) {
  return { dtype: 'F32', shape: x.shape, data: x.data.map((v) => (f32(sigmoid(v)) > 0.5 ? 1 : 0)) };
}

const FLOAT_ARRAYS = { F32: Float32Array, F64: Float64Array };

function box(head, x, masks, space) {
  const low = space.low.data;
  const high = space.high.data;
  const N = low.length;
  const Out = FLOAT_ARRAYS[space.dtype] ?? Float32Array;
  const data = new Out(x.data.length);
  for (let i = 0; i < x.data.length; i++) {
    let a = x.data[i];
    const lo = f32(low[i % N]);
    const hi = f32(high[i % N]);
    if (head.squash === 'tanh') a = f32(Math.tanh(a));
    if (head.squash === 'tanh' || head.squash === 'rescale') a = f32(lo + f32(f32(0.5 * f32(a + 1)) * f32(hi - lo)));
    else a = Math.min(Math.max(a, lo), hi);
    data[i] = a;
  }
  return { dtype: FLOAT_ARRAYS[space.dtype] ? space.dtype : 'F32', shape: x.shape, data };
}

function quantileArgmax(head, x) {
  const n = x.shape[0];
  const nq = num(head.n_quantiles);
  const width = x.data.length / n / nq;
  const means = new Float32Array(n * width);
  for (let b = 0; b < n; b++) {
    for (let a = 0; a < width; a++) {
      let s = 0;
      for (let q = 0; q < nq; q++) s += x.data[(b * nq + q) * width + a];
      means[b * width + a] = s / nq;
    }
  }
  return argmax(head, { shape: [n, width], data: means }, null);
}

const HEADS = Object.freeze({
  argmax,
  multi_argmax: multiArgmax,
  bernoulli,
  box,
  quantile_argmax: quantileArgmax,
});
