// The portable policy (extension RLA_policy): act on observations with plain
// JavaScript (the sums of linear and conv2d in gemm.js: a WebAssembly SIMD
// kernel where the runtime has it, the same bits in JavaScript otherwise); the
// twin of python/rlarchive/extensions/policy/evaluator.py, organised the same way (the Policy
// class, operations, heads; the activations in activations.js).
//
// A Policy takes a description checked by description.js and decoded
// by decode.js (plain objects, Space objects, NDArray objects whose data is
// loaded). Values are {shape, data} with the batch first and data a
// Float32Array; every operation rounds its results to float32 (RLA_policy §5).

import { fail } from '../../errors.js';
import { normalizeArray } from '../vec_normalize/index.js';
import { BERNOULLI_THRESHOLD, HEADS as HEAD_TABLE, MASKED_LOGIT, OPERATIONS, implementations } from './ops.js';
import { ACTIVATIONS, sigmoid } from './activations.js';
import { batch, flatValues, observationShape, preprocess } from './observations.js';
import { dot, Matmul } from './gemm.js';

/** @typedef {import('./observations.js').PolicySpace} PolicySpace */
/** @typedef {import('../../../index.js').Space} Space */
/** @typedef {import('./observations.js').Tensor} Tensor */
/** @typedef {import('./observations.js').Batch} Batch */
/** @typedef {import('../../../index.js').VecNormalizeStatistics} VecNormalizeStatistics */
/** @typedef {import('../../../index.js').VecNormalizeStats} VecNormalizeStats */
/** @typedef {import('../../../index.js').RecurrentState} RecurrentState */
/**
 * A loaded F32 ndarray parameter of a node (an NDArray whose data is loaded).
 * @typedef {{dtype: string, shape: (number | bigint)[], data: Float32Array}} Weights
 */
/**
 * A node of the checked description (RLA_policy §5): op, the names it reads and computes, its parameters.
 * @typedef {{op: string, in: string[], out: string | string[]}} Node
 */
/** @typedef {Node & {weight: Weights, bias: Weights | null}} LinearNode */
/** @typedef {LinearNode & {stride: (number | bigint)[], padding: (number | bigint)[]}} Conv2dNode */
/** @typedef {Node & {fn: string, [parameter: string]: unknown}} ActivationNode */
/** @typedef {Node & {weight: Weights}} PreluNode */
/** @typedef {Node & {weight: Weights | null, bias: Weights | null, eps: number | bigint}} LayerNormNode */
/** @typedef {LayerNormNode & {running_mean: Weights, running_var: Weights}} BatchNormNode */
/** @typedef {{weight_ih: Weights, weight_hh: Weights, bias_ih: Weights, bias_hh: Weights}} LstmLayer */
/** @typedef {Node & {layers: LstmLayer[]}} LstmNode */
/**
 * A node prepared once per Policy: its outputs from its inputs (an lstm: three of each).
 * @typedef {(xs: Tensor[]) => Tensor | Tensor[]} Step
 */
/**
 * The action head of the checked description (RLA_policy §6): op, the name it reads, its parameters.
 * @typedef {{op: string, in: string, sizes?: (number | bigint)[], n_quantiles?: number | bigint, squash?: string}} Head
 */
/**
 * The 'recurrent' member of the checked description (RLA_policy §5.9), decoded (integers are numbers).
 * @typedef {{hidden_in: string, cell_in: string, hidden_out: string, cell_out: string, layers: number,
 *   hidden_size: number}} Recurrent
 */
/**
 * The checked description, decoded (RLA_policy §3).
 * @typedef {{observation_space: Space, action_space: Space, normalize_images?: boolean,
 *   vec_normalize?: boolean, nodes: Node[], action: Head, recurrent?: Recurrent | null}} Description
 */
/**
 * An action (or a recurrent state) as predict gives it.
 * @typedef {{dtype: string, shape: number[], data: Float32Array | Float64Array | BigInt64Array}} Action
 */
/**
 * A head: the actions for the values it reads (`masks`: the action masks, or null).
 * @typedef {(head: Head, x: Tensor, masks: Uint8Array | null, space: Space) => Action} HeadFunction
 */

const f32 = Math.fround;

