// Extension RLA_replay_buffer: an off-policy algorithm's replay buffer, so that
// training can go on (spec/extensions/RLA_replay_buffer.md). The member's
// structural checks (§4 rules 1-7, `check`), the checks that read element
// bytes (rules 8-9, `checkContent`: the spaces' arrays and HER's indices only,
// never the buffer's observations, actions, rewards, dones or timeouts); the
// twin of python/rlarchive/replay_buffer.py.

import { decodeBase64 } from './base64.js';
import { decodeValue } from './decode.js';
import { fail, membersPointer, pointerJoin } from './errors.js';
import { isMap, isTagged } from './values.js';

export const EXTENSION = 'RLA_replay_buffer';
export const MEMBER = 'extensions/RLA_replay_buffer/replay_buffer.json';
export const KEY = 'replay_buffer';
export const GROUP = 'RLA_replay_buffer';

/** The buffer classes (Stable-Baselines3's names) and HER's goal selection strategies. */
export const CLASSES = ['ReplayBuffer', 'DictReplayBuffer', 'HerReplayBuffer', 'NStepReplayBuffer'];
export const STRATEGIES = ['future', 'final', 'episode'];

const KEYS = [
  'class', 'buffer_size', 'n_envs', 'pos', 'full', 'optimize_memory_usage', 'handle_timeout_termination',
  'observation_space', 'action_space', 'observations', 'next_observations', 'actions', 'rewards', 'dones',
  'timeouts', 'her', 'n_step',
];
const HER_KEYS = ['n_sampled_goal', 'goal_selection_strategy', 'copy_info_dict', 'ep_start', 'ep_length', 'current_ep_start', 'infos'];
const NSTEP_KEYS = ['n_steps', 'gamma'];
const FLAGS = ['full', 'optimize_memory_usage', 'handle_timeout_termination'];
const ROWS = ['rewards', 'dones', 'timeouts']; // F32 [buffer_size, n_envs]
const DICT_CLASSES = ['DictReplayBuffer', 'HerReplayBuffer'];
const GOAL_KEYS = ['achieved_goal', 'desired_goal'];
const HER_INDICES = ['ep_start', 'ep_length', 'current_ep_start'];

const bad = (msg, pointer) => fail('EXTENSION_INVALID', msg, { member: MEMBER, pointer });
const isPlainMap = (v) => isMap(v) && !v.has('$type');
// an integer literal (§7.2): not a float literal, not a tagged int
const isInt = (v) => typeof v === 'bigint';
const isFloat = (v) => typeof v === 'number' || typeof v === 'bigint' || isTagged(v, 'float');
const isNd = (v) => isTagged(v, 'ndarray');
const isSpace = (v) => isTagged(v, 'space');
const showShape = (s) => `[${s.map(String).join(', ')}]`;
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => BigInt(d) === BigInt(b[i]));

/** A plain map with exactly `keys`: the object first (a missing key), then its first unknown key. */
function exactKeys(v, keys, ptr, what) {
  if (!isPlainMap(v)) throw bad(`${what} must be a map`, ptr);
  for (const k of keys) if (!v.has(k)) throw bad(`${what} lacks the key ${JSON.stringify(k)}`, ptr);
  for (const k of v.keys()) if (!keys.includes(k)) throw bad(`${what} has the unknown key ${JSON.stringify(k)}`, pointerJoin(ptr, k));
}

function intAtLeast(v, low, ptr, name) {
  if (!isInt(v) || v < BigInt(low)) throw bad(`${name} must be an integer >= ${low}`, ptr);
  return v;
}

function obsForm(v, ptr, name) {
  if (isNd(v)) return;
  if (!isPlainMap(v)) throw bad(`${name} must be an ndarray or a map of key to ndarray`, ptr);
  for (const [k, a] of v) if (!isNd(a)) throw bad(`${name}[${JSON.stringify(k)}] must be an ndarray`, pointerJoin(ptr, k));
}

