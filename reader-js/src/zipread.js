// Reading the ZIP directory of spec §2, split along the records it reads (as
// CPython's zipfile does): the end record, the ZIP64 end records, one central
// record, one local header, then the checks across records. Steps 2 to 4 of
// §11.1 (checks.js) call these; the twin of python/rlarchive/zipread.py.

import { fail } from './errors.js';
import { MAX_MEMBERS, MAX_NAME_BYTES } from './limits.js';
import {
  isValidName,
  lastSignature,
  latin1,
  readAt,
  u16,
  u32,
  u64,
  u64x,
  SIG_CENTRAL,
  SIG_EOCD,
  SIG_LOCAL,
  SIG_Z64_EOCD,
  SIG_Z64_LOCATOR,
  U16_MAX,
  U32_MAX,
} from './zipprofile.js';

/** @typedef {import('./sources.js').Source} Source */
/** @typedef {import('./errors.js').ErrorLocation} ErrorLocation */
/**
 * A member of the ZIP directory (§2.2): its central record (readCentralRecord, step 3), and from
 * step 4 on (readLocalHeaders) `dataOffset`, the file offset of its data.
 * @typedef {object} Member
 * @property {number} index its place in the central directory
 * @property {string} name
 * @property {Uint8Array} nameBytes
 * @property {number} versionNeeded
 * @property {number} flags
 * @property {number} method
 * @property {number} time
 * @property {number} date
 * @property {number} crc32 the CRC-32 of the central record
 * @property {bigint} csize
 * @property {bigint} usize
 * @property {number} size the data's size in bytes
 * @property {number} headerOffset the offset of the local header
 * @property {number} centralOffset the offset of the central record
 * @property {number} [dataOffset] the offset of the data (after step 4)
 */
/** @typedef {Readonly<Member> & {readonly dataOffset: number}} LocatedMember A Member after step 4. */
/** @typedef {{disk: number, cdDisk: number, entriesDisk: number, entries: number, cdSize: number, cdOffset: number}} EndFields */
/**
 * The end record found (findEndRecord): where it is, its fields, and the last bytes of the file.
 * @typedef {{eocdAt: number, fields: Readonly<EndFields>, tail: Uint8Array, tailStart: number}} FoundEnd
 */
/**
 * The end-record values in force (readZip64EndRecords): the ZIP64 ones (with the exact entry
 * counts) when there is a ZIP64 end record (`zip64At` >= 0), else the end record's.
 * @typedef {object} Zip64Records
 * @property {Readonly<EndFields & {exactEntriesDisk?: bigint, exactEntries?: bigint}>} values
 * @property {number} endStart where the end records begin
 * @property {number} locatorDisk
 * @property {number} zip64At the ZIP64 end record's offset, -1: none
 */
/**
 * The end records read at step 2 (§2.1, §2.6).
 * @typedef {object} EndRecords
 * @property {number} count the number of members
 * @property {number} cdOffset
 * @property {number} cdSize
 * @property {number} endStart where the end records begin (the ZIP64 end record, else the end record)
 * @property {number} eocdAt
 * @property {number} sizeAt the offset of the record that gives the directory's size
 * @property {boolean} zip64
 */

/**
 * `m` with its data offset: a TypeError when step 4 (readLocalHeaders) has not given it one.
 * @param {Readonly<Member> | undefined} m
 * @returns {LocatedMember}
 */
export function located(m) {
  if (m?.dataOffset === undefined) throw new TypeError('a member without its data offset: step 4 has not run');
  return /** @type {LocatedMember} */ (m);
}

