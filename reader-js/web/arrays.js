// Summaries of array elements as text (DOM-free: the page and its worker use them).

import { toFloat32 } from '../src/index.js';
import { formatNumber, formatShort } from './format.js';

/** @typedef {import('../index.js').ElementArray} ElementArray */

const DECODED = new Set(['F16', 'BF16', 'F8_E4M3', 'F8_E5M2', 'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'F8_E8M0']);

/**
 * Element values of a loaded NDArray as numbers (bigint kept), F16/BF16/FP8 decoded.
 * @param {{dtype: string, data: ArrayLike<number|bigint>}} nd
 * @returns {Array<number|bigint|boolean|string>} C64 elements as text (`1+2j`)
 */
export function arrayValues(nd) {
  if (DECODED.has(nd.dtype)) return Array.from(toFloat32(nd.dtype, /** @type {ElementArray} */ (nd.data))); // a typed array
  if (nd.dtype === 'BOOL') return Array.from(nd.data, (b) => b !== 0);
  if (nd.dtype === 'C64') {
    const data = /** @type {ArrayLike<number>} */ (nd.data); // C64 is a Float32Array
    const out = [];
    for (let i = 0; i < data.length; i += 2)
      out.push(
        `${formatNumber(data[i], 'F32')}${data[i + 1] < 0 || Object.is(data[i + 1], -0) ? '-' : '+'}${formatNumber(Math.abs(data[i + 1]), 'F32')}j`,
      );
    return out;
  }
  return Array.from(nd.data);
}

/**
 * A one-line summary of an array's elements: all of them when few, else
 * the common value or the range and the first few.
 * @param {{dtype: string, shape: number[], data: ArrayLike<number|bigint>}} nd a loaded array
 * @param {number} [few] how many elements count as few
 * @returns {string}
 */
export function summarizeArray(nd, few = 8) {
  const vals = arrayValues(nd);
  /** @param {number|bigint|boolean|string} v */
  const exact = (v) => (typeof v === 'string' ? v : formatNumber(v, nd.dtype));
  if (vals.length <= few) return `[${vals.map(exact).join(', ')}]`;
  /** @param {number|bigint|boolean|string} v */
  const f = (v) => (typeof v === 'number' && !Number.isInteger(v) ? formatShort(v) : exact(v));
  const first = vals[0];
  if (vals.every((v) => Object.is(v, first) || v === first)) return `all ${f(first)} (${vals.length} values)`;
  if (typeof first === 'string') return `[${vals.slice(0, 4).map(f).join(', ')}, …] (${vals.length} values)`;
  let lo = vals[0],
    hi = vals[0];
  for (const v of vals) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return `${f(lo)} … ${f(hi)}, [${vals.slice(0, 4).map(f).join(', ')}, …] (${vals.length} values)`;
}
