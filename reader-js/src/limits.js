// The limits of spec §15 (from spec/tables.json, through the generated tables.js).
export {
  MAX_MEMBERS,
  MAX_NAME_BYTES,
  MAX_JSON_BYTES,
  MAX_JSON_DEPTH,
  MAX_SAFETENSORS_HEADER_BYTES,
  MAX_NDIM,
  MAX_INT_DIGITS,
  MAX_INLINE_ARRAY_BYTES,
  MAX_ELEMENT_BYTES,
  MAX_REPLAY_N_STEPS,
  INLINE_ARRAY_BYTES,
} from './tables.js';
export const MAX_SAFE_INTEGER_BIG = 9007199254740991n;
