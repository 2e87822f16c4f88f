// The structure of a portable policy description (extension RLA_policy
// §3-§6), checked before any evaluation; the twin of
// python/rlarchive/policy_description.py.
//
// check() walks the parsed, value-checked JSON (json.js tree: Map for
// objects, bigint for integer literals) of extensions/RLA_policy/policy.json
// once, in document order, inferring the shape of every named value from the
// observation space through the nodes, so that a description whose layers do
// not fit together is refused here (EXTENSION_INVALID, with the JSON Pointer
// of the offending value) and the evaluator only sees descriptions that compute.

import { fail, membersPointer, pointerJoin } from './errors.js';
import { decodeBase64 } from './base64.js';
import { viewElements } from './dtypes.js';
import { isMap, isTagged } from './values.js';

export const EXTENSION = 'RLA_policy';
export const MEMBER = 'extensions/RLA_policy/policy.json';
export const KEY = 'policy';
export const GROUP = 'RLA_policy';
/** Elements a value of the description may have per observation (RLA_policy §5). */
export const MAX_POLICY_VALUE_ELEMENTS = 2 ** 24;
/** Multiply-adds (and element operations) one observation may cost (RLA_policy §5): bounds the time to act. */
export const MAX_POLICY_OPERATIONS = 2 ** 32;

/** Activation functions: parameter -> 'float' or the strings allowed. */
export const ACTIVATION_PARAMETERS = Object.freeze({
  identity: {},
  relu: {},
  tanh: {},
  sigmoid: {},
  elu: { alpha: 'float' },
  leaky_relu: { negative_slope: 'float' },
  silu: {},
  gelu: { approximate: ['none', 'tanh'] },
  softplus: { beta: 'float', threshold: 'float' },
  hardtanh: { min_val: 'float', max_val: 'float' },
  selu: {},
  celu: { alpha: 'float' },
  mish: {},
  hardswish: {},
  hardsigmoid: {},
  softsign: {},
});

/** Operations: [required parameters, optional parameters] besides op, in and out. */
export const OPS = Object.freeze({
  linear: [['weight', 'bias'], []],
  conv2d: [['weight', 'bias', 'stride', 'padding'], []],
  activation: [['fn'], ['alpha', 'negative_slope', 'approximate', 'beta', 'threshold', 'min_val', 'max_val']],
  flatten: [[], []],
  concat: [[], []],
  layer_norm: [['weight', 'bias', 'eps'], []],
  batch_norm: [['running_mean', 'running_var', 'weight', 'bias', 'eps'], []],
  lstm: [['layers'], []],
});

/** Heads: [required parameters besides op and in, the action space kind]. */
export const HEADS = Object.freeze({
  argmax: [[], 'discrete'],
  multi_argmax: [['sizes'], ['multi_discrete', 'multi_binary']],
  bernoulli: [[], 'multi_binary'],
  box: [['squash'], 'box'],
  quantile_argmax: [['n_quantiles'], 'discrete'],
});

const TOP_REQUIRED = ['observation_space', 'action_space', 'normalize_images', 'nodes', 'action'];
const TOP_OPTIONAL = ['vec_normalize', 'recurrent'];
const RECURRENT = ['hidden_in', 'cell_in', 'hidden_out', 'cell_out', 'layers', 'hidden_size'];
const LAYER = ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'];
const OBS_KINDS = ['box', 'discrete', 'multi_discrete', 'multi_binary'];
const SQUASH = ['clip', 'tanh', 'rescale'];
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const bad = (msg, pointer) => fail('EXTENSION_INVALID', msg, { member: MEMBER, pointer });
const isInt = (v) => typeof v === 'bigint';
const isFloat = (v) => typeof v === 'bigint' || typeof v === 'number' || isTagged(v, 'float');
const isPlainMap = (v) => isMap(v) && !v.has('$type');
const isName = (v) => typeof v === 'string' && v !== '';
const num = (v) => Number(v);
const prod = (shape) => shape.reduce((a, b) => a * b, 1);
const show = (shape) => `[${shape.join(', ')}]`;
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const isState = (shape) => !Array.isArray(shape);

