// The description checker of RLA_policy (extensions/policy/description.js): its tables
// come from the registry (extensions/policy/ops.js, generated from spec/policy_ops.json),
// and it charges what §5.11 says: every node at least POLICY_NODE_COST, the
// peak memory with values freed after their last reader, LIMIT_EXCEEDED at the
// node that passes a limit. Expected values are computed here from the
// registry's constants and the spec's rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  check,
  ACTIVATION_PARAMETERS,
  OPERATIONS as CHECKED_OPERATIONS,
  HEADS as CHECKED_HEADS,
} from '../src/extensions/policy/description.js';
import {
  ACTIVATIONS,
  ACTIVATION_DEFAULTS,
  HEADS,
  OPERATIONS,
  MAX_POLICY_MEMORY_BYTES,
  MAX_POLICY_OPERATIONS,
  MAX_POLICY_VALUE_ELEMENTS,
  POLICY_BLOCK_ELEMENTS,
  POLICY_NODE_COST,
} from '../src/extensions/policy/ops.js';
import { parseJson } from '../src/json.js';

const NODE = POLICY_NODE_COST;
const nd = (shape) => ({ $type: 'ndarray', dtype: 'F32', shape, base64: '' });
const discrete = (n) => ({ $type: 'space', kind: 'discrete', n, start: 0, dtype: 'I64' });
const multiBinary = (n) => ({ $type: 'space', kind: 'multi_binary', n }); // a float observation of n elements, no arrays
const relu = (src, out, fn = 'relu', params = {}) => ({ op: 'activation', in: [src], out, fn, ...params });

/** A description over `obs`, as the checker sees the parsed JSON (json.js tree). */
function tree(obs, nodes, head, action) {
  const text = JSON.stringify({
    observation_space: obs,
    action_space: action,
    normalize_images: false,
    nodes,
    action: head,
  });
  // an integer-valued float must stay a float literal: the writer writes 2.0, not 2
  return parseJson(new TextEncoder().encode(text.replace(/"__float__(-?[0-9.e+]+)"/g, '$1')));
}
const float = (v) => `__float__${Number.isInteger(v) ? v.toFixed(1) : v}`;

function refused(t) {
  try {
    check(t);
  } catch (e) {
    return [e.code, e.pointer];
  }
  return null;
}

test('the checker takes its tables from the registry', () => {
  assert.equal(CHECKED_OPERATIONS, OPERATIONS);
  assert.equal(CHECKED_HEADS, HEADS);
  assert.deepEqual(Object.keys(ACTIVATION_PARAMETERS), Object.keys(ACTIVATIONS));
  for (const [fn, params] of Object.entries(ACTIVATION_DEFAULTS))
    assert.deepEqual(Object.keys(ACTIVATION_PARAMETERS[fn]), Object.keys(params));
  const source = readFileSync(new URL('../src/extensions/policy/description.js', import.meta.url), 'utf8');
  for (const name of ['leaky_relu', 'hardsigmoid', 'softsign', 'mish'])
    assert.ok(!source.includes(`'${name}'`) && !source.includes(`${name}:`), name);
  assert.ok(Object.isFrozen(OPERATIONS.linear.cost));
  assert.equal(MAX_POLICY_VALUE_ELEMENTS, 2 ** 24);
  assert.ok(POLICY_BLOCK_ELEMENTS > 0 && MAX_POLICY_MEMORY_BYTES > 4 * MAX_POLICY_VALUE_ELEMENTS);
});

test('a zero-width linear still costs the node cost and its outputs', () => {
  const t = tree(
    multiBinary(0),
    [{ op: 'linear', in: ['obs'], out: 'y', weight: nd([5, 0]), bias: null }],
    { op: 'argmax', in: 'y' },
    discrete(5),
  );
  assert.equal(check(t).operations, NODE + 5 + (NODE + 5));
});

test('the cost limit is reached exactly, then passed at the node or the head', () => {
  const n = 2 ** 24 - NODE; // each flatten costs NODE + n = 2^24, the argmax head as much
  const chain = (k) =>
    tree(
      discrete(n),
      Array.from({ length: k }, (_, i) => ({ op: 'flatten', in: [i === 0 ? 'obs' : `f${i - 1}`], out: `f${i}` })),
      { op: 'argmax', in: `f${k - 1}` },
      discrete(n),
    );
  assert.equal(check(chain(255)).operations, MAX_POLICY_OPERATIONS);
  assert.deepEqual(refused(chain(256)), ['LIMIT_EXCEEDED', '/policy/action']);
  assert.deepEqual(refused(chain(257)), ['LIMIT_EXCEEDED', '/policy/nodes/256']);
});

test('a chain frees its values; values live until their last reader', () => {
  const n = 1000;
  const ws = ACTIVATIONS.relu.workspace * n;
  const chain = tree(
    discrete(n),
    Array.from({ length: 20 }, (_, i) => relu(i === 0 ? 'obs' : `a${i - 1}`, `a${i}`)),
    { op: 'argmax', in: 'a19' },
    discrete(n),
  );
  const c = check(chain);
  assert.deepEqual(c.memory.slice(0, 20), new Array(20).fill(8 * n + ws));
  assert.equal(c.memoryBytes, 8 * n + ws);
  assert.equal(c.peakAt, '/policy/nodes/0');
  const k = 6;
  const kept = (size, count) =>
    tree(
      discrete(size),
      [
        ...Array.from({ length: count }, (_, i) => relu('obs', `a${i}`)),
        ...Array.from({ length: count }, (_, j) => ({
          op: 'flatten',
          in: [`a${count - 1 - j}`],
          out: `f${count - 1 - j}`,
        })),
      ],
      { op: 'argmax', in: 'f0' },
      discrete(size),
    );
  const m = check(kept(n, k)).memory;
  assert.deepEqual(
    m.slice(0, k),
    Array.from({ length: k }, (_, i) => 4 * n * (i + 2) + ws),
  );
  assert.deepEqual(
    m.slice(k, 2 * k),
    Array.from({ length: k }, (_, j) => 4 * n * (k - j + 1)),
  );
  const big = check(kept(2 ** 24, 13));
  assert.equal(big.memoryBytes, MAX_POLICY_MEMORY_BYTES);
  assert.deepEqual(refused(kept(2 ** 24, 14)), ['LIMIT_EXCEEDED', '/policy/nodes/13']);
});

