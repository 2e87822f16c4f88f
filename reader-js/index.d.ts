// Type declarations of rlarchive-reader (ES module).

// <!-- table:error-codes -->
/** Every stable error code (spec/errors.md; generated from spec/tables.json by spec/tables.py (make tables): do not edit). */
export type ErrorCode = 'IO_ERROR' | 'ARCHIVE_NOT_RLARCHIVE' | 'ZIP_EOCD_NOT_FOUND' | 'ZIP_TRAILING_DATA' | 'ZIP_MULTIPLE_EOCD' | 'ZIP_MULTI_DISK' | 'ZIP_ZIP64_INVALID' | 'ZIP_TRUNCATED' | 'ZIP_CD_INVALID' | 'ZIP_VERSION_MADE_BY' | 'ZIP_VERSION_NEEDED' | 'ZIP_ENCRYPTED' | 'ZIP_DATA_DESCRIPTOR' | 'ZIP_FLAGS' | 'ZIP_COMPRESSED' | 'ZIP_ATTRIBUTES' | 'ZIP_NAME_INVALID' | 'ZIP_EXTRA_FIELD' | 'ZIP_NAME_DUPLICATE' | 'ZIP_NAME_CASE_COLLISION' | 'ZIP_NAME_DIRECTORY_CLASH' | 'ZIP_LOCAL_HEADER_INVALID' | 'ZIP_HEADER_MISMATCH' | 'ZIP_OVERLAP' | 'ZIP_GAP' | 'ZIP_CRC_MISMATCH' | 'MEMBER_REQUIRED_MISSING' | 'MEMBER_UNEXPECTED' | 'MANIFEST_INVALID' | 'VERSION_UNSUPPORTED' | 'EXTENSION_UNDECLARED' | 'EXTENSION_UNSUPPORTED' | 'EXTENSION_INVALID' | 'MEMBER_UNLISTED' | 'MEMBER_MISSING' | 'MEMBER_SIZE_MISMATCH' | 'MEMBER_DIGEST_MISMATCH' | 'JSON_TOO_LARGE' | 'JSON_BOM' | 'JSON_UTF8' | 'JSON_DEPTH' | 'JSON_SYNTAX' | 'JSON_NAN_LITERAL' | 'JSON_DUPLICATE_KEY' | 'JSON_INTEGER_RANGE' | 'JSON_NUMBER_RANGE' | 'DATA_INVALID' | 'VALUE_UNKNOWN_TYPE' | 'VALUE_INVALID' | 'VALUE_DUPLICATE_KEY' | 'ARRAY_SIZE_MISMATCH' | 'SPACE_INVALID' | 'SCHEDULE_INVALID' | 'REF_NOT_FOUND' | 'REF_MISMATCH' | 'ST_TRUNCATED' | 'ST_HEADER_TOO_LARGE' | 'ST_HEADER_INVALID' | 'ST_DTYPE_UNKNOWN' | 'ST_OFFSETS_INVALID' | 'ST_SHAPE_MISMATCH' | 'ST_HOLE' | 'ST_OVERLAP' | 'ST_TRAILING_BYTES' | 'ST_MISALIGNED' | 'LIMIT_EXCEEDED' | 'MANIFEST_UNKNOWN_PROPERTY' | 'METADATA_INVALID' | 'DATA_UNKNOWN_PROPERTY' | 'ST_BOOL_VALUE' | 'EXTENSION_UNKNOWN' | 'PICKLE_NOT_ALLOWED' | 'IMPORT_NOT_ALLOWED' | 'VALUE_UNSUPPORTED' | 'WRITE_INVALID' | 'TENSOR_NOT_FOUND' | 'FRAMEWORK_UNAVAILABLE' | 'IMPORT_INVALID' | 'INTERNAL_ERROR' | 'IO_TIMEOUT' | 'INPUT_INVALID' | 'ENV_NOT_FOUND' | 'ENV_MISMATCH';
// <!-- /table:error-codes -->

/** The only error open() and dump() ever reject with. */
export class RlarchiveError extends Error {
  readonly name: 'RlarchiveError';
  /** The spec's stable code. */
  readonly code: ErrorCode;
  /** The message without the code and location. */
  readonly detail: string;
  /** The archive member concerned, when known. */
  readonly member?: string;
  /** A JSON Pointer (RFC 6901) into that member's JSON, when relevant. */
  readonly pointer?: string;
  /** A byte offset from the start of the file, when relevant. */
  readonly offset?: number;
  /** 'error', 'warning' or 'info'. */
  readonly severity: 'error' | 'warning' | 'info';
  /** The location as readable text, e.g. `data.json#/data/gamma @120`; '' when unknown (Python: `location()`). */
  location(): string;
  constructor(code: ErrorCode, message: string, loc?: { member?: string; pointer?: string; offset?: number });
}
export const CATALOGUE: Readonly<Record<string, 'error' | 'warning' | 'info'>>;
export const API_CODES: readonly string[];