/** The integers of an inline ndarray (multi_discrete nvec is always inline, §8). */
function inlineInts(nd) {
  return Array.from(viewElements(nd.get('dtype'), decodeBase64(nd.get('base64'))), Number);
}

/** Box dtypes the portable policy takes observations of, and acts in (float actions only). */
export const OBSERVATION_DTYPES = Object.freeze(['BOOL', 'U8', 'I8', 'U16', 'I16', 'U32', 'I32', 'U64', 'I64', 'F32', 'F64']);
export const ACTION_DTYPES = Object.freeze(['F32', 'F64']);

function spaceShape(sp, ptr) {
  const kind = sp.get('kind');
  if (kind === 'box') {
    if (!OBSERVATION_DTYPES.includes(sp.get('dtype'))) throw bad(`the portable policy takes no Box observations of dtype ${sp.get('dtype')}`, ptr);
    return sp.get('shape').map(num);
  }
  if (kind === 'discrete') {
    if (!isInt(sp.get('n'))) throw bad('a Discrete observation space of more than 2^53 values', ptr);
    return [num(sp.get('n'))];
  }
  if (kind === 'multi_discrete') return [inlineInts(sp.get('nvec')).reduce((a, b) => a + b, 0)];
  if (kind === 'multi_binary') {
    const n = sp.get('n');
    return isInt(n) ? [num(n)] : n.map(num);
  }
  throw bad(`the portable policy takes no ${kind} observations`, ptr);
}

function bounded(shape, ptr) {
  if (!isState(shape) && prod(shape) > MAX_POLICY_VALUE_ELEMENTS) {
    throw fail('LIMIT_EXCEEDED', `a value of shape ${show(shape)} has more than MAX_POLICY_VALUE_ELEMENTS elements`, { member: MEMBER, pointer: ptr });
  }
}

/** What one observation costs a node (RLA_policy §5): multiply-adds for the layers, elements for the rest. */
function operations(op, node, out) {
  const shape = (nd) => nd.get('shape').map(num);
  if (op === 'linear') return prod(out) * shape(node.get('weight'))[1];
  if (op === 'conv2d') return prod(out) * prod(shape(node.get('weight')).slice(1));
  if (op === 'lstm') return node.get('layers').reduce((a, l) => a + prod(shape(l.get('weight_ih'))) + prod(shape(l.get('weight_hh'))), 0);
  return prod(out);
}

/** Name -> shape of the preprocessed observation(s). */
function inputs(space, ptr) {
  if (!isTagged(space, 'space')) throw bad('observation_space must be a space', ptr);
  const out = new Map();
  if (space.get('kind') === 'dict') {
    space.get('spaces').forEach(([key, sub], i) => {
      const p = `${ptr}/spaces/${i}/1`;
      if (!OBS_KINDS.includes(sub.get('kind'))) throw bad(`the portable policy takes no ${sub.get('kind')} observations (key ${JSON.stringify(key)})`, p);
      out.set(`obs.${key}`, spaceShape(sub, p));
      bounded(out.get(`obs.${key}`), p);
    });
    return out;
  }
  const shape = spaceShape(space, ptr);
  bounded(shape, ptr);
  out.set('obs', shape);
  return out;
}

/** Walks the nodes, inferring the shape (without batch) of every named value. */
class Shapes {
  constructor(known, recurrent) {
    this.known = known; // name -> shape array, or {state: [layers, hidden]}
    this.recurrent = recurrent;
    this.lstmSeen = false;
    this.cost = 0; // operations per observation so far
  }

  weight(node, key, ptr, ndim, optional = false) {
    const v = node.get(key);
    if (v === null && optional) return null;
    if (!isTagged(v, 'ndarray')) throw bad(`${key} must be an ndarray${optional ? ' or null' : ''}`, pointerJoin(ptr, key));
    if (v.get('dtype') !== 'F32') throw bad(`${key} must have dtype F32, not ${v.get('dtype')}`, pointerJoin(ptr, key));
    if (v.get('shape').length !== ndim) throw bad(`${key} must have ${ndim} dimensions, not ${v.get('shape').length}`, pointerJoin(ptr, key));
    return v.get('shape').map(num);
  }

