// Extension RLA_replay_buffer (spec/extensions/RLA_replay_buffer.md): the
// reader's view, and checking a remote archive's buffer without fetching it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { open, validate, HttpSource, NDArray, Space } from '../src/index.js';
import { OPEN_READAHEAD_BYTES } from '../src/limits.js';
import { TAIL_BYTES } from '../src/sources.js';
import { layOut } from './helpers/large_archive.mjs';
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
  assert.deepEqual(
    rb.her.infos[0].map((i) => i.is_success),
    [false, true],
  );
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
  assert.deepEqual(
    Object.keys(dump.tensors.RLA_replay_buffer).sort(),
    TRANSITIONS.map((k) => `replay_buffer/${k}`).sort(),
  );
  assert.deepEqual(dump.tensors.RLA_replay_buffer['replay_buffer/observations'].shape, [80, 4, 3]);
});

test('an archive without the extension gives null', async () => {
  const ar = await open(vector('minimal'));
  assert.equal(await ar.replayBuffer(), null);
});

test('a malformed buffer is reported by the accessor with its code and pointer', async () => {
  const ar = await open(vector('replay-buffer-her-ep-start-range', 'invalid'));
  await assert.rejects(
    ar.replayBuffer(),
    (e) =>
      e.code === 'EXTENSION_INVALID' &&
      e.member === 'extensions/RLA_replay_buffer/replay_buffer.json' &&
      e.pointer === '/replay_buffer/her/ep_start',
  );
});

// ---------------------------------------------------------------- a remote archive with a 113 MB buffer
//
// An Atari-sized DQN buffer: 4000 rows of four 84x84 grey frames (U8), one
// environment, optimize_memory_usage (no next_observations), Discrete(6)
// actions: 112,896,000 bytes of observations. It is laid out as the reference
// writer lays it out (spec §12; large_archive.mjs), in one buffer built once
// per run of this file (about 0.3 s): nothing of it is in the repository.

const EXTENSION = 'RLA_replay_buffer';
const GROUP = 'RLA_replay_buffer';
const ROWS = 4000;
const FRAME = [4, 84, 84];
const ROW_BYTES = FRAME.reduce((a, d) => a * d, 1);
const PATTERN = Uint8Array.from({ length: ROW_BYTES }, (_, k) => (k * 31) & 0xff);
const STORED = ['observations', 'actions', 'rewards', 'dones', 'timeouts']; // next_observations is null

/** Observation row i: a fixed pattern whose first four bytes are i (little-endian), so that no two rows are alike. */
function frameRow(i) {
  const row = PATTERN.slice();
  new DataView(row.buffer).setUint32(0, i, true);
  return row;
}

const reward = (i) => (i % 8) * 0.25;
const done = (i) => (i % 500 === 499 ? 1 : 0);
const ndref = (group, name, dtype, shape) => ({ $type: 'ndarray', dtype, shape, ref: { group, name } });
const frames = (group, prefix) => ({
  $type: 'space',
  kind: 'box',
  dtype: 'U8',
  shape: FRAME,
  low: ndref(group, `${prefix}/observation_space/low`, 'U8', FRAME),
  high: ndref(group, `${prefix}/observation_space/high`, 'U8', FRAME),
});
const DISCRETE = { $type: 'space', kind: 'discrete', n: 6, start: 0, dtype: 'I64' };

function atariBuffer() {
  const layouts = {
    observations: ['U8', [ROWS, 1, ...FRAME]],
    actions: ['I64', [ROWS, 1, 1]],
    rewards: ['F32', [ROWS, 1]],
    dones: ['F32', [ROWS, 1]],
    timeouts: ['F32', [ROWS, 1]],
  };
  const value = {
    class: 'ReplayBuffer',
    buffer_size: ROWS,
    n_envs: 1,
    pos: 1234,
    full: true,
    optimize_memory_usage: true,
    handle_timeout_termination: false,
    observation_space: frames(GROUP, 'replay_buffer'),
    action_space: DISCRETE,
    observations: null,
    next_observations: null,
    actions: null,
    rewards: null,
    dones: null,
    timeouts: null,
    her: null,
    n_step: null,
  };
  for (const [k, [dtype, shape]] of Object.entries(layouts))
    value[k] = ndref(GROUP, `replay_buffer/${k}`, dtype, shape);
  const tensor = (k, fill) => ({ [`replay_buffer/${k}`]: { dtype: layouts[k][0], shape: layouts[k][1], fill } });
  const f32 = (f) => (b) => new Float32Array(b.buffer, b.byteOffset, b.length / 4).forEach((_, i, a) => (a[i] = f(i)));
  const bounds = (prefix) => ({
    [`${prefix}/observation_space/low`]: { dtype: 'U8', shape: FRAME, fill: () => {} },
    [`${prefix}/observation_space/high`]: { dtype: 'U8', shape: FRAME, fill: (b) => b.fill(255) },
  });
  const observations = (b) => {
    // frameRow(i) for every i, written in place (no copy of a row)
    const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < ROWS; i++) {
      b.set(PATTERN, i * ROW_BYTES);
      view.setUint32(i * ROW_BYTES, i, true);
    }
  };
  const actions = (b) => new BigInt64Array(b.buffer, b.byteOffset, ROWS).forEach((_, i, a) => (a[i] = BigInt(i % 6)));
  const { bytes, tensors } = layOut({
    data: { data: { observation_space: frames('arrays', 'data'), action_space: DISCRETE } },
    groups: {
      arrays: bounds('data'),
      [GROUP]: {
        ...bounds('replay_buffer'),
        ...tensor('observations', observations),
        ...tensor('actions', actions),
        ...tensor('rewards', f32(reward)),
        ...tensor('dones', f32(done)),
        ...tensor('timeouts', () => {}),
      },
    },
    extensions: { 'extensions/RLA_replay_buffer/replay_buffer.json': JSON.stringify({ replay_buffer: value }) },
    extensionsUsed: [EXTENSION],
  });
  return { bytes, tensors, value };
}