const EOCD_SEARCH = 65557;
// §2.7: host systems a central record may name, the highest version needed,
// and the MS-DOS attribute bits of a regular file (read-only, archive)
const HOST_MSDOS = 0;
const HOST_UNIX = 3;
const MAX_VERSION_NEEDED = 45;
const DOS_FILE_BITS = 0x0021;
const UNIX_MODE_MARK = 0x8000;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
/** The maximum value of each end-record field: it means "see the ZIP64 end record". @type {Readonly<EndFields>} */
const MAX_OF = Object.freeze({
  disk: U16_MAX,
  cdDisk: U16_MAX,
  entriesDisk: U16_MAX,
  entries: U16_MAX,
  cdSize: U32_MAX,
  cdOffset: U32_MAX,
});

/** The fields of MAX_OF, in its order. */
const MAX_OF_FIELDS = /** @type {(keyof EndFields)[]} */ (Object.keys(MAX_OF));

/**
 * Why external attributes break §2.7 for a host system (0 or 3), or null.
 * @param {number} host
 * @param {number} attributes
 * @returns {string | null}
 */
function attributesProblem(host, attributes) {
  const mode = Math.floor(attributes / 0x10000);
  const dos = attributes & 0xffff;
  let allowed = DOS_FILE_BITS;
  if (host === HOST_MSDOS) {
    if (mode !== 0) return `a Unix mode (0o${mode.toString(8)}) in the upper half of an MS-DOS record`;
  } else {
    const kind = mode & S_IFMT;
    if (kind !== 0 && kind !== S_IFREG) return `file type 0o${kind.toString(8)} in the Unix mode (not a regular file)`;
    if (mode & 0o7000) return `set-user-ID, set-group-ID or sticky bit in the Unix mode 0o${mode.toString(8)}`;
    if (!(mode & 0o400)) return `Unix mode 0o${mode.toString(8)} without the owner-read bit`;
    allowed |= UNIX_MODE_MARK;
  }
  if (dos & ~allowed)
    return `MS-DOS attribute bits 0x${(dos & ~allowed).toString(16)} (only read-only and archive are allowed)`;
  return null;
}

/**
 * The first name that, followed by '/', begins another name ignoring ASCII case (§2.2), or undefined.
 * @param {string[]} names
 * @returns {string | undefined}
 */
function directoryClash(names) {
  const dirs = new Set();
  for (const name of names) {
    const low = name.toLowerCase();
    for (let cut = low.indexOf('/'); cut >= 0; cut = low.indexOf('/', cut + 1)) dirs.add(low.slice(0, cut));
  }
  return names.find((n) => dirs.has(n.toLowerCase()));
}

/**
 * Parses an extra field into {id: data} records (§2.5), `allowed` listing the permitted header IDs.
 * @param {Uint8Array} bytes
 * @param {number[]} allowed
 * @param {ErrorLocation} loc
 * @returns {Map<number, Uint8Array>}
 */
function parseExtra(bytes, allowed, loc) {
  const out = new Map();
  let p = 0;
  while (p < bytes.length) {
    if (p + 4 > bytes.length) throw fail('ZIP_EXTRA_FIELD', 'extra field record header runs past the field', loc);
    const id = u16(bytes, p);
    const len = u16(bytes, p + 2);
    if (p + 4 + len > bytes.length) throw fail('ZIP_EXTRA_FIELD', 'extra field record runs past the field', loc);
    if (out.has(id)) throw fail('ZIP_EXTRA_FIELD', `extra field record 0x${id.toString(16)} appears twice`, loc);
    if (!allowed.includes(id))
      throw fail('ZIP_EXTRA_FIELD', `extra field record 0x${id.toString(16)} is not permitted here`, loc);
    out.set(id, bytes.subarray(p + 4, p + 4 + len));
    p += 4 + len;
  }
  return out;
}

/**
 * §2.1: finds the end of central directory record, on a file that passed
 * identification: it must end the file (ZIP_TRAILING_DATA when it is found
 * earlier, ZIP_EOCD_NOT_FOUND when not at all) and have no comment. Resolves
 * to {eocdAt, fields: {disk, cdDisk, entriesDisk, entries, cdSize, cdOffset},
 * tail, tailStart} (`tail`: the last bytes of the file, read once).
 * @param {Source} src
 * @returns {Promise<Readonly<FoundEnd>>}
 */
