// Byte sources: in-memory bytes, Blob/File, a file path (Node), an HTTP(S) URL
// read with Range requests, or any object with `size` and `read(offset, length)`.
//
// A source has `size` (bytes), `inMemory` (true when `read` returns views of
// bytes the caller already holds) and `async read(offset, length)` returning a
// Uint8Array of exactly `length` bytes; `close()` releases it. A remote source
// (HttpSource) also has `peek(offset, length)`, the bytes it holds without a
// request (or null), and `async prefetch(ranges)`, which fetches ahead the
// ranges a reader is about to read (read_plan.js).
//
// Deadlines (spec §11.4): every HTTP request fails with IO_TIMEOUT when its
// response or its next bytes take more than `timeout` milliseconds (default
// DEFAULT_TIMEOUT_MS), or when the whole request takes more than
// `timeout + n / minRate` (n bytes asked for, `minRate` in bytes per second,
// default DEFAULT_MIN_RATE). A body that ends before, or runs past, the bytes
// its headers announce is IO_ERROR at once.

import { RlarchiveError } from './errors.js';
import { getRange, ioError } from './http_range.js';
import { RangeCache } from './range_cache.js';
import { readAheadPlan } from './range_plan.js';
import { importBuiltin } from './runtime.js';

/** @typedef {import('./range_cache.js').Range} Range */
/** @typedef {import('./http_range.js').FetchFunction} FetchFunction */
/**
 * A byte source (see above): any object with `size` and `read`; the sources of this module have
 * the other members too (`peek` and `prefetch`: HttpSource).
 * @typedef {object} Source
 * @property {number} size bytes
 * @property {(offset: number, length: number) => Promise<Uint8Array>} read exactly `length` bytes at `offset`
 * @property {() => Promise<void>} [close]
 * @property {boolean} [inMemory] `read` returns views of bytes the caller already holds
 * @property {number} [bytesRead] bytes returned by `read` so far
 * @property {number} [bytesFetched] bytes of the HTTP responses so far
 * @property {(offset: number, length: number) => Uint8Array | null} [peek] the bytes held, without a request
 * @property {(ranges: Range[]) => Promise<void>} [prefetch] fetches ahead the ranges about to be read
 */
/**
 * What openSource takes: bytes, a Blob or File, an http(s) URL, a file path or `file:` URL (Node), or a Source.
 * @typedef {Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView | Blob | URL | string | Source} Input
 */
/**
 * The options of a URL (HttpSource.open): `fetch` (default globalThis.fetch), extra `headers`, and the
 * deadlines of every request (spec §11.4): `timeout` in milliseconds, `minRate` in bytes per second.
 * @typedef {{fetch?: FetchFunction, headers?: Record<string, string>, timeout?: number, minRate?: number}} OpenOptions
 */

/** Milliseconds an HTTP request may wait for its response or its next bytes (spec §11.4). */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Bytes per second: a request for n bytes has `timeout + n / minRate` in all (spec §11.4). */
export const DEFAULT_MIN_RATE = 65_536;

/**
 * A positive, finite number given as an option, or the default; anything else is IO_ERROR.
 * @param {unknown} value
 * @param {number} fallback
 * @param {string} name
 * @returns {number}
 */
function positive(value, fallback, name) {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw ioError(`the option ${name} must be a positive, finite number, not ${String(value)}`);
  }
  return value;
}

/** @implements {Source} */
export class MemorySource {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.size = bytes.length;
    this.inMemory = true;
    this.bytesRead = 0;
  }
  /**
   * @param {number} offset
   * @param {number} length
   * @returns {Promise<Uint8Array>}
   */
  async read(offset, length) {
    this.bytesRead += length;
    return this.bytes.subarray(offset, offset + length);
  }
  async close() {}
}

