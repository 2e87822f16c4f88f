// Extension RLA_training: the run state and the random state a training run
// goes on from (spec/extensions/RLA_training.md). The member's structural
// checks (§3, EXTENSION_INVALID, `check`) and the checks that read the
// generators' element bytes (§3.7, `checkContent`, in generator_states.js);
// the twin of python/rlarchive/extensions/training/__init__.py.

import { decodeValue } from '../../decode.js';
import { fail, membersPointer, pointerJoin } from '../../errors.js';
import { CUDA_BYTES, TORCH_BYTES, checkRandom } from './generator_states.js';
import { isMap, isTagged } from '../../values.js';

export const EXTENSION = 'RLA_training';
export const MEMBER = 'extensions/RLA_training/training.json';
export const KEY = 'training';
export const GROUP = 'RLA_training';

const KEYS = [
  'counters',
  'progress_remaining',
  'exploration_rate',
  'last_obs',
  'last_original_obs',
  'last_episode_starts',
  'episode_info',
  'episode_success',
  'action_noise',
  'lstm_states',
  'random',
];
const COUNTERS = ['num_timesteps', 'total_timesteps', 'num_timesteps_at_start', 'n_updates', 'episode_num', 'n_calls'];
const RANDOM_KEYS = ['torch', 'torch_cuda', 'numpy', 'python', 'action_space', 'observation_space'];
const NUMPY_KEYS = ['key', 'pos', 'has_gauss', 'cached_gaussian'];
const PYTHON_KEYS = ['version', 'state', 'gauss_next'];
const GENERATOR_KEYS = ['bit_generator', 'state', 'inc', 'has_uint32', 'uinteger'];
const BIT_GENERATORS = ['PCG64', 'PCG64DXSM'];
/** @type {Record<string, string[]>} */
const NOISE_KEYS = {
  normal: ['kind', 'mean', 'sigma', 'dtype'],
  ornstein_uhlenbeck: ['kind', 'mean', 'sigma', 'theta', 'dt', 'initial_noise', 'noise_prev', 'dtype'],
  vectorized: ['kind', 'base', 'noises'],
};
const NOISE_DTYPES = ['F32', 'F64'];
const U128 = 1n << 128n;
// Counters are below 2^63 (§3.1); PyTorch's and CUDA's generator states have these sizes (§3.6, §3.7).
const COUNTER_LIMIT = 1n << 63n;
const TORCH_STATE_BYTES = BigInt(TORCH_BYTES);
const CUDA_STATE_BYTES = BigInt(CUDA_BYTES);

/** @typedef {import('../../json.js').JsonObject} JsonObject */

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
 * An integer: an integer literal (bigint) or a tagged int.
 * @param {unknown} v
 * @returns {v is bigint | JsonObject}
 */
const isInt = (v) => typeof v === 'bigint' || isTagged(v, 'int');
/**
 * The value of an integer (isInt).
 * @param {unknown} v
 * @returns {bigint}
 */
const intValue = (v) =>
  typeof v === 'bigint' ? v : BigInt(/** @type {string} */ (/** @type {JsonObject} */ (v).get('value')));
/**
 * A float: a number literal, an integer literal, a tagged float or a tagged int.
 * @param {unknown} v
 * @returns {boolean}
 */
const isFloat = (v) => typeof v === 'number' || isInt(v) || isTagged(v, 'float');
/**
 * A float or integer literal (a parsed literal is finite; a tagged value is not one).
 * @param {unknown} v
 * @returns {boolean}
 */
const isFiniteLiteral = (v) => typeof v === 'number' || typeof v === 'bigint';
/** @param {readonly bigint[]} s */
const showShape = (s) => `[${s.map(String).join(', ')}]`;
/**
 * @param {readonly bigint[]} a
 * @param {readonly bigint[]} b
 */
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

/**
 * A map with exactly `keys` (§11.2: a missing key locates the map, an extra one itself).
 * @param {unknown} v
 * @param {string} ptr
 * @param {string[]} keys
 * @param {string} what
 * @returns {asserts v is JsonObject}
 */
