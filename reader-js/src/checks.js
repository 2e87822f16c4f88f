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
  located,
} from './zipread.js';
import { checkManifest as checkManifestTree, KNOWN_PROPERTIES, SUPPORTED_EXTENSIONS } from './manifest.js';
import { checkMetadata } from './metadata.js';
import { checkDataDocument, checkDataStructure } from './values.js';
import { checkReference, entryPointer, groupOf, readSafetensorsHeader } from './tensors.js';
import { readDocument, SUPPORTED } from './extensions/index.js';
import { checkParamTensors, POLICY_GROUP } from './param_tensors.js';
import { prefetchOpening } from './read_plan.js';

/** @typedef {import('./sources.js').Source} Source */
/** @typedef {import('./zipread.js').Member} Member */
/** @typedef {import('./zipread.js').LocatedMember} LocatedMember */
/** @typedef {import('./zipread.js').EndRecords} EndRecords */
/** @typedef {import('./tensors.js').TensorInfo} TensorInfo */
/** @typedef {import('./json.js').JsonObject} JsonObject */
/** @typedef {import('../index.js').Reference} Reference */
/**
 * The manifest checked at step 6 (§5): as parsed (json.js), its member entries by name in manifest
 * order, and `extensions_used`.
 * @typedef {object} CheckedManifest
 * @property {JsonObject} raw
 * @property {Map<string, {name: string, size: number, sha256: string}>} members
 * @property {readonly string[]} extensionsUsed
 */
/**
 * The data document checked at step 7 (§7.1): its `data` and `optimizers` objects as parsed (json.js).
 * @typedef {{data: JsonObject, optimizers: JsonObject}} DataDocument
 */
/**
 * The fields of a CheckState (see checkState).
 * @typedef {object} CheckFields
 * @property {Source} source the byte source
 * @property {Readonly<EndRecords> | null} end after step 2
 * @property {Map<string, Readonly<Member>> | null} members after step 3 (central records), step 4 (with
 *   `dataOffset`): name -> Member in ZIP order
 * @property {Readonly<CheckedManifest> | null} manifest after step 6
 * @property {Readonly<DataDocument> | null} document after step 7; null when step 7 failed or did not run
 * @property {readonly Reference[]} references after step 7: the references met, in document order
 * @property {Map<string, Map<string, TensorInfo>> | null} tensorHeaders after step 8: group -> (tensor
 *   name -> TensorInfo), the groups whose member passed
 * @property {readonly string[]} failedGroups after step 8: the groups whose member failed
 * @property {readonly RlarchiveError[]} warnings warnings (and infos) so far, in the order found
 * @property {readonly RlarchiveError[]} issues the errors steps 8 to 11 collected, in the order found
 * @property {Uint8Array | null} dataJson between steps 6 and 7: data.json's bytes
 * @property {boolean} digestTensors asks step 10 for `tensorDigests`
 * @property {ReadonlyMap<string, ReadonlyMap<string, string>>} tensorDigests after step 10 with
 *   `digestTensors`: group -> (tensor name -> SHA-256 hex)
 * @property {ReadonlyMap<string, unknown>} extensionDocuments after step 11: extension name -> its checked raw value
 */
/** @typedef {Readonly<CheckFields>} CheckState The frozen record every step takes and returns (checkState). */
/** @typedef {(state: CheckState) => Promise<CheckState>} CheckStep A step of §11.1. */
/** @typedef {'structure' | 'data' | 'tensors' | 'integrity' | 'extensions'} PhaseName */
/** @typedef {'end' | 'members' | 'manifest' | 'document' | 'tensorHeaders'} LaterField */

/** @type {readonly never[]} */
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
 * @param {Partial<CheckFields> & {source: Source}} fields
 * @returns {CheckState}
 */