/** @implements {Source} */
export class BlobSource {
  /** @param {Blob} blob */
  constructor(blob) {
    this.blob = blob;
    this.size = blob.size;
    this.inMemory = false;
    this.bytesRead = 0;
  }
  /**
   * @param {number} offset
   * @param {number} length
   * @returns {Promise<Uint8Array>}
   */
  async read(offset, length) {
    let buf;
    try {
      buf = new Uint8Array(await this.blob.slice(offset, offset + length).arrayBuffer());
    } catch (e) {
      throw ioError('cannot read the Blob', e);
    }
    if (buf.length !== length) throw ioError('short read from the Blob');
    this.bytesRead += length;
    return buf;
  }
  async close() {}
}

/** A file read with positional reads (Node). */
/** @implements {Source} */
export class FileSource {
  /**
   * @param {string} path
   * @returns {Promise<FileSource>}
   */
  static async open(path) {
    /** @type {typeof import('node:fs/promises') | null} */
    const fs = await importBuiltin('node:fs/promises');
    if (!fs) throw ioError('file paths are only supported on Node');
    /** @type {import('node:fs/promises').FileHandle | undefined} */
    let fh;
    try {
      fh = await fs.open(path, 'r');
      const st = await fh.stat();
      if (!st.isFile()) throw new Error('not a regular file');
      return new FileSource(fh, st.size, String(path));
    } catch (e) {
      if (fh) await fh.close().catch(() => {});
      throw ioError(`cannot open ${path}`, e);
    }
  }
  /**
   * @param {import('node:fs/promises').FileHandle} fh
   * @param {number} size
   * @param {string} path
   */
  constructor(fh, size, path) {
    /** @type {import('node:fs/promises').FileHandle | null} */
    this.fh = fh;
    this.size = size;
    this.path = path;
    this.inMemory = false;
    this.bytesRead = 0;
  }
  /**
   * @param {number} offset
   * @param {number} length
   * @returns {Promise<Uint8Array>}
   */
  async read(offset, length) {
    const buf = new Uint8Array(length);
    let done = 0;
    try {
      while (done < length) {
        const chunk = Math.min(length - done, 1 << 30);
        const fh = /** @type {import('node:fs/promises').FileHandle} */ (this.fh); // null once closed: a TypeError, IO_ERROR below
        const { bytesRead } = await fh.read(buf, done, chunk, offset + done);
        if (bytesRead === 0) throw new Error('unexpected end of file');
        done += bytesRead;
      }
    } catch (e) {
      throw ioError(`cannot read ${this.path}`, e);
    }
    this.bytesRead += length;
    return buf;
  }
  async close() {
    const fh = this.fh;
    this.fh = null;
    if (fh) await fh.close().catch(() => {});
  }
}

/**
 * Bytes a remote source fetches from the end of the file when it is opened:
 * the end records, with the longest comment they may have and the ZIP64
 * records before them (§2.1, §2.6), and with them the central directory and the
 * last members of most archives (§12 puts manifest.json last).
 */
export const TAIL_BYTES = 65557 + 20 + 56;

/**
 * Whether the first request may be a suffix range (`bytes=-n`): not from a web
 * page or worker to another origin, where the browser would first ask the
 * server whether it may send one (a CORS preflight request, which a server that
 * allows plain range requests may refuse); there it asks for the start of the
 * file instead.
 * @param {string} url
 * @returns {boolean}
 */
function suffixAllowed(url) {
  /** @type {unknown} */
  let here;
  try {
    here = globalThis.location?.origin;
  } catch {
    return true; // a runtime whose `location` is not set (Deno without --location)
  }
  if (typeof here !== 'string' || here === 'null') return true;
  try {
    return new URL(url, globalThis.location.href).origin === here;
  } catch {
    return false;
  }
}

/**
 * An HTTP(S) resource read with Range requests (http_range.js). Opening
 * fetches the last TAIL_BYTES of the file in one request, a suffix range whose
 * answer also gives the file's size (a server that does not take suffix ranges,
 * or a page reading from another origin, costs one request more). A reader
 * then announces the ranges it is about to read (`prefetch`), which are
 * fetched by the plan of range_plan.js and kept; every other read is one
 * request of exactly the bytes asked for. A server that ignores Range sends
 * the whole file, which is kept. An answer whose ETag differs from an earlier
 * one's (the file was replaced between two requests) is IO_ERROR, as is a
 * change of size. `bytesFetched` and `requests` count the
 * traffic; `bytesRead` the bytes returned by `read`, as every source of this
 * module does.
 */
