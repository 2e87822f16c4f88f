// The portable policy's network as steps with shapes (DOM-free: the
// inspector's worker computes it, views/diagram.js draws it): the
// observation inputs (RLA_policy §4) and their preprocessing, every node of
// the description with its output shape (the shape of one observation,
// without the batch dimension), and the action head.

import { observations } from '../src/index.js';

/**
 * What this module reads of the RLA_policy description, decoded (integers may be bigints): a
 * narrow view of `Policy#desc`, which the public declarations type as `object`.
 * @typedef {{shape: Array<number|bigint>}} Shaped an ndarray parameter (its shape is all that is read)
 * @typedef {{op: 'linear', in: string[], out: string, weight: Shaped, bias: Shaped|null}} LinearNode
 * @typedef {{op: 'conv2d', in: string[], out: string, weight: Shaped, stride: Array<number|bigint>, padding: Array<number|bigint>}} Conv2dNode
 * @typedef {{op: 'activation', in: string[], out: string, fn: string}} ActivationNode
 * @typedef {{op: 'lstm', in: string[], out: string[], layers: Array<{weight_hh: Shaped}>}} LstmNode
 * @typedef {{op: 'flatten'|'concat'|'prelu'|'layer_norm'|'batch_norm', in: string[], out: string}} OtherNode
 * @typedef {LinearNode|Conv2dNode|ActivationNode|LstmNode|OtherNode} DescriptionNode
 * @typedef {object} PolicyDescription
 * @property {DescriptionNode[]} nodes
 * @property {boolean} [normalize_images]
 * @property {boolean} [vec_normalize]
 * @property {{[name: string]: unknown, layers: number|bigint, hidden_size: number|bigint}} [recurrent]
 */

/** @typedef {import('../index.js').Space} Space */

/** @param {unknown} v */
const num = (v) => Number(v);
/** @type {Record<string, string>} */
const KINDS = { box: 'Box', discrete: 'Discrete', multi_discrete: 'MultiDiscrete', multi_binary: 'MultiBinary' };
/** @param {number[]} shape */
const prod = (shape) => shape.reduce((a, b) => a * b, 1);

/**
 * One input of the network: its name, the space it comes from, its preprocessing and shape.
 * @param {string} name
 * @param {Space} space
 * @param {boolean} normalizeImages
 * @param {boolean} vecNormalize
 * @returns {{name: string, space: string, preprocessing: string, shape: number[]}}
 */
function input(name, space, normalizeImages, vecNormalize) {
  const steps = [];
  if (vecNormalize) steps.push('VecNormalize');
  /** @type {number[]} */
  let shape;
  switch (space.kind) {
    case 'box':
      shape = /** @type {number[]} */ (space.shape).map(num);
      steps.push(normalizeImages && observations.isImage(space) ? 'float32, ÷ 255 (image)' : 'float32');
      break;
    case 'discrete':
      shape = [num(space.n)];
      steps.push(`one-hot of ${num(space.n)}`);
      break;
    case 'multi_discrete': {
      const nvec = Array.from(/** @type {ArrayLike<number|bigint>} */ (space.nvec?.data), num);
      shape = [nvec.reduce((a, b) => a + b, 0)];
      steps.push(`one-hot of [${nvec.join(', ')}], concatenated`);
      break;
    }
    case 'multi_binary':
      shape = observations.observationShape(space);
      steps.push('float32');
      break;
    default:
      shape = [];
  }
  return { name, space: KINDS[space.kind] ?? space.kind, preprocessing: steps.join(', then '), shape };
}

/**
 * The output shape of one node from its inputs' shapes (RLA_policy §5.11), or null when unknown.
 * @param {DescriptionNode} node
 * @param {Array<number[]|null>} ins
 * @returns {number[]|null}
 */
