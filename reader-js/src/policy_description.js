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
//
// The operations, activation functions and heads, their parameters, and what
// each costs in operations and workspace come from the registry policy_ops.js
// (generated from spec/policy_ops.json). Before anything runs, the check
// computes what one observation costs (every node at least POLICY_NODE_COST)
// and the peak memory of its evaluation (the values live at each node, freed
// after their last reader, plus the node's workspace), and refuses a
// description above MAX_POLICY_OPERATIONS or MAX_POLICY_MEMORY_BYTES with
// LIMIT_EXCEEDED at the node that goes past.

import { fail, membersPointer, pointerJoin } from './errors.js';
import { decodeBase64 } from './base64.js';
import { viewElements } from './dtypes.js';
import { isMap, isTagged } from './values.js';
import {
  ACTIVATIONS, HEADS, MAX_POLICY_MEMORY_BYTES, MAX_POLICY_OPERATIONS, MAX_POLICY_VALUE_ELEMENTS, OPERATIONS, POLICY_BLOCK_ELEMENTS, POLICY_NODE_COST,
} from './policy_ops.js';

export { HEADS, MAX_POLICY_MEMORY_BYTES, MAX_POLICY_OPERATIONS, MAX_POLICY_VALUE_ELEMENTS, OPERATIONS };

export const EXTENSION = 'RLA_policy';
export const MEMBER = 'extensions/RLA_policy/policy.json';
export const KEY = 'policy';
export const GROUP = 'RLA_policy';
/** Activation functions: parameter -> 'float' or the strings allowed (from the registry). */
export const ACTIVATION_PARAMETERS = Object.freeze(Object.fromEntries(Object.entries(ACTIVATIONS).map(([fn, a]) => [
  fn, Object.freeze(Object.fromEntries(a.parameters.map((p) => [p.name, p.type === 'enum' ? p.values : p.type]))),
])));
/** Every parameter some activation takes: an activation node may carry these besides fn. */
const ACTIVATION_KEYS = [...new Set(Object.values(ACTIVATIONS).flatMap((a) => a.parameters.map((p) => p.name)))];
/** The largest finite float32: a numeric parameter is at most this in magnitude (compared exactly, as a bigint for integer literals). */
const F32_MAX = 3.4028234663852886e38;
const F32_MAX_BIG = BigInt(F32_MAX);

const TOP_REQUIRED = ['observation_space', 'action_space', 'normalize_images', 'nodes', 'action'];
const TOP_OPTIONAL = ['vec_normalize', 'recurrent'];
const RECURRENT = ['hidden_in', 'cell_in', 'hidden_out', 'cell_out', 'layers', 'hidden_size'];
const LAYER = ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'];
const OBS_KINDS = ['box', 'discrete', 'multi_discrete', 'multi_binary'];
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const bad = (msg, pointer) => fail('EXTENSION_INVALID', msg, { member: MEMBER, pointer });
const isInt = (v) => typeof v === 'bigint';
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
  if (!isState(shape) && prod(shape) > MAX_POLICY_VALUE_ELEMENTS) throw limit(`a value of shape ${show(shape)} has more than MAX_POLICY_VALUE_ELEMENTS elements`, ptr);
}

/** A cost or workspace formula of the registry: the sum of its terms, each k times the product of the named quantities. */
function formula(terms, q, coefficient = 0) {
  return terms.reduce((sum, t) => sum + (t.k === 'activation' ? coefficient : t.k) * t.of.reduce((a, name) => a * q[name], 1), 0);
}

/** Elements of a value per observation (a recurrent state: layers x hidden_size). */
const elements = (shape) => (isState(shape) ? shape.state[0] * shape.state[1] : prod(shape));

const limit = (msg, pointer) => fail('LIMIT_EXCEEDED', msg, { member: MEMBER, pointer });

/** A numeric parameter (RLA_policy §5): a finite number no larger in magnitude than the largest float32. */
function floatParameter(node, key, ptr) {
  const v = node.get(key);
  if (!(typeof v === 'bigint' || typeof v === 'number')) throw bad(`${key} must be a finite float`, pointerJoin(ptr, key));
  if (typeof v === 'bigint' ? v > F32_MAX_BIG || -v > F32_MAX_BIG : Math.abs(v) > F32_MAX) {
    throw bad(`${key} must be at most the largest float32 in magnitude`, pointerJoin(ptr, key));
  }
  return Number(v);
}

