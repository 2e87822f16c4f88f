// Opening archives: the check pipeline of §11.1 (checks.js) run to the
// first issue (open) or to the end (validate), then an Archive built from the
// checked state: lazy access to values and tensors, the deferred checks and
// the canonical dump.

import { fail, RlarchiveError } from './errors.js';
import { openSource } from './sources.js';
import { readAt, verifyMember } from './zipprofile.js';
import { sha256Hex } from './sha256.js';
import { provenance, evaluations } from './metadata.js';
import { findTensor, memberOf, readTensor } from './tensors.js';
import { decodeMap, decodeValue, loadArrays } from './decode.js';
import { POLICY, REPLAY_BUFFER, VEC_NORMALIZE, readDocument } from './extensions/index.js';
import { checkState, DEFERRED, dataWarnings, OPEN, required, runPhases } from './checks.js';
import { NAME, VERSION } from './version.js';
import { Policy } from './extensions/policy/evaluator.js';
import { render as renderDump } from './dump.js';
import { located } from './zipread.js';

/** @typedef {import('./checks.js').CheckState} CheckState */
/** @typedef {import('./sources.js').Source} Source */
/** @typedef {import('./sources.js').Input} Input */
/** @typedef {import('./sources.js').OpenOptions} OpenOptions */
/** @typedef {import('./zipread.js').Member} Member */
/** @typedef {import('./tensors.js').TensorInfo} HeaderTensorInfo */
/** @typedef {import('./tensors.js').Tensor} Tensor */
/** @typedef {import('../index.js').TensorInfo} TensorInfo */
/** @typedef {import('../index.js').Value} Value */
/** @typedef {import('../index.js').VecNormalizeStatistics} VecNormalizeStatistics */
/** @typedef {import('./metadata.js').Metadata} Metadata */
/**
 * One problem of a validation report (§14): its code, severity, message and the location it has.
 * @typedef {{code: import('./errors.js').ErrorCode, severity: import('./errors.js').Severity, message: string, member?: string, pointer?: string, offset?: number}} Issue
 */
/**
 * The validation report of §14 for one file.
 * @typedef {object} Report
 * @property {{name: string, version: string}} validator
 * @property {string} file
 * @property {boolean} valid
 * @property {{errors: number, warnings: number, infos: number}} summary
 * @property {Issue[]} issues
 */

export { groupOf } from './tensors.js';

export { DUMP_VERSION } from './dump.js';

/**
 * A json.js tree as plain JavaScript (objects, arrays, numbers).
 * @param {unknown} v
 * @returns {unknown}
 */
function toPlain(v) {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof Map) {
    /** @type {Record<string, unknown>} */
    const o = {};
    for (const [k, x] of v)
      Object.defineProperty(o, k, { value: toPlain(x), enumerable: true, writable: true, configurable: true });
    return o;
  }
  return v;
}

/**
 * Releases a source; closing never fails the caller.
 * @param {Source | null | undefined} src
 */
async function closeSource(src) {
  try {
    await src?.close?.();
  } catch {
    // closing never fails the caller
  }
}

/**
 * Opens and checks an archive (spec §11.1 steps 1 to 9); resolves to an
 * Archive. `input`: Uint8Array / ArrayBuffer, Blob or File, an http(s) URL
 * (string or URL), a file path (Node), or a source object {size, read}.
 * Options: `fetch` and `headers` for URLs. Rejects only with RlarchiveError.
 * @param {Input} input
 * @param {OpenOptions} [options]
 * @returns {Promise<Archive>}
 */
export async function open(input, options = {}) {
  const source = await openSource(input, options);
  /** @type {CheckState} */
  let state;
  try {
    state = await runPhases(checkState({ source }), ...OPEN);
    if (state.issues.length) throw state.issues[0];
  } catch (e) {
    await closeSource(source);
    throw e;
  }
  return new Archive(state);
}

/**
 * The issues of the validation report, in its order: the error of the
 * structure phase (steps 1 to 6) alone; else the issues of steps 7 to 9 (step
 * 7's error among them: then `document` stays null), the warnings so far, the
 * issues of steps 10 and 11, the warnings of step 10 (ST_BOOL_VALUE).
 * @param {Input} input
 * @param {OpenOptions} options
 * @returns {Promise<RlarchiveError[]>}
 */