/** §4 rule 2: each key's kind, in the order of the table. */
function checkTypes(value, base) {
  if (!CLASSES.includes(value.get('class'))) throw bad(`class must be one of ${CLASSES.join(', ')}`, `${base}/class`);
  intAtLeast(value.get('buffer_size'), 1, `${base}/buffer_size`, 'buffer_size');
  intAtLeast(value.get('n_envs'), 1, `${base}/n_envs`, 'n_envs');
  intAtLeast(value.get('pos'), 0, `${base}/pos`, 'pos');
  for (const k of FLAGS) if (typeof value.get(k) !== 'boolean') throw bad(`${k} must be a boolean`, `${base}/${k}`);
  for (const k of ['observation_space', 'action_space']) if (!isSpace(value.get(k))) throw bad(`${k} must be a space`, `${base}/${k}`);
  obsForm(value.get('observations'), `${base}/observations`, 'observations');
  if (value.get('next_observations') !== null) obsForm(value.get('next_observations'), `${base}/next_observations`, 'next_observations');
  for (const k of ['actions', ...ROWS]) if (!isNd(value.get(k))) throw bad(`${k} must be an ndarray`, `${base}/${k}`);
  const her = value.get('her');
  if (her !== null) {
    const p = `${base}/her`;
    exactKeys(her, HER_KEYS, p, 'her');
    intAtLeast(her.get('n_sampled_goal'), 0, `${p}/n_sampled_goal`, 'n_sampled_goal');
    if (!STRATEGIES.includes(her.get('goal_selection_strategy'))) throw bad(`goal_selection_strategy must be one of ${STRATEGIES.join(', ')}`, `${p}/goal_selection_strategy`);
    if (typeof her.get('copy_info_dict') !== 'boolean') throw bad('copy_info_dict must be a boolean', `${p}/copy_info_dict`);
    for (const k of HER_INDICES) if (!isNd(her.get(k))) throw bad(`${k} must be an ndarray`, `${p}/${k}`);
    const infos = her.get('infos');
    if (infos !== null && !(Array.isArray(infos) && infos.every((row) => Array.isArray(row)))) throw bad('infos must be null or a list of lists', `${p}/infos`);
  }
  const nStep = value.get('n_step');
  if (nStep !== null) {
    const p = `${base}/n_step`;
    exactKeys(nStep, NSTEP_KEYS, p, 'n_step');
    intAtLeast(nStep.get('n_steps'), 1, `${p}/n_steps`, 'n_steps');
    if (!isFloat(nStep.get('gamma'))) throw bad('gamma must be a float', `${p}/gamma`);
  }
}

const subSpaces = (space) => (space.get('kind') === 'dict' ? space.get('spaces') : null);

/** §4 rule 3: the class agrees with her, n_step, the observations' form and the flags. */
function checkClass(value, base) {
  const cls = value.get('class');
  if ((value.get('her') !== null) !== (cls === 'HerReplayBuffer')) throw bad('her is given exactly for a HerReplayBuffer', `${base}/her`);
  if ((value.get('n_step') !== null) !== (cls === 'NStepReplayBuffer')) throw bad('n_step is given exactly for an NStepReplayBuffer', `${base}/n_step`);
  const isDict = DICT_CLASSES.includes(cls);
  if ((value.get('observation_space').get('kind') === 'dict') !== isDict) {
    throw bad(`a ${cls} ${isDict ? 'needs' : 'does not take'} a Dict observation space`, `${base}/observation_space`);
  }
  if (isPlainMap(value.get('observations')) !== isDict) {
    throw bad(`the observations of a ${cls} are ${isDict ? 'a map of key to ndarray' : 'one ndarray'}`, `${base}/observations`);
  }
  if (value.get('optimize_memory_usage')) {
    if (cls !== 'ReplayBuffer') throw bad(`a ${cls} does not support optimize_memory_usage`, `${base}/optimize_memory_usage`);
    if (value.get('handle_timeout_termination')) throw bad('optimize_memory_usage and handle_timeout_termination are not both true', `${base}/handle_timeout_termination`);
  }
  const next = value.get('next_observations');
  if ((next === null) !== value.get('optimize_memory_usage')) throw bad('next_observations is null exactly when optimize_memory_usage is true', `${base}/next_observations`);
  if (next !== null && isPlainMap(next) !== isDict) throw bad('next_observations have the form of observations', `${base}/next_observations`);
  const her = value.get('her');
  if (her !== null) {
    const keys = (subSpaces(value.get('observation_space')) ?? []).map(([k]) => k);
    for (const k of GOAL_KEYS) {
      if (!keys.includes(k)) throw bad(`the observation space of a HerReplayBuffer has the key ${JSON.stringify(k)}`, `${base}/observation_space`);
    }
    if ((her.get('infos') !== null) !== her.get('copy_info_dict')) throw bad('infos is given exactly when copy_info_dict is true', `${base}/her/infos`);
  }
}

