// The inspector's DOM-free parts in Node: the bytes read counted once
// (web/source.js), the member names of a plain zip and the command line's
// advice for a Stable-Baselines model (web/conversion.js), PyTorch's usual
// order of parameter names and of tensor groups, and an optimizer's state by
// the parameters its `param_tensors` name, else guessed (web/optimizers.js).
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { MemorySource, open } from '../src/index.js';
import { SharedSource, addRange } from '../web/source.js';
import { zipMemberNames, conversionHint } from '../web/conversion.js';
import { compareParameterNames, optimizerLayout, orderGroups } from '../web/optimizers.js';
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
