// The extensions this reader supports (spec §5.4, spec/extensions/), and
// reading their members; the twin of python/rlarchive/extensions/__init__.py.
//
// Each supported extension has one member, a JSON text whose top-level value
// is an object with exactly one property holding a value (§7). Reading it
// applies, in order: the JSON rules of §6, the value rules of §7, the
// references of §7.6, then the extension's own structure
// (EXTENSION_INVALID); every error names the extension member.
//
// Each extension has a folder of its own here (the same as in the Python
// package's extensions/): policy/, vec_normalize/, training/, replay_buffer/.
// NAMES names them; manifest.js reads the names only.

import { fail, membersPointer } from '../errors.js';
import { checkValue, isMap } from '../values.js';
import { readJsonMember } from '../zipprofile.js';
import { checkReference, findTensor, readTensor } from '../tensors.js';
import * as policyDescription from './policy/description.js';
import * as vecNormalize from './vec_normalize/index.js';
import * as trainingState from './training/index.js';
import * as replayBuffer from './replay_buffer/index.js';

/** @typedef {import('../json.js').JsonObject} JsonObject */
/** @typedef {import('../tensors.js').Tensor} Tensor */
/** @typedef {import('../tensors.js').TensorHeaders} TensorHeaders */
/** @typedef {import('../zipread.js').LocatedMember} LocatedMember */
/**
 * A CheckState (checks.js); an extension's member is read with one after step 8. (A type import
 * only: checks.js imports this module.)
 * @typedef {import('../checks.js').CheckState} CheckState
 */
/**
 * What an extension's content rules read (contentOf): data.json's raw `data` object (null when step 7
 * failed) and the archive's tensors.
 * @typedef {{data: JsonObject | null, tensor: (group: string, name: string) => Promise<Tensor>}} Content
 */
/**
 * What the module of an extension exports: its name, member, property and tensor group, its
 * structure rules (`check`, given data.json's raw `data` and the extensions used) and the rules
 * that read element bytes (`checkContent`).
 * @typedef {object} ExtensionModule
 * @property {string} EXTENSION
 * @property {string} MEMBER
 * @property {string} KEY
 * @property {string} [GROUP]
 * @property {(value: unknown, data: JsonObject | undefined, used: string[]) => unknown} check
 * @property {(content: Content, value: unknown) => Promise<void>} [checkContent]
 */
/**
 * A supported extension (SUPPORTED).
 * @typedef {{name: string, member: string, key: string, check: ExtensionModule['check'], group: string | undefined, checkContent: ExtensionModule['checkContent'], readsData: boolean}} Extension
 */

export const POLICY = 'RLA_policy';
export const VEC_NORMALIZE = 'RLA_vec_normalize';
export const TRAINING = 'RLA_training';
export const REPLAY_BUFFER = 'RLA_replay_buffer';
/** The supported extensions, in the order the dump checks them. */
export const NAMES = Object.freeze([POLICY, VEC_NORMALIZE, TRAINING, REPLAY_BUFFER]);

/** @type {Record<string, ExtensionModule>} */
const MODULES = {
  [POLICY]: policyDescription,
  [VEC_NORMALIZE]: vecNormalize,
  [TRAINING]: trainingState,
  [REPLAY_BUFFER]: replayBuffer,
};

/**
 * Supported extensions by name, in the order the dump checks them.
 * @type {Map<string, Extension>}
 */
export const SUPPORTED = new Map(
  // readsData: its checks read data.json (its spaces), so a validator does not check it after
  // data.json failed (§11.1 step 11); every extension defined today does.
  NAMES.map((name) => {
    const e = MODULES[name];
    if (e.EXTENSION !== name) throw new Error(`the registry names ${name}, its module declares ${e.EXTENSION}`);
    return [
      name,
      {
        name,
        member: e.MEMBER,
        key: e.KEY,
        check: e.check,
        group: e.GROUP,
        checkContent: e.checkContent,
        readsData: true,
      },
    ];
  }),
);

/**
 * What an extension's content rules (`checkContent`) read: the data
 * document's raw `data` object and the archive's tensors, from a CheckState
 * (checks.js) after step 8.
 * @param {CheckState} state
 * @returns {Readonly<Content>}
 */
