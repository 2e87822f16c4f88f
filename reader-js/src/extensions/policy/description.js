// The structure of a portable policy description (extension RLA_policy
// §3-§6), checked before any evaluation; the twin of
// python/rlarchive/extensions/policy/description.py (the spaces and the heads' widths in
// spaces.js, as spaces.py).
//
// check() walks the parsed, value-checked JSON (json.js tree: Map for
// objects, bigint for integer literals) of extensions/RLA_policy/policy.json
// once, in document order, inferring the shape of every named value from the
// observation space through the nodes, so that a description whose layers do
// not fit together is refused here (EXTENSION_INVALID, with the JSON Pointer
// of the offending value) and the evaluator only sees descriptions that compute.
//
// The operations, activation functions and heads, their parameters, and what
// each costs in operations and workspace come from the registry ops.js
// (generated from spec/policy_ops.json). Before anything runs, the check
// computes what one observation costs (every node at least POLICY_NODE_COST)
// and the peak memory of its evaluation (the values live at each node, freed
// after their last reader, plus the node's workspace), and refuses a
// description above MAX_POLICY_OPERATIONS or MAX_POLICY_MEMORY_BYTES with
// LIMIT_EXCEEDED at the node that goes past.

import { membersPointer, pointerJoin } from '../../errors.js';
import { isTagged } from '../../values.js';
import {
  ACTIVATIONS,
  HEADS,
  MAX_POLICY_MEMORY_BYTES,
  MAX_POLICY_OPERATIONS,
  MAX_POLICY_VALUE_ELEMENTS,
  OPERATIONS,
  POLICY_BLOCK_ELEMENTS,
  POLICY_NODE_COST,
} from './ops.js';
import {
  ACTION_DTYPES,
  HEAD_WIDTHS,
  MAX_SAFE,
  MEMBER,
  OBSERVATION_DTYPES,
  bad,
  bounded,
  isInt,
  isName,
  isPlainMap,
  isState,
  limit,
  observationShapes,
  outline,
  show,
} from './spaces.js';

/** @typedef {import('./spaces.js').JsonMap} JsonMap */
/** @typedef {import('./spaces.js').ValueShape} ValueShape */
/** @typedef {import('./ops.js').Term} Term */
/** @typedef {import('./ops.js').Parameter} Parameter */
/**
 * The quantities a node's cost and workspace formulas name (RLA_policy §5.11), by name.
 * @typedef {Record<string, number>} Quantities
 */
/**
 * What one observation's evaluation costs (RLA_policy §5.11).
 * @typedef {{operations: number, memoryBytes: number, peakAt: string, memory: number[]}} Cost
 */
/**
 * The check of one operation (a method of Shapes named after it): the shapes of its outputs, the quantities of its
 * cost set in `q`.
 * @typedef {(node: JsonMap, ptr: string, xs: ValueShape[], q: Quantities) => ValueShape[]} OpCheck
 */

export { HEADS, MAX_POLICY_MEMORY_BYTES, MAX_POLICY_OPERATIONS, MAX_POLICY_VALUE_ELEMENTS, OPERATIONS };

export const EXTENSION = 'RLA_policy';
export { ACTION_DTYPES, MEMBER, OBSERVATION_DTYPES };
export const KEY = 'policy';
export const GROUP = 'RLA_policy';
/** Activation functions: parameter -> 'float' or the strings allowed (from the registry). */
export const ACTIVATION_PARAMETERS = Object.freeze(
  Object.fromEntries(
    Object.entries(ACTIVATIONS).map(([fn, a]) => [
      fn,
      Object.freeze(Object.fromEntries(a.parameters.map((p) => [p.name, p.type === 'enum' ? p.values : p.type]))),
    ]),
  ),
);
/** The largest finite float32: a numeric parameter is at most this in magnitude (compared exactly, as a bigint for integer literals). */
const F32_MAX = 3.4028234663852886e38;
const F32_MAX_BIG = BigInt(F32_MAX);

const TOP_REQUIRED = ['observation_space', 'action_space', 'normalize_images', 'nodes', 'action'];
const TOP_OPTIONAL = ['vec_normalize', 'recurrent'];
const RECURRENT = ['hidden_in', 'cell_in', 'hidden_out', 'cell_out', 'layers', 'hidden_size'];
const LAYER = ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'];