export type DtypeCode =
  | 'BOOL' | 'U8' | 'I8' | 'U16' | 'I16' | 'U32' | 'I32' | 'U64' | 'I64' | 'F16' | 'BF16' | 'F32' | 'F64'
  | 'F8_E4M3' | 'F8_E5M2' | 'F8_E4M3FNUZ' | 'F8_E5M2FNUZ' | 'F8_E8M0' | 'C64';

/**
 * Typed array by dtype: BOOL, U8 and the FP8 dtypes -> Uint8Array; I8 -> Int8Array;
 * U16, F16, BF16 -> Uint16Array (raw bits; see toFloat32); I16 -> Int16Array;
 * U32 -> Uint32Array; I32 -> Int32Array; U64 -> BigUint64Array; I64 -> BigInt64Array;
 * F32 -> Float32Array; F64 -> Float64Array; C64 -> Float32Array (re, im interleaved).
 */
export type ElementArray =
  | Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array
  | BigUint64Array | BigInt64Array | Float32Array | Float64Array;

export const DTYPES: Readonly<Record<DtypeCode, { code: DtypeCode; size: number; alignment: number; kind: string; array: Function }>>;

/**
 * A decoded value (spec §7): null, boolean, string, number (integers within
 * ±(2^53−1) and all floats, including NaN and ±Infinity), bigint (`int` tag),
 * Value[] (list), Tuple, Uint8Array (bytes), Map (dict with any keys),
 * plain object (map with string keys), NDArray, Scalar, Space, Schedule,
 * ClassRef, Opaque.
 */
export type Value =
  | null | boolean | string | number | bigint | Value[] | Tuple | Uint8Array | Map<Value, Value>
  | { [key: string]: Value } | NDArray | Scalar | Space | Schedule | ClassRef | Opaque;

/** A `tuple` value: a frozen array. */
export class Tuple extends Array<Value> {}

/** An `ndarray` value; `data` is null for a reference until load() is awaited. */
export class NDArray {
  readonly dtype: DtypeCode;
  readonly shape: number[];
  data: ElementArray | null;
  readonly ref: { group: string; name: string } | null;
  load(options?: { verify?: boolean }): Promise<ElementArray>;
}

/** A `scalar` value (a NumPy scalar). */
export class Scalar {
  readonly dtype: DtypeCode;
  readonly bytes: Uint8Array;
  readonly value: number | bigint | boolean | [number, number];
}

/** A `space` value (spec §8); members as in the spec, arrays as NDArray. */
export class Space {
  kind: 'box' | 'discrete' | 'multi_discrete' | 'multi_binary' | 'dict' | 'tuple' | 'text';
  dtype?: DtypeCode;
  shape?: number[];
  low?: NDArray;
  high?: NDArray;
  n?: number | number[];
  start?: number | NDArray;
  nvec?: NDArray;
  spaces?: Space[] | [string, Space][];
  min_length?: number;
  max_length?: number;
  charset?: string;
}

/** A `schedule` value (spec §9). */
export class Schedule {
  kind: 'constant' | 'linear' | 'piecewise';
  value?: number;
  start?: number;
  end?: number;
  end_fraction?: number;
  points?: [number, number][];
  interpolation?: 'linear' | 'step';
  /** The value at progress remaining `p` (1 at the start of training, 0 at the end). */
  valueAt(p: number): number;
}

/** A class reference: a name only, never resolved. */
export class ClassRef {
  readonly module: string;
  readonly qualname: string;
}

/** An opaque value: pickle bytes, never unpickled by this reader. */
export class Opaque {
  readonly format: 'pickle';
  readonly bytes: Uint8Array;
  readonly type?: string;
  readonly note?: string;
}

export interface TensorInfo {
  readonly name: string;
  readonly dtype: DtypeCode;
  readonly shape: readonly number[];
  /** Absolute file offset of the first element byte. */
  readonly offset: number;
  readonly nbytes: number;
}

export interface Tensor {
  name: string;
  dtype: DtypeCode;
  shape: number[];
  data: ElementArray;
}

