// CRC-32 (ISO 3309 / ITU-T V.42, as used by ZIP), incremental: node:zlib's
// crc32 where the runtime has one (Node >= 20.15 / 22.2), the table-driven
// implementation below everywhere else. Both give identical results.

import { builtinModule, importBuiltin, nativeDigestsEnabled } from './runtime.js';

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/**
 * The JavaScript CRC-32: continues `crc` (unsigned, 0 to start) over `bytes`.
 * @param {Uint8Array} bytes
 * @returns {number}
 */
export function crc32Js(bytes, crc = 0) {
  let c = ~crc;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** @typedef {(bytes: Uint8Array, crc: number) => number} Crc32Function node:zlib's crc32 */
/** @type {(zlib: {crc32?: unknown} | null) => Crc32Function | null} */
const pick = (zlib) => (typeof zlib?.crc32 === 'function' ? /** @type {Crc32Function} */ (zlib.crc32) : null);
let zlibCrc32 = pick(builtinModule('node:zlib'));

/**
 * Settles once node:zlib has been looked up (at once where Node offers
 * `process.getBuiltinModule`; until it settles elsewhere, crc32 uses the
 * JavaScript implementation, which gives the same values).
 */
export const crc32Ready = zlibCrc32
  ? Promise.resolve()
  : importBuiltin('node:zlib').then((z) => {
      zlibCrc32 = pick(z);
    });

// zlib's crc32 takes a 32-bit length: longer inputs go through in slices
const SLICE = 1 << 30;

/**
 * @param {Uint8Array} bytes
 * @param {number} crc
 * @param {Crc32Function} zlibCrc32
 * @returns {number}
 */
function crc32Zlib(bytes, crc, zlibCrc32) {
  if (bytes.length === 0) return crc; // node:zlib answers 0 for no bytes, whatever the CRC so far
  if (bytes.length <= SLICE) return zlibCrc32(bytes, crc);
  for (let i = 0; i < bytes.length; i += SLICE) crc = zlibCrc32(bytes.subarray(i, i + SLICE), crc);
  return crc;
}

/**
 * Continues a CRC-32 over `bytes` (a Uint8Array); start with `crc = 0`. Returns an unsigned 32-bit value.
 * @param {Uint8Array} bytes
 * @returns {number}
 */
export function crc32(bytes, crc = 0) {
  crc >>>= 0;
  return zlibCrc32 !== null && nativeDigestsEnabled() ? crc32Zlib(bytes, crc, zlibCrc32) >>> 0 : crc32Js(bytes, crc);
}

/**
 * Which implementation crc32 uses right now: `'node:zlib'` or `'javascript'`.
 * @returns {'node:zlib' | 'javascript'}
 */
export function crc32Implementation() {
  return zlibCrc32 !== null && nativeDigestsEnabled() ? 'node:zlib' : 'javascript';
}