/** @param {number | bigint} v */
const num = (v) => Number(v);
/** @param {number[]} shape */
const prod = (shape) => shape.reduce((a, b) => a * b, 1);
/**
 * @param {unknown[]} a
 * @param {unknown[]} b
 */
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
/**
 * A value of the document in a message (JSON, integers included: json.js gives them as bigint).
 * @param {unknown} v
 */
const quote = (v) => JSON.stringify(v, (k, /** @type {unknown} */ x) => (typeof x === 'bigint' ? x.toString() : x));

/**
 * A cost or workspace formula of the registry: the sum of its terms, each k times the product of the named quantities.
 * @param {Term[]} terms
 * @param {Quantities} q
 * @param {number} [coefficient] what k 'activation' stands for
 * @returns {number}
 */
function formula(terms, q, coefficient = 0) {
  return terms.reduce(
    (/** @type {number} */ sum, t) =>
      sum + (t.k === 'activation' ? coefficient : t.k) * t.of.reduce((a, name) => a * q[name], 1),
    0,
  );
}

/**
 * Elements of a value per observation (a recurrent state: layers x hidden_size).
 * @param {ValueShape} shape
 */
const elements = (shape) => (isState(shape) ? shape.state[0] * shape.state[1] : prod(shape));

/**
 * A numeric parameter (RLA_policy §5): a finite number no larger in magnitude than the largest float32.
 * @param {JsonMap} node
 * @param {string} key
 * @param {string} ptr
 * @returns {number}
 */
function floatParameter(node, key, ptr) {
  const v = node.get(key);
  if (!(typeof v === 'bigint' || typeof v === 'number'))
    throw bad(`${key} must be a finite float`, pointerJoin(ptr, key));
  if (typeof v === 'bigint' ? v > F32_MAX_BIG || -v > F32_MAX_BIG : Math.abs(v) > F32_MAX) {
    throw bad(`${key} must be at most the largest float32 in magnitude`, pointerJoin(ptr, key));
  }
  return Number(v);
}

/**
 * The ndarray parameters of a node (an lstm's: those of every layer).
 * @param {JsonMap} node
 * @returns {JsonMap[]}
 */
function ndarrays(node) {
  const out = [...node.values()].filter((v) => isTagged(v, 'ndarray'));
  if (node.get('op') === 'lstm' && Array.isArray(node.get('layers'))) {
    for (const layer of node.get('layers')) out.push(...[...layer.values()].filter((v) => isTagged(v, 'ndarray')));
  }
  return out;
}

/**
 * A parameter of a head, of the type the registry gives it: an integer of at least `least`, a list of integers, one of `values`.
 * @param {JsonMap} head
 * @param {Parameter} p
 * @param {string} ptr
 */
function headParameter(head, p, ptr) {
  const v = head.get(p.name);
  if (p.type === 'int' && !(isInt(v) && v >= BigInt(/** @type {number} */ (p.least)) && v <= MAX_SAFE))
    throw bad(`${p.name} must be an integer >= ${p.least}`, `${ptr}/${p.name}`);
  if (p.type === 'int_list' && !(Array.isArray(v) && v.every(isInt)))
    throw bad(`${p.name} must be a list of integers`, `${ptr}/${p.name}`);
  if (p.type === 'enum' && !(/** @type {string[]} */ (p.values).includes(v)))
    throw bad(`${p.name} must be one of ${quote(p.values)}`, `${ptr}/${p.name}`);
}

/** Walks the nodes, inferring the shape (without batch) of every named value, and what each node costs. */
class Shapes {
  /**
   * @param {Map<string, ValueShape>} known the inputs' shapes
   * @param {JsonMap | null} recurrent the checked 'recurrent' member, or null
   */
  constructor(known, recurrent) {
    this.known = known; // name -> shape array, or {state: [layers, hidden]}
    this.recurrent = recurrent;
    this.lstmSeen = false;
    this.cost = 0; // operations per observation so far
    this.defined = new Map([...known.keys()].map((name) => [name, 0])); // name -> index of the node that computes it (inputs: 0)
    /** @type {Map<string, number>} */
    this.last = new Map(); // name -> index of its last reader (the head: the number of nodes)
    /** @type {number[]} */
    this.workspace = []; // bytes of workspace of each node, then of the head
    /** @type {string[]} */
    this.pointers = []; // JSON Pointer of each node, then of the head
  }