/** A byte source: any object with a size and positional reads. */
export interface Source {
  readonly size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
  close?(): Promise<void>;
  /** A source that reads by request may hold bytes ahead: `peek` gives them (or null), `prefetch` fetches ranges about to be read; opening uses both when both are there. */
  peek?(offset: number, length: number): Uint8Array | null;
  prefetch?(ranges: Array<[number, number]>): Promise<void>;
}

/** What open() accepts: bytes, a Blob or File, an http(s) URL, a file path or file: URL (Node), or a Source. */
export type Input = Uint8Array | ArrayBuffer | ArrayBufferView | Blob | URL | string | Source;

export interface OpenOptions {
  /** fetch implementation for URLs (default: globalThis.fetch). */
  fetch?: typeof fetch;
  /** Extra HTTP headers for URLs. */
  headers?: Record<string, string>;
  /** For URLs: milliseconds a request may wait for its response or its next bytes before IO_TIMEOUT (default 30000; spec §11.4). */
  timeout?: number;
  /** For URLs: bytes per second; a request for n bytes has timeout + n / minRate in all before IO_TIMEOUT (default 65536; spec §11.4). */
  minRate?: number;
}

/** Running statistics of VecNormalize (extension RLA_vec_normalize §3): F64 arrays of one shape, and a count. */
export interface VecNormalizeStats {
  mean: NDArray;
  var: NDArray;
  count: number;
}

/** The value of the extension RLA_vec_normalize (§3), decoded, every array loaded. */
export interface VecNormalizeStatistics {
  norm_obs: boolean;
  norm_reward: boolean;
  clip_obs: number;
  clip_reward: number;
  epsilon: number;
  gamma: number;
  training: boolean;
  /** One set for a Box observation space, one per key (in obs_keys order) for a Dict one, or null. */
  obs: VecNormalizeStats | { [key: string]: VecNormalizeStats } | null;
  obs_keys: string[] | null;
  ret: VecNormalizeStats;
  /** The running discounted return of each environment (F64, shape [N]), absent when the archive does not hold it (§3 rule 5). */
  returns?: NDArray;
}

/** Observations of a replay buffer: one array, or one per key of a Dict observation space (in its order). */
export type ReplayBufferObservations = NDArray | { [key: string]: NDArray };

/** The value of the extension RLA_replay_buffer (§3), decoded; referenced arrays are not loaded until load() is awaited. */
export interface ReplayBuffer {
  class: 'ReplayBuffer' | 'DictReplayBuffer' | 'HerReplayBuffer' | 'NStepReplayBuffer';
  /** Rows per environment; arrays are [buffer_size, n_envs, ...]. */
  buffer_size: number;
  n_envs: number;
  /** The row the next transition goes to; rows at and after it are unused unless `full`. */
  pos: number;
  full: boolean;
  optimize_memory_usage: boolean;
  handle_timeout_termination: boolean;
  observation_space: Space;
  action_space: Space;
  observations: ReplayBufferObservations;
  /** null exactly when optimize_memory_usage is true. */
  next_observations: ReplayBufferObservations | null;
  actions: NDArray;
  rewards: NDArray;
  dones: NDArray;
  timeouts: NDArray;
  her: {
    n_sampled_goal: number;
    goal_selection_strategy: 'future' | 'final' | 'episode';
    copy_info_dict: boolean;
    ep_start: NDArray;
    ep_length: NDArray;
    current_ep_start: NDArray;
    infos: Value[][] | null;
  } | null;
  n_step: { n_steps: number; gamma: number } | null;
}

/** An array as the policy takes and gives it: dtype code, shape, and the elements in C order. */
export interface ArrayLikeValue {
  dtype: string;
  shape: number[];
  data: ArrayLike<number | bigint>;
}

/** An observation: an array-like value, a number (Discrete), nested arrays of numbers, or for a Dict space an object or Map of those. */
export type Observation = ArrayLikeValue | number | bigint | unknown[] | { [key: string]: Observation } | Map<string, Observation>;

/** The recurrent state of a recurrent policy: F32 arrays of shape [layers, batch, hidden]. */
export interface RecurrentState {
  hidden: ArrayLikeValue;
  cell: ArrayLikeValue;
}