test('degenerate parameters are refused at the parameter, defined ones accepted', () => {
  const one = (params) =>
    tree(
      multiBinary(2),
      [relu('obs', 'y', params.fn, { ...params, fn: params.fn })],
      { op: 'argmax', in: 'y' },
      discrete(2),
    );
  for (const [params, where] of [
    [{ fn: 'softplus', beta: float(0) }, 'beta'],
    [{ fn: 'celu', alpha: 0 }, 'alpha'],
    [{ fn: 'hardtanh', min_val: float(2) }, 'min_val'],
    [{ fn: 'hardtanh', min_val: float(0.5), max_val: float(0.25) }, 'max_val'],
    [{ fn: 'elu', alpha: { $type: 'float', value: 'inf' } }, 'alpha'],
    [{ fn: 'leaky_relu', negative_slope: 1e39 }, 'negative_slope'],
  ])
    assert.deepEqual(refused(one(params)), ['EXTENSION_INVALID', `/policy/nodes/0/${where}`], JSON.stringify(params));
  for (const params of [
    { fn: 'softplus', beta: float(-1) },
    { fn: 'hardtanh', min_val: float(0.5), max_val: float(0.5) },
    { fn: 'elu', alpha: float(0) },
  ]) {
    assert.equal(refused(one(params)), null, JSON.stringify(params));
  }
});

test('prelu takes one slope or one per channel of its input', () => {
  const one = (w) =>
    tree(
      multiBinary(4),
      [{ op: 'prelu', in: ['obs'], out: 'y', weight: nd(w) }],
      { op: 'argmax', in: 'y' },
      discrete(4),
    );
  assert.equal(check(one([1])).operations, NODE + 2 * 4 + (NODE + 4));
  assert.equal(refused(one([4])), null);
  assert.deepEqual(refused(one([3])), ['EXTENSION_INVALID', '/policy/nodes/0/weight']);
  assert.deepEqual(refused(one([1, 4])), ['EXTENSION_INVALID', '/policy/nodes/0/weight']);
});

test('each issue is where RLA_policy §8 puts it: discriminators, then members missing, not allowed, then in, out, parameters', () => {
  const box3 = { $type: 'space', kind: 'box', low: nd([3]), high: nd([3]), shape: [3], dtype: 'F32' };
  const lin = { op: 'linear', in: ['obs'], out: 'h', weight: nd([4, 3]), bias: null };
  const rec = { hidden_in: 'hs', cell_in: 'cs', hidden_out: 'hs2', cell_out: 'cs2', layers: 1, hidden_size: 2 };
  const lstm = {
    op: 'lstm',
    in: ['obs', 'hs', 'cs'],
    out: ['y', 'hs2', 'cs2'],
    layers: [{ weight_ih: nd([8, 3]), weight_hh: nd([8, 2]), bias_ih: nd([8]), bias_hh: nd([8]) }],
  };
  const describe = (nodes, over = {}) =>
    parseJson(
      new TextEncoder().encode(
        JSON.stringify({
          observation_space: box3,
          action_space: discrete(4),
          normalize_images: false,
          nodes,
          action: { op: 'argmax', in: 'h' },
          ...over,
        }),
      ),
    );
  const places = [
    [describe([{ ...lin, op: 7, zeta: 1 }]), '/policy/nodes/0/op'], // the discriminator first
    [describe([{ op: 'linear', zeta: 1 }]), '/policy/nodes/0'], // a member missing: the object
    [describe([{ ...lin, zeta: 1, alpha: 2, in: 5 }]), '/policy/nodes/0/zeta'], // not allowed, the first in document order
    [
      describe([{ op: 'activation', in: ['obs'], out: 'h', fn: 'softplus', threshold: 'x', beta: 0 }]),
      '/policy/nodes/0/beta',
    ], // the table's order
    [describe([{ op: 'concat', in: ['obs', ''], out: 'h' }]), '/policy/nodes/0/in/1'], // an element
    [
      describe([{ ...lstm, in: ['obs', 'cs', 'hs'] }], { recurrent: rec, action: { op: 'argmax', in: 'y' } }),
      '/policy/nodes/0/in/1',
    ],
    [describe([{ ...lstm, in: 5 }]), '/policy/nodes/0'], // an lstm without recurrent: the operation, before in
    [describe([lin], { recurrent: rec }), '/policy/nodes'], // recurrent and no lstm: the nodes, after recurrent
    [describe([lin], { recurrent: { ...rec, cell_out: 'hs2' } }), '/policy/recurrent/cell_out'],
    [describe([lin], { action: { op: 'box', in: 'h', squash: 'sigmoid' } }), '/policy/action/squash'], // the head's parameters before the space
    [describe([lin], { action: { op: 'argmax' } }), '/policy/action'],
  ];
  for (const [t, where] of places) assert.deepEqual(refused(t), ['EXTENSION_INVALID', where], where);
});