  /**
   * The shape of an F32 ndarray parameter of `ndim` dimensions (null for an optional one given as null).
   * @overload
   * @param {JsonMap} node
   * @param {string} key
   * @param {string} ptr
   * @param {number} ndim
   * @returns {number[]}
   */
  /**
   * @overload
   * @param {JsonMap} node
   * @param {string} key
   * @param {string} ptr
   * @param {number} ndim
   * @param {boolean} optional
   * @returns {number[] | null}
   */
  /**
   * @param {JsonMap} node
   * @param {string} key
   * @param {string} ptr
   * @param {number} ndim
   * @returns {number[] | null}
   */
  weight(node, key, ptr, ndim, optional = false) {
    const v = node.get(key);
    if (v === null && optional) return null;
    if (!isTagged(v, 'ndarray'))
      throw bad(`${key} must be an ndarray${optional ? ' or null' : ''}`, pointerJoin(ptr, key));
    if (v.get('dtype') !== 'F32') throw bad(`${key} must have dtype F32, not ${v.get('dtype')}`, pointerJoin(ptr, key));
    const shape = /** @type {(number | bigint)[]} */ (v.get('shape')); // integers (checkValue)
    if (shape.length !== ndim)
      throw bad(`${key} must have ${ndim} dimensions, not ${shape.length}`, pointerJoin(ptr, key));
    return shape.map(num);
  }

  /**
   * The length of a vector parameter, which must be `n` unless `n` is null.
   * @param {JsonMap} node
   * @param {string} key
   * @param {string} ptr
   * @param {number | null} n
   * @returns {number | null}
   */
  vector(node, key, ptr, n, optional = false) {
    const shape = this.weight(node, key, ptr, 1, optional);
    if (shape === null) return n;
    if (n !== null && shape[0] !== n)
      throw bad(`${key} has ${shape[0]} elements where ${n} are needed`, pointerJoin(ptr, key));
    return shape[0];
  }

  /**
   * @param {string} name
   * @param {string} ptr
   * @returns {number[]}
   */
  shapeOf(name, ptr) {
    const shape = this.known.get(name);
    if (isState(shape)) throw bad(`${quote(name)} is a recurrent state, which only an lstm node reads`, ptr);
    return /** @type {number[]} */ (shape);
  }

  /**
   * One node, in the order of RLA_policy §8: op (and an activation's fn), the members missing, the members not
   * allowed, the operation, in, out, the parameters, the outputs' size, the cost.
   * @param {JsonMap} node
   * @param {string} ptr
   */
  node(node, ptr) {
    const [op, fn] = this.membersOf(node, ptr);
    const spec = OPERATIONS[op];
    const rec = this.recurrent;
    if (op === 'lstm') {
      // the operation itself: one lstm, and the state it reads and writes (§5.9)
      if (rec === null) throw bad("an lstm node needs 'recurrent'", ptr);
      if (this.lstmSeen) throw bad("at most one lstm node: 'recurrent' describes one state", ptr);
      this.lstmSeen = true;
    }
    const ins = node.get('in');
    const xs = this.inputsOf(op, ins, ptr);
    const [outs, outAt] = this.outputsOf(op, node.get('out'), ptr);
    /** @type {Quantities} */
    const q = {};
    const shapes = /** @type {Record<string, OpCheck>} */ (/** @type {unknown} */ (this))[op](node, ptr, xs, q);
    outs.forEach((name, i) => {
      bounded(shapes[i], outAt(i));
      this.known.set(name, shapes[i]);
    });
    // what the node costs (RLA_policy §5.11), from the registry's formulas over these quantities
    const index = this.pointers.length;
    Object.assign(q, {
      out: elements(shapes[0]),
      outs: shapes.reduce((/** @type {number} */ a, s) => a + elements(s), 0),
      in: xs.reduce((a, x) => a + elements(x), 0),
    });
    const x0 = xs[0];
    if (!('width' in q)) q.width = !isState(x0) && x0.length > 0 ? x0[x0.length - 1] : 0;
    q.weights = ndarrays(node).reduce((a, v) => a + prod(v.get('shape').map(num)), 0);
    const act = fn !== null ? ACTIVATIONS[fn] : null;
    this.cost += POLICY_NODE_COST + formula(spec.cost, q, act ? act.cost : 0);
    if (this.cost > MAX_POLICY_OPERATIONS)
      throw limit('the nodes so far cost more than MAX_POLICY_OPERATIONS per observation', ptr);
    this.workspace.push(formula(spec.workspace, q, act ? act.workspace : 0));
    this.pointers.push(ptr);
    for (const name of ins) this.last.set(name, index);
    for (const name of outs) this.defined.set(name, index);
  }

