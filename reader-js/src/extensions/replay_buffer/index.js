// Extension RLA_replay_buffer: an off-policy algorithm's replay buffer, so that
// training can go on (spec/extensions/RLA_replay_buffer.md). The member's
// structural checks (§4 rules 1-7, `check`), the checks that read element
// bytes (rules 8-9, `checkContent`: the spaces' arrays and HER's indices only,
// never the buffer's observations, actions, rewards, dones or timeouts); the
// twin of python/rlarchive/extensions/replay_buffer/__init__.py.

import { decodeBase64 } from '../../base64.js';
import { decodeValue } from '../../decode.js';
import { fail, membersPointer, pointerJoin } from '../../errors.js';
import { MAX_REPLAY_N_STEPS } from '../../limits.js';
import { isMap, isTagged } from '../../values.js';

export const EXTENSION = 'RLA_replay_buffer';
export const MEMBER = 'extensions/RLA_replay_buffer/replay_buffer.json';
export const KEY = 'replay_buffer';
export const GROUP = 'RLA_replay_buffer';

/** The buffer classes (Stable-Baselines3's names) and HER's goal selection strategies. */
export const CLASSES = ['ReplayBuffer', 'DictReplayBuffer', 'HerReplayBuffer', 'NStepReplayBuffer'];
export const STRATEGIES = ['future', 'final', 'episode'];

const KEYS = [
  'class',
  'buffer_size',
  'n_envs',
  'pos',
  'full',
  'optimize_memory_usage',
  'handle_timeout_termination',
  'observation_space',
  'action_space',
  'observations',
  'next_observations',
  'actions',
  'rewards',
  'dones',
  'timeouts',
  'her',
  'n_step',
];
const HER_KEYS = [
  'n_sampled_goal',
  'goal_selection_strategy',
  'copy_info_dict',
  'ep_start',
  'ep_length',
  'current_ep_start',
  'infos',
];
const NSTEP_KEYS = ['n_steps', 'gamma'];
const FLAGS = ['full', 'optimize_memory_usage', 'handle_timeout_termination'];
const ROWS = ['rewards', 'dones', 'timeouts']; // F32 [buffer_size, n_envs]
const DICT_CLASSES = ['DictReplayBuffer', 'HerReplayBuffer'];
const GOAL_KEYS = ['achieved_goal', 'desired_goal'];
const HER_INDICES = ['ep_start', 'ep_length', 'current_ep_start'];

/** @typedef {import('../../json.js').JsonObject} JsonObject */
/**
 * A space value the value rules checked (§8): its members have the types §8 gives its kind, and
 * are read as such (`any`: which member has which type depends on `kind`).
 * @typedef {Map<string, any>} CheckedSpace
 */
/** @typedef {readonly (number | bigint)[]} Shape */
/**
 * The shape of one observation and the dtype the buffer stores it in (§5).
 * @typedef {[Shape, string]} Layout
 */

/**
 * @param {string} msg
 * @param {string} pointer
 */
const bad = (msg, pointer) => fail('EXTENSION_INVALID', msg, { member: MEMBER, pointer });
/**
 * @param {unknown} v
 * @returns {v is JsonObject}
 */
const isPlainMap = (v) => isMap(v) && !v.has('$type');
/**
 * An integer literal (§7.2): not a float literal, not a tagged int.
 * @param {unknown} v
 * @returns {v is bigint}
 */
const isInt = (v) => typeof v === 'bigint';
/**
 * @param {unknown} v
 * @returns {boolean}
 */
const isFloat = (v) => typeof v === 'number' || typeof v === 'bigint' || isTagged(v, 'float');
/**
 * Whether `v` is an ndarray value (a boolean, not a type guard: a map that is not one is still a map).
 * @param {unknown} v
 * @returns {boolean}
 */
const isNd = (v) => isTagged(v, 'ndarray');
/**
 * @param {unknown} v
 * @returns {v is CheckedSpace}
 */
const isSpace = (v) => isTagged(v, 'space');
/** @param {Shape} s */
const showShape = (s) => `[${s.map(String).join(', ')}]`;
/**
 * @param {Shape} a
 * @param {Shape} b
 */
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => BigInt(d) === BigInt(b[i]));
/**
 * The shape of a checked ndarray value.
 * @param {JsonObject} a
 * @returns {bigint[]}
 */
