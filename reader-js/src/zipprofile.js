// The ZIP profile of spec §2 and the identification bytes of §3: the
// profile's constants and little-endian fields, the identification (step 1 of
// §11.1), and reading a member's bytes: whole, as JSON (§6), or hashed
// (CRC-32 and SHA-256, step 10). The directory itself is read by zipread.js.

import { fail, errorText, RlarchiveError } from './errors.js';
import { MAX_JSON_BYTES, MAX_NAME_BYTES } from './limits.js';
import { crc32 } from './crc32.js';
import { createSha256, sha256Hex } from './sha256.js';
import { parseJson } from './json.js';

/** @typedef {import('./sources.js').Source} Source */
/** @typedef {import('./zipread.js').LocatedMember} LocatedMember */
/** @typedef {import('./tensors.js').TensorInfo} TensorInfo */
/**
 * What hashMember gives: the member's CRC-32 and SHA-256 (hex), each tensor's SHA-256 (in the order
 * given; [] when not asked for), the names of the BOOL tensors holding a byte other than 0 or 1, and
 * the member's bytes when it was read whole.
 * @typedef {{crc: number, sha: string, tensorShas: string[], badBools: string[], bytes?: Uint8Array}} MemberHashes
 */
/** @typedef {(b: Uint8Array, o: number) => number} FieldReader A little-endian field at offset `o`. */

export const MIMETYPE = 'application/vnd.rlarchive+zip';
/** @type {(s: string) => number[]} */
const ASCII = (s) => Array.from(s, (c) => c.charCodeAt(0));
/** Bytes 26 to 66 of every archive (§3). */
const IDENT_TAIL = new Uint8Array([8, 0, 0, 0, ...ASCII('mimetype'), ...ASCII(MIMETYPE)]);
/** The smallest file that can hold the identification bytes (§3). */
export const IDENTIFICATION_BYTES = 67;

export const SIG_LOCAL = 0x04034b50;
export const SIG_CENTRAL = 0x02014b50;
export const SIG_EOCD = 0x06054b50;
export const SIG_Z64_EOCD = 0x06064b50;
export const SIG_Z64_LOCATOR = 0x07064b50;
export const U16_MAX = 0xffff;
export const U32_MAX = 0xffffffff;

