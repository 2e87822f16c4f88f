// The inspector's DOM-free parts in Node: the bytes read counted once
// (web/source.js), the member names of a plain zip and the command line's
// advice for a Stable-Baselines model (web/conversion.js), PyTorch's usual
// order of parameter names and of tensor groups, and an optimizer's state by
// the parameters its `param_tensors` name, else guessed (web/optimizers.js).
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { MemorySource, NDArray, open } from '../src/index.js';
import { SharedSource, addRange } from '../web/source.js';
import { zipMemberNames, conversionHint } from '../web/conversion.js';
import { ALTERNATIVES_SHOWN, compareParameterNames, optimizerLayout, orderGroups } from '../web/optimizers.js';
import { zip, enc } from './helpers/build.mjs';

test('inspector: read so far counts each byte once, never more than the file', async () => {
  assert.deepEqual(
    addRange(
      [
        [0, 10],
        [20, 30],
      ],
      5,
      25,
    ),
    [[0, 30]],
  );
  assert.deepEqual(addRange([[0, 10]], 10, 12), [[0, 12]]);
  assert.deepEqual(addRange([[20, 30]], 0, 5), [
    [0, 5],
    [20, 30],
  ]);
  const bytes = new Uint8Array(1000).map((_, i) => i & 255);
  const src = new SharedSource(new MemorySource(bytes));
  for (const [o, n] of [
    [0, 600],
    [400, 600],
    [0, 1000],
    [990, 10],
  ])
    await src.read(o, n);
  assert.equal(src.bytesRead, 2210);
  assert.equal(src.transferred, 1000);
});

test("inspector: a Stable-Baselines zip gets the command line's advice; other zips none", async () => {
  const names = (entries) => zipMemberNames(new MemorySource(zip(entries.map((name) => ({ name, data: enc('x') })))));
  const sb3 = await names([
    'data',
    'pytorch_variables.pth',
    'policy.pth',
    'policy.optimizer.pth',
    '_stable_baselines3_version',
  ]);
  assert.deepEqual(sb3, [
    'data',
    'pytorch_variables.pth',
    'policy.pth',
    'policy.optimizer.pth',
    '_stable_baselines3_version',
  ]);
  assert.equal(
    conversionHint(sb3, 'model.zip'),
    'this is a Stable-Baselines3 model: convert it with: rlarchive import-sb3 model.zip OUT.rlarchive',
  );
  assert.equal(
    conversionHint(await names(['data', 'parameters', 'parameter_list']), 'm.zip'),
    'this is a Stable-Baselines (SB2) model: convert it with: rlarchive import-sb2 m.zip OUT.rlarchive',
  );
  assert.equal(conversionHint(await names(['notes.txt']), 'x.zip'), '');
  assert.equal(await zipMemberNames(new MemorySource(enc('not a zip at all, just some text'))), null);
  assert.equal(conversionHint(null, 'x'), '');
});

test("inspector: parameter names in PyTorch's usual order; policy first, optimizers last", () => {
  const names = [
    'value_net.bias',
    'mlp_extractor.policy_net.10.weight',
    'mlp_extractor.policy_net.2.bias',
    'mlp_extractor.policy_net.2.weight',
    'action_net.weight',
  ];
  assert.deepEqual([...names].sort(compareParameterNames), [
    'action_net.weight',
    'mlp_extractor.policy_net.2.weight',
    'mlp_extractor.policy_net.2.bias',
    'mlp_extractor.policy_net.10.weight',
    'value_net.bias',
  ]);
  assert.deepEqual(orderGroups(['optimizer.actor.optimizer', 'arrays', 'policy', 'variables']), [
    'policy',
    'arrays',
    'variables',
    'optimizer.actor.optimizer',
  ]);
});

/** An archive as optimizerLayout reads it: `n` policy parameters (all of one shape, or each of its own) and Adam's state for each. */
function optimizerArchive(n, oneShape) {
  const shape = (i) => (oneShape ? [4] : [i + 1]);
  const group = 'optimizer.policy.optimizer';
  const state = new Map();
  for (let i = 0; i < n; i++)
    state.set(String(i), { exp_avg: new NDArray('F32', shape(i), null, { group, name: `state/${i}/exp_avg` }) });
  return {
    groups: ['policy', group],
    tensorInfo: (g) =>
      g === 'policy'
        ? Array.from({ length: n }, (_, i) => ({ name: `${i}.weight`, dtype: 'F32', shape: shape(i) }))
        : Array.from({ length: n }, (_, i) => ({ name: `state/${i}/exp_avg`, dtype: 'F32', shape: shape(i) })),
    optimizers: { 'policy.optimizer': { state, param_groups: [{ params: Array.from({ length: n }, (_, i) => i) }] } },
  };
}

/** Calls of the array methods a shape comparison can use, while `fn` runs. */
function shapeComparisons(fn) {
  let calls = 0;
  const saved = { every: Array.prototype.every, join: Array.prototype.join };
  for (const [k, f] of Object.entries(saved))
    Array.prototype[k] = function (...args) {
      calls++;
      return f.apply(this, args);
    };
  try {
    return [fn(), calls];
  } finally {
    Object.assign(Array.prototype, saved);
  }
}

test('inspector: the optimizer layout is linear in the parameters, and lists a bounded number of alternatives', () => {
  const n = 400;
  for (const oneShape of [true, false]) {
    const [small, few] = shapeComparisons(() => optimizerLayout(optimizerArchive(n, oneShape), 'policy.optimizer'));
    const [large, many] = shapeComparisons(() =>
      optimizerLayout(optimizerArchive(4 * n, oneShape), 'policy.optimizer'),
    );
    assert.ok(many <= 4.5 * few, `shape comparisons ${few} for ${n} parameters, ${many} for ${4 * n}`);
    assert.equal(large.params.length, 4 * n);
    for (const [i, p] of large.params.entries()) {
      assert.equal(p.parameter.name, `${i}.weight`); // in order, each parameter once
      assert.equal(p.certain, !oneShape);
      assert.equal(p.sameShape, oneShape ? 4 * n - 1 : 0);
      assert.equal(p.alternatives.length, Math.min(p.sameShape, ALTERNATIVES_SHOWN));
      assert.ok(!p.alternatives.includes(p.parameter.name));
    }
    assert.equal(small.params.length, n);
  }
  const groups = ['optimizer.a', 'x', 'policy', 'y', 'optimizer.b'];
  assert.deepEqual(orderGroups(groups), ['policy', 'x', 'y', 'optimizer.a', 'optimizer.b']);
});

test("inspector: an optimizer's state under the names param_tensors records; without them, guessed and said so", async () => {
  const vector = (name) => open(readFileSync(new URL(`../../test-vectors/valid/${name}.rlarchive`, import.meta.url)));
  const named = await vector('optimizer-param-tensors');
  const layout = optimizerLayout(named, 'policy.optimizer');
  // the ids are not positions (params [7, 2] and [5]) and the state lists them in another order: each by its id
  assert.deepEqual(
    layout.params.map((p) => [p.key, p.parameter?.name, p.recorded]),
    [
      ['7', 'net.0.weight', true],
      ['2', 'net.0.bias', true],
      ['5', 'log_std', true],
    ],
  );
  assert.deepEqual(layout.other, []);
  const old = await vector('sac-like-agent'); // written without param_tensors
  const guessed = optimizerLayout(old, 'actor.optimizer');
  assert.ok(guessed.params.length > 0 && guessed.params.every((p) => !p.recorded));
  await named.close();
  await old.close();
});