const shapeOf = (a) => /** @type {bigint[]} */ (a.get('shape'));

/**
 * A plain map with exactly `keys`: the object first (a missing key), then its first unknown key.
 * @param {unknown} v
 * @param {string[]} keys
 * @param {string} ptr
 * @param {string} what
 * @returns {asserts v is JsonObject}
 */
function exactKeys(v, keys, ptr, what) {
  if (!isPlainMap(v)) throw bad(`${what} must be a map`, ptr);
  for (const k of keys) if (!v.has(k)) throw bad(`${what} lacks the key ${JSON.stringify(k)}`, ptr);
  for (const k of v.keys())
    if (!keys.includes(k)) throw bad(`${what} has the unknown key ${JSON.stringify(k)}`, pointerJoin(ptr, k));
}

/**
 * @param {unknown} v
 * @param {number} low
 * @param {string} ptr
 * @param {string} name
 * @returns {bigint}
 */
function intAtLeast(v, low, ptr, name) {
  if (!isInt(v) || v < BigInt(low)) throw bad(`${name} must be an integer >= ${low}`, ptr);
  return v;
}

/**
 * @param {unknown} v
 * @param {string} ptr
 * @param {string} name
 * @returns {asserts v is JsonObject}
 */
function obsForm(v, ptr, name) {
  if (isNd(v)) return;
  if (!isPlainMap(v)) throw bad(`${name} must be an ndarray or a map of key to ndarray`, ptr);
  for (const [k, a] of v)
    if (!isNd(a)) throw bad(`${name}[${JSON.stringify(k)}] must be an ndarray`, pointerJoin(ptr, k));
}

/**
 * @param {CheckedSpace} space
 * @returns {[string, CheckedSpace][] | null}
 */
const subSpaces = (space) => (space.get('kind') === 'dict' ? space.get('spaces') : null);

/**
 * @param {CheckedSpace} space
 * @param {string} ptr
 * @returns {bigint}
 */
function nvecLength(space, ptr) {
  const shape = shapeOf(space.get('nvec'));
  if (shape.length !== 1)
    throw bad(`a multi_discrete space's nvec must be 1-dimensional, not of shape ${showShape(shape)}`, `${ptr}/nvec`);
  return shape[0];
}

/**
 * §5: the shape of one observation and its dtype.
 * @param {CheckedSpace} space
 * @param {string} ptr
 * @returns {Layout}
 */
function obsLayout(space, ptr) {
  const kind = space.get('kind');
  if (kind === 'box') return [space.get('shape'), space.get('dtype')];
  if (kind === 'discrete') return [[1n], space.get('dtype')];
  if (kind === 'multi_discrete') return [[nvecLength(space, ptr)], space.get('dtype')];
  if (kind === 'multi_binary') {
    const n = space.get('n');
    return [Array.isArray(n) ? n : [n], 'I8'];
  }
  throw bad(`a replay buffer does not store observations of a ${kind} space`, `${ptr}/kind`);
}

/**
 * §5: action_dim and the actions' dtype (F64 stored as F32).
 * @param {CheckedSpace} space
 * @param {string} ptr
 * @returns {[bigint, string]}
 */
function actionLayout(space, ptr) {
  const kind = space.get('kind');
  if (kind === 'box') {
    const dtype = space.get('dtype');
    /** @type {bigint[]} */
    const shape = space.get('shape');
    return [shape.reduce((a, d) => a * BigInt(d), 1n), dtype === 'F64' ? 'F32' : dtype];
  }
  if (kind === 'discrete') return [1n, space.get('dtype')];
  if (kind === 'multi_discrete') return [nvecLength(space, ptr), space.get('dtype')];
  if (kind === 'multi_binary') {
    if (Array.isArray(space.get('n')))
      throw bad('a replay buffer does not store actions of a multi_binary space with an array n', `${ptr}/n`);
    return [space.get('n'), 'I8'];
  }
  throw bad(`a replay buffer does not store actions of a ${kind} space`, `${ptr}/kind`);
}

/**
 * @param {unknown} a a checked ndarray value
 * @param {Shape} shape
 * @param {string} ptr
 * @param {string} name
 */
function shapeIs(a, shape, ptr, name) {
  const nd = /** @type {JsonObject} */ (a);
  if (!sameShape(shapeOf(nd), shape))
    throw bad(`${name} has shape ${showShape(shapeOf(nd))}, expected ${showShape(shape)}`, ptr);
}