  /**
   * [op, fn or null] of a node: op (and an activation's fn), then the members missing, then those not allowed.
   * @param {unknown} node
   * @param {string} ptr
   * @returns {[string, string | null]}
   */
  membersOf(node, ptr) {
    if (!isPlainMap(node)) throw bad('a node must be a map', ptr);
    if (!node.has('op')) throw bad("a node lacks 'op'", ptr);
    const op = node.get('op');
    if (typeof op !== 'string' || !Object.hasOwn(OPERATIONS, op))
      throw bad(`unknown operation ${quote(op)}`, `${ptr}/op`);
    let fn = null;
    if (op === 'activation') {
      // fn decides the parameters an activation node has, as op does for a node
      if (!node.has('fn')) throw bad("an activation lacks 'fn'", ptr);
      fn = node.get('fn');
      if (typeof fn !== 'string' || !Object.hasOwn(ACTIVATIONS, fn))
        throw bad(`unknown activation ${quote(fn)}`, `${ptr}/fn`);
    }
    const spec = OPERATIONS[op];
    const required = [...spec.parameters.filter((p) => p.required).map((p) => p.name), 'in', 'out'];
    const allowed =
      fn === null ? spec.parameters.map((p) => p.name) : ['fn', ...ACTIVATIONS[fn].parameters.map((p) => p.name)];
    for (const k of [...required].sort()) if (!node.has(k)) throw bad(`the node lacks ${quote(k)}`, ptr); // §11.2: the object before its members
    for (const k of node.keys())
      if (!['op', 'in', 'out', ...allowed].includes(k))
        throw bad(`${fn ?? op} has no parameter ${quote(k)}`, pointerJoin(ptr, k));
    return [op, fn];
  }

  /**
   * The shapes of a node's inputs: each computed before it, of the rank the operation reads (an lstm: its state after its input).
   * @param {string} op
   * @param {unknown} ins
   * @param {string} ptr
   * @returns {ValueShape[]}
   */
  inputsOf(op, ins, ptr) {
    const spec = OPERATIONS[op];
    const wantIns = typeof spec.inputs === 'number' ? spec.inputs : null; // concat: "1 or more"
    if (!(Array.isArray(ins) && ins.length > 0 && (wantIns === null || ins.length === wantIns))) {
      throw bad(`'in' of ${op} must be a list of ${wantIns ?? 'one or more'} name(s)`, `${ptr}/in`);
    }
    return ins.map((/** @type {unknown} */ n, /** @type {number} */ i) => {
      const where = `${ptr}/in/${i}`;
      if (!isName(n)) throw bad('an input is a non-empty string', where);
      if (!this.known.has(n)) throw bad(`${quote(n)} is not computed before this node`, where);
      const shape = /** @type {ValueShape} */ (this.known.get(n));
      if (op === 'lstm' && i > 0) {
        const state = /** @type {JsonMap} */ (this.recurrent).get(i === 1 ? 'hidden_in' : 'cell_in');
        if (n !== state) throw bad(`in[${i}] of the lstm is the state ${quote(state)} of 'recurrent'`, where);
      } else if (isState(shape)) {
        throw bad(`${quote(n)} is a recurrent state, which only the lstm node reads`, where);
      } else {
        const [least, most] = /** @type {[number, number | null]} */ (spec.input_rank);
        if (shape.length < least || (most !== null && shape.length > most)) {
          throw bad(
            `${op} reads a value of rank ${least === most ? least : `at least ${least}`}, not ${show(shape)}`,
            where,
          );
        }
      }
      return shape;
    });
  }

