// What opening an archive reads, announced to a remote source before the
// checks read it (spec §11.4); the twin of python/rlarchive/read_plan.py.
//
// Steps 1 to 8 of §11.1 read small pieces all over the file: the
// identification bytes, the end records, the central directory, every
// member's local header, manifest.json and data.json, and every tensor
// member's safetensors header. Over HTTP, each read is a request. A remote
// source holds the end of the file from the moment it is opened (TAIL_BYTES of
// sources.js); prefetchOpening() reads the end records and the central
// directory from the bytes it holds (never making a request itself) and
// announces what the checks will read, in three rounds (`source.prefetch`,
// each fetched by readAheadPlan of range_plan.js):
//
// 1. the part of the central directory the source does not hold yet;
// 2. the identification bytes and, for every member the directory names, its
//    local header (its extent from the layout of §2.1: the member's data ends
//    where the next member begins), then manifest.json's and data.json's data
//    whole, and the first OPEN_READAHEAD_BYTES of every `.safetensors`
//    member's data (its safetensors header, in most archives);
// 3. the rest of every safetensors header longer than that, its length read
//    from the bytes of round 2.
//
// The checks then find what they read already held; where the file is not as
// its directory says, a read is one request of exactly its bytes, as without a
// plan. The plan never decides anything about the file: every rule is the
// checks'. Rounds 2 and 3 together ask for at most OPEN_READAHEAD_TOTAL_BYTES,
// whatever the directory says: their ranges are taken in order, the local
// headers first, each while it fits in what is left, and the others are left
// to the checks' own reads. Its other bounds are those the Python module states.

import {
  MAX_JSON_BYTES,
  MAX_SAFETENSORS_HEADER_BYTES,
  OPEN_READAHEAD_BYTES,
  OPEN_READAHEAD_TOTAL_BYTES,
} from './limits.js';
import { IDENTIFICATION_BYTES, U16_MAX, u64 } from './zipprofile.js';
import { checkEndRecords, findEndRecord, readCentralRecord, readLocalHeader, readZip64EndRecords } from './zipread.js';

/** @typedef {import('./sources.js').Source} Source */
/** @typedef {import('./range_cache.js').Range} Range */
/** @typedef {import('./zipread.js').Member} Member */
/** @typedef {import('./zipread.js').EndRecords} EndRecords */

/** The members whose data the checks read whole when opening (§11.1 steps 6 and 7). */
const JSON_MEMBERS = ['manifest.json', 'data.json'];
/** The members whose data begins with a safetensors header (§10.2). */
const SAFETENSORS_SUFFIX = '.safetensors';
const LOCAL_HEADER_SIZE = 30;

/**
 * The bytes `src` holds, as a source that never requests: a read of bytes it does not hold fails.
 * @param {{size: number, peek: (offset: number, length: number) => Uint8Array | null}} src
 * @returns {Source}
 */
function held(src) {
  return {
    size: src.size,
    /**
     * @param {number} offset
     * @param {number} length
     */
    async read(offset, length) {
      const bytes = src.peek(offset, length);
      if (bytes === null) throw new Error('not held');
      return bytes;
    },
  };
}

/**
 * Resolves to `f()`, or to `fallback` when it fails (the checks will say why).
 * @template T, F
 * @param {() => T | Promise<T>} f
 * @param {F} fallback
 * @returns {Promise<T | F>}
 */
async function attempt(f, fallback) {
  try {
    return await f();
  } catch {
    return fallback;
  }
}

/**
 * Announces to `src` what §11.1 steps 1 to 8 read (see above), rounds 2 and 3
 * within `budget` bytes; nothing when `src` cannot hold bytes ahead (no
 * `peek`: a local source) or its end records are broken.
 * @param {Source | null | undefined} src
 * @returns {Promise<void>}
 */
export async function prefetchOpening(src, budget = OPEN_READAHEAD_TOTAL_BYTES) {
  if (typeof src?.peek !== 'function' || typeof src.prefetch !== 'function') return;
  const h = held(/** @type {Parameters<typeof held>[0]} */ (src)); // it has `peek` (above)
  const end = await attempt(async () => {
    const found = await findEndRecord(h);
    return checkEndRecords(found, readZip64EndRecords(found));
  }, null);
  if (end === null) return;
  await src.prefetch([[end.cdOffset, end.cdSize]]);
  const members = await directory(h, end);
  const { headers, data } = heads(members, end.cdOffset);
  const round2 = within([[0, IDENTIFICATION_BYTES], ...headers, ...data], budget);
  await src.prefetch(round2.ranges);
  await src.prefetch(within(await headerRests(h, members), round2.left).ranges);
}

