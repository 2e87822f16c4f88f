// rlarchive-reader: the JavaScript reader of the rlarchive format. The check
// pipeline of §11.1 (checks.js) is public: one function per step, in STEPS,
// grouped in the named PHASES.
export { open, dump, validate, Archive, groupOf, DUMP_VERSION } from './reader.js';
export { memberOf } from './tensors.js';
export { VERSION } from './version.js';
export { RlarchiveError, CATALOGUE, API_CODES } from './errors.js';
export { Tuple, NDArray, Scalar, Space, Schedule, ClassRef, Opaque } from './decode.js';
export { evaluateSchedule } from './schedules.js';
export { toFloat32, f16ToNumber, bf16ToNumber, fp8ToNumber } from './convert.js';
export { DTYPES } from './dtypes.js';
export { JsonFloat, parseJson } from './json.js';
export { canonicalJson, canonicalValue } from './dump.js';
export { openSource, MemorySource, BlobSource, FileSource, HttpSource } from './sources.js';
export * as limits from './limits.js';
export { SUPPORTED_EXTENSIONS } from './manifest.js';
export { Policy, act, ACTIVATIONS } from './extensions/policy/index.js';
export * as observations from './extensions/policy/observations.js';
export {
  STEPS,
  PHASES,
  OPEN,
  DEFERRED,
  runPhases,
  checkState,
  checkExtension,
  identify,
  readEndRecords,
  readCentralDirectory,
  readLocalHeaders,
  checkLayout,
  checkManifest,
  checkData,
  checkTensorMembers,
  checkReferences,
  checkDigests,
  checkExtensions,
} from './checks.js';
