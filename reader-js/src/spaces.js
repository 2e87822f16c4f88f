// Spaces (§8): checking, in the order of §8 and §11.2: `kind` (missing: at
// the space; unknown: at `kind`), the set of members (missing: at the space;
// not allowed: at the first such member), then each member in the order of
// §8's member column: its type (VALUE_INVALID), its own (S) rules, then its
// agreement with the members before it (SPACE_INVALID at this, the later,
// member). A nested value is checked completely when its member's turn comes.

import { pointerJoin, show } from './errors.js';
import { DTYPES, isDtype } from './dtypes.js';
import { decodeBase64 } from './base64.js';
import { checkShape, exactMembers, valueError, isIntLiteral, isTagged } from './value_rules.js';

/** @typedef {import('./json.js').JsonObject} JsonObject */
/** @typedef {import('./value_rules.js').ValueContext} ValueContext */
/** @typedef {import('./values.js').NdarrayInfo} NdarrayInfo */
/**
 * values.js's checkValue, given to checkSpace for the values inside a space.
 * @typedef {(v: unknown, ptr: string, ctx: ValueContext) => NdarrayInfo | undefined} CheckValue
 */
/**
 * The helpers of one space's checks (see spaceTools). `g` gives a member as parsed: `any`,
 * because each use of a member follows the `need` that checked its type.
 * @typedef {object} SpaceTools
 * @property {(k: string) => string} at
 * @property {(k: string) => any} g
 * @property {(cond: boolean, k: string, what: string) => void} need
 * @property {(cond: boolean, msg: string, k: string) => void} rule
 * @property {(kinds: string[], what: string) => string} dtypeMember
 * @property {(k: string) => NdarrayInfo} ndarray
 * @property {(k: string, least: bigint) => void} integer
 * @property {(x: unknown, k: string) => NdarrayInfo | undefined} value
 * @property {ValueContext} ctx
 */

/**
 * The members of each kind, in the order of §8's member column (the order they are checked in).
 * @type {Readonly<Record<string, string[]>>}
 */
export const SPACE_MEMBERS = Object.freeze({
  box: ['dtype', 'shape', 'low', 'high'],
  discrete: ['n', 'start', 'dtype'],
  multi_discrete: ['dtype', 'nvec', 'start'],
  multi_binary: ['n'],
  dict: ['spaces'],
  tuple: ['spaces'],
  text: ['min_length', 'max_length', 'charset'],
});

/**
 * @param {readonly bigint[]} a
 * @param {readonly bigint[]} b
 */
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

/**
 * The helpers of one space's checks: `at(k)` its pointer (`k` a member, or a
 * path of tokens below the space like 'spaces/0/1': no member name holds '/'),
 * `g(k)` a member, `need` (VALUE_INVALID), `rule` (SPACE_INVALID), and the
 * checks of a dtype member, an ndarray member and an integer member.
 * @param {JsonObject} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @param {string} kind
 * @param {CheckValue} checkValue
 * @returns {SpaceTools}
 */
function spaceTools(v, ptr, ctx, kind, checkValue) {
  /** @param {string} k */
  const at = (k) =>
    String(k)
      .split('/')
      .reduce((p, t) => pointerJoin(p, t), ptr);
  /** @param {string} k */
  const g = (k) => v.get(k);
  /** @type {SpaceTools['need']} */
  const need = (cond, k, what) => {
    if (!cond) throw valueError(ctx, 'VALUE_INVALID', `space member ${k} must be ${what}`, at(k));
  };
  /** @type {SpaceTools['rule']} */
  const rule = (cond, msg, k) => {
    if (!cond) throw valueError(ctx, 'SPACE_INVALID', msg, at(k));
  };
  /** @type {SpaceTools['dtypeMember']} */
  const dtypeMember = (kinds, what) => {
    need(isDtype(g('dtype')), 'dtype', 'a dtype code');
    const dtype = /** @type {string} */ (g('dtype'));
    rule(kinds.includes(DTYPES[dtype].kind), `${kind} dtype must be ${what}`, 'dtype');
    return dtype;
  };
  /** @type {SpaceTools['ndarray']} */
  const ndarray = (k) => {
    need(isTagged(g(k), 'ndarray'), k, 'an ndarray'); // before the value itself is checked
    return /** @type {NdarrayInfo} */ (checkValue(g(k), at(k), ctx));
  };
  /** @type {SpaceTools['integer']} */
  const integer = (k, least) => {
    need(isIntLiteral(g(k)), k, 'an integer');
    rule(/** @type {bigint} */ (g(k)) >= least, `${kind} ${k} must be >= ${least}`, k);
  };
  /** @type {SpaceTools['value']} */
  const value = (x, k) => checkValue(x, at(k), ctx);
  return { at, g, need, rule, dtypeMember, ndarray, integer, value, ctx };
}

/**
 * The checks of each kind's members, in the order of §8's member column (see spaceTools).
 * @type {Record<string, (tools: SpaceTools) => void>}
 */
