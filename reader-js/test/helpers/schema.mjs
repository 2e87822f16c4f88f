// A validator for the subset of JSON Schema (draft 2020-12) the project's
// schemas use, working on the json.js tree (bigint = integer literal,
// number = float literal, Map = object), and the schemas of ../../schemas/:
// the tests hold what the reader checks and produces against them (the
// reader itself reads no schema).

import { readdirSync, readFileSync } from 'node:fs';

const SUPPORTED = new Set([
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'format',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$defs',
  'definitions',
  '$ref',
  'type',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'dependentRequired',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
]);

/** Keywords a schema uses that this validator does not implement (for a test to keep it honest). */
export function unsupportedKeywords(schema, out = new Set()) {
  if (Array.isArray(schema)) schema.forEach((s) => unsupportedKeywords(s, out));
  else if (schema && typeof schema === 'object') {
    for (const [k, v] of Object.entries(schema)) {
      if (!SUPPORTED.has(k)) out.add(k);
      if (k === 'properties' || k === 'patternProperties' || k === '$defs' || k === 'definitions') {
        Object.values(v).forEach((s) => unsupportedKeywords(s, out));
      } else if (k !== 'enum' && k !== 'const' && k !== 'default' && k !== 'examples') unsupportedKeywords(v, out);
    }
  }
  return out;
}

const regexCache = new Map();
function regex(p) {
  let r = regexCache.get(p);
  if (!r) regexCache.set(p, (r = new RegExp(p, 'u')));
  return r;
}

function typeOf(v) {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'bigint' || typeof v === 'number') return 'number';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

function isInteger(v) {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
}

/** JSON equality (numbers by value, objects unordered). */
export function jsonEqual(a, b) {
  const ta = typeOf(a);
  if (ta !== typeOf(b)) return false;
  if (ta === 'number') return Number(a) === Number(b) || (typeof a === 'bigint' && typeof b === 'bigint' && a === b);
  if (ta === 'array') return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (ta === 'object') {
    const ea = a instanceof Map ? a : new Map(Object.entries(a));
    const eb = b instanceof Map ? b : new Map(Object.entries(b));
    if (ea.size !== eb.size) return false;
    for (const [k, x] of ea) if (!eb.has(k) || !jsonEqual(x, eb.get(k))) return false;
    return true;
  }
  return a === b;
}

/**
 * A string that two JSON values share exactly when jsonEqual holds for them (numbers by value,
 * objects by sorted key): uniqueItems checks an array with a set of these, in linear time.
 */
