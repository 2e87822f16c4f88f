// Statistics of tensor elements: min, max, mean and a histogram (computed in
// the inspector's worker, worker.js).

import { DTYPES, toFloat32 } from '../src/index.js';

const DECODED = new Set(['F16', 'BF16', 'F8_E4M3', 'F8_E5M2', 'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'F8_E8M0']);
/** @type {Set<string>} */
const INTEGER = new Set(
  Object.values(/** @type {typeof import('../index.js').DTYPES} */ (DTYPES)).flatMap((d) =>
    ['bool', 'int', 'uint'].includes(d.kind) ? [d.code] : [],
  ),
);

/**
 * The elements of a tensor as numbers: F16, BF16 and FP8 decoded from their bits,
 * 64-bit integers converted to numbers, C64 as the magnitude of each element.
 * @param {string} dtype
 * @param {ArrayLike<number|bigint>} data the typed array `Archive#tensor` gives
 * @returns {ArrayLike<number>}
 */
export function numericElements(dtype, data) {
  if (DECODED.has(dtype)) return toFloat32(dtype, /** @type {import('../index.js').ElementArray} */ (data)); // a typed array
  if (dtype === 'I64' || dtype === 'U64') return Float64Array.from(data, Number);
  if (dtype === 'C64') {
    const c64 = /** @type {ArrayLike<number>} */ (data); // a Float32Array, re and im interleaved
    const out = new Float64Array(c64.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = Math.hypot(c64[2 * i], c64[2 * i + 1]);
    return out;
  }
  return /** @type {ArrayLike<number>} */ (data); // the 64-bit integer dtypes were converted above
}

/**
 * Summary statistics over the finite values, counts of NaN and infinities, and a histogram.
 * Integer dtypes with a small range get one bin per integer.
 * @param {ArrayLike<number>} values
 * @param {{bins?: number, integer?: boolean}} [options]
 * @returns {{count: number, finite: number, nan: number, posInf: number, negInf: number, min: number, max: number, mean: number, std: number, histogram: {lo: number, hi: number, counts: number[], integer: boolean}}}
 */
export function summarize(values, { bins = 40, integer = false } = {}) {
  let min = Infinity,
    max = -Infinity,
    sum = 0,
    finite = 0,
    nan = 0,
    posInf = 0,
    negInf = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== v) nan++;
    else if (v === Infinity) posInf++;
    else if (v === -Infinity) negInf++;
    else {
      finite++;
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  const mean = finite ? sum / finite : NaN;
  let sq = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (Number.isFinite(v)) sq += (v - mean) * (v - mean);
  }
  const std = finite ? Math.sqrt(sq / finite) : NaN;
  let lo = min,
    hi = max,
    n = bins,
    perInteger = false;
  if (finite === 0) {
    lo = 0;
    hi = 1;
    n = 1;
  } else if (integer && max - min + 1 <= 64) {
    perInteger = true;
    lo = min - 0.5;
    hi = max + 0.5;
    n = max - min + 1;
  } else if (lo === hi) {
    lo -= 0.5;
    hi += 0.5;
    n = 1;
  }
  const counts = new Array(n).fill(0);
  const width = (hi - lo) / n;
  if (finite > 0) {
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (!Number.isFinite(v)) continue;
      let k = Math.floor((v - lo) / width);
      if (k >= n) k = n - 1;
      if (k < 0) k = 0;
      counts[k]++;
    }
  }
  return {
    count: values.length,
    finite,
    nan,
    posInf,
    negInf,
    min,
    max,
    mean,
    std,
    histogram: { lo, hi, counts, integer: perInteger },
  };
}

/**
 * Whether a dtype holds integers (histograms use integer bins then).
 * @param {string} dtype
 * @returns {boolean}
 */
export function isIntegerDtype(dtype) {
  return INTEGER.has(dtype);
}

/**
 * What the page shows of a tensor: its dtype and shape, the statistics of its
 * elements and its first elements (not the whole tensor, which stays here).
 * @param {{name: string, dtype: string, shape: number[], data: ArrayLike<number|bigint>}} t what `Archive#tensor` gives
 * @returns {TensorStatistics}
 *
 * @typedef {{name: string, dtype: string, shape: number[], stats: ReturnType<typeof summarize>, first: ArrayLike<number|bigint>}} TensorStatistics
 */
export function tensorStatistics(t) {
  const stats = summarize(numericElements(t.dtype, t.data), { integer: isIntegerDtype(t.dtype) });
  const k = t.dtype === 'C64' ? 16 : 8;
  const first = ArrayBuffer.isView(t.data)
    ? /** @type {import('../index.js').ElementArray} */ (t.data).slice(0, k)
    : Array.from(t.data).slice(0, k);
  return { name: t.name, dtype: t.dtype, shape: t.shape, stats, first };
}
