// The value model decoded into JavaScript types (documented in README.md).

import { viewElements } from './dtypes.js';
import { decodeBase64, encodeBase64 } from './base64.js';
import { f16ToNumber, bf16ToNumber, fp8ToNumber as fp8 } from './convert.js';
import { evaluateSchedule } from './schedules.js';

/** @typedef {import('./dtypes.js').ElementArray} ElementArray */
/** @typedef {import('./json.js').JsonObject} JsonObject */
/**
 * What an NDArray loads its referenced data from: the Archive of reader.js, or anything with its
 * `tensor` (an extension's Content, extensions/index.js).
 * @typedef {Pick<import('./reader.js').Archive, 'tensor'>} TensorReader
 */
/**
 * A decoded value (README.md): null, boolean, string, number, bigint (`int` tag), Value[] (list),
 * Tuple, Uint8Array (bytes), Map (dict), plain object (map with string keys), NDArray, Scalar,
 * Space, Schedule, ClassRef, Opaque.
 * @typedef {null | boolean | string | number | bigint | Value[] | Tuple | Uint8Array | Map<Value, Value> | {[key: string]: Value} | NDArray | Scalar | Space | Schedule | ClassRef | Opaque} Value
 */
/**
 * A schedule's members (§9), as evaluateSchedule reads them.
 * @typedef {{kind: string, value?: number, start?: number, end?: number, end_fraction?: number, points?: number[][], interpolation?: string}} ScheduleMembers
 */

/**
 * A `tuple` value: a frozen array.
 * @extends {Array<Value>}
 */
export class Tuple extends Array {}

/** An `ndarray` value. `data` is a typed array (see dtypes.js), or null for a reference not loaded yet. */
export class NDArray {
  /**
   * @param {string} dtype
   * @param {number[]} shape
   * @param {ElementArray | null} data
   * @param {{group: string, name: string} | null} ref
   * @param {TensorReader | null} archive what a reference loads from (null: a value without references)
   */
  constructor(dtype, shape, data, ref, archive) {
    this.dtype = dtype;
    this.shape = shape;
    this.data = data;
    this.ref = ref;
    Object.defineProperty(this, '_archive', { value: archive, enumerable: false });
  }
  /**
   * Loads referenced data from its tensor group (no-op for inline data); returns the typed array.
   * @param {{verify?: boolean}} [options]
   * @returns {Promise<ElementArray>}
   */
  async load(options) {
    if (this.data === null) {
      // a reference (data is null only then), loaded through the archive set by the constructor
      const { _archive } = /** @type {{_archive: TensorReader}} */ (/** @type {unknown} */ (this));
      const ref = /** @type {{group: string, name: string}} */ (this.ref);
      this.data = (await _archive.tensor(ref.group, ref.name, options)).data;
    }
    return this.data;
  }
}

/** A `scalar` value: a NumPy-style typed number; `value` is a number, bigint, boolean, or [re, im] for C64. */
export class Scalar {
  /**
   * @param {string} dtype
   * @param {Uint8Array} bytes
   */
  constructor(dtype, bytes) {
    this.dtype = dtype;
    this.bytes = bytes;
    const el = viewElements(dtype, bytes);
    if (dtype === 'BOOL') this.value = bytes[0] !== 0;
    else if (dtype === 'F16') this.value = f16ToNumber(/** @type {number} */ (el[0]));
    else if (dtype === 'BF16') this.value = bf16ToNumber(/** @type {number} */ (el[0]));
    else if (dtype === 'C64') this.value = [el[0], el[1]];
    else if (dtype.startsWith('F8_')) this.value = fp8(dtype, bytes[0]);
    else this.value = el[0];
  }
}

/** A `space` value: `kind` plus the kind's members (§8), arrays as NDArray, sub-spaces as Space. */
export class Space {}

/** A `schedule` value: `kind` plus its members (§9). */
export class Schedule {
  /**
   * The value at progress remaining `p` (spec §9).
   * @param {number} p
   * @returns {number}
   */
  valueAt(p) {
    return evaluateSchedule(this, p);
  }
}

/** A `class` reference: a name only, never resolved. */
export class ClassRef {
  /**
   * @param {string} module
   * @param {string} qualname
   */
  constructor(module, qualname) {
    this.module = module;
    this.qualname = qualname;
  }
}

/** An `opaque` value: the pickle bytes, never unpickled. */
export class Opaque {
  /**
   * @param {string} format
   * @param {Uint8Array} bytes
   * @param {string | undefined} type
   * @param {string | undefined} note
   */
  constructor(format, bytes, type, note) {
    this.format = format;
    this.bytes = bytes;
    this.type = type;
    this.note = note;
  }
}

/**
 * @param {object} o
 * @param {string} k
 * @param {unknown} v
 */
