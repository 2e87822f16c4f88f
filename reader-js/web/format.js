// Text renderings of numbers, sizes and shapes.

const FLOAT32_LIKE = new Set([
  'F32',
  'F16',
  'BF16',
  'C64',
  'F8_E4M3',
  'F8_E5M2',
  'F8_E4M3FNUZ',
  'F8_E5M2FNUZ',
  'F8_E8M0',
]);

/**
 * A number as text: `NaN`, `inf`, `-inf`, `-0`, bigint digits, and for float32-like
 * dtypes the shortest decimal that reads back as the same float32.
 * @param {number|bigint|boolean} x
 * @param {string} [dtype] the element dtype, when known
 * @returns {string}
 */
export function formatNumber(x, dtype) {
  if (typeof x === 'bigint') return x.toString();
  if (typeof x === 'boolean') return x ? 'true' : 'false';
  if (typeof x !== 'number') return String(x);
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (Object.is(x, -0)) return '-0';
  if (dtype && FLOAT32_LIKE.has(dtype) && !Number.isInteger(x)) {
    const target = Math.fround(x);
    for (let p = 1; p <= 9; p++) {
      const t = Number(x.toPrecision(p));
      if (Math.fround(t) === target) return String(t);
    }
  }
  return String(x);
}

/**
 * A short number for axes and summaries (about `digits` significant digits, 4 by default).
 * @param {number} x
 * @param {number} [digits]
 * @returns {string}
 */
export function formatShort(x, digits = 4) {
  if (!Number.isFinite(x)) return formatNumber(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 10 ** (digits + 1) || a < 1e-3) return x.toExponential(digits - 2).replace('e+', 'e');
  return String(Number(x.toPrecision(digits)));
}

/**
 * A byte count in binary units, e.g. `1.5 MiB`.
 * @param {number} n
 * @returns {string}
 */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}

/**
 * A shape as `[2, 3]` (`[]` for a 0-d value).
 * @param {ArrayLike<number|bigint>} shape
 * @returns {string}
 */
export function formatShape(shape) {
  return `[${Array.from(shape, (d) => String(d)).join(', ')}]`;
}

/**
 * The number of elements of a shape.
 * @param {ArrayLike<number|bigint>} shape
 * @returns {number}
 */
export function elementCount(shape) {
  let n = 1;
  for (const d of Array.from(shape)) n *= Number(d);
  return n;
}
