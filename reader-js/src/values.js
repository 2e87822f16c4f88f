// The data document (§7.1) and the value model (§7.2–§7.8): checking.
//
// Works on the tree of json.js (bigint = integer literal, number = float
// literal, Map = object). Values are checked in document order, depth first;
// references (and checks that need referenced bytes) are collected in
// `ctx.references` in document order for step 9 of §11.1. The rules every
// kind of value shares are in value_rules.js; spaces.js and schedules.js
// check their tagged values and are given checkValue for the values inside.

import { fail, pointerJoin, show } from './errors.js';
import { MAX_INT_DIGITS, MAX_INLINE_ARRAY_BYTES, MAX_SAFE_INTEGER_BIG } from './limits.js';
import { DTYPES, isDtype } from './dtypes.js';
import { isCanonicalBase64, base64Length } from './base64.js';
import { checkSpace } from './spaces.js';
import { checkSchedule } from './schedules.js';
import { checkShape, elementCount, exactMembers, isMap, isTagged, valueError } from './value_rules.js';

/** @typedef {import('./json.js').JsonObject} JsonObject */
/** @typedef {import('./value_rules.js').ValueContext} ValueContext */
/**
 * A reference of data.json (spec §7.6): the JSON Pointer of its ndarray value, the tensor it names, the dtype and shape it declares.
 * @typedef {import('../index.js').Reference} Reference
 */
/**
 * What checkValue tells of a checked ndarray: its dtype and shape, the tensor it names (null when inline) and the value itself.
 * @typedef {{dtype: string, shape: bigint[], ref: {group: string, name: string} | null, node: JsonObject}} NdarrayInfo
 */

export { checkShape, elementCount, exactMembers, isIntLiteral, isMap, isTagged, valueError } from './value_rules.js';

/**
 * Whether `s` has more than `n` Unicode code points (spec §7.6 counts code points, not UTF-16 units).
 * @param {string} s
 * @param {number} n
 */
function codePointsOver(s, n) {
  if (s.length <= n) return false; // code points <= UTF-16 units
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    if (++count > n) return true;
  }
  return false;
}

export const TAGS = [
  'float',
  'int',
  'bytes',
  'tuple',
  'dict',
  'ndarray',
  'scalar',
  'space',
  'schedule',
  'class',
  'opaque',
];

/**
 * @param {JsonObject} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @returns {undefined}
 */
function checkFloatTag(v, ptr, ctx) {
  exactMembers(v, ['value'], [], ptr, ctx, 'float');
  const s = v.get('value');
  if (s !== 'nan' && s !== 'inf' && s !== '-inf')
    throw valueError(ctx, 'VALUE_INVALID', 'a tagged float must be "nan", "inf" or "-inf"', pointerJoin(ptr, 'value'));
}

/**
 * @param {JsonObject} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @returns {undefined}
 */
function checkIntTag(v, ptr, ctx) {
  exactMembers(v, ['value'], [], ptr, ctx, 'int');
  const s = v.get('value');
  if (typeof s !== 'string' || !/^-?[1-9][0-9]*$/.test(s))
    throw valueError(ctx, 'VALUE_INVALID', 'a tagged int must be a decimal string', pointerJoin(ptr, 'value'));
  const digits = s[0] === '-' ? s.length - 1 : s.length;
  if (digits > MAX_INT_DIGITS)
    throw valueError(
      ctx,
      'LIMIT_EXCEEDED',
      `${digits} digits exceed the limit of ${MAX_INT_DIGITS}`,
      pointerJoin(ptr, 'value'),
    );
  const n = BigInt(s);
  if (n <= MAX_SAFE_INTEGER_BIG && n >= -MAX_SAFE_INTEGER_BIG)
    throw valueError(ctx, 'VALUE_INVALID', 'a tagged int must lie outside ±(2^53-1)', pointerJoin(ptr, 'value'));
}

/**
 * @param {JsonObject} v
 * @param {string} key
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @param {string} what
 * @returns {string}
 */
function checkBase64Member(v, key, ptr, ctx, what) {
  const s = v.get(key);
  if (!isCanonicalBase64(s))
    throw valueError(ctx, 'VALUE_INVALID', `${what}: ${key} is not canonical base64`, pointerJoin(ptr, key));
  return /** @type {string} */ (s);
}