export async function findEndRecord(src) {
  const size = src.size;
  const tailLen = Math.min(size, EOCD_SEARCH);
  const tailStart = size - tailLen;
  const tail = await readAt(src, tailStart, tailLen);
  const e = tailLen - 22; // >= 45: identification (step 1) needs 67 bytes
  if (u32(tail, e) !== SIG_EOCD) {
    const found = lastSignature(tail, SIG_EOCD);
    if (found >= 0)
      throw fail('ZIP_TRAILING_DATA', 'bytes follow the end of central directory record', {
        offset: tailStart + found,
      });
    throw fail('ZIP_EOCD_NOT_FOUND', 'no end of central directory record');
  }
  const eocdAt = size - 22;
  if (u16(tail, e + 20) !== 0) throw fail('ZIP_TRAILING_DATA', 'the end record has a comment', { offset: eocdAt });
  const fields = Object.freeze({
    disk: u16(tail, e + 4),
    cdDisk: u16(tail, e + 6),
    entriesDisk: u16(tail, e + 8),
    entries: u16(tail, e + 10),
    cdSize: u32(tail, e + 12),
    cdOffset: u32(tail, e + 16),
  });
  return Object.freeze({ eocdAt, fields, tail, tailStart });
}

/**
 * §2.6: the ZIP64 end of central directory locator and record before the end
 * record `found` (findEndRecord), when there are any: the locator (where the
 * record is, the total number of disks), the record (signature, no extensible
 * data), then each end-record field either at its maximum value or equal to
 * the ZIP64 one. Without ZIP64 no end-record field may hold its maximum.
 * Returns {values, endStart, locatorDisk, zip64At}: the fields in force, where
 * the end records begin, the locator's disk and the ZIP64 record's offset (-1: none).
 * @param {Readonly<FoundEnd>} found
 * @returns {Readonly<Zip64Records>}
 */
export function readZip64EndRecords(found) {
  const { eocdAt, fields: eocd, tail, tailStart } = found;
  const l = tail.length - 22 - 20;
  if (l < 0 || u32(tail, l) !== SIG_Z64_LOCATOR) {
    for (const k of MAX_OF_FIELDS) {
      if (eocd[k] === MAX_OF[k])
        throw fail('ZIP_ZIP64_INVALID', `the end record's ${k} holds its maximum value without ZIP64`, {
          offset: eocdAt,
        });
    }
    return Object.freeze({ values: eocd, endStart: eocdAt, locatorDisk: 0, zip64At: -1 });
  }
  const locAt = eocdAt - 20;
  /** @type {(msg: string) => import('./errors.js').RlarchiveError} */
  const bad = (msg) => fail('ZIP_ZIP64_INVALID', msg, { offset: locAt });
  const locatorDisk = u32(tail, l + 4);
  const recAt = u64(tail, l + 8);
  const totalDisks = u32(tail, l + 16);
  if (recAt + 56 !== locAt) throw bad('the ZIP64 end record does not end where its locator begins');
  if (totalDisks !== 1) throw bad('the ZIP64 locator gives a total number of disks other than 1');
  const r = recAt - tailStart; // >= 0: the record ends at the locator, inside the searched tail
  // errors in the ZIP64 end record are located there; in the locator, at the locator (spec §11.2)
  if (u32(tail, r) !== SIG_Z64_EOCD)
    throw fail('ZIP_ZIP64_INVALID', 'bad ZIP64 end record signature', { offset: recAt });
  if (u64(tail, r + 4) !== 44)
    throw fail('ZIP_ZIP64_INVALID', 'the ZIP64 end record has extensible data', { offset: recAt });
  const z = Object.freeze({
    disk: u32(tail, r + 16),
    cdDisk: u32(tail, r + 20),
    entriesDisk: u64(tail, r + 24),
    entries: u64(tail, r + 32),
    exactEntriesDisk: u64x(tail, r + 24),
    exactEntries: u64x(tail, r + 32),
    cdSize: u64(tail, r + 40),
    cdOffset: u64(tail, r + 48),
  });
  for (const k of MAX_OF_FIELDS) {
    if (eocd[k] !== MAX_OF[k] && eocd[k] !== z[k])
      throw fail('ZIP_ZIP64_INVALID', `the end record's ${k} disagrees with the ZIP64 end record`, { offset: eocdAt });
  }
  return Object.freeze({ values: z, endStart: recAt, locatorDisk, zip64At: recAt });
}