/** The ndarray parameters of a node (an lstm's: those of every layer). */
function ndarrays(node) {
  const out = [...node.values()].filter((v) => isTagged(v, 'ndarray'));
  if (node.get('op') === 'lstm' && Array.isArray(node.get('layers'))) {
    for (const layer of node.get('layers')) out.push(...[...layer.values()].filter((v) => isTagged(v, 'ndarray')));
  }
  return out;
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

/** Walks the nodes, inferring the shape (without batch) of every named value, and what each node costs. */
class Shapes {
  constructor(known, recurrent) {
    this.known = known; // name -> shape array, or {state: [layers, hidden]}
    this.recurrent = recurrent;
    this.lstmSeen = false;
    this.cost = 0; // operations per observation so far
    this.defined = new Map([...known.keys()].map((name) => [name, 0])); // name -> index of the node that computes it (inputs: 0)
    this.last = new Map(); // name -> index of its last reader (the head: the number of nodes)
    this.workspace = []; // bytes of workspace of each node, then of the head
    this.pointers = []; // JSON Pointer of each node, then of the head
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
    if (typeof op !== 'string' || !Object.hasOwn(OPERATIONS, op)) throw bad(`unknown operation ${JSON.stringify(op)}`, `${ptr}/op`);
    const spec = OPERATIONS[op];
    const required = spec.parameters.filter((p) => p.required).map((p) => p.name);
    const allowed = [...spec.parameters.map((p) => p.name), ...(op === 'activation' ? ACTIVATION_KEYS : [])];
    const keys = [...node.keys()].filter((k) => !['op', 'in', 'out'].includes(k));
    for (const k of [...required].sort()) if (!node.has(k)) throw bad(`${op} lacks the parameter ${JSON.stringify(k)}`, ptr);
    for (const k of keys.sort()) if (!allowed.includes(k)) throw bad(`${op} has no parameter ${JSON.stringify(k)}`, pointerJoin(ptr, k));
    if (op === 'lstm' && this.recurrent === null) throw bad("an lstm node needs 'recurrent'", ptr);
    const ins = node.get('in');
    if (!(Array.isArray(ins) && ins.length > 0 && ins.every(isName))) throw bad("'in' must be a non-empty list of names", `${ptr}/in`);
    ins.forEach((n, i) => {
      if (!this.known.has(n)) throw bad(`${JSON.stringify(n)} is not computed before this node`, `${ptr}/in/${i}`);
    });
    const wantIns = typeof spec.inputs === 'number' ? spec.inputs : ins.length; // concat: "1 or more"
    if (ins.length !== wantIns) throw bad(`${op} takes ${wantIns} input(s), not ${ins.length}`, `${ptr}/in`);
    const wantOuts = spec.outputs;
    const outs = wantOuts > 1 ? node.get('out') : [node.get('out')];
    if (!(Array.isArray(outs) && outs.length === wantOuts && outs.every(isName))) {
      throw bad(wantOuts > 1 ? `'out' of ${op} must be a list of ${wantOuts} names` : "'out' must be a name", `${ptr}/out`);
    }
    const xs = ins.map((n) => (op === 'lstm' ? this.known.get(n) : this.shapeOf(n, `${ptr}/in`)));
    const q = {};
    const shapes = this[op](node, ptr, xs, q);
    outs.forEach((name, i) => {
      const where = `${ptr}/out${wantOuts > 1 ? `/${i}` : ''}`;
      if (this.known.has(name) || outs.indexOf(name) !== i) throw bad(`${JSON.stringify(name)} is computed twice`, where);
      bounded(shapes[i], where);
      this.known.set(name, shapes[i]);
    });
    // what the node costs (RLA_policy §5.11), from the registry's formulas over these quantities
    const index = this.pointers.length;
    Object.assign(q, { out: elements(shapes[0]), outs: shapes.reduce((a, s) => a + elements(s), 0), in: xs.reduce((a, x) => a + elements(x), 0) });
    if (!('width' in q)) q.width = !isState(xs[0]) && xs[0].length > 0 ? xs[0][xs[0].length - 1] : 0;
    q.weights = ndarrays(node).reduce((a, v) => a + prod(v.get('shape').map(num)), 0);
    const act = op === 'activation' ? ACTIVATIONS[node.get('fn')] : null;
    this.cost += POLICY_NODE_COST + formula(spec.cost, q, act ? act.cost : 0);
    if (this.cost > MAX_POLICY_OPERATIONS) throw limit('the nodes so far cost more than MAX_POLICY_OPERATIONS per observation', ptr);
    this.workspace.push(formula(spec.workspace, q, act ? act.workspace : 0));
    this.pointers.push(ptr);
    for (const name of ins) this.last.set(name, index);
    for (const name of outs) this.defined.set(name, index);
  }

  linear(node, ptr, [x]) {
    const w = this.weight(node, 'weight', ptr, 2);
    if (x.length === 0 || x[x.length - 1] !== w[1]) throw bad(`linear of width ${w[1]} applied to a value of shape ${show(x)}`, `${ptr}/weight`);
    this.vector(node, 'bias', ptr, w[0], true);
    return [[...x.slice(0, -1), w[0]]];
  }

  conv2d(node, ptr, [x], q) {
    const w = this.weight(node, 'weight', ptr, 4);
    const pairs = {};
    for (const p of OPERATIONS.conv2d.parameters) {
      if (p.type !== 'int_pair') continue;
      const v = node.get(p.name);
      const least = BigInt(p.least);
      if (!(Array.isArray(v) && v.length === 2 && v.every((n) => isInt(n) && n >= least && n <= MAX_SAFE))) throw bad(`${p.name} must be two integers >= ${p.least}`, `${ptr}/${p.name}`);
      pairs[p.name] = v;
    }
    if (x.length !== 3 || x[0] !== w[1]) throw bad(`conv2d over ${w[1]} channels applied to a value of shape ${show(x)} (channels, height, width)`, `${ptr}/weight`);
    this.vector(node, 'bias', ptr, w[0], true);
    // in bigint: a padding up to 2^53 - 1 gives sizes no double holds exactly, and the reader in Python computes them exactly
    const [[sh, sw], [ph, pw]] = [pairs.stride, pairs.padding];
    const [ih, iw] = [BigInt(x[1]) + 2n * ph, BigInt(x[2]) + 2n * pw];
    if (ih < BigInt(w[2]) || iw < BigInt(w[3])) throw bad(`a ${w[2]}x${w[3]} kernel does not fit a ${x[1]}x${x[2]} input with padding ${ph}, ${pw}`, `${ptr}/weight`);
    const h = Number((ih - BigInt(w[2])) / sh) + 1;
    const wd = Number((iw - BigInt(w[3])) / sw) + 1;
    const kernel = w[1] * w[2] * w[3];
    Object.assign(q, { kernel, padded: Number(BigInt(x[0]) * ih * iw), block: Math.min(h * wd * kernel, Math.max(POLICY_BLOCK_ELEMENTS, kernel)) });
    return [[w[0], h, wd]];
  }

  activation(node, ptr, [x]) {
    const fn = node.get('fn');
    if (typeof fn !== 'string' || !Object.hasOwn(ACTIVATIONS, fn)) throw bad(`unknown activation ${JSON.stringify(fn)}`, `${ptr}/fn`);
    const params = Object.fromEntries(ACTIVATIONS[fn].parameters.map((p) => [p.name, p]));
    const values = {};
    for (const [k, v] of node) {
      if (['op', 'in', 'out', 'fn'].includes(k)) continue;
      if (!Object.hasOwn(params, k)) throw bad(`the activation ${fn} has no parameter ${JSON.stringify(k)}`, pointerJoin(ptr, k));
      const p = params[k];
      if (p.type === 'enum') {
        if (!(typeof v === 'string' && p.values.includes(v))) throw bad(`${k} must be one of ${JSON.stringify(p.values)}`, pointerJoin(ptr, k));
      } else {
        values[k] = floatParameter(node, k, ptr);
        if (p.nonzero && values[k] === 0) throw bad(`${k} of ${fn} must not be 0`, pointerJoin(ptr, k));
      }
    }
    const ordered = ACTIVATIONS[fn].ordered;
    if (ordered) { // e.g. hardtanh: min_val <= max_val, either given or by default
      const [lo, hi] = ordered.map((k) => (k in values ? values[k] : params[k].default));
      if (lo > hi) throw bad(`${ordered[0]} must not be greater than ${ordered[1]}`, pointerJoin(ptr, node.has(ordered[1]) ? ordered[1] : ordered[0]));
    }
    return [x];
  }

  prelu(node, ptr, [x]) {
    if (x.length === 0) throw bad('prelu of a 0-dimensional value', `${ptr}/in`);
    const w = this.weight(node, 'weight', ptr, 1);
    if (w[0] !== 1 && w[0] !== x[0]) throw bad(`weight must have shape [1] or [${x[0]}] (the channels of a value of shape ${show(x)}), not ${show(w)}`, `${ptr}/weight`);
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
    floatParameter(node, 'eps', ptr);
    return [x];
  }

  batch_norm(node, ptr, [x]) {
    if (x.length !== 1) throw bad(`batch_norm applies to vectors, not to a value of shape ${show(x)}`, ptr);
    for (const [key, optional] of [['running_mean', false], ['running_var', false], ['weight', true], ['bias', true]]) this.vector(node, key, ptr, x[0], optional);
    floatParameter(node, 'eps', ptr);
    return [x];
  }

  lstm(node, ptr, [x, h, c], q) {
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
    Object.assign(q, { gates: 4 * hidden, state: layers.length * hidden, width: x[0] });
    return [[hidden], h, c];
  }

  head(head, actionSpace, ptr) {
    if (!isPlainMap(head)) throw bad('the action head must be a map', ptr);
    const op = head.get('op');
    if (typeof op !== 'string' || !Object.hasOwn(HEADS, op)) throw bad(`unknown action head ${JSON.stringify(op)}`, `${ptr}/op`);
    const spec = HEADS[op];
    const required = spec.parameters.map((p) => p.name);
    const keys = [...head.keys()].filter((k) => k !== 'op' && k !== 'in');
    if (!(keys.length === required.length && required.every((k) => head.has(k)))) {
      throw bad(`the head ${op} takes exactly the parameters ${JSON.stringify([...required].sort())}`, membersPointer(head, ptr, [...required, 'op', 'in'], required));
    }
    const x = head.get('in');
    if (!isName(x) || !this.known.has(x)) throw bad(`the head reads ${JSON.stringify(x)}, which is not computed`, `${ptr}/in`);
    const shape = this.shapeOf(x, `${ptr}/in`);
    const kinds = spec.spaces;
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
      const squash = spec.parameters.find((p) => p.name === 'squash').values;
      if (!squash.includes(head.get('squash'))) throw bad(`squash must be one of ${JSON.stringify(squash)}`, `${ptr}/squash`);
      if (!ACTION_DTYPES.includes(sp.get('dtype'))) throw bad(`a box head acts in an F32 or F64 action space, not ${sp.get('dtype')}`, ptr);
      need = prod(sp.get('shape').map(num));
    }
    if (width !== need) throw bad(`the head ${op} needs ${need} values per observation, the network gives ${width}`, `${ptr}/in`);
    const q = { in: width, out: width };
    this.cost += POLICY_NODE_COST + formula(spec.cost, q);
    if (this.cost > MAX_POLICY_OPERATIONS) throw limit('the nodes and the head cost more than MAX_POLICY_OPERATIONS per observation', ptr);
    this.last.set(x, this.pointers.length);
    this.workspace.push(formula(spec.workspace, q));
    this.pointers.push(ptr);
  }

  /**
   * The peak bytes of one observation's evaluation and where it is reached
   * (RLA_policy §5.11): a value is live from the node that computes it (the
   * inputs: from the first) to its last reader (the recurrent state outputs:
   * to the head); at each node, the live values at 4 bytes per element, its
   * outputs included, plus its workspace. LIMIT_EXCEEDED where it passes the limit.
   */
  memory() {
    const end = this.pointers.length; // points 0 .. end-1: the nodes, then the head
    const keep = this.recurrent === null ? [] : [this.recurrent.get('hidden_out'), this.recurrent.get('cell_out')];
    const delta = new Array(end + 1).fill(0);
    for (const [name, first] of this.defined) {
      const last = keep.includes(name) ? end - 1 : Math.max(first, this.last.get(name) ?? first);
      const size = 4 * elements(this.known.get(name));
      delta[Math.min(first, end - 1)] += size;
      delta[Math.min(last, end - 1) + 1] -= size;
    }
    let live = 0;
    let peak = -1;
    let at = '';
    const memory = [];
    for (let i = 0; i < end; i++) {
      live += delta[i];
      const used = live + this.workspace[i];
      if (used > MAX_POLICY_MEMORY_BYTES) throw limit(`the evaluation needs ${used} bytes here, more than MAX_POLICY_MEMORY_BYTES per observation`, this.pointers[i]);
      if (used > peak) [peak, at] = [used, this.pointers[i]];
      memory.push(used);
    }
    return { peak, at, memory };
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
  // the state is a value (RLA_policy §5.11)
  if (num(rec.get('layers')) * num(rec.get('hidden_size')) > MAX_POLICY_VALUE_ELEMENTS) throw limit('a recurrent state of more than MAX_POLICY_VALUE_ELEMENTS elements', `${ptr}/hidden_size`);
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
 * value's shape and what it costs. `used` is the archive's extensions_used.
 * Returns what one observation's evaluation costs (RLA_policy §5.11):
 * {operations, memoryBytes, peakAt, memory} (memory: the bytes at each node,
 * then at the head). Throws EXTENSION_INVALID (or
 * LIMIT_EXCEEDED) located in the member.
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
    for (const k of ['hidden_in', 'cell_in']) {
      known.set(rec.get(k), state);
      shapes.defined.set(rec.get(k), 0);
    }
  }
  const nodes = value.get('nodes');
  if (!Array.isArray(nodes)) throw bad('nodes must be a list', `${base}/nodes`);
  nodes.forEach((node, i) => shapes.node(node, `${base}/nodes/${i}`));
  if (rec !== null && !shapes.lstmSeen) throw bad("'recurrent' is given but no lstm node uses it", `${base}/recurrent`);
  shapes.head(value.get('action'), value.get('action_space'), `${base}/action`);
  const { peak, at, memory } = shapes.memory();
  return { operations: shapes.cost, memoryBytes: peak, peakAt: at, memory };
}
