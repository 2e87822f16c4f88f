// The public API: declarations match the exports, and the README's Node example runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as api from '../src/index.js';

test('index.d.ts declares every export', () => {
  const dts = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8');
  const declared = new Set(
    [...dts.matchAll(/^export (?:class|function|const|namespace|type|interface) (\w+)/gm)].map((m) => m[1]),
  );
  for (const name of Object.keys(api)) assert.ok(declared.has(name), `${name} is exported but not declared`);
});

test("the README's Node example runs", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const code = /## Node\s+```js\n([\s\S]*?)```/.exec(readme)[1];
  const file = new URL('./.readme-example.mjs', import.meta.url);
  writeFileSync(file, code);
  try {
    const fixture = fileURLToPath(new URL('./fixtures/python-rich.rlarchive', import.meta.url));
    const r = spawnSync(process.execPath, [fileURLToPath(file), fixture], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /rlarchive-python 1\.0/);
    assert.match(r.stdout, /policy\/w F32 \[ 2, 3 \] Float32Array/);
  } finally {
    rmSync(file);
  }
});

test('the error catalogue equals spec/errors.md', (t) => {
  const url = new URL('../../spec/errors.md', import.meta.url);
  let text;
  try {
    text = readFileSync(url, 'utf8');
  } catch {
    return t.skip('spec/errors.md is not there');
  }
  const [files, apis] = text.split(/^## API errors/m);
  const fileCodes = Object.fromEntries(
    [...files.matchAll(/^\| `([A-Z0-9_]+)` \| (error|warning|info) \|/gm)].map((m) => [m[1], m[2]]),
  );
  const apiCodes = [...apis.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual({ ...api.CATALOGUE }, fileCodes);
  assert.deepEqual([...api.API_CODES].sort(), apiCodes.sort());
});

test('VERSION is the package version, and the validation report names the package', async () => {
  const { VERSION, validate } = await import('../src/index.js');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.equal(VERSION, pkg.version);
  const report = await validate(new Uint8Array([1, 2, 3]));
  assert.deepEqual(report.validator, { name: pkg.name, version: pkg.version });
});

test('validate reports every problem as the report of spec §14 and never rejects for a bad file', async () => {
  const { validate } = await import('../src/index.js');
  const bad = await validate(new Uint8Array([1, 2, 3]));
  assert.equal(bad.valid, false);
  assert.deepEqual(
    bad.issues.map((i) => [i.code, i.severity]),
    [['ARCHIVE_NOT_RLARCHIVE', 'error']],
  );
  assert.deepEqual(bad.summary, { errors: 1, warnings: 0, infos: 0 });
  const good = await validate(
    readFileSync(new URL('../../test-vectors/valid/extension-optional.rlarchive', import.meta.url)),
  );
  assert.equal(good.valid, true);
  assert.deepEqual(
    good.issues.map((i) => i.code),
    ['EXTENSION_UNKNOWN'],
  );
});

test("the README's policy example runs", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const vector = fileURLToPath(new URL('../../test-vectors/valid/policy-ppo-mlp-discrete.rlarchive', import.meta.url));
  if (!existsSync(vector)) return;
  const code = /## Extensions, acting, validating[\s\S]*?```js\n([\s\S]*?)```/
    .exec(readme)[1]
    .replace("'rlarchive-reader'", JSON.stringify(new URL('../src/index.js', import.meta.url).href))
    .replace("'agent.rlarchive'", JSON.stringify(vector));
  const file = new URL('./.readme-policy.mjs', import.meta.url);
  writeFileSync(file, code);
  try {
    const r = spawnSync(process.execPath, [fileURLToPath(file)], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^I64 BigInt64Array\(1\) \[ [0-2]n \]/);
  } finally {
    rmSync(file);
  }
});

test('the names the Python reader has: bytesRead, optimizerNames, optimizer, tensors, location', async () => {
  const { open: openArchive, RlarchiveError } = api;
  const dir = new URL('../../test-vectors/', import.meta.url);
  const index = JSON.parse(readFileSync(new URL('index.json', dir), 'utf8'));
  let checked = 0;
  for (const c of index.cases.filter((x) => x.expect.result === 'dump')) {
    const ar = await openArchive(readFileSync(new URL(c.file, dir)));
    try {
      assert.ok(ar.bytesRead > 0, 'opening reads');
      assert.deepEqual(ar.optimizerNames, Object.keys(ar.optimizers));
      for (const name of ar.optimizerNames) assert.equal(ar.optimizer(name), ar.optimizers[name]);
      assert.throws(
        () => ar.optimizer('no such optimizer'),
        (e) => e.code === 'TENSOR_NOT_FOUND',
      );
      for (const g of ar.groups) {
        const before = ar.bytesRead;
        const all = await ar.tensors(g);
        assert.equal(
          ar.bytesRead - before,
          ar.tensorInfo(g).reduce((n, t) => n + t.nbytes, 0),
          'bytesRead counts the tensor reads',
        );
        assert.deepEqual(
          Object.keys(all),
          ar.tensorInfo(g).map((t) => t.name),
        );
        for (const [name, t] of Object.entries(all)) assert.deepEqual(t.data, (await ar.tensor(g, name)).data);
      }
      checked += ar.optimizerNames.length && ar.groups.length ? 1 : 0;
    } finally {
      await ar.close();
    }
  }
  assert.ok(checked > 0, 'a vector with optimizers and tensors');
  const e = new RlarchiveError('REF_NOT_FOUND', 'x', { member: 'data.json', pointer: '/data/a', offset: 12 });
  assert.equal(e.location(), 'data.json#/data/a @12');
  assert.equal(e.message, `REF_NOT_FOUND: x [${e.location()}]`);
  assert.equal(new RlarchiveError('IO_ERROR', 'y').location(), '');
});

test('tensorInfo lists a group once: every call gives the same frozen list, so a call per tensor copies nothing', async () => {
  const ar = await api.open(readFileSync(new URL('./fixtures/python-rich.rlarchive', import.meta.url)));
  try {
    for (const g of ar.groups) {
      const infos = ar.tensorInfo(g);
      assert.ok(infos.length > 0 && Object.isFrozen(infos));
      const header = ar.state.tensorHeaders.get(g);
      for (const t of infos) {
        assert.equal(ar.tensorInfo(g), infos);
        assert.ok(Object.isFrozen(t) && Object.isFrozen(t.shape));
        assert.equal(t.shape, header.get(t.name).shape, "the header's frozen shape, not a copy");
      }
    }
    assert.throws(() => ar.tensorInfo('no such group'), { code: 'TENSOR_NOT_FOUND' });
  } finally {
    await ar.close();
  }
});
