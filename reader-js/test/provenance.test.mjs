// Archive#provenance and Archive#evaluations (spec/metadata.md): on the
// metadata-* vectors, on archives built here, and on an archive the Python
// writer wrote, compared with what the Python reader says of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open } from '../src/index.js';
import { latestByEnvironment, partOf } from '../src/metadata.js';
import { archive } from './helpers/build.mjs';

const vectorsDir = new URL('../../test-vectors/', import.meta.url);
const index = existsSync(new URL('index.json', vectorsDir))
  ? JSON.parse(readFileSync(new URL('index.json', vectorsDir), 'utf8'))
  : null;
const metadataCases = index ? index.cases.filter((c) => c.id.startsWith('metadata-')) : [];

const withMetadata = (metadata) => archive({ manifest: (m) => ({ ...m, metadata }) });

test('a vector with every defined key: each shown as its text says', {
  skip: !index && 'test-vectors are not there',
}, async () => {
  const c = metadataCases.find((x) => x.id === 'metadata-provenance');
  const ar = await open(readFileSync(new URL(c.file, vectorsDir)));
  const meta = ar.metadata;
  const p = ar.provenance;
  assert.equal(p.envId, meta.env_id);
  assert.equal(p.nEnvs, Number(meta.n_envs));
  assert.equal(p.numTimesteps, Number(meta.num_timesteps));
  assert.equal(p.seed, Number(meta.seed));
  const versions = Object.fromEntries(
    Object.entries(meta)
      .filter(([k]) => k.startsWith('versions.'))
      .map(([k, v]) => [k.slice(9), v]),
  );
  assert.ok(Object.keys(versions).length > 0);
  assert.deepEqual(p.versions, versions);
  assert.deepEqual(p.wrappers, JSON.parse(meta.wrappers));
  assert.deepEqual(ar.evaluations, JSON.parse(meta.evaluations));
  assert.ok(
    ar.evaluations.length > 0 && ar.evaluations.every((e) => Array.isArray(e.returns) && typeof e.mean === 'number'),
  );
  assert.deepEqual(ar.warnings, []);
  await ar.close();
});

test('a malformed key is left out, with its METADATA_INVALID warning; the others are shown', {
  skip: !index && 'test-vectors are not there',
}, async () => {
  const invalid = metadataCases.filter((c) => (c.warnings ?? []).includes('METADATA_INVALID'));
  assert.ok(invalid.length >= 3);
  for (const c of invalid) {
    const ar = await open(readFileSync(new URL(c.file, vectorsDir)));
    const bad = ar.warnings
      .filter((w) => w.code === 'METADATA_INVALID')
      .map((w) => w.pointer.slice('/metadata/'.length));
    assert.deepEqual(
      bad,
      c.issues.map((i) => i.pointer.slice('/metadata/'.length)),
      c.id,
    );
    const p = ar.provenance;
    const field = {
      env_id: 'envId',
      n_envs: 'nEnvs',
      num_timesteps: 'numTimesteps',
      seed: 'seed',
      wrappers: 'wrappers',
    };
    for (const key of bad) {
      if (key === 'evaluations') assert.deepEqual(ar.evaluations, [], c.id);
      else if (key.startsWith('versions.')) assert.ok(!(key.slice(9) in p.versions), c.id);
      else if (key in field) assert.equal(p[field[key]], null, `${c.id}: ${key}`);
      else assert.ok(!Object.values(p).includes(ar.metadata[key]), `${c.id}: ${key} is not provenance`);
    }
    // the well-formed keys beside it are still there
    const meta = ar.metadata;
    if ('env_id' in meta && !bad.includes('env_id')) assert.equal(p.envId, meta.env_id, c.id);
    if ('seed' in meta && !bad.includes('seed')) assert.equal(p.seed, Number(meta.seed), c.id);
    await ar.close();
  }
});

test('no metadata: every provenance key null, no versions, no evaluations', async () => {
  const ar = await open(archive());
  assert.deepEqual(ar.provenance, {
    envId: null,
    nEnvs: null,
    numTimesteps: null,
    seed: null,
    versions: {},
    wrappers: null,
  });
  assert.deepEqual(ar.evaluations, []);
  await ar.close();
});