function outputShape(node, ins) {
  if (!ins.every((s) => s !== null)) return null;
  const [x] = ins;
  switch (node.op) {
    case 'linear':
      return [...x.slice(0, -1), num(node.weight.shape[0])];
    case 'conv2d': {
      const [o, , kh, kw] = node.weight.shape.map(num);
      const [sh, sw] = node.stride.map(num);
      const [ph, pw] = node.padding.map(num);
      return [o, Math.floor((x[1] + 2 * ph - kh) / sh) + 1, Math.floor((x[2] + 2 * pw - kw) / sw) + 1];
    }
    case 'flatten':
      return [prod(x)];
    case 'concat':
      return [ins.reduce((a, s) => a + prod(s), 0)];
    case 'lstm':
      return [num(node.layers[node.layers.length - 1].weight_hh.shape[1])];
    default:
      return x; // activation, prelu, layer_norm, batch_norm keep the shape
  }
}

/**
 * A node's parameters in a few words: `6 → 8`, `32 3×3 stride 2`, `silu`.
 * @param {DescriptionNode} node
 * @param {Array<number[]|null>} ins
 * @returns {string}
 */
function nodeDetail(node, ins) {
  switch (node.op) {
    case 'linear': {
      const [o, i] = node.weight.shape.map(num);
      return `${i} → ${o}${node.bias ? '' : ', no bias'}`;
    }
    case 'conv2d': {
      const [o, , kh, kw] = node.weight.shape.map(num);
      return `${o} filters ${kh}×${kw}, stride ${node.stride.map(num).join('×')}, padding ${node.padding.map(num).join('×')}`;
    }
    case 'activation':
      return node.fn;
    case 'lstm':
      return `${node.layers.length} layer${node.layers.length === 1 ? '' : 's'} of ${num(node.layers[0].weight_hh.shape[1])}`;
    case 'concat':
      return `${ins.length} inputs`;
    default:
      return '';
  }
}

/**
 * The head in a few words.
 * @param {import('../index.js').Policy['action']} action
 * @returns {string}
 */
function headDetail(action) {
  if (action.op === 'box') return `squash ${action.squash}`;
  if (action.op === 'multi_argmax') return `sizes [${/** @type {unknown[]} */ (action.sizes).map(num).join(', ')}]`;
  if (action.op === 'quantile_argmax') return `${num(action.n_quantiles)} quantiles`;
  return '';
}

/**
 * The network of a policy as the diagram draws it.
 * @param {import('../index.js').Policy} policy
 * @returns {PolicyGraph}
 *
 * @typedef {object} PolicyGraph
 * @property {Array<{name: string, space: string, preprocessing: string, shape: number[]}>} inputs
 * @property {Array<{op: string, detail: string, in: string[], out: string, shape: number[]|null}>} nodes each node's first output and its shape
 * @property {{op: string, in: string, detail: string}} head
 */
export function policyGraph(policy) {
  const d = /** @type {PolicyDescription} */ (policy.desc);
  const obs = policy.observationSpace;
  const normalize = d.normalize_images !== false;
  const inputs =
    obs.kind === 'dict'
      ? /** @type {Array<[string, Space]>} */ (obs.spaces).map(([key, sub]) =>
          input(`obs.${key}`, sub, normalize, d.vec_normalize === true),
        )
      : [input('obs', obs, normalize, d.vec_normalize === true)];
  /** @type {Map<unknown, number[]|null>} */
  const shapes = new Map(inputs.map((i) => [i.name, i.shape]));
  const rec = d.recurrent;
  if (rec) for (const k of ['hidden_in', 'cell_in']) shapes.set(rec[k], [num(rec.layers), num(rec.hidden_size)]);
  const nodes = d.nodes.map((node) => {
    const ins = node.in.map((n) => shapes.get(n) ?? null);
    const shape = outputShape(node, ins);
    const outs = Array.isArray(node.out) ? node.out : [node.out];
    shapes.set(outs[0], shape);
    return { op: node.op, detail: nodeDetail(node, ins), in: [...node.in], out: outs[0], shape };
  });
  return {
    inputs,
    nodes,
    head: { op: policy.action.op, in: /** @type {string} */ (policy.action.in), detail: headDetail(policy.action) },
  };
}

/**
 * Whether an observation space is, or holds (a Dict's key), an image (RLA_policy §4).
 * @param {Space} space
 * @returns {boolean}
 */
export function hasImage(space) {
  if (space.kind === 'dict')
    return /** @type {Array<[string, Space]>} */ (space.spaces).some(([, sub]) => hasImage(sub));
  return observations.isImage(space);
}