function setProp(o, k, v) {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** @param {unknown} x */
const num = (x) => (typeof x === 'bigint' ? Number(x) : x);

/**
 * Decode a map of names to values (`data`, `optimizers`, spec §7.1): each
 * property value is a value, the map itself is not, so a property named
 * `$type` is a name like any other.
 * @param {JsonObject} tree
 * @param {TensorReader | null} archive
 * @returns {{[key: string]: Value}}
 */
export function decodeMap(tree, archive) {
  /** @type {{[key: string]: Value}} */
  const o = {};
  for (const [k, x] of tree) setProp(o, k, decodeValue(x, archive));
  return o;
}

/**
 * Decodes a checked value tree (json.js form) into JavaScript types.
 * @param {unknown} v
 * @param {TensorReader | null} archive what the references load from (null: a value without references)
 * @returns {Value}
 */
export function decodeValue(v, archive) {
  if (v === null || typeof v === 'boolean' || typeof v === 'string' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map((x) => decodeValue(x, archive));
  const m = /** @type {JsonObject} */ (v); // an object of the json.js tree
  const t = m.get('$type');
  if (t === undefined) return decodeMap(m, archive);
  /**
   * A member of the tagged value, `any` because values.js checked each one's type for its tag.
   * @param {string} k
   * @returns {any}
   */
  const g = (k) => m.get(k);
  switch (t) {
    case 'float':
      return { nan: NaN, inf: Infinity, '-inf': -Infinity }[/** @type {'nan' | 'inf' | '-inf'} */ (g('value'))];
    case 'int':
      return BigInt(g('value'));
    case 'bytes':
      return decodeBase64(g('base64'));
    case 'tuple':
      return Object.freeze(Tuple.from(g('items'), (x) => decodeValue(x, archive)));
    case 'dict':
      return new Map(
        /** @type {unknown[][]} */ (g('entries')).map(([k, x]) => [decodeValue(k, archive), decodeValue(x, archive)]),
      );
    case 'ndarray': {
      const shape = g('shape').map(Number);
      if (m.has('base64'))
        return new NDArray(g('dtype'), shape, viewElements(g('dtype'), decodeBase64(g('base64'))), null, archive);
      const r = g('ref');
      return new NDArray(g('dtype'), shape, null, { group: r.get('group'), name: r.get('name') }, archive);
    }
    case 'scalar':
      return new Scalar(g('dtype'), decodeBase64(g('base64')));
    case 'space': {
      const s = /** @type {Space & {[member: string]: unknown}} */ (new Space());
      s.kind = g('kind');
      for (const [k, x] of m) {
        if (k === '$type' || k === 'kind') continue;
        if (k === 'spaces') {
          s.spaces =
            s.kind === 'dict'
              ? /** @type {[string, unknown][]} */ (x).map(([key, sp]) => [key, decodeValue(sp, archive)])
              : /** @type {unknown[]} */ (x).map((sp) => decodeValue(sp, archive));
        } else s[k] = decodeValue(x, archive);
      }
      return s;
    }
    case 'schedule': {
      const s = /** @type {Schedule & {[member: string]: unknown}} */ (new Schedule());
      s.kind = g('kind');
      for (const [k, x] of m) {
        if (k === '$type' || k === 'kind') continue;
        s[k] =
          k === 'points'
            ? /** @type {unknown[][]} */ (x).map(([a, b]) => [num(a), num(b)])
            : k === 'interpolation'
              ? x
              : num(x);
      }
      return s;
    }
    case 'class':
      return new ClassRef(g('module'), g('qualname'));
    case 'opaque':
      return new Opaque(g('format'), decodeBase64(g('base64')), g('type'), g('note'));
  }
  /* c8 ignore next */
  throw new TypeError('unchecked value');
}

/**
 * Loads every referenced NDArray inside a decoded value (objects, arrays, Maps, spaces); returns the value.
 * @template T
 * @param {T} v
 * @returns {Promise<T>}
 */
export async function loadArrays(v) {
  if (v instanceof NDArray) {
    await v.load();
  } else if (Array.isArray(v)) {
    for (const x of v) await loadArrays(x);
  } else if (v instanceof Map) {
    for (const x of v.values()) await loadArrays(x);
  } else if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
    for (const x of Object.values(v)) await loadArrays(x);
  }
  return v;
}

/**
 * An NDArray-like `{dtype, shape, data}` (data a typed array) as a JSON-ready inline `ndarray` value (§7.6).
 * @param {{dtype: string, shape: readonly number[], data: ElementArray}} a
 * @returns {{$type: 'ndarray', dtype: string, shape: number[], base64: string}}
 */
export function inlineArray(a) {
  const bytes = new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength);
  return { $type: 'ndarray', dtype: a.dtype, shape: [...a.shape], base64: encodeBase64(bytes) };
}