async function validationIssues(input, options) {
  /** @type {CheckState | undefined} */
  let state;
  try {
    state = checkState({ source: await openSource(input, options) });
    state = await runPhases(state, 'structure');
  } catch (e) {
    await closeSource(state?.source);
    if (!(e instanceof RlarchiveError)) throw e;
    return [e];
  }
  try {
    try {
      state = await runPhases(state, 'data');
    } catch (e) {
      if (!(e instanceof RlarchiveError)) throw e;
      state = checkState({
        ...state,
        issues: [...state.issues, e],
        warnings: [...state.warnings, ...(await dataWarnings(state))],
      });
    }
    const opened = await runPhases(state, 'tensors');
    const done = await runPhases(opened, ...DEFERRED);
    return [
      ...opened.issues,
      ...opened.warnings,
      ...done.issues.slice(opened.issues.length),
      ...done.warnings.slice(opened.warnings.length),
    ];
  } finally {
    await closeSource(state.source);
  }
}

/**
 * One issue of a report (§14): code, severity, message and the location it has.
 * @param {RlarchiveError} e
 * @returns {Issue}
 */
function reportIssue(e) {
  /** @type {Issue} */
  const issue = { code: e.code, severity: e.severity, message: e.message };
  if (e.member !== undefined && e.member !== null) issue.member = e.member;
  if (e.pointer !== undefined && e.pointer !== null) issue.pointer = e.pointer;
  if (e.offset !== undefined && e.offset !== null) issue.offset = e.offset;
  return issue;
}

/**
 * The validation report of spec §14 for one file: every problem found, never
 * a rejection (the twin of python/rlarchive/validate.py). Runs every step of
 * §11.1 (checks.js): stops at the first error of steps 1 to 6; after that
 * checks data.json, each tensor member, the references, every member's
 * CRC-32 and digest and each used extension this reader supports
 * independently, and reports warnings.
 * @param {Input} input
 * @param {OpenOptions} [options]
 * @returns {Promise<Report>}
 */
export async function validate(input, options = {}) {
  const issues = await validationIssues(input, options);
  /** @type {(sev: import('./errors.js').Severity) => number} */
  const count = (sev) => issues.filter((i) => i.severity === sev).length;
  return {
    validator: { name: NAME, version: VERSION },
    file: typeof input === 'string' ? input : `<${input?.constructor?.name ?? typeof input}>`,
    valid: count('error') === 0,
    summary: { errors: count('error'), warnings: count('warning'), infos: count('info') },
    issues: issues.map(reportIssue),
  };
}

/**
 * Opens an archive, performs every check and returns its canonical dump (§13) as a string.
 * @param {Input} input
 * @param {OpenOptions} [options]
 * @returns {Promise<string>}
 */
export async function dump(input, options = {}) {
  const archive = await open(input, options);
  try {
    return await archive.dump();
  } finally {
    await archive.close();
  }
}

/** An open, checked archive, built from the CheckState of steps 1 to 9 (open()). */
export class Archive {
  /** @type {CheckState} */
  #state;
  /** @type {Map<string, unknown>} */
  #documents; // extension name -> its checked raw value (§11.1 step 11), kept once checked
  /** @type {Set<string>} */
  #verified = new Set();
  /** @type {Record<string, Value> | undefined} */
  #data = undefined;
  /** @type {Record<string, Value> | undefined} */
  #optimizers = undefined;
  /** @type {Map<string, readonly TensorInfo[]>} */
  #infos = new Map(); // group -> its frozen tensorInfo list

  /**
   * An archive from a CheckState that passed steps 1 to 9 of §11.1 with no issue (see open()).
   * @param {CheckState} state
   */
  constructor(state) {
    if (state?.document == null || state.tensorHeaders === null || state.issues.length) {
      throw new TypeError('an Archive is built from a CheckState that passed steps 1 to 9 without an issue');
    }
    this.#state = state;
    this.#documents = new Map(state.extensionDocuments);
    /**
     * Warnings and infos as RlarchiveErrors: MANIFEST_UNKNOWN_PROPERTY, METADATA_INVALID,
     * DATA_UNKNOWN_PROPERTY, EXTENSION_UNKNOWN from open(), ST_BOOL_VALUE from dump().
     */
    this.warnings = [...state.warnings];
  }