/**
 * §2.1: the end records' values (findEndRecord, readZip64EndRecords): one
 * disk, at most MAX_MEMBERS members, a directory no larger than its records
 * can be and within its region. Each error is at the record that gives the
 * value. Returns the End record {count, cdOffset, cdSize, endStart, eocdAt,
 * sizeAt, zip64} (frozen).
 * @param {Readonly<FoundEnd>} found
 * @param {Readonly<Zip64Records>} z64
 * @returns {Readonly<EndRecords>}
 */
export function checkEndRecords(found, z64) {
  const { eocdAt, fields: eocd } = found;
  const { values: v, endStart, locatorDisk, zip64At } = z64;
  // disk numbers (§2.1), each at the record that holds it: the EOCD (without the fields at
  // their maximum, which the ZIP64 record gives), then the locator, then the ZIP64 record
  /** @type {(k: keyof EndFields) => boolean} */
  const given = (k) => zip64At < 0 || eocd[k] !== MAX_OF[k];
  if (
    (given('disk') && eocd.disk !== 0) ||
    (given('cdDisk') && eocd.cdDisk !== 0) ||
    (given('entriesDisk') && given('entries') && eocd.entriesDisk !== eocd.entries)
  ) {
    throw fail('ZIP_MULTI_DISK', 'multi-disk archive', { offset: eocdAt });
  }
  if (zip64At >= 0) {
    if (locatorDisk !== 0)
      throw fail('ZIP_MULTI_DISK', 'the ZIP64 locator puts the ZIP64 end record on another disk', {
        offset: eocdAt - 20,
      });
    if (v.disk !== 0 || v.cdDisk !== 0 || v.exactEntriesDisk !== v.exactEntries)
      throw fail('ZIP_MULTI_DISK', 'the ZIP64 end record describes a multi-disk archive', { offset: zip64At });
  }
  // an error about a value is at the record that gives it: the ZIP64 record for an EOCD field at its maximum
  const countAt = given('entries') ? eocdAt : zip64At;
  const sizeAt = given('cdSize') ? eocdAt : zip64At;
  if (v.entries > MAX_MEMBERS)
    throw fail('LIMIT_EXCEEDED', `${v.entries} members exceed the limit of ${MAX_MEMBERS}`, { offset: countAt });
  // the longest record this profile admits: fixed part, longest name, a full ZIP64 extra record
  if (v.cdSize > v.entries * (46 + MAX_NAME_BYTES + 28))
    throw fail('ZIP_CD_INVALID', 'central directory larger than its entries can be', { offset: sizeAt });
  if (v.cdOffset + v.cdSize > endStart)
    throw fail('ZIP_TRUNCATED', 'the central directory runs past its region', { offset: v.cdOffset });
  return Object.freeze({
    count: v.entries,
    cdOffset: v.cdOffset,
    cdSize: v.cdSize,
    endStart,
    eocdAt,
    sizeAt,
    zip64: zip64At >= 0,
  });
}

/**
 * The checks of §2.2, §2.5, §2.7 on one central record's fields.
 * @param {Uint8Array} cd
 * @param {number} p
 * @param {{versionNeeded: number, flags: number, method: number}} rec
 * @param {ErrorLocation} nloc
 */
