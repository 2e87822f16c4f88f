// RFC 4648 §4 base64 with padding, canonical form only (spec §7.4).

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUES = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

const SHAPE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * True when `s` is canonical padded base64: decoding then encoding gives `s` again.
 * @param {unknown} s
 * @returns {s is string}
 */
export function isCanonicalBase64(s) {
  if (typeof s !== 'string' || s.length % 4 !== 0 || !SHAPE.test(s)) return false;
  if (s.endsWith('==')) return (VALUES[s.charCodeAt(s.length - 3)] & 0x0f) === 0;
  if (s.endsWith('=')) return (VALUES[s.charCodeAt(s.length - 2)] & 0x03) === 0;
  return true;
}

/**
 * Decoded length of a canonical base64 string, without decoding it.
 * @param {string} s
 * @returns {number}
 */
export function base64Length(s) {
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return (s.length / 4) * 3 - pad;
}

/**
 * Decodes canonical base64 into a new (8-byte aligned) Uint8Array.
 * @param {string} s
 * @returns {Uint8Array<ArrayBuffer>}
 */
export function decodeBase64(s) {
  const n = base64Length(s);
  const out = new Uint8Array(n);
  let o = 0;
  for (let i = 0; i < s.length; i += 4) {
    const a = VALUES[s.charCodeAt(i)],
      b = VALUES[s.charCodeAt(i + 1)];
    const c = VALUES[s.charCodeAt(i + 2)],
      d = VALUES[s.charCodeAt(i + 3)];
    const v = (a << 18) | (b << 12) | ((c < 0 ? 0 : c) << 6) | (d < 0 ? 0 : d);
    out[o++] = v >>> 16;
    if (o < n) out[o++] = (v >>> 8) & 0xff;
    if (o < n) out[o++] = v & 0xff;
  }
  return out;
}

/**
 * Encodes bytes as padded base64.
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function encodeBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i],
      b = bytes[i + 1],
      c = bytes[i + 2];
    s += ALPHABET[a >> 2] + ALPHABET[((a & 3) << 4) | ((b ?? 0) >> 4)];
    s += b === undefined ? '=' : ALPHABET[((b & 15) << 2) | ((c ?? 0) >> 6)];
    s += c === undefined ? '=' : ALPHABET[c & 63];
  }
  return s;
}
