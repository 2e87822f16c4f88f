// The manifest (§5): checks of step 6 of §11.1 up to the extensions.

import { fail, membersPointer, pointerJoin } from './errors.js';
import { NAMES } from './extensions/index.js';
import { MAX_MEMBERS, MAX_NAME_BYTES } from './limits.js';

export const FORMAT = 'rlarchive';
/** The format version this reader reads (spec §5.2). */
export const FORMAT_VERSION = '1.0';
export const [MAJOR, MINOR] = FORMAT_VERSION.split('.').map(Number);
/** Extensions this reader supports (spec §5.4 and spec/extensions/). */
export const SUPPORTED_EXTENSIONS = NAMES;
/** The manifest's properties in the order of the table of spec §5.1, the order they are checked in (§11.2). */
export const PROPERTIES = Object.freeze([
  'format',
  'format_version',
  'producer',
  'members',
  'extensions_used',
  'extensions_required',
  'extensions',
  'metadata',
]);
export const REQUIRED = Object.freeze(['format', 'format_version', 'producer', 'members']);
export const KNOWN_PROPERTIES = PROPERTIES;
/** The members of `producer` (spec §5.1) and of a member entry (spec §5.3), in the order of their tables. */
export const PRODUCER_PROPERTIES = Object.freeze(['name', 'version']);
export const ENTRY_PROPERTIES = Object.freeze(['name', 'size', 'sha256']);
/** The longest producer name and version, in characters (spec §5.1). */
export const MAX_PRODUCER_CHARS = 256;
/** Names no member entry may have: the two members the manifest does not list (spec §5.3). */
export const UNLISTED = Object.freeze(['mimetype', 'manifest.json']);
const VERSION = /^(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})$/;
const EXTENSION_NAME = /^[A-Za-z0-9_]{1,64}$/;
const MEMBER_NAME = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * A member entry of the manifest (spec §5.3), checked.
 * @typedef {{name: string, size: number, sha256: string}} ManifestEntry
 */
/**
 * A broken rule of the manifest: where (a JSON Pointer), what, and its code.
 * @typedef {{pointer: string, message: string, code: import('./errors.js').ErrorCode}} ManifestIssue
 */
/** @typedef {import('./json.js').JsonObject} JsonObject */

/**
 * @param {import('./errors.js').ErrorCode} code
 * @param {string} msg
 * @param {string} pointer
 */
const bad = (code, msg, pointer) => fail(code, msg, { member: 'manifest.json', pointer });

/**
 * Checks a parsed manifest (json.js tree): object, format and version first,
 * then its structure (the rules of §5.1 and §5.3 in the order of §11.2), then
 * extensions (undeclared, then unsupported).
 * Returns {entries: Map(name -> {name, size, sha256}), used: string[]}.
 * @param {unknown} m
 * @returns {{entries: Map<string, ManifestEntry>, used: string[]}}
 */
export function checkManifest(m) {
  if (!(m instanceof Map)) throw bad('MANIFEST_INVALID', 'the manifest is not a JSON object', '');
  if (!m.has('format')) throw bad('MANIFEST_INVALID', 'the manifest needs the member "format"', '');
  if (m.get('format') !== FORMAT) throw bad('MANIFEST_INVALID', `format must be "${FORMAT}"`, '/format');
  if (!m.has('format_version')) throw bad('MANIFEST_INVALID', 'the manifest needs the member "format_version"', '');
  const ver = m.get('format_version');
  const vm = typeof ver === 'string' ? VERSION.exec(ver) : null;
  if (!vm) throw bad('MANIFEST_INVALID', 'format_version must be a string MAJOR.MINOR', '/format_version');
  if (Number(vm[1]) !== MAJOR)
    throw bad(
      'VERSION_UNSUPPORTED',
      `format version ${ver} is not supported (this reader reads ${MAJOR}.x)`,
      '/format_version',
    );
  const r = checkManifestRules(m);
  if (r) throw bad(r.code, r.message, r.pointer);
  // checkManifestRules found every rule of §5.1 and §5.3 kept: the types below hold
  /** @type {Map<string, ManifestEntry>} */
  const entries = new Map();
  for (const e of /** @type {Map<string, string | bigint | number>[]} */ (m.get('members'))) {
    const name = /** @type {string} */ (e.get('name'));
    entries.set(name, { name, size: Number(e.get('size')), sha256: /** @type {string} */ (e.get('sha256')) });
  }
  const used = /** @type {string[] | undefined} */ (m.get('extensions_used')) ?? [];
  const usedSet = new Set(used);
  const required = /** @type {string[] | undefined} */ (m.get('extensions_required')) ?? [];
  required.forEach((x, i) => {
    if (!usedSet.has(x))
      throw bad(
        'EXTENSION_UNDECLARED',
        `required extension ${x} is not in extensions_used`,
        `/extensions_required/${i}`,
      );
  });
  const extensions = /** @type {JsonObject | undefined} */ (m.get('extensions')) ?? new Map();
  for (const x of extensions.keys()) {
    if (!usedSet.has(x))
      throw bad(
        'EXTENSION_UNDECLARED',
        `extension data for ${x}, which is not in extensions_used`,
        pointerJoin('/extensions', x),
      );
  }
  required.forEach((x, i) => {
    if (!SUPPORTED_EXTENSIONS.includes(x))
      throw bad('EXTENSION_UNSUPPORTED', `required extension ${x} is not supported`, `/extensions_required/${i}`);
  });
  return { entries, used };
}

