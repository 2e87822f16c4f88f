// Finding values of one class anywhere in decoded data, with their paths.

import { NDArray, Space, Schedule, Tuple } from '../src/index.js';

/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
function isPlainObject(v) {
  return v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * Every value that is an instance of `cls` inside `value` (objects, lists,
 * tuples, dicts), outermost first, with a path such as `policy_kwargs.net_arch[0]`.
 * Values inside a match are not searched.
 * @param {unknown} value
 * @param {Function} cls e.g. Space or Schedule
 * @param {string} [path]
 * @returns {Array<[string, any]>} any: the values are instances of `cls`, whatever class the caller names
 */
export function findAll(value, cls, path = '') {
  /** @type {Array<[string, any]>} */
  const out = [];
  /**
   * @param {unknown} v
   * @param {string} p
   * @param {number} depth
   */
  const visit = (v, p, depth) => {
    if (depth > 64) return;
    if (v instanceof cls) {
      out.push([p, v]);
      return;
    }
    if (v instanceof NDArray || v instanceof Space || v instanceof Schedule || v instanceof Uint8Array) return;
    if (Array.isArray(v) || v instanceof Tuple) v.forEach((x, i) => visit(x, `${p}[${i}]`, depth + 1));
    else if (v instanceof Map)
      for (const [k, x] of v) visit(x, `${p}[${typeof k === 'string' ? JSON.stringify(k) : String(k)}]`, depth + 1);
    else if (isPlainObject(v)) for (const [k, x] of Object.entries(v)) visit(x, p ? `${p}.${k}` : k, depth + 1);
  };
  visit(value, path, 0);
  return out;
}