  /**
   * [the names a node computes, i -> the pointer of the i-th]: each new (an lstm's states: those of recurrent).
   * @param {string} op
   * @param {unknown} out
   * @param {string} ptr
   * @returns {[string[], (i: number) => string]}
   */
  outputsOf(op, out, ptr) {
    const wantOuts = OPERATIONS[op].outputs;
    const outs = /** @type {unknown[]} */ (wantOuts > 1 ? out : [out]);
    if (wantOuts > 1 && !(Array.isArray(outs) && outs.length === wantOuts))
      throw bad(`'out' of ${op} must be a list of ${wantOuts} names`, `${ptr}/out`);
    const outAt = (/** @type {number} */ i) => `${ptr}/out${wantOuts > 1 ? `/${i}` : ''}`;
    outs.forEach((/** @type {unknown} */ name, /** @type {number} */ i) => {
      if (!isName(name)) throw bad('an output is a non-empty string', outAt(i));
      if (this.known.has(name) || outs.indexOf(name) !== i) throw bad(`${quote(name)} is computed twice`, outAt(i));
      if (op === 'lstm' && i > 0) {
        const state = /** @type {JsonMap} */ (this.recurrent).get(i === 1 ? 'hidden_out' : 'cell_out');
        if (name !== state) throw bad(`out[${i}] of the lstm is the state ${quote(state)} of 'recurrent'`, outAt(i));
      }
    });
    return [/** @type {string[]} */ (outs), outAt];
  }

  /**
   * @param {JsonMap} node
   * @param {string} ptr
   * @param {number[][]} xs
   * @returns {ValueShape[]}
   */
  linear(node, ptr, [x]) {
    const w = this.weight(node, 'weight', ptr, 2);
    if (x[x.length - 1] !== w[1])
      throw bad(`linear of width ${w[1]} applied to a value of shape ${show(x)}`, `${ptr}/weight`);
    this.vector(node, 'bias', ptr, w[0], true);
    return [[...x.slice(0, -1), w[0]]];
  }

  /**
   * @param {JsonMap} node
   * @param {string} ptr
   * @param {number[][]} xs
   * @param {Quantities} q
   * @returns {ValueShape[]}
   */
  conv2d(node, ptr, [x], q) {
    const w = this.weight(node, 'weight', ptr, 4);
    if (x[0] !== w[1])
      throw bad(
        `conv2d over ${w[1]} channels applied to a value of shape ${show(x)} (channels, height, width)`,
        `${ptr}/weight`,
      );
    this.vector(node, 'bias', ptr, w[0], true);
    /** @type {Record<string, bigint[]>} */
    const pairs = {};
    for (const p of OPERATIONS.conv2d.parameters) {
      if (p.type !== 'int_pair') continue;
      const v = node.get(p.name);
      const least = BigInt(/** @type {number} */ (p.least));
      if (!(Array.isArray(v) && v.length === 2 && v.every((n) => isInt(n) && n >= least && n <= MAX_SAFE)))
        throw bad(`${p.name} must be two integers >= ${p.least}`, `${ptr}/${p.name}`);
      pairs[p.name] = v;
    }
    // in bigint: a padding up to 2^53 - 1 gives sizes no double holds exactly, and the reader in Python computes them exactly
    const [[sh, sw], [ph, pw]] = [pairs.stride, pairs.padding];
    const [ih, iw] = [BigInt(x[1]) + 2n * ph, BigInt(x[2]) + 2n * pw];
    // the later of weight and padding (§11.2)
    if (ih < BigInt(w[2]) || iw < BigInt(w[3]))
      throw bad(
        `a ${w[2]}x${w[3]} kernel does not fit a ${x[1]}x${x[2]} input with padding ${ph}, ${pw}`,
        `${ptr}/padding`,
      );
    const h = Number((ih - BigInt(w[2])) / sh) + 1;
    const wd = Number((iw - BigInt(w[3])) / sw) + 1;
    const kernel = w[1] * w[2] * w[3];
    Object.assign(q, {
      kernel,
      padded: Number(BigInt(x[0]) * ih * iw),
      block: Math.min(h * wd * kernel, Math.max(POLICY_BLOCK_ELEMENTS, kernel)),
    });
    return [[w[0], h, wd]];
  }

