// Safetensors members (§10): structure checks (step 8 of §11.1) and tensor views.

import { fail } from './errors.js';
import { MAX_NAME_BYTES, MAX_NDIM, MAX_SAFETENSORS_HEADER_BYTES } from './limits.js';
import { DTYPES, isDtype, viewElements } from './dtypes.js';
import { parseJson } from './json.js';
import { readAt } from './zipprofile.js';

/** @typedef {import('../index.js').DtypeCode} DtypeCode */
/** @typedef {import('../index.js').ElementArray} ElementArray */
/** @typedef {import('../index.js').Reference} Reference */
/** @typedef {import('./json.js').JsonObject} JsonObject */
/** @typedef {import('./sources.js').Source} Source */
/** @typedef {import('./errors.js').ErrorLocation} ErrorLocation */
/**
 * A tensor of a safetensors header (§10), as step 8 reads it (frozen): `begin` and `end` its
 * data_offsets within the data buffer, `offset` the file offset of its first element byte,
 * `nbytes` = end - begin.
 * @typedef {Readonly<{name: string, dtype: DtypeCode, shape: readonly number[], begin: number, end: number, offset: number, nbytes: number}>} TensorInfo
 */
/** @typedef {ReadonlyMap<string, ReadonlyMap<string, TensorInfo>>} TensorHeaders group -> (tensor name -> TensorInfo) */
/** @typedef {{name: string, dtype: DtypeCode, shape: number[], data: ElementArray}} Tensor One tensor's elements (readTensor). */
/**
 * A header entry whose JSON types are checked: the TensorInfo it becomes (frozen) once every check passes.
 * @typedef {{name: string, dtype: string, shape: number[], begin: number, end: number, offset: number, nbytes: number}} HeaderEntry
 */
/** @typedef {(msg: string, name?: string) => import('./errors.js').RlarchiveError} Invalid */

const encoder = new TextEncoder();
/**
 * Whether `s` has at most `max` bytes of UTF-8 (a UTF-16 unit takes at most 3: encoded only when that bound is not enough).
 * @type {(s: string, max: number) => boolean}
 */
const utf8AtMost = (s, max) => s.length * 3 <= max || encoder.encode(s).length <= max;
/**
 * An integer literal >= 0 of a header parsed with `integers: 'number'` (a float literal is a JsonFloat there).
 * @param {unknown} x
 * @returns {x is number}
 */
const isNonNegInt = (x) => typeof x === 'number' && x >= 0;

/**
 * The element size and alignment of a known dtype (dtypes.js's table, typed here to what it holds).
 * @type {(dtype: string) => {size: number, alignment: number}}
 */
const layout = (dtype) => /** @type {{size: number, alignment: number}} */ (DTYPES[/** @type {DtypeCode} */ (dtype)]);

/**
 * The JSON Pointer (RFC 6901) of tensor `name`'s entry in its safetensors header.
 * @type {(name: string) => string}
 */
export const entryPointer = (name) => '/' + name.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The entries of a parsed safetensors header, each with exactly dtype, shape and data_offsets of the right JSON types (ST_HEADER_INVALID otherwise, by `invalid`).
 * @param {JsonObject} tree
 * @param {Invalid} invalid
 * @param {number} bufferOffset the file offset of the data buffer
 * @returns {HeaderEntry[]}
 */
function headerEntries(tree, invalid, bufferOffset) {
  /** @type {HeaderEntry[]} */
  const entries = [];
  for (const name of tree.keys()) {
    const e = tree.get(name); // not entries(): no [name, e] array per tensor
    if (name.length === 0 || !utf8AtMost(name, MAX_NAME_BYTES)) throw invalid('bad tensor name length', name);
    if (name.startsWith('__')) throw invalid(`tensor name ${JSON.stringify(name)} begins with "__"`, name);
    if (!(e instanceof Map) || e.size !== 3 || !e.has('dtype') || !e.has('shape') || !e.has('data_offsets')) {
      throw invalid(`tensor ${JSON.stringify(name)} needs exactly dtype, shape and data_offsets`, name);
    }
    const dtype = e.get('dtype'),
      shape = e.get('shape'),
      offs = e.get('data_offsets');
    if (typeof dtype !== 'string') throw invalid(`tensor ${JSON.stringify(name)}: dtype is not a string`, name);
    if (!Array.isArray(shape) || !shape.every(isNonNegInt))
      throw invalid(`tensor ${JSON.stringify(name)}: shape is not an array of non-negative integers`, name);
    if (!Array.isArray(offs) || offs.length !== 2 || !offs.every(isNonNegInt))
      throw invalid(`tensor ${JSON.stringify(name)}: data_offsets is not two non-negative integers`, name);
    const [begin, end] = offs;
    entries.push({ name, dtype, shape, begin, end, offset: bufferOffset + begin, nbytes: end - begin });
  }
  return entries;
}