function checkCentralFields(cd, p, rec, nloc) {
  const host = cd[p + 5];
  if (host !== HOST_MSDOS && host !== HOST_UNIX)
    throw fail(
      'ZIP_VERSION_MADE_BY',
      `host system ${host} in 'version made by'; only 0 (MS-DOS) and 3 (Unix) are permitted`,
      nloc,
    );
  if (rec.versionNeeded > MAX_VERSION_NEEDED)
    throw fail(
      'ZIP_VERSION_NEEDED',
      `version needed to extract ${rec.versionNeeded} is above ${MAX_VERSION_NEEDED}`,
      nloc,
    );
  if (rec.flags & 0x41) throw fail('ZIP_ENCRYPTED', 'member is encrypted', nloc);
  if (rec.flags & 0x08) throw fail('ZIP_DATA_DESCRIPTOR', 'member uses a data descriptor', nloc);
  if (rec.flags !== 0) throw fail('ZIP_FLAGS', `general purpose flags 0x${rec.flags.toString(16)}`, nloc);
  if (rec.method !== 0) throw fail('ZIP_COMPRESSED', `compression method ${rec.method}`, nloc);
  if (u16(cd, p + 34) !== 0) throw fail('ZIP_MULTI_DISK', 'member starts on another disk', nloc);
  const attributes = u32(cd, p + 38);
  const why = attributesProblem(host, attributes);
  if (why)
    throw fail(
      'ZIP_ATTRIBUTES',
      `external attributes 0x${attributes.toString(16)} are not those of a regular file: ${why}`,
      nloc,
    );
}

/**
 * §2.2: the central record at `p` in the directory bytes `cd` (read at file
 * offset `cdOffset`), the `index`-th. Returns {member, next}: a frozen Member
 * {index, name, nameBytes, versionNeeded, flags, method, time, date, crc32,
 * csize, usize (BigInt), size, headerOffset, centralOffset} and the offset of
 * the next record in `cd`.
 * @param {Uint8Array} cd
 * @param {number} p
 * @param {number} cdOffset
 * @param {number} index
 * @returns {{member: Readonly<Member>, next: number}}
 */
export function readCentralRecord(cd, p, cdOffset, index) {
  const at = cdOffset + p;
  const loc = { offset: at };
  if (p + 46 > cd.length) throw fail('ZIP_CD_INVALID', 'the central directory holds fewer records than its count', loc);
  if (u32(cd, p) !== SIG_CENTRAL) throw fail('ZIP_CD_INVALID', 'bad central directory record signature', loc);
  const nameLen = u16(cd, p + 28),
    extraLen = u16(cd, p + 30),
    commentLen = u16(cd, p + 32);
  if (p + 46 + nameLen + extraLen + commentLen > cd.length)
    throw fail('ZIP_CD_INVALID', 'central directory record runs past the directory', loc);
  /**
   * The record as it is read: the sizes and the header offset of 32 bits, or of 64 from the ZIP64
   * extra record, then exact (bigint) sizes and a Number offset; `name` and `size` set on the way.
   * @type {Omit<Member, 'csize' | 'usize' | 'headerOffset' | 'name' | 'size'> & {csize: number | bigint, usize: number | bigint, headerOffset: number | bigint, name?: string, size?: number}}
   */
  const rec = {
    index,
    versionNeeded: u16(cd, p + 6),
    flags: u16(cd, p + 8),
    method: u16(cd, p + 10),
    time: u16(cd, p + 12),
    date: u16(cd, p + 14),
    crc32: u32(cd, p + 16),
    csize: u32(cd, p + 20),
    usize: u32(cd, p + 24),
    headerOffset: u32(cd, p + 42),
    centralOffset: at,
    nameBytes: cd.subarray(p + 46, p + 46 + nameLen),
  };
  const name = latin1(rec.nameBytes);
  rec.name = name;
  const nloc = { offset: at, member: /^[\x20-\x7e]*$/.test(name) ? name : undefined };
  checkCentralFields(cd, p, rec, nloc);
  if (commentLen !== 0) throw fail('ZIP_CD_INVALID', 'member has a file comment', nloc);
  if (!isValidName(name)) throw fail('ZIP_NAME_INVALID', 'invalid member name', nloc);
  const extra = parseExtra(cd.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen), [0x0001], nloc);
  const wanted = /** @type {const} */ (['usize', 'csize', 'headerOffset']).filter((k) => rec[k] === U32_MAX);
  const z = extra.get(0x0001);
  if (z !== undefined || wanted.length) {
    if (z === undefined) throw fail('ZIP_ZIP64_INVALID', 'ZIP64 extra record missing', nloc);
    if (!wanted.length) throw fail('ZIP_ZIP64_INVALID', 'ZIP64 extra record present but not needed', nloc);
    if (z.length !== 8 * wanted.length) throw fail('ZIP_ZIP64_INVALID', 'ZIP64 extra record of the wrong length', nloc);
    wanted.forEach((k, j) => (rec[k] = u64x(z, 8 * j)));
  }
  // sizes stay exact (BigInt) for the equality checks, here and with the local header
  rec.csize = BigInt(rec.csize);
  rec.usize = BigInt(rec.usize);
  rec.headerOffset = Number(rec.headerOffset);
  if (rec.csize !== rec.usize) throw fail('ZIP_CD_INVALID', 'compressed and uncompressed sizes differ', nloc);
  rec.size = Number(rec.usize);
  // every field now has its Member type (exact sizes, a Number offset, the name and size)
  return {
    member: /** @type {Readonly<Member>} */ (Object.freeze(rec)),
    next: p + 46 + nameLen + extraLen + commentLen,
  };
}

