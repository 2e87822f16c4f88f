// The spaces of a portable policy description (extension RLA_policy §4, §6),
// for description.js; the twin of python/rlarchive/extensions/policy/spaces.py.
//
// The shapes of the preprocessed observations a description takes, the width
// of the vector each head reads from its action space, and the outline of a
// space that VecNormalize statistics depend on; with the errors of the member
// (EXTENSION_INVALID, LIMIT_EXCEEDED) located by JSON Pointer. Which heads
// exist comes from the registry (ops.js).

import { fail } from '../../errors.js';
import { decodeBase64 } from '../../base64.js';
import { INTEGER_CODES, viewElements } from '../../dtypes.js';
import { isMap, isTagged } from '../../values.js';
import { HEADS, MAX_POLICY_VALUE_ELEMENTS, implementations } from './ops.js';

/** The extension's one member. */
export const MEMBER = 'extensions/RLA_policy/policy.json';
/** Integers beyond are refused alike by both readers. */
export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const OBS_KINDS = ['box', 'discrete', 'multi_discrete', 'multi_binary'];

/**
 * An object of the parsed description (json.js: a Map, integer literals as bigint). Its members are whatever the
 * file holds; each is read where this module or description.js checks it, so they are typed loosely.
 * @typedef {Map<string, any>} JsonMap
 */
/**
 * The shape (without batch) of a value of the description: an array of dimensions, or a recurrent state's
 * {state: [layers, hidden]}.
 * @typedef {number[] | {state: number[]}} ValueShape
 */

/**
 * An EXTENSION_INVALID error of the member at a JSON Pointer.
 * @param {string} msg
 * @param {string} pointer
 */
export const bad = (msg, pointer) => fail('EXTENSION_INVALID', msg, { member: MEMBER, pointer });
/**
 * @param {unknown} v
 * @returns {v is bigint}
 */
export const isInt = (v) => typeof v === 'bigint';
/**
 * @param {unknown} v
 * @returns {v is JsonMap}
 */
export const isPlainMap = (v) => isMap(v) && !(/** @type {JsonMap} */ (v).has('$type'));
/**
 * @param {unknown} v
 * @returns {v is string}
 */
export const isName = (v) => typeof v === 'string' && v !== '';

/** @param {number | bigint} v */
const num = (v) => Number(v);
/** @param {number[]} shape */
const prod = (shape) => shape.reduce((a, b) => a * b, 1);
/**
 * A shape in a message.
 * @param {unknown[]} shape
 */
export const show = (shape) => `[${shape.join(', ')}]`;
/**
 * @param {unknown[]} a
 * @param {unknown[]} b
 */
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
/**
 * A recurrent state's shape ({state: [layers, hidden]}) rather than an array.
 * @param {ValueShape | undefined} shape
 * @returns {shape is {state: number[]}}
 */
export const isState = (shape) => !Array.isArray(shape);

/**
 * The integers of an inline ndarray (multi_discrete nvec is always inline, §8).
 * @param {JsonMap} nd
 * @returns {number[]}
 */
export function inlineInts(nd) {
  return Array.from(viewElements(nd.get('dtype'), decodeBase64(nd.get('base64'))), Number);
}

/** Box dtypes the portable policy takes observations of, and acts in (float actions only). */
export const OBSERVATION_DTYPES = Object.freeze(['BOOL', ...INTEGER_CODES, 'F32', 'F64']);
export const ACTION_DTYPES = Object.freeze(['F32', 'F64']);

/**
 * The member of a space that gives the size of its preprocessed observation (RLA_policy §4), where a limit on it is located.
 * @type {Record<string, string>}
 */
const SIZE_MEMBER = { box: 'shape', discrete: 'n', multi_discrete: 'nvec', multi_binary: 'n' };

/**
 * The shape a space's observations have once preprocessed (RLA_policy §4). A space the portable policy does not
 * take is refused at the member that makes it so (§8): its kind, a box's dtype, a Discrete n beyond 2^53; a
 * preprocessed observation above MAX_POLICY_VALUE_ELEMENTS at the member that gives its size.
 * @param {JsonMap} sp
 * @param {string} ptr
 * @returns {number[]}
 */
