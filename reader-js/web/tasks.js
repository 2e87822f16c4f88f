// What the inspector's worker (worker.js) sends back to the page: a policy's
// summary (what the page needs to build its observation form, without the
// weights), and errors as plain data, since only an error's name and message
// survive postMessage.

import { policyGraph, hasImage } from './graph.js';

/**
 * What the page shows of a policy and needs for its observation form: both
 * spaces (their bounds loaded), the action head, the mask width, the
 * recurrent state's size and the layers by name; no weights.
 * @param {import('../index.js').Policy} policy
 * @returns {PolicySummary}
 *
 * @typedef {object} PolicySummary
 * @property {import('../index.js').Space} observationSpace the description's observation space (after postMessage, a plain object with the Space's members)
 * @property {import('../index.js').Space} actionSpace the description's action space
 * @property {{op: string, in: string, sizes?: Array<number|bigint>, squash?: string, n_quantiles?: number|bigint}} action the action head
 * @property {number|null} maskWidth action-mask entries the head takes, or null
 * @property {{layers: number|bigint, hidden_size: number|bigint}|null} recurrent
 * @property {string[]} layers each node's operation (an activation by its function)
 * @property {boolean} normalizeImages
 * @property {boolean} imageObservation whether the observation is (or holds) an image, which normalizeImages concerns
 * @property {boolean} vecNormalize
 * @property {import('./graph.js').PolicyGraph} graph the network, for the diagram
 */
export function policySummary(policy) {
  const d = /** @type {import('./graph.js').PolicyDescription} */ (policy.desc);
  const rec = policy.recurrent;
  return {
    observationSpace: policy.observationSpace,
    actionSpace: policy.actionSpace,
    action: /** @type {PolicySummary['action']} */ ({ ...policy.action }),
    maskWidth: policy.maskWidth,
    recurrent: rec ? { layers: rec.layers, hidden_size: rec.hidden_size } : null,
    layers: d.nodes.map((n) => (n.op === 'activation' ? n.fn : n.op)),
    normalizeImages: d.normalize_images !== false,
    imageObservation: hasImage(policy.observationSpace),
    vecNormalize: d.vec_normalize === true,
    graph: policyGraph(policy),
  };
}

/**
 * The messages between the page (worker-client.js) and its worker (worker.js).
 * @typedef {{type: 'open', size: number}
 *   | {type: 'call', id: number, op: string, args?: object}
 *   | {type: 'read-result', rid: number, bytes: Uint8Array}
 *   | {type: 'read-error', rid: number, error: ErrorData}} ToWorker
 * @typedef {{type: 'read', rid: number, offset: number, length: number}
 *   | {type: 'result', id: number, value: unknown}
 *   | {type: 'error', id: number, error: ErrorData}} FromWorker
 */

/**
 * An error as data that postMessage keeps: name, message, and the reader's
 * stable code, detail and location when it has them.
 * @param {unknown} e
 * @returns {ErrorData}
 *
 * @typedef {{name: string, message: string, code?: string, detail?: string, member?: string, pointer?: string, offset?: number}} ErrorData
 */
export function errorData(e) {
  const err = /** @type {Record<string, unknown>|null|undefined} */ (e); // anything thrown: its members are checked below
  /** @type {ErrorData} */
  const out = { name: String(err?.name ?? 'Error'), message: String(err?.message ?? e) };
  for (const k of /** @type {const} */ (['code', 'detail', 'member', 'pointer'])) {
    const v = err?.[k];
    if (typeof v === 'string') out[k] = v;
  }
  if (typeof err?.offset === 'number') out.offset = err.offset;
  return out;
}

/**
 * The error errorData described, as an Error with the same members.
 * @param {ReturnType<typeof errorData>} data
 * @returns {Error}
 */
export function errorFromData(data) {
  const e = new Error(data?.message ?? 'unknown error');
  const members = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (e)); // the error gets the data's members
  for (const [k, v] of Object.entries(data ?? {})) if (k !== 'message') members[k] = v;
  return e;
}
