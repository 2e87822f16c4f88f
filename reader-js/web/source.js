// The byte source the page reads an archive through: the reader's own
// BlobSource (a dropped or picked file) or HttpSource (Range requests for a
// URL), wrapped so that opening, validating and acting share one source and
// the page can show how many bytes were read.

import { openSource } from '../src/index.js';

/** A source shared by open() and validate(): counts reads; close() is left to the page. */
export class SharedSource {
  /**
   * @param {import('../index.js').Source & {bytesFetched?: number}} inner
   */
  constructor(inner) {
    this.inner = inner;
    this.size = inner.size;
    this.bytesRead = 0;
    this.reads = 0;
    /**
     * The distinct ranges read so far, [start, end) sorted and disjoint.
     * @type {Array<[number, number]>}
     */
    this.ranges = [];
  }
  /**
   * Positional read, delegated.
   * @param {number} offset
   * @param {number} length
   * @returns {Promise<Uint8Array>}
   */
  async read(offset, length) {
    const bytes = await this.inner.read(offset, length);
    this.bytesRead += length;
    this.reads++;
    if (length > 0) this.ranges = addRange(this.ranges, offset, Math.min(offset + length, this.size));
    return bytes;
  }
  /**
   * The bytes the underlying source holds without a request (a URL's fetched ranges), else null.
   * @param {number} offset
   * @param {number} length
   * @returns {Uint8Array|null}
   */
  peek(offset, length) {
    return this.inner.peek?.(offset, length) ?? null;
  }
  /**
   * Tells the underlying source which ranges are about to be read (a URL's read-ahead, src/read_plan.js).
   * @param {Array<[number, number]>} ranges
   */
  async prefetch(ranges) {
    await this.inner.prefetch?.(ranges);
  }
  /**
   * Bytes of the file read so far, each byte once: the page validates, opens
   * the archive again in its workers and reads some members twice, so the sum
   * of the reads (`bytesRead`) may exceed the file's size; this never does.
   */
  get transferred() {
    return this.ranges.reduce((a, [s, e]) => a + (e - s), 0);
  }
  /** Kept open while the page shows the archive; see release(). */
  async close() {}
  /** Releases the underlying source. */
  async release() {
    await this.inner.close?.();
  }
}

/**
 * `ranges` with [start, end) added: sorted, disjoint, touching ranges merged.
 * @param {Array<[number, number]>} ranges sorted and disjoint
 * @param {number} start
 * @param {number} end
 * @returns {Array<[number, number]>}
 */
export function addRange(ranges, start, end) {
  /** @type {Array<[number, number]>} */
  const out = [];
  let s = start,
    e = end;
  for (const [a, b] of ranges) {
    if (b < s || a > e) out.push([a, b]);
    else {
      s = Math.min(s, a);
      e = Math.max(e, b);
    }
  }
  out.push([s, e]);
  return out.sort((x, y) => x[0] - y[0]);
}

/**
 * Resolves a `?url=` parameter against the page's address.
 * @param {string} value the parameter as given
 * @param {string} [base] the page's address
 * @returns {string} an absolute URL
 */
export function resolveUrl(value, base = globalThis.location?.href) {
  return new URL(value, base).href;
}

/**
 * Opens what the user chose: a File/Blob (sliced reads) or an http(s) URL (Range requests).
 * Every request for a URL has the reader's deadlines (spec §11.4: by default no
 * byte for 30 s, or less than 64 KiB/s, ends it), for opening and for every
 * later read, so a stalled server gives an error the page shows.
 * Rejects with the reader's RlarchiveError (IO_ERROR, IO_TIMEOUT) when the source cannot be read.
 * @param {Blob|string} input
 * @param {{timeout?: number, minRate?: number}} [options] the deadlines of URL requests (milliseconds, bytes per second)
 * @returns {Promise<SharedSource>}
 */
export async function openShared(input, options = {}) {
  return new SharedSource(await openSource(input, options));
}