  /**
   * @param {JsonMap} node
   * @param {string} ptr
   * @param {number[][]} xs
   * @returns {ValueShape[]}
   */
  activation(node, ptr, [x]) {
    const fn = node.get('fn'); // node() checked fn and the parameters allowed
    const params = Object.fromEntries(ACTIVATIONS[fn].parameters.map((p) => [p.name, p]));
    /** @type {Record<string, number>} */
    const values = {};
    for (const [k, p] of Object.entries(params)) {
      // in the order of the table of activations
      if (!node.has(k)) continue;
      const v = node.get(k);
      if (p.type === 'enum') {
        if (!(typeof v === 'string' && /** @type {string[]} */ (p.values).includes(v)))
          throw bad(`${k} must be one of ${quote(p.values)}`, pointerJoin(ptr, k));
      } else {
        values[k] = floatParameter(node, k, ptr);
        if (p.nonzero && values[k] === 0) throw bad(`${k} of ${fn} must not be 0`, pointerJoin(ptr, k));
      }
    }
    const ordered = ACTIVATIONS[fn].ordered;
    if (ordered) {
      // e.g. hardtanh: min_val <= max_val, either given or by default; at the later one given
      const [lo, hi] = ordered.map((k) => (k in values ? values[k] : /** @type {number} */ (params[k].default)));
      if (lo > hi)
        throw bad(
          `${ordered[0]} must not be greater than ${ordered[1]}`,
          pointerJoin(ptr, node.has(ordered[1]) ? ordered[1] : ordered[0]),
        );
    }
    return [x];
  }

  /**
   * @param {JsonMap} node
   * @param {string} ptr
   * @param {number[][]} xs
   * @returns {ValueShape[]}
   */
  prelu(node, ptr, [x]) {
    const w = this.weight(node, 'weight', ptr, 1);
    if (w[0] !== 1 && w[0] !== x[0])
      throw bad(
        `weight must have shape [1] or [${x[0]}] (the channels of a value of shape ${show(x)}), not ${show(w)}`,
        `${ptr}/weight`,
      );
    return [x];
  }

  /**
   * @param {JsonMap} node
   * @param {string} ptr
   * @param {number[][]} xs
   * @returns {ValueShape[]}
   */
  flatten(node, ptr, [x]) {
    return [[prod(x)]];
  }

  /**
   * @param {JsonMap} node
   * @param {string} ptr
   * @param {number[][]} xs
   * @returns {ValueShape[]}
   */
  concat(node, ptr, xs) {
    return [[xs.reduce((a, x) => a + prod(x), 0)]];
  }

  /**
   * @param {JsonMap} node
   * @param {string} ptr
   * @param {number[][]} xs
   * @returns {ValueShape[]}
   */
  layer_norm(node, ptr, [x]) {
    for (const key of ['weight', 'bias']) this.vector(node, key, ptr, x[x.length - 1], true);
    floatParameter(node, 'eps', ptr);
    return [x];
  }

  /**
   * @param {JsonMap} node
   * @param {string} ptr
   * @param {number[][]} xs
   * @returns {ValueShape[]}
   */
  batch_norm(node, ptr, [x]) {
    for (const [key, optional] of /** @type {[string, boolean][]} */ ([
      ['running_mean', false],
      ['running_var', false],
      ['weight', true],
      ['bias', true],
    ]))
      this.vector(node, key, ptr, x[0], optional);
    floatParameter(node, 'eps', ptr);
    return [x];
  }