/**
 * `observations` or `next_observations` (not null): its form, its form against the class, its keys, then each array's shape and dtype.
 * @param {JsonObject} value
 * @param {string} key
 * @param {string} base
 * @param {Layout | Map<string, Layout>} layout
 * @param {boolean} isDict
 */
function checkObservations(value, key, base, layout, isDict) {
  const v = value.get(key);
  const ptr = `${base}/${key}`;
  obsForm(v, ptr, key);
  if (isPlainMap(v) !== isDict)
    throw bad(`the ${key} of a ${value.get('class')} are ${isDict ? 'a map of key to ndarray' : 'one ndarray'}`, ptr);
  const b = /** @type {bigint} */ (value.get('buffer_size')); // checked before
  const n = /** @type {bigint} */ (value.get('n_envs'));
  /** @type {[JsonObject, string, string, Layout][]} */
  let arrays;
  if (layout instanceof Map) {
    const keys = [...layout.keys()];
    const got = [...v.keys()];
    if (got.length !== keys.length || !got.every((k, i) => k === keys[i])) {
      throw bad(
        `${key} must have exactly the keys of the observation space ${JSON.stringify(keys)}, in order`,
        membersPointer(v, ptr, keys),
      );
    }
    arrays = [...v].map(([k, a]) => [
      /** @type {JsonObject} */ (a),
      pointerJoin(ptr, k),
      `${key}[${JSON.stringify(k)}]`,
      /** @type {Layout} */ (layout.get(k)),
    ]);
  } else {
    arrays = [[v, ptr, key, layout]];
  }
  for (const [a, p, name, [shape, dtype]] of arrays) {
    shapeIs(a, [b, n, ...shape], p, name);
    if (a.get('dtype') !== dtype)
      throw bad(`${name} has dtype ${a.get('dtype')}, the observation space stores ${dtype}`, p);
  }
}

/**
 * `her`: its own rules (keys, then its members in the order of its table), then against the buffer.
 * @param {JsonObject} value
 * @param {string} base
 */
function checkHer(value, base) {
  const her = value.get('her');
  const p = `${base}/her`;
  if (her !== null) {
    exactKeys(her, HER_KEYS, p, 'her');
    intAtLeast(her.get('n_sampled_goal'), 0, `${p}/n_sampled_goal`, 'n_sampled_goal');
    if (!STRATEGIES.includes(/** @type {string} */ (her.get('goal_selection_strategy'))))
      throw bad(`goal_selection_strategy must be one of ${STRATEGIES.join(', ')}`, `${p}/goal_selection_strategy`);
    if (typeof her.get('copy_info_dict') !== 'boolean')
      throw bad('copy_info_dict must be a boolean', `${p}/copy_info_dict`);
    for (const k of HER_INDICES)
      if (!isNd(her.get(k)) || /** @type {JsonObject} */ (her.get(k)).get('dtype') !== 'I64')
        throw bad(`${k} must be an I64 ndarray`, `${p}/${k}`);
    const infos = her.get('infos');
    if (infos !== null) {
      if (!Array.isArray(infos)) throw bad('infos must be null or a list of lists', `${p}/infos`);
      infos.forEach((row, i) => {
        if (!Array.isArray(row)) throw bad('a row of infos must be a list', `${p}/infos/${i}`);
      });
    }
    if ((infos !== null) !== her.get('copy_info_dict'))
      throw bad('infos is given exactly when copy_info_dict is true', `${p}/infos`);
  }
  if ((her !== null) !== (value.get('class') === 'HerReplayBuffer'))
    throw bad('her is given exactly for a HerReplayBuffer', p);
  if (her === null) return;
  const h = /** @type {JsonObject} */ (her); // checked above
  const b = /** @type {bigint} */ (value.get('buffer_size')); // checked before
  const n = /** @type {bigint} */ (value.get('n_envs'));
  shapeIs(h.get('ep_start'), [b, n], `${p}/ep_start`, 'ep_start');
  shapeIs(h.get('ep_length'), [b, n], `${p}/ep_length`, 'ep_length');
  shapeIs(h.get('current_ep_start'), [n], `${p}/current_ep_start`, 'current_ep_start');
  const infos = /** @type {unknown[][] | null} */ (h.get('infos')); // checked above
  if (infos !== null) {
    if (BigInt(infos.length) !== b)
      throw bad(`infos has ${infos.length} rows, expected buffer_size ${b}`, `${p}/infos`);
    infos.forEach((row, i) => {
      if (BigInt(row.length) !== n)
        throw bad(`infos row ${i} has ${row.length} items, expected n_envs ${n}`, `${p}/infos/${i}`);
    });
  }
}

