// SHA-256 (FIPS 180-4). node:crypto under Node (one-shot and incremental),
// WebCrypto's one-shot digest in browsers, and a small incremental JavaScript
// implementation for everything else (incremental hashing in browsers, no
// WebCrypto, or the built-ins switched off with useNativeDigests(false)).
// All give identical results.

import { IS_NODE, builtinModule, importBuiltin, nativeDigestsEnabled } from './runtime.js';

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** Incremental SHA-256: `new Sha256().update(a).update(b).hex()`. */
export class Sha256 {
  constructor() {
    this.h = new Uint32Array([
      0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]);
    this.w = new Uint32Array(64);
    this.buf = new Uint8Array(64);
    this.bufLen = 0;
    this.total = 0;
  }

  /**
   * @param {Uint8Array} bytes
   * @returns {this}
   */
  update(bytes) {
    let i = 0;
    this.total += bytes.length;
    if (this.bufLen > 0) {
      const n = Math.min(64 - this.bufLen, bytes.length);
      this.buf.set(bytes.subarray(0, n), this.bufLen);
      this.bufLen += n;
      i = n;
      if (this.bufLen < 64) return this;
      this._block(this.buf, 0);
      this.bufLen = 0;
    }
    for (; i + 64 <= bytes.length; i += 64) this._block(bytes, i);
    if (i < bytes.length) {
      this.buf.set(bytes.subarray(i), 0);
      this.bufLen = bytes.length - i;
    }
    return this;
  }

  /**
   * @param {Uint8Array} p
   * @param {number} o
   */
  _block(p, o) {
    const w = this.w;
    for (let t = 0; t < 16; t++, o += 4) w[t] = (p[o] << 24) | (p[o + 1] << 16) | (p[o + 2] << 8) | p[o + 3];
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15],
        b = w[t - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
    }
    const h = this.h;
    let a = h[0],
      b = h[1],
      c = h[2],
      d = h[3],
      e = h[4],
      f = h[5],
      g = h[6],
      k = h[7];
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + S1 + ((e & f) ^ (~e & g)) + K[t] + w[t]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
  }

  /**
   * Finishes and returns the digest as 64 lower-case hex digits.
   * @returns {string}
   */
  hex() {
    const bits = this.total * 8;
    const pad = new Uint8Array((this.bufLen < 56 ? 56 : 120) - this.bufLen + 8);
    pad[0] = 0x80;
    const dv = new DataView(pad.buffer);
    dv.setUint32(pad.length - 8, Math.floor(bits / 0x100000000));
    dv.setUint32(pad.length - 4, bits >>> 0);
    this.update(pad);
    let s = '';
    for (const v of this.h) s += v.toString(16).padStart(8, '0');
    return s;
  }
}

/**
 * @param {ArrayBuffer} buf
 * @returns {string}
 */
function toHex(buf) {
  const b = new Uint8Array(buf);
  let s = '';
  for (let i = 0; i < b.length; i++) s += b[i].toString(16).padStart(2, '0');
  return s;
}

/** @typedef {{update(bytes: Uint8Array): IncrementalSha256, hex(): string}} IncrementalSha256 */

/** @type {typeof import('node:crypto') | null} */
let nodeCrypto = builtinModule('node:crypto');
const nodeCryptoReady = nodeCrypto
  ? Promise.resolve()
  : importBuiltin('node:crypto').then((m) => {
      nodeCrypto = typeof m?.createHash === 'function' ? m : null;
    });

/**
 * node:crypto when the runtime has it and the built-ins are in use, else null.
 * @returns {Promise<typeof import('node:crypto') | null>}
 */
async function nodeHashing() {
  if (!IS_NODE || !nativeDigestsEnabled()) return null;
  await nodeCryptoReady;
  return nodeCrypto;
}

const webCrypto = () => (nativeDigestsEnabled() ? (globalThis.crypto?.subtle ?? null) : null);

/**
 * SHA-256 of `bytes` (a Uint8Array) as 64 lower-case hex digits.
 * @param {Uint8Array} bytes
 * @returns {Promise<string>}
 */
export async function sha256Hex(bytes) {
  const nc = await nodeHashing();
  if (nc) return nc.createHash('sha256').update(bytes).digest('hex');
  const subtle = webCrypto();
  if (subtle) {
    try {
      // bytes over a SharedArrayBuffer are refused (then the JavaScript digest below)
      return toHex(await subtle.digest('SHA-256', /** @type {Uint8Array<ArrayBuffer>} */ (bytes)));
    } catch {
      // e.g. an insecure browser context, or bytes WebCrypto does not take: the JavaScript digest below
    }
  }
  return new Sha256().update(bytes).hex();
}

/**
 * An incremental SHA-256 ({update(bytes), hex()}): node:crypto under Node,
 * the JavaScript implementation elsewhere (WebCrypto has no incremental digest).
 * @returns {Promise<IncrementalSha256>}
 */
export async function createSha256() {
  const nc = await nodeHashing();
  if (!nc) return new Sha256();
  const h = nc.createHash('sha256');
  return {
    /**
     * @this {IncrementalSha256}
     * @param {Uint8Array} bytes
     * @returns {IncrementalSha256}
     */
    update(bytes) {
      h.update(bytes);
      return this;
    },
    hex: () => h.digest('hex'),
  };
}

/**
 * Which implementations sha256Hex and createSha256 use right now:
 * `{oneShot, incremental}`, each `'node:crypto'`, `'webcrypto'` or `'javascript'`.
 * @returns {Promise<{oneShot: 'node:crypto' | 'webcrypto' | 'javascript', incremental: 'node:crypto' | 'javascript'}>}
 */
export async function sha256Implementation() {
  if (await nodeHashing()) return { oneShot: 'node:crypto', incremental: 'node:crypto' };
  return { oneShot: webCrypto() ? 'webcrypto' : 'javascript', incremental: 'javascript' };
}