  /**
   * @param {JsonMap} node
   * @param {string} ptr
   * @param {[number[], ValueShape, ValueShape]} xs
   * @param {Quantities} q
   * @returns {ValueShape[]}
   */
  lstm(node, ptr, [x, h, c], q) {
    const rec = /** @type {JsonMap} */ (this.recurrent); // node() checked it, the state names and the input's rank
    const layers = node.get('layers');
    const hidden = num(rec.get('hidden_size'));
    if (!(Array.isArray(layers) && layers.length === num(rec.get('layers'))))
      throw bad(`layers must be a list of ${rec.get('layers')} layers, as 'recurrent' says`, `${ptr}/layers`);
    let width = x[0];
    layers.forEach((/** @type {unknown} */ layer, /** @type {number} */ i) => {
      const lp = `${ptr}/layers/${i}`;
      if (!(isPlainMap(layer) && layer.size === LAYER.length && LAYER.every((k) => layer.has(k)))) {
        throw bad(
          'a layer must be a map with exactly weight_ih, weight_hh, bias_ih, bias_hh',
          membersPointer(layer, lp, LAYER),
        );
      }
      for (const [key, want] of /** @type {[string, number[]][]} */ ([
        ['weight_ih', [4 * hidden, width]],
        ['weight_hh', [4 * hidden, hidden]],
      ])) {
        if (!sameList(this.weight(layer, key, lp, 2), want))
          throw bad(`${key} must have shape ${show(want)}`, `${lp}/${key}`);
      }
      for (const key of ['bias_ih', 'bias_hh']) this.vector(layer, key, lp, 4 * hidden);
      width = hidden;
    });
    Object.assign(q, { gates: 4 * hidden, state: layers.length * hidden, width: x[0] });
    return [[hidden], h, c];
  }

  /**
   * The head, in the order of RLA_policy §8: op, the members missing, the members not allowed, in, the
   * parameters, the action space (at the head), sizes against it, the width of in, the cost.
   * @param {unknown} head
   * @param {JsonMap} actionSpace
   * @param {string} ptr
   */
  head(head, actionSpace, ptr) {
    if (!isPlainMap(head)) throw bad('the action head must be a map', ptr);
    if (!head.has('op')) throw bad("the action head lacks 'op'", ptr);
    const op = head.get('op');
    if (typeof op !== 'string' || !Object.hasOwn(HEADS, op)) throw bad(`unknown action head ${quote(op)}`, `${ptr}/op`);
    const spec = HEADS[op];
    const params = spec.parameters.map((p) => p.name);
    for (const k of ['in', ...params].sort()) if (!head.has(k)) throw bad(`the head ${op} lacks ${quote(k)}`, ptr);
    for (const k of head.keys())
      if (!['op', 'in', ...params].includes(k))
        throw bad(`the head ${op} has no parameter ${quote(k)}`, pointerJoin(ptr, k));
    const x = head.get('in');
    if (!isName(x) || !this.known.has(x)) throw bad(`the head reads ${quote(x)}, which is not computed`, `${ptr}/in`);
    const shape = this.shapeOf(x, `${ptr}/in`);
    if (shape.length !== 1) throw bad(`the head reads a vector, not a value of shape ${show(shape)}`, `${ptr}/in`);
    const width = shape[0];
    for (const p of spec.parameters) headParameter(head, p, ptr);
    const kinds = spec.spaces;
    const sp = actionSpace;
    if (!(isTagged(sp, 'space') && /** @type {readonly unknown[]} */ (kinds).includes(sp.get('kind'))))
      throw bad(`the head ${op} acts in a ${kinds.join(' or ')} action space`, ptr);
    const need = HEAD_WIDTHS[op](head, sp, ptr);
    if (width !== need)
      throw bad(`the head ${op} needs ${need} values per observation, the network gives ${width}`, `${ptr}/in`);
    const q = { in: width, out: width };
    this.cost += POLICY_NODE_COST + formula(spec.cost, q);
    if (this.cost > MAX_POLICY_OPERATIONS)
      throw limit('the nodes and the head cost more than MAX_POLICY_OPERATIONS per observation', ptr);
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
      const size = 4 * elements(/** @type {ValueShape} */ (this.known.get(name)));
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
      if (used > MAX_POLICY_MEMORY_BYTES)
        throw limit(
          `the evaluation needs ${used} bytes here, more than MAX_POLICY_MEMORY_BYTES per observation`,
          this.pointers[i],
        );
      if (used > peak) [peak, at] = [used, this.pointers[i]];
      memory.push(used);
    }
    return { peak, at, memory };
  }
}

/**
 * The checked 'recurrent' member, or null when there is none.
 * @param {unknown} rec
 * @param {Map<string, ValueShape>} known the inputs' shapes
 * @param {string} ptr
 * @returns {JsonMap | null}
 */