/**
 * Whether a (checked) value may be a dict key (§7.5).
 * @param {unknown} v
 * @returns {boolean}
 */
function isHashable(v) {
  if (v === null || typeof v === 'boolean' || typeof v === 'string' || typeof v === 'bigint' || typeof v === 'number')
    return true;
  if (isTagged(v, 'int') || isTagged(v, 'bytes')) return true;
  if (isTagged(v, 'float')) return v.get('value') !== 'nan';
  if (isTagged(v, 'tuple')) return /** @type {unknown[]} */ (v.get('items')).every(isHashable);
  return false;
}

/**
 * A string identifying a hashable value up to the key equality of §7.5.
 * @param {unknown} v a value isHashable accepted
 * @returns {string}
 */
function keyIdentity(v) {
  /** @param {unknown} x */
  const num = (x) => 'n:' + x;
  if (v === null) return 'z';
  if (typeof v === 'boolean') return num(v ? '1' : '0');
  if (typeof v === 'bigint') return num(v.toString());
  if (typeof v === 'number') return num(Number.isInteger(v) ? BigInt(v).toString() : String(v));
  if (typeof v === 'string') return 's:' + v;
  // a tagged int, float, bytes or tuple (checked)
  const o = /** @type {JsonObject} */ (v);
  const t = o.get('$type');
  if (t === 'int') return num(BigInt(/** @type {string} */ (o.get('value'))).toString());
  if (t === 'float') return num(o.get('value'));
  if (t === 'bytes') return 'b:' + o.get('base64');
  return 't:' + JSON.stringify(/** @type {unknown[]} */ (o.get('items')).map(keyIdentity));
}

/**
 * @param {JsonObject} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @returns {undefined}
 */
function checkDictTag(v, ptr, ctx) {
  exactMembers(v, ['entries'], [], ptr, ctx, 'dict');
  const entries = v.get('entries');
  const eptr = pointerJoin(ptr, 'entries');
  if (!Array.isArray(entries)) throw valueError(ctx, 'VALUE_INVALID', 'dict entries is not an array', eptr);
  const seen = new Set();
  let needed = false;
  entries.forEach((e, i) => {
    const p = pointerJoin(eptr, i);
    if (!Array.isArray(e) || e.length !== 2)
      throw valueError(ctx, 'VALUE_INVALID', 'a dict entry is not a [key, value] pair', p);
    const [k, x] = e;
    checkValue(k, pointerJoin(p, 0), ctx);
    if (!isHashable(k)) throw valueError(ctx, 'VALUE_INVALID', 'a dict key is not hashable', pointerJoin(p, 0));
    const id = keyIdentity(k);
    if (seen.has(id)) throw valueError(ctx, 'VALUE_DUPLICATE_KEY', 'the dict has two equal keys', pointerJoin(p, 0));
    seen.add(id);
    if (typeof k !== 'string' || k === '$type') needed = true;
    checkValue(x, pointerJoin(p, 1), ctx);
  });
  if (!needed)
    throw valueError(
      ctx,
      'VALUE_INVALID',
      'a dict whose keys are all strings other than "$type" must be a plain object',
      ptr,
    );
}

/**
 * Checks an ndarray tagged value; returns {dtype, shape (bigint[]), ref}.
 * Inline data is checked here; a reference is queued in ctx.references.
 * @param {JsonObject} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @returns {NdarrayInfo}
 */
