// Byte sources: in-memory bytes, Blob/File, a file path (Node), an HTTP(S) URL
// read with Range requests, or any object with `size` and `read(offset, length)`.
//
// A source has `size` (bytes), `inMemory` (true when `read` returns views of
// bytes the caller already holds) and `async read(offset, length)` returning a
// Uint8Array of exactly `length` bytes; `close()` releases it.

import { fail, errorText, RlarchiveError } from './errors.js';
import { importBuiltin } from './runtime.js';

const ioError = (msg, cause) => fail('IO_ERROR', cause !== undefined ? `${msg}: ${errorText(cause)}` : msg);

export class MemorySource {
  constructor(bytes) {
    this.bytes = bytes;
    this.size = bytes.length;
    this.inMemory = true;
  }
  async read(offset, length) {
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

const HEAD_BYTES = 65536;
const TAIL_BYTES = 65557 + 98; // the EOCD search region, plus the ZIP64 end records before it
const READAHEAD = 16384;
const CACHE_LIMIT = 1 << 20; // reads larger than this are not kept

/**
 * An HTTP(S) resource read with Range requests. Opening fetches the first
 * 64 KiB and the last 64 KiB; later small reads fetch 16 KiB at least and are
 * cached, large reads (tensors) fetch exactly their range.
 * `bytesFetched` and `requests` count the traffic.
 */
export class HttpSource {
  static async open(url, { fetch: fetchFn, headers } = {}) {
    const src = new HttpSource(String(url), fetchFn ?? globalThis.fetch, headers ?? {});
    if (typeof src.fetch !== 'function') throw ioError('no fetch() in this runtime');
    await src._init();
    return src;
  }
  constructor(url, fetchFn, headers) {
    this.url = url;
    this.fetch = fetchFn;
    this.headers = headers;
    this.inMemory = false;
    this.segments = []; // [{start, bytes}]
    this.full = null;
    this.size = 0;
    this.bytesFetched = 0;
    this.requests = 0;
  }

  async _get(start, end) {
    // end is exclusive; returns {start, bytes, total}
    let res, body;
    try {
      this.requests++;
      const fetchFn = this.fetch; // called unbound: browsers reject fetch with a foreign `this`
      res = await fetchFn(this.url, {
        headers: { ...this.headers, Range: `bytes=${start}-${end - 1}`, 'Accept-Encoding': 'identity' },
      });
      if (res.status === 416) {
        const m = /^bytes \*\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
        await res.arrayBuffer().catch(() => {});
        if (m) return { start: 0, bytes: new Uint8Array(0), total: Number(m[1]) };
        throw new Error('HTTP 416 without a Content-Range');
      }
      if (res.status !== 200 && res.status !== 206) throw new Error(`HTTP status ${res.status}`);
      body = new Uint8Array(await res.arrayBuffer());
    } catch (e) {
      if (e instanceof RlarchiveError) throw e;
      throw ioError(`cannot fetch ${this.url}`, e);
    }
    this.bytesFetched += body.length;
    if (res.status === 200) return { start: 0, bytes: body, total: body.length, full: true };
    const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
    if (!m) throw ioError('the server sent no usable Content-Range');
    const s = Number(m[1]), e = Number(m[2]) + 1, total = Number(m[3]);
    if (e - s !== body.length || e > total) throw ioError('the server sent a range that does not match its body');
    return { start: s, bytes: body, total };
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
  if (input instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && input instanceof SharedArrayBuffer)) {
    return new MemorySource(new Uint8Array(input));
  }
  if (ArrayBuffer.isView(input)) return new MemorySource(new Uint8Array(input.buffer, input.byteOffset, input.byteLength));
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
  if (input && typeof input === 'object' && typeof input.read === 'function' && Number.isSafeInteger(input.size) && input.size >= 0) {
    return input;
  }
  throw ioError('unsupported source: give bytes, a Blob, a URL or a file path');
}
