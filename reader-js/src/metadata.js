// The metadata keys spec/metadata.md defines: provenance and evaluations.
//
// checkMetadata() gives one METADATA_INVALID warning (member manifest.json,
// pointer /metadata/KEY) per defined key whose value breaks its format, in the
// order of the metadata object; provenance() and evaluations() give the
// well-formed defined values as plain JavaScript values (a malformed one is
// left out: its warning says why). An environment id is a hint for the user:
// nothing here resolves it.

import { pointerJoin, RlarchiveError } from './errors.js';
import { parseJson } from './json.js';

export const MAX_WRAPPERS = 64;
export const MAX_EVALUATIONS = 1024;
export const MAX_EPISODES = 1000000;
const INT64_MAX = (1n << 63n) - 1n;
const NON_NEGATIVE = /^(0|[1-9][0-9]{0,18})$/;
const SIGNED = /^(0|-?[1-9][0-9]{0,18})$/;
const VERSION_NAME = /^[a-z0-9_]{1,64}$/;
const VERSION = /^[0-9A-Za-z.+!_-]{1,64}$/;
const CONTROL = /[\x00-\x1f\x7f]/;
const DATE = /^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z$/;
const CHANNELS = ['first', 'last'];
const LICENSE = /^[A-Za-z0-9][A-Za-z0-9.+-]{0,63}$/;
/** The parts an inference-only rewrite can drop (spec/metadata.md §7), in the order `dropped` lists them. */
const DROPPABLE_PARTS = ['training', 'replay_buffer', 'optimizers', 'opaque'];

/**
 * A manifest's metadata: its `metadata` object (a Map, as json.js parses it, or a plain object) of strings.
 * @typedef {Map<string, string> | Readonly<Record<string, string>> | null | undefined} Metadata
 */
/** @typedef {import('../index.js').Provenance} Provenance The provenance of spec/metadata.md §1 (see provenance()). */
/** @typedef {import('../index.js').Wrapper} Wrapper */
/** @typedef {import('../index.js').Evaluation} Evaluation One evaluation of spec/metadata.md §3 (see evaluations()). */
/** @typedef {import('./json.js').JsonObject} JsonObject */

class Bad extends Error {}

/**
 * @param {unknown} v
 * @param {string} what
 * @returns {string}
 */
function text(v, what, most = 256) {
  if (typeof v !== 'string' || CONTROL.test(v))
    throw new Bad(`${what} must be 1 to ${most} characters without control characters`);
  const n = [...v].length;
  if (n < 1 || n > most) throw new Bad(`${what} must be 1 to ${most} characters without control characters`);
  return v;
}

/**
 * @param {string} v
 * @param {RegExp} pattern
 * @param {number | null} least
 * @param {string} what
 * @returns {bigint}
 */
function decimal(v, pattern, least, what) {
  if (!pattern.test(v))
    throw new Bad(
      `${what} must be a decimal integer (no sign, spaces or leading zeros), not ${JSON.stringify(v.slice(0, 40))}`,
    );
  const n = BigInt(v);
  if ((n < 0n ? -n : n) > INT64_MAX || (least !== null && n < BigInt(least)))
    throw new Bad(`${what} is out of range: ${v.slice(0, 40)}`);
  return n;
}

/**
 * @param {unknown} v
 * @returns {v is bigint}
 */
const isInt = (v) => typeof v === 'bigint';
/**
 * @param {unknown} v
 * @returns {v is bigint | number}
 */
const isNumber = (v) => typeof v === 'bigint' || typeof v === 'number';
/**
 * @param {unknown} v
 * @returns {v is JsonObject}
 */
const isObject = (v) => v instanceof Map;

/**
 * The json.js tree of a JSON text inside a metadata value.
 * @param {string} v
 * @param {string} what
 * @returns {unknown}
 */
function json(v, what) {
  try {
    return parseJson(new TextEncoder().encode(v));
  } catch (e) {
    if (e instanceof RlarchiveError) throw new Bad(`${what} is not a JSON text of spec §6 (${e.code}: ${e.message})`);
    throw e;
  }
}

/**
 * @param {unknown} w
 * @param {number} i
 * @returns {JsonObject}
 */