test('counts and seeds: numbers while safe, bigints beyond 2^53 - 1; free keys and odd names stay out', async () => {
  const big = ((1n << 63n) - 1n).toString();
  const ar = await open(
    withMetadata({
      num_timesteps: String(Number.MAX_SAFE_INTEGER),
      seed: `-${big}`,
      n_envs: '1',
      'versions.__proto__': '1.0',
      notes: 'x',
      'versions.Bad': '1',
    }),
  );
  const p = ar.provenance;
  assert.equal(p.numTimesteps, Number.MAX_SAFE_INTEGER);
  assert.equal(typeof p.numTimesteps, 'number');
  assert.equal(p.seed, -BigInt(big));
  assert.equal(p.nEnvs, 1);
  assert.deepEqual(Object.keys(p.versions), ['__proto__']); // an own property, not the prototype
  assert.equal(Object.getPrototypeOf(p.versions), Object.prototype);
  assert.deepEqual(
    ar.warnings.map((w) => w.pointer),
    ['/metadata/versions.Bad'],
  );
  await ar.close();
});

test('the latest evaluation of each environment, in the order environments first appear', () => {
  const e = (env_id, mean) => ({ env_id, mean });
  const evals = [e('A', 1), e('B', 2), e('A', 3), e('C', 4), e('B', 5)];
  const latest = latestByEnvironment(evals);
  assert.deepEqual(
    latest.map((x) => x.env_id),
    [...new Set(evals.map((x) => x.env_id))],
  );
  for (const x of latest)
    assert.equal(
      x,
      evals.findLast((y) => y.env_id === x.env_id),
    );
});

const PYTHON = fileURLToPath(new URL('../../.venv/bin/python', import.meta.url));
const WRITE = `
import json, sys, numpy as np, rlarchive
from rlarchive.reader import Archive
ev = {"env_id": "Pendulum-v1", "episodes": 3, "seeds": [0, 1, 2], "deterministic": True, "mean": -150.25, "std": 12.5,
      "returns": [-140.0, -147.75, -163.0], "lengths": [200, 200, 200], "evaluator": {"name": "rlarchive-python", "version": "0.1"},
      "date": "2026-11-24T12:00:00Z"}
meta = {"env_id": "Pendulum-v1", "n_envs": "4", "num_timesteps": "20000", "seed": "42", "versions.torch": "2.13.0+cpu",
        "versions.stable_baselines3": "2.4.0", "wrappers": json.dumps([{"name": "VecNormalize", "norm_obs": True, "norm_reward": True}]),
        "evaluations": json.dumps([ev, dict(ev, env_id="Pendulum-v2", mean=-1.5)])}
rlarchive.save(sys.argv[1], {"gamma": 0.99}, tensors={"policy": {"w": np.ones((2, 2), np.float32)}}, metadata=meta)
with Archive(sys.argv[1]) as ar:
    p = ar.provenance
    print(json.dumps({"provenance": {"envId": p.env_id, "nEnvs": p.n_envs, "numTimesteps": p.num_timesteps, "seed": p.seed,
                                     "versions": p.versions, "wrappers": p.wrappers}, "evaluations": ar.evaluations}))
`;

test('an archive the Python writer wrote: the same provenance and evaluations as the Python reader gives', {
  skip: !existsSync(PYTHON) && 'the Python virtual environment is not there',
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rla-provenance-'));
  try {
    const file = join(dir, 'agent.rlarchive');
    const env = { ...process.env, PYTHONPATH: fileURLToPath(new URL('../../python', import.meta.url)) };
    const r = spawnSync(PYTHON, ['-c', WRITE, file], { encoding: 'utf8', env });
    assert.equal(r.status, 0, r.stderr);
    const python = JSON.parse(r.stdout);
    const ar = await open(file);
    assert.deepEqual(ar.provenance, python.provenance);
    assert.deepEqual(ar.evaluations, python.evaluations);
    assert.equal(ar.evaluations.length, 2);
    await ar.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('partOf gives the metadata part (model when absent) and refuses a word spec/metadata.md §7 does not define', () => {
  assert.equal(partOf(new Map([['part', 'replay_buffer']])), 'replay_buffer');
  assert.equal(partOf({ env_id: 'CartPole-v1' }), 'model');
  assert.throws(
    () => partOf({ part: 'optimizer' }),
    (e) => e.code === 'METADATA_INVALID',
  );
});