/** The portable policy (extension RLA_policy): acts like Stable-Baselines3's deterministic `predict`, in float32. */
export class Policy {
  constructor(desc: object, options?: { vecNormalize?: VecNormalizeStatistics | null });
  /** The checked description (the RLA_policy map, decoded). */
  readonly desc: object;
  /** The observation space the policy takes (before preprocessing). */
  readonly observationSpace: Space;
  /** The action space its head acts in. */
  readonly actionSpace: Space;
  /** The head (RLA_policy §6): `op` and its parameters. */
  readonly action: { op: string; [parameter: string]: unknown };
  /** The recurrent state's names and sizes (RLA_policy §5.9), or null. */
  readonly recurrent: { hidden_in: string; cell_in: string; hidden_out: string; cell_out: string; layers: number; hidden_size: number } | null;
  /** How many action-mask entries the head takes, or null for heads that take no masks. */
  readonly maskWidth: number | null;
  /** One observation gives one action; a batch (leading dimension) a batch. */
  predict(
    observation: Observation,
    options?: { state?: RecurrentState | null; episodeStart?: ArrayLike<boolean | number> | null; actionMasks?: ArrayLike<boolean | number> | null },
  ): { action: ArrayLikeValue; state: RecurrentState | null };
}

/** Actions for observations (each one or a batch) in order, carrying the recurrent state (the conformance `predict` request); an observation, episode start or mask that does not fit is the RlarchiveError INPUT_INVALID. */
export function act(
  policy: Policy,
  observations: Observation[],
  options?: { episodeStarts?: boolean[] | null; actionMasks?: ArrayLike<boolean | number>[] | null },
): ArrayLikeValue[];

/** Activation functions of RLA_policy §5 and their default parameters. */
export const ACTIVATIONS: Readonly<Record<string, [(x: number, parameters: Record<string, unknown>) => number, Record<string, unknown>]>>;

/** Observations of a space as a policy takes them (RLA_policy §4): one or a batch, and preprocessed. Observations that do not fit are a TypeError. */
export namespace observations {
  /** One observation or a batch, flattened in C order: `n` observations, `single` when the value had exactly the space's shape. */
  interface Batch {
    values: ArrayLike<number | bigint | boolean>;
    n: number;
    single: boolean;
  }
  /** The kind of a space ('box', 'discrete', 'multi_discrete', 'multi_binary', 'dict', ...). */
  function kind(space: Space): string;
  /** The keys of a Dict space, in its order. */
  function dictKeys(space: Space): string[];
  /** The space of `key` in a Dict space. */
  function subspace(space: Space, key: string): Space;
  /** SB3's is_image_space without the channel check: a U8 Box of rank 3 with bounds 0 and 255. */
  function isImage(space: Space): boolean;
  /** The shape of one observation of a Box, Discrete ([]), MultiDiscrete or MultiBinary space. */
  function observationShape(space: Space): number[];
  /** Every element of an observation, flat in C order. */
  function flatValues(value: Observation): ArrayLike<number | bigint | boolean>;
  /** The shape of an observation value. */
  function shapeOf(value: Observation): number[];
  /** One observation or a batch of a non-Dict space (channel-last images transposed, as SB3 does). */
  function asBatch(observation: Observation, space: Space): Batch;
  /** The observation as a batch; for a Dict space `obs` maps each key to its batch (all keys single, or all a batch of the same n). */
  function batch(observation: Observation, space: Space): { obs: Batch | Record<string, Batch>; single: boolean; n: number };
  /** The one-hot vectors of each component (sizes `nvec`), concatenated per observation. */
  function oneHot(values: ArrayLike<number | bigint>, nvec: number[], n: number): { shape: number[]; data: Float32Array };
  /** A batch as the float32 input of the network (RLA_policy §4). */
  function preprocess(batch: Batch, space: Space, normalizeImages: boolean): { shape: number[]; data: Float32Array };
}

/** One problem of a validation report (spec §14). */
export interface Issue {
  code: ErrorCode;
  severity: 'error' | 'warning' | 'info';
  message: string;
  member?: string;
  pointer?: string;
  offset?: number;
}

/** The validation report of spec §14 for one file. */
export interface Report {
  validator: { name: string; version: string };
  /** The file's name (its escaped form when the name is not UTF-8), or `<Type>` for a source that has none. */
  file: string;
  /** The name's bytes in base64, present only when the name is not UTF-8 (spec §14). */
  file_base64?: string;
  valid: boolean;
  summary: { errors: number; warnings: number; infos: number };
  issues: Issue[];
}

/** Every problem the reader finds in a file, as the report of spec §14; never rejects for a bad file. */
export function validate(input: Input, options?: OpenOptions): Promise<Report>;

/** This package's version. */
export const VERSION: string;

/** Extensions this reader supports (spec §5.4, spec/extensions/). */
export const SUPPORTED_EXTENSIONS: readonly string[];