const KIND_CHECKS = {
  box({ g, at, rule, dtypeMember, ndarray, ctx }) {
    const dt = dtypeMember(['int', 'uint', 'float', 'bool'], 'an integer, float or BOOL dtype');
    checkShape(g('shape'), at('shape'), ctx);
    for (const k of ['low', 'high']) {
      const info = ndarray(k);
      rule(info.dtype === dt && sameShape(info.shape, g('shape')), `box ${k} must have the space's dtype and shape`, k);
    }
  },
  discrete({ g, need, dtypeMember, integer }) {
    integer('n', 1n);
    need(isIntLiteral(g('start')), 'start', 'an integer');
    dtypeMember(['int', 'uint'], 'an integer dtype');
  },
  multi_discrete({ at, rule, dtypeMember, ndarray, ctx }) {
    const dt = dtypeMember(['int', 'uint'], 'an integer dtype');
    const nvec = ndarray('nvec');
    rule(nvec.ref === null, 'multi_discrete nvec must be inline', 'nvec');
    rule(nvec.dtype === dt, "multi_discrete nvec must have the space's dtype", 'nvec');
    checkNvecElements(decodeBase64(/** @type {string} */ (nvec.node.get('base64'))), nvec.dtype, at('nvec'), ctx);
    const start = ndarray('start');
    rule(start.ref === null, 'multi_discrete start must be inline', 'start');
    rule(start.dtype === dt, "multi_discrete start must have the space's dtype", 'start');
    rule(sameShape(nvec.shape, start.shape), 'multi_discrete nvec and start must have equal shapes', 'start');
  },
  multi_binary({ g, need, rule }) {
    const n = g('n');
    if (Array.isArray(n)) {
      // the array's own structure, then each element in turn (§11.2)
      rule(n.length > 0, 'multi_binary n must not be an empty array', 'n');
      n.forEach((/** @type {unknown} */ d, /** @type {number} */ i) => {
        need(isIntLiteral(d), `n/${i}`, 'an integer');
        rule(/** @type {bigint} */ (d) >= 1n, 'every element of multi_binary n must be >= 1', `n/${i}`);
      });
    } else {
      need(isIntLiteral(n), 'n', 'an integer or an array of integers');
      rule(/** @type {bigint} */ (n) >= 1n, 'multi_binary n must be >= 1', 'n');
    }
  },
  dict({ g, need, rule, value }) {
    const sp = g('spaces');
    need(Array.isArray(sp), 'spaces', 'an array of [key, space] pairs');
    const seen = new Set();
    sp.forEach((/** @type {unknown[]} */ pair, /** @type {number} */ i) => {
      need(Array.isArray(pair) && pair.length === 2, `spaces/${i}`, 'a [key, space] pair');
      need(typeof pair[0] === 'string', `spaces/${i}/0`, 'a string');
      rule(!seen.has(pair[0]), 'dict space keys must be unique', `spaces/${i}/0`);
      seen.add(pair[0]);
      need(isTagged(pair[1], 'space'), `spaces/${i}/1`, 'a space');
      value(pair[1], `spaces/${i}/1`);
    });
  },
  tuple({ g, need, value }) {
    const sp = g('spaces');
    need(Array.isArray(sp), 'spaces', 'an array of spaces');
    sp.forEach((/** @type {unknown} */ s, /** @type {number} */ i) => {
      need(isTagged(s, 'space'), `spaces/${i}`, 'a space');
      value(s, `spaces/${i}`);
    });
  },
  text({ g, need, rule, integer }) {
    integer('min_length', 0n);
    need(isIntLiteral(g('max_length')), 'max_length', 'an integer');
    rule(g('max_length') >= g('min_length'), 'text needs min_length <= max_length', 'max_length');
    need(typeof g('charset') === 'string', 'charset', 'a string');
    const cps = Array.from(/** @type {string} */ (g('charset')), (c) => /** @type {number} */ (c.codePointAt(0)));
    rule(
      cps.length > 0 && cps.every((c, i) => i === 0 || cps[i - 1] < c),
      'text charset must be non-empty, ascending, without repeats',
      'charset',
    );
  },
};

/**
 * Checks a space value (§8). `checkValue` (values.js) checks the values
 * inside it (bounds, nested spaces) in their turn.
 * @param {JsonObject} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @param {CheckValue} checkValue
 * @returns {undefined}
 */
export function checkSpace(v, ptr, ctx, checkValue) {
  if (!v.has('kind')) throw valueError(ctx, 'VALUE_INVALID', 'a space needs the member "kind"', ptr);
  const kind = v.get('kind');
  if (typeof kind !== 'string' || !Object.hasOwn(SPACE_MEMBERS, kind)) {
    throw valueError(ctx, 'VALUE_INVALID', `unknown space kind ${show(kind)}`, pointerJoin(ptr, 'kind'));
  }
  exactMembers(v, ['kind', ...SPACE_MEMBERS[kind]], [], ptr, ctx, `${kind} space`);
  KIND_CHECKS[kind](spaceTools(v, ptr, ctx, kind, checkValue));
}

/**
 * Checks that every element of a multi_discrete nvec (its little-endian element bytes) is >= 1.
 * @param {Uint8Array} raw
 * @param {string} dtype
 * @param {string} pointer
 * @param {{member?: string}} ctx
 */
export function checkNvecElements(raw, dtype, pointer, ctx) {
  const size = DTYPES[dtype].size;
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  for (let o = 0; o < raw.byteLength; o += size) {
    let x;
    switch (dtype) {
      case 'I8':
        x = dv.getInt8(o);
        break;
      case 'U8':
        x = dv.getUint8(o);
        break;
      case 'I16':
        x = dv.getInt16(o, true);
        break;
      case 'U16':
        x = dv.getUint16(o, true);
        break;
      case 'I32':
        x = dv.getInt32(o, true);
        break;
      case 'U32':
        x = dv.getUint32(o, true);
        break;
      case 'I64':
        x = dv.getBigInt64(o, true);
        break;
      default:
        x = dv.getBigUint64(o, true);
        break;
    }
    if (x < 1) throw valueError(ctx, 'SPACE_INVALID', 'every element of multi_discrete nvec must be >= 1', pointer);
  }
}
