// The check pipeline of spec §11.1: one function per step, in order, each
// taking the CheckState the earlier steps produced and resolving to the next
// (a new frozen copy; all it holds is in its fields). Steps 1 to 7 reject with
// RlarchiveError at their first broken rule; steps 8 to 11 never reject for a
// broken rule: they append it to `issues`. What the later steps find is in the
// state too: step 10 the ST_BOOL_VALUE warnings and (asked by `digestTensors`)
// each tensor's SHA-256, which the dump prints; step 11 each extension's
// checked document.
//
// PHASES names the steps by what they check, and reader.js chooses phases by
// name (runPhases): `structure` (steps 1 to 6, a validator stops at their
// first error, §14), `data` (7), `tensors` (8 and 9) — open() runs these three
// (OPEN) — then `integrity` (10) and `extensions` (11), which the dump and
// the validator run after them (DEFERRED). The twin of python/rlarchive/checks.py.

import { fail, pointerJoin, RlarchiveError } from './errors.js';
import { MAX_JSON_BYTES } from './limits.js';
import { checkIdentification, hashMember, readAt, readJsonMember, verifyMember } from './zipprofile.js';
import {
  checkEndRecords,
  checkMemberLayout,
  checkMemberNames,
  findEndRecord,
  readCentralRecord,
  readLocalHeader,
  readZip64EndRecords,
} from './zipread.js';
import { checkManifest as checkManifestTree, KNOWN_PROPERTIES, SUPPORTED_EXTENSIONS } from './manifest.js';
import { checkMetadata } from './metadata.js';
import { checkDataDocument, checkDataStructure } from './values.js';
import { checkReference, entryPointer, groupOf, readSafetensorsHeader } from './tensors.js';
import { readDocument, SUPPORTED } from './extensions/index.js';
import { checkParamTensors, POLICY_GROUP } from './param_tensors.js';
import { prefetchOpening } from './read_plan.js';

const EMPTY = Object.freeze([]);
const FIXED = ['mimetype', 'manifest.json', 'data.json'];
const MIMETYPE_SIZE = 29;

/**
 * A CheckState: the frozen record every step takes and returns. `fields`
 * gives any of: source (sources.js), end, members, manifest, document,
 * references, tensorHeaders, failedGroups, warnings, issues, dataJson (between
 * steps 6 and 7, data.json's bytes when within MAX_JSON_BYTES: read once for
 * step 6's digest and step 7's parse, which sets it back to null),
 * digestTensors (asks step 10 for tensorDigests, the dump's), tensorDigests
 * (after step 10: group -> Map(tensor name -> SHA-256 hex) for the members
 * that passed), extensionDocuments (after step 11: extension name -> its
 * checked raw value); the others take their initial value (null, false, an
 * empty frozen array or a new empty Map). Arrays are frozen; a Map of the
 * state is not changed once the state holds it (each step makes new ones).
 */
export function checkState(fields) {
  const s = {
    source: null,
    end: null,
    members: null,
    manifest: null,
    document: null,
    references: EMPTY,
    tensorHeaders: null,
    failedGroups: EMPTY,
    warnings: EMPTY,
    issues: EMPTY,
    dataJson: null,
    digestTensors: false,
    tensorDigests: new Map(),
    extensionDocuments: new Map(),
    ...fields,
  };
  for (const k of ['references', 'failedGroups', 'warnings', 'issues'])
    s[k] = Object.isFrozen(s[k]) ? s[k] : Object.freeze([...s[k]]);
  return Object.freeze(s);
}

/** A copy of `state` with `fields` changed. */
const next = (state, fields) => checkState({ ...state, ...fields });
/** A copy of `state` with `items` appended to its list `key` (warnings or issues). */
const appended = (state, key, items) => next(state, items.length ? { [key]: [...state[key], ...items] } : {});

/** Runs `check`; resolves to null, or the RlarchiveError it rejected with (any other error is rethrown). */
async function caught(check) {
  try {
    await check();
    return null;
  } catch (e) {
    if (!(e instanceof RlarchiveError)) throw e;
    return e;
  }
}

/**
 * Step 1 (§3): the 45 identification bytes of a file of at least 67 bytes. A
 * remote source is first told what steps 1 to 8 will read (read_plan.js).
 */
export async function identify(state) {
  await prefetchOpening(state.source);
  await checkIdentification(state.source);
  return next(state, {});
}

/**
 * Step 2 (§2.1, §2.6): the end of central directory record, the ZIP64
 * locator and record, one disk, MAX_MEMBERS, the directory's size and
 * position. Sets `end`: {count, cdOffset, cdSize, endStart, eocdAt, sizeAt, zip64}.
 */