function checkNdarrayTag(v, ptr, ctx) {
  exactMembers(v, ['dtype', 'shape'], ['base64', 'ref'], ptr, ctx, 'ndarray');
  if (v.has('base64') === v.has('ref'))
    throw valueError(ctx, 'VALUE_INVALID', 'an ndarray has exactly one of "base64" and "ref"', ptr);
  const dtype = v.get('dtype');
  if (!isDtype(dtype))
    throw valueError(ctx, 'VALUE_INVALID', 'ndarray dtype is not a dtype code', pointerJoin(ptr, 'dtype'));
  const shape = v.get('shape');
  checkShape(shape, pointerJoin(ptr, 'shape'), ctx);
  const nbytes = elementCount(shape) * BigInt(DTYPES[dtype].size);
  if (nbytes > MAX_SAFE_INTEGER_BIG)
    throw valueError(ctx, 'LIMIT_EXCEEDED', 'array byte size exceeds 2^53-1', pointerJoin(ptr, 'shape'));
  if (v.has('base64')) {
    const bptr = pointerJoin(ptr, 'base64');
    const s = v.get('base64');
    const limit = `inline array larger than ${MAX_INLINE_ARRAY_BYTES} bytes`;
    if (typeof s === 'string' && codePointsOver(s, 4 * Math.ceil(MAX_INLINE_ARRAY_BYTES / 3)))
      throw valueError(ctx, 'LIMIT_EXCEEDED', limit, bptr);
    checkBase64Member(v, 'base64', ptr, ctx, 'ndarray');
    const len = base64Length(/** @type {string} */ (s)); // a string (checkBase64Member)
    if (len > MAX_INLINE_ARRAY_BYTES) throw valueError(ctx, 'LIMIT_EXCEEDED', limit, bptr);
    if (BigInt(len) !== nbytes)
      throw valueError(
        ctx,
        'ARRAY_SIZE_MISMATCH',
        `inline array holds ${len} bytes, its dtype and shape need ${nbytes}`,
        bptr,
      );
    return { dtype, shape, ref: null, node: v };
  }
  const ref = v.get('ref');
  const rptr = pointerJoin(ptr, 'ref');
  if (!isMap(ref)) throw valueError(ctx, 'VALUE_INVALID', 'ndarray ref is not an object', rptr);
  if (!ref.has('group') || !ref.has('name'))
    throw valueError(ctx, 'VALUE_INVALID', 'ndarray ref needs the members "group" and "name"', rptr);
  for (const k of ref.keys()) {
    if (k !== 'group' && k !== 'name')
      throw valueError(
        ctx,
        'VALUE_INVALID',
        `ndarray ref has the unexpected member ${JSON.stringify(k)}`,
        pointerJoin(rptr, k),
      );
  }
  for (const k of ['group', 'name']) {
    if (typeof ref.get(k) !== 'string')
      throw valueError(ctx, 'VALUE_INVALID', `ndarray ref member ${k} is not a string`, pointerJoin(rptr, k));
  }
  const group = /** @type {string} */ (ref.get('group'));
  const name = /** @type {string} */ (ref.get('name'));
  const info = { dtype, shape, ref: { group, name }, node: v };
  ctx.references.push(
    Object.freeze({
      pointer: ptr,
      group: info.ref.group,
      name: info.ref.name,
      dtype,
      shape: Object.freeze([...shape]),
    }),
  );
  return info;
}

/**
 * @param {JsonObject} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @returns {undefined}
 */
function checkScalarTag(v, ptr, ctx) {
  exactMembers(v, ['dtype', 'base64'], [], ptr, ctx, 'scalar');
  const dtype = v.get('dtype');
  if (!isDtype(dtype))
    throw valueError(ctx, 'VALUE_INVALID', 'scalar dtype is not a dtype code', pointerJoin(ptr, 'dtype'));
  const s = checkBase64Member(v, 'base64', ptr, ctx, 'scalar');
  if (base64Length(s) !== DTYPES[dtype].size)
    throw valueError(
      ctx,
      'ARRAY_SIZE_MISMATCH',
      'scalar bytes are not exactly one element',
      pointerJoin(ptr, 'base64'),
    );
}

const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * @param {JsonObject} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @returns {undefined}
 */
function checkClassTag(v, ptr, ctx) {
  exactMembers(v, ['module', 'qualname'], [], ptr, ctx, 'class');
  for (const k of ['module', 'qualname']) {
    const s = v.get(k);
    if (typeof s !== 'string' || !DOTTED.test(s))
      throw valueError(ctx, 'VALUE_INVALID', `class ${k} is not a dotted name`, pointerJoin(ptr, k));
  }
}

/**
 * @param {JsonObject} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @returns {undefined}
 */
function checkOpaqueTag(v, ptr, ctx) {
  exactMembers(v, ['format', 'base64'], ['type', 'note'], ptr, ctx, 'opaque');
  if (v.get('format') !== 'pickle')
    throw valueError(ctx, 'VALUE_INVALID', 'opaque format must be "pickle"', pointerJoin(ptr, 'format'));
  checkBase64Member(v, 'base64', ptr, ctx, 'opaque');
  for (const k of ['type', 'note']) {
    if (v.has(k) && typeof v.get(k) !== 'string')
      throw valueError(ctx, 'VALUE_INVALID', `opaque ${k} must be a string`, pointerJoin(ptr, k));
  }
}