export function spaceShape(sp, ptr) {
  const kind = sp.get('kind');
  if (!OBS_KINDS.includes(kind)) throw bad(`the portable policy takes no ${kind} observations`, `${ptr}/kind`);
  /** @type {number[]} */
  let shape;
  if (kind === 'box') {
    if (!OBSERVATION_DTYPES.includes(sp.get('dtype')))
      throw bad(`the portable policy takes no Box observations of dtype ${sp.get('dtype')}`, `${ptr}/dtype`);
    shape = sp.get('shape').map(num);
  } else if (kind === 'discrete') {
    if (!isInt(sp.get('n'))) throw bad('a Discrete observation space of more than 2^53 values', `${ptr}/n`);
    shape = [num(sp.get('n'))];
  } else if (kind === 'multi_discrete') {
    shape = [inlineInts(sp.get('nvec')).reduce((a, b) => a + b, 0)];
  } else {
    const n = sp.get('n');
    shape = isInt(n) ? [num(n)] : n.map(num);
  }
  bounded(shape, `${ptr}/${SIZE_MEMBER[kind]}`);
  return shape;
}

/**
 * Refuses a value of more than MAX_POLICY_VALUE_ELEMENTS elements (LIMIT_EXCEEDED at `ptr`); a recurrent state passes.
 * @param {ValueShape} shape
 * @param {string} ptr
 */
export function bounded(shape, ptr) {
  if (!isState(shape) && prod(shape) > MAX_POLICY_VALUE_ELEMENTS)
    throw limit(`a value of shape ${show(shape)} has more than MAX_POLICY_VALUE_ELEMENTS elements`, ptr);
}

/**
 * A LIMIT_EXCEEDED error of the member at a JSON Pointer.
 * @param {string} msg
 * @param {string} pointer
 */
export const limit = (msg, pointer) => fail('LIMIT_EXCEEDED', msg, { member: MEMBER, pointer });

/**
 * Name -> shape of the preprocessed observation(s).
 * @param {unknown} space
 * @param {string} ptr
 * @returns {Map<string, ValueShape>}
 */
export function observationShapes(space, ptr) {
  if (!isTagged(space, 'space')) throw bad('observation_space must be a space', ptr);
  const sp = /** @type {JsonMap} */ (space);
  if (sp.get('kind') === 'dict')
    return new Map(
      sp
        .get('spaces')
        .map((/** @type {[string, JsonMap]} */ [key, sub], /** @type {number} */ i) => [
          `obs.${key}`,
          spaceShape(sub, `${ptr}/spaces/${i}/1`),
        ]),
    );
  return new Map([['obs', spaceShape(sp, ptr)]]);
}

/** The number of values of a Discrete space, or of binary values of a MultiBinary (the product, when n is an array). */
/** @param {JsonMap} sp */
const spaceN = (sp) => (isInt(sp.get('n')) ? num(sp.get('n')) : prod(sp.get('n').map(num)));

/**
 * The width of the vector a head reads, for its action space `sp`, checking what the head's parameters say of the space.
 * @typedef {(head: JsonMap, sp: JsonMap, ptr: string) => number} HeadWidth
 */
/** Head -> the width of the vector it reads, for its action space (checking what the head's parameters say of the space). */
export const HEAD_WIDTHS = implementations(
  HEADS,
  /** @type {Record<string, HeadWidth>} */ ({
    argmax: (head, sp) => num(sp.get('n')),
    quantile_argmax: (head, sp) => num(head.get('n_quantiles')) * num(sp.get('n')),
    multi_argmax: (head, sp, ptr) => {
      // for a multi_binary space (MaskablePPO): a categorical over {0, 1} per binary action; nvec in C order
      const nvec = sp.get('kind') === 'multi_binary' ? new Array(spaceN(sp)).fill(2) : inlineInts(sp.get('nvec'));
      if (!sameList(head.get('sizes').map(num), nvec))
        throw bad(`sizes must be the action space's nvec ${show(nvec)}`, `${ptr}/sizes`);
      return nvec.reduce((a, b) => a + b, 0);
    },
    bernoulli: (head, sp) => spaceN(sp),
    box: (head, sp, ptr) => {
      if (!ACTION_DTYPES.includes(sp.get('dtype')))
        throw bad(`a box head acts in an F32 or F64 action space, not ${sp.get('dtype')}`, ptr);
      return prod(sp.get('shape').map(num));
    },
  }),
  'heads of the description checker',
);

/**
 * What the VecNormalize statistics depend on in a space value: its kind, a box's shape, a dict's keys and their outlines.
 * @param {unknown} space
 * @returns {unknown[] | null}
 */
export function outline(space) {
  if (!isTagged(space, 'space')) return null;
  const sp = /** @type {JsonMap} */ (space);
  const kind = sp.get('kind');
  if (kind === 'box') return ['box', sp.get('shape').map(num)];
  if (kind === 'dict')
    return ['dict', sp.get('spaces').map((/** @type {[string, unknown]} */ [k, s]) => [k, outline(s)])];
  return [kind];
}