/** One wrapper of the metadata key `wrappers` (spec/metadata.md §2), nearest the environment first. */
export interface Wrapper {
  /** `VecFrameStack`, `VecTransposeImage`, `VecNormalize`, or another name (shown, not acted on). */
  name: string;
  /** VecFrameStack: 1 to 65536. */
  n_stack?: number;
  /** VecFrameStack: the axis frames stack on, or one per key of a Dict observation. */
  channels_order?: 'first' | 'last' | Record<string, 'first' | 'last'>;
  /** VecNormalize. */
  norm_obs?: boolean;
  norm_reward?: boolean;
  /** Other parameters, as the JSON text has them. */
  [parameter: string]: unknown;
}

/**
 * What the metadata says about the training run (spec/metadata.md §1). A key
 * absent from the metadata, or malformed (then `Archive#warnings` holds its
 * METADATA_INVALID warning), is null.
 */
export interface Provenance {
  /** The environment id, with its version suffix (`CartPole-v1`): a hint to show, never resolved. */
  envId: string | null;
  /** Environments in parallel (at least 1). Counts and the seed are bigints only beyond ±(2^53 − 1). */
  nEnvs: number | bigint | null;
  /** Environment steps trained. */
  numTimesteps: number | bigint | null;
  seed: number | bigint | null;
  /** The well-formed `versions.NAME` entries by NAME (`torch` -> `2.13.0+cpu`); {} when none. */
  versions: Record<string, string>;
  wrappers: Wrapper[] | null;
}

/** One evaluation of the metadata key `evaluations` (spec/metadata.md §3). */
export interface Evaluation {
  /** The environment the evaluation ran in, as its caller named it (a hint). */
  env_id: string;
  episodes: number;
  /** Each episode's reset seed, or null when unseeded. */
  seeds: number[] | null;
  deterministic: boolean;
  /** Mean and population standard deviation of `returns`. */
  mean: number;
  std: number;
  /** Each episode's undiscounted return. */
  returns: number[];
  lengths: number[];
  evaluator: { name: string; version: string; [member: string]: unknown };
  /** `YYYY-MM-DDTHH:MM:SSZ`, UTC. */
  date: string;
  /** Members the spec does not define, kept as the JSON text has them. */
  [member: string]: unknown;
}

export class Archive {
  /** An archive from a CheckState that passed steps 1 to 9 without an issue (open() builds it); TypeError otherwise. */
  constructor(state: CheckState);
  /** The manifest as a plain object. */
  readonly manifest: Record<string, unknown>;
  /** The extensions the archive uses (`extensions_used`). */
  readonly extensionsUsed: string[];
  /** The VecNormalize statistics (extension RLA_vec_normalize), checked, or null when the archive has none. */
  vecNormalize(): Promise<VecNormalizeStatistics | null>;
  /** The replay buffer (extension RLA_replay_buffer), checked without reading its transitions, or null when the archive has none. */
  replayBuffer(): Promise<ReplayBuffer | null>;
  /** The portable policy (extension RLA_policy), checked and loaded, or null when the archive has none. */
  policy(): Promise<Policy | null>;
  /** §11.1 step 11: checks the member of every used extension this reader supports (the archive keeps each checked value). */
  checkExtensions(): Promise<void>;
  /** The checked raw value (json.js tree) of the used, supported extension `name`'s member, or null when unused; checked once, then kept. */
  extensionDocument(name: string): Promise<unknown>;
  readonly formatVersion: string;
  readonly producer: { name: string; version: string };
  readonly metadata: Record<string, string>;
  /** The provenance of the defined metadata keys (spec/metadata.md §1); malformed ones null, with their warning in `warnings`. */
  readonly provenance: Provenance;
  /** The recorded evaluations (spec/metadata.md §3), oldest first; [] when none, or when the key is malformed. */
  readonly evaluations: Evaluation[];
  readonly memberNames: string[];
  /** The algorithm's parameters, decoded. */
  readonly data: { [key: string]: Value };
  /** Optimizer states by name, decoded. */
  readonly optimizers: { [name: string]: Value };
  /** The names of the optimizer states, in document order (Python: `optimizer_names`). */
  readonly optimizerNames: string[];
  /** One optimizer state, decoded (Python: `optimizer(name)`); TENSOR_NOT_FOUND when there is none of that name. */
  optimizer(name: string): Value;
  /** The checked data document as parsed (Map for objects, bigint for integer literals, number for float literals). */
  readonly rawData: { data: Map<string, unknown>; optimizers: Map<string, unknown> };
  /** Tensor group names, in member order. */
  readonly groups: string[];
  /** Warnings and infos found so far (MANIFEST_UNKNOWN_PROPERTY, METADATA_INVALID, DATA_UNKNOWN_PROPERTY, EXTENSION_UNKNOWN; ST_BOOL_VALUE after dump()). */
  readonly warnings: RlarchiveError[];
  /** Bytes returned by the source's reads so far (Python: `bytes_read`); undefined for a Source of the caller's that does not count them. */
  readonly bytesRead: number | undefined;
  /**
   * Bytes downloaded so far, for URL sources (read-ahead and cache included).
   * @deprecated Use `bytesRead`, the name the Python reader has.
   */
  readonly bytesFetched: number | undefined;
  /** The CheckState the archive was built from (spec §11.1 steps 1 to 9). */
  readonly state: CheckState;
  tensorInfo(group: string): readonly TensorInfo[];
  /** One tensor; `verify: true` checks its member's CRC-32 and SHA-256 first. */
  tensor(group: string, name: string, options?: { verify?: boolean }): Promise<Tensor>;
  /** Every tensor of a group, by name in header order (Python: `tensors(group)`). */
  tensors(group: string, options?: { verify?: boolean }): Promise<{ [name: string]: Tensor }>;
  tensorSha256(group: string, name: string): Promise<string>;
  /** The deferred checks (spec §11.1 step 10). */
  verify(): Promise<void>;
  /** The canonical dump (spec §13), after every check. */
  dump(): Promise<string>;
  close(): Promise<void>;
}

