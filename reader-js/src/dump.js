// The canonical dump of spec §13: canonical values (§13.2), the RFC 8785
// (JSON Canonicalization Scheme) serialization (§13.3), and the dump of a
// checked state (render).

import { required } from './checks.js';

/** @typedef {import('./checks.js').CheckState} CheckState */

export const DUMP_VERSION = '1.0';

/**
 * Serializes a JSON value as RFC 8785 text. Accepts null, booleans, strings,
 * finite numbers, safe-range bigints, arrays, Maps and plain objects; object
 * members are sorted by the UTF-16 code units of their names.
 * @param {unknown} value
 * @returns {string}
 */
export function canonicalJson(value) {
  /** @type {string[]} */
  const out = [];
  write(value, out);
  return out.join('');
}

/**
 * @param {unknown} v
 * @param {string[]} out
 */
function write(v, out) {
  if (v === null) out.push('null');
  else if (v === true) out.push('true');
  else if (v === false) out.push('false');
  else if (typeof v === 'string') out.push(JSON.stringify(v));
  else if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new RangeError('non-finite number in canonical JSON');
    out.push(String(v)); // Number::toString; -0 gives "0" as RFC 8785 wants
  } else if (typeof v === 'bigint') out.push(String(Number(v)));
  else if (Array.isArray(v)) {
    out.push('[');
    for (let i = 0; i < v.length; i++) {
      if (i) out.push(',');
      write(v[i], out);
    }
    out.push(']');
  } else {
    // an object: a Map (string keys) or a plain object
    const entries = /** @type {[string, unknown][]} */ (
      v instanceof Map ? [...v.entries()] : Object.entries(/** @type {object} */ (v))
    );
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    out.push('{');
    for (let i = 0; i < entries.length; i++) {
      if (i) out.push(',');
      out.push(JSON.stringify(entries[i][0]), ':');
      write(entries[i][1], out);
    }
    out.push('}');
  }
}

/**
 * The text S of a canonical float `{"$type": "float", "value": S}` (§13.2).
 * @param {number} x
 * @returns {string}
 */
export function floatText(x) {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0 && 1 / x < 0) return '-0';
  return String(x);
}

/**
 * The canonical form (§13.2) of a parsed value tree (see json.js): every float
 * literal becomes a tagged float, every integer literal a plain integer, and
 * everything else is kept.
 * @param {unknown} v
 * @returns {unknown}
 */
export function canonicalValue(v) {
  if (typeof v === 'number')
    return new Map([
      ['$type', 'float'],
      ['value', floatText(v)],
    ]);
  if (Array.isArray(v)) return v.map(canonicalValue);
  if (v instanceof Map) {
    const m = new Map();
    for (const [k, x] of v) m.set(k, canonicalValue(x));
    return m;
  }
  return v;
}

/**
 * The canonical dump (§13) of a CheckState that passed every step of §11.1,
 * step 10 with `digestTensors` (the tensors' SHA-256 are the ones step 10
 * computed: nothing is read here). The twin of python/rlarchive/dump.py's render;
 * reader.js's Archive.dump runs the steps.
 * @param {CheckState} state
 * @returns {string}
 */
export function render(state) {
  /** @type {Map<string, Map<string, Map<string, unknown>>>} */
  const tensors = new Map();
  for (const [g, infos] of required(state, 'tensorHeaders')) {
    const shas = state.tensorDigests.get(g);
    if (!shas) throw new TypeError('the state has not passed step 10 (checkDigests) with digestTensors');
    tensors.set(
      g,
      new Map(
        [...infos.values()].map((t) => [
          t.name,
          new Map(
            /** @type {[string, unknown][]} */ ([
              ['dtype', t.dtype],
              ['shape', t.shape],
              ['sha256', shas.get(t.name)],
            ]),
          ),
        ]),
      ),
    );
  }
  const { data, optimizers } = required(state, 'document');
  const doc = new Map(
    /** @type {[string, unknown][]} */ ([
      ['dump_version', DUMP_VERSION],
      ['manifest', required(state, 'manifest').raw],
      [
        'data',
        new Map([
          ['data', canonicalValue(data)],
          ['optimizers', canonicalValue(optimizers)],
        ]),
      ],
      ['tensors', tensors],
    ]),
  );
  return canonicalJson(doc);
}