export { ACTIVATIONS };

// -- the policy ---------------------------------------------------------------------------

/**
 * @param {number | bigint} v
 * @returns {number}
 */
const num = (v) => (typeof v === 'bigint' ? Number(v) : v);
/** @param {number[]} shape */
const prod = (shape) => shape.reduce((a, b) => a * b, 1);

/** A policy description, ready to act (open it with `await archive.policy()`). */
export class Policy {
  /**
   * @param {object} desc the decoded description (the value under `policy`), checked, every NDArray loaded
   * @param {{vecNormalize?: VecNormalizeStatistics|null}} [options] the archive's RLA_vec_normalize statistics (decoded), needed when `desc.vec_normalize`
   */
  constructor(desc, { vecNormalize = null } = {}) {
    const d = /** @type {Description} */ (desc);
    this.desc = desc;
    this.observationSpace = d.observation_space;
    this.actionSpace = d.action_space;
    this.normalizeImages = d.normalize_images !== false;
    if (d.vec_normalize && !vecNormalize)
      throw new TypeError("the policy takes normalised observations: give the archive's RLA_vec_normalize statistics");
    this.vecNormalize = d.vec_normalize ? /** @type {VecNormalizeStatistics} */ (vecNormalize) : null;
    this.nodes = d.nodes;
    this.action = d.action;
    this.recurrent = d.recurrent ?? null;
    this._steps = this.nodes.map((node) => PREPARE[node.op](node));
    // values are dropped after their last reader (the head's input and the recurrent outputs are kept)
    this._keep = new Set([this.action.in]);
    if (this.recurrent !== null) {
      this._keep.add(this.recurrent.hidden_out);
      this._keep.add(this.recurrent.cell_out);
    }
    /** @type {Map<string, number>} */
    this._last = new Map();
    this.nodes.forEach((node, i) => node.in.forEach((name) => this._last.set(name, i)));
    for (const name of this._keep) this._last.set(name, this.nodes.length);
  }

  /**
   * How many action-mask entries the head takes (RLA_policy §6: `argmax` one per action,
   * `multi_argmax` one per choice of every component), or null for heads that take no masks.
   * @returns {number|null}
   */
  get maskWidth() {
    if (this.action.op === 'argmax') return Number(this.actionSpace.n);
    if (this.action.op === 'multi_argmax')
      return /** @type {(number | bigint)[]} */ (this.action.sizes).reduce(
        (/** @type {number} */ a, n) => a + Number(n),
        0,
      );
    return null;
  }

  /**
   * The deterministic action for `observation` (one, or a batch with a leading dimension), and the next recurrent state.
   * Shaped like Stable-Baselines3's `predict`. An observation is an NDArray-like `{dtype, shape, data}`, a number (Discrete),
   * or nested arrays of numbers; a Dict observation an object (or Map) of those. Observations, states and masks that do not
   * fit are a TypeError.
   * @param {unknown} observation
   * @param {{state?: RecurrentState | null, episodeStart?: unknown, actionMasks?: unknown}} [options]
   * @returns {{action: Action, state: {hidden: Action, cell: Action}|null}} (the state is a RecurrentState)
   */
  predict(observation, { state = null, episodeStart = null, actionMasks = null } = {}) {
    const { obs, single, n } = batch(observation, this.observationSpace);
    const values = new Map(Object.entries(this._preprocess(obs, n)));
    if (this.recurrent !== null)
      for (const [k, v] of Object.entries(this._stateIn(this.recurrent, state, episodeStart, n))) values.set(k, v);
    /** @type {Uint8Array | null} */
    let masks = null;
    if (actionMasks !== null && actionMasks !== undefined) {
      masks = Uint8Array.from(flatValues(actionMasks), (m) => (m ? 1 : 0));
      if (masks.length !== n * (this.maskWidth ?? -1))
        throw new TypeError(
          `action masks of ${masks.length} values for ${n} observations and ${this.maskWidth} actions`,
        );
    }
    const last = this._last;
    for (const name of [...values.keys()]) if ((last.get(name) ?? -1) < 0) values.delete(name); // an input nothing reads
    this.nodes.forEach((node, i) => {
      const out = this._steps[i](node.in.map((name) => /** @type {Tensor} */ (values.get(name))));
      for (const name of node.in) if (last.get(name) === i && !this._keep.has(name)) values.delete(name);
      const names = Array.isArray(node.out) ? node.out : [node.out];
      const outs = /** @type {Tensor[]} */ (Array.isArray(node.out) ? out : [out]);
      names.forEach((name, k) => {
        if ((last.get(name) ?? -1) > i) values.set(name, outs[k]);
      });
    });
    const action = HEADS[this.action.op](
      this.action,
      /** @type {Tensor} */ (values.get(this.action.in)),
      masks,
      this.actionSpace,
    );
    action.shape = [n, ...observationShape(this.actionSpace)]; // SB3 gives actions the action space's shape
    if (single) action.shape = action.shape.slice(1);
    let next = null;
    if (this.recurrent !== null) {
      const h = /** @type {Tensor} */ (values.get(this.recurrent.hidden_out));
      const c = /** @type {Tensor} */ (values.get(this.recurrent.cell_out));
      next = {
        hidden: { dtype: 'F32', shape: h.shape, data: h.data },
        cell: { dtype: 'F32', shape: c.shape, data: c.data },
      };
    }
    return { action, state: next };
  }