function nvecLength(space, ptr) {
  const shape = space.get('nvec').get('shape');
  if (shape.length !== 1) throw bad(`a multi_discrete space's nvec must be 1-dimensional, not of shape ${showShape(shape)}`, ptr);
  return shape[0];
}

/** §5: the shape of one observation and its dtype. */
function obsLayout(space, ptr) {
  const kind = space.get('kind');
  if (kind === 'box') return [space.get('shape'), space.get('dtype')];
  if (kind === 'discrete') return [[1n], space.get('dtype')];
  if (kind === 'multi_discrete') return [[nvecLength(space, ptr)], space.get('dtype')];
  if (kind === 'multi_binary') {
    const n = space.get('n');
    return [Array.isArray(n) ? n : [n], 'I8'];
  }
  throw bad(`a replay buffer does not store observations of a ${kind} space`, ptr);
}

/** §5: action_dim and the actions' dtype (F64 stored as F32). */
function actionLayout(space, ptr) {
  const kind = space.get('kind');
  if (kind === 'box') {
    const dtype = space.get('dtype');
    return [space.get('shape').reduce((a, d) => a * BigInt(d), 1n), dtype === 'F64' ? 'F32' : dtype];
  }
  if (kind === 'discrete') return [1n, space.get('dtype')];
  if (kind === 'multi_discrete') return [nvecLength(space, ptr), space.get('dtype')];
  if (kind === 'multi_binary' && !Array.isArray(space.get('n'))) return [space.get('n'), 'I8'];
  throw bad(`a replay buffer does not store actions of a ${kind} space${kind === 'multi_binary' ? ' with an array n' : ''}`, ptr);
}

/** §4 rule 4: the spaces' kinds; the observations' [shape, dtype] (a Map per key for a Dict space) and the actions'. */
function layouts(value, base) {
  const osp = value.get('observation_space');
  const ptr = `${base}/observation_space`;
  const subs = subSpaces(osp);
  const obs = subs === null ? obsLayout(osp, ptr) : new Map(subs.map(([k, s], i) => [k, obsLayout(s, `${ptr}/spaces/${i}/1`)]));
  return [obs, actionLayout(value.get('action_space'), `${base}/action_space`)];
}

function shapeIs(a, shape, ptr, name) {
  if (!sameShape(a.get('shape'), shape)) throw bad(`${name} has shape ${showShape(a.get('shape'))}, expected ${showShape(shape)}`, ptr);
}

/** [array, pointer, name, [shape, dtype]] of every observation array, observations first (lazily, as rule 5 meets them). */
function* eachObs(value, base, layout) {
  for (const key of ['observations', 'next_observations']) {
    const v = value.get(key);
    if (v === null) continue;
    if (layout instanceof Map) {
      const keys = [...layout.keys()];
      const got = [...v.keys()];
      if (got.length !== keys.length || !got.every((k, i) => k === keys[i])) {
        throw bad(`${key} must have exactly the keys of the observation space ${JSON.stringify(keys)}, in order`, membersPointer(v, `${base}/${key}`, keys));
      }
      for (const [k, a] of v) yield [a, pointerJoin(`${base}/${key}`, k), `${key}[${JSON.stringify(k)}]`, layout.get(k)];
    } else {
      yield [v, `${base}/${key}`, key, layout];
    }
  }
}

/**
 * Checks the value under `replay_buffer` (§4 rules 1-7) on the parsed JSON
 * alone; throws EXTENSION_INVALID with the JSON Pointer of the offending value.
 */