// The check pipeline of spec §11.1 (src/checks.js; Python: rlarchive.checks, the same steps in snake_case).

/** A member of the ZIP directory (spec §2.2): its central record, and after step 4 where its data begins. */
export interface Member {
  readonly index: number;
  readonly name: string;
  readonly nameBytes: Uint8Array;
  readonly versionNeeded: number;
  readonly flags: number;
  readonly method: number;
  readonly time: number;
  readonly date: number;
  /** The CRC-32 of the central record. */
  readonly crc32: number;
  readonly csize: bigint;
  readonly usize: bigint;
  /** The data's size in bytes. */
  readonly size: number;
  /** The offset of the local header. */
  readonly headerOffset: number;
  readonly centralOffset: number;
  /** The file offset of the data (after step 4). */
  readonly dataOffset?: number;
}

/** The end records read at step 2 (spec §2.1, §2.6). */
export interface EndRecords {
  /** The number of members. */
  readonly count: number;
  readonly cdOffset: number;
  readonly cdSize: number;
  /** Where the end records begin (the ZIP64 end record, else the end record). */
  readonly endStart: number;
  readonly eocdAt: number;
  /** The offset of the record that gives the directory's size. */
  readonly sizeAt: number;
  readonly zip64: boolean;
}

/** The manifest checked at step 6 (spec §5). */
export interface CheckedManifest {
  /** The manifest as parsed (Map for objects, bigint for integer literals). */
  readonly raw: Map<string, unknown>;
  /** The member entries by name, in manifest order. */
  readonly members: Map<string, { name: string; size: number; sha256: string }>;
  readonly extensionsUsed: readonly string[];
}

/** A reference of data.json (spec §7.6), met at step 7. */
export interface Reference {
  /** The JSON Pointer of the ndarray value. */
  readonly pointer: string;
  readonly group: string;
  readonly name: string;
  readonly dtype: DtypeCode;
  readonly shape: readonly bigint[];
}

/** A tensor of a safetensors header (spec §10), as step 8 reads it. */
export interface HeaderTensorInfo {
  readonly name: string;
  readonly dtype: DtypeCode;
  readonly shape: readonly number[];
  /** data_offsets, within the data buffer. */
  readonly begin: number;
  readonly end: number;
  /** The absolute file offset of the first element byte. */
  readonly offset: number;
  /** end - begin. */
  readonly nbytes: number;
}

/**
 * The state of the check pipeline: a frozen record every step takes and
 * returns a new copy of (its Maps are not to be changed).
 */