let built = null;
const atari = () => (built ??= atariBuffer());

/** The written value as JSON.stringify shows the reader's decoded one: no `$type`, arrays as {dtype, shape, data, ref}. */
function asDecoded(v) {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(asDecoded);
  if (v.$type === 'ndarray') return { dtype: v.dtype, shape: v.shape, data: null, ref: v.ref };
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => k !== '$type')
      .map(([k, x]) => [k, asDecoded(x)]),
  );
}

test('the 113 MB buffer archive is valid and holds at least 100 MiB of transitions', async () => {
  const { bytes, tensors } = atari();
  const transitions = STORED.reduce((a, k) => a + tensors[GROUP][`replay_buffer/${k}`].nbytes, 0);
  assert.ok(transitions >= 100 * 1024 * 1024, `${transitions} bytes of transitions`);
  const report = await validate(bytes); // every member's CRC-32 and SHA-256, every extension rule
  assert.deepEqual([report.valid, report.issues], [true, []]);
});

test('a remote archive with a 113 MB buffer: opening, checking and describing it and two small tensors fetch little more than its directory; a row range fetches that range', async (t) => {
  const { bytes, tensors, value } = atari();
  const at = tensors[GROUP];
  const stored = STORED.map((k) => at[`replay_buffer/${k}`]);
  // The directory: every byte that is not a transition (ZIP records, data.json, the manifest, the extension's
  // member, the safetensors headers, and the spaces' bounds, whose bytes RLA_replay_buffer §4 rule 8 compares).
  const directory = bytes.length - stored.reduce((a, r) => a + r.nbytes, 0);
  const small = ['rewards', 'timeouts'].map((k) => at[`replay_buffer/${k}`]); // rewards lies in the first 64 KiB, timeouts runs past it
  // Opening fetches the last TAIL_BYTES of the file whatever they hold (README), then what it needs, with the
  // first OPEN_READAHEAD_BYTES of each of the two tensor members (their safetensors headers, and what follows).
  const bound = directory + TAIL_BYTES + 2 * OPEN_READAHEAD_BYTES + small.reduce((a, r) => a + r.nbytes, 0);
  assert.ok(bound < 1_000_000, `the bound ${bound} is a small part of ${bytes.length} bytes`);
  const srv = await serve({ '/atari.rlarchive': bytes });
  try {
    const source = await HttpSource.open(srv.url('/atari.rlarchive'));
    const ar = await open(source);
    await ar.checkExtensions();
    const rb = await ar.replayBuffer();
    const described = JSON.parse(JSON.stringify(rb));
    assert.deepEqual(described, asDecoded(value));
    assert.equal(rb.observations.data, null);
    const timeouts = await rb.timeouts.load();
    assert.ok(timeouts instanceof Float32Array && timeouts.length === ROWS && timeouts.every((x) => x === 0));
    const rewards = await rb.rewards.load();
    assert.deepEqual(
      [...rewards],
      Array.from({ length: ROWS }, (_, i) => reward(i)),
    );
    const [opened, requests] = [srv.stats.bytes, srv.stats.requests];
    assert.equal(ar.bytesFetched, opened, "the reader's count and the server's agree");
    assert.ok(
      opened < bound,
      `opening, checking, describing and two small tensors fetched ${opened} bytes (bound ${bound}) of ${bytes.length}`,
    );
    assert.equal(rb.observations.data, null, 'the observations were not loaded');
    // Past the first request (the end of the file, which holds the end of the observations), no
    // request reads a byte of the observations.
    const obs = at['replay_buffer/observations'];
    const [tail, ...later] = srv.stats.ranges;
    assert.deepEqual(tail, [bytes.length - TAIL_BYTES, bytes.length], 'opening reads the end of the file first');
    assert.deepEqual(
      later.filter(([s, e]) => s < obs.offset + obs.nbytes && e > obs.offset),
      [],
      'no later request reads the observations',
    );

    // rows [2000, 2010) of the observations, from the offset the reader gives
    const info = ar.tensorInfo(GROUP).find((x) => x.name === 'replay_buffer/observations');
    assert.deepEqual(
      [info.offset, info.nbytes, info.shape],
      [at['replay_buffer/observations'].offset, ROWS * ROW_BYTES, [ROWS, 1, ...FRAME]],
    );
    const rowBytes = info.nbytes / info.shape[0];
    const [first, count] = [2000, 10];
    const got = await source.read(info.offset + first * rowBytes, count * rowBytes);
    const fetched = srv.stats.bytes - opened;
    assert.ok(
      fetched >= count * rowBytes && fetched < (count + 1) * rowBytes,
      `rows ${first}..${first + count} (${count * rowBytes} bytes) fetched ${fetched} bytes`,
    );
    for (let k = 0; k < count; k++)
      assert.deepEqual(got.subarray(k * rowBytes, (k + 1) * rowBytes), frameRow(first + k), `row ${first + k}`);
    assert.equal(ar.bytesFetched, srv.stats.bytes);
    t.diagnostic(
      `${bytes.length}-byte archive (directory ${directory} bytes): opening, checking, describing the buffer and loading rewards and timeouts fetched ${opened} bytes in ${requests} requests (bound ${bound}); ${count} rows of observations fetched ${fetched} bytes`,
    );
    await ar.close();
  } finally {
    await srv.close();
  }
});
