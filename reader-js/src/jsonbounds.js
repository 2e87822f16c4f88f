// JSON within bounds: the nesting depth and the memory a parse may take, both known before
// parsing (Python: rlarchive/jsonbounds.py, with the same costs).
//
// JSON a caller gives (the conformance testee's requests) is parsed only once rawDepth() has
// measured its nesting on the raw text, without recursion (§6 rule 4), and jsonCost() has counted
// an upper bound of the memory the text and its parse take from a few byte counts: BASE_COST;
// PLAIN_BYTE_COST bytes per byte of a text of ASCII characters without a backslash, BYTE_COST per
// byte of any other; VALUE_COST per value (at most one per `,` `:` `[` `{`, plus one); KEY_COST more
// per key, OBJECT_COST more per object, ARRAY_COST more per array. The costs are CPython's, which
// bound V8's objects too (a test measures both against texts built to take the most).

import { fail } from './errors.js';

/** Bytes for the fixed parts of the decoded text and of the parser. */
export const BASE_COST = 4096;
/** Bytes per byte of a text of ASCII characters without a backslash: the bytes, the text, its strings. */
export const PLAIN_BYTE_COST = 3;
/** Bytes per byte of any other text: wide characters and escaped strings built in growing buffers. */
export const BYTE_COST = 17;
/** Bytes per value: the largest fixed part of a number, string or container, and its slot. */
export const VALUE_COST = 80;
/** Bytes more per object key. */
export const KEY_COST = 80;
/** Bytes more per object. */
export const OBJECT_COST = 200;
/** Bytes more per array. */
export const ARRAY_COST = 48;

/**
 * Maximum nesting depth measured on the raw text as §6 rule 4 defines it (no recursion, no copy).
 * @param {string} text
 * @returns {number}
 */
export function rawDepth(text) {
  let depth = 0,
    peak = 0,
    inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > peak) peak = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return peak;
}

/**
 * An upper bound of the bytes a JSON text (bytes) and its parse take, counted before parsing.
 * @param {Uint8Array} bytes
 * @returns {number}
 */
export function jsonCost(bytes) {
  let keys = 0,
    objects = 0,
    arrays = 0,
    commas = 0,
    plain = true;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x3a) keys++;
    else if (c === 0x7b) objects++;
    else if (c === 0x5b) arrays++;
    else if (c === 0x2c) commas++;
    else if (c >= 0x80 || c === 0x5c) plain = false;
  }
  const values = 1 + commas + keys + arrays + objects;
  return (
    BASE_COST +
    (plain ? PLAIN_BYTE_COST : BYTE_COST) * bytes.length +
    VALUE_COST * values +
    KEY_COST * keys +
    OBJECT_COST * objects +
    ARRAY_COST * arrays
  );
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A JSON text a caller gave (bytes), parsed as JSON.parse does once it is known to nest at most
 * `maxDepth` levels and, with its parse, to take at most `maxMemory` bytes; INPUT_INVALID
 * otherwise (nothing parsed), and when it is not UTF-8 or not JSON. `what` names it in messages.
 * @param {Uint8Array} bytes
 * @param {{maxDepth: number, maxMemory: number, what?: string}} options
 * @returns {unknown} what JSON.parse gives (objects as plain objects)
 */
export function parseBounded(bytes, { maxDepth, maxMemory, what = 'input' }) {
  const cost = jsonCost(bytes);
  if (cost > maxMemory)
    throw fail(
      'INPUT_INVALID',
      `${what}: ${bytes.length} bytes of JSON may take up to ${cost} bytes of memory to parse, above the limit of ${maxMemory}`,
    );
  let text;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw fail('INPUT_INVALID', `${what}: not UTF-8`);
  }
  const depth = rawDepth(text);
  if (depth > maxDepth)
    throw fail('INPUT_INVALID', `${what}: JSON nested ${depth} levels deep, above the limit of ${maxDepth}`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw fail('INPUT_INVALID', `${what}: not JSON: ${/** @type {Error} */ (e).message}`);
  }
}