  /**
   * The observation as a batch ({obs, single, n}; for a Dict space `obs` maps each key to its batch).
   * @param {unknown} observation
   */
  _batch(observation) {
    return batch(observation, this.observationSpace);
  }

  /**
   * The network's inputs by name (RLA_policy §4), normalised first where the description says so.
   * @param {Batch | Record<string, Batch>} obs
   * @param {number} n
   * @returns {Record<string, Tensor>}
   */
  _preprocess(obs, n) {
    const sp = this.observationSpace;
    const vn = this.vecNormalize;
    /** @type {(b: Batch, stats: VecNormalizeStats | null) => {values: ArrayLike<number | bigint | boolean>, n: number}} */
    const normalise = (b, stats) =>
      stats
        ? {
            values: normalizeArray(
              Array.from(/** @type {ArrayLike<number | bigint>} */ (b.values), num),
              /** @type {{mean: {data: Float64Array}, var: {data: Float64Array}}} */ (stats), // loaded (vecNormalize)
              num(/** @type {VecNormalizeStatistics} */ (vn).epsilon),
              num(/** @type {VecNormalizeStatistics} */ (vn).clip_obs),
            ),
            n: b.n,
          }
        : b;
    if (sp.kind === 'dict') {
      /** @type {Record<string, Tensor>} */
      const out = {};
      const keys = vn?.norm_obs && vn.obs !== null ? (vn.obs_keys ?? []) : [];
      const perKey = /** @type {Record<string, VecNormalizeStats>} */ (vn?.obs);
      for (const [key, sub] of /** @type {PolicySpace} */ (sp).spaces) {
        const stats = keys.includes(key) ? perKey[key] : null;
        out[`obs.${key}`] = preprocess(
          normalise(/** @type {Record<string, Batch>} */ (obs)[key], stats),
          sub,
          this.normalizeImages,
        );
      }
      return out;
    }
    const stats = vn?.norm_obs && vn.obs !== null ? /** @type {VecNormalizeStats} */ (vn.obs) : null;
    return { obs: preprocess(normalise(/** @type {Batch} */ (obs), stats), sp, this.normalizeImages) };
  }

