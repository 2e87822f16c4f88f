// Extension RLA_vec_normalize: observation and return normalisation statistics
// (spec/extensions/RLA_vec_normalize.md). The member's structural checks (§3,
// EXTENSION_INVALID), the rule that reads element bytes (`checkContent`, §5
// step 6) and the normalisation (§4); the twin of
// python/rlarchive/extensions/vec_normalize/__init__.py.

import { decodeValue } from '../../decode.js';
import { fail, membersPointer, pointerJoin } from '../../errors.js';
import { isMap, isTagged } from '../../values.js';

export const EXTENSION = 'RLA_vec_normalize';
export const MEMBER = 'extensions/RLA_vec_normalize/vec_normalize.json';
export const KEY = 'vec_normalize';
export const GROUP = 'RLA_vec_normalize';

const FLAGS = ['norm_obs', 'norm_reward', 'training'];
const FLOATS = ['clip_obs', 'clip_reward', 'epsilon', 'gamma'];
// the keys in the order of §3's table, the order they are checked in (`returns`, the
// last, is OPTIONAL: the others are REQUIRED)
const KEYS = [
  'norm_obs',
  'norm_reward',
  'clip_obs',
  'clip_reward',
  'epsilon',
  'gamma',
  'training',
  'obs',
  'obs_keys',
  'ret',
  'returns',
];
const REQUIRED = KEYS.slice(0, -1);

/** @typedef {import('../../json.js').JsonObject} JsonObject */

/**
 * @param {string} msg
 * @param {string} pointer
 */
const bad = (msg, pointer) => fail('EXTENSION_INVALID', msg, { member: MEMBER, pointer });
/**
 * A float: a number literal, an integer literal (bigint) or a tagged float.
 * @param {unknown} v
 * @returns {boolean}
 */
const isFloat = (v) => typeof v === 'number' || typeof v === 'bigint' || isTagged(v, 'float');
/**
 * @param {unknown} v
 * @returns {v is JsonObject}
 */
const isPlainMap = (v) => isMap(v) && !v.has('$type');
/**
 * @param {readonly (number | bigint)[]} a
 * @param {readonly (number | bigint)[]} b
 */
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => BigInt(d) === BigInt(b[i]));
/** @param {readonly (number | bigint)[]} s */
const showShape = (s) => `[${s.map(String).join(', ')}]`;

/**
 * Checks STATS ({mean, var, count}) and returns the arrays' shape.
 * @param {unknown} v
 * @param {string} ptr
 * @returns {bigint[]}
 */
function statsShape(v, ptr) {
  if (!isPlainMap(v) || v.size !== 3 || !['mean', 'var', 'count'].every((k) => v.has(k))) {
    throw bad(
      'statistics must be a map with exactly mean, var and count',
      membersPointer(v, ptr, ['mean', 'var', 'count']),
    );
  }
  /** @type {bigint[][]} */
  const shapes = [];
  for (const k of ['mean', 'var']) {
    const a = v.get(k);
    if (!(isTagged(a, 'ndarray') && a.get('dtype') === 'F64'))
      throw bad(`${k} must be an F64 ndarray`, pointerJoin(ptr, k));
    shapes.push(/** @type {bigint[]} */ (a.get('shape'))); // checked at step 11's value rules
  }
  if (!sameShape(shapes[0], shapes[1]))
    throw bad(`mean has shape ${showShape(shapes[0])} and var ${showShape(shapes[1])}`, pointerJoin(ptr, 'var'));
  if (!isFloat(v.get('count'))) throw bad('count must be a float', pointerJoin(ptr, 'count'));
  return shapes[0];
}

/**
 * @param {JsonObject | undefined} data
 * @returns {JsonObject | null}
 */
function observationSpace(data) {
  const sp = data?.get('observation_space');
  return isTagged(sp, 'space') ? sp : null;
}

/**
 * Checks the value under `vec_normalize` (§3, in the order of §5) against the
 * archive's raw `data` object; throws EXTENSION_INVALID with the JSON Pointer
 * of the offending value.
 * @param {unknown} value
 * @param {JsonObject | undefined} data
 */
export function check(value, data) {
  const base = '/' + KEY;
  if (!isPlainMap(value)) throw bad('the statistics must be a map', base);
  for (const k of REQUIRED) if (!value.has(k)) throw bad(`the key ${JSON.stringify(k)} is missing`, base); // §11.2: the object before its members
  for (const k of value.keys())
    if (!KEYS.includes(k)) throw bad(`unknown key ${JSON.stringify(k)}`, pointerJoin(base, k));
  for (const k of KEYS.slice(0, 7)) {
    // the members in the order of the table
    if (FLAGS.includes(k) && typeof value.get(k) !== 'boolean') throw bad(`${k} must be a boolean`, `${base}/${k}`);
    if (FLOATS.includes(k) && !isFloat(value.get(k))) throw bad(`${k} must be a float`, `${base}/${k}`);
  }
  const obs = value.get('obs');
  const keys = value.get('obs_keys');
  if (obs !== null && !isPlainMap(obs)) throw bad('obs must be null or a map', `${base}/obs`);
  if (obs === null && value.get('norm_obs'))
    throw bad('norm_obs is true but there are no observation statistics', `${base}/obs`);
  if (keys !== null) {
    if (!Array.isArray(keys)) throw bad('obs_keys must be null or a list of strings', `${base}/obs_keys`);
    keys.forEach((k, i) => {
      if (typeof k !== 'string') throw bad('obs_keys must be null or a list of strings', `${base}/obs_keys/${i}`);
      if (keys.indexOf(k) < i) throw bad(`obs_keys lists ${JSON.stringify(k)} twice`, `${base}/obs_keys/${i}`);
    });
  }
  if (obs === null) {
    if (keys !== null) throw bad('obs_keys must be null when obs is null', `${base}/obs_keys`);
  } else {
    checkObs(obs, /** @type {string[] | null} */ (keys), observationSpace(data), base); // strings (checked above)
  }
  if (statsShape(value.get('ret'), `${base}/ret`).length !== 0)
    throw bad('the return statistics must be 0-dimensional', `${base}/ret/mean`);
  if (value.has('returns')) {
    const r = value.get('returns');
    if (!(isTagged(r, 'ndarray') && r.get('dtype') === 'F64'))
      throw bad('returns must be an F64 ndarray', `${base}/returns`);
    const shape = /** @type {bigint[]} */ (r.get('shape'));
    if (shape.length !== 1 || BigInt(shape[0]) < 1n) {
      throw bad(
        `returns must have one element per environment (shape [N], N >= 1), not shape ${showShape(shape)}`,
        `${base}/returns`,
      );
    }
  }
}