/**
 * §2.2: the names across the central records (in ZIP order): no duplicate, no two differing only in case, no name that is another's directory.
 * @param {readonly Readonly<Member>[]} members
 */
export function checkMemberNames(members) {
  const seen = new Set();
  for (const m of members) {
    if (seen.has(m.name))
      throw fail('ZIP_NAME_DUPLICATE', 'two members have the same name', { member: m.name, offset: m.centralOffset });
    seen.add(m.name);
  }
  const lower = new Set();
  for (const m of members) {
    const k = m.name.toLowerCase(); // names are ASCII here
    if (lower.has(k))
      throw fail('ZIP_NAME_CASE_COLLISION', 'two member names differ only in case', {
        member: m.name,
        offset: m.centralOffset,
      });
    lower.add(k);
  }
  const clash = directoryClash(members.map((m) => m.name));
  if (clash !== undefined) {
    throw fail('ZIP_NAME_DIRECTORY_CLASH', 'a member name is also the directory of another member', {
      member: clash,
      offset: members.find((m) => m.name === clash)?.centralOffset,
    });
  }
}

/**
 * The local header's sizes (§2.3, §2.6), from its fixed part `h` and its extra records.
 * @param {Uint8Array} h
 * @param {Map<number, Uint8Array>} extra
 * @param {ErrorLocation} loc
 * @returns {{csize: bigint, usize: bigint}}
 */
function localSizes(h, extra, loc) {
  let csize = BigInt(u32(h, 18)),
    usize = BigInt(u32(h, 22));
  const z = extra.get(0x0001);
  if (csize === BigInt(U32_MAX) || usize === BigInt(U32_MAX)) {
    if (csize !== usize) throw fail('ZIP_ZIP64_INVALID', 'only one local size field holds 0xFFFFFFFF', loc);
    if (z === undefined || z.length !== 16)
      throw fail('ZIP_ZIP64_INVALID', 'local ZIP64 extra record missing or of the wrong length', loc);
    usize = u64x(z, 0);
    csize = u64x(z, 8);
  } else if (z !== undefined) {
    throw fail('ZIP_ZIP64_INVALID', 'local ZIP64 extra record present but not needed', loc);
  }
  return { csize, usize };
}

