// The dtype table of spec §10.1 and the typed arrays used to view each dtype.

/**
 * code -> {code, size, alignment, kind, array}: `array` is the typed-array
 * constructor viewing the elements (raw Uint8Array / Uint16Array for the
 * dtypes JavaScript has no type for; Float32Array interleaved re/im for C64).
 */
export const DTYPES = Object.freeze(Object.fromEntries([
  ['BOOL', 1, 1, 'bool', Uint8Array],
  ['U8', 1, 1, 'uint', Uint8Array],
  ['I8', 1, 1, 'int', Int8Array],
  ['U16', 2, 2, 'uint', Uint16Array],
  ['I16', 2, 2, 'int', Int16Array],
  ['U32', 4, 4, 'uint', Uint32Array],
  ['I32', 4, 4, 'int', Int32Array],
  ['U64', 8, 8, 'uint', BigUint64Array],
  ['I64', 8, 8, 'int', BigInt64Array],
  ['F16', 2, 2, 'float', Uint16Array],
  ['BF16', 2, 2, 'float', Uint16Array],
  ['F32', 4, 4, 'float', Float32Array],
  ['F64', 8, 8, 'float', Float64Array],
  ['F8_E4M3', 1, 1, 'float', Uint8Array],
  ['F8_E5M2', 1, 1, 'float', Uint8Array],
  ['F8_E4M3FNUZ', 1, 1, 'float', Uint8Array],
  ['F8_E5M2FNUZ', 1, 1, 'float', Uint8Array],
  ['F8_E8M0', 1, 1, 'float', Uint8Array],
  ['C64', 8, 4, 'complex', Float32Array],
].map(([code, size, alignment, kind, array]) => [code, Object.freeze({ code, size, alignment, kind, array })])));

/** Integer dtype codes (signed and unsigned). */
export const INTEGER_CODES = Object.freeze(['I8', 'I16', 'I32', 'I64', 'U8', 'U16', 'U32', 'U64']);

export function isDtype(code) {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(DTYPES, code);
}

export function isIntegerDtype(code) {
  return INTEGER_CODES.includes(code);
}

/** True when this machine stores typed-array elements little-endian (all current platforms). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Views `bytes` (little-endian element bytes of `dtype`) as the dtype's typed
 * array, without copying when the bytes are suitably aligned in their buffer.
 */
export function viewElements(dtype, bytes) {
  const d = DTYPES[dtype];
  const Ctor = d.array;
  const per = Ctor.BYTES_PER_ELEMENT;
  const count = bytes.byteLength / per;
  if (Ctor === Uint8Array) return bytes;
  let src = bytes;
  if (src.byteOffset % per !== 0) src = src.slice();
  if (!LITTLE_ENDIAN) {
    if (src === bytes) src = src.slice();
    for (let i = 0; i < src.length; i += per) src.subarray(i, i + per).reverse();
  }
  return new Ctor(src.buffer, src.byteOffset, count);
}
