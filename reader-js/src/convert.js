// Converters from the dtypes JavaScript has no typed array for to Float32Array.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * IEEE 754 binary16 bits to a number.
 * @param {number} h
 * @returns {number}
 */
export function f16ToNumber(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/**
 * bfloat16 bits (the upper half of a binary32) to a number.
 * @param {number} h
 * @returns {number}
 */
export function bf16ToNumber(h) {
  u32[0] = h << 16;
  return f32[0];
}

/**
 * One FP8 byte of the given dtype code to a number (OCP FP8 formats and their FNUZ variants).
 * @param {string} code
 * @param {number} b
 * @returns {number}
 */
export function fp8ToNumber(code, b) {
  const neg = (b & 0x80) !== 0;
  const sign = neg ? -1 : 1;
  switch (code) {
    case 'F8_E4M3': {
      const e = (b >> 3) & 0xf,
        m = b & 7;
      if (e === 15 && m === 7) return NaN;
      return sign * (e === 0 ? (m / 8) * 2 ** -6 : (1 + m / 8) * 2 ** (e - 7));
    }
    case 'F8_E5M2': {
      const e = (b >> 2) & 0x1f,
        m = b & 3;
      if (e === 31) return m ? NaN : sign * Infinity;
      return sign * (e === 0 ? (m / 4) * 2 ** -14 : (1 + m / 4) * 2 ** (e - 15));
    }
    case 'F8_E4M3FNUZ': {
      if (b === 0x80) return NaN;
      const e = (b >> 3) & 0xf,
        m = b & 7;
      return sign * (e === 0 ? (m / 8) * 2 ** -7 : (1 + m / 8) * 2 ** (e - 8));
    }
    case 'F8_E5M2FNUZ': {
      if (b === 0x80) return NaN;
      const e = (b >> 2) & 0x1f,
        m = b & 3;
      return sign * (e === 0 ? (m / 4) * 2 ** -15 : (1 + m / 4) * 2 ** (e - 16));
    }
    case 'F8_E8M0':
      return b === 0xff ? NaN : 2 ** (b - 127);
    default:
      throw new TypeError(`${code} is not an FP8 dtype`);
  }
}

/**
 * Converts elements of `dtype` (as returned by Archive#tensor: Uint16Array for
 * F16/BF16, Uint8Array for FP8) to a new Float32Array. Other float and
 * integer dtypes are converted with Float32Array.from.
 * @param {string} dtype
 * @param {import('./dtypes.js').ElementArray} data
 * @returns {Float32Array}
 */
export function toFloat32(dtype, data) {
  const out = new Float32Array(data.length);
  // F16 and BF16 come as Uint16Array, FP8 as Uint8Array: their elements are numbers.
  const bits = /** @type {Uint8Array | Uint16Array} */ (data);
  if (dtype === 'F16') for (let i = 0; i < bits.length; i++) out[i] = f16ToNumber(bits[i]);
  else if (dtype === 'BF16') for (let i = 0; i < bits.length; i++) out[i] = bf16ToNumber(bits[i]);
  else if (dtype.startsWith('F8_')) for (let i = 0; i < bits.length; i++) out[i] = fp8ToNumber(dtype, bits[i]);
  else for (let i = 0; i < data.length; i++) out[i] = Number(data[i]);
  return out;
}
