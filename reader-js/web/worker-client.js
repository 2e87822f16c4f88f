// The page's side of the inspector's worker (worker.js): starts a module
// worker from this directory (the page's Content Security Policy allows
// workers from its own origin only), answers its reads from the page's
// source, and sends it calls. cancel() terminates the worker, failing the
// calls under way with Cancelled; the next call starts a fresh worker, which
// opens the archive again.

import { errorData, errorFromData } from './tasks.js';

const WORKER_URL = new URL('./worker.js', import.meta.url);

/** The error of a call stopped by cancel() or close(). */
export class Cancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'Cancelled';
  }
}

/**
 * Whether an error is the one of a cancelled call.
 * @param {unknown} e
 * @returns {boolean}
 */
export const isCancelled = (e) => e instanceof Cancelled;

/** One worker, restarted after cancel(), that reads the archive through the page's source. */
export class WorkerClient {
  /**
   * @param {import('../index.js').Source} source the page's source of the archive
   * @param {{name?: string, onRead?: () => void}} [options] `name` names the worker (in developer tools); `onRead` is called after each read the page answers
   */
  constructor(source, { name = 'rlarchive', onRead = () => {} } = {}) {
    this.source = source;
    this.name = name;
    this.onRead = onRead;
    /** @type {Worker|null} */
    this.worker = null;
    /** @type {Map<number, {resolve: (value: any) => void, reject: (e: unknown) => void}>} any: each operation has its own result */
    this.calls = new Map();
    this.nextId = 0;
    this.started = 0;
    this.closed = false;
  }

  /** Whether a call is under way. */
  get busy() {
    return this.calls.size > 0;
  }

  /**
   * Runs an operation of worker.js.
   * @param {'policy'|'predict'|'tensor'|'array'} op
   * @param {object} [args] structured-cloneable arguments
   * @returns {Promise<any>} its result; rejects with the worker's error (its code kept) or Cancelled
   */
  call(op, args = {}) {
    if (this.closed) return Promise.reject(new Cancelled());
    let worker;
    try {
      worker = this._worker();
    } catch (e) {
      return Promise.reject(e);
    }
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      worker.postMessage({ type: 'call', id, op, args });
    });
  }

  /** Stops the worker and whatever it computes; the next call starts a fresh one. */
  cancel() {
    this._stop(new Cancelled());
  }

  /** Stops the worker for good. */
  close() {
    this.closed = true;
    this._stop(new Cancelled());
  }

  /** @param {Error} error */
  _stop(error) {
    this.worker?.terminate();
    this.worker = null;
    const calls = [...this.calls.values()];
    this.calls.clear();
    for (const c of calls) c.reject(error);
  }

  _worker() {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_URL, { type: 'module', name: this.name });
    w.addEventListener('message', (ev) => this._message(w, ev.data));
    w.addEventListener('error', (ev) => {
      ev.preventDefault();
      if (w === this.worker) this._stop(new Error(`the worker failed: ${ev.message || 'it could not start'}`));
    });
    w.addEventListener('messageerror', () => {
      if (w === this.worker) this._stop(new Error('the worker sent a message that cannot be read'));
    });
    w.postMessage({ type: 'open', size: this.source.size });
    this.worker = w;
    this.started++;
    return w;
  }

  /**
   * @param {Worker} w
   * @param {import('./tasks.js').FromWorker} msg
   */
  async _message(w, msg) {
    if (w !== this.worker) return;
    if (msg?.type === 'read') {
      /** @type {[import('./tasks.js').ToWorker, Transferable[]]} */
      let reply;
      try {
        // a copy: the source may keep the bytes it returns (a read-ahead buffer), and the copy's buffer is moved to the worker
        const bytes = (await this.source.read(msg.offset, msg.length)).slice();
        reply = [{ type: 'read-result', rid: msg.rid, bytes }, [bytes.buffer]];
      } catch (e) {
        reply = [{ type: 'read-error', rid: msg.rid, error: errorData(e) }, []];
      }
      if (w === this.worker) w.postMessage(...reply);
      this.onRead();
      return;
    }
    const c = this.calls.get(msg?.id);
    if (!c) return;
    this.calls.delete(msg.id);
    if (msg.type === 'result') c.resolve(msg.value);
    else c.reject(errorFromData(msg.error));
  }
}