/**
 * §2.3: member `m`'s local header (signature, extra records, alignment
 * padding, fields equal to the central record's). Resolves to the offset of
 * the member's data. Data past the end of the file is found by
 * checkMemberLayout, after every local header.
 * @param {Source} src
 * @param {Readonly<Member>} m
 * @returns {Promise<number>}
 */
export async function readLocalHeader(src, m) {
  const size = src.size;
  const at = m.headerOffset;
  const loc = { member: m.name, offset: at };
  if (at + 30 > size) throw fail('ZIP_TRUNCATED', 'local header runs past the end of the file', loc);
  const h = await readAt(src, at, 30);
  if (u32(h, 0) !== SIG_LOCAL) throw fail('ZIP_LOCAL_HEADER_INVALID', 'bad local header signature', loc);
  const nameLen = u16(h, 26),
    extraLen = u16(h, 28);
  if (at + 30 + nameLen + extraLen > size)
    throw fail('ZIP_TRUNCATED', 'local header runs past the end of the file', loc);
  const rest = await readAt(src, at + 30, nameLen + extraLen);
  const extra = parseExtra(rest.subarray(nameLen), [0x0001, 0xd935], loc);
  const pad = extra.get(0xd935);
  if (pad !== undefined && (pad.length < 2 || pad.subarray(2).some((b) => b !== 0))) {
    throw fail('ZIP_EXTRA_FIELD', 'malformed alignment padding record', loc);
  }
  const { csize, usize } = localSizes(h, extra, loc);
  const same =
    u16(h, 4) === m.versionNeeded &&
    u16(h, 6) === m.flags &&
    u16(h, 8) === m.method &&
    u16(h, 10) === m.time &&
    u16(h, 12) === m.date &&
    u32(h, 14) === m.crc32 &&
    csize === m.csize &&
    usize === m.usize &&
    nameLen === m.nameBytes.length &&
    m.nameBytes.every((b, i) => rest[i] === b);
  if (!same) throw fail('ZIP_HEADER_MISMATCH', 'local header disagrees with the central directory', loc);
  return at + 30 + nameLen + extraLen;
}

/**
 * §2.1: the members (with `dataOffset`, in ZIP order) follow one another
 * from offset 0 without overlap or gap up to the central directory, and the
 * directory is followed by the end records (ZIP_GAP, or ZIP_MULTIPLE_EOCD
 * when the bytes between hold another end record).
 * @param {Source} src
 * @param {readonly LocatedMember[]} members
 * @param {Readonly<EndRecords>} end
 * @returns {Promise<void>}
 */
export async function checkMemberLayout(src, members, end) {
  let expected = 0;
  for (const m of members) {
    const loc = { member: m.name, offset: m.headerOffset };
    if (m.headerOffset < expected) throw fail('ZIP_OVERLAP', 'member overlaps the previous one', loc);
    if (m.headerOffset > expected)
      throw fail('ZIP_GAP', `bytes before member ${m.name} belong to no member`, { offset: expected }); // a gap has no member (§11.2)
    expected = m.dataOffset + m.size;
    if (expected > end.cdOffset) throw fail('ZIP_OVERLAP', 'member data runs into the central directory', loc);
  }
  if (expected < end.cdOffset)
    throw fail('ZIP_GAP', 'bytes between the last member and the central directory', { offset: expected });
  const cdEnd = end.cdOffset + end.cdSize;
  if (cdEnd < end.endStart) {
    const between = await readAt(src, cdEnd, end.endStart - cdEnd);
    if (lastSignature(between, SIG_EOCD) >= 0)
      throw fail('ZIP_MULTIPLE_EOCD', 'a second end record precedes the end record', { offset: cdEnd });
    throw fail('ZIP_GAP', 'bytes between the central directory and the end record', { offset: cdEnd });
  }
}
