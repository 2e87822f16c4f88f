// The dtype table of spec §10.1 and the typed arrays used to view each dtype.

import { DTYPE_TABLE } from './tables.js';

/**
 * A typed array viewing a dtype's elements.
 * @typedef {Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | BigUint64Array | BigInt64Array | Float32Array | Float64Array} ElementArray
 */
/**
 * The constructor of an ElementArray.
 * @typedef {Uint8ArrayConstructor | Int8ArrayConstructor | Uint16ArrayConstructor | Int16ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor | BigUint64ArrayConstructor | BigInt64ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor} ElementArrayConstructor
 */
/**
 * One row of the dtype table: its code, element size and alignment in bytes, kind ('bool', 'int', 'uint', 'float', 'complex') and typed array.
 * @typedef {Readonly<{code: string, size: number, alignment: number, kind: string, array: ElementArrayConstructor}>} DtypeInfo
 */

/** The dtype table of spec/tables.json: code -> [size, alignment, kind]. */
const TABLE = /** @type {Readonly<Record<string, readonly [number, number, string]>>} */ (
  /** @type {unknown} */ (DTYPE_TABLE)
);

/**
 * The typed array viewing each dtype's elements in JavaScript (sizes, alignments and kinds come from spec/tables.json).
 * @type {Readonly<Record<string, ElementArrayConstructor>>}
 */
const ARRAYS = {
  BOOL: Uint8Array,
  U8: Uint8Array,
  I8: Int8Array,
  U16: Uint16Array,
  I16: Int16Array,
  U32: Uint32Array,
  I32: Int32Array,
  U64: BigUint64Array,
  I64: BigInt64Array,
  F16: Uint16Array,
  BF16: Uint16Array,
  F32: Float32Array,
  F64: Float64Array,
  F8_E4M3: Uint8Array,
  F8_E5M2: Uint8Array,
  F8_E4M3FNUZ: Uint8Array,
  F8_E5M2FNUZ: Uint8Array,
  F8_E8M0: Uint8Array,
  C64: Float32Array,
};

/**
 * code -> {code, size, alignment, kind, array}: `array` is the typed-array
 * constructor viewing the elements (raw Uint8Array / Uint16Array for the
 * dtypes JavaScript has no type for; Float32Array interleaved re/im for C64).
 */
export const DTYPES = /** @type {Readonly<Record<string, DtypeInfo>>} */ (
  Object.freeze(
    Object.fromEntries(
      Object.entries(TABLE).map(([code, [size, alignment, kind]]) => [
        code,
        Object.freeze({ code, size, alignment, kind, array: ARRAYS[code] }),
      ]),
    ),
  )
);

/** Integer dtype codes (signed and unsigned), in the order of the dtype table. */
export const INTEGER_CODES = Object.freeze(
  Object.keys(TABLE).filter((code) => ['int', 'uint'].includes(TABLE[code][2])),
);

/**
 * @param {unknown} code
 * @returns {code is import('../index.js').DtypeCode}
 */
export function isDtype(code) {
  return typeof code === 'string' && Object.hasOwn(DTYPES, code);
}

/** @param {string} code */
export function isIntegerDtype(code) {
  return INTEGER_CODES.includes(code);
}

/** True when this machine stores typed-array elements little-endian (all current platforms). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Views `bytes` (little-endian element bytes of `dtype`) as the dtype's typed
 * array, without copying when the bytes are suitably aligned in their buffer.
 * @param {string} dtype
 * @param {Uint8Array} bytes
 * @returns {ElementArray}
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
  return new Ctor(/** @type {ArrayBuffer} */ (src.buffer), src.byteOffset, count);
}
