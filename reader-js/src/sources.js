// Byte sources: in-memory bytes, Blob/File, a file path (Node), an HTTP(S) URL
// read with Range requests, or any object with `size` and `read(offset, length)`.
//
// A source has `size` (bytes), `inMemory` (true when `read` returns views of
// bytes the caller already holds) and `async read(offset, length)` returning a
// Uint8Array of exactly `length` bytes; `close()` releases it.
//
// Deadlines (spec §11.4): every HTTP request fails with IO_TIMEOUT when its
// response or its next bytes take more than `timeout` milliseconds (default
// DEFAULT_TIMEOUT_MS), or when the whole request takes more than
// `timeout + n / minRate` (n bytes asked for, `minRate` in bytes per second,
// default DEFAULT_MIN_RATE). A body that ends before, or runs past, the bytes
// its headers announce is IO_ERROR at once.

import { fail, errorText, RlarchiveError } from './errors.js';
import { importBuiltin } from './runtime.js';

const ioError = (msg, cause) => fail('IO_ERROR', cause !== undefined ? `${msg}: ${errorText(cause)}` : msg);

/** Milliseconds an HTTP request may wait for its response or its next bytes (spec §11.4). */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Bytes per second: a request for n bytes has `timeout + n / minRate` in all (spec §11.4). */
export const DEFAULT_MIN_RATE = 65_536;

/** A positive, finite number given as an option, or the default; anything else is IO_ERROR. */
function positive(value, fallback, name) {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw ioError(`the option ${name} must be a positive, finite number, not ${String(value)}`);
  }
  return value;
}

export class MemorySource {
  constructor(bytes) {
    this.bytes = bytes;
    this.size = bytes.length;
    this.inMemory = true;
    this.bytesRead = 0;
  }
  async read(offset, length) {
    this.bytesRead += length;
    return this.bytes.subarray(offset, offset + length);
  }
  async close() {}
}