/**
 * @param {unknown} x
 * @returns {x is string}
 */
const isStr = (x) => typeof x === 'string';
/**
 * @param {unknown} x
 * @returns {x is JsonObject}
 */
const isMap = (x) => x instanceof Map;
/** @param {string} s */
const cps = (s) => [...s].length;
/**
 * @param {string} pointer
 * @param {string} message
 * @returns {ManifestIssue}
 */
const invalid = (pointer, message) => ({ pointer, message, code: 'MANIFEST_INVALID' });

/**
 * An integer >= 0 as JSON Schema 2020-12 counts them: a number whose value is integral (spec §5.3).
 * @param {unknown} x
 * @returns {boolean}
 */
const isSize = (x) => (typeof x === 'bigint' && x >= 0n) || (typeof x === 'number' && Number.isInteger(x) && x >= 0);

/**
 * `producer`: an object with exactly `name` and `version` (a missing member at the object, one not
 * allowed at it), then `name` (1 to 256 characters), `version` (at most 256).
 * @param {unknown} p
 * @param {string} ptr
 * @returns {ManifestIssue | null}
 */
function producerIssue(p, ptr) {
  if (!isMap(p) || p.size !== PRODUCER_PROPERTIES.length || !PRODUCER_PROPERTIES.every((k) => p.has(k)))
    return invalid(
      membersPointer(p, ptr, PRODUCER_PROPERTIES),
      'producer must be an object with exactly the members name and version',
    );
  const name = p.get('name');
  const version = p.get('version');
  if (!isStr(name) || cps(name) < 1 || cps(name) > MAX_PRODUCER_CHARS)
    return invalid(`${ptr}/name`, `producer name must be a string of 1 to ${MAX_PRODUCER_CHARS} characters`);
  if (!isStr(version) || cps(version) > MAX_PRODUCER_CHARS)
    return invalid(`${ptr}/version`, `producer version must be a string of at most ${MAX_PRODUCER_CHARS} characters`);
  return null;
}

/**
 * One member entry (spec §5.3): an object with exactly its three members, then `name` (its pattern,
 * then its distinctness from the names in `seen`), `size`, `sha256`.
 * @param {unknown} e
 * @param {string} at
 * @param {Set<string>} seen
 * @returns {ManifestIssue | null}
 */
function entryIssue(e, at, seen) {
  if (!isMap(e) || e.size !== ENTRY_PROPERTIES.length || !ENTRY_PROPERTIES.every((k) => e.has(k)))
    return invalid(
      membersPointer(e, at, ENTRY_PROPERTIES),
      'a member entry must be an object with exactly the members name, size and sha256',
    );
  const name = e.get('name');
  if (!isStr(name) || name.length > MAX_NAME_BYTES || UNLISTED.includes(name) || !MEMBER_NAME.test(name))
    return invalid(`${at}/name`, 'invalid member name');
  if (seen.has(name)) return invalid(`${at}/name`, `member ${JSON.stringify(name)} is listed twice`);
  seen.add(name);
  if (!isSize(e.get('size'))) return invalid(`${at}/size`, 'size must be an integer >= 0');
  const sha = e.get('sha256');
  if (!isStr(sha) || !SHA256.test(sha)) return invalid(`${at}/sha256`, 'sha256 must be 64 lower-case hex digits');
  return null;
}