/**
 * Checks the value under `replay_buffer` (§4 rules 1-7, in the order and at
 * the places of §6) on the parsed JSON alone: the keys first; then the members
 * in the order of §3's table, each by its own rules, then against the members
 * before it (§11.2). Throws EXTENSION_INVALID with the JSON Pointer of the
 * offending value.
 * @param {unknown} value
 */
export function check(value) {
  const base = '/' + KEY;
  exactKeys(value, KEYS, base, 'the replay buffer');
  const cls = value.get('class');
  if (typeof cls !== 'string' || !CLASSES.includes(cls))
    throw bad(`class must be one of ${CLASSES.join(', ')}`, `${base}/class`);
  const b = intAtLeast(value.get('buffer_size'), 1, `${base}/buffer_size`, 'buffer_size');
  const n = intAtLeast(value.get('n_envs'), 1, `${base}/n_envs`, 'n_envs');
  if (intAtLeast(value.get('pos'), 0, `${base}/pos`, 'pos') >= b)
    throw bad(`pos ${value.get('pos')} is not below buffer_size ${b}`, `${base}/pos`);
  for (const k of FLAGS) {
    if (typeof value.get(k) !== 'boolean') throw bad(`${k} must be a boolean`, `${base}/${k}`);
    if (k === 'optimize_memory_usage' && value.get(k) && cls !== 'ReplayBuffer')
      throw bad(`a ${cls} does not support optimize_memory_usage`, `${base}/${k}`);
    if (k === 'handle_timeout_termination' && value.get(k) && value.get('optimize_memory_usage')) {
      throw bad('optimize_memory_usage and handle_timeout_termination are not both true', `${base}/${k}`);
    }
  }
  const isDict = DICT_CLASSES.includes(cls);
  const osp = value.get('observation_space');
  const ptr = `${base}/observation_space`;
  if (!isSpace(osp)) throw bad('observation_space must be a space', ptr);
  const subs = subSpaces(osp);
  const obsLayouts =
    subs === null ? obsLayout(osp, ptr) : new Map(subs.map(([k, s], i) => [k, obsLayout(s, `${ptr}/spaces/${i}/1`)]));
  if ((subs !== null) !== isDict)
    throw bad(`a ${cls} ${isDict ? 'needs' : 'does not take'} a Dict observation space`, ptr);
  if (cls === 'HerReplayBuffer') {
    for (const k of GOAL_KEYS)
      if (!(/** @type {Map<string, Layout>} */ (obsLayouts).has(k)))
        throw bad(`the observation space of a HerReplayBuffer has the key ${JSON.stringify(k)}`, ptr);
  }
  if (!isSpace(value.get('action_space'))) throw bad('action_space must be a space', `${base}/action_space`);
  const [actionDim, actionDtype] = actionLayout(
    /** @type {CheckedSpace} */ (value.get('action_space')),
    `${base}/action_space`,
  );
  checkObservations(value, 'observations', base, obsLayouts, isDict);
  const next = value.get('next_observations');
  if (next !== null) obsForm(next, `${base}/next_observations`, 'next_observations');
  if ((next === null) !== value.get('optimize_memory_usage'))
    throw bad('next_observations is null exactly when optimize_memory_usage is true', `${base}/next_observations`);
  if (next !== null) checkObservations(value, 'next_observations', base, obsLayouts, isDict);
  const actions = value.get('actions');
  if (!isNd(actions)) throw bad('actions must be an ndarray', `${base}/actions`);
  shapeIs(actions, [b, n, actionDim], `${base}/actions`, 'actions');
  const actionsDtype = /** @type {JsonObject} */ (actions).get('dtype');
  if (actionsDtype !== actionDtype)
    throw bad(`actions have dtype ${actionsDtype}, the action space stores ${actionDtype}`, `${base}/actions`);
  for (const k of ROWS) {
    if (!isNd(value.get(k)) || /** @type {JsonObject} */ (value.get(k)).get('dtype') !== 'F32')
      throw bad(`${k} must be an F32 ndarray`, `${base}/${k}`);
    shapeIs(value.get(k), [b, n], `${base}/${k}`, k);
  }
  checkHer(value, base);
  const nStep = value.get('n_step');
  const p = `${base}/n_step`;
  if (nStep !== null) {
    exactKeys(nStep, NSTEP_KEYS, p, 'n_step');
    if (intAtLeast(nStep.get('n_steps'), 1, `${p}/n_steps`, 'n_steps') > BigInt(MAX_REPLAY_N_STEPS))
      throw fail(
        'LIMIT_EXCEEDED',
        `n_steps ${nStep.get('n_steps')} is above MAX_REPLAY_N_STEPS (${MAX_REPLAY_N_STEPS})`,
        {
          member: MEMBER,
          pointer: `${p}/n_steps`,
        },
      );
    if (!isFloat(nStep.get('gamma'))) throw bad('gamma must be a float', `${p}/gamma`);
  }
  if ((nStep !== null) !== (cls === 'NStepReplayBuffer'))
    throw bad('n_step is given exactly for an NStepReplayBuffer', p);
}