/**
 * Whether a tensor of `shape` and elements of `size` bytes takes `nbytes` bytes (a number below 2^53):
 * multiplied as numbers while the product stays exact (below 2^53), as bigints beyond.
 * @param {number[]} shape
 * @param {number} size
 * @param {number} nbytes
 * @returns {boolean}
 */
function holds(shape, size, nbytes) {
  let p = size;
  for (const d of shape) {
    p *= d;
    if (p > Number.MAX_SAFE_INTEGER) return shape.reduce((a, x) => a * BigInt(x), 1n) * BigInt(size) === BigInt(nbytes);
  }
  return p === nbytes;
}

/**
 * Reads and checks the header of safetensors member `m` (with `dataOffset`,
 * `size`, `name`). Returns {headerLength, bufferOffset, tensors: Map(name ->
 * TensorInfo {name, dtype, shape: number[], begin, end, offset, nbytes}, frozen)}, in header order;
 * `offset` is the tensor's absolute file offset.
 * @param {Source} src
 * @param {import('./zipread.js').LocatedMember} m
 * @returns {Promise<{headerLength: number, bufferOffset: number, tensors: Map<string, TensorInfo>}>}
 */
export async function readSafetensorsHeader(src, m) {
  const loc = { member: m.name, offset: m.dataOffset };
  if (m.size < 8) throw fail('ST_TRUNCATED', 'safetensors member shorter than 8 bytes', loc);
  const nb = await readAt(src, m.dataOffset, 8);
  const dv = new DataView(nb.buffer, nb.byteOffset, 8);
  const n = dv.getUint32(0, true) + dv.getUint32(4, true) * 0x100000000;
  if (n > MAX_SAFETENSORS_HEADER_BYTES)
    throw fail('ST_HEADER_TOO_LARGE', `safetensors header of ${n} bytes exceeds the limit`, loc);
  if (n > m.size - 8) throw fail('ST_TRUNCATED', 'safetensors header runs past the member', loc);
  const header = await readAt(src, m.dataOffset + 8, n);
  const tree = parseJson(header, { member: m.name, offset: m.dataOffset + 8, maxBytes: Infinity, integers: 'number' });
  // spec §11.2: the member's first byte, and the tensor's entry in the header when one is at fault
  /** @type {(name: string) => ErrorLocation} */
  const tloc = (name) => ({ member: m.name, offset: m.dataOffset, pointer: entryPointer(name) });
  /** @type {Invalid} */
  const invalid = (msg, name) => fail('ST_HEADER_INVALID', msg, name === undefined ? loc : tloc(name));
  let last = header.length;
  while (last > 0 && header[last - 1] === 0x20) last--;
  if (header[0] !== 0x7b) throw invalid('safetensors header does not begin with "{"');
  if (header[last - 1] !== 0x7d) throw invalid('safetensors header is followed by something other than spaces');
  const bufferLength = m.size - 8 - n;
  const bufferOffset = m.dataOffset + 8 + n;
  const entries = headerEntries(/** @type {JsonObject} */ (tree), invalid, bufferOffset); // within '{' and '}': an object
  for (const t of entries) {
    if (!isDtype(t.dtype)) throw fail('ST_DTYPE_UNKNOWN', `unknown dtype ${JSON.stringify(t.dtype)}`, tloc(t.name));
  }
  for (const t of entries) {
    if (t.shape.length > MAX_NDIM)
      throw fail('LIMIT_EXCEEDED', `${t.shape.length} dimensions exceed the limit of ${MAX_NDIM}`, tloc(t.name));
  }
  for (const t of entries) {
    if (t.begin > t.end || t.end > bufferLength)
      throw fail('ST_OFFSETS_INVALID', 'data_offsets reversed or outside the data buffer', tloc(t.name));
  }
  for (const t of entries) {
    if (!holds(t.shape, layout(t.dtype).size, t.end - t.begin))
      throw fail('ST_SHAPE_MISMATCH', 'byte range does not match shape and dtype', tloc(t.name));
  }
  /** @type {(a: HeaderEntry, b: HeaderEntry) => number} */
  const byOffset = (a, b) => a.begin - b.begin || a.end - b.end;
  const inOrder = entries.every((t, i) => i === 0 || byOffset(entries[i - 1], t) <= 0); // as a writer lays them out
  const sorted = inOrder ? entries : [...entries].sort(byOffset);
  let pos = 0;
  for (const t of sorted) {
    if (t.begin > pos) throw fail('ST_HOLE', 'bytes before this tensor belong to no tensor', tloc(t.name));
    if (t.begin < pos) throw fail('ST_OVERLAP', 'tensor overlaps the previous one', tloc(t.name));
    pos = t.end;
  }
  if (pos !== bufferLength) throw fail('ST_TRAILING_BYTES', 'the data buffer continues after the last tensor', loc);
  for (const t of entries) {
    if (t.offset % layout(t.dtype).alignment !== 0)
      throw fail('ST_MISALIGNED', 'tensor is not aligned in the file', tloc(t.name));
  }
  /** @type {Map<string, TensorInfo>} */
  const tensors = new Map();
  for (const t of entries) {
    Object.freeze(t.shape); // the parsed array, of numbers, no other reference to it
    // every dtype is known (ST_DTYPE_UNKNOWN above): the entry is the tensor's info
    tensors.set(t.name, /** @type {TensorInfo} */ (Object.freeze(t)));
  }
  return { headerLength: n, bufferOffset, tensors };
}