export interface CheckState {
  /** The byte source. */
  readonly source: Source;
  /** After step 2. */
  readonly end: EndRecords | null;
  /** After step 3 (central records), step 4 (with dataOffset): name -> Member in ZIP order. */
  readonly members: Map<string, Member> | null;
  /** After step 6. */
  readonly manifest: CheckedManifest | null;
  /** After step 7: the data document as parsed; null when step 7 failed or did not run. */
  readonly document: { data: Map<string, unknown>; optimizers: Map<string, unknown> } | null;
  /** After step 7: the references met, in document order. */
  readonly references: readonly Reference[];
  /** After step 8: group -> (tensor name -> HeaderTensorInfo), the groups whose member passed. */
  readonly tensorHeaders: Map<string, Map<string, HeaderTensorInfo>> | null;
  /** After step 8: the groups whose member failed. */
  readonly failedGroups: readonly string[];
  /** Warnings so far, in the order found. */
  readonly warnings: readonly RlarchiveError[];
  /** The errors collected by steps 8 to 11, in the order found. */
  readonly issues: readonly RlarchiveError[];
  /** Between steps 6 and 7: data.json's bytes (read once for step 6's digest and step 7's parse); null otherwise. */
  readonly dataJson: Uint8Array | null;
  /** Asks step 10 for `tensorDigests` (the dump's). */
  readonly digestTensors: boolean;
  /** After step 10 with `digestTensors`: group -> (tensor name -> SHA-256 hex), the groups whose member passed. */
  readonly tensorDigests: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** After step 11: extension name -> its checked raw value (json.js tree). */
  readonly extensionDocuments: ReadonlyMap<string, unknown>;
}

/** A step of the pipeline: resolves to the next state. Steps 1 to 7 reject with RlarchiveError at their first broken rule; steps 8 to 11 add issues instead. */
export type CheckStep = (state: CheckState) => Promise<CheckState>;

/** A CheckState from `fields` (`source` at least); the others start null or empty. */
export function checkState(fields: Partial<CheckState> & { source: Source }): CheckState;
/** The eleven steps of spec §11.1, in order: identify ... checkExtensions (the phases' steps one after the other). */
export const STEPS: readonly CheckStep[];
/** The name of a phase of spec §11.1. */
export type PhaseName = 'structure' | 'data' | 'tensors' | 'integrity' | 'extensions';
/** The phases of §11.1 by name, each with its steps in order: structure (1 to 6), data (7), tensors (8, 9), integrity (10), extensions (11). */
export const PHASES: Readonly<Record<PhaseName, readonly CheckStep[]>>;
/** The phases open() runs: structure, data, tensors. It rejects with the first issue. */
export const OPEN: readonly PhaseName[];
/** The phases the dump and validate() run after OPEN: integrity, extensions. */
export const DEFERRED: readonly PhaseName[];
/** Runs the steps of the named phases in order from `state`; a name not in PHASES is a TypeError. */
export function runPhases(state: CheckState, ...names: PhaseName[]): Promise<CheckState>;
/** Step 1 (§3): the 45 identification bytes of a file of at least 67 bytes. */
export function identify(state: CheckState): Promise<CheckState>;
/** Step 2 (§2.1, §2.6): the end record, the ZIP64 locator and record, one disk, MAX_MEMBERS, the directory's size and position; sets `end`. */
export function readEndRecords(state: CheckState): Promise<CheckState>;
/** Step 3 (§2.2): the central records in order, no bytes after the last, the names across records; sets `members`. */
export function readCentralDirectory(state: CheckState): Promise<CheckState>;
/** Step 4 (§2.3, §2.1): the local headers in central order, then the layout (overlaps, gaps, the end gap); sets `members` with `dataOffset`. */
export function readLocalHeaders(state: CheckState): Promise<CheckState>;
/** Step 5 (§4): `mimetype` first, the required members, no unexpected name. */
export function checkLayout(state: CheckState): Promise<CheckState>;
/** Step 6 (§5): manifest.json (version, schema, extensions), the member entries, data.json's digest; sets `manifest`, adds warnings. */
export function checkManifest(state: CheckState): Promise<CheckState>;
/** Step 7 (§7): data.json's structure and values; sets `document` and `references`, adds warnings. */
export function checkData(state: CheckState): Promise<CheckState>;
/** Step 8 (§10): the safetensors structure of each tensor member in ZIP order; sets `tensorHeaders`, adds each failure to `issues` and `failedGroups`. */
export function checkTensorMembers(state: CheckState): Promise<CheckState>;
/** Step 9 (§7.6): the references, but those into `failedGroups`, none when `document` is null; adds the first broken one to `issues`. */
export function checkReferences(state: CheckState): Promise<CheckState>;
/** Step 10: the CRC-32 then the digest of every member but manifest.json and data.json, in ZIP order; adds failures to `issues`, ST_BOOL_VALUE to `warnings`. */
export function checkDigests(state: CheckState): Promise<CheckState>;
/** Step 11 (§5.4): checkExtension for every used extension, in the order of extensions_used. */
export function checkExtensions(state: CheckState): Promise<CheckState>;
/** Step 11 for one extension: when used and supported (and `document` is not null for one that reads data.json), adds its first broken rule to `issues`. */
export function checkExtension(state: CheckState, name: string): Promise<CheckState>;