/**
 * Checks one value (§7.2) and everything inside it. Returns ndarray info for ndarrays.
 * @param {unknown} v
 * @param {string} ptr
 * @param {ValueContext} ctx
 * @returns {NdarrayInfo | undefined}
 */
export function checkValue(v, ptr, ctx) {
  if (v === null || typeof v !== 'object') return undefined; // null, boolean, string, bigint, number
  if (Array.isArray(v)) {
    v.forEach((x, i) => checkValue(x, pointerJoin(ptr, i), ctx));
    return undefined;
  }
  const o = /** @type {JsonObject} */ (v); // an object of the json.js tree
  if (!o.has('$type')) {
    for (const [k, x] of o) checkValue(x, pointerJoin(ptr, k), ctx);
    return undefined;
  }
  const t = o.get('$type');
  if (typeof t !== 'string' || !TAGS.includes(t)) {
    // the discriminator is the value at fault (§11.2)
    throw valueError(ctx, 'VALUE_UNKNOWN_TYPE', `unknown $type ${show(t)}`, pointerJoin(ptr, '$type'));
  }
  switch (t) {
    case 'float':
      return checkFloatTag(o, ptr, ctx);
    case 'int':
      return checkIntTag(o, ptr, ctx);
    case 'bytes':
      exactMembers(o, ['base64'], [], ptr, ctx, 'bytes');
      checkBase64Member(o, 'base64', ptr, ctx, 'bytes');
      return undefined;
    case 'tuple': {
      exactMembers(o, ['items'], [], ptr, ctx, 'tuple');
      const items = o.get('items');
      if (!Array.isArray(items))
        throw valueError(ctx, 'VALUE_INVALID', 'tuple items is not an array', pointerJoin(ptr, 'items'));
      items.forEach((x, i) => checkValue(x, pointerJoin(pointerJoin(ptr, 'items'), i), ctx));
      return undefined;
    }
    case 'dict':
      return checkDictTag(o, ptr, ctx);
    case 'ndarray':
      return checkNdarrayTag(o, ptr, ctx);
    case 'scalar':
      return checkScalarTag(o, ptr, ctx);
    case 'space':
      return checkSpace(o, ptr, ctx, checkValue);
    case 'schedule':
      return checkSchedule(o, ptr, ctx);
    case 'class':
      return checkClassTag(o, ptr, ctx);
    case 'opaque':
      return checkOpaqueTag(o, ptr, ctx);
  }
  return undefined;
}

/**
 * §7.1: the data document's structure (DATA_INVALID): an object with a `data` object and an optional `optimizers` object.
 * @param {unknown} doc
 * @param {string} [member]
 * @returns {asserts doc is JsonObject}
 */
export function checkDataStructure(doc, member = 'data.json') {
  if (!isMap(doc)) throw fail('DATA_INVALID', 'the data document is not an object', { member, pointer: '' });
  if (!doc.has('data')) throw fail('DATA_INVALID', 'the data document lacks "data"', { member, pointer: '' });
  if (!isMap(doc.get('data'))) throw fail('DATA_INVALID', '"data" is not an object', { member, pointer: '/data' });
  if (doc.has('optimizers') && !isMap(doc.get('optimizers'))) {
    throw fail('DATA_INVALID', '"optimizers" is not an object', { member, pointer: '/optimizers' });
  }
}

/**
 * §7.1: checks the data document's structure, then every value in document
 * order, `data` before `optimizers` (§11.1 step 7). Returns {data, optimizers,
 * references}: the references ({pointer, group, name, dtype, shape}, frozen)
 * in document order.
 * @param {unknown} doc
 * @param {string} [member]
 * @returns {{data: JsonObject, optimizers: JsonObject, references: Reference[]}}
 */
export function checkDataDocument(doc, member = 'data.json') {
  /** @type {ValueContext} */
  const ctx = { member, references: [] };
  checkDataStructure(doc, member);
  for (const k of ['data', 'optimizers']) {
    for (const [name, v] of /** @type {JsonObject | undefined} */ (doc.get(k)) ?? [])
      checkValue(v, pointerJoin('/' + k, name), ctx);
  }
  const data = /** @type {JsonObject} */ (doc.get('data'));
  const optimizers = /** @type {JsonObject | undefined} */ (doc.get('optimizers')) ?? new Map();
  return { data, optimizers, references: ctx.references };
}
