// Planning the range requests of a remote source's read-ahead (spec §11.4);
// the twin of python/rlarchive/range_plan.py (whose plan_ranges also plans the
// partial reads of a tensor, which this reader does not make).

import { SLICE_OVERREAD_BYTES, SLICE_REQUEST_BYTES } from './limits.js';

/** @typedef {import('./range_cache.js').Range} Range */

/**
 * The requests [offset, length] that fetch the ranges `runs` ([offset, length],
 * sorted, disjoint, not touching) ahead of their reads: runs joined across the
 * gaps between them, the smallest gap first (the earlier of equal ones first),
 * never across one of more than SLICE_REQUEST_BYTES, while the gaps joined
 * total at most max(wanted, SLICE_OVERREAD_BYTES) bytes, `wanted` being the
 * bytes of `runs`. So at most one request per run, and at most that many bytes
 * read beyond them.
 * @param {readonly Range[]} runs
 * @returns {Range[]}
 */
export function readAheadPlan(runs) {
  if (runs.length === 0) return [];
  const wanted = runs.reduce((a, [, n]) => a + n, 0);
  const gaps = runs
    .slice(1)
    .map(([a], i) => /** @type {[gap: number, index: number]} */ ([a - (runs[i][0] + runs[i][1]), i]));
  gaps.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const join = new Array(gaps.length).fill(false);
  let allowance = Math.max(wanted, SLICE_OVERREAD_BYTES);
  for (const [gap, i] of gaps) {
    if (gap > SLICE_REQUEST_BYTES || gap > allowance) break;
    allowance -= gap;
    join[i] = true;
  }
  /** @type {Range[]} */
  const out = [];
  let [start, n] = runs[0];
  for (let i = 1; i < runs.length; i++) {
    if (join[i - 1]) n = runs[i][0] + runs[i][1] - start;
    else {
      out.push([start, n]);
      [start, n] = runs[i];
    }
  }
  out.push([start, n]);
  return out;
}
