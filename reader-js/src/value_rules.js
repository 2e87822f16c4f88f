// The rules every kind of value shares (§7.2): telling tagged values apart,
// the error of a value, the members of a tagged value, shapes. values.js,
// spaces.js and schedules.js build on these (and so import no one another in
// a cycle).

import { fail, pointerJoin } from './errors.js';
import { MAX_NDIM } from './limits.js';

/** @typedef {import('./json.js').JsonObject} JsonObject An object of the json.js tree (parseJson). */
/**
 * A tagged value (§7.2): an object of the json.js tree whose `$type` is a string. (A narrower type
 * than JsonObject, so that a map isTagged() refuses is still a JsonObject to the checker.)
 * @typedef {JsonObject & {get(key: '$type'): string}} TaggedValue
 */
/**
 * Where values are being checked: the member holding them, and the references met so far
 * (in document order; values.js appends each ndarray reference).
 * @typedef {{member: string, references: import('./values.js').Reference[]}} ValueContext
 */

/**
 * @param {unknown} v
 * @returns {v is JsonObject}
 */
export const isMap = (v) => v instanceof Map;
/**
 * @param {unknown} v
 * @param {string} tag
 * @returns {v is TaggedValue}
 */
export const isTagged = (v, tag) => v instanceof Map && v.get('$type') === tag;

/**
 * Raises a value-model error located in data.json.
 * @param {{member?: string}} ctx
 * @param {import('./errors.js').ErrorCode} code
 * @param {string} msg
 * @param {string} ptr
 * @returns {import('./errors.js').RlarchiveError}
 */
export function valueError(ctx, code, msg, ptr) {
  return fail(code, msg, { member: ctx.member, pointer: ptr });
}

/**
 * Checks that a tagged value has exactly `required` (+ `optional`) members besides `$type`.
 * Located (spec §11.2) at the value itself when a member is missing, else at the first member not allowed.
 * @param {JsonObject} v
 * @param {readonly string[]} required
 * @param {readonly string[]} optional
 * @param {string} ptr
 * @param {{member?: string}} ctx
 * @param {string} what
 */
export function exactMembers(v, required, optional, ptr, ctx, what) {
  for (const k of required) {
    if (!v.has(k)) throw valueError(ctx, 'VALUE_INVALID', `${what} lacks the member ${JSON.stringify(k)}`, ptr);
  }
  for (const k of v.keys()) {
    if (k !== '$type' && !required.includes(k) && !optional.includes(k)) {
      throw valueError(
        ctx,
        'VALUE_INVALID',
        `${what} has the unexpected member ${JSON.stringify(k)}`,
        pointerJoin(ptr, k),
      );
    }
  }
}

/**
 * A plain integer literal that is >= `min`.
 * @param {unknown} v
 * @param {number | bigint} [min]
 * @returns {v is bigint}
 */
export const isIntLiteral = (v, min = -Infinity) => typeof v === 'bigint' && v >= min;

/**
 * Checks a `shape` member (§7.6, §8): an array, of at most MAX_NDIM elements, each a plain
 * integer >= 0; in that order (the array's own structure before its elements, §11.2).
 * Located at the shape (not an array: VALUE_INVALID; too many dimensions: LIMIT_EXCEEDED)
 * or at its first bad element `ptr/i` (VALUE_INVALID).
 * @param {unknown} shape
 * @param {string} ptr
 * @param {{member?: string}} ctx
 * @returns {asserts shape is bigint[]}
 */
export function checkShape(shape, ptr, ctx) {
  if (!Array.isArray(shape)) throw valueError(ctx, 'VALUE_INVALID', 'shape must be an array of integers >= 0', ptr);
  if (shape.length > MAX_NDIM)
    throw valueError(ctx, 'LIMIT_EXCEEDED', `${shape.length} dimensions exceed the limit of ${MAX_NDIM}`, ptr);
  shape.forEach((d, i) => {
    if (!isIntLiteral(d, 0n))
      throw valueError(ctx, 'VALUE_INVALID', 'a shape element must be an integer >= 0', pointerJoin(ptr, i));
  });
}

/**
 * The number of elements of a checked shape (bigint).
 * @param {readonly bigint[]} shape
 * @returns {bigint}
 */
export function elementCount(shape) {
  return shape.reduce((a, d) => a * d, 1n);
}