function exact(v, ptr, keys, what) {
  if (!isPlainMap(v)) throw bad(`${what} must be a map`, ptr);
  if (v.size !== keys.length || !keys.every((k) => v.has(k))) {
    throw bad(`${what} must have exactly the keys ${keys.join(', ')}`, membersPointer(v, ptr, keys));
  }
}

/**
 * Checks an ndarray value (of one of `dtypes`, of `ndim` dimensions) and returns its shape as bigints.
 * @param {unknown} v
 * @param {string} ptr
 * @param {string} what
 * @param {string[] | null} [dtypes]
 * @param {number | null} [ndim]
 * @returns {bigint[]}
 */
function array(v, ptr, what, dtypes = null, ndim = null) {
  if (!isTagged(v, 'ndarray')) throw bad(`${what} must be an ndarray`, ptr);
  if (dtypes !== null && !dtypes.includes(/** @type {string} */ (v.get('dtype')))) {
    throw bad(`${what} must be an ndarray of dtype ${dtypes.join(' or ')}, not ${v.get('dtype')}`, ptr);
  }
  const shape = /** @type {bigint[]} */ (v.get('shape')).map((d) => BigInt(d));
  if (ndim !== null && shape.length !== ndim)
    throw bad(`${what} must have ${ndim} dimension(s), not ${shape.length}`, ptr);
  return shape;
}

/**
 * @param {unknown} v
 * @param {string} ptr
 * @param {string} what
 */
function counter(v, ptr, what) {
  if (!isInt(v) || intValue(v) < 0n || intValue(v) >= COUNTER_LIMIT)
    throw bad(`${what} must be an integer in [0, 2^63)`, ptr);
}

/**
 * @param {unknown} v
 * @param {string} ptr
 */
function observationArray(v, ptr) {
  if (array(v, ptr, 'an observation').length === 0)
    throw bad('an observation must have a first dimension (the environments)', ptr);
}

/**
 * The first dimension of every array of a checked OBS, in document order.
 * @param {unknown} v
 * @returns {bigint[]}
 */
function firstDims(v) {
  if (v === null) return [];
  return (isPlainMap(v) ? [...v.values()] : [v]).map((a) =>
    BigInt(/** @type {bigint[]} */ (/** @type {JsonObject} */ (a).get('shape'))[0]),
  );
}

/**
 * @param {unknown} v
 * @param {string} ptr
 * @param {JsonObject | null} space
 */
function observation(v, ptr, space) {
  if (v === null) return;
  const kind = space ? space.get('kind') : null;
  if (isPlainMap(v)) {
    if (kind !== null && kind !== 'dict') throw bad(`a map of observations for a ${kind} observation space`, ptr);
    const keys =
      kind === 'dict'
        ? /** @type {[string, unknown][]} */ (/** @type {JsonObject} */ (space).get('spaces')).map((e) => e[0])
        : [...v.keys()];
    const have = [...v.keys()];
    if (have.length !== keys.length || !have.every((k, i) => k === keys[i])) {
      throw bad(
        `the observations must be a map with exactly the keys of the observation space ${JSON.stringify(keys)}, in order`,
        membersPointer(v, ptr, keys),
      );
    }
    for (const [k, x] of v) observationArray(x, pointerJoin(ptr, k));
    return;
  }
  if (kind === 'dict') throw bad('a Dict observation space needs a map of observations', ptr);
  observationArray(v, ptr);
}

/**
 * @param {unknown} v
 * @param {string} ptr
 * @param {string} what
 * @param {boolean} itemIsMap
 */