export function contentOf(state) {
  return Object.freeze({
    data: state.document?.data ?? null,
    /**
     * @param {string} group
     * @param {string} name
     * @returns {Promise<Tensor>}
     */
    tensor: (group, name) =>
      readTensor(state.source, findTensor(/** @type {TensorHeaders} */ (state.tensorHeaders), group, name)), // after step 8
  });
}

/**
 * The checked raw value (json.js tree) of a used, supported extension's
 * member, or null when the archive does not use it. `state`: a CheckState
 * (checks.js) after step 8 (step 7 too when the extension reads data.json);
 * its member is read and checked (checkDocument), but when step 11 has
 * already kept the value (`extensionDocuments`). `failed` holds the tensor
 * groups whose member failed at step 8 (a validator's): the references into
 * them are not checked, nor, when there is such a reference, the rules that
 * read element bytes (§11.1 step 11). Rejects with the first broken rule,
 * located in the member.
 * @param {CheckState} state
 * @param {string} name a supported extension
 * @param {ReadonlySet<string>} [failed]
 * @returns {Promise<unknown>}
 */
export async function readDocument(state, name, failed = new Set()) {
  const ext = /** @type {Extension} */ (SUPPORTED.get(name));
  // after step 6 (manifest) and step 4 (members)
  const manifest = /** @type {{extensionsUsed: readonly string[]}} */ (state.manifest);
  const members = /** @type {Map<string, LocatedMember>} */ (state.members);
  if (!manifest.extensionsUsed.includes(name)) return null;
  if (state.extensionDocuments?.has(name)) return state.extensionDocuments.get(name);
  for (const other of members.keys()) {
    if (other.startsWith(`extensions/${name}/`) && other !== ext.member) {
      throw fail('EXTENSION_INVALID', `${other} is not a member of ${name} (its one member is ${ext.member})`, {
        member: other,
      });
    }
  }
  const m = members.get(ext.member);
  if (!m)
    throw fail('EXTENSION_INVALID', `${name} is used but its member ${ext.member} is absent`, { member: ext.member });
  const doc = await readJsonMember(state.source, m);
  return checkDocument(
    name,
    doc,
    /** @type {TensorHeaders} */ (state.tensorHeaders), // after step 8
    contentOf(state),
    manifest.extensionsUsed,
    failed,
  );
}

/**
 * §11.1 step 11's rules over the parsed JSON `doc` (json.js tree) of extension
 * `name`'s member; resolves to its checked raw value. In order: the member's
 * one property, the value rules of §7, the references of §7.6 against
 * `headers` (group -> Map(name -> TensorInfo); none into a group of
 * `failed`), the extension's `check` (with `content.data` and the extensions
 * `used`), then, unless a reference goes into a failed group, its
 * `checkContent` (reading `content`, contentOf). The twin of Python's
 * check_document, which the writer runs too. Rejects with the first broken
 * rule, located in the member.
 * @param {string} name a supported extension
 * @param {unknown} doc
 * @param {TensorHeaders} headers
 * @param {Content} content
 * @param {readonly string[]} used
 * @param {ReadonlySet<string>} [failed]
 * @returns {Promise<unknown>}
 */
export async function checkDocument(name, doc, headers, content, used, failed = new Set()) {
  const ext = /** @type {Extension} */ (SUPPORTED.get(name));
  if (!isMap(doc) || doc.size !== 1 || !doc.has(ext.key)) {
    throw fail(
      'EXTENSION_INVALID',
      `${ext.member} must be an object with exactly the property ${JSON.stringify(ext.key)}`,
      { member: ext.member, pointer: membersPointer(doc, '', [ext.key]) },
    );
  }
  /** @type {import('../value_rules.js').ValueContext} */
  const ctx = { member: ext.member, references: [] };
  checkValue(doc.get(ext.key), '/' + ext.key, ctx);
  for (const ref of ctx.references) if (!failed.has(ref.group)) checkReference(headers, ref, ext.member);
  ext.check(doc.get(ext.key), content.data ?? undefined, /** @type {string[]} */ (used)); // read, never changed
  const intoFailed = ctx.references.some((ref) => failed.has(ref.group));
  if (ext.checkContent && !intoFailed) await ext.checkContent(content, doc.get(ext.key)); // the rules that read element bytes
  return doc.get(ext.key);
}
