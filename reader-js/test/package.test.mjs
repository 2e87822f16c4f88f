// slow: the package packed and installed (make test-fast leaves this file out)
// The npm package as users get it: `npm pack`, then installed from the tarball
// into a fresh project (no registry needed: the package has no dependencies).
// The tarball holds what package.json promises (and no JSON Schema: the reader
// reads none), every README link resolves, and the installed reader judges
// every vector as expected, with nothing of a schema in its public API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const repoDir = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const npmWorks = spawnSync('npm', ['--version'], { encoding: 'utf8' }).status === 0;

let work, tarball, files, project;

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

before(() => {
  if (!npmWorks) return;
  work = mkdtempSync(join(tmpdir(), 'rla-npm-'));
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work, '--loglevel=error'], pkgDir));
  tarball = join(work, packed[0].filename);
  files = new Set(packed[0].files.map((f) => f.path));
  mkdirSync(join(work, 'unpacked'));
  run('tar', ['-xzf', tarball, '-C', join(work, 'unpacked')], work);
  project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'uses-rlarchive', version: '1.0.0', private: true, type: 'module' }),
  );
  run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], project);
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const skipUnlessNpm = (t) => (npmWorks ? false : (t.skip('npm is not on the PATH'), true));

test('the tarball holds the sources, types, web inspector, README, LICENSE and CHANGELOG, and nothing for development', (t) => {
  if (skipUnlessNpm(t)) return;
  for (const f of [
    'package.json',
    'README.md',
    'LICENSE',
    'CHANGELOG.md',
    'index.d.ts',
    'src/index.js',
    'bin/conformance.mjs',
    'web/index.html',
    'web/inspector.js',
    'web/style.css',
  ]) {
    assert.ok(files.has(f), `${f} is in the tarball`);
  }
  for (const f of files) assert.ok(!/^(test|bench|scripts|node_modules)\//.test(f), `${f} is not part of the package`);
  for (const f of files) assert.ok(!/schema/i.test(f), `${f}: the package holds no JSON Schema`);
  assert.equal(
    readFileSync(join(work, 'unpacked/package/LICENSE'), 'utf8'),
    readFileSync(join(repoDir, 'LICENSE'), 'utf8'),
  );
  assert.match(
    readFileSync(join(work, 'unpacked/package/LICENSE'), 'utf8'),
    /Apache License\s+Version 2\.0, January 2004/,
  );
  assert.equal(pkg.license, 'Apache-2.0');
});

test('every link in the packaged README resolves inside the tarball or is an absolute https URL into this repository', (t) => {
  if (skipUnlessNpm(t)) return;
  const readme = readFileSync(join(work, 'unpacked/package/README.md'), 'utf8');
  const base = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
  const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
  assert.ok(links.length > 0, 'the README has links');
  let intoRepo = 0,
    inside = 0;
  for (const link of links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) {
      assert.match(link, /^https:\/\//, `${link} is an absolute https URL`);
      if (link.startsWith(base + '/')) {
        const m = /^\/(?:blob|tree)\/main\/([^#?]+)/.exec(link.slice(base.length));
        assert.ok(m, `${link} names a file of the repository's main branch`);
        assert.ok(existsSync(join(repoDir, m[1])), `${link}: ${m[1]} exists in the repository`);
        intoRepo++;
      }
    } else if (!link.startsWith('#')) {
      const path = link.split('#')[0].replace(/^\.\//, '');
      assert.ok(files.has(path), `${link} is a file in the tarball`);
      inside++;
    }
  }
  assert.ok(intoRepo > 0 && inside > 0, 'links both into the repository and within the package were checked');
});

// Runs inside the fresh project: the installed package judges every vector.
const JUDGE = `
import * as api from 'rlarchive-reader';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
const { open, RlarchiveError } = api;
const dir = process.argv[2];
const out = {
  __schemaNames__: [...Object.keys(api), ...Object.getOwnPropertyNames(api.Archive.prototype)].filter((k) => /schema/i.test(k)),
};
for (const c of JSON.parse(readFileSync(dir + '/index.json', 'utf8')).cases) {
  let bytes = readFileSync(dir + '/' + c.file);
  if (c.file.endsWith('.gz')) bytes = gunzipSync(bytes, { maxOutputLength: 1 << 28 });
  try {
    const ar = await open(bytes);
    out[c.id] = { result: 'dump', dump: await ar.dump() };
    await ar.close();
  } catch (e) {
    out[c.id] = { result: 'error', code: e instanceof RlarchiveError ? e.code : String(e) };
  }
}
process.stdout.write(JSON.stringify(out));
`;

test('the installed package judges every vector as expected, and its API names no schema', (t) => {
  if (skipUnlessNpm(t)) return;
  if (!existsSync(join(repoDir, 'test-vectors/index.json'))) return t.skip('test-vectors/index.json is not there');
  writeFileSync(join(project, 'judge.mjs'), JUDGE);
  const got = JSON.parse(run(process.execPath, ['judge.mjs', join(repoDir, 'test-vectors')], project));
  assert.deepEqual(got.__schemaNames__, []);
  const index = JSON.parse(readFileSync(join(repoDir, 'test-vectors/index.json'), 'utf8'));
  let invalid = 0;
  for (const c of index.cases) {
    if (c.expect.result === 'actions') continue; // its archive is judged by its dump case; actions in vectors.test.mjs
    if (c.request_file) continue; // a request case (annex A.5): its archive is another case's; conformance.test.mjs
    const g = got[c.id];
    if (c.expect.result === 'error') {
      assert.deepEqual(g, { result: 'error', code: c.expect.code }, c.id);
      invalid++;
    } else {
      assert.equal(g.result, 'dump', `${c.id}: ${g.code}`);
      assert.equal(g.dump, readFileSync(join(repoDir, 'test-vectors', c.expect.dump_file), 'utf8'), c.id);
    }
  }
  assert.ok(invalid > 0);
});