export function checkState(fields) {
  const s = /** @type {CheckFields} */ ({
    source: null, // given by `fields`
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
    .../** @type {Partial<CheckFields>} */ (fields),
  });
  const lists = /** @type {Record<string, readonly unknown[]>} */ (/** @type {unknown} */ (s)); // its four lists
  for (const k of ['references', 'failedGroups', 'warnings', 'issues'])
    lists[k] = Object.isFrozen(lists[k]) ? lists[k] : Object.freeze([...lists[k]]);
  return Object.freeze(s);
}

/**
 * The field `key` of `state`, which an earlier step set; a TypeError when that step has not run.
 * @template {LaterField} K
 * @param {CheckState} state
 * @param {K} key
 * @returns {NonNullable<CheckState[K]>}
 */
export function required(state, key) {
  const value = state[key];
  if (value == null) throw new TypeError(`the check state has no ${key}: the step that sets it has not run`);
  return value;
}

/**
 * A copy of `state` with `fields` changed.
 * @type {(state: CheckState, fields: Partial<CheckFields>) => CheckState}
 */
const next = (state, fields) => checkState({ ...state, ...fields });
/**
 * A copy of `state` with `items` appended to its list `key` (warnings or issues).
 * @type {(state: CheckState, key: 'warnings' | 'issues', items: readonly RlarchiveError[]) => CheckState}
 */
const appended = (state, key, items) => next(state, items.length ? { [key]: [...state[key], ...items] } : {});

/**
 * Runs `check`; resolves to null, or the RlarchiveError it rejected with (any other error is rethrown).
 * @param {() => unknown} check
 * @returns {Promise<RlarchiveError | null>}
 */
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
 * @type {CheckStep}
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
 * @type {CheckStep}
 */
export async function readEndRecords(state) {
  const found = await findEndRecord(state.source);
  return next(state, { end: checkEndRecords(found, readZip64EndRecords(found)) });
}

/**
 * Step 3 (§2.2): the central records in order, no bytes after the last, the
 * names across records. Sets `members`: name -> Member in ZIP order (no
 * `dataOffset` yet).
 * @type {CheckStep}
 */