export function check(value) {
  const base = '/' + KEY;
  exactKeys(value, KEYS, base, 'the replay buffer'); // rule 1
  checkTypes(value, base); // rule 2
  checkClass(value, base); // rule 3
  const [obsLayouts, [actionDim, actionDtype]] = layouts(value, base); // rule 4
  const b = value.get('buffer_size');
  const n = value.get('n_envs');
  const her = value.get('her');
  for (const [a, ptr, name, [shape]] of eachObs(value, base, obsLayouts)) shapeIs(a, [b, n, ...shape], ptr, name); // rule 5: shapes
  shapeIs(value.get('actions'), [b, n, actionDim], `${base}/actions`, 'actions');
  for (const k of ROWS) shapeIs(value.get(k), [b, n], `${base}/${k}`, k);
  if (her !== null) {
    shapeIs(her.get('ep_start'), [b, n], `${base}/her/ep_start`, 'ep_start');
    shapeIs(her.get('ep_length'), [b, n], `${base}/her/ep_length`, 'ep_length');
    shapeIs(her.get('current_ep_start'), [n], `${base}/her/current_ep_start`, 'current_ep_start');
    const infos = her.get('infos');
    if (infos !== null) {
      if (BigInt(infos.length) !== b) throw bad(`infos has ${infos.length} rows, expected buffer_size ${b}`, `${base}/her/infos`);
      infos.forEach((row, i) => {
        if (BigInt(row.length) !== n) throw bad(`infos row ${i} has ${row.length} items, expected n_envs ${n}`, `${base}/her/infos/${i}`);
      });
    }
  }
  if (value.get('pos') >= b) throw bad(`pos ${value.get('pos')} is not below buffer_size ${b}`, `${base}/pos`); // rule 6
  for (const [a, ptr, name, [, dtype]] of eachObs(value, base, obsLayouts)) { // rule 7: dtypes
    if (a.get('dtype') !== dtype) throw bad(`${name} has dtype ${a.get('dtype')}, the observation space stores ${dtype}`, ptr);
  }
  if (value.get('actions').get('dtype') !== actionDtype) {
    throw bad(`actions have dtype ${value.get('actions').get('dtype')}, the action space stores ${actionDtype}`, `${base}/actions`);
  }
  for (const k of ROWS) if (value.get(k).get('dtype') !== 'F32') throw bad(`${k} must be F32`, `${base}/${k}`);
  if (her !== null) {
    for (const k of HER_INDICES) if (her.get(k).get('dtype') !== 'I64') throw bad(`${k} must be I64`, `${base}/her/${k}`);
  }
}

/** The element bytes of an ndarray value, inline or referenced. */
async function elementBytes(archive, nd) {
  if (nd.has('base64')) return decodeBase64(nd.get('base64'));
  const ref = nd.get('ref');
  const { data } = await archive.tensor(ref.get('group'), ref.get('name'));
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** Whether two checked space trees are equal, arrays compared by dtype, shape and element bytes (maps whatever their members' order). */
async function sameSpace(archive, a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!(await sameSpace(archive, a[i], b[i]))) return false;
    return true;
  }
  if (isMap(a) || isMap(b)) {
    if (!isMap(a) || !isMap(b)) return false;
    if (isNd(a) || isNd(b)) {
      if (!isNd(a) || !isNd(b) || a.get('dtype') !== b.get('dtype') || !sameShape(a.get('shape'), b.get('shape'))) return false;
      const [x, y] = [await elementBytes(archive, a), await elementBytes(archive, b)];
      return x.length === y.length && x.every((byte, i) => byte === y[i]);
    }
    if (a.size !== b.size) return false;
    for (const [k, x] of a) if (!b.has(k) || !(await sameSpace(archive, x, b.get(k)))) return false;
    return true;
  }
  return a === b;
}

/**
 * §4 rules 8-9, after `check`: the spaces equal the data's, HER's indices are
 * in range. Reads the element bytes of the spaces' arrays and of HER's
 * indices only; throws EXTENSION_INVALID with the offending value's pointer.
 */
export async function checkContent(archive, value) {
  const base = '/' + KEY;
  const data = archive._dataTree;
  for (const k of ['observation_space', 'action_space']) {
    const theirs = data?.get(k);
    if (isSpace(theirs) && !(await sameSpace(archive, theirs, value.get(k)))) throw bad(`${k} differs from the data's ${k}`, `${base}/${k}`);
  }
  const her = value.get('her');
  if (her === null) return;
  const b = value.get('buffer_size');
  for (const [k, high] of [['ep_start', b - 1n], ['ep_length', b], ['current_ep_start', b - 1n]]) {
    const a = await decodeValue(her.get(k), archive).load();
    const i = a.findIndex((x) => x < 0n || x > high);
    if (i >= 0) throw bad(`${k} element ${i} = ${a[i]} is outside [0, ${high}]`, `${base}/her/${k}`);
  }
}