  vector(node, key, ptr, n, optional = false) {
    const shape = this.weight(node, key, ptr, 1, optional);
    if (shape === null) return n;
    if (n !== null && shape[0] !== n) throw bad(`${key} has ${shape[0]} elements where ${n} are needed`, pointerJoin(ptr, key));
    return shape[0];
  }

  shapeOf(name, ptr) {
    const shape = this.known.get(name);
    if (isState(shape)) throw bad(`${JSON.stringify(name)} is a recurrent state, which only an lstm node reads`, ptr);
    return shape;
  }

  node(node, ptr) {
    if (!isPlainMap(node)) throw bad('a node must be a map', ptr);
    const op = node.get('op');
    if (typeof op !== 'string' || !Object.hasOwn(OPS, op)) throw bad(`unknown operation ${JSON.stringify(op)}`, `${ptr}/op`);
    const [required, optional] = OPS[op];
    const keys = [...node.keys()].filter((k) => !['op', 'in', 'out'].includes(k));
    for (const k of [...required].sort()) if (!node.has(k)) throw bad(`${op} lacks the parameter ${JSON.stringify(k)}`, ptr);
    for (const k of keys.sort()) if (!required.includes(k) && !optional.includes(k)) throw bad(`${op} has no parameter ${JSON.stringify(k)}`, pointerJoin(ptr, k));
    if (op === 'lstm' && this.recurrent === null) throw bad("an lstm node needs 'recurrent'", ptr);
    const ins = node.get('in');
    if (!(Array.isArray(ins) && ins.length > 0 && ins.every(isName))) throw bad("'in' must be a non-empty list of names", `${ptr}/in`);
    ins.forEach((n, i) => {
      if (!this.known.has(n)) throw bad(`${JSON.stringify(n)} is not computed before this node`, `${ptr}/in/${i}`);
    });
    const wantIns = op === 'lstm' ? 3 : op === 'concat' ? ins.length : 1;
    if (ins.length !== wantIns) throw bad(`${op} takes ${wantIns} input(s), not ${ins.length}`, `${ptr}/in`);
    const outs = op === 'lstm' ? node.get('out') : [node.get('out')];
    const wantOuts = op === 'lstm' ? 3 : 1;
    if (!(Array.isArray(outs) && outs.length === wantOuts && outs.every(isName))) {
      throw bad(op === 'lstm' ? "'out' of lstm must be a list of 3 names" : "'out' must be a name", `${ptr}/out`);
    }
    const xs = ins.map((n) => (op === 'lstm' ? this.known.get(n) : this.shapeOf(n, `${ptr}/in`)));
    const shapes = this[op](node, ptr, xs);
    outs.forEach((name, i) => {
      const where = `${ptr}/out${op === 'lstm' ? `/${i}` : ''}`;
      if (this.known.has(name) || outs.indexOf(name) !== i) throw bad(`${JSON.stringify(name)} is computed twice`, where);
      bounded(shapes[i], where);
      this.known.set(name, shapes[i]);
    });
    this.cost += operations(op, node, shapes[0]);
    if (this.cost > MAX_POLICY_OPERATIONS) throw fail('LIMIT_EXCEEDED', 'the nodes so far cost more than MAX_POLICY_OPERATIONS per observation', { member: MEMBER, pointer: ptr });
  }

  linear(node, ptr, [x]) {
    const w = this.weight(node, 'weight', ptr, 2);
    if (x.length === 0 || x[x.length - 1] !== w[1]) throw bad(`linear of width ${w[1]} applied to a value of shape ${show(x)}`, `${ptr}/weight`);
    this.vector(node, 'bias', ptr, w[0], true);
    return [[...x.slice(0, -1), w[0]]];
  }