export async function readCentralDirectory(state) {
  const { cdOffset, cdSize, count } = required(state, 'end');
  const cd = await readAt(state.source, cdOffset, cdSize);
  /** @type {Readonly<Member>[]} */
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
 * @type {CheckStep}
 */
export async function readLocalHeaders(state) {
  /** @type {Map<string, LocatedMember>} */
  const members = new Map();
  for (const m of required(state, 'members').values())
    members.set(m.name, Object.freeze({ ...m, dataOffset: await readLocalHeader(state.source, m) }));
  await checkMemberLayout(state.source, [...members.values()], required(state, 'end'));
  return next(state, { members });
}

/**
 * Step 5 (§4): `mimetype` first (29 bytes), the required members present, no unexpected name.
 * @type {CheckStep}
 */
export async function checkLayout(state) {
  const byName = required(state, 'members');
  const members = [...byName.values()];
  if (members.length === 0 || members[0].name !== 'mimetype')
    throw fail('ARCHIVE_NOT_RLARCHIVE', "the first member is not 'mimetype'", { offset: 0 });
  if (members[0].size !== MIMETYPE_SIZE)
    throw fail('ARCHIVE_NOT_RLARCHIVE', "the 'mimetype' member has the wrong size", { member: 'mimetype', offset: 0 });
  for (const req of ['manifest.json', 'data.json']) {
    if (!byName.has(req)) throw fail('MEMBER_REQUIRED_MISSING', `required member ${req} is absent`, { member: req });
  }
  /** @type {(name: string) => boolean} */
  const isExtensionMember = (name) => name.startsWith('extensions/') && name.split('/').length >= 3;
  for (const m of members) {
    if (!FIXED.includes(m.name) && groupOf(m.name) === null && !isExtensionMember(m.name)) {
      throw fail('MEMBER_UNEXPECTED', `member ${m.name} is not part of the archive layout`, { member: m.name });
    }
  }
  return next(state, {});
}

/**
 * The warnings of a checked manifest: unknown properties, metadata, unsupported extensions.
 * @param {ReadonlyMap<string, unknown>} tree
 * @param {readonly string[]} used
 * @returns {RlarchiveError[]}
 */
function manifestWarnings(tree, used) {
  /** @type {RlarchiveError[]} */
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
  warnings.push(...checkMetadata(/** @type {import('./metadata.js').Metadata} */ (tree.get('metadata')))); // checked (manifest.js)
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

/**
 * §5.2: the members and the manifest's entries agree (extension members, listed, sizes, present).
 * @param {ReadonlyMap<string, Readonly<Member>>} members
 * @param {ReadonlyMap<string, {size: number}>} entries
 * @param {readonly string[]} used
 */
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
 * @type {CheckStep}
 */
export async function checkManifest(state) {
  const members = required(state, 'members');
  const tree = await readJsonMember(state.source, located(members.get('manifest.json')));
  const { entries, used } = checkManifestTree(tree);
  const raw = /** @type {JsonObject} */ (tree); // checkManifestTree found an object
  const warnings = manifestWarnings(raw, used);
  checkMemberEntries(members, entries, used);
  const { sha, bytes } = await hashMember(state.source, located(members.get('data.json')), [], {
    wholeLimit: MAX_JSON_BYTES,
  });
  if (sha !== entries.get('data.json')?.sha256)
    throw fail('MEMBER_DIGEST_MISMATCH', 'data.json does not match its SHA-256', { member: 'data.json' });
  /** @type {Readonly<CheckedManifest>} */
  const manifest = Object.freeze({ raw, members: entries, extensionsUsed: Object.freeze([...used]) });
  return appended(next(state, { manifest, dataJson: bytes ?? null }), 'warnings', warnings);
}

/**
 * Step 7 (§7): data.json, its structure and every value in document order.
 * Sets `document` ({data, optimizers}, json.js trees) and `references` (the
 * references met, in document order); warns of unknown properties.
 * @type {CheckStep}
 */
export async function checkData(state) {
  const m = located(required(state, 'members').get('data.json'));
  const doc = await readJsonMember(state.source, m, state.dataJson ?? undefined);
  const checked = checkDataDocument(doc);
  /** @type {Readonly<DataDocument>} */
  const document = Object.freeze({ data: checked.data, optimizers: checked.optimizers });
  const found = next(state, { document, references: checked.references, dataJson: null });
  return appended(found, 'warnings', unknownProperties(/** @type {JsonObject} */ (doc))); // an object (checked)
}

/**
 * DATA_UNKNOWN_PROPERTY for each top-level property of a data document other than data and optimizers.
 * @param {ReadonlyMap<string, unknown>} doc
 * @returns {RlarchiveError[]}
 */
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
 * @param {CheckState} state
 * @returns {Promise<RlarchiveError[]>}
 */
export async function dataWarnings(state) {
  try {
    const m = located(required(state, 'members').get('data.json'));
    const doc = await readJsonMember(state.source, m, state.dataJson ?? undefined);
    checkDataStructure(doc);
    return unknownProperties(/** @type {JsonObject} */ (doc)); // an object (checked)
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
 * @type {CheckStep}
 */
export async function checkTensorMembers(state) {
  /** @type {Map<string, Map<string, TensorInfo>>} */
  const headers = new Map();
  /** @type {string[]} */
  const failed = [];
  /** @type {RlarchiveError[]} */
  const issues = [];
  for (const m of required(state, 'members').values()) {
    const g = groupOf(m.name);
    if (g === null) continue;
    const e = await caught(async () => headers.set(g, (await readSafetensorsHeader(state.source, located(m))).tensors));
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
 * @type {CheckStep}
 */
export async function checkReferences(state) {
  if (state.document === null) return next(state, {});
  const document = state.document;
  const failed = new Set(state.failedGroups);
  const e = await caught(() => {
    for (const ref of state.references)
      if (!failed.has(ref.group)) checkReference(required(state, 'tensorHeaders'), ref, 'data.json');
  });
  const policy = failed.has(POLICY_GROUP) ? null : (required(state, 'tensorHeaders').get(POLICY_GROUP) ?? new Map());
  const named = checkParamTensors(document.optimizers, policy);
  return appended(next(state, {}), 'issues', /** @type {RlarchiveError[]} */ ([e, named].filter(Boolean)));
}

/**
 * The ST_BOOL_VALUE warnings of one member's BOOL tensors holding a byte other than 0 or 1.
 * @param {Readonly<Member>} m
 * @param {readonly string[]} names
 * @param {readonly TensorInfo[]} infos
 * @returns {RlarchiveError[]}
 */
function boolWarnings(m, names, infos) {
  const byName = names.length ? new Map(infos.map((t) => [t.name, t])) : null;
  return names.map(
    (name) =>
      new RlarchiveError('ST_BOOL_VALUE', `BOOL tensor ${name} holds a byte other than 0 or 1`, {
        member: m.name,
        pointer: entryPointer(name),
        offset: byName?.get(name)?.offset, // `names` are among `infos`
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
 * @type {CheckStep}
 */
export async function checkDigests(state) {
  /** @type {RlarchiveError[]} */
  const issues = [];
  /** @type {RlarchiveError[]} */
  const warnings = [];
  /** @type {Map<string, Map<string, string>>} */
  const tensorDigests = new Map();
  const digest = state.digestTensors;
  for (const m of required(state, 'members').values()) {
    if (m.name === 'manifest.json' || m.name === 'data.json') continue;
    const g = groupOf(m.name);
    const group = g !== null && state.tensorHeaders?.has(g) ? state.tensorHeaders.get(g) : undefined;
    const infos = group ? [...group.values()] : [];
    const e = await caught(async () => {
      const entry = required(state, 'manifest').members.get(m.name);
      const r = await verifyMember(state.source, located(m), entry, infos, { digest });
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
 * @param {CheckState} state
 * @param {string} name
 * @returns {Promise<CheckState>}
 */
export async function checkExtension(state, name) {
  const ext = SUPPORTED.get(name);
  if (!ext || !required(state, 'manifest').extensionsUsed.includes(name)) return next(state, {});
  if (state.document === null && ext.readsData) return next(state, {});
  /** @type {unknown} */
  let value = null;
  const e = await caught(async () => {
    value = await readDocument(state, name, new Set(state.failedGroups));
  });
  if (e) return appended(next(state, {}), 'issues', [e]);
  return next(state, { extensionDocuments: new Map([...state.extensionDocuments, [name, value]]) });
}

/**
 * Step 11 (§5.4): checkExtension for every used extension, in the order of extensions_used.
 * @type {CheckStep}
 */
export async function checkExtensions(state) {
  for (const name of required(state, 'manifest').extensionsUsed) state = await checkExtension(state, name);
  return state;
}

/**
 * The phases of §11.1 by name, each with its steps in order (python/rlarchive/checks.py's PHASES has the same
 * names and steps): structure (1 to 6, a validator stops at their first error), data (7), tensors (8 and 9),
 * integrity (10, the deferred checks), extensions (11).
 * @type {Readonly<Record<PhaseName, readonly CheckStep[]>>}
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
/** The phases open() runs; the ones the dump and the validator run after them. @type {readonly PhaseName[]} */
export const OPEN = Object.freeze(['structure', 'data', 'tensors']);
/** @type {readonly PhaseName[]} */
export const DEFERRED = Object.freeze(['integrity', 'extensions']);

/** The steps of §11.1 in order: the phases' steps one after the other. @type {readonly CheckStep[]} */
export const STEPS = Object.freeze(Object.values(PHASES).flat());

/**
 * Runs the steps of the named phases, in order, from `state` (a name not in PHASES is a TypeError).
 * @param {CheckState} state
 * @param {...PhaseName} names
 * @returns {Promise<CheckState>}
 */
export async function runPhases(state, ...names) {
  for (const name of names) {
    const steps = Object.hasOwn(PHASES, name) ? PHASES[name] : null;
    if (!steps) throw new TypeError(`no phase ${JSON.stringify(name)}`);
    for (const step of steps) state = await step(state);
  }
  return state;
}
