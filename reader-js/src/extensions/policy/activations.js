// The activation functions of the portable policy (extension RLA_policy §5.5)
// and erf; the twin of python/rlarchive/extensions/policy/activations.py. Each function
// takes and gives one number in binary64 (the caller rounds to float32). Which
// functions exist, their parameters and defaults come from the registry
// (ops.js); FUNCTIONS fails at import when an implementation is missing
// or extra.

import { ACTIVATION_DEFAULTS, ACTIVATIONS as REGISTRY, implementations } from './ops.js';

const f32 = Math.fround;

/** erf(x) to about 1e-15 relative: Taylor series near 0, a continued fraction for erfc beyond. */
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

export const sigmoid = (x) => 1 / (1 + Math.exp(-x));
const SELU = REGISTRY.selu.constants; // a and s of the registry's formula
const SOFTPLUS = ACTIVATION_DEFAULTS.softplus; // mish's softplus: beta 1, threshold 20
/** softplus in binary64 (RLA_policy §5.5): x itself where beta·x > threshold. */
const softplus = (x, beta, threshold) => {
  const z = x * beta;
  return z > threshold ? x : (Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z)))) / beta;
};

const FUNCTIONS = implementations(
  REGISTRY,
  {
    identity: (x) => x,
    relu: (x) => (x > 0 || Number.isNaN(x) ? x : 0), // NaN stays NaN
    tanh: (x) => Math.tanh(x),
    sigmoid,
    elu: (x, p) => (x > 0 ? x : p.alpha * Math.expm1(x)),
    leaky_relu: (x, p) => (x >= 0 ? x : x * f32(p.negative_slope)),
    silu: (x) => x * sigmoid(x),
    gelu: (x, p) =>
      p.approximate === 'tanh'
        ? 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)))
        : 0.5 * x * (1 + erf(x / Math.SQRT2)),
    softplus: (x, p) => softplus(x, p.beta, p.threshold),
    hardtanh: (x, p) => Math.min(Math.max(x, f32(p.min_val)), f32(p.max_val)), // Math.max and Math.min keep NaN
    selu: (x) => SELU.s * (x > 0 ? x : SELU.a * Math.expm1(x)),
    celu: (x, p) => (x > 0 ? x : p.alpha * Math.expm1(x / p.alpha)),
    mish: (x) => x * Math.tanh(softplus(x, SOFTPLUS.beta, SOFTPLUS.threshold)),
    hardswish: (x) => (x * Math.min(Math.max(x + 3, 0), 6)) / 6,
    hardsigmoid: (x) => Math.min(Math.max(x + 3, 0), 6) / 6,
    softsign: (x) => x / (1 + Math.abs(x)),
  },
  'activations of the JavaScript evaluator',
);

/** name -> [function of (x, parameters) in binary64, defaults (the registry's)]; results are rounded to float32 by the caller. */
export const ACTIVATIONS = Object.freeze(
  Object.fromEntries(
    Object.entries(ACTIVATION_DEFAULTS).map(([name, defaults]) => [
      name,
      Object.freeze([FUNCTIONS[name], { ...defaults }]),
    ]),
  ),
);