function wrapper(w, i) {
  const at = `wrapper ${i}`;
  if (!isObject(w)) throw new Bad(`${at} must be an object`);
  text(w.get('name'), `the name of ${at}`);
  if (w.get('name') === 'VecFrameStack') {
    const n = w.get('n_stack');
    if (!isInt(n) || n < 1n || n > 65536n)
      throw new Bad(`${at} (VecFrameStack) needs n_stack, an integer from 1 to 65536`);
    const order = w.get('channels_order');
    /** @param {unknown} o */
    const isChannels = (o) => CHANNELS.includes(/** @type {string} */ (o));
    const ok = isChannels(order) || (isObject(order) && [...order.values()].every(isChannels));
    if (!ok)
      throw new Bad(
        `${at} (VecFrameStack) needs channels_order, "first", "last", or an object of them by observation key`,
      );
  } else if (w.get('name') === 'VecNormalize') {
    for (const k of ['norm_obs', 'norm_reward']) {
      if (w.has(k) && typeof w.get(k) !== 'boolean') throw new Bad(`${at} (VecNormalize): ${k} must be a boolean`);
    }
  }
  return w;
}

/** @param {string} v */
function wrapperList(v) {
  const doc = json(v, 'wrappers');
  if (!Array.isArray(doc) || doc.length > MAX_WRAPPERS)
    throw new Bad(`wrappers must be a JSON array of at most ${MAX_WRAPPERS} objects`);
  return doc.map(wrapper);
}

/**
 * @param {unknown} e
 * @param {number} i
 * @returns {JsonObject}
 */
function evaluation(e, i) {
  const at = `evaluation ${i}`;
  if (!isObject(e)) throw new Bad(`${at} must be an object`);
  text(e.get('env_id'), `the env_id of ${at}`);
  const n = e.get('episodes');
  if (!isInt(n) || n < 1n || n > BigInt(MAX_EPISODES))
    throw new Bad(`${at}: episodes must be an integer from 1 to ${MAX_EPISODES}`);
  const count = Number(n);
  const seeds = e.has('seeds') ? e.get('seeds') : false;
  if (seeds !== null && !(Array.isArray(seeds) && seeds.length === count && seeds.every(isInt)))
    throw new Bad(`${at}: seeds must be null or an array of ${count} integers`);
  if (typeof e.get('deterministic') !== 'boolean') throw new Bad(`${at}: deterministic must be a boolean`);
  if (!isNumber(e.get('mean'))) throw new Bad(`${at}: mean must be a number`);
  const std = e.get('std');
  if (!isNumber(std) || std < 0) throw new Bad(`${at}: std must be a number of at least 0`);
  const returns = e.get('returns'),
    lengths = e.get('lengths');
  if (!(Array.isArray(returns) && returns.length === count && returns.every(isNumber)))
    throw new Bad(`${at}: returns must be an array of ${count} numbers`);
  if (!(Array.isArray(lengths) && lengths.length === count && lengths.every((x) => isInt(x) && x >= 0n)))
    throw new Bad(`${at}: lengths must be an array of ${count} integers of at least 0`);
  const ev = e.get('evaluator');
  if (!isObject(ev)) throw new Bad(`${at}: evaluator must be an object with name and version`);
  text(ev.get('name'), `the evaluator name of ${at}`);
  text(ev.get('version'), `the evaluator version of ${at}`);
  const date = e.get('date');
  if (typeof date !== 'string' || !DATE.test(date))
    throw new Bad(`${at}: date must be a UTC time YYYY-MM-DDTHH:MM:SSZ`);
  return e;
}

/** @param {string} v */
function evaluationList(v) {
  const doc = json(v, 'evaluations');
  if (!Array.isArray(doc) || doc.length > MAX_EVALUATIONS)
    throw new Bad(`evaluations must be a JSON array of at most ${MAX_EVALUATIONS} objects`);
  return doc.map(evaluation);
}

/**
 * @param {string} v
 * @param {string} what
 * @returns {JsonObject}
 */
function jsonObject(v, what) {
  const doc = json(v, what);
  if (!isObject(doc)) throw new Bad(`${what} must be a JSON object`);
  return doc;
}

