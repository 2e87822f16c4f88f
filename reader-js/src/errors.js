// The single error class of rlarchive-reader and the code catalogue (spec/errors.md).

/** File error codes of spec/errors.md, mapped to their severity. */
export const CATALOGUE = Object.freeze({
  IO_ERROR: 'error',
  ARCHIVE_NOT_RLARCHIVE: 'error',
  ZIP_EOCD_NOT_FOUND: 'error',
  ZIP_TRAILING_DATA: 'error',
  ZIP_MULTIPLE_EOCD: 'error',
  ZIP_MULTI_DISK: 'error',
  ZIP_ZIP64_INVALID: 'error',
  ZIP_TRUNCATED: 'error',
  ZIP_CD_INVALID: 'error',
  ZIP_VERSION_MADE_BY: 'error',
  ZIP_VERSION_NEEDED: 'error',
  ZIP_ENCRYPTED: 'error',
  ZIP_DATA_DESCRIPTOR: 'error',
  ZIP_FLAGS: 'error',
  ZIP_COMPRESSED: 'error',
  ZIP_ATTRIBUTES: 'error',
  ZIP_NAME_INVALID: 'error',
  ZIP_EXTRA_FIELD: 'error',
  ZIP_NAME_DUPLICATE: 'error',
  ZIP_NAME_CASE_COLLISION: 'error',
  ZIP_NAME_DIRECTORY_CLASH: 'error',
  ZIP_LOCAL_HEADER_INVALID: 'error',
  ZIP_HEADER_MISMATCH: 'error',
  ZIP_OVERLAP: 'error',
  ZIP_GAP: 'error',
  ZIP_CRC_MISMATCH: 'error',
  MEMBER_REQUIRED_MISSING: 'error',
  MEMBER_UNEXPECTED: 'error',
  MANIFEST_INVALID: 'error',
  VERSION_UNSUPPORTED: 'error',
  EXTENSION_UNDECLARED: 'error',
  EXTENSION_UNSUPPORTED: 'error',
  EXTENSION_INVALID: 'error',
  MEMBER_UNLISTED: 'error',
  MEMBER_MISSING: 'error',
  MEMBER_SIZE_MISMATCH: 'error',
  MEMBER_DIGEST_MISMATCH: 'error',
  JSON_TOO_LARGE: 'error',
  JSON_BOM: 'error',
  JSON_UTF8: 'error',
  JSON_DEPTH: 'error',
  JSON_SYNTAX: 'error',
  JSON_NAN_LITERAL: 'error',
  JSON_DUPLICATE_KEY: 'error',
  JSON_INTEGER_RANGE: 'error',
  JSON_NUMBER_RANGE: 'error',
  DATA_INVALID: 'error',
  VALUE_UNKNOWN_TYPE: 'error',
  VALUE_INVALID: 'error',
  VALUE_DUPLICATE_KEY: 'error',
  ARRAY_SIZE_MISMATCH: 'error',
  SPACE_INVALID: 'error',
  SCHEDULE_INVALID: 'error',
  REF_NOT_FOUND: 'error',
  REF_MISMATCH: 'error',
  ST_TRUNCATED: 'error',
  ST_HEADER_TOO_LARGE: 'error',
  ST_HEADER_INVALID: 'error',
  ST_DTYPE_UNKNOWN: 'error',
  ST_OFFSETS_INVALID: 'error',
  ST_SHAPE_MISMATCH: 'error',
  ST_HOLE: 'error',
  ST_OVERLAP: 'error',
  ST_TRAILING_BYTES: 'error',
  ST_MISALIGNED: 'error',
  LIMIT_EXCEEDED: 'error',
  MANIFEST_UNKNOWN_PROPERTY: 'warning',
  DATA_UNKNOWN_PROPERTY: 'warning',
  ST_BOOL_VALUE: 'warning',
  EXTENSION_UNKNOWN: 'info',
});

/** Codes raised for a caller's request rather than for a file. */
export const API_CODES = Object.freeze([
  'PICKLE_NOT_ALLOWED',
  'IMPORT_NOT_ALLOWED',
  'VALUE_UNSUPPORTED',
  'WRITE_INVALID',
  'TENSOR_NOT_FOUND',
  'FRAMEWORK_UNAVAILABLE',
  'IMPORT_INVALID',
  'INTERNAL_ERROR',
  'INPUT_INVALID',
]);

/**
 * Any problem the reader reports: a file breaking the spec, or a bad request.
 * `code` is the spec's stable code; `member`, `pointer` (RFC 6901, into that
 * member's JSON) and `offset` (bytes from the start of the file) locate it
 * when known, and are `undefined` otherwise.
 */
export class RlarchiveError extends Error {
  constructor(code, message, { member, pointer, offset } = {}) {
    let loc = '';
    if (member !== undefined) loc = member + (pointer !== undefined ? '#' + pointer : '');
    else if (pointer !== undefined) loc = '#' + pointer;
    if (offset !== undefined) loc += (loc ? ' ' : '') + '@' + offset;
    super(`${code}: ${message}${loc ? ` [${loc}]` : ''}`);
    this.name = 'RlarchiveError';
    this.code = code;
    this.detail = message;
    this.member = member;
    this.pointer = pointer;
    this.offset = offset;
  }

  /** `error`, `warning` or `info` (API errors are `error`). */
  get severity() {
    return CATALOGUE[this.code] ?? 'error';
  }
}

/** Shorthand used throughout the reader: `throw fail(code, msg, loc)`. */
export function fail(code, message, loc) {
  return new RlarchiveError(code, message, loc);
}

/** Appends one reference token to a JSON Pointer (RFC 6901). */
export function pointerJoin(pointer, token) {
  return pointer + '/' + String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A short, printable rendering of any parsed JSON value for messages. */
export function show(v) {
  let s;
  try {
    s = typeof v === 'bigint' ? v.toString() : v instanceof Map ? 'an object' : JSON.stringify(v);
  } catch {
    s = String(v);
  }
  s = String(s);
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
}

/** The message of anything thrown, as text, without ever throwing itself. */
export function errorText(e) {
  try {
    return String(e?.message ?? e);
  } catch {
    return 'unknown error';
  }
}