function jsonKey(v) {
  const t = typeOf(v);
  if (t === 'number') return `n${Number(v)}`;
  if (t === 'string') return JSON.stringify(v);
  if (t === 'array') return `[${v.map(jsonKey).join(',')}]`;
  if (t === 'object') {
    const e = v instanceof Map ? [...v] : Object.entries(v);
    e.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${e.map(([k, x]) => `${JSON.stringify(k)}:${jsonKey(x)}`).join(',')}}`;
  }
  return String(v);
}

const registry = new Map();

/** Makes a schema known by its `$id`, so that other schemas can `$ref` it. */
export function addSchema(schema) {
  if (schema && typeof schema.$id === 'string') registry.set(schema.$id.replace(/#$/, ''), schema);
}

/** Resolves a `$ref` (a local `#/...` pointer, or a known schema's URI with an optional fragment): [root, schema]. */
function resolveRef(root, ref) {
  let doc = root;
  let frag = ref;
  if (!ref.startsWith('#')) {
    const [uri, f = ''] = ref.split('#');
    const abs = typeof root.$id === 'string' ? new URL(uri, root.$id).href : uri;
    doc = registry.get(abs);
    if (!doc) throw new Error(`unresolvable $ref ${ref}`);
    frag = '#' + f;
  }
  let s = doc;
  for (const tok of frag.slice(1).split('/').slice(1)) {
    s = s?.[decodeURIComponent(tok).replace(/~1/g, '/').replace(/~0/g, '~')];
    if (s === undefined) throw new Error(`unresolvable $ref ${ref}`);
  }
  return [doc, s];
}

const esc = (k) => String(k).replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Validates `instance` against `schema`; returns null when valid, otherwise
 * {pointer, message} for the first problem found. Schemas are plain JSON
 * (JSON.parse output); instances are json.js trees or plain JSON.
 */
export function validateSchema(schema, instance, root = schema, ptr = '') {
  if (schema === true) return null;
  if (schema === false) return { pointer: ptr, message: 'no value is allowed here' };
  const s = schema;
  const err = (message, p = ptr) => ({ pointer: p, message });
  const t = typeOf(instance);
  if (s.$ref !== undefined) {
    const [doc, target] = resolveRef(root, s.$ref);
    const r = validateSchema(target, instance, doc, ptr);
    if (r) return r;
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const ok = types.some((ty) => (ty === 'integer' ? isInteger(instance) : ty === t));
    if (!ok) return err(`expected ${types.join(' or ')}`);
  }
  if (s.enum !== undefined && !s.enum.some((e) => jsonEqual(e, instance))) return err('not one of the allowed values');
  if (s.const !== undefined && !jsonEqual(s.const, instance)) return err('not the required value');
  const byType = BY_TYPE[t];
  const r = byType ? byType(s, instance, root, ptr, err) : null;
  return r ?? validateApplicators(s, instance, root, ptr, err);
}

/** The keywords of numbers. */
function validateNumber(s, x, root, ptr, err) {
  if (s.minimum !== undefined && x < s.minimum) return err(`below ${s.minimum}`);
  if (s.maximum !== undefined && x > s.maximum) return err(`above ${s.maximum}`);
  if (s.exclusiveMinimum !== undefined && x <= s.exclusiveMinimum) return err(`not above ${s.exclusiveMinimum}`);
  if (s.exclusiveMaximum !== undefined && x >= s.exclusiveMaximum) return err(`not below ${s.exclusiveMaximum}`);
  if (s.multipleOf !== undefined && !Number.isInteger(Number(x) / s.multipleOf))
    return err(`not a multiple of ${s.multipleOf}`);
  return null;
}

/** The keywords of strings (lengths in code points). */
function validateString(s, instance, root, ptr, err) {
  const len = [...instance].length;
  if (s.minLength !== undefined && len < s.minLength) return err('string too short');
  if (s.maxLength !== undefined && len > s.maxLength) return err('string too long');
  if (s.pattern !== undefined && !regex(s.pattern).test(instance)) return err(`does not match ${s.pattern}`);
  return null;
}

/** The keywords of arrays: sizes, each item, uniqueness, contains. */
function validateArray(s, a, root, ptr, err) {
  if (s.minItems !== undefined && a.length < s.minItems) return err('too few items');
  if (s.maxItems !== undefined && a.length > s.maxItems) return err('too many items');
  const prefix = s.prefixItems ?? [];
  for (let i = 0; i < a.length; i++) {
    const sub = i < prefix.length ? prefix[i] : s.items;
    if (sub === undefined) continue;
    const r = validateSchema(sub, a[i], root, `${ptr}/${i}`);
    if (r) return r;
  }
  if (s.uniqueItems) {
    const seen = new Set();
    for (let i = 0; i < a.length; i++) {
      const key = jsonKey(a[i]);
      if (seen.has(key)) return err('items are not unique', `${ptr}/${i}`);
      seen.add(key);
    }
  }
  if (s.contains !== undefined) {
    const n = a.filter((x, i) => !validateSchema(s.contains, x, root, `${ptr}/${i}`)).length;
    if (n < (s.minContains ?? 1)) return err('too few items match "contains"');
    if (s.maxContains !== undefined && n > s.maxContains) return err('too many items match "contains"');
  }
  return null;
}

/** The keywords of objects: sizes, required and dependent members, then each member in order. */
function validateObject(s, instance, root, ptr, err) {
  const o = instance instanceof Map ? instance : new Map(Object.entries(instance));
  if (s.minProperties !== undefined && o.size < s.minProperties) return err('too few properties');
  if (s.maxProperties !== undefined && o.size > s.maxProperties) return err('too many properties');
  for (const k of s.required ?? []) if (!o.has(k)) return err(`missing property ${JSON.stringify(k)}`);
  for (const [k, deps] of Object.entries(s.dependentRequired ?? {})) {
    if (o.has(k))
      for (const d of deps) if (!o.has(d)) return err(`property ${JSON.stringify(k)} requires ${JSON.stringify(d)}`);
  }
  for (const [k, v] of o) {
    const r = validateMember(s, k, v, root, `${ptr}/${esc(k)}`, err);
    if (r) return r;
  }
  return null;
}

/** One member of an object: its name, then the schemas of properties, patternProperties, additionalProperties. */
function validateMember(s, k, v, root, p, err) {
  if (s.propertyNames !== undefined) {
    const r = validateSchema(s.propertyNames, k, root, p);
    if (r) return err(`property name ${JSON.stringify(k)}: ${r.message}`, p);
  }
  let matched = false;
  if (s.properties && Object.hasOwn(s.properties, k)) {
    matched = true;
    const r = validateSchema(s.properties[k], v, root, p);
    if (r) return r;
  }
  for (const [pat, sub] of Object.entries(s.patternProperties ?? {})) {
    if (regex(pat).test(k)) {
      matched = true;
      const r = validateSchema(sub, v, root, p);
      if (r) return r;
    }
  }
  if (!matched && s.additionalProperties !== undefined) {
    const r = validateSchema(s.additionalProperties, v, root, p);
    if (r) return s.additionalProperties === false ? err(`unexpected property ${JSON.stringify(k)}`, p) : r;
  }
  return null;
}

/** The keywords of every type, after those of the instance's type: allOf, anyOf, oneOf, not, if/then/else. */
function validateApplicators(s, instance, root, ptr, err) {
  for (const sub of s.allOf ?? []) {
    const r = validateSchema(sub, instance, root, ptr);
    if (r) return r;
  }
  if (s.anyOf !== undefined && !s.anyOf.some((sub) => !validateSchema(sub, instance, root, ptr)))
    return err('matches none of "anyOf"');
  if (s.oneOf !== undefined) {
    const n = s.oneOf.filter((sub) => !validateSchema(sub, instance, root, ptr)).length;
    if (n !== 1) return err(`matches ${n} of "oneOf", not exactly one`);
  }
  if (s.not !== undefined && !validateSchema(s.not, instance, root, ptr)) return err('matches "not"');
  if (s.if !== undefined) {
    const branch = validateSchema(s.if, instance, root, ptr) ? s.else : s.then;
    if (branch !== undefined) {
      const r = validateSchema(branch, instance, root, ptr);
      if (r) return r;
    }
  }
  return null;
}

/** Type (typeOf) -> the validator of its keywords. */
const BY_TYPE = { number: validateNumber, string: validateString, array: validateArray, object: validateObject };

const SCHEMAS = new URL('../../../schemas/', import.meta.url);

/** Every schema of the repository's schemas/, file name -> schema object, each known by its `$id`. */
export function loadSchemas() {
  const out = {};
  for (const f of readdirSync(SCHEMAS)
    .filter((n) => n.endsWith('.schema.json'))
    .sort()) {
    out[f] = JSON.parse(readFileSync(new URL(f, SCHEMAS), 'utf8'));
    addSchema(out[f]);
  }
  return out;
}
