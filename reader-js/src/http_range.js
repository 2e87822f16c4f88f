// One HTTP request for a range of a file's bytes, checked against what it
// asked for (spec §11.4); the twin of python/rlarchive/http_range.py.
//
// getRange() sends one GET with a Range header and resolves to its answer:
// a range (206, with its Content-Range), the whole file (200, from a server
// that ignores the Range header, or one that does not take a suffix range
// `bytes=-n`), or the size alone (416 with `bytes */size`, or a whole file
// larger than asked for, whose body is left unread). An answer that does not
// match itself (a Content-Length other than its range, a body that ends early
// or runs past what it announced) is IO_ERROR; a request that misses a
// deadline is IO_TIMEOUT:
//
// - `timeout` ms without the response or the next bytes of its body;
// - `timeout + n / minRate` in all, for n bytes asked for (or announced by a
//   server that sends the whole file).

import { errorText, fail, RlarchiveError } from './errors.js';

/**
 * The fetch a request goes through (globalThis.fetch, or the caller's).
 * @typedef {(url: string, init: {headers: Record<string, string>, signal: AbortSignal}) => Promise<Response>} FetchFunction
 */
/**
 * The answer to one request (see getRange): its status, where `body` begins, the body (null: a
 * whole file larger than asked for, left unread) and the file's size when the answer gives it.
 * @typedef {{status: 200 | 206 | 416, start: number, body: Uint8Array | null, total: number | null}} Answer
 */
/** @typedef {Answer & {etag: string | null}} RangeAnswer An answer and the ETag it names (null: none). */

/**
 * IO_ERROR with `msg`, followed by what `cause` says when there is one.
 * @type {(msg: string, cause?: unknown) => import('./errors.js').RlarchiveError}
 */
export const ioError = (msg, cause) => fail('IO_ERROR', cause !== undefined ? `${msg}: ${errorText(cause)}` : msg);

const MAX_TIMER_MS = 2 ** 31 - 1; // the longest delay setTimeout takes

/**
 * The two deadlines of one request (spec §11.4): `idle` ms without progress,
 * and `idle` plus the bytes asked for at `minRate` in all. `signal` aborts the
 * fetch; `race(p)` settles with `p` or rejects when a deadline passes (even for
 * a fetch that ignores its signal); `expired` says which passed.
 */
class Deadline {
  /**
   * @param {number} idle
   * @param {number} minRate
   * @param {number} bytes
   */
  constructor(idle, minRate, bytes) {
    this.idleMs = idle;
    this.minRate = minRate;
    this.start = Date.now();
    this.bytes = 0;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.totalTimer = null;
    /** @type {string | null} */
    this.expired = null;
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    /** @type {(reason: Error) => void} */
    let reject;
    /** @type {Promise<never>} */
    this.passed = new Promise((_, r) => {
      reject = r;
    });
    this.passed.catch(() => {});
    /** @type {(why: string) => void} */
    const expire = (why) => {
      if (this.expired) return;
      this.expired = why;
      reject(new Error(why));
      this.controller.abort();
    };
    this.expire = expire;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.idleTimer = null;
    this.allow(bytes);
    this.progress();
  }
  /** The request may bring `bytes` (more than asked for: a server that sends the whole file): its total deadline grows to match. */
  /** @param {number} bytes */
  allow(bytes) {
    if (bytes <= this.bytes || this.expired) return;
    this.bytes = bytes;
    clearTimeout(this.totalTimer ?? undefined);
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
    clearTimeout(this.idleTimer ?? undefined);
    if (!this.expired)
      this.idleTimer = setTimeout(
        () => this.expire(`nothing came for ${this.idleMs} ms`),
        Math.min(this.idleMs, MAX_TIMER_MS),
      );
  }
  /**
   * @template T
   * @param {Promise<T>} promise
   * @returns {Promise<T>}
   */
  race(promise) {
    return Promise.race([promise, this.passed]);
  }
  clear() {
    clearTimeout(this.totalTimer ?? undefined);
    clearTimeout(this.idleTimer ?? undefined);
  }
}

/**
 * The Content-Length header as a number, or null (absent, or compressed, or not a number).
 * @param {Headers} headers
 * @returns {number | null}
 */
function contentLength(headers) {
  const text = headers.get('content-length');
  const enc = headers.get('content-encoding');
  if (text === null || (enc && enc.toLowerCase() !== 'identity') || !/^\d+$/.test(text.trim())) return null;
  return Number(text.trim());
}

/**
 * Stops reading a body that will not be read (the connection is given up).
 * @param {Response} res
 */
function drop(res) {
  try {
    res.body?.cancel?.().catch(() => {});
  } catch {
    // nothing left to release
  }
}