/**
 * §7.6: reference `ref` ({pointer, group, name, dtype, shape}, found in
 * `member`) names a tensor of exactly its dtype and shape among `headers`
 * (group -> Map(tensor name -> TensorInfo)). Throws REF_NOT_FOUND or REF_MISMATCH.
 * @param {TensorHeaders} headers
 * @param {Reference} ref
 * @param {string} member
 */
export function checkReference(headers, ref, member) {
  const { group, name } = ref;
  const t = headers.get(group)?.get(name);
  if (!t)
    throw fail('REF_NOT_FOUND', `no tensor ${JSON.stringify(name)} in group ${JSON.stringify(group)}`, {
      member,
      pointer: ref.pointer + '/ref',
    });
  const same =
    t.dtype === ref.dtype && t.shape.length === ref.shape.length && t.shape.every((d, k) => BigInt(d) === ref.shape[k]);
  if (!same)
    throw fail('REF_MISMATCH', `tensor ${group}/${name} differs in dtype or shape from the reference`, {
      member,
      pointer: ref.pointer,
    });
}

/**
 * The TensorInfo of tensor `name` of `group` among `headers`; throws TENSOR_NOT_FOUND.
 * @param {TensorHeaders} headers
 * @param {string} group
 * @param {string} name
 * @returns {TensorInfo}
 */
export function findTensor(headers, group, name) {
  const g = headers.get(group);
  if (!g) throw fail('TENSOR_NOT_FOUND', `no tensor group ${JSON.stringify(group)}`);
  const t = g.get(name);
  if (!t) throw fail('TENSOR_NOT_FOUND', `no tensor ${JSON.stringify(name)} in group ${JSON.stringify(group)}`);
  return t;
}

/**
 * Reads one tensor's element bytes: {name, dtype, shape, data}, `data` a typed array (dtypes.js).
 * @param {Source} src
 * @param {TensorInfo} info
 * @returns {Promise<Tensor>}
 */
export async function readTensor(src, info) {
  const bytes = await readAt(src, info.offset, info.end - info.begin);
  return { name: info.name, dtype: info.dtype, shape: [...info.shape], data: viewElements(info.dtype, bytes) };
}

/**
 * The group name of a tensor member name (`tensors/GROUP.safetensors`), or null.
 * @param {string} name
 * @returns {string | null}
 */
export function groupOf(name) {
  const m = /^tensors\/([^/]+)\.safetensors$/.exec(name);
  return m && m[1] !== '.' && m[1] !== '..' ? m[1] : null;
}

/**
 * The member name of a tensor group.
 * @type {(group: string) => string}
 */
export const memberOf = (group) => `tensors/${group}.safetensors`;