function deque(v, ptr, what, itemIsMap) {
  exact(v, ptr, ['maxlen', 'items'], what);
  const maxlen = v.get('maxlen');
  if (maxlen !== null && (!isInt(maxlen) || intValue(maxlen) < 1n))
    throw bad(`${what}'s maxlen must be null or a positive integer`, `${ptr}/maxlen`);
  const items = v.get('items');
  if (!Array.isArray(items)) throw bad(`${what}'s items must be a list`, `${ptr}/items`);
  items.forEach((x, i) => {
    if (itemIsMap && !isPlainMap(x)) throw bad("an episode's information must be a map", `${ptr}/items/${i}`);
    if (!itemIsMap && typeof x !== 'boolean') throw bad("an episode's success must be a boolean", `${ptr}/items/${i}`);
  });
  if (maxlen !== null && BigInt(items.length) > intValue(maxlen)) {
    // items, after their own rules, against maxlen before them
    throw bad(`${what} holds ${items.length} items, more than its maxlen ${intValue(maxlen)}`, `${ptr}/items`);
  }
}

/**
 * @param {unknown} v
 * @param {string} ptr
 */
function noise(v, ptr, nested = false) {
  if (v === null && !nested) return;
  const kind = isPlainMap(v) ? v.get('kind') : undefined;
  if (typeof kind !== 'string' || !Object.hasOwn(NOISE_KEYS, kind) || (nested && kind === 'vectorized')) {
    const kinds = Object.keys(NOISE_KEYS).filter((k) => !(nested && k === 'vectorized'));
    throw bad(
      `an action noise must be a map whose kind is one of ${kinds.join(', ')}`,
      isPlainMap(v) && v.has('kind') ? `${ptr}/kind` : ptr,
    );
  }
  exact(v, ptr, NOISE_KEYS[kind], `a ${kind} action noise`);
  if (kind === 'vectorized') {
    noise(v.get('base'), `${ptr}/base`, true);
    const noises = v.get('noises');
    if (!Array.isArray(noises) || noises.length === 0)
      throw bad('a vectorized action noise must have a non-empty list of noises', `${ptr}/noises`);
    noises.forEach((n, i) => noise(n, `${ptr}/noises/${i}`, true));
    return;
  }
  /** @type {bigint[] | null} */
  let shape = null;
  for (const k of NOISE_KEYS[kind].slice(1)) {
    // the members in the order of the table of §3.4
    if (k === 'theta' || k === 'dt') {
      if (!isFloat(v.get(k))) throw bad(`${k} must be a float`, `${ptr}/${k}`);
    } else if (k === 'dtype') {
      if (!NOISE_DTYPES.includes(/** @type {string} */ (v.get(k))))
        throw bad(`an action noise's dtype must be one of ${NOISE_DTYPES.join(', ')}`, `${ptr}/dtype`);
    } else if (!(k === 'initial_noise' && v.get(k) === null)) {
      const s = array(v.get(k), `${ptr}/${k}`, k, ['F32', 'F64']);
      if (shape === null) shape = s;
      else if (!sameShape(s, shape)) throw bad(`${k} must have the shape of mean ${showShape(shape)}`, `${ptr}/${k}`);
    }
  }
}

/**
 * @param {unknown} v
 * @param {string} ptr
 */
function lstm(v, ptr) {
  if (v === null) return;
  exact(v, ptr, ['pi', 'vf'], 'the recurrent states');
  /** @type {bigint[] | null} */
  let shape = null;
  for (const k of ['pi', 'vf']) {
    const pair = v.get(k);
    if (!(Array.isArray(pair) && pair.length === 2))
      throw bad('a recurrent state must be a list of two arrays (hidden and cell states)', `${ptr}/${k}`);
    pair.forEach((a, i) => {
      const s = array(a, `${ptr}/${k}/${i}`, 'a recurrent state', ['F32'], 3);
      if (shape !== null && !sameShape(s, shape))
        throw bad(`the recurrent states must have one shape, ${showShape(shape)}`, `${ptr}/${k}/${i}`);
      shape = s;
    });
  }
}

/**
 * @param {unknown} v
 * @param {string} ptr
 */