  /**
   * The CheckState the archive was built from (steps 1 to 9 of §11.1).
   * @returns {CheckState}
   */
  get state() {
    return this.#state;
  }

  /** The members but manifest.json and data.json, whose checks are deferred (step 10), in ZIP order. */
  #deferredMembers() {
    return [...required(this.#state, 'members').values()].filter(
      (m) => m.name !== 'manifest.json' && m.name !== 'data.json',
    );
  }

  /**
   * The deferred checks of one member (CRC-32, digest); resolves to its hashes (zipprofile.js hashMember).
   * @param {Readonly<Member> | undefined} member
   * @param {readonly HeaderTensorInfo[]} [tensors]
   */
  async #verifyMember(member, tensors = []) {
    const m = located(member);
    const r = await verifyMember(this.#state.source, m, required(this.#state, 'manifest').members.get(m.name), tensors);
    this.#verified.add(m.name);
    return r;
  }

  /**
   * Step 10: the deferred checks (CRC-32 then digest of every other member, in ZIP order: the `integrity`
   * phase, as Python's verify runs check_digests); rejects with the first failure.
   */
  async verify() {
    const state = await runPhases(this.#state, 'integrity');
    if (state.issues.length) throw state.issues[0];
    for (const m of this.#deferredMembers()) this.#verified.add(m.name);
  }

  /** §11.1 step 11: checks the member of every used extension this reader supports; rejects with the first failure. */
  async checkExtensions() {
    this.#keep(await runPhases(this.#withDocuments(), 'extensions'));
  }

  /**
   * The state with the extension documents kept so far (step 11 checks the others).
   * @param {Partial<import('./checks.js').CheckFields>} [fields]
   * @returns {CheckState}
   */
  #withDocuments(fields = {}) {
    return checkState({ ...this.#state, extensionDocuments: new Map(this.#documents), ...fields });
  }

  /**
   * Keeps the extension documents a run of step 11 checked; rejects with its first issue.
   * @param {CheckState} state
   * @returns {CheckState}
   */
  #keep(state) {
    if (state.issues.length) throw state.issues[0];
    for (const [name, value] of state.extensionDocuments) this.#documents.set(name, value);
    return state;
  }

  /**
   * The checked raw value (json.js tree) of the used, supported extension
   * `name`'s member, or null when the archive does not use it. Checked the
   * first time it is asked for (or by checkExtensions, dump); the archive
   * keeps the value, and later calls give it without reading or checking
   * again (Python: `extension_document`). Rejects with the first broken rule.
   * @param {string} name
   * @returns {Promise<unknown>}
   */
  async extensionDocument(name) {
    if (!this.#documents.has(name)) {
      const value = await readDocument(this.#state, name);
      if (value === null) return null;
      this.#documents.set(name, value);
    }
    return this.#documents.get(name);
  }

  /**
   * The VecNormalize statistics (extension RLA_vec_normalize) as a decoded
   * value with every array loaded, or null when the archive has none. The
   * member is checked first (EXTENSION_INVALID and the codes of §6, §7).
   * @returns {Promise<VecNormalizeStatistics | null>}
   */
  async vecNormalize() {
    const raw = await this.extensionDocument(VEC_NORMALIZE);
    return raw === null ? null : /** @type {Promise<VecNormalizeStatistics>} */ (loadArrays(decodeValue(raw, this))); // a map (checked)
  }

  /**
   * The replay buffer (extension RLA_replay_buffer) as a decoded value, or
   * null when the archive has none. The member is checked first
   * (EXTENSION_INVALID and the codes of §6, §7), reading no bytes of the
   * buffer's observations, actions, rewards, dones or timeouts; referenced
   * arrays are NDArray values not loaded yet (`await a.load()` reads one).
   * @returns {Promise<import('../index.js').ReplayBuffer | null>}
   */
  async replayBuffer() {
    const raw = await this.extensionDocument(REPLAY_BUFFER);
    return raw === null ? null : /** @type {import('../index.js').ReplayBuffer} */ (decodeValue(raw, this)); // a map (checked)
  }

  /**
   * The portable policy (extension RLA_policy), ready to `predict`, or null
   * when the archive has none. The description is checked first
   * (EXTENSION_INVALID, LIMIT_EXCEEDED and the codes of §6, §7), then every
   * weight is loaded.
   */
  async policy() {
    const raw = await this.extensionDocument(POLICY);
    if (raw === null) return null;
    const desc = /** @type {Record<string, unknown>} */ (await loadArrays(decodeValue(raw, this))); // a map (checked)
    return new Policy(desc, { vecNormalize: desc.vec_normalize ? await this.vecNormalize() : null });
  }

  /**
   * The extensions the archive uses (`extensions_used`).
   * @returns {string[]}
   */
  get extensionsUsed() {
    return [...required(this.#state, 'manifest').extensionsUsed];
  }

  /**
   * The canonical dump (§13) as a string; performs every deferred check and the extensions' checks first
   * (§11.1 steps 10 and 11, each member's bytes read once: step 10 gives the tensors' digests the dump
   * prints), and adds their warnings (ST_BOOL_VALUE) to `warnings`.
   * @returns {Promise<string>}
   */
  async dump() {
    const before = this.#state.warnings.length;
    let state = this.#withDocuments({ digestTensors: true });
    for (const phase of DEFERRED) state = this.#keep(await runPhases(state, phase)); // stops at the first failure
    for (const m of this.#deferredMembers()) this.#verified.add(m.name);
    this.warnings.push(...state.warnings.slice(before));
    return renderDump(state);
  }

  /** The manifest as checked at step 6. */
  get #raw() {
    return required(this.#state, 'manifest').raw;
  }
  /**
   * The manifest as a plain object.
   * @returns {Record<string, unknown>}
   */
  get manifest() {
    return /** @type {Record<string, unknown>} */ (toPlain(this.#raw));
  }
  /** @returns {string} */
  get formatVersion() {
    return /** @type {string} */ (this.#raw.get('format_version')); // checked at step 6
  }
  /** @returns {{name: string, version: string}} */
  get producer() {
    return /** @type {{name: string, version: string}} */ (toPlain(this.#raw.get('producer'))); // checked at step 6
  }
  /** @returns {Record<string, string>} */
  get metadata() {
    return /** @type {Record<string, string>} */ (toPlain(this.#raw.get('metadata') ?? new Map())); // checked at step 6
  }
  /**
   * What the metadata says about the training run (spec/metadata.md §1):
   * `{envId, nEnvs, numTimesteps, seed, versions, wrappers}`, each null when
   * absent or malformed (a malformed one has its METADATA_INVALID warning in
   * `warnings`). The environment id is a hint to show, never to resolve.
   */
  get provenance() {
    return provenance(/** @type {Metadata} */ (this.#raw.get('metadata') ?? new Map())); // checked at step 6
  }
  /** The recorded evaluations (spec/metadata.md §3), oldest first, as plain objects; [] when none or malformed. */
  get evaluations() {
    return evaluations(/** @type {Metadata} */ (this.#raw.get('metadata') ?? new Map())); // checked at step 6
  }
  /**
   * Member names in ZIP order.
   * @returns {string[]}
   */
  get memberNames() {
    return [...required(this.#state, 'members').keys()];
  }

  /** The data document of step 7 (the constructor made sure it is there). */
  get #document() {
    return required(this.#state, 'document');
  }
  /**
   * The algorithm's parameters, decoded (see README: value model in JavaScript).
   * @returns {Record<string, Value>}
   */
  get data() {
    if (this.#data === undefined)
      this.#data = /** @type {Record<string, Value>} */ (decodeMap(this.#document.data, this));
    return this.#data;
  }
  /**
   * Optimizer states by name, decoded.
   * @returns {Record<string, Value>}
   */
  get optimizers() {
    if (this.#optimizers === undefined)
      this.#optimizers = /** @type {Record<string, Value>} */ (decodeMap(this.#document.optimizers, this));
    return this.#optimizers;
  }
  /**
   * The names of the optimizer states, in document order (Python: `optimizer_names`).
   * @returns {string[]}
   */
  get optimizerNames() {
    return [...this.#document.optimizers.keys()];
  }
  /**
   * One optimizer state, decoded (Python: `optimizer(name)`); TENSOR_NOT_FOUND when there is none of that name.
   * @param {string} name
   * @returns {Value}
   */
  optimizer(name) {
    if (!this.#document.optimizers.has(name)) throw fail('TENSOR_NOT_FOUND', `no optimizer ${JSON.stringify(name)}`);
    return this.optimizers[name];
  }
  /**
   * The checked data document as parsed: {data, optimizers} as json.js trees (Map, bigint for integer literals).
   * @returns {{data: Map<string, unknown>, optimizers: Map<string, unknown>}}
   */
  get rawData() {
    const { data, optimizers } = this.#document;
    return { data, optimizers };
  }

  /**
   * Tensor group names, in member order.
   * @returns {string[]}
   */
  get groups() {
    return [...required(this.#state, 'tensorHeaders').keys()];
  }

  /**
   * The tensors of a group: [{name, dtype, shape, offset, nbytes}] in header order, frozen; built
   * once per group, so that a call per tensor costs the same for any group size (Python: a read-only
   * mapping over the headers).
   * @param {string} group
   * @returns {readonly TensorInfo[]}
   */
  tensorInfo(group) {
    let infos = this.#infos.get(group);
    if (infos === undefined) {
      const g = required(this.#state, 'tensorHeaders').get(group);
      if (!g) throw fail('TENSOR_NOT_FOUND', `no tensor group ${JSON.stringify(group)}`);
      infos = Object.freeze(
        [...g.values()].map((t) =>
          Object.freeze({
            name: t.name,
            dtype: t.dtype,
            shape: t.shape, // frozen by step 8
            offset: t.offset,
            nbytes: t.end - t.begin,
          }),
        ),
      );
      this.#infos.set(group, infos);
    }
    return infos;
  }

  /**
   * One tensor: {name, dtype, shape, data}, `data` a typed array (see README)
   * viewing the archive's bytes without a copy when the source is in memory.
   * `{verify: true}` first checks the member's CRC-32 and SHA-256.
   * @param {string} group
   * @param {string} name
   * @param {{verify?: boolean}} [options]
   * @returns {Promise<Tensor>}
   */
  async tensor(group, name, { verify = false } = {}) {
    const t = findTensor(required(this.#state, 'tensorHeaders'), group, name);
    const member = memberOf(group);
    if (verify && !this.#verified.has(member)) await this.#verifyMember(required(this.#state, 'members').get(member));
    return readTensor(this.#state.source, t);
  }

  /**
   * Every tensor of a group, by name in header order (Python: `tensors(group)`); see tensor().
   * @param {string} group
   * @param {{verify?: boolean}} [options]
   * @returns {Promise<Record<string, Tensor>>}
   */
  async tensors(group, options = {}) {
    /** @type {Record<string, Tensor>} */
    const out = {};
    for (const t of this.tensorInfo(group)) out[t.name] = await this.tensor(group, t.name, options);
    return out;
  }

  /**
   * SHA-256 of one tensor's element bytes, as lower-case hex.
   * @param {string} group
   * @param {string} name
   * @returns {Promise<string>}
   */
  async tensorSha256(group, name) {
    const t = required(this.#state, 'tensorHeaders').get(group)?.get(name);
    if (!t) throw fail('TENSOR_NOT_FOUND', `no tensor ${JSON.stringify(name)} in group ${JSON.stringify(group)}`);
    return sha256Hex(await readAt(this.#state.source, t.offset, t.end - t.begin));
  }

  /**
   * Bytes returned by the source's reads so far (undefined for a source object of the caller's that does not count them).
   * @returns {number | undefined}
   */
  get bytesRead() {
    return this.#state.source.bytesRead;
  }

  /**
   * Bytes downloaded so far, for URL sources (undefined otherwise).
   * @deprecated Use `bytesRead` (Python: `bytes_read`); this one counts the
   * bytes of the HTTP responses (read-ahead and cache included).
   * @returns {number | undefined}
   */
  get bytesFetched() {
    return this.#state.source.bytesFetched;
  }

  /** Releases the source (file handle). Typed arrays already returned stay valid. */
  async close() {
    await closeSource(this.#state.source);
  }
}