export async function readEndRecords(state) {
  const found = await findEndRecord(state.source);
  return next(state, { end: checkEndRecords(found, readZip64EndRecords(found)) });
}

/**
 * Step 3 (§2.2): the central records in order, no bytes after the last, the
 * names across records. Sets `members`: name -> Member in ZIP order (no
 * `dataOffset` yet).
 */
export async function readCentralDirectory(state) {
  const { cdOffset, cdSize, count } = state.end;
  const cd = await readAt(state.source, cdOffset, cdSize);
  const list = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    const r = readCentralRecord(cd, p, cdOffset, i);
    list.push(r.member);
    p = r.next;
  }
  if (p !== cdSize)
    throw fail('ZIP_CD_INVALID', 'the records do not fill the central directory', { offset: cdOffset + p });
  checkMemberNames(list);
  return next(state, { members: new Map(list.map((m) => [m.name, m])) });
}

/**
 * Step 4 (§2.3, §2.1): the local headers in central order, then the layout
 * (overlaps, gaps, the end gap). Sets `members` to Members with `dataOffset`.
 */
export async function readLocalHeaders(state) {
  const members = new Map();
  for (const m of state.members.values())
    members.set(m.name, Object.freeze({ ...m, dataOffset: await readLocalHeader(state.source, m) }));
  await checkMemberLayout(state.source, [...members.values()], state.end);
  return next(state, { members });
}

/** Step 5 (§4): `mimetype` first (29 bytes), the required members present, no unexpected name. */
export async function checkLayout(state) {
  const members = [...state.members.values()];
  if (members.length === 0 || members[0].name !== 'mimetype')
    throw fail('ARCHIVE_NOT_RLARCHIVE', "the first member is not 'mimetype'", { offset: 0 });
  if (members[0].size !== MIMETYPE_SIZE)
    throw fail('ARCHIVE_NOT_RLARCHIVE', "the 'mimetype' member has the wrong size", { member: 'mimetype', offset: 0 });
  for (const req of ['manifest.json', 'data.json']) {
    if (!state.members.has(req))
      throw fail('MEMBER_REQUIRED_MISSING', `required member ${req} is absent`, { member: req });
  }
  const isExtensionMember = (name) => name.startsWith('extensions/') && name.split('/').length >= 3;
  for (const m of members) {
    if (!FIXED.includes(m.name) && groupOf(m.name) === null && !isExtensionMember(m.name)) {
      throw fail('MEMBER_UNEXPECTED', `member ${m.name} is not part of the archive layout`, { member: m.name });
    }
  }
  return next(state, {});
}

/** The warnings of a checked manifest: unknown properties, metadata, unsupported extensions. */
function manifestWarnings(tree, used) {
  const warnings = [];
  for (const k of tree.keys()) {
    if (!KNOWN_PROPERTIES.includes(k))
      warnings.push(
        new RlarchiveError('MANIFEST_UNKNOWN_PROPERTY', `unknown manifest property ${k} ignored`, {
          member: 'manifest.json',
          pointer: pointerJoin('', k),
        }),
      );
  }
  warnings.push(...checkMetadata(tree.get('metadata')));
  used.forEach((x, i) => {
    if (!SUPPORTED_EXTENSIONS.includes(x))
      warnings.push(
        new RlarchiveError('EXTENSION_UNKNOWN', `extension ${x} is used but not supported; ignored`, {
          member: 'manifest.json',
          pointer: `/extensions_used/${i}`,
        }),
      );
  });
  return warnings;
}

/** §5.2: the members and the manifest's entries agree (extension members, listed, sizes, present). */
function checkMemberEntries(members, entries, used) {
  const usedSet = new Set(used);
  for (const m of members.values()) {
    if (m.name.startsWith('extensions/') && !usedSet.has(m.name.split('/')[1])) {
      throw fail('MEMBER_UNEXPECTED', `member ${m.name} belongs to an extension not in extensions_used`, {
        member: m.name,
      });
    }
  }
  for (const m of members.values()) {
    if (m.name === 'mimetype' || m.name === 'manifest.json') continue;
    const e = entries.get(m.name);
    if (!e) throw fail('MEMBER_UNLISTED', `member ${m.name} is not listed in the manifest`, { member: m.name });
    if (e.size !== m.size)
      throw fail('MEMBER_SIZE_MISMATCH', `member ${m.name} has ${m.size} bytes, the manifest says ${e.size}`, {
        member: m.name,
      });
  }
  let i = 0;
  for (const name of entries.keys()) {
    if (!members.has(name))
      throw fail('MEMBER_MISSING', `listed member ${name} is absent`, {
        member: 'manifest.json',
        pointer: `/members/${i}`,
      });
    i++;
  }
}