/** The values of `part`: what of an agent the archive holds (spec/metadata.md §8). */
export const PARTS = ['model', 'replay_buffer', 'vec_normalize', 'policy'];

/** @param {string} v */
function part(v) {
  if (!PARTS.includes(v))
    throw new Bad(`part must be one of ${PARTS.join(', ')}, not ${JSON.stringify(v.slice(0, 40))}`);
  return v;
}

/** @param {string} v */
function license(v) {
  if (!LICENSE.test(v))
    throw new Bad(
      `license must be a licence identifier: 1 to 64 of A-Z, a-z, 0-9, '.', '+', '-' beginning with a letter or digit, not ${JSON.stringify(v.slice(0, 40))}`,
    );
  return v;
}

/** @param {string} v */
function dropped(v) {
  const doc = json(v, 'dropped');
  const ordered = Array.isArray(doc) ? DROPPABLE_PARTS.filter((p) => doc.includes(p)) : [];
  if (!Array.isArray(doc) || doc.length !== ordered.length || doc.some((p, i) => p !== ordered[i]))
    throw new Bad(
      `dropped must be a JSON array of distinct part names from ${DROPPABLE_PARTS.join(', ')}, in that order`,
    );
  return doc;
}

/**
 * The format of each key spec/metadata.md defines (but `versions.NAME`): parses a value, throws Bad when it breaks it.
 * @type {Record<string, (v: string) => unknown>}
 */
const FORMATS = {
  env_id: (v) => text(v, 'env_id'),
  n_envs: (v) => decimal(v, NON_NEGATIVE, 1, 'n_envs'),
  num_timesteps: (v) => decimal(v, NON_NEGATIVE, 0, 'num_timesteps'),
  seed: (v) => decimal(v, SIGNED, null, 'seed'),
  wrappers: wrapperList,
  evaluations: evaluationList,
  'zoo.config': (v) => jsonObject(v, 'zoo.config'),
  'zoo.env_kwargs': (v) => jsonObject(v, 'zoo.env_kwargs'),
  part,
  license,
  dropped,
};

/**
 * Whether spec/metadata.md defines `key`.
 * @param {string} key
 * @returns {boolean}
 */
export function isDefined(key) {
  return Object.hasOwn(FORMATS, key) || key.startsWith('versions.');
}

/**
 * @param {string} key
 * @param {string} value
 * @returns {unknown}
 */
function parse(key, value) {
  if (key.startsWith('versions.')) {
    const name = key.slice('versions.'.length);
    if (!VERSION_NAME.test(name))
      throw new Bad(
        `a versions key names a library in 1 to 64 of a-z, 0-9 and _, not ${JSON.stringify(name.slice(0, 40))}`,
      );
    if (!VERSION.test(value))
      throw new Bad(
        `a version must be 1 to 64 characters of letters, digits and . + ! _ -, not ${JSON.stringify(value.slice(0, 40))}`,
      );
    return value;
  }
  return FORMATS[key](value);
}

/**
 * The METADATA_INVALID warning for one entry, or null (also for keys the spec does not define).
 * @param {string} key
 * @param {string} value
 * @returns {RlarchiveError | null}
 */
export function checkMetadataValue(key, value) {
  if (!isDefined(key)) return null;
  try {
    parse(key, value);
    return null;
  } catch (e) {
    if (!(e instanceof Bad)) throw e;
    return new RlarchiveError('METADATA_INVALID', `metadata ${key}: ${e.message}`, {
      member: 'manifest.json',
      pointer: pointerJoin('/metadata', key),
    });
  }
}

/**
 * One METADATA_INVALID warning per defined key whose value breaks its format, in the metadata's order. `metadata`: a Map or an object of strings.
 * @param {Metadata} metadata
 * @returns {RlarchiveError[]}
 */
export function checkMetadata(metadata) {
  const entries = metadata instanceof Map ? [...metadata] : Object.entries(metadata ?? {});
  return entries.map(([k, v]) => checkMetadataValue(k, v)).filter((w) => w !== null);
}

/**
 * A json.js tree inside a JSON text of spec/metadata.md as plain JavaScript (integer literals there are within ±(2^53−1), so Number is exact).
 * @param {unknown} v
 * @returns {unknown}
 */
