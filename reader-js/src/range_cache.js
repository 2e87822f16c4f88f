// The bytes a remote source has fetched ahead of its reads, by position
// (spec §11.4); the twin of python/rlarchive/range_cache.py.
//
// A RangeCache holds disjoint segments of a file, sorted, none touching
// another (a segment added next to or over others is merged with them). It
// holds only what its source fetched ahead: the end of the file, fetched when
// the source is opened, and the ranges a reader announced (`prefetch`),
// fetched by the plan of range_plan.js. Other reads are not kept, so what it
// holds is bounded by those plans.

/** @typedef {[offset: number, length: number]} Range A range of a file's bytes. */

/**
 * The index of the last of `starts` (sorted) that is at most `x`, or -1.
 * @param {number[]} starts
 * @param {number} x
 * @returns {number}
 */
function lastAtMost(starts, x) {
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Segments of a file of `size` bytes. `held`: the bytes held. */
export class RangeCache {
  /** @param {number} size */
  constructor(size) {
    this.size = size;
    this.held = 0;
    /** @type {number[]} */
    this.starts = [];
    /** @type {Uint8Array[]} */
    this.chunks = [];
  }

  /**
   * The `length` bytes at `offset` (a view) when one segment holds them all, else null.
   * @param {number} offset
   * @param {number} length
   * @returns {Uint8Array | null}
   */
  get(offset, length) {
    const i = lastAtMost(this.starts, offset);
    if (i < 0) return null;
    const at = offset - this.starts[i];
    const chunk = this.chunks[i];
    return at + length <= chunk.length ? chunk.subarray(at, at + length) : null;
  }

  /**
   * Holds `data` at `offset`, merged with the segments it overlaps or touches.
   * @param {number} offset
   * @param {Uint8Array} data
   */
  add(offset, data) {
    if (data.length === 0) return;
    const end = offset + data.length;
    const b = lastAtMost(this.starts, end) + 1; // segments from b on start after the new one ends
    let a = b;
    while (a > 0 && this.starts[a - 1] + this.chunks[a - 1].length >= offset) a--;
    if (a < b) {
      const start = Math.min(offset, this.starts[a]);
      const stop = Math.max(end, this.starts[b - 1] + this.chunks[b - 1].length);
      const merged = new Uint8Array(stop - start);
      for (let i = a; i < b; i++) {
        merged.set(this.chunks[i], this.starts[i] - start);
        this.held -= this.chunks[i].length;
      }
      merged.set(data, offset - start);
      offset = start;
      data = merged;
    }
    this.starts.splice(a, b - a, offset);
    this.chunks.splice(a, b - a, data);
    this.held += data.length;
  }

  /**
   * The parts [offset, length] of `ranges` (each clipped to the file) that no
   * segment holds: sorted, disjoint and not touching.
   * @param {readonly Range[]} ranges
   * @returns {Range[]}
   */
  missing(ranges) {
    const wanted = ranges
      .filter(([a, n]) => n > 0 && a < this.size)
      .map(([a, n]) => /** @type {[number, number]} */ ([Math.max(0, a), Math.min(this.size, a + n)]))
      .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    /** @type {[start: number, end: number][]} */
    const out = [];
    for (let [a, b] of wanted) {
      let i = Math.max(0, lastAtMost(this.starts, a));
      while (a < b && i < this.starts.length && this.starts[i] < b) {
        const s = this.starts[i];
        const e = s + this.chunks[i].length;
        if (e > a) {
          if (s > a) out.push([a, s]);
          a = Math.max(a, e);
        }
        i++;
      }
      if (a < b) out.push([a, b]);
    }
    out.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    /** @type {[start: number, end: number][]} */
    const joined = [];
    for (const [a, b] of out) {
      const last = joined[joined.length - 1];
      if (last && a <= last[1]) last[1] = Math.max(last[1], b);
      else joined.push([a, b]);
    }
    return joined.map(([a, b]) => [a, b - a]);
  }
}