  conv2d(node, ptr, [x]) {
    const w = this.weight(node, 'weight', ptr, 4);
    const pairs = {};
    for (const [key, least] of [['stride', 1n], ['padding', 0n]]) {
      const v = node.get(key);
      if (!(Array.isArray(v) && v.length === 2 && v.every((n) => isInt(n) && n >= least && n <= MAX_SAFE))) throw bad(`${key} must be two integers >= ${least}`, `${ptr}/${key}`);
      pairs[key] = v.map(num);
    }
    if (x.length !== 3 || x[0] !== w[1]) throw bad(`conv2d over ${w[1]} channels applied to a value of shape ${show(x)} (channels, height, width)`, `${ptr}/weight`);
    this.vector(node, 'bias', ptr, w[0], true);
    const [[sh, sw], [ph, pw]] = [pairs.stride, pairs.padding];
    if (x[1] + 2 * ph < w[2] || x[2] + 2 * pw < w[3]) throw bad(`a ${w[2]}x${w[3]} kernel does not fit a ${x[1]}x${x[2]} input with padding ${ph}, ${pw}`, `${ptr}/weight`);
    return [[w[0], Math.floor((x[1] + 2 * ph - w[2]) / sh) + 1, Math.floor((x[2] + 2 * pw - w[3]) / sw) + 1]];
  }

  activation(node, ptr, [x]) {
    const fn = node.get('fn');
    if (typeof fn !== 'string' || !Object.hasOwn(ACTIVATION_PARAMETERS, fn)) throw bad(`unknown activation ${JSON.stringify(fn)}`, `${ptr}/fn`);
    const params = ACTIVATION_PARAMETERS[fn];
    for (const [k, v] of node) {
      if (['op', 'in', 'out', 'fn'].includes(k)) continue;
      if (!Object.hasOwn(params, k)) throw bad(`the activation ${fn} has no parameter ${JSON.stringify(k)}`, pointerJoin(ptr, k));
      const kind = params[k];
      if (!(kind === 'float' ? isFloat(v) : kind.includes(v))) throw bad(`${k} must be ${kind === 'float' ? 'a float' : `one of ${JSON.stringify(kind)}`}`, pointerJoin(ptr, k));
    }
    return [x];
  }

  flatten(node, ptr, [x]) {
    return [[prod(x)]];
  }

  concat(node, ptr, xs) {
    return [[xs.reduce((a, x) => a + prod(x), 0)]];
  }

  layer_norm(node, ptr, [x]) {
    if (x.length === 0) throw bad('layer_norm of a 0-dimensional value', ptr);
    for (const key of ['weight', 'bias']) this.vector(node, key, ptr, x[x.length - 1], true);
    if (!isFloat(node.get('eps'))) throw bad('eps must be a float', `${ptr}/eps`);
    return [x];
  }

  batch_norm(node, ptr, [x]) {
    if (x.length !== 1) throw bad(`batch_norm applies to vectors, not to a value of shape ${show(x)}`, ptr);
    for (const [key, optional] of [['running_mean', false], ['running_var', false], ['weight', true], ['bias', true]]) this.vector(node, key, ptr, x[0], optional);
    if (!isFloat(node.get('eps'))) throw bad('eps must be a float', `${ptr}/eps`);
    return [x];
  }

