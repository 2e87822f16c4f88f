// Spaces (§8): checking. Order: kind, members, member types (nested values
// checked where they stand), then the rules marked (S).

import { pointerJoin, show } from './errors.js';
import { DTYPES, isDtype, isIntegerDtype } from './dtypes.js';
import { decodeBase64 } from './base64.js';
import { checkValue, exactMembers, valueError, isIntLiteral, isTagged } from './values.js';

export const SPACE_MEMBERS = Object.freeze({
  box: ['dtype', 'shape', 'low', 'high'],
  discrete: ['n', 'start', 'dtype'],
  multi_discrete: ['nvec', 'start', 'dtype'],
  multi_binary: ['n'],
  dict: ['spaces'],
  tuple: ['spaces'],
  text: ['min_length', 'max_length', 'charset'],
});

const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

/** Checks a space value (§8). */
export function checkSpace(v, ptr, ctx) {
  const kind = v.get('kind');
  if (typeof kind !== 'string' || !Object.prototype.hasOwnProperty.call(SPACE_MEMBERS, kind)) {
    throw valueError(ctx, 'VALUE_INVALID', `unknown space kind ${show(kind)}`, ptr);
  }
  exactMembers(v, ['kind', ...SPACE_MEMBERS[kind]], [], ptr, ctx, `${kind} space`);
  const at = (k) => pointerJoin(ptr, k);
  const g = (k) => v.get(k);
  const need = (cond, k, what) => {
    if (!cond) throw valueError(ctx, 'VALUE_INVALID', `space member ${k} must be ${what}`, at(k));
  };
  const rule = (cond, msg, k) => {
    if (!cond) throw valueError(ctx, 'SPACE_INVALID', msg, k === undefined ? ptr : at(k));
  };
  const ndarray = (k) => {
    need(isTagged(g(k), 'ndarray'), k, 'an ndarray');
    return checkValue(g(k), at(k), ctx);
  };
  switch (kind) {
    case 'box': {
      need(isDtype(g('dtype')), 'dtype', 'a dtype code');
      need(Array.isArray(g('shape')) && g('shape').every((d) => isIntLiteral(d, 0n)), 'shape', 'an array of integers >= 0');
      const low = ndarray('low'), high = ndarray('high');
      rule(DTYPES[g('dtype')].kind !== 'complex', 'box dtype must be an integer, float or BOOL dtype', 'dtype');
      for (const [k, info] of [['low', low], ['high', high]]) {
        rule(info.dtype === g('dtype') && sameShape(info.shape, g('shape')), `box ${k} must have the space's dtype and shape`, k);
      }
      break;
    }
    case 'discrete':
      need(isIntLiteral(g('n')), 'n', 'an integer');
      need(isIntLiteral(g('start')), 'start', 'an integer');
      need(isDtype(g('dtype')), 'dtype', 'a dtype code');
      rule(g('n') >= 1n, 'discrete n must be >= 1', 'n');
      rule(isIntegerDtype(g('dtype')), 'discrete dtype must be an integer dtype', 'dtype');
      break;
    case 'multi_discrete': {
      need(isDtype(g('dtype')), 'dtype', 'a dtype code');
      const nvec = ndarray('nvec'), start = ndarray('start');
      rule(isIntegerDtype(g('dtype')), 'multi_discrete dtype must be an integer dtype', 'dtype');
      for (const [k, info] of [['nvec', nvec], ['start', start]]) {
        rule(info.ref === null, `multi_discrete ${k} must be inline`, k);
        rule(info.dtype === g('dtype'), `multi_discrete ${k} must have the space's dtype`, k);
      }
      rule(sameShape(nvec.shape, start.shape), 'multi_discrete nvec and start must have equal shapes', 'start');
      checkNvecElements(decodeBase64(nvec.node.get('base64')), nvec.dtype, at('nvec'), ctx);
      break;
    }
    case 'multi_binary': {
      const n = g('n');
      need(isIntLiteral(n) || (Array.isArray(n) && n.every((d) => isIntLiteral(d))), 'n', 'an integer or an array of integers');
      rule(Array.isArray(n) ? n.length > 0 && n.every((d) => d >= 1n) : n >= 1n, 'multi_binary n must be >= 1', 'n');
      break;
    }
    case 'dict':
    case 'tuple': {
      const sp = g('spaces');
      const pair = (p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string';
      need(Array.isArray(sp) && (kind === 'tuple' || sp.every(pair)), 'spaces', kind === 'dict' ? 'an array of [key, space] pairs' : 'an array of spaces');
      sp.forEach((e, i) => {
        const s = kind === 'dict' ? e[1] : e;
        const rel = kind === 'dict' ? `spaces/${i}/1` : `spaces/${i}`;
        if (!isTagged(s, 'space')) throw valueError(ctx, 'VALUE_INVALID', `space member ${rel} must be a space`, `${ptr}/${rel}`);
        checkValue(s, `${ptr}/${rel}`, ctx);
      });
      if (kind === 'dict') {
        const keys = new Set(sp.map((p) => p[0]));
        rule(keys.size === sp.length, 'dict space keys must be unique', 'spaces');
      }
      break;
    }
    case 'text': {
      need(isIntLiteral(g('min_length')), 'min_length', 'an integer');
      need(isIntLiteral(g('max_length')), 'max_length', 'an integer');
      need(typeof g('charset') === 'string', 'charset', 'a string');
      const lo = g('min_length'), hi = g('max_length');
      rule(lo >= 0n && lo <= hi, 'text needs 0 <= min_length <= max_length', 'min_length');
      const cps = Array.from(g('charset'), (c) => c.codePointAt(0));
      rule(cps.length > 0 && cps.every((c, i) => i === 0 || cps[i - 1] < c), 'text charset must be non-empty, ascending, without repeats', 'charset');
      break;
    }
  }
}

/** Checks that every element of a multi_discrete nvec (its little-endian element bytes) is >= 1. */
export function checkNvecElements(raw, dtype, pointer, ctx) {
  const size = DTYPES[dtype].size;
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  for (let o = 0; o < raw.byteLength; o += size) {
    let x;
    switch (dtype) {
      case 'I8': x = dv.getInt8(o); break;
      case 'U8': x = dv.getUint8(o); break;
      case 'I16': x = dv.getInt16(o, true); break;
      case 'U16': x = dv.getUint16(o, true); break;
      case 'I32': x = dv.getInt32(o, true); break;
      case 'U32': x = dv.getUint32(o, true); break;
      case 'I64': x = dv.getBigInt64(o, true); break;
      default: x = dv.getBigUint64(o, true); break;
    }
    if (x < 1) throw valueError(ctx, 'SPACE_INVALID', 'every element of multi_discrete nvec must be >= 1', pointer);
  }
}