/** @implements {Source} */
export class HttpSource {
  /**
   * Options: `fetch`, `headers`, `timeout` (milliseconds, default
   * DEFAULT_TIMEOUT_MS) and `minRate` (bytes per second, default
   * DEFAULT_MIN_RATE): the deadlines of every request (spec §11.4).
   * @param {string | URL} url
   * @param {OpenOptions} [options]
   * @returns {Promise<HttpSource>}
   */
  static async open(url, { fetch: fetchFn, headers, timeout, minRate } = {}) {
    const src = new HttpSource(String(url), fetchFn ?? globalThis.fetch, headers ?? {}, { timeout, minRate });
    if (typeof src.fetch !== 'function') throw ioError('no fetch() in this runtime');
    await src._init();
    return src;
  }
  /**
   * @param {string} url
   * @param {FetchFunction} fetchFn
   * @param {Record<string, string>} headers
   * @param {{timeout?: unknown, minRate?: unknown}} [deadlines]
   */
  constructor(url, fetchFn, headers, { timeout, minRate } = {}) {
    this.url = url;
    this.fetch = fetchFn;
    this.headers = headers;
    this.timeout = positive(timeout, DEFAULT_TIMEOUT_MS, 'timeout');
    this.minRate = positive(minRate, DEFAULT_MIN_RATE, 'minRate');
    this.inMemory = false;
    /** @type {RangeCache | null} */
    this.cache = null;
    this.size = 0;
    this.bytesFetched = 0;
    this.bytesRead = 0;
    this.requests = 0;
    /** @type {string | null} */
    this.etag = null; // the version of the file the first answer that names one names
  }

  /**
   * One request (http_range.js); `whole`: read a whole-file answer, whatever its size.
   * @param {string} rangeValue
   * @param {number} asked
   * @returns {Promise<import('./http_range.js').RangeAnswer>}
   */
  async _get(rangeValue, asked, whole = false) {
    this.requests++;
    const fetchFn = this.fetch; // called unbound: browsers reject fetch with a foreign `this`
    const r = await getRange(fetchFn, this.url, this.headers, rangeValue, asked, {
      timeout: this.timeout,
      minRate: this.minRate,
      whole,
    });
    this.bytesFetched += r.body?.length ?? 0;
    if (r.etag !== null && this.etag !== null && r.etag !== this.etag)
      throw ioError(`${this.url} changed while being read (an answer names another ETag)`);
    this.etag ??= r.etag;
    return r;
  }

  async _init() {
    const suffix = suffixAllowed(this.url);
    const first = await this._get(suffix ? `bytes=-${TAIL_BYTES}` : `bytes=0-${TAIL_BYTES - 1}`, TAIL_BYTES);
    if (first.total === null)
      throw ioError(`cannot open ${this.url}: the server tells neither a range nor the file's size`);
    this.size = first.total;
    this.cache = new RangeCache(this.size);
    if (first.body !== null) {
      const end = first.start + first.body.length;
      if (first.status === 206 && (suffix ? end !== first.total : first.start !== 0))
        throw ioError(`cannot open ${this.url}: the server sent a range other than the one asked for`);
      this.cache.add(first.start, first.body);
    }
    // the end of the file, when the first answer is not it (416, a whole file larger than asked for, the start)
    const start = Math.max(0, this.size - TAIL_BYTES);
    for (const [a, n] of this.cache.missing([[start, this.size - start]])) this.#held().add(a, await this._fetch(a, n));
  }

  /**
   * `length` bytes at `offset` in one request; the whole file, kept, from a server that ignores Range.
   * @param {number} offset
   * @param {number} length
   * @returns {Promise<Uint8Array>}
   */
  async _fetch(offset, length) {
    const r = await this._get(`bytes=${offset}-${offset + length - 1}`, length, true);
    if (r.status === 206 && r.total !== this.size) throw ioError('the resource changed size while being read');
    if (r.status === 206 && r.start === offset && r.body?.length === length) return r.body;
    if (r.status === 200 && r.body !== null) {
      if (r.body.length !== this.size) throw ioError('the resource changed size while being read');
      this.#held().add(0, r.body);
      return r.body.subarray(offset, offset + length);
    }
    throw ioError('the server sent a different range than asked for');
  }