export class BlobSource {
  constructor(blob) {
    this.blob = blob;
    this.size = blob.size;
    this.inMemory = false;
    this.bytesRead = 0;
  }
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
export class FileSource {
  static async open(path) {
    const fs = await importBuiltin('node:fs/promises');
    if (!fs) throw ioError('file paths are only supported on Node');
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
  constructor(fh, size, path) {
    this.fh = fh;
    this.size = size;
    this.path = path;
    this.inMemory = false;
    this.bytesRead = 0;
  }
  async read(offset, length) {
    const buf = new Uint8Array(length);
    let done = 0;
    try {
      while (done < length) {
        const chunk = Math.min(length - done, 1 << 30);
        const { bytesRead } = await this.fh.read(buf, done, chunk, offset + done);
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

const MAX_TIMER_MS = 2 ** 31 - 1; // the longest delay setTimeout takes

/**
 * The two deadlines of one request (spec §11.4): `idle` ms without progress,
 * and `idle` plus the bytes asked for at `minRate` in all. `signal` aborts the
 * fetch; `race(p)` settles with `p` or rejects when a deadline passes (even for
 * a fetch that ignores its signal); `expired` says which passed.
 */
class Deadline {
  constructor(idle, minRate, bytes) {
    this.idleMs = idle;
    this.minRate = minRate;
    this.start = Date.now();
    this.bytes = 0;
    this.totalTimer = null;
    this.expired = null;
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    let reject;
    this.passed = new Promise((_, r) => {
      reject = r;
    });
    this.passed.catch(() => {});
    const expire = (why) => {
      if (this.expired) return;
      this.expired = why;
      reject(new Error(why));
      this.controller.abort();
    };
    this.expire = expire;
    this.idleTimer = null;
    this.allow(bytes);
    this.progress();
  }
  /** The request may bring `bytes` (more than asked for: a server that sends the whole file): its total deadline grows to match. */
  allow(bytes) {
    if (bytes <= this.bytes || this.expired) return;
    this.bytes = bytes;
    clearTimeout(this.totalTimer);
    const total = this.idleMs + (bytes / this.minRate) * 1000;
    const ms = Math.min(Math.max(0, total - (Date.now() - this.start)), MAX_TIMER_MS);
    this.totalTimer = setTimeout(
      () =>
        this.expire(
          `the request took more than ${Math.round(total)} ms (timeout ${this.idleMs} ms plus ${bytes} bytes at ${this.minRate} bytes/s)`,
        ),
      ms,
    );
  }
  /** Bytes (or the response) came: the idle deadline starts again. */
  progress() {
    clearTimeout(this.idleTimer);
    if (!this.expired)
      this.idleTimer = setTimeout(
        () => this.expire(`nothing came for ${this.idleMs} ms`),
        Math.min(this.idleMs, MAX_TIMER_MS),
      );
  }
  race(promise) {
    return Promise.race([promise, this.passed]);
  }
  clear() {
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
  }
}

/** The Content-Length header as a number, or null (absent, or compressed, or not a number). */
function contentLength(headers) {
  const text = headers.get('content-length');
  const enc = headers.get('content-encoding');
  if (text === null || (enc && enc.toLowerCase() !== 'identity') || !/^\d+$/.test(text.trim())) return null;
  return Number(text.trim());
}

/**
 * The body of `res`: read chunk by chunk (each one restarts the idle deadline),
 * never more than `expected` bytes when that is known, and an error at once
 * when the body ends before them.
 */
async function readBody(res, expected, deadline) {
  const reader = typeof res.body?.getReader === 'function' ? res.body.getReader() : null;
  if (!reader) {
    const bytes = new Uint8Array(await deadline.race(res.arrayBuffer()));
    if (expected !== null && bytes.length !== expected)
      throw ioError(`the body has ${bytes.length} bytes, not the ${expected} announced`);
    return bytes;
  }
  const chunks = [];
  let got = 0;
  try {
    for (;;) {
      const { done, value } = await deadline.race(reader.read());
      if (done) break;
      if (!(value instanceof Uint8Array)) throw ioError('the response body is not bytes');
      deadline.progress();
      got += value.length;
      deadline.allow(got); // a body of unknown length: at least the minimum rate
      if (expected !== null && got > expected) throw ioError(`the body runs past the ${expected} bytes announced`);
      chunks.push(value);
    }
  } finally {
    if (deadline.expired || (expected !== null && got !== expected)) reader.cancel().catch(() => {});
  }
  if (expected !== null && got !== expected)
    throw ioError(`the body ended after ${got} of the ${expected} bytes announced`);
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(got);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const HEAD_BYTES = 65536;
const TAIL_BYTES = 65557 + 98; // the EOCD search region, plus the ZIP64 end records before it
const READAHEAD = 16384;
const CACHE_LIMIT = 1 << 20; // reads larger than this are not kept

/**
 * An HTTP(S) resource read with Range requests. Opening fetches the first
 * 64 KiB and the last 64 KiB; later small reads fetch 16 KiB at least and are
 * cached, large reads (tensors) fetch exactly their range.
 * `bytesFetched` and `requests` count the traffic; `bytesRead` the bytes
 * returned by `read`, as every source of this module does.
 */
export class HttpSource {
  /**
   * Options: `fetch`, `headers`, `timeout` (milliseconds, default
   * DEFAULT_TIMEOUT_MS) and `minRate` (bytes per second, default
   * DEFAULT_MIN_RATE): the deadlines of every request (spec §11.4).
   */
  static async open(url, { fetch: fetchFn, headers, timeout, minRate } = {}) {
    const src = new HttpSource(String(url), fetchFn ?? globalThis.fetch, headers ?? {}, { timeout, minRate });
    if (typeof src.fetch !== 'function') throw ioError('no fetch() in this runtime');
    await src._init();
    return src;
  }
  constructor(url, fetchFn, headers, { timeout, minRate } = {}) {
    this.url = url;
    this.fetch = fetchFn;
    this.headers = headers;
    this.timeout = positive(timeout, DEFAULT_TIMEOUT_MS, 'timeout');
    this.minRate = positive(minRate, DEFAULT_MIN_RATE, 'minRate');
    this.inMemory = false;
    this.segments = []; // [{start, bytes}]
    this.full = null;
    this.size = 0;
    this.bytesFetched = 0;
    this.bytesRead = 0;
    this.requests = 0;
  }

  async _get(start, end) {
    // end is exclusive; returns {start, bytes, total}
    const deadline = new Deadline(this.timeout, this.minRate, end - start);
    let res,
      body,
      range = null;
    try {
      this.requests++;
      const fetchFn = this.fetch; // called unbound: browsers reject fetch with a foreign `this`
      res = await deadline.race(
        fetchFn(this.url, {
          headers: { ...this.headers, Range: `bytes=${start}-${end - 1}`, 'Accept-Encoding': 'identity' },
          signal: deadline.signal,
        }),
      );
      deadline.progress();
      if (res.status === 416) {
        const m = /^bytes \*\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
        res.body?.cancel?.().catch(() => {});
        if (m) return { start: 0, bytes: new Uint8Array(0), total: Number(m[1]) };
        throw new Error('HTTP 416 without a Content-Range');
      }
      if (res.status !== 200 && res.status !== 206) throw new Error(`HTTP status ${res.status}`);
      const announced = contentLength(res.headers);
      if (res.status === 206) {
        const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
        if (!m) throw ioError('the server sent no usable Content-Range');
        range = { s: Number(m[1]), e: Number(m[2]) + 1, total: Number(m[3]) };
        if (range.e > range.total || range.s >= range.e)
          throw ioError('the server sent a range that does not match its body');
        if (announced !== null && announced !== range.e - range.s) {
          throw ioError(`the server announced ${announced} bytes for a range of ${range.e - range.s}`);
        }
      }
      if (!range && announced !== null) deadline.allow(announced); // the whole file, from a server without Range
      body = await readBody(res, range ? range.e - range.s : announced, deadline);
    } catch (e) {
      if (deadline.expired) throw fail('IO_TIMEOUT', `cannot fetch ${this.url}: ${deadline.expired}`);
      if (e instanceof RlarchiveError) throw e;
      throw ioError(`cannot fetch ${this.url}`, e);
    } finally {
      deadline.clear();
    }
    this.bytesFetched += body.length;
    if (res.status === 200) return { start: 0, bytes: body, total: body.length, full: true };
    if (range.e - range.s !== body.length) throw ioError('the server sent a range that does not match its body');
    return { start: range.s, bytes: body, total: range.total };
  }

  _keep(r) {
    if (r.full) {
      this.full = r.bytes;
      this.segments = [];
    } else if (r.bytes.length <= Math.max(CACHE_LIMIT, TAIL_BYTES)) {
      this.segments.push({ start: r.start, bytes: r.bytes });
    }
  }

  async _init() {
    const r = await this._get(0, HEAD_BYTES);
    this.size = r.total;
    this._keep(r);
    if (this.full || this.size <= HEAD_BYTES) return;
    const t = await this._get(Math.max(HEAD_BYTES, this.size - TAIL_BYTES), this.size);
    if (t.total !== this.size) throw ioError('the resource changed size while being read');
    this._keep(t);
  }

  _cached(offset, length) {
    if (this.full) return this.full.subarray(offset, offset + length);
    for (const s of this.segments) {
      if (offset >= s.start && offset + length <= s.start + s.bytes.length) {
        return s.bytes.subarray(offset - s.start, offset - s.start + length);
      }
    }
    return null;
  }

  async read(offset, length) {
    const bytes = await this._read(offset, length);
    this.bytesRead += length;
    return bytes;
  }
  async _read(offset, length) {
    const hit = this._cached(offset, length);
    if (hit) return hit;
    const end = length >= READAHEAD ? offset + length : Math.min(this.size, offset + READAHEAD);
    const r = await this._get(offset, end);
    if (r.full) {
      this._keep(r);
      if (r.bytes.length !== this.size) throw ioError('the resource changed size while being read');
      return this.full.subarray(offset, offset + length);
    }
    if (r.total !== this.size || r.start !== offset || r.bytes.length < length) {
      throw ioError('the server sent a different range than asked for');
    }
    this._keep(r);
    return r.bytes.subarray(0, length);
  }
  async close() {
    this.segments = [];
    this.full = null;
  }
}

function isHttpUrl(s) {
  return /^https?:\/\//i.test(s);
}

/**
 * Turns what the caller gave into a source: Uint8Array (incl. Buffer),
 * ArrayBuffer or other ArrayBuffer view; Blob or File; URL object or string
 * starting with http:// or https://; `file:` URL or path string (Node); or an
 * object that already has `size` and `read`.
 */
export async function openSource(input, options = {}) {
  try {
    return await pickSource(input, options ?? {});
  } catch (e) {
    if (e instanceof RlarchiveError) throw e;
    throw ioError('unusable source', e);
  }
}

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
  if (
    input &&
    typeof input === 'object' &&
    typeof input.read === 'function' &&
    Number.isSafeInteger(input.size) &&
    input.size >= 0
  ) {
    return input;
  }
  throw ioError('unsupported source: give bytes, a Blob, a URL or a file path');
}
