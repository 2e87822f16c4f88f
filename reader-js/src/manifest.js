// The manifest (§5): checks of step 6 of §11.1 up to the extensions.

import { fail, pointerJoin } from './errors.js';
import { validateSchema } from './schema.js';
import { NAMES } from './extensions/index.js';
import { MAX_MEMBERS } from './limits.js';

export const FORMAT = 'rlarchive';
export const MAJOR = 1;
export const MINOR = 0;
/** Extensions this reader supports (spec §5.4 and spec/extensions/). */
export const SUPPORTED_EXTENSIONS = NAMES;
export const KNOWN_PROPERTIES = Object.freeze([
  'format',
  'format_version',
  'producer',
  'members',
  'extensions_used',
  'extensions_required',
  'extensions',
  'metadata',
]);
const VERSION = /^(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})$/;

const bad = (code, msg, pointer) => fail(code, msg, { member: 'manifest.json', pointer });

/**
 * Checks a parsed manifest (json.js tree): object, format and version first,
 * then its structure (the rules of §5.1 and §5.3 in the order of §11.2, then the
 * schema as well), then extensions (undeclared, then unsupported).
 * Returns {entries: Map(name -> {name, size, sha256}), used: string[]}.
 */
export function checkManifest(m, schema) {
  if (!(m instanceof Map)) throw bad('MANIFEST_INVALID', 'the manifest is not a JSON object', '');
  if (!m.has('format')) throw bad('MANIFEST_INVALID', 'the manifest needs the member "format"', '');
  if (m.get('format') !== FORMAT) throw bad('MANIFEST_INVALID', 'format must be "rlarchive"', '/format');
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
  if (r) throw bad(r.code ?? 'MANIFEST_INVALID', r.message, r.pointer);
  if (schema) {
    // the same rules; a break here that the rules above missed is still reported
    const e = validateSchema(schema, m);
    if (e) throw bad('MANIFEST_INVALID', e.message, e.pointer);
  }
  const entries = new Map();
  for (const e of m.get('members')) {
    const name = e.get('name');
    entries.set(name, { name, size: Number(e.get('size')), sha256: e.get('sha256') });
  }
  const used = m.get('extensions_used') ?? [];
  const usedSet = new Set(used);
  const required = m.get('extensions_required') ?? [];
  required.forEach((x, i) => {
    if (!usedSet.has(x))
      throw bad(
        'EXTENSION_UNDECLARED',
        `required extension ${x} is not in extensions_used`,
        `/extensions_required/${i}`,
      );
  });
  for (const x of (m.get('extensions') ?? new Map()).keys()) {
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

const isStr = (x) => typeof x === 'string';
const isMap = (x) => x instanceof Map;
const EXT = /^[A-Za-z0-9_]{1,64}$/;
const NAME = /^(?!(mimetype|manifest\.json)$)[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
const cps = (s) => [...s].length;

/**
 * The rules of §5.1 and §5.3 written out (the same as the manifest schema), in the
 * order of §11.2: depth first; inside an object, a missing member (at the object),
 * then a member not allowed (at it), then the members in the order of §5's tables;
 * an array's elements and a free map's entries in document order. A repeated member
 * name is at the later entry's `name`, after that name's own rules; more than
 * MAX_MEMBERS entries is LIMIT_EXCEEDED at the first entry beyond. Returns null or
 * {pointer, message, code?}.
 */
export function checkManifestRules(m) {
  const err = (pointer, message, code) => ({ pointer, message, code });
  for (const k of ['format', 'format_version', 'producer', 'members'])
    if (!m.has(k)) return err('', `missing property ${k}`);
  const p = m.get('producer');
  if (!isMap(p)) return err('/producer', 'producer must be an object');
  for (const k of ['name', 'version']) if (!p.has(k)) return err('/producer', `producer needs the member ${k}`);
  for (const k of p.keys())
    if (k !== 'name' && k !== 'version') return err(pointerJoin('/producer', k), `unexpected producer property ${k}`);
  if (!isStr(p.get('name')) || cps(p.get('name')) < 1 || cps(p.get('name')) > 256)
    return err('/producer/name', 'producer name must be a string of 1 to 256 characters');
  if (!isStr(p.get('version')) || cps(p.get('version')) > 256)
    return err('/producer/version', 'producer version must be a string of at most 256 characters');
  const members = m.get('members');
  if (!Array.isArray(members)) return err('/members', 'members must be an array');
  const seen = new Set();
  for (let i = 0; i < members.length; i++) {
    const at = `/members/${i}`;
    if (i === MAX_MEMBERS) return err(at, `more than ${MAX_MEMBERS} member entries`, 'LIMIT_EXCEEDED');
    const e = members[i];
    if (!isMap(e)) return err(at, 'member entry must be an object');
    for (const k of ['name', 'size', 'sha256']) if (!e.has(k)) return err(at, `member entry needs the member ${k}`);
    for (const k of e.keys())
      if (!['name', 'size', 'sha256'].includes(k))
        return err(pointerJoin(at, k), `unexpected member entry property ${k}`);
    const name = e.get('name'),
      size = e.get('size'),
      sha = e.get('sha256');
    if (!isStr(name) || cps(name) > 255 || !NAME.test(name)) return err(`${at}/name`, 'invalid member name');
    if (seen.has(name)) return err(`${at}/name`, `member ${JSON.stringify(name)} is listed twice`);
    seen.add(name);
    if (
      !((typeof size === 'bigint' && size >= 0n) || (typeof size === 'number' && Number.isInteger(size) && size >= 0))
    ) {
      return err(`${at}/size`, 'size must be an integer >= 0');
    }
    if (!isStr(sha) || !/^[0-9a-f]{64}$/.test(sha))
      return err(`${at}/sha256`, 'sha256 must be 64 lower-case hex digits');
  }
  for (const k of ['extensions_used', 'extensions_required']) {
    if (!m.has(k)) continue;
    const a = m.get(k);
    if (!Array.isArray(a)) return err(`/${k}`, `${k} must be an array`);
    const seen = new Set();
    for (let i = 0; i < a.length; i++) {
      if (!isStr(a[i]) || !EXT.test(a[i])) return err(`/${k}/${i}`, 'invalid extension name');
      if (seen.has(a[i])) return err(`/${k}/${i}`, 'extension names must be unique');
      seen.add(a[i]);
    }
  }
  if (m.has('extensions')) {
    const x = m.get('extensions');
    if (!isMap(x)) return err('/extensions', 'extensions must be an object');
    for (const k of x.keys()) if (!EXT.test(k)) return err(pointerJoin('/extensions', k), 'invalid extension name');
  }
  if (m.has('metadata')) {
    const x = m.get('metadata');
    if (!isMap(x)) return err('/metadata', 'metadata must be an object');
    for (const [k, v] of x) if (!isStr(v)) return err(pointerJoin('/metadata', k), 'metadata values must be strings');
  }
  return null;
}