  /** The cache, once opened (null once closed: a TypeError, as for any use of a closed source). */
  #held() {
    return /** @type {RangeCache} */ (this.cache);
  }

  /**
   * The bytes at `offset` when fetched ahead (a view), else null; never a request.
   * @param {number} offset
   * @param {number} length
   * @returns {Uint8Array | null}
   */
  peek(offset, length) {
    return this.cache?.get(offset, length) ?? null;
  }

  /**
   * Fetches the ranges [offset, length] a reader is about to read, in as few requests as range_plan.js allows, and keeps them.
   * @param {readonly Range[]} ranges
   * @returns {Promise<void>}
   */
  async prefetch(ranges) {
    if (!this.cache) return;
    for (const [a, n] of readAheadPlan(this.cache.missing(ranges))) this.#held().add(a, await this._fetch(a, n));
  }

  /**
   * @param {number} offset
   * @param {number} length
   * @returns {Promise<Uint8Array>}
   */
  async read(offset, length) {
    const bytes = this.peek(offset, length) ?? (await this._fetch(offset, length));
    this.bytesRead += length;
    return bytes;
  }
  async close() {
    this.cache = null;
  }
}

/**
 * @param {string} s
 * @returns {boolean}
 */
function isHttpUrl(s) {
  return /^https?:\/\//i.test(s);
}

/**
 * Turns what the caller gave into a source: Uint8Array (incl. Buffer),
 * ArrayBuffer or other ArrayBuffer view; Blob or File; URL object or string
 * starting with http:// or https://; `file:` URL or path string (Node); or an
 * object that already has `size` and `read`.
 * @param {Input} input
 * @param {OpenOptions | null} [options]
 * @returns {Promise<Source>}
 */
export async function openSource(input, options = {}) {
  try {
    return await pickSource(input, options ?? {});
  } catch (e) {
    if (e instanceof RlarchiveError) throw e;
    throw ioError('unusable source', e);
  }
}

/**
 * @param {Input} input
 * @param {OpenOptions} options
 * @returns {Promise<Source>}
 */
async function pickSource(input, options) {
  if (input instanceof Uint8Array) return new MemorySource(input);
  if (
    input instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer !== 'undefined' && input instanceof SharedArrayBuffer)
  ) {
    return new MemorySource(new Uint8Array(input));
  }
  if (ArrayBuffer.isView(input))
    return new MemorySource(new Uint8Array(input.buffer, input.byteOffset, input.byteLength));
  if (typeof Blob !== 'undefined' && input instanceof Blob) return new BlobSource(input);
  if (typeof URL !== 'undefined' && input instanceof URL) {
    if (input.protocol === 'http:' || input.protocol === 'https:') return HttpSource.open(input.href, options);
    if (input.protocol === 'file:') {
      const url = await importBuiltin('node:url');
      if (!url) throw ioError('file: URLs are only supported on Node');
      let path;
      try {
        path = url.fileURLToPath(input);
      } catch (e) {
        throw ioError(`unusable file: URL ${input.href}`, e);
      }
      return FileSource.open(path);
    }
    throw ioError(`unsupported URL scheme ${input.protocol}`);
  }
  if (typeof input === 'string') {
    if (isHttpUrl(input)) return HttpSource.open(input, options);
    return FileSource.open(input);
  }
  const candidate = /** @type {{read?: unknown, size?: unknown} | null} */ (/** @type {unknown} */ (input));
  if (
    candidate &&
    typeof candidate === 'object' &&
    typeof candidate.read === 'function' &&
    Number.isSafeInteger(candidate.size) &&
    /** @type {number} */ (candidate.size) >= 0
  ) {
    return /** @type {Source} */ (input);
  }
  throw ioError('unsupported source: give bytes, a Blob, a URL or a file path');
}
