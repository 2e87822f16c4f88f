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
 * @property {object} observationSpace the description's observation space (a plain object with the Space's members)
 * @property {object} actionSpace the description's action space
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
  const d = policy.desc;
  const rec = policy.recurrent;
  return {
    observationSpace: policy.observationSpace,
    actionSpace: policy.actionSpace,
    action: { ...policy.action },
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
 * An error as data that postMessage keeps: name, message, and the reader's
 * stable code, detail and location when it has them.
 * @param {unknown} e
 * @returns {{name: string, message: string, code?: string, detail?: string, member?: string, pointer?: string, offset?: number}}
 */
export function errorData(e) {
  const out = { name: String(e?.name ?? 'Error'), message: String(e?.message ?? e) };
  for (const k of ['code', 'detail', 'member', 'pointer']) if (typeof e?.[k] === 'string') out[k] = e[k];
  if (typeof e?.offset === 'number') out.offset = e.offset;
  return out;
}

/**
 * The error errorData described, as an Error with the same members.
 * @param {ReturnType<typeof errorData>} data
 * @returns {Error}
 */
export function errorFromData(data) {
  const e = new Error(data?.message ?? 'unknown error');
  for (const [k, v] of Object.entries(data ?? {})) if (k !== 'message') e[k] = v;
  return e;
}