/** Opens and checks an archive (spec §11.1 steps 1 to 9). Rejects only with RlarchiveError. */
export function open(input: Input, options?: OpenOptions): Promise<Archive>;
/** Opens an archive and returns its canonical dump (spec §13). Rejects only with RlarchiveError. */
export function dump(input: Input, options?: OpenOptions): Promise<string>;
export function groupOf(memberName: string): string | null;
/** The member name of a tensor group (`tensors/GROUP.safetensors`); Python: `member_of`. */
export function memberOf(group: string): string;
export const DUMP_VERSION: '1.0';

/** Evaluates a schedule exactly as spec §9 says. */
export function evaluateSchedule(schedule: Schedule | Omit<Schedule, 'valueAt'>, progressRemaining: number): number;
/** Converts elements (as returned by Archive#tensor) to a new Float32Array; F16, BF16 and FP8 are decoded from their bits. */
export function toFloat32(dtype: DtypeCode, data: ElementArray): Float32Array;
export function f16ToNumber(bits: number): number;
export function bf16ToNumber(bits: number): number;
export function fp8ToNumber(dtype: DtypeCode, byte: number): number;

/**
 * The strict JSON parser of spec §6: Map for objects, bigint for integer literals, number for float literals;
 * with `integers: 'number'` (as for safetensors headers), a number for an integer literal (exact: one beyond
 * ±(2^53-1) is JSON_INTEGER_RANGE) and a JsonFloat for a float literal.
 */
export function parseJson(
  bytes: Uint8Array,
  options?: { member?: string; offset?: number; maxBytes?: number; integers?: 'bigint' | 'number' },
): unknown;
/** A float literal parsed by parseJson with `integers: 'number'`. */
export class JsonFloat {
  constructor(value: number);
  readonly value: number;
}
/** RFC 8785 serialization. */
export function canonicalJson(value: unknown): string;
/** The canonical form of a parsed value (spec §13.2). */
export function canonicalValue(value: unknown): unknown;

export function openSource(input: Input, options?: OpenOptions): Promise<Source>;
export class MemorySource implements Source {
  constructor(bytes: Uint8Array);
  readonly size: number;
  /** Bytes returned by `read` so far. */
  readonly bytesRead: number;
  read(offset: number, length: number): Promise<Uint8Array>;
}
export class BlobSource implements Source {
  constructor(blob: Blob);
  readonly size: number;
  /** Bytes returned by `read` so far. */
  readonly bytesRead: number;
  read(offset: number, length: number): Promise<Uint8Array>;
}
export class FileSource implements Source {
  static open(path: string): Promise<FileSource>;
  readonly size: number;
  readonly bytesRead: number;
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}
export class HttpSource implements Source {
  static open(url: string | URL, options?: OpenOptions): Promise<HttpSource>;
  readonly size: number;
  /** Bytes returned by `read` so far. */
  readonly bytesRead: number;
  readonly bytesFetched: number;
  readonly requests: number;
  /** The deadlines of every request: milliseconds, bytes per second (spec §11.4). */
  readonly timeout: number;
  readonly minRate: number;
  read(offset: number, length: number): Promise<Uint8Array>;
  /** The bytes at `offset` when already fetched (the end of the file, what was fetched ahead), else null; never a request. */
  peek(offset: number, length: number): Uint8Array | null;
  /** Fetches ahead, in as few requests as the plan allows, the ranges `[offset, length]` about to be read. */
  prefetch(ranges: Array<[number, number]>): Promise<void>;
}

export namespace limits {
  const MAX_MEMBERS: number;
  const MAX_NAME_BYTES: number;
  const MAX_JSON_BYTES: number;
  const MAX_JSON_DEPTH: number;
  const MAX_SAFETENSORS_HEADER_BYTES: number;
  const MAX_NDIM: number;
  const MAX_INT_DIGITS: number;
  const MAX_INLINE_ARRAY_BYTES: number;
  const MAX_ELEMENT_BYTES: number;
  const INLINE_ARRAY_BYTES: number;
  const MAX_INPUT_JSON_MEMORY: number;
  const SLICE_MAX_REQUESTS: number;
  const SLICE_REQUEST_BYTES: number;
  const SLICE_OVERREAD_BYTES: number;
  const OPEN_READAHEAD_BYTES: number;
  const OPEN_READAHEAD_TOTAL_BYTES: number;
}
