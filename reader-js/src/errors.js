// The single error class of rlarchive-reader and the code catalogue (spec/errors.md).

// The catalogue (file codes and their severity, API codes) comes from spec/tables.json.
import { API_CODES, CATALOGUE } from './tables.js';

export { API_CODES, CATALOGUE };

/** @typedef {import('../index.js').ErrorCode} ErrorCode Every stable code (generated into index.d.ts from spec/tables.json). */
/** @typedef {'error' | 'warning' | 'info'} Severity */
/**
 * Where a problem is: the member, a JSON Pointer into its JSON, a file offset (each when known).
 * @typedef {{member?: string, pointer?: string, offset?: number}} ErrorLocation
 */

/** The severity of each file code (API codes are not in it). @type {Readonly<Partial<Record<ErrorCode, Severity>>>} */
const SEVERITY = CATALOGUE;

/**
 * `member#pointer @offset`, each part when known.
 * @param {string | undefined} member
 * @param {string | undefined} pointer
 * @param {number | undefined} offset
 * @returns {string}
 */
function locationText(member, pointer, offset) {
  let loc = '';
  if (member !== undefined) loc = member + (pointer !== undefined ? '#' + pointer : '');
  else if (pointer !== undefined) loc = '#' + pointer;
  if (offset !== undefined) loc += (loc ? ' ' : '') + '@' + offset;
  return loc;
}

/**
 * Any problem the reader reports: a file breaking the spec, or a bad request.
 * `code` is the spec's stable code; `member`, `pointer` (RFC 6901, into that
 * member's JSON) and `offset` (bytes from the start of the file) locate it
 * when known, and are `undefined` otherwise.
 */
export class RlarchiveError extends Error {
  /**
   * @param {ErrorCode} code
   * @param {string} message
   * @param {ErrorLocation} [loc]
   */
  constructor(code, message, { member, pointer, offset } = {}) {
    const loc = locationText(member, pointer, offset);
    super(`${code}: ${message}${loc ? ` [${loc}]` : ''}`);
    /** @type {'RlarchiveError'} */
    this.name = 'RlarchiveError';
    this.code = code;
    this.detail = message;
    this.member = member;
    this.pointer = pointer;
    this.offset = offset;
  }

  /**
   * The location as readable text, e.g. `data.json#/data/gamma @120` ('' when unknown); Python: `location()`.
   * @returns {string}
   */
  location() {
    return locationText(this.member, this.pointer, this.offset);
  }

  /**
   * `error`, `warning` or `info` (API errors are `error`).
   * @returns {Severity}
   */
  get severity() {
    return SEVERITY[this.code] ?? 'error';
  }
}

/**
 * Shorthand used throughout the reader: `throw fail(code, msg, loc)`.
 * @param {ErrorCode} code
 * @param {string} message
 * @param {ErrorLocation} [loc]
 * @returns {RlarchiveError}
 */
export function fail(code, message, loc) {
  return new RlarchiveError(code, message, loc);
}

/**
 * Appends one reference token to a JSON Pointer (RFC 6901).
 * @param {string} pointer
 * @param {string | number} token an object key or an array index
 * @returns {string}
 */
export function pointerJoin(pointer, token) {
  return pointer + '/' + String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Where an object whose members are not the allowed ones is at fault (spec §11.2): the object itself
 * when it is not a Map or lacks a `required` member (by default every allowed one), else its first
 * member (in document order) that is not allowed, else the object (a rule on it as a whole).
 * @param {unknown} map the object as parsed (json.js), or any other value
 * @param {string} pointer
 * @param {readonly string[]} allowed
 * @param {readonly string[]} [required]
 * @returns {string}
 */
export function membersPointer(map, pointer, allowed, required = allowed) {
  if (!(map instanceof Map) || !required.every((k) => map.has(k))) return pointer;
  const extra = [...map.keys()].find((k) => !allowed.includes(k));
  return extra === undefined ? pointer : pointerJoin(pointer, extra);
}

/**
 * A short, printable rendering of any parsed JSON value for messages.
 * @param {unknown} v
 * @returns {string}
 */
export function show(v) {
  /** @type {string | undefined} */
  let s;
  try {
    s = typeof v === 'bigint' ? v.toString() : v instanceof Map ? 'an object' : JSON.stringify(v);
  } catch {
    s = String(v);
  }
  s = String(s);
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
}

/**
 * The message of anything thrown, as text, without ever throwing itself.
 * @param {unknown} e
 * @returns {string}
 */
export function errorText(e) {
  try {
    return String(/** @type {{message?: unknown} | null | undefined} */ (e)?.message ?? e);
  } catch {
    return 'unknown error';
  }
}