  lstm(node, ptr, [x, h, c]) {
    const rec = this.recurrent;
    if (this.lstmSeen) throw bad("at most one lstm node: 'recurrent' describes one state", ptr);
    this.lstmSeen = true;
    const ins = node.get('in');
    const outs = node.get('out');
    if (!sameList([ins[1], ins[2], outs[1], outs[2]], ['hidden_in', 'cell_in', 'hidden_out', 'cell_out'].map((k) => rec.get(k)))) {
      throw bad("an lstm node reads and writes the state names of 'recurrent'", `${ptr}/in`);
    }
    if (isState(x) || x.length !== 1) throw bad(`an lstm reads a vector, not a value of shape ${isState(x) ? 'state' : show(x)}`, `${ptr}/in/0`);
    const layers = node.get('layers');
    const hidden = num(rec.get('hidden_size'));
    if (!(Array.isArray(layers) && layers.length === num(rec.get('layers')))) throw bad(`layers must be a list of ${rec.get('layers')} layers, as 'recurrent' says`, `${ptr}/layers`);
    let width = x[0];
    layers.forEach((layer, i) => {
      const lp = `${ptr}/layers/${i}`;
      if (!(isPlainMap(layer) && layer.size === LAYER.length && LAYER.every((k) => layer.has(k)))) {
        throw bad('a layer must be a map with exactly weight_ih, weight_hh, bias_ih, bias_hh', membersPointer(layer, lp, LAYER));
      }
      for (const [key, want] of [['weight_ih', [4 * hidden, width]], ['weight_hh', [4 * hidden, hidden]]]) {
        if (!sameList(this.weight(layer, key, lp, 2), want)) throw bad(`${key} must have shape ${show(want)}`, `${lp}/${key}`);
      }
      for (const key of ['bias_ih', 'bias_hh']) this.vector(layer, key, lp, 4 * hidden);
      width = hidden;
    });
    return [[hidden], h, c];
  }

  head(head, actionSpace, ptr) {
    if (!isPlainMap(head)) throw bad('the action head must be a map', ptr);
    const op = head.get('op');
    if (typeof op !== 'string' || !Object.hasOwn(HEADS, op)) throw bad(`unknown action head ${JSON.stringify(op)}`, `${ptr}/op`);
    const [required, kind] = HEADS[op];
    const keys = [...head.keys()].filter((k) => k !== 'op' && k !== 'in');
    if (!(keys.length === required.length && required.every((k) => head.has(k)))) {
      throw bad(`the head ${op} takes exactly the parameters ${JSON.stringify(required)}`, membersPointer(head, ptr, [...required, 'op', 'in'], required));
    }
    const x = head.get('in');
    if (!isName(x) || !this.known.has(x)) throw bad(`the head reads ${JSON.stringify(x)}, which is not computed`, `${ptr}/in`);
    const shape = this.shapeOf(x, `${ptr}/in`);
    const kinds = Array.isArray(kind) ? kind : [kind];
    if (!(isTagged(actionSpace, 'space') && kinds.includes(actionSpace.get('kind')))) throw bad(`the head ${op} acts in a ${kinds.join(' or ')} action space`, ptr);
    if (shape.length !== 1) throw bad(`the head reads a vector, not a value of shape ${show(shape)}`, `${ptr}/in`);
    const width = shape[0];
    const sp = actionSpace;
    let need;
    if (op === 'argmax') need = num(sp.get('n'));
    else if (op === 'quantile_argmax') {
      const nq = head.get('n_quantiles');
      if (!(isInt(nq) && nq >= 1n && nq <= MAX_SAFE)) throw bad('n_quantiles must be an integer >= 1', `${ptr}/n_quantiles`);
      need = num(nq) * num(sp.get('n'));
    } else if (op === 'multi_argmax') {
      const sizes = head.get('sizes');
      // for a multi_binary space (MaskablePPO): a categorical over {0, 1} per binary action
      const nvec = sp.get('kind') === 'multi_binary' ? new Array(isInt(sp.get('n')) ? num(sp.get('n')) : prod(sp.get('n').map(num))).fill(2) : inlineInts(sp.get('nvec'));
      if (!(Array.isArray(sizes) && sizes.every(isInt) && sameList(sizes.map(num), nvec))) throw bad(`sizes must be the action space's nvec ${show(nvec)}`, `${ptr}/sizes`);
      need = nvec.reduce((a, b) => a + b, 0);
    } else if (op === 'bernoulli') {
      const n = sp.get('n');
      need = isInt(n) ? num(n) : prod(n.map(num));
    } else {
      if (!SQUASH.includes(head.get('squash'))) throw bad(`squash must be one of ${JSON.stringify(SQUASH)}`, `${ptr}/squash`);
      if (!ACTION_DTYPES.includes(sp.get('dtype'))) throw bad(`a box head acts in an F32 or F64 action space, not ${sp.get('dtype')}`, ptr);
      need = prod(sp.get('shape').map(num));
    }
    if (width !== need) throw bad(`the head ${op} needs ${need} values per observation, the network gives ${width}`, `${ptr}/in`);
  }
}