/**
 * The body of `res`: read chunk by chunk (each one restarts the idle deadline),
 * never more than `expected` bytes when that is known, and an error at once
 * when the body ends before them. `limit` (with `expected` null): null, without
 * reading further, when the body runs past `limit` bytes.
 * @param {Response} res
 * @param {number | null} expected
 * @param {Deadline} deadline
 * @param {number | null} [limit]
 * @returns {Promise<Uint8Array | null>}
 */
async function readBody(res, expected, deadline, limit = null) {
  const reader = typeof res.body?.getReader === 'function' ? res.body.getReader() : null;
  if (!reader) {
    const bytes = new Uint8Array(await deadline.race(res.arrayBuffer()));
    if (expected !== null && bytes.length !== expected)
      throw ioError(`the body has ${bytes.length} bytes, not the ${expected} announced`);
    return limit !== null && bytes.length > limit ? null : bytes;
  }
  /** @type {Uint8Array[]} */
  const chunks = [];
  let got = 0;
  let over = false;
  try {
    for (;;) {
      const { done, value } = await deadline.race(reader.read());
      if (done) break;
      if (!(value instanceof Uint8Array)) throw ioError('the response body is not bytes');
      deadline.progress();
      got += value.length;
      deadline.allow(got); // a body of unknown length: at least the minimum rate
      if (expected !== null && got > expected) throw ioError(`the body runs past the ${expected} bytes announced`);
      if (limit !== null && got > limit) {
        over = true;
        break;
      }
      chunks.push(value);
    }
  } finally {
    if (over || deadline.expired || (expected !== null && got !== expected)) reader.cancel().catch(() => {});
  }
  if (over) return null;
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

/**
 * The answer of a response: {status, start, body, total} (see getRange).
 * @param {Response} res
 * @param {number} asked
 * @param {Deadline} deadline
 * @param {boolean} whole
 * @returns {Promise<Answer>}
 */
async function answerOf(res, asked, deadline, whole) {
  if (res.status === 416) {
    const m = /^bytes \*\/(\d+)$/.exec((res.headers.get('content-range') ?? '').trim());
    drop(res);
    if (!m) throw new Error("HTTP status 416 without the file's size");
    return { status: 416, start: 0, body: new Uint8Array(0), total: Number(m[1]) };
  }
  if (res.status !== 200 && res.status !== 206) {
    drop(res);
    throw new Error(`HTTP status ${res.status}`);
  }
  const announced = contentLength(res.headers);
  if (res.status === 206) {
    const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec((res.headers.get('content-range') ?? '').trim());
    if (!m) throw ioError('the server sent no usable Content-Range');
    const [first, last, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (first > last || last >= total) throw ioError('the server sent a range that is not a range of the file');
    const n = last - first + 1;
    if (announced !== null && announced !== n)
      throw ioError(`the server announced ${announced} bytes for a range of ${n}`);
    return { status: 206, start: first, body: await readBody(res, n, deadline), total };
  }
  if (announced !== null) {
    // the whole file: read when it is no more than was asked for, or when `whole` says to
    if (announced > asked && !whole) {
      drop(res);
      return { status: 200, start: 0, body: null, total: announced };
    }
    deadline.allow(announced);
    return { status: 200, start: 0, body: await readBody(res, announced, deadline), total: announced };
  }
  const body = await readBody(res, null, deadline, whole ? null : asked);
  return { status: 200, start: 0, body, total: body === null ? null : body.length };
}

/**
 * One GET of `url` with `Range: rangeValue` (`asked`: the bytes it asks for,
 * at most), the caller's `headers`, through `fetchFn`, within the deadlines of
 * `timeout` (ms) and `minRate` (bytes per second). Resolves to {status, start,
 * body, total, etag}: `body` the bytes from `start` (null: a whole file larger than
 * asked for, not read unless `whole`), `total` the file's size when the answer
 * gives it, `etag` the version of the file it names (its ETag header) or null.
 * @param {FetchFunction} fetchFn
 * @param {string} url
 * @param {Record<string, string>} headers
 * @param {string} rangeValue
 * @param {number} asked
 * @param {{timeout: number, minRate: number, whole?: boolean}} options
 * @returns {Promise<RangeAnswer>}
 */
export async function getRange(fetchFn, url, headers, rangeValue, asked, { timeout, minRate, whole = false }) {
  const deadline = new Deadline(timeout, minRate, asked);
  try {
    const res = await deadline.race(
      fetchFn(url, {
        headers: { ...headers, Range: rangeValue, 'Accept-Encoding': 'identity' },
        signal: deadline.signal,
      }),
    );
    deadline.progress();
    return { ...(await answerOf(res, asked, deadline, whole)), etag: res.headers.get('etag') ?? null };
  } catch (e) {
    if (deadline.expired) throw fail('IO_TIMEOUT', `cannot fetch ${url}: ${deadline.expired}`);
    if (e instanceof RlarchiveError) throw e;
    throw ioError(`cannot fetch ${url}`, e);
  } finally {
    deadline.clear();
  }
}