/**
 * `members`: an array, then entry by entry; more than MAX_MEMBERS entries is LIMIT_EXCEEDED at the
 * first entry beyond, in its turn (spec §5.3).
 * @param {unknown} entries
 * @param {string} ptr
 * @returns {ManifestIssue | null}
 */
function membersIssue(entries, ptr) {
  if (!Array.isArray(entries)) return invalid(ptr, 'members must be an array');
  /** @type {Set<string>} */
  const seen = new Set();
  for (let i = 0; i < entries.length; i++) {
    const at = `${ptr}/${i}`;
    if (i === MAX_MEMBERS)
      return { pointer: at, message: `more than ${MAX_MEMBERS} member entries`, code: 'LIMIT_EXCEEDED' };
    const issue = entryIssue(entries[i], at, seen);
    if (issue) return issue;
  }
  return null;
}

/**
 * `extensions_used`, `extensions_required`: an array, each element a well-formed extension name
 * unequal to the ones before it (both at the element).
 * @param {unknown} names
 * @param {string} ptr
 * @returns {ManifestIssue | null}
 */
function extensionListIssue(names, ptr) {
  if (!Array.isArray(names)) return invalid(ptr, `${ptr.slice(1)} must be an array`);
  const seen = new Set();
  for (let i = 0; i < names.length; i++) {
    if (!isStr(names[i]) || !EXTENSION_NAME.test(names[i])) return invalid(`${ptr}/${i}`, 'invalid extension name');
    if (seen.has(names[i])) return invalid(`${ptr}/${i}`, 'extension names must be unique');
    seen.add(names[i]);
  }
  return null;
}

/**
 * `extensions`: an object whose keys, in document order, are well-formed extension names.
 * @param {unknown} x
 * @param {string} ptr
 * @returns {ManifestIssue | null}
 */
function extensionsIssue(x, ptr) {
  if (!isMap(x)) return invalid(ptr, 'extensions must be an object');
  const bad = [...x.keys()].find((k) => !EXTENSION_NAME.test(k));
  return bad === undefined ? null : invalid(pointerJoin(ptr, bad), 'invalid extension name');
}

/**
 * `metadata`: an object whose values, in document order, are strings.
 * @param {unknown} x
 * @param {string} ptr
 * @returns {ManifestIssue | null}
 */
function metadataIssue(x, ptr) {
  if (!isMap(x)) return invalid(ptr, 'metadata must be an object');
  const bad = [...x].find(([, v]) => !isStr(v));
  return bad === undefined ? null : invalid(pointerJoin(ptr, bad[0]), 'metadata values must be strings');
}

/**
 * The rules of each property after `format` and `format_version` (spec §5.1), by name.
 * @type {Record<string, (x: unknown, ptr: string) => ManifestIssue | null>}
 */
const PROPERTY_RULES = {
  producer: producerIssue,
  members: membersIssue,
  extensions_used: extensionListIssue,
  extensions_required: extensionListIssue,
  extensions: extensionsIssue,
  metadata: metadataIssue,
};

/**
 * The first break of the rules of §5.1 and §5.3 in the order of §11.2, or null: a missing REQUIRED
 * property (at the manifest), then each property in the order of §5.1's table, depth first; inside
 * an object, a missing member (at the object), then a member not allowed (at it), then its members
 * in table order; an array's elements and a free map's entries in document order. A repeated member
 * name is at the later entry's `name`, after that name's own rules; more than MAX_MEMBERS entries is
 * LIMIT_EXCEEDED at the first entry beyond. `format` and `format_version` are checked before (§5.2);
 * schemas/manifest-1.0.schema.json states the same rules (tests hold the two against each other).
 * Returns null or {pointer, message, code}.
 * @param {JsonObject} m
 * @returns {ManifestIssue | null}
 */
export function checkManifestRules(m) {
  const missing = REQUIRED.find((k) => !m.has(k));
  if (missing !== undefined) return invalid('', `the manifest needs the member "${missing}"`);
  for (const key of PROPERTIES) {
    const rule = Object.hasOwn(PROPERTY_RULES, key) ? PROPERTY_RULES[key] : null;
    const issue = rule && m.has(key) ? rule(m.get(key), `/${key}`) : null;
    if (issue) return issue;
  }
  return null;
}