/** @type {FieldReader} */
export const u16 = (b, o) => b[o] | (b[o + 1] << 8);
/** @type {FieldReader} */
export const u32 = (b, o) => (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;
/** An unsigned 64-bit field as a Number (exact up to 2^53; larger values only need to compare as large). */
/** @type {FieldReader} */
export const u64 = (b, o) => u32(b, o) + u32(b, o + 4) * 0x100000000;
/**
 * Exact 64-bit value, for fields that are compared for equality: two values
 * above 2^53 may round to the same Number.
 * @type {(b: Uint8Array, o: number) => bigint}
 */
export const u64x = (b, o) => BigInt(u32(b, o)) + (BigInt(u32(b, o + 4)) << 32n);
/** @type {(bytes: Uint8Array) => string} */
export const latin1 = (bytes) => String.fromCharCode(...bytes);

/**
 * The index of the last occurrence of a 4-byte signature in `bytes`, or -1.
 * @param {Uint8Array} bytes
 * @param {number} sig
 * @returns {number}
 */
export function lastSignature(bytes, sig) {
  for (let i = bytes.length - 4; i >= 0; i--) if (u32(bytes, i) === sig) return i;
  return -1;
}

/**
 * A member name of §2.4: segments of [A-Za-z0-9._-]+ joined by '/', none '.' or '..'.
 * @param {string} name
 * @returns {boolean}
 */
export function isValidName(name) {
  if (name.length === 0 || name.length > MAX_NAME_BYTES) return false;
  return name.split('/').every((s) => /^[A-Za-z0-9._-]+$/.test(s) && s !== '.' && s !== '..');
}

/**
 * Reads `length` bytes at `offset` from a source, turning any failure into IO_ERROR.
 * @param {Source} src
 * @param {number} offset
 * @param {number} length
 * @returns {Promise<Uint8Array>}
 */
export async function readAt(src, offset, length) {
  if (length === 0) return new Uint8Array(0);
  /** @type {unknown} */
  let b;
  try {
    b = await src.read(offset, length);
  } catch (e) {
    if (e instanceof RlarchiveError) throw e;
    throw fail('IO_ERROR', `read failed: ${errorText(e)}`);
  }
  if (!(b instanceof Uint8Array) || b.length !== length) throw fail('IO_ERROR', 'short read');
  return b;
}

/**
 * §3: the 45 identification bytes (step 1).
 * @param {Source} src
 * @returns {Promise<void>}
 */
export async function checkIdentification(src) {
  if (src.size < IDENTIFICATION_BYTES)
    throw fail('ARCHIVE_NOT_RLARCHIVE', 'file too short to be an rlarchive', { offset: 0 });
  const head = await readAt(src, 0, IDENTIFICATION_BYTES);
  if (u32(head, 0) !== SIG_LOCAL || IDENT_TAIL.some((v, i) => head[26 + i] !== v)) {
    throw fail('ARCHIVE_NOT_RLARCHIVE', 'identification bytes absent (not an rlarchive)', { offset: 0 });
  }
}

/**
 * The data of member `m` (a Member of zipread.js, with `dataOffset`).
 * @param {Source} src
 * @param {LocatedMember} m
 * @returns {Promise<Uint8Array>}
 */
export function readMember(src, m) {
  return readAt(src, m.dataOffset, m.size);
}

/**
 * Reads a JSON member (size limit, then CRC-32) and parses it (§6) into a
 * json.js tree. `bytes`: the member's data if already read.
 * @param {Source} src
 * @param {LocatedMember} m
 * @param {Uint8Array} [bytes]
 * @returns {Promise<import('./json.js').JsonValue>}
 */
export async function readJsonMember(src, m, bytes) {
  if (m.size > MAX_JSON_BYTES)
    throw fail('JSON_TOO_LARGE', `${m.size} bytes exceed MAX_JSON_BYTES`, { member: m.name, offset: m.dataOffset });
  bytes ??= await readMember(src, m);
  if (crc32(bytes) !== m.crc32)
    throw fail('ZIP_CRC_MISMATCH', "CRC-32 does not match the member's data", { member: m.name, offset: m.dataOffset });
  return parseJson(bytes, { member: m.name, offset: m.dataOffset });
}

const WHOLE_MEMBER_LIMIT = 256 * 1024 * 1024; // larger members are hashed in chunks
const CHUNK = 16 * 1024 * 1024;

/**
 * CRC-32 and SHA-256 of a member, plus (unless `digest` is false) the SHA-256
 * of each of `tensors` (TensorInfos of its safetensors header: their element
 * bytes) and the names of the BOOL tensors holding a byte other than 0 or 1,
 * all from one read of its bytes. Reads the member whole (then also returned
 * as `bytes`) when it is at most `wholeLimit` bytes, else in chunks. Resolves
 * to {crc, sha, tensorShas ([] when not `digest`), badBools, bytes?}.
 * @param {Source} src
 * @param {LocatedMember} m
 * @param {readonly TensorInfo[]} [tensors]
 * @param {{wholeLimit?: number, digest?: boolean}} [options]
 * @returns {Promise<MemberHashes>}
 */
export async function hashMember(src, m, tensors = [], { wholeLimit = WHOLE_MEMBER_LIMIT, digest = true } = {}) {
  if (m.size <= wholeLimit) {
    const bytes = await readMember(src, m);
    const base = m.dataOffset;
    /** @type {(t: TensorInfo) => Uint8Array} */
    const part = (t) => bytes.subarray(t.offset - base, t.offset - base + t.end - t.begin);
    const [sha, ...shas] = await Promise.all([
      sha256Hex(bytes),
      ...(digest ? tensors : []).map((t) => sha256Hex(part(t))),
    ]);
    const badBools = tensors.filter((t) => t.dtype === 'BOOL' && part(t).some((b) => b > 1)).map((t) => t.name);
    return { crc: crc32(bytes), sha, tensorShas: shas, badBools, bytes };
  }
  let crc = 0;
  const whole = await createSha256();
  const hs = digest ? await Promise.all(tensors.map(() => createSha256())) : null;
  /** @type {Set<string>} */
  const bad = new Set();
  for (let pos = 0; pos < m.size; pos += CHUNK) {
    const n = Math.min(CHUNK, m.size - pos);
    const chunk = await readAt(src, m.dataOffset + pos, n);
    crc = crc32(chunk, crc);
    whole.update(chunk);
    const lo = m.dataOffset + pos,
      hi = lo + n;
    tensors.forEach((t, k) => {
      const a = Math.max(lo, t.offset),
        b = Math.min(hi, t.offset + t.end - t.begin);
      if (a < b) {
        hs?.[k].update(chunk.subarray(a - lo, b - lo));
        if (t.dtype === 'BOOL' && chunk.subarray(a - lo, b - lo).some((x) => x > 1)) bad.add(t.name);
      }
    });
  }
  return {
    crc,
    sha: whole.hex(),
    tensorShas: hs ? hs.map((h) => h.hex()) : [],
    badBools: tensors.filter((t) => bad.has(t.name)).map((t) => t.name),
  };
}

/**
 * The deferred checks of one member (§11.1 step 10): CRC-32, then its digest
 * when `entry` (its manifest entry, {size, sha256}) is given. Resolves to
 * what hashMember gives (the tensors' digests unless `digest` is false); rejects with ZIP_CRC_MISMATCH or MEMBER_DIGEST_MISMATCH.
 * @param {Source} src
 * @param {LocatedMember} m
 * @param {{readonly sha256: string} | null | undefined} entry
 * @param {readonly TensorInfo[]} [tensors]
 * @param {{digest?: boolean}} [options]
 * @returns {Promise<MemberHashes>}
 */
export async function verifyMember(src, m, entry, tensors = [], { digest = true } = {}) {
  const r = await hashMember(src, m, tensors, { digest });
  if (r.crc !== m.crc32)
    throw fail('ZIP_CRC_MISMATCH', "CRC-32 does not match the member's data", { member: m.name, offset: m.dataOffset });
  if (entry && r.sha !== entry.sha256)
    throw fail('MEMBER_DIGEST_MISMATCH', `${m.name} does not match its SHA-256`, { member: m.name });
  return r;
}