/**
 * Step 6 (§5): manifest.json (JSON, format, version, schema, extensions),
 * the member entries, data.json's digest. Sets `manifest`: {raw, members
 * (name -> {name, size, sha256}), extensionsUsed}; warns of unknown
 * properties, malformed metadata and unsupported extensions.
 */
export async function checkManifest(state) {
  const tree = await readJsonMember(state.source, state.members.get('manifest.json'));
  const { entries, used } = checkManifestTree(tree);
  const warnings = manifestWarnings(tree, used);
  checkMemberEntries(state.members, entries, used);
  const { sha, bytes } = await hashMember(state.source, state.members.get('data.json'), [], {
    wholeLimit: MAX_JSON_BYTES,
  });
  if (sha !== entries.get('data.json').sha256)
    throw fail('MEMBER_DIGEST_MISMATCH', 'data.json does not match its SHA-256', { member: 'data.json' });
  const manifest = Object.freeze({ raw: tree, members: entries, extensionsUsed: Object.freeze([...used]) });
  return appended(next(state, { manifest, dataJson: bytes ?? null }), 'warnings', warnings);
}

/**
 * Step 7 (§7): data.json, its structure and every value in document order.
 * Sets `document` ({data, optimizers}, json.js trees) and `references` (the
 * references met, in document order); warns of unknown properties.
 */
export async function checkData(state) {
  const doc = await readJsonMember(state.source, state.members.get('data.json'), state.dataJson ?? undefined);
  const checked = checkDataDocument(doc);
  const document = Object.freeze({ data: checked.data, optimizers: checked.optimizers });
  const found = next(state, { document, references: checked.references, dataJson: null });
  return appended(found, 'warnings', unknownProperties(doc));
}

/** DATA_UNKNOWN_PROPERTY for each top-level property of a data document other than data and optimizers. */
function unknownProperties(doc) {
  return [...doc.keys()]
    .filter((k) => k !== 'data' && k !== 'optimizers')
    .map(
      (k) =>
        new RlarchiveError('DATA_UNKNOWN_PROPERTY', `unknown data.json property ${k} ignored`, {
          member: 'data.json',
          pointer: pointerJoin('', k),
        }),
    );
}

/**
 * The warnings step 7 finds before the values (unknown top-level properties, §7.1), for a validator
 * whose step 7 failed at a value: [] when data.json cannot be read or its structure is wrong (§14).
 */
export async function dataWarnings(state) {
  try {
    const doc = await readJsonMember(state.source, state.members.get('data.json'), state.dataJson ?? undefined);
    checkDataStructure(doc);
    return unknownProperties(doc);
  } catch (e) {
    if (!(e instanceof RlarchiveError)) throw e;
    return [];
  }
}

/**
 * Step 8 (§10): the safetensors structure of each tensor member, in ZIP
 * order. Sets `tensorHeaders` (group -> Map(tensor name -> TensorInfo)) for
 * the members that passed; each that failed adds its issue and its group to
 * `failedGroups`.
 */
export async function checkTensorMembers(state) {
  const headers = new Map();
  const failed = [];
  const issues = [];
  for (const m of state.members.values()) {
    const g = groupOf(m.name);
    if (g === null) continue;
    const e = await caught(async () => headers.set(g, (await readSafetensorsHeader(state.source, m)).tensors));
    if (e) {
      issues.push(e);
      failed.push(g);
    }
  }
  return appended(next(state, { tensorHeaders: headers, failedGroups: failed }), 'issues', issues);
}

/**
 * Step 9 (§7.6, §7.9): the references of data.json in document order, but
 * those into `failedGroups`, then the optimizer states' `param_tensors` (no
 * name checked against a failed `policy` member); nothing when `document` is
 * null (step 7 failed or did not run). Adds the first broken reference and
 * the first broken rule of the names to `issues`.
 */
export async function checkReferences(state) {
  if (state.document === null) return next(state, {});
  const failed = new Set(state.failedGroups);
  const e = await caught(() => {
    for (const ref of state.references)
      if (!failed.has(ref.group)) checkReference(state.tensorHeaders, ref, 'data.json');
  });
  const policy = failed.has(POLICY_GROUP) ? null : (state.tensorHeaders.get(POLICY_GROUP) ?? new Map());
  const named = checkParamTensors(state.document.optimizers, policy);
  return appended(next(state, {}), 'issues', [e, named].filter(Boolean));
}

