// The inspector's worker: runs the portable policy (loading it, then
// Policy#predict) and computes tensor statistics off the page's main thread,
// so that a policy that is expensive but within the spec's limits leaves the
// page responsive, and the page can stop it by terminating this worker.
//
// It opens the archive the page shows with the reader's own open() and
// policy() (the same checks and limits as the page), through a source whose
// reads the page answers from its own source (the dropped File, or the URL's
// Range requests): the worker makes no request of its own.
//
// Messages from the page: {type: 'open', size} first; then
// {type: 'call', id, op, args} with op 'policy' (-> the policy's summary),
// 'predict' ({observation, state, actionMasks} -> {action, state}) or
// 'tensor' ({group, name} -> the tensor's statistics) or 'array' ({group,
// name} -> a referenced array's one-line summary); and
// {type: 'read-result', rid, bytes} / {type: 'read-error', rid, error}
// answering this worker's {type: 'read', rid, offset, length}.
// Answers: {type: 'result', id, value} or {type: 'error', id, error}.

import { open } from '../src/index.js';
import { tensorStatistics } from './stats.js';
import { summarizeArray } from './arrays.js';
import { policySummary, errorData, errorFromData } from './tasks.js';

/**
 * @typedef {import('./tasks.js').ToWorker} ToWorker
 * @typedef {import('./tasks.js').FromWorker} FromWorker
 * @typedef {import('../index.js').Archive} Archive
 * @typedef {typeof globalThis & {rlarchiveWorker: {done: Record<string, number>}}} WorkerScope
 */

/** A source whose reads the page answers. */
class PageSource {
  /** @param {number} size */
  constructor(size) {
    this.size = size;
    /** @type {Map<number, {resolve: (bytes: Uint8Array) => void, reject: (e: Error) => void}>} */
    this.pending = new Map();
    this.next = 0;
  }

  /**
   * Positional read, asked of the page.
   * @param {number} offset
   * @param {number} length
   * @returns {Promise<Uint8Array>}
   */
  read(offset, length) {
    return new Promise((resolve, reject) => {
      const rid = ++this.next;
      this.pending.set(rid, { resolve, reject });
      postMessage(/** @type {FromWorker} */ ({ type: 'read', rid, offset, length }));
    });
  }

  /**
   * The page's answer to one read.
   * @param {Extract<ToWorker, {rid: number}>} msg
   */
  answer(msg) {
    const p = this.pending.get(msg.rid);
    if (!p) return;
    this.pending.delete(msg.rid);
    if (msg.type === 'read-result') p.resolve(msg.bytes);
    else p.reject(errorFromData(msg.error));
  }

  /** The page owns the underlying source. */
  async close() {}
}

/** @type {PageSource|null} */
let source = null;
/** @type {Promise<Archive>|null} */
let archive = null;
/** @type {ReturnType<Archive['policy']>|null} */
let policy = null;
const scope = /** @type {WorkerScope} */ (/** @type {unknown} */ (self));
/** What this worker has computed, by operation (for scripts and tests). */
scope.rlarchiveWorker = { done: { policy: 0, predict: 0, tensor: 0, array: 0 } };

/** @typedef {{group: string, name: string}} TensorArgs */

const OPS = {
  async policy() {
    return policySummary(/** @type {import('../index.js').Policy} */ (await loadPolicy()));
  },
  /**
   * @param {{observation: import('../index.js').Observation, state?: import('../index.js').RecurrentState|null, actionMasks?: ArrayLike<boolean|number>|null}} args
   */
  async predict({ observation, state = null, actionMasks = null }) {
    const p = /** @type {import('../index.js').Policy} */ (await loadPolicy());
    const r = p.predict(observation, { state, actionMasks });
    return { action: r.action, state: r.state };
  },
  /** @param {TensorArgs} args */
  async tensor({ group, name }) {
    return tensorStatistics(await (await /** @type {Promise<Archive>} */ (archive)).tensor(group, name));
  },
  /** @param {TensorArgs} args */
  async array({ group, name }) {
    return summarizeArray(await (await /** @type {Promise<Archive>} */ (archive)).tensor(group, name));
  },
};

function loadPolicy() {
  policy ??= /** @type {Promise<Archive>} */ (archive).then((a) => a.policy()); // call() checks there is one first
  return policy;
}

/** @param {Extract<ToWorker, {type: 'call'}>} msg */
async function call({ id, op, args }) {
  try {
    if (!archive) throw new Error('no archive is open');
    if (!Object.hasOwn(OPS, op)) throw new Error(`unknown operation ${op}`);
    // the arguments come from the page, structured-cloned, as the operation takes them
    const ops = /** @type {Record<string, (args: object) => Promise<unknown>>} */ (/** @type {unknown} */ (OPS));
    const value = await ops[op](args ?? {});
    scope.rlarchiveWorker.done[op]++;
    postMessage(/** @type {FromWorker} */ ({ type: 'result', id, value }));
  } catch (e) {
    postMessage(/** @type {FromWorker} */ ({ type: 'error', id, error: errorData(e) }));
  }
}

self.addEventListener('message', (ev) => {
  const msg = /** @type {ToWorker|null|undefined} */ (ev.data);
  if (msg?.type === 'open') {
    source = new PageSource(msg.size);
    archive = open(source);
    archive.catch(() => {}); // reported by each call that needs it
  } else if (msg?.type === 'call') call(msg);
  else if (msg?.type === 'read-result' || msg?.type === 'read-error') source?.answer(msg);
});
