// The activation functions of the portable policy (extension RLA_policy §5.5)
// and erf; the twin of python/rlarchive/extensions/policy/activations.py. Each function
// takes and gives one number in binary64 (the caller rounds to float32). Which
// functions exist, their parameters and defaults come from the registry
// (ops.js); FUNCTIONS fails at import when an implementation is missing
// or extra.

import { ACTIVATION_DEFAULTS, ACTIVATIONS as REGISTRY, implementations } from './ops.js';

const f32 = Math.fround;

/**
 * The parameters of an activation node by name: numbers, and the strings of the enum ones (gelu's approximate).
 * @typedef {Readonly<Record<string, number | string>>} Parameters
 */
/**
 * An activation function in binary64: of x and the node's parameters (each function reads its own).
 * @typedef {(x: number, p: Parameters) => number} ActivationFunction
 */

/**
 * erf(x) to about 1e-15 relative: Taylor series near 0, a continued fraction for erfc beyond.
 * @param {number} x
 * @returns {number}
 */
export function erf(x) {
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
  for (let k = 60; k >= 1; k--) frac = k / 2 / (ax + frac);
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + frac);
  return Math.sign(x) * (1 - erfc);
}

/** @param {number} x */
export const sigmoid = (x) => 1 / (1 + Math.exp(-x));

// tanh rounded to float32 without a call to Math.tanh for most arguments: tanh(x) = E / (E + 2), E = e^2x - 1, with
// e^z = 2^k · e^r (r = z - k·ln 2, |r| ≤ ln 2 / 2) and e^r - 1 by its Taylor polynomial of degree 10: relative
// error below 2^-38 (measured against Math.tanh). The value is kept only where every number within 2^-32 of it
// rounds to the same float32, which Math.tanh's value, within 2^-38 + a few ulps of it, then does too; elsewhere
// (about one argument in 2^7, near a float32 rounding boundary) it is Math.tanh's. So its float32 rounding is
// Math.tanh's for every argument (checked over every float32 too). No branch depends on the sign of x.
const TANH_MARGIN = 2 ** -32;
const TANH_ONE = 9.5; // beyond, tanh rounds to ±1 in float32 (1 - tanh(9.5) < 2^-26)
const POW2 = Float64Array.from({ length: 64 }, (_, i) => 2 ** (i - 32)); // 2^k at k + 32
const C = Float64Array.from(
  { length: 10 },
  (_, n) => 1 / [1, 1, 2, 6, 24, 120, 720, 5040, 40320, 362880, 3628800][n + 1],
); // 1/(n+1)!
const ROUND = 1.5 * 2 ** 52; // v + ROUND - ROUND rounds v (|v| < 2^51) to the nearest integer

/**
 * tanh(x) in binary64 within 2^-32 relative of Math.tanh(x), with the same float32 rounding (RLA_policy §5: the
 * float32 rounding of tanh computed in binary64).
 * @param {number} x
 * @returns {number}
 */
export function tanh(x) {
  if (!(x <= TANH_ONE && x >= -TANH_ONE)) return x > 0 ? 1 : x < 0 ? -1 : x; // ±1 (±inf too); NaN
  if (x === 0) return x; // ±0
  const z = 2 * x;
  const k = z * Math.LOG2E + ROUND - ROUND; // the nearest integer, -28 .. 28 (Math.round is a call in some runtimes)
  const r = z - k * Math.LN2;
  // e^r - 1 = r·(1 + r/2 + ... + r^9/10!), by pairs of terms (a shorter chain of dependent operations than Horner's)
  const r2 = r * r;
  const r4 = r2 * r2;
  const p =
    r *
    (1 +
      r / 2 +
      r2 * (C[2] + r * C[3]) +
      r4 * (C[4] + r * C[5] + r2 * (C[6] + r * C[7])) +
      r4 * r4 * (C[8] + r * C[9]));
  const s = POW2[k + 32];
  const e = s * p + (s - 1); // e^z - 1
  const y = e / (e + 2);
  return f32(y * (1 + TANH_MARGIN)) === f32(y * (1 - TANH_MARGIN)) ? y : Math.tanh(x); // else near a rounding boundary
}

const SELU = /** @type {Record<string, number>} */ (REGISTRY.selu.constants); // a and s of the registry's formula
const SOFTPLUS = /** @type {Record<string, number>} */ (ACTIVATION_DEFAULTS.softplus); // mish's softplus: beta 1, threshold 20
/**
 * softplus in binary64 (RLA_policy §5.5): x itself where beta·x > threshold.
 * @param {number} x
 * @param {number} beta
 * @param {number} threshold
 */
const softplus = (x, beta, threshold) => {
  const z = x * beta;
  return z > threshold ? x : (Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z)))) / beta;
};

const FUNCTIONS = implementations(
  REGISTRY,
  /** @type {Record<string, ActivationFunction>} */ ({
    identity: (x) => x,
    relu: (x) => (x > 0 || Number.isNaN(x) ? x : 0), // NaN stays NaN
    tanh,
    sigmoid,
    elu: (x, p) => (x > 0 ? x : /** @type {number} */ (p.alpha) * Math.expm1(x)),
    leaky_relu: (x, p) => (x >= 0 ? x : x * f32(/** @type {number} */ (p.negative_slope))),
    silu: (x) => x * sigmoid(x),
    gelu: (x, p) =>
      p.approximate === 'tanh'
        ? 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)))
        : 0.5 * x * (1 + erf(x / Math.SQRT2)),
    softplus: (x, p) => softplus(x, /** @type {number} */ (p.beta), /** @type {number} */ (p.threshold)),
    hardtanh: (x, p) =>
      Math.min(Math.max(x, f32(/** @type {number} */ (p.min_val))), f32(/** @type {number} */ (p.max_val))), // Math.max and Math.min keep NaN
    selu: (x) => SELU.s * (x > 0 ? x : SELU.a * Math.expm1(x)),
    celu: (x, p) => (x > 0 ? x : /** @type {number} */ (p.alpha) * Math.expm1(x / /** @type {number} */ (p.alpha))),
    mish: (x) => x * Math.tanh(softplus(x, SOFTPLUS.beta, SOFTPLUS.threshold)),
    hardswish: (x) => (x * Math.min(Math.max(x + 3, 0), 6)) / 6,
    hardsigmoid: (x) => Math.min(Math.max(x + 3, 0), 6) / 6,
    softsign: (x) => x / (1 + Math.abs(x)),
  }),
  'activations of the JavaScript evaluator',
);

/**
 * name -> [function of (x, parameters) in binary64, defaults (the registry's)]; results are rounded to float32 by the caller.
 * @type {Readonly<Record<string, readonly [ActivationFunction, Parameters]>>}
 */
export const ACTIVATIONS = Object.freeze(
  Object.fromEntries(
    Object.entries(ACTIVATION_DEFAULTS).map(([name, defaults]) => [
      name,
      Object.freeze(/** @type {[ActivationFunction, Parameters]} */ ([FUNCTIONS[name], { ...defaults }])),
    ]),
  ),
);