function generator(v, ptr) {
  if (v === null) return;
  exact(v, ptr, GENERATOR_KEYS, 'a generator state');
  if (!BIT_GENERATORS.includes(/** @type {string} */ (v.get('bit_generator'))))
    throw bad(`the bit generator must be one of ${BIT_GENERATORS.join(', ')}`, `${ptr}/bit_generator`);
  for (const k of ['state', 'inc']) {
    const x = v.get(k);
    if (!isInt(x) || intValue(x) < 0n || intValue(x) >= U128)
      throw bad(`${k} must be an integer in [0, 2^128)`, `${ptr}/${k}`);
  }
  if (intValue(v.get('inc')) % 2n === 0n)
    throw bad('inc must be odd (an even increment leaves states that never change)', `${ptr}/inc`);
  const h = v.get('has_uint32');
  if (!isInt(h) || (intValue(h) !== 0n && intValue(h) !== 1n))
    throw bad('has_uint32 must be 0 or 1', `${ptr}/has_uint32`);
  const u = v.get('uinteger');
  if (!isInt(u) || intValue(u) < 0n || intValue(u) >= 1n << 32n)
    throw bad('uinteger must be an integer in [0, 2^32)', `${ptr}/uinteger`);
}

/**
 * @param {unknown} v
 * @param {string} ptr
 */
function spaceRandom(v, ptr) {
  if (v === null) return;
  exact(v, ptr, ['generator', 'spaces'], "a space's generators");
  generator(v.get('generator'), `${ptr}/generator`);
  const spaces = v.get('spaces');
  if (!Array.isArray(spaces)) throw bad('spaces must be a list', `${ptr}/spaces`);
  spaces.forEach((s, i) => {
    if (s === null) throw bad("a subspace's generators must be a map", `${ptr}/spaces/${i}`);
    spaceRandom(s, `${ptr}/spaces/${i}`);
  });
}

/**
 * @param {unknown} v
 * @param {string} ptr
 */
function random(v, ptr) {
  exact(v, ptr, RANDOM_KEYS, 'random');
  if (!sameShape(array(v.get('torch'), `${ptr}/torch`, 'torch', ['U8'], 1), [TORCH_STATE_BYTES]))
    throw bad(`PyTorch's generator state must have shape [${TORCH_STATE_BYTES}]`, `${ptr}/torch`);
  const cuda = v.get('torch_cuda');
  if (cuda !== null) {
    if (!Array.isArray(cuda)) throw bad('torch_cuda must be null or a list of arrays', `${ptr}/torch_cuda`);
    cuda.forEach((a, i) => {
      if (!sameShape(array(a, `${ptr}/torch_cuda/${i}`, 'a CUDA generator state', ['U8'], 1), [CUDA_STATE_BYTES]))
        throw bad(`a CUDA generator state must have shape [${CUDA_STATE_BYTES}]`, `${ptr}/torch_cuda/${i}`);
    });
  }
  const n = v.get('numpy');
  exact(n, `${ptr}/numpy`, NUMPY_KEYS, 'numpy');
  if (!sameShape(array(n.get('key'), `${ptr}/numpy/key`, 'key', ['U32'], 1), [624n]))
    throw bad("numpy's key must have shape [624]", `${ptr}/numpy/key`);
  const pos = n.get('pos');
  if (!isInt(pos) || intValue(pos) < 0n || intValue(pos) > 624n)
    throw bad("numpy's pos must be an integer in [0, 624]", `${ptr}/numpy/pos`);
  if (typeof n.get('has_gauss') !== 'boolean') throw bad('has_gauss must be a boolean', `${ptr}/numpy/has_gauss`);
  if (!isFiniteLiteral(n.get('cached_gaussian')))
    throw bad('cached_gaussian must be a finite number', `${ptr}/numpy/cached_gaussian`);
  const p = v.get('python');
  exact(p, `${ptr}/python`, PYTHON_KEYS, 'python');
  if (!isInt(p.get('version')) || intValue(p.get('version')) !== 3n)
    throw bad("python's version must be 3", `${ptr}/python/version`);
  if (!sameShape(array(p.get('state'), `${ptr}/python/state`, 'state', ['U32'], 1), [625n]))
    throw bad("python's state must have shape [625]", `${ptr}/python/state`);
  if (p.get('gauss_next') !== null && !isFiniteLiteral(p.get('gauss_next')))
    throw bad('gauss_next must be null or a finite number', `${ptr}/python/gauss_next`);
  for (const k of ['action_space', 'observation_space']) spaceRandom(v.get(k), `${ptr}/${k}`);
}