function plain(v) {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) {
    /** @type {Record<string, unknown>} */
    const o = {};
    for (const [k, x] of v)
      Object.defineProperty(o, k, { value: plain(x), enumerable: true, writable: true, configurable: true });
    return o;
  }
  return v;
}

/**
 * A count or integer as a number when it is a safe integer, else a bigint (up to 2^63 − 1 in magnitude).
 * @param {bigint} n
 * @returns {number | bigint}
 */
function integer(n) {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

/**
 * @param {Metadata} metadata
 * @returns {[string, string][]}
 */
function entriesOf(metadata) {
  return metadata instanceof Map ? [...metadata] : Object.entries(metadata ?? {});
}

/**
 * The well-formed value of defined `key` (parsed), or null when absent or malformed.
 * @param {Metadata} metadata
 * @param {string} key
 * @returns {unknown}
 */
function wellFormed(metadata, key) {
  const found = entriesOf(metadata).find(([k]) => k === key);
  if (!found) return null;
  try {
    return parse(key, found[1]);
  } catch (e) {
    if (!(e instanceof Bad)) throw e;
    return null;
  }
}

/**
 * The provenance spec/metadata.md §1 defines, from a manifest's metadata (a Map
 * or an object of strings): `{envId, nEnvs, numTimesteps, seed, versions,
 * wrappers}`. A key that is absent or malformed (then checkMetadata() has its
 * METADATA_INVALID warning) is null; `versions` holds the well-formed
 * `versions.NAME` entries by NAME ({} when none). Counts and the seed are
 * numbers, or bigints beyond ±(2^53 − 1). `envId` is a hint: nothing resolves it.
 * @param {Metadata} metadata
 * @returns {Provenance}
 */
export function provenance(metadata) {
  /** @param {string} key a key whose format gives a bigint */
  const count = (key) => {
    const n = /** @type {bigint | null} */ (wellFormed(metadata, key));
    return n === null ? null : integer(n);
  };
  /** @type {Record<string, string>} */
  const versions = {};
  for (const [k, v] of entriesOf(metadata)) {
    if (k.startsWith('versions.') && checkMetadataValue(k, v) === null) {
      Object.defineProperty(versions, k.slice('versions.'.length), {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  const wrappersValue = wellFormed(metadata, 'wrappers');
  return {
    envId: /** @type {string | null} */ (wellFormed(metadata, 'env_id')),
    nEnvs: count('n_envs'),
    numTimesteps: count('num_timesteps'),
    seed: count('seed'),
    versions,
    wrappers: wrappersValue === null ? null : /** @type {Wrapper[]} */ (plain(wrappersValue)), // well-formed
  };
}

/**
 * What of an agent an archive holds: its metadata `part` (spec/metadata.md §8),
 * `'model'` when absent. Throws the METADATA_INVALID error for a value that is
 * not one of PARTS (as Python's `metadata.part_of`).
 * @param {Metadata} metadata
 * @returns {string}
 */
export function partOf(metadata) {
  const value = entriesOf(metadata).find(([k]) => k === 'part')?.[1];
  if (value === undefined) return 'model';
  const warning = checkMetadataValue('part', value);
  if (warning !== null) throw warning;
  return value;
}

/**
 * The evaluations of spec/metadata.md §3 (oldest first) as plain objects with
 * the spec's member names (`env_id`, `episodes`, `seeds`, `deterministic`,
 * `mean`, `std`, `returns`, `lengths`, `evaluator`, `date`, and any other
 * member the object has); [] when the key is absent or malformed.
 * @param {Metadata} metadata
 * @returns {Evaluation[]}
 */
export function evaluations(metadata) {
  const v = wellFormed(metadata, 'evaluations');
  return v === null ? [] : /** @type {Evaluation[]} */ (plain(v));
}

/**
 * The latest evaluation of each environment, in the order the environments first appear (as a model card's results).
 * @template {{env_id: string}} E
 * @param {Iterable<E>} evals
 * @returns {E[]}
 */
export function latestByEnvironment(evals) {
  /** @type {Map<string, E>} */
  const latest = new Map();
  for (const e of evals) latest.set(e.env_id, e); // a Map keeps the order keys were first set
  return [...latest.values()];
}