/**
 * The element bytes of an ndarray value, inline or referenced.
 * @param {import('../index.js').Content} content
 * @param {JsonObject} nd a checked ndarray value
 * @returns {Promise<Uint8Array>}
 */
async function elementBytes(content, nd) {
  if (nd.has('base64')) return decodeBase64(/** @type {string} */ (nd.get('base64')));
  const ref = /** @type {Map<string, string>} */ (nd.get('ref'));
  const { data } = await content.tensor(
    /** @type {string} */ (ref.get('group')),
    /** @type {string} */ (ref.get('name')),
  );
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Whether two checked space trees are equal, arrays compared by dtype, shape and element bytes (maps whatever their members' order).
 * @param {import('../index.js').Content} content
 * @param {unknown} a
 * @param {unknown} b
 * @returns {Promise<boolean>}
 */
async function sameSpace(content, a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!(await sameSpace(content, a[i], b[i]))) return false;
    return true;
  }
  if (isMap(a) || isMap(b)) {
    if (!isMap(a) || !isMap(b)) return false;
    if (isNd(a) || isNd(b)) {
      if (!isNd(a) || !isNd(b) || a.get('dtype') !== b.get('dtype') || !sameShape(shapeOf(a), shapeOf(b))) return false;
      const [x, y] = [await elementBytes(content, a), await elementBytes(content, b)];
      return x.length === y.length && x.every((byte, i) => byte === y[i]);
    }
    if (a.size !== b.size) return false;
    for (const [k, x] of a) if (!b.has(k) || !(await sameSpace(content, x, b.get(k)))) return false;
    return true;
  }
  return a === b;
}

/**
 * §4 rules 8-9, after `check`: the spaces equal the data's, HER's indices are
 * in range. Reads the element bytes of the spaces' arrays and of HER's
 * indices only; throws EXTENSION_INVALID with the offending value's pointer.
 * `content`: {data, tensor(group, name)} (extensions/index.js contentOf): the raw
 * `data` object of data.json and the archive's tensors.
 * @param {import('../index.js').Content} content
 * @param {unknown} value the value `check` accepted
 */
export async function checkContent(content, value) {
  const v = /** @type {JsonObject} */ (value);
  const base = '/' + KEY;
  const { data } = content;
  for (const k of ['observation_space', 'action_space']) {
    const theirs = data?.get(k);
    if (isSpace(theirs) && !(await sameSpace(content, theirs, v.get(k))))
      throw bad(`${k} differs from the data's ${k}`, `${base}/${k}`);
  }
  const her = /** @type {JsonObject | null} */ (v.get('her'));
  if (her === null) return;
  const b = /** @type {bigint} */ (v.get('buffer_size'));
  for (const [k, high] of /** @type {[string, bigint][]} */ ([
    ['ep_start', b - 1n],
    ['ep_length', b],
    ['current_ep_start', b - 1n],
  ])) {
    const nd = /** @type {import('../../decode.js').NDArray} */ (decodeValue(her.get(k), content)); // an I64 ndarray
    const a = /** @type {BigInt64Array} */ (await nd.load());
    const i = a.findIndex((x) => x < 0n || x > high);
    if (i >= 0) throw bad(`${k} element ${i} = ${a[i]} is outside [0, ${high}]`, `${base}/her/${k}`);
  }
}