function recurrentOf(rec, known, ptr) {
  if (rec === undefined || rec === null) return null;
  if (!(isPlainMap(rec) && rec.size === RECURRENT.length && RECURRENT.every((k) => rec.has(k)))) {
    throw bad(`recurrent must be a map with exactly ${JSON.stringify([...RECURRENT].sort())}`, membersPointer(rec, ptr, RECURRENT));
  }
  const names = ['hidden_in', 'cell_in', 'hidden_out', 'cell_out'].map((k) => rec.get(k));
  if (!names.every(isName) || new Set(names).size !== 4 || names.some((n) => known.has(n))) throw bad('the four state names must be distinct names, none an observation', ptr);
  for (const k of ['layers', 'hidden_size']) {
    if (!(isInt(rec.get(k)) && rec.get(k) >= 1n && rec.get(k) <= 1n << 24n)) throw bad(`${k} must be an integer from 1 to 2^24`, `${ptr}/${k}`);
  }
  return rec;
}

/** What the VecNormalize statistics depend on in a space value: its kind, a box's shape, a dict's keys and their outlines. */
function outline(space) {
  if (!isTagged(space, 'space')) return null;
  const kind = space.get('kind');
  if (kind === 'box') return ['box', space.get('shape').map(num)];
  if (kind === 'dict') return ['dict', space.get('spaces').map(([k, s]) => [k, outline(s)])];
  return [kind];
}

/**
 * Checks a description (the json.js tree under `policy`), inferring every
 * value's shape. `used` is the archive's extensions_used. Throws
 * EXTENSION_INVALID (or LIMIT_EXCEEDED) located in the member.
 */
export function check(value, data, used = []) {
  const base = '/' + KEY;
  if (!isPlainMap(value)) throw bad('the policy must be a map', base);
  for (const k of [...TOP_REQUIRED].sort()) if (!value.has(k)) throw bad(`the key ${JSON.stringify(k)} is missing`, base); // §11.2: the object before its members
  for (const k of value.keys()) if (!TOP_REQUIRED.includes(k) && !TOP_OPTIONAL.includes(k)) throw bad(`unknown key ${JSON.stringify(k)}`, pointerJoin(base, k));
  for (const k of ['normalize_images', 'vec_normalize']) {
    if (value.has(k) && typeof value.get(k) !== 'boolean') throw bad(`${k} must be a boolean`, `${base}/${k}`);
  }
  if (value.get('vec_normalize') === true && !used.includes('RLA_vec_normalize')) {
    throw bad('vec_normalize is true but the archive does not use RLA_vec_normalize', `${base}/vec_normalize`);
  }
  // the statistics are checked against the data's observation space (RLA_vec_normalize §3)
  if (value.get('vec_normalize') === true && JSON.stringify(outline(value.get('observation_space'))) !== JSON.stringify(outline(data?.get('observation_space')))) {
    throw bad("vec_normalize is true but the observation space differs from the data's", `${base}/observation_space`);
  }
  const known = inputs(value.get('observation_space'), `${base}/observation_space`);
  const rec = recurrentOf(value.get('recurrent'), known, `${base}/recurrent`);
  const shapes = new Shapes(known, rec);
  if (rec !== null) {
    const state = { state: [num(rec.get('layers')), num(rec.get('hidden_size'))] };
    known.set(rec.get('hidden_in'), state);
    known.set(rec.get('cell_in'), state);
  }
  const nodes = value.get('nodes');
  if (!Array.isArray(nodes)) throw bad('nodes must be a list', `${base}/nodes`);
  nodes.forEach((node, i) => shapes.node(node, `${base}/nodes/${i}`));
  if (rec !== null && !shapes.lstmSeen) throw bad("'recurrent' is given but no lstm node uses it", `${base}/recurrent`);
  shapes.head(value.get('action'), value.get('action_space'), `${base}/action`);
}