/** The ST_BOOL_VALUE warnings of one member's BOOL tensors holding a byte other than 0 or 1. */
function boolWarnings(m, names, infos) {
  const byName = names.length ? new Map(infos.map((t) => [t.name, t])) : null;
  return names.map(
    (name) =>
      new RlarchiveError('ST_BOOL_VALUE', `BOOL tensor ${name} holds a byte other than 0 or 1`, {
        member: m.name,
        pointer: entryPointer(name),
        offset: byName.get(name).offset,
      }),
  );
}

/**
 * Step 10 (§11.1): the deferred checks, in ZIP order: the CRC-32 then the
 * digest of every member but manifest.json and data.json (checked at steps 6
 * and 7). Each failure adds its issue. The same read of a tensor member that
 * passes warns of its BOOL tensors holding a byte other than 0 or 1
 * (ST_BOOL_VALUE, appended to `warnings`) and, when the state asks
 * (`digestTensors`), gives each tensor's SHA-256 (`tensorDigests`, the dump's).
 */
export async function checkDigests(state) {
  const issues = [];
  const warnings = [];
  const tensorDigests = new Map();
  const digest = state.digestTensors;
  for (const m of state.members.values()) {
    if (m.name === 'manifest.json' || m.name === 'data.json') continue;
    const g = groupOf(m.name);
    const infos = g !== null && state.tensorHeaders?.has(g) ? [...state.tensorHeaders.get(g).values()] : [];
    const e = await caught(async () => {
      const r = await verifyMember(state.source, m, state.manifest.members.get(m.name), infos, { digest });
      warnings.push(...boolWarnings(m, r.badBools, infos));
      if (digest && g !== null && state.tensorHeaders?.has(g))
        tensorDigests.set(g, new Map(infos.map((t, k) => [t.name, r.tensorShas[k]])));
    });
    if (e) issues.push(e);
  }
  return next(state, {
    issues: [...state.issues, ...issues],
    warnings: [...state.warnings, ...warnings],
    tensorDigests,
  });
}

/**
 * Step 11 for one extension: the checks of extension `name`'s member when
 * the archive uses it and this reader supports it (and, for an extension
 * reading data.json, when `document` is not null). Adds the first broken rule
 * to `issues`, or keeps the checked raw value in `extensionDocuments`.
 */
export async function checkExtension(state, name) {
  const ext = SUPPORTED.get(name);
  if (!ext || !state.manifest.extensionsUsed.includes(name)) return next(state, {});
  if (state.document === null && ext.readsData) return next(state, {});
  let value = null;
  const e = await caught(async () => {
    value = await readDocument(state, name, new Set(state.failedGroups));
  });
  if (e) return appended(next(state, {}), 'issues', [e]);
  return next(state, { extensionDocuments: new Map([...state.extensionDocuments, [name, value]]) });
}

/** Step 11 (§5.4): checkExtension for every used extension, in the order of extensions_used. */
export async function checkExtensions(state) {
  for (const name of state.manifest.extensionsUsed) state = await checkExtension(state, name);
  return state;
}

/**
 * The phases of §11.1 by name, each with its steps in order (python/rlarchive/checks.py's PHASES has the same
 * names and steps): structure (1 to 6, a validator stops at their first error), data (7), tensors (8 and 9),
 * integrity (10, the deferred checks), extensions (11).
 */
export const PHASES = Object.freeze({
  structure: Object.freeze([
    identify,
    readEndRecords,
    readCentralDirectory,
    readLocalHeaders,
    checkLayout,
    checkManifest,
  ]),
  data: Object.freeze([checkData]),
  tensors: Object.freeze([checkTensorMembers, checkReferences]),
  integrity: Object.freeze([checkDigests]),
  extensions: Object.freeze([checkExtensions]),
});
/** The phases open() runs; the ones the dump and the validator run after them. */
export const OPEN = Object.freeze(['structure', 'data', 'tensors']);
export const DEFERRED = Object.freeze(['integrity', 'extensions']);

/** The steps of §11.1 in order: the phases' steps one after the other. */
export const STEPS = Object.freeze(Object.values(PHASES).flat());

/** Runs the steps of the named phases, in order, from `state` (a name not in PHASES is a TypeError). */
export async function runPhases(state, ...names) {
  for (const name of names) {
    const steps = Object.hasOwn(PHASES, name) ? PHASES[name] : null;
    if (!steps) throw new TypeError(`no phase ${JSON.stringify(name)}`);
    for (const step of steps) state = await step(state);
  }
  return state;
}