  /**
   * The recurrent state the lstm reads, by name: the one given (zeros where there is none), reset where an episode starts.
   * @param {Recurrent} rec
   * @param {{hidden: unknown, cell: unknown} | null | undefined} state
   * @param {unknown} episodeStart
   * @param {number} n
   * @returns {Record<string, Tensor>}
   */
  _stateIn(rec, state, episodeStart, n) {
    const L = num(rec.layers);
    const H = num(rec.hidden_size);
    const size = L * n * H;
    const h = new Float32Array(size);
    const c = new Float32Array(size);
    if (state) {
      const hidden = /** @type {{data?: unknown} | null | undefined} */ (state.hidden);
      const cell = /** @type {{data?: unknown} | null | undefined} */ (state.cell);
      const hs = /** @type {ArrayLike<number | bigint>} */ (flatValues(hidden?.data ?? hidden));
      const cs = /** @type {ArrayLike<number | bigint>} */ (flatValues(cell?.data ?? cell));
      if (hs.length !== size || cs.length !== size)
        throw new TypeError(`a state of ${hs.length} values for ${L} layers, ${n} observations and ${H} units`);
      h.set(Array.from(hs, num));
      c.set(Array.from(cs, num));
    }
    if (episodeStart !== null && episodeStart !== undefined) {
      const starts = flatValues(episodeStart);
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
 * The actions for a sequence of observations (each one or a batch, as predict takes it), in order (the
 * conformance `predict` request): a recurrent policy carries its state and resets it where
 * `episodeStarts[i]` is true. An observation, episode start or mask that does not fit the policy
 * (RLA_policy §4) is the RlarchiveError INPUT_INVALID, naming its index.
 * @param {Policy} policy
 * @param {unknown[]} observations
 * @param {{episodeStarts?: ArrayLike<unknown> | null, actionMasks?: ArrayLike<unknown> | null}} [options]
 * @returns {Action[]}
 */
export function act(policy, observations, { episodeStarts = null, actionMasks = null } = {}) {
  /** @type {{hidden: Action, cell: Action} | null} */
  let state = null;
  return observations.map((obs, i) => {
    let r;
    try {
      r = policy.predict(obs, {
        state,
        episodeStart: episodeStarts ? [episodeStarts[i]] : null,
        actionMasks: actionMasks ? actionMasks[i] : null,
      });
    } catch (e) {
      // what predict throws for input that does not fit
      if (e instanceof TypeError || e instanceof RangeError)
        throw fail('INPUT_INVALID', `observation ${i}: ${e.message}`);
      throw e;
    }
    state = r.state;
    return r.action;
  });
}

// -- operations (RLA_policy §5): each prepared once per Policy -----------------------------------
//
// A sum (linear, conv2d, the LSTM gates) is accumulated in binary64, where the product of two float32
// values is exact, and rounded once to float32 (RLA_policy §5); so are the normalisations.

const weights = (/** @type {Weights} */ nd) => nd.data;

/**
 * @param {LinearNode} node
 * @returns {Step}
 */
function linear(node) {
  const [O, I] = node.weight.shape.map(num);
  const mm = new Matmul(weights(node.weight), O, I, node.bias ? weights(node.bias) : null);
  return ([x]) => {
    const rows = prod(x.shape.slice(0, -1));
    const out = new Float32Array(rows * O);
    for (let r = 0; r < rows; r += mm.blockRows) {
      const n = Math.min(mm.blockRows, rows - r);
      mm.run(x.data.subarray(r * I, (r + n) * I), n, out, r * O, O, 1); // an empty sum (I = 0) gives the bias
    }
    return { shape: [...x.shape.slice(0, -1), O], data: out };
  };
}

/**
 * A convolution with fewer than four output channels, without im2col (a patch serves too few
 * products for the blocked GEMM to pay): each sum in binary64 from the bias, rounded once.
 * @param {Float32Array} xd
 * @param {number} n
 * @param {number} C
 * @param {number} H
 * @param {number} W
 * @param {Float32Array} w
 * @param {number} O
 * @param {number} KH
 * @param {number} KW
 * @param {number} sh
 * @param {number} sw
 * @param {number} ph
 * @param {number} pw
 * @param {number} OH
 * @param {number} OW
 * @param {Float32Array | null} bias
 * @param {Float32Array} out
 * @returns {Float32Array}
 */
function directConv(xd, n, C, H, W, w, O, KH, KW, sh, sw, ph, pw, OH, OW, bias, out) {
  for (let b = 0; b < n; b++) {
    for (let o = 0; o < O; o++) {
      const base = (b * O + o) * OH * OW;
      for (let oy = 0; oy < OH; oy++) {
        const ky0 = Math.max(0, ph - oy * sh);
        const ky1 = Math.min(KH, H + ph - oy * sh);
        for (let ox = 0; ox < OW; ox++) {
          const kx0 = Math.max(0, pw - ox * sw);
          const kx1 = Math.min(KW, W + pw - ox * sw);
          let s = bias ? bias[o] : 0;
          for (let c = 0; c < C; c++) {
            for (let ky = ky0; ky < ky1; ky++) {
              const xi = ((b * C + c) * H + oy * sh + ky - ph) * W + ox * sw - pw;
              const wi = ((o * C + c) * KH + ky) * KW;
              for (let kx = kx0; kx < kx1; kx++) s += xd[xi + kx] * w[wi + kx];
            }
          }
          out[base + oy * OW + ox] = s;
        }
      }
    }
  }
  return out;
}

/**
 * @param {Conv2dNode} node
 * @returns {Step}
 */
function conv2d(node) {
  const w = weights(node.weight);
  const [O, C, KH, KW] = node.weight.shape.map(num);
  const [sh, sw] = node.stride.map(num);
  const [ph, pw] = node.padding.map(num);
  const bias = node.bias ? weights(node.bias) : null;
  const K = C * KH * KW; // one patch, in the weights' (c, ky, kx) order, zero outside the image
  const mm = O < 4 ? null : new Matmul(w, O, K, bias);
  return ([x]) => {
    const [n, , H, W] = x.shape;
    const OH = Math.floor((H + 2 * ph - KH) / sh) + 1;
    const OW = Math.floor((W + 2 * pw - KW) / sw) + 1;
    const P = OH * OW;
    const out = new Float32Array(n * O * P);
    const xd = x.data;
    if (mm === null)
      return {
        shape: [n, O, OH, OW],
        data: directConv(xd, n, C, H, W, w, O, KH, KW, sh, sw, ph, pw, OH, OW, bias, out),
      };
    const B = Math.max(1, Math.min(P, mm.blockRows)); // output positions per block
    const dims = [C, H, W, KH, KW, sh, sw, ph, pw, OW];
    for (let b = 0; b < n; b++) {
      for (let p0 = 0; p0 < P; p0 += B) {
        const pb = Math.min(B, P - p0);
        mm.runPatches(xd, b, dims, p0, pb, out, b * O * P + p0, 1, P); // im2col of the block: out[b][o][p0 + p]
      }
    }
    return { shape: [n, O, OH, OW], data: out };
  };
}

/**
 * @param {ActivationNode} node
 * @returns {Step}
 */
function activation(node) {
  const [fn, defaults] = ACTIVATIONS[node.fn];
  /** @type {Record<string, number | string>} */
  const p = {};
  for (const [k, d] of Object.entries(defaults))
    p[k] =
      node[k] === undefined
        ? d
        : typeof d === 'string'
          ? /** @type {string} */ (node[k])
          : num(/** @type {number | bigint} */ (node[k]));
  if (node.fn === 'relu') {
    // relu written out, the most common function: on the float32 bits, without a branch on the sign (which the
    // processor would mispredict for every other value): a negative number (the sign bit set, the magnitude's bits
    // at most those of infinity) becomes +0; positive numbers, zeros and NaN stay as they are
    return ([x]) => {
      const d = x.data;
      const data = new Float32Array(d.length);
      const bits = new Int32Array(d.buffer, d.byteOffset, d.length);
      const out = new Int32Array(data.buffer);
      for (let i = 0; i < bits.length; i++) {
        const b = bits[i];
        out[i] = b & ~((b >> 31) & (((b & 0x7fffffff) - 0x7f800001) >> 31));
      }
      return { shape: x.shape, data };
    };
  }
  return ([x]) => {
    const d = x.data;
    const data = new Float32Array(d.length);
    for (let i = 0; i < d.length; i++) data[i] = fn(d[i], p); // the Float32Array rounds once
    return { shape: x.shape, data };
  };
}

/**
 * @param {PreluNode} node
 * @returns {Step}
 */
function prelu(node) {
  const slopes = weights(node.weight);
  return ([x]) => {
    const C = x.shape.length > 1 ? x.shape[1] : 1;
    const inner = prod(x.shape.slice(2));
    const data = new Float32Array(x.data.length);
    for (let i = 0; i < data.length; i++) {
      const v = x.data[i];
      data[i] = v >= 0 ? v : v * slopes[slopes.length === 1 ? 0 : Math.floor(i / inner) % C]; // NaN: NaN times the slope
    }
    return { shape: x.shape, data };
  };
}

/** @returns {Step} */
function flattenOp() {
  return ([x]) => ({ shape: [x.shape[0], prod(x.shape.slice(1))], data: x.data });
}

/** @returns {Step} */
function concat() {
  return (xs) => {
    const n = xs[0].shape[0];
    const widths = xs.map((x) => prod(x.shape.slice(1)));
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
  };
}

/**
 * @param {LayerNormNode} node
 * @returns {Step}
 */
function layerNorm(node) {
  const w = node.weight ? weights(node.weight) : null;
  const bias = node.bias ? weights(node.bias) : null;
  const eps = num(node.eps);
  return ([x]) => {
    const N = x.shape[x.shape.length - 1];
    const out = new Float32Array(x.data.length);
    const rows = N === 0 ? 0 : x.data.length / N;
    for (let r = 0; r < rows; r++) {
      let mean = 0;
      for (let i = 0; i < N; i++) mean += x.data[r * N + i];
      mean /= N;
      let v = 0;
      for (let i = 0; i < N; i++) v += (x.data[r * N + i] - mean) ** 2;
      const inv = Math.sqrt(v / N + eps);
      for (let i = 0; i < N; i++) {
        let y = (x.data[r * N + i] - mean) / inv;
        if (w) y *= w[i];
        if (bias) y += bias[i];
        out[r * N + i] = y;
      }
    }
    return { shape: x.shape, data: out };
  };
}

/**
 * @param {BatchNormNode} node
 * @returns {Step}
 */
function batchNorm(node) {
  const mean = weights(node.running_mean);
  const variance = weights(node.running_var);
  const w = node.weight ? weights(node.weight) : null;
  const bias = node.bias ? weights(node.bias) : null;
  const eps = num(node.eps);
  const inv = Array.from(variance, (v) => 1 / Math.sqrt(v + eps)); // a negative running variance gives NaN
  return ([x]) => {
    const N = x.shape[x.shape.length - 1];
    const out = new Float32Array(x.data.length);
    for (let i = 0; i < out.length; i++) {
      const j = i % N;
      let y = (x.data[i] - mean[j]) * inv[j];
      if (w) y *= w[j];
      if (bias) y += bias[j];
      out[i] = y;
    }
    return { shape: x.shape, data: out };
  };
}

/**
 * One step of a (multi-layer) LSTM: in = [x, hidden, cell], out = [output, hidden, cell].
 * @param {LstmNode} node
 * @returns {Step}
 */
function lstm(node) {
  return ([x, h, c]) => {
    const [L, n, H] = h.shape;
    const hOut = new Float32Array(h.data.length);
    const cOut = new Float32Array(c.data.length);
    let input = x;
    node.layers.forEach((p, l) => {
      const I = prod(input.shape.slice(1));
      const wih = weights(p.weight_ih);
      const whh = weights(p.weight_hh);
      const bih = weights(p.bias_ih);
      const bhh = weights(p.bias_hh);
      const next = new Float32Array(n * H);
      const gates = new Float32Array(4 * H);
      for (let b = 0; b < n; b++) {
        for (let g = 0; g < 4 * H; g++) {
          gates[g] =
            dot(input.data, b * I, wih, g * I, I) + bih[g] + dot(h.data, (l * n + b) * H, whh, g * H, H) + bhh[g];
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
  };
}

const PREPARE = implementations(
  OPERATIONS,
  /** @type {Record<string, (node: Node) => Step>} */ (
    /** @type {unknown} */ ({
      linear,
      conv2d,
      activation,
      prelu,
      flatten: flattenOp,
      concat,
      layer_norm: layerNorm,
      batch_norm: batchNorm,
      lstm,
    })
  ),
  'operations of the JavaScript evaluator',
);

// -- heads (RLA_policy §6) ------------------------------------------------------------------------

/**
 * The index of the largest of `width` values from `start` (the first on ties), masked-out entries
 * counting as -1e8; a NaN is larger than every number, so the first NaN wins (RLA_policy §6).
 * @param {Float32Array} data
 * @param {number} start
 * @param {number} width
 * @param {Uint8Array | null} masks
 * @returns {number}
 */
function argmaxRow(data, start, width, masks) {
  let best = 0;
  let bestValue = -Infinity;
  for (let k = 0; k < width; k++) {
    const v = masks && !masks[start + k] ? MASKED_LOGIT : data[start + k];
    if (Number.isNaN(v)) return k;
    if (v > bestValue) {
      bestValue = v;
      best = k;
    }
  }
  return best;
}

/**
 * @param {Uint8Array | null} masks
 * @param {number} length
 */
function checkMasks(masks, length) {
  if (masks && masks.length !== length) throw new TypeError(`action masks of ${masks.length} values for ${length}`);
}

/**
 * @param {Head} head
 * @param {Tensor} x
 * @param {Uint8Array | null} masks
 * @returns {Action}
 */
function argmax(head, x, masks) {
  const n = x.shape[0];
  const width = prod(x.shape.slice(1));
  checkMasks(masks, x.data.length);
  const data = new BigInt64Array(n);
  for (let b = 0; b < n; b++) data[b] = BigInt(argmaxRow(x.data, b * width, width, masks));
  return { dtype: 'I64', shape: [n], data };
}

/** @type {HeadFunction} */
function multiArgmax(head, x, masks) {
  const n = x.shape[0];
  const width = prod(x.shape.slice(1));
  const sizes = /** @type {(number | bigint)[]} */ (head.sizes).map(num);
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

/**
 * The bernoulli head gives 1.0 exactly for the float32 logits above 3·2^-25 (RLA_policy §6; the registry's
 * BERNOULLI_THRESHOLD): SB3's mode, torch.round(torch.sigmoid(x)) in float32, is 1 there and 0 elsewhere
 * (PyTorch's float32 sigmoid is 0.5 up to it).
 */
export { BERNOULLI_THRESHOLD };

/** @type {HeadFunction} */
function bernoulli(head, x) {
  return { dtype: 'F32', shape: x.shape, data: x.data.map((v) => (v > BERNOULLI_THRESHOLD ? 1 : 0)) }; // NaN gives 0
}

/** @type {Record<string, Float32ArrayConstructor | Float64ArrayConstructor>} */
const FLOAT_ARRAYS = { F32: Float32Array, F64: Float64Array };

/** @type {HeadFunction} */
function box(head, x, masks, space) {
  const sp = /** @type {PolicySpace} */ (space);
  const low = /** @type {Float32Array | Float64Array} */ (sp.low.data); // an F32 or F64 box (RLA_policy §6)
  const high = /** @type {Float32Array | Float64Array} */ (sp.high.data);
  const N = low.length;
  const dtype = /** @type {string} */ (sp.dtype);
  const Out = FLOAT_ARRAYS[dtype] ?? Float32Array;
  const data = new Out(x.data.length);
  for (let i = 0; i < x.data.length; i++) {
    let a = x.data[i];
    const lo = f32(low[i % N]);
    const hi = f32(high[i % N]);
    if (head.squash === 'tanh') a = f32(Math.tanh(a));
    if (head.squash === 'tanh' || head.squash === 'rescale')
      a = f32(lo + 0.5 * (a + 1) * (hi - lo)); // binary64, rounded once
    else a = Math.min(Math.max(a, lo), hi); // NaN stays NaN
    data[i] = a;
  }
  return { dtype: FLOAT_ARRAYS[dtype] ? dtype : 'F32', shape: x.shape, data };
}

/** @type {HeadFunction} */
function quantileArgmax(head, x) {
  const n = x.shape[0];
  const nq = num(/** @type {number | bigint} */ (head.n_quantiles));
  const width = prod(x.shape.slice(1)) / nq;
  const means = new Float32Array(n * width);
  for (let b = 0; b < n; b++) {
    for (let a = 0; a < width; a++) {
      let s = 0;
      for (let q = 0; q < nq; q++) s += x.data[(b * nq + q) * width + a];
      means[b * width + a] = s / nq; // the sum in binary64, rounded once
    }
  }
  return argmax(head, { shape: [n, width], data: means }, null);
}

const HEADS = implementations(
  HEAD_TABLE,
  /** @type {Record<string, HeadFunction>} */ ({
    argmax,
    multi_argmax: multiArgmax,
    bernoulli,
    box,
    quantile_argmax: quantileArgmax,
  }),
  'heads of the JavaScript evaluator',
);
