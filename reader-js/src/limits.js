// The limits of spec §15.
export const MAX_MEMBERS = 4096;
export const MAX_NAME_BYTES = 255;
export const MAX_JSON_BYTES = 64 * 1024 * 1024;
export const MAX_JSON_DEPTH = 64;
export const MAX_SAFETENSORS_HEADER_BYTES = 16 * 1024 * 1024;
export const MAX_NDIM = 32;
export const MAX_INT_DIGITS = 4096;
export const MAX_INLINE_ARRAY_BYTES = 65536;
/** 2^53 − 1: largest byte size of one tensor or array, and largest plain JSON integer. */
export const MAX_ELEMENT_BYTES = Number.MAX_SAFE_INTEGER;
export const MAX_SAFE_INTEGER_BIG = 9007199254740991n;