/**
 * Checks the value under `training` (§3) against the archive's raw `data`
 * object; throws EXTENSION_INVALID with the JSON Pointer of the offending value.
 * @param {unknown} value
 * @param {JsonObject | undefined} data
 */
export function check(value, data) {
  const base = '/' + KEY;
  exact(value, base, KEYS, 'the run state');
  const c = value.get('counters');
  exact(c, `${base}/counters`, COUNTERS, 'counters');
  for (const k of COUNTERS) if (!(k === 'n_calls' && c.get(k) === null)) counter(c.get(k), `${base}/counters/${k}`, k);
  if (!isFloat(value.get('progress_remaining')))
    throw bad('progress_remaining must be a float', `${base}/progress_remaining`);
  const rate = value.get('exploration_rate');
  if (rate !== null && !isFloat(rate))
    throw bad('exploration_rate must be null or a float', `${base}/exploration_rate`);
  const sp = data?.get('observation_space');
  const space = isTagged(sp, 'space') ? sp : null;
  for (const k of ['last_obs', 'last_original_obs']) observation(value.get(k), `${base}/${k}`, space);
  const starts = value.get('last_episode_starts');
  if (starts !== null) {
    // its own rules, then against the observations before it
    const nEnvs = array(starts, `${base}/last_episode_starts`, 'last_episode_starts', ['BOOL'], 1)[0];
    if (['last_obs', 'last_original_obs'].some((k) => firstDims(value.get(k)).some((d) => d !== nEnvs))) {
      throw bad(
        `the observations' first dimension must be the ${nEnvs} environment(s) of last_episode_starts`,
        `${base}/last_episode_starts`,
      );
    }
  }
  deque(value.get('episode_info'), `${base}/episode_info`, 'episode_info', true);
  deque(value.get('episode_success'), `${base}/episode_success`, 'episode_success', false);
  noise(value.get('action_noise'), `${base}/action_noise`);
  lstm(value.get('lstm_states'), `${base}/lstm_states`);
  random(value.get('random'), `${base}/random`);
}

/**
 * §3.7, after `check`: the generators' states accept what their generators
 * accept, reading their element bytes (`content`: extensions/index.js contentOf).
 * Throws EXTENSION_INVALID at the array that breaks a rule (§5 step 6).
 * @param {import('../index.js').Content} content
 * @param {unknown} value the value `check` accepted
 */
export async function checkContent(content, value) {
  const r = /** @type {JsonObject} */ (/** @type {JsonObject} */ (value).get('random'));
  /** @param {unknown} v a checked ndarray */
  const bytes = (v) => /** @type {import('../../decode.js').NDArray} */ (decodeValue(v, content)).load();
  const n = /** @type {JsonObject} */ (r.get('numpy'));
  const p = /** @type {JsonObject} */ (r.get('python'));
  const cuda = /** @type {unknown[] | null} */ (r.get('torch_cuda')) ?? [];
  checkRandom(
    {
      // the dtypes check() accepted: U8 (torch, torch_cuda) and U32
      torch: /** @type {Uint8Array} */ (await bytes(r.get('torch'))),
      torchCuda: /** @type {Uint8Array[]} */ (await Promise.all(cuda.map(bytes))),
      numpyKey: /** @type {Uint32Array} */ (await bytes(n.get('key'))),
      pythonState: /** @type {Uint32Array} */ (await bytes(p.get('state'))),
    },
    `/${KEY}/random`,
    MEMBER,
  );
}