/**
 * §5 step 6, after `check`: every element of `returns` is finite (element
 * bytes). `content` is extensions/index.js's contentOf(state).
 * @param {import('../index.js').Content} content
 * @param {unknown} value the value `check` accepted
 */
export async function checkContent(content, value) {
  const v = /** @type {JsonObject} */ (value);
  if (!v.has('returns')) return;
  const nd = /** @type {import('../../decode.js').NDArray} */ (decodeValue(v.get('returns'), content)); // an F64 ndarray
  const returns = /** @type {Float64Array} */ (await nd.load());
  const i = returns.findIndex((x) => !Number.isFinite(x));
  if (i >= 0) throw bad(`the running return of environment ${i} is ${returns[i]}, not finite`, `/${KEY}/returns`);
}

/**
 * `obs` in the form `obs_keys` gives it, then both against the data's observation space (§3 rules 3-4).
 * @param {JsonObject} obs
 * @param {string[] | null} keys
 * @param {JsonObject | null} space
 * @param {string} base
 */
function checkObs(obs, keys, space, base) {
  const kind = space ? space.get('kind') : null;
  if (keys === null) {
    // one observation's statistics; a map of them comes with obs_keys
    const shape = statsShape(obs, `${base}/obs`);
    if (kind === 'dict') throw bad('a Dict observation space needs statistics per key (obs_keys)', `${base}/obs_keys`);
    // a box space (kind is null without a space) has a checked shape
    const boxShape = () => /** @type {bigint[]} */ (/** @type {JsonObject} */ (space).get('shape'));
    if (kind === 'box' && !sameShape(boxShape(), shape)) {
      throw bad(
        `the statistics have shape ${showShape(shape)}, the observation space ${showShape(boxShape())}`,
        `${base}/obs/mean`,
      );
    }
    return;
  }
  const obsKeys = [...obs.keys()];
  if (obsKeys.length !== keys.length || !obsKeys.every((k, i) => k === keys[i])) {
    throw bad(
      `obs must be a map with exactly the keys of obs_keys ${JSON.stringify(keys)}, in order`,
      membersPointer(obs, `${base}/obs`, keys),
    );
  }
  const shapes = keys.map((k) => statsShape(obs.get(k), pointerJoin(`${base}/obs`, k)));
  if (space === null) return;
  if (kind !== 'dict') throw bad(`obs_keys given for a ${kind} observation space`, `${base}/obs_keys`);
  const sub = new Map(/** @type {[string, JsonObject][]} */ (space.get('spaces'))); // a checked dict space
  keys.forEach((k, i) => {
    if (!sub.has(k)) throw bad(`${JSON.stringify(k)} is not a key of the observation space`, `${base}/obs_keys/${i}`);
    const s = /** @type {JsonObject} */ (sub.get(k));
    const boxShape = () => /** @type {bigint[]} */ (s.get('shape')); // a box space's, checked
    if (s.get('kind') === 'box' && !sameShape(boxShape(), shapes[i])) {
      throw bad(
        `the statistics of ${JSON.stringify(k)} have shape ${showShape(shapes[i])}, the space ${showShape(boxShape())}`,
        pointerJoin(pointerJoin(`${base}/obs`, k), 'mean'),
      );
    }
  });
}

/**
 * §4: normalises one observation's values (`data`, a typed array or array of
 * numbers) with statistics {mean, var} (NDArray F64, loaded) in float64,
 * clipped, rounded to float32; returns a Float32Array.
 * @param {ArrayLike<number | bigint>} data
 * @param {{mean: {data: ArrayLike<number>}, var: {data: ArrayLike<number>}}} stats
 * @param {number} epsilon
 * @param {number} clipObs
 * @returns {Float32Array}
 */
export function normalizeArray(data, stats, epsilon, clipObs) {
  const mean = stats.mean.data;
  const variance = stats.var.data;
  const n = mean.length;
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const j = i % n; // a batch repeats the statistics' shape
    const x = (Number(data[i]) - mean[j]) / Math.sqrt(variance[j] + epsilon);
    out[i] = Math.min(Math.max(x, -clipObs), clipObs);
  }
  return out;
}