/**
 * The ranges, in order, each while it fits in what is left of `budget` bytes, and what is left.
 * @param {readonly Range[]} ranges
 * @param {number} budget
 * @returns {{ranges: Range[], left: number}}
 */
function within(ranges, budget) {
  /** @type {Range[]} */
  const out = [];
  let left = budget;
  for (const [offset, length] of ranges) {
    if (length <= left) {
      out.push([offset, length]);
      left -= length;
    }
  }
  return { ranges: out, left };
}

/**
 * The members of the central directory's records, up to the first broken one.
 * @param {Source} h
 * @param {Readonly<EndRecords>} end
 * @returns {Promise<Readonly<Member>[]>}
 */
async function directory(h, end) {
  /** @type {Readonly<Member>[]} */
  const members = [];
  const cd = await attempt(() => h.read(end.cdOffset, end.cdSize), null);
  if (cd === null) return members;
  await attempt(() => {
    let p = 0;
    for (let i = 0; i < end.count; i++) {
      const r = readCentralRecord(cd, p, end.cdOffset, i);
      members.push(r.member);
      p = r.next;
    }
  }, undefined);
  return members;
}

/**
 * The bytes of `m`'s data that opening reads (from its start).
 * @param {Readonly<Member>} m
 * @returns {number}
 */
function ahead(m) {
  if (JSON_MEMBERS.includes(m.name)) return m.size <= MAX_JSON_BYTES ? m.size : 0;
  return m.name.endsWith(SAFETENSORS_SUFFIX) ? Math.min(m.size, OPEN_READAHEAD_BYTES) : 0;
}

/**
 * Round 2: each member's local header, then the bytes of its data that
 * opening reads (the ranges of both lists touch, so a source fetches a
 * member's two in one request). A member's data starts where its size before
 * the next member (or the directory) says, in the layout of §2.1; otherwise,
 * the header's fixed part and name only (the checks read the rest).
 * @param {readonly Readonly<Member>[]} members
 * @param {number} cdOffset
 * @returns {{headers: Range[], data: Range[]}}
 */
function heads(members, cdOffset) {
  const ordered = [...members].sort((a, b) => a.headerOffset - b.headerOffset);
  /** @type {Range[]} */
  const headers = [];
  /** @type {Range[]} */
  const data = [];
  ordered.forEach((m, i) => {
    const next = i + 1 < ordered.length ? ordered[i + 1].headerOffset : cdOffset;
    const fixed = m.headerOffset + LOCAL_HEADER_SIZE + m.nameBytes.length;
    let start = next - m.size;
    if (!(fixed <= start && start <= fixed + U16_MAX)) start = fixed;
    headers.push([m.headerOffset, start - m.headerOffset]);
    if (ahead(m) > 0) data.push([start, ahead(m)]);
  });
  return { headers, data };
}

/**
 * Round 3: the rest of each safetensors header longer than round 2 read,
 * within its member and MAX_SAFETENSORS_HEADER_BYTES; its length read from the
 * held bytes (none for a header not held).
 * @param {Source} h
 * @param {readonly Readonly<Member>[]} members
 * @returns {Promise<Range[]>}
 */
async function headerRests(h, members) {
  /** @type {Range[]} */
  const out = [];
  for (const m of members) {
    if (!m.name.endsWith(SAFETENSORS_SUFFIX) || m.size <= OPEN_READAHEAD_BYTES) continue;
    const n = await attempt(async () => {
      const data = await readLocalHeader(h, m);
      return [data, u64(await h.read(data, 8), 0)];
    }, null);
    if (n === null) continue;
    const [data, length] = n;
    if (OPEN_READAHEAD_BYTES < 8 + length && 8 + length <= Math.min(m.size, 8 + MAX_SAFETENSORS_HEADER_BYTES))
      out.push([data + OPEN_READAHEAD_BYTES, 8 + length - OPEN_READAHEAD_BYTES]);
  }
  return out;
}
