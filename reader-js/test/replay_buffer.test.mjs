// Extension RLA_replay_buffer (spec/extensions/RLA_replay_buffer.md): the
// reader's view, and checking a remote archive's buffer without fetching it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { open, NDArray, Space } from '../src/index.js';
import { archive, b64, bytesOf } from './helpers/build.mjs';
import { serve } from './helpers/server.mjs';

const vectorsDir = new URL('../../test-vectors/', import.meta.url);
const vector = (id, kind = 'valid') => readFileSync(new URL(`${kind}/${id}.rlarchive`, vectorsDir));
const TRANSITIONS = ['observations', 'next_observations', 'actions', 'rewards', 'dones', 'timeouts'];

test('a HER buffer: its values, spaces, bookkeeping and inline arrays', async () => {
  const ar = await open(vector('replay-buffer-her'));
  const rb = await ar.replayBuffer();
  assert.equal(rb.class, 'HerReplayBuffer');
  assert.deepEqual([rb.buffer_size, rb.n_envs, rb.pos, rb.full], [6, 2, 0, true]);
  assert.ok(rb.observation_space instanceof Space && rb.observation_space.kind === 'dict');
  assert.deepEqual(Object.keys(rb.observations), ['observation', 'achieved_goal', 'desired_goal']);
  assert.deepEqual(rb.observations.achieved_goal.shape, [6, 2, 2]);
  assert.equal(rb.her.goal_selection_strategy, 'future');
  const starts = await rb.her.ep_start.load();
  assert.ok(starts instanceof BigInt64Array);
  assert.deepEqual([...starts].map(Number), [0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 3, 3]);
  assert.equal(rb.her.infos.length, 6);
  assert.deepEqual(rb.her.infos[0].map((i) => i.is_success), [false, true]);
  assert.equal(rb.n_step, null);
});

test('referenced arrays are loaded on demand; the dump shows the group like any other', async () => {
  const ar = await open(vector('replay-buffer-several-envs'));
  const rb = await ar.replayBuffer();
  for (const k of TRANSITIONS) {
    assert.ok(rb[k] instanceof NDArray, k);
    assert.equal(rb[k].data, null, `${k} not loaded yet`);
    assert.deepEqual(rb[k].ref, { group: 'RLA_replay_buffer', name: `replay_buffer/${k}` });
  }
  const actions = await rb.actions.load();
  assert.ok(actions instanceof BigInt64Array && actions.length === 80 * 4);
  const dump = JSON.parse(await ar.dump());
  assert.deepEqual(Object.keys(dump.tensors.RLA_replay_buffer).sort(), TRANSITIONS.map((k) => `replay_buffer/${k}`).sort());
  assert.deepEqual(dump.tensors.RLA_replay_buffer['replay_buffer/observations'].shape, [80, 4, 3]);
});

test('an archive without the extension gives null', async () => {
  const ar = await open(vector('minimal'));
  assert.equal(await ar.replayBuffer(), null);
});

test('a malformed buffer is reported by the accessor with its code and pointer', async () => {
  const ar = await open(vector('replay-buffer-her-ep-start-range', 'invalid'));
  await assert.rejects(ar.replayBuffer(), (e) => e.code === 'EXTENSION_INVALID' && e.member === 'extensions/RLA_replay_buffer/replay_buffer.json' && e.pointer === '/replay_buffer/her/ep_start');
});

// ---------------------------------------------------------------- a remote archive with a ~20 MB buffer

const B = 46_000;
const N = 2;

function box(n) {
  const bound = (v) => ({ $type: 'ndarray', dtype: 'F32', shape: [n], base64: b64(bytesOf(new Float32Array(n).fill(v))) });
  return { $type: 'space', kind: 'box', dtype: 'F32', shape: [n], low: bound(-1), high: bound(1) };
}

function bigArchive() {
  const shapes = { observations: [B, N, 24], next_observations: [B, N, 24], actions: [B, N, 4], rewards: [B, N], dones: [B, N], timeouts: [B, N] };
  const tensors = {};
  const value = {
    class: 'ReplayBuffer', buffer_size: B, n_envs: N, pos: 7, full: true, optimize_memory_usage: false, handle_timeout_termination: true,
    observation_space: box(24), action_space: box(4),
  };
  for (const [k, shape] of Object.entries(shapes)) {
    const data = new Float32Array(shape.reduce((a, d) => a * d, 1));
    for (let i = 0; i < data.length; i += 97) data[i] = i % 7;
    tensors[`replay_buffer/${k}`] = { dtype: 'F32', shape, data: bytesOf(data) };
    value[k] = { $type: 'ndarray', dtype: 'F32', shape, ref: { group: 'RLA_replay_buffer', name: `replay_buffer/${k}` } };
  }
  value.her = null;
  value.n_step = null;
  const total = Object.values(tensors).reduce((a, t) => a + t.data.length, 0);
  const bytes = archive({
    data: { data: { observation_space: box(24), action_space: box(4) } },
    tensors: { RLA_replay_buffer: tensors },
    extensions: { 'extensions/RLA_replay_buffer/replay_buffer.json': JSON.stringify({ replay_buffer: value }) },
    manifest: (m) => ({ ...m, extensions_used: ['RLA_replay_buffer'] }),
  });
  return { bytes, total, rewards: tensors['replay_buffer/rewards'] };
}

test('a remote archive: opening and checking the buffer fetches none of it, one tensor fetches only itself', async () => {
  const { bytes, total, rewards } = bigArchive();
  assert.ok(total > 20_000_000, `${total} bytes of transitions`);
  const srv = await serve({ '/rb.rlarchive': bytes });
  try {
    const ar = await open(srv.url('/rb.rlarchive'));
    await ar.checkExtensions();
    const rb = await ar.replayBuffer();
    const opened = srv.stats.bytes;
    assert.ok(opened < 200_000, `opening and checking transferred ${opened} of ${bytes.length} bytes`);
    assert.deepEqual(rb.rewards.shape, [B, N]);
    assert.equal(rb.rewards.data, null);
    const got = await rb.rewards.load();
    const fetched = srv.stats.bytes - opened;
    assert.ok(fetched >= rewards.data.length && fetched < rewards.data.length + 100_000, `reading rewards transferred ${fetched} bytes`);
    assert.deepEqual(bytesOf(got), rewards.data);
  } finally {
    await srv.close();
  }
});
