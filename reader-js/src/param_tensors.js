// Optimizer parameters by name (§7.9): the checks of `param_tensors`.
//
// An optimizer state holds its parameters by position: its `param_groups`
// list ids, its `state` maps each id to that parameter's entries. A
// parameter group may name its parameters by the tensors of the group
// `policy` they are, in `param_tensors` beside `params`. checkParamTensors
// applies the rules of §7.9 to the json.js trees of data.json's
// `optimizers` (§11.1 step 9; Python: rlarchive.param_tensors).

import { fail, pointerJoin, RlarchiveError } from './errors.js';
import { isMap } from './value_rules.js';

/** The member of a parameter group that names its parameters, and the tensor group the names are in. */
export const PARAM_TENSORS = 'param_tensors';
export const POLICY_GROUP = 'policy';

/** @typedef {import('./json.js').JsonObject} JsonObject */

/**
 * @param {unknown} v
 * @returns {v is JsonObject}
 */
const isPlainMap = (v) => isMap(v) && !v.has('$type');

/**
 * The `param_groups` of an optimizer value when it is a map holding a list of them, else [].
 * @param {unknown} opt
 * @returns {unknown[]}
 */
function paramGroups(opt) {
  const groups = isPlainMap(opt) ? opt.get('param_groups') : undefined;
  return Array.isArray(groups) ? groups : [];
}

/**
 * Whether a `dict` entry has a plain integer key.
 * @param {unknown} e
 * @returns {e is [bigint, unknown]}
 */
const isIdEntry = (e) => Array.isArray(e) && e.length === 2 && typeof e[0] === 'bigint';

/**
 * Parameter id (bigint) -> its state in an optimizer value: the entries of its `state` (a `dict`, §7.5) whose key
 * is a plain integer (distinct: step 7 checked the keys), read once, so that a lookup costs nothing however many
 * parameters there are.
 * @param {unknown} opt
 * @returns {Map<bigint, unknown>}
 */
export function states(opt) {
  const state = isPlainMap(opt) ? opt.get('state') : undefined;
  if (!(isMap(state) && state.get('$type') === 'dict' && Array.isArray(state.get('entries')))) return new Map();
  return new Map(/** @type {unknown[]} */ (state.get('entries')).filter(isIdEntry).map((e) => [e[0], e[1]]));
}

/**
 * Every `ndarray` value inside a json.js tree, depth first, in document order.
 * @param {unknown} v
 * @returns {Generator<JsonObject, void, undefined>}
 */
export function* ndarrays(v) {
  if (Array.isArray(v)) for (const x of v) yield* ndarrays(x);
  else if (isMap(v)) {
    if (v.get('$type') === 'ndarray') {
      yield v;
      return;
    }
    for (const x of v.values()) yield* ndarrays(x);
  }
}

/**
 * Whether a state tensor's shape fits its parameter's (§7.9): no dimension, or its rank with each dimension equal or 1.
 * @param {readonly (number | bigint)[]} stateShape
 * @param {readonly (number | bigint)[]} tensorShape
 * @returns {boolean}
 */
export function fits(stateShape, tensorShape) {
  const s = stateShape.map(Number),
    t = tensorShape.map(Number);
  return s.length === 0 || (s.length === t.length && s.every((d, i) => d === t[i] || d === 1));
}

/**
 * Checks the `param_tensors` of one parameter group (§7.9); throws its first broken rule.
 * @param {Map<bigint, unknown>} byId
 * @param {JsonObject} g
 * @param {string} ptr
 * @param {Set<string>} seen
 * @param {Map<string, {shape: readonly number[]}> | null} policy
 */
function checkGroup(byId, g, ptr, seen, policy) {
  /** @param {string} pointer */
  const at = (pointer) => ({ member: 'data.json', pointer });
  const names = g.get(PARAM_TENSORS);
  if (!Array.isArray(names)) throw fail('VALUE_INVALID', `${PARAM_TENSORS} must be a list of tensor names`, at(ptr));
  names.forEach((n, j) => {
    if (typeof n !== 'string')
      throw fail('VALUE_INVALID', `${PARAM_TENSORS} holds a value that is not a tensor name`, at(pointerJoin(ptr, j)));
  });
  const params = g.get('params');
  if (
    !(
      Array.isArray(params) &&
      params.every((/** @type {unknown} */ p) => typeof p === 'bigint') &&
      params.length === names.length
    )
  )
    throw fail('VALUE_INVALID', `${PARAM_TENSORS} must name as many parameters as params lists ids`, at(ptr));
  /** @type {string[]} */ (names).forEach((n, j) => {
    const where = at(pointerJoin(ptr, j));
    if (seen.has(n)) throw fail('VALUE_INVALID', `${PARAM_TENSORS} names ${JSON.stringify(n)} twice`, where);
    seen.add(n);
    if (policy === null) return;
    const t = policy.get(n);
    if (!t)
      throw fail('REF_NOT_FOUND', `no tensor ${JSON.stringify(n)} in group ${JSON.stringify(POLICY_GROUP)}`, where);
    for (const nd of ndarrays(byId.get(params[j]))) {
      const shape = /** @type {bigint[]} */ (nd.get('shape')); // checked at step 7
      if (!fits(shape, t.shape))
        throw fail(
          'REF_MISMATCH',
          `the state of parameter ${params[j]} holds a tensor of shape [${shape.join(', ')}], which does not fit ${JSON.stringify(n)} of shape [${t.shape.join(', ')}]`,
          where,
        );
    }
  });
}

/**
 * The first broken rule of the optimizer states' `param_tensors` (§7.9), or null.
 * @param {JsonObject} optimizers data.json's `optimizers` (a json.js tree, through step 7)
 * @param {Map<string, {shape: readonly number[]}>|null} policy the tensors of the group `policy` (empty when there is
 *   none), or null when its member failed at step 8: then only the rules on the names themselves are checked
 * @returns {RlarchiveError|null}
 */
export function checkParamTensors(optimizers, policy) {
  for (const [name, opt] of optimizers) {
    /** @type {Set<string>} */
    const seen = new Set();
    const groups = paramGroups(opt);
    let byId = null;
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i];
      if (!(isPlainMap(g) && g.has(PARAM_TENSORS))) continue;
      byId ??= states(opt);
      try {
        checkGroup(byId, g, `${pointerJoin('/optimizers', name)}/param_groups/${i}/${PARAM_TENSORS}`, seen, policy);
      } catch (e) {
        if (!(e instanceof RlarchiveError)) throw e;
        return e;
      }
    }
  }
  return null;
}