function recurrentOf(rec, known, ptr) {
  if (rec === undefined || rec === null) return null;
  if (!(isPlainMap(rec) && rec.size === RECURRENT.length && RECURRENT.every((k) => rec.has(k)))) {
    throw bad(
      `recurrent must be a map with exactly ${quote([...RECURRENT].sort())}`,
      membersPointer(rec, ptr, RECURRENT),
    );
  }
  /** @type {string[]} */
  const names = [];
  for (const k of ['hidden_in', 'cell_in', 'hidden_out', 'cell_out']) {
    // in the order of the table of §5.9
    const n = rec.get(k);
    if (!isName(n)) throw bad(`${k} must be a non-empty string`, `${ptr}/${k}`);
    if (known.has(n)) throw bad(`${k} ${quote(n)} is an observation input`, `${ptr}/${k}`);
    if (names.includes(n))
      throw bad(`${k} ${quote(n)} is another state name too: the four state names are distinct`, `${ptr}/${k}`);
    names.push(n);
  }
  for (const k of ['layers', 'hidden_size']) {
    if (!(isInt(rec.get(k)) && rec.get(k) >= 1n && rec.get(k) <= 1n << 24n))
      throw bad(`${k} must be an integer from 1 to 2^24`, `${ptr}/${k}`);
  }
  // the state is a value (RLA_policy §5.11)
  if (num(rec.get('layers')) * num(rec.get('hidden_size')) > MAX_POLICY_VALUE_ELEMENTS)
    throw limit('a recurrent state of more than MAX_POLICY_VALUE_ELEMENTS elements', `${ptr}/hidden_size`);
  return rec;
}

/**
 * Checks a description (the json.js tree under `policy`), inferring every
 * value's shape and what it costs. `used` is the archive's extensions_used.
 * Returns what one observation's evaluation costs (RLA_policy §5.11):
 * {operations, memoryBytes, peakAt, memory} (memory: the bytes at each node,
 * then at the head). Throws EXTENSION_INVALID (or
 * LIMIT_EXCEEDED) located in the member.
 * @param {unknown} value
 * @param {JsonMap | null | undefined} data the archive's data.json (its observation_space), when there is one
 * @param {string[]} [used]
 * @returns {Cost}
 */
export function check(value, data, used = []) {
  const base = '/' + KEY;
  if (!isPlainMap(value)) throw bad('the policy must be a map', base);
  for (const k of [...TOP_REQUIRED].sort()) if (!value.has(k)) throw bad(`the key ${quote(k)} is missing`, base); // §11.2: the object before its members
  for (const k of value.keys())
    if (!TOP_REQUIRED.includes(k) && !TOP_OPTIONAL.includes(k))
      throw bad(`unknown key ${quote(k)}`, pointerJoin(base, k));
  // the members in the order of the table of RLA_policy §3
  const known = observationShapes(value.get('observation_space'), `${base}/observation_space`);
  for (const k of ['normalize_images', 'vec_normalize']) {
    if (value.has(k) && typeof value.get(k) !== 'boolean') throw bad(`${k} must be a boolean`, `${base}/${k}`);
  }
  if (value.get('vec_normalize') === true) {
    if (!used.includes('RLA_vec_normalize'))
      throw bad('vec_normalize is true but the archive does not use RLA_vec_normalize', `${base}/vec_normalize`);
    // the statistics are checked against the data's observation space (RLA_vec_normalize §3)
    if (quote(outline(value.get('observation_space'))) !== quote(outline(data?.get('observation_space')))) {
      throw bad("vec_normalize is true but the observation space differs from the data's", `${base}/vec_normalize`);
    }
  }
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
  // nodes, after recurrent in the table, contradict it
  if (rec !== null && !shapes.lstmSeen) throw bad("'recurrent' is given but no lstm node uses it", `${base}/nodes`);
  if (!isTagged(value.get('action_space'), 'space')) throw bad('action_space must be a space', `${base}/action_space`);
  shapes.head(value.get('action'), value.get('action_space'), `${base}/action`);
  const { peak, at, memory } = shapes.memory();
  return { operations: shapes.cost, memoryBytes: peak, peakAt: at, memory };
}
