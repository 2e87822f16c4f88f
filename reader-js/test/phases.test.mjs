// The phases of §11.1 by name (src/checks.js PHASES, the same names as
// python/rlarchive/checks.py), what the later steps give as their output (the
// tensors' digests and ST_BOOL_VALUE from step 10's one read, the checked
// extension documents from step 11), and the extension accessors checking once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import * as api from '../src/index.js';
import { MemorySource } from '../src/sources.js';
import { archive } from './helpers/build.mjs';

const { PHASES, OPEN, DEFERRED, STEPS, runPhases, checkState, open } = api;
const dir = new URL('../../test-vectors/', import.meta.url);
const index = JSON.parse(readFileSync(new URL('index.json', dir), 'utf8'));
const vector = (id) => new Uint8Array(readFileSync(new URL(index.cases.find((c) => c.id === id).file, dir)));

/** A MemorySource that records every read (offset, length). */
class CountingSource extends MemorySource {
  reads = [];
  async read(offset, length) {
    this.reads.push([offset, length]);
    return super.read(offset, length);
  }
  /**
   * The bytes read so far by the reads that start within member `m`'s data
   * (the reads of its bytes; a read of the file's tail that covers a small
   * archive whole, to find the end records, starts before it).
   */
  bytesWithin(m) {
    let n = 0;
    for (const [o, l] of this.reads) if (o >= m.dataOffset && o < m.dataOffset + m.size) n += l;
    return n;
  }
}

test('the phases of §11.1 by name: their steps in order are STEPS; open() runs OPEN, the dump DEFERRED', () => {
  assert.deepEqual(Object.keys(PHASES), ['structure', 'data', 'tensors', 'integrity', 'extensions']);
  assert.deepEqual(Object.values(PHASES).flat(), [...STEPS]);
  assert.deepEqual(
    PHASES.structure.map((f) => f.name),
    ['identify', 'readEndRecords', 'readCentralDirectory', 'readLocalHeaders', 'checkLayout', 'checkManifest'],
  );
  assert.deepEqual([...OPEN, ...DEFERRED], Object.keys(PHASES));
  assert.ok(Object.isFrozen(PHASES) && Object.values(PHASES).every(Object.isFrozen));
  const py = readFileSync(new URL('../../python/rlarchive/checks.py', import.meta.url), 'utf8');
  for (const name of Object.keys(PHASES))
    assert.match(py, new RegExp(`^ {8}"${name}": \\(`, 'm'), `Python names ${name}`);
  assert.match(py, /^OPEN: tuple\[str, \.\.\.\] = \("structure", "data", "tensors"\)$/m);
  assert.match(py, /^DEFERRED: tuple\[str, \.\.\.\] = \("integrity", "extensions"\)$/m);
});

test('runPhases refuses a phase it does not know', async () => {
  const state = checkState({ source: new MemorySource(new Uint8Array(100)) });
  await assert.rejects(runPhases(state, 'digests'), TypeError);
  await assert.rejects(runPhases(state, 'toString'), TypeError);
});

/** An archive with a BOOL tensor holding 2 (ST_BOOL_VALUE) beside a float tensor. */
function boolArchive() {
  return archive({
    tensors: {
      flags: {
        ok: { dtype: 'F32', shape: [3], data: new Uint8Array(new Float32Array([1, 2, 3]).buffer) },
        bad: { dtype: 'BOOL', shape: [2], data: new Uint8Array([1, 2]) },
      },
    },
  });
}

test('step 10 gives each tensor digest and ST_BOOL_VALUE as outputs of the state, in one read of each member', async () => {
  const src = new CountingSource(boolArchive());
  const opened = await runPhases(checkState({ source: src }), ...OPEN);
  assert.equal(opened.tensorDigests.size, 0);
  src.reads.length = 0;
  const done = await runPhases(checkState({ ...opened, digestTensors: true }), 'integrity');
  const m = done.members.get('tensors/flags.safetensors');
  assert.equal(src.bytesWithin(m), m.size, 'the member is read once');
  const headers = done.tensorHeaders.get('flags');
  for (const [name, info] of headers) {
    const bytes = src.bytes.subarray(info.offset, info.offset + info.nbytes);
    assert.equal(done.tensorDigests.get('flags').get(name), createHash('sha256').update(bytes).digest('hex'));
  }
  assert.deepEqual(
    done.warnings.filter((w) => w.code === 'ST_BOOL_VALUE').map((w) => w.pointer),
    ['/bad'],
  );
  const plain = await runPhases(opened, 'integrity'); // a validator: no digests asked for
  assert.equal(plain.tensorDigests.size, 0);
  assert.deepEqual(
    plain.warnings.map((w) => w.code),
    done.warnings.map((w) => w.code),
  );
});

test("the dump reads each tensor member's bytes once and warns of ST_BOOL_VALUE once", async () => {
  const src = new CountingSource(boolArchive());
  const ar = await open(src);
  src.reads.length = 0;
  const text = await ar.dump();
  const m = ar.state.members.get('tensors/flags.safetensors');
  assert.equal(src.bytesWithin(m), m.size);
  assert.equal(ar.warnings.filter((w) => w.code === 'ST_BOOL_VALUE').length, 1);
  assert.equal(await ar.dump(), text);
  assert.equal(await api.dump(boolArchive()), text);
});

for (const [id, accessor, name] of [
  ['vec-normalize-box', 'vecNormalize', 'RLA_vec_normalize'],
  ['replay-buffer-her', 'replayBuffer', 'RLA_replay_buffer'],
]) {
  test(`${accessor}() checks the extension member once and keeps the checked value (${id})`, async () => {
    const src = new CountingSource(vector(id));
    const ar = await open(src);
    const m = ar.state.members.get(`extensions/${name}/${name.slice(4)}.json`);
    assert.ok(m, 'the extension member');
    assert.equal(src.bytesWithin(m), 0, 'open() does not read it');
    await ar[accessor]();
    assert.equal(src.bytesWithin(m), m.size, 'the first call reads and checks it');
    await ar[accessor]();
    await ar.checkExtensions();
    assert.equal(src.bytesWithin(m), m.size, 'later calls and the extensions phase use the kept value');
    const kept = await ar.extensionDocument(name);
    assert.equal(await ar.extensionDocument(name), kept);
    assert.equal(src.bytesWithin(m), m.size);
    await ar.dump();
    assert.equal(src.bytesWithin(m), 2 * m.size, "the dump reads it once more, for step 10's digest only");
  });
}

test('after checkExtensions() the accessors read no extension member', async () => {
  const src = new CountingSource(vector('replay-buffer-her'));
  const ar = await open(src);
  await ar.checkExtensions();
  const m = ar.state.members.get('extensions/RLA_replay_buffer/replay_buffer.json');
  const before = src.bytesWithin(m);
  assert.equal(before, m.size);
  await ar.replayBuffer();
  assert.equal(src.bytesWithin(m), before);
});

/** The JavaScript files of the reader and its tests. */
function sources() {
  const out = [];
  for (const sub of ['../src/', '../test/', '../bin/', '../web/']) {
    const base = new URL(sub, import.meta.url);
    let names;
    try {
      names = readdirSync(base, { recursive: true });
    } catch {
      continue;
    }
    for (const n of names)
      if (/\.(m?js|ts)$/.test(n) && !n.includes('node_modules')) out.push([`${sub}${n}`, new URL(n, base)]);
  }
  return out;
}

test('lint: steps are chosen by phase name, never by position in STEPS', () => {
  const positional = new RegExp(['\\bSTEPS', '\\s*(\\[|\\.slice\\s*\\(|\\.at\\s*\\()'].join(''));
  const found = sources().filter(([, url]) => positional.test(readFileSync(url, 'utf8')));
  assert.deepEqual(
    found.map(([name]) => name),
    [],
  );
});

test('lint: checks.js keeps nothing beside the state (no module-level WeakMap or Map)', () => {
  const text = readFileSync(new URL('../src/checks.js', import.meta.url), 'utf8');
  assert.doesNotMatch(text, /\bWeakMap\b/);
  assert.doesNotMatch(text, /^(const|let|var)\s+\w+\s*=\s*(Object\.freeze\()?new (Weak)?(Map|Set)\b/m);
});

test('verify() runs the integrity phase: the first failing member rejects, a good archive passes', async () => {
  const bytes = boolArchive();
  const ar = await open(bytes);
  await ar.verify();
  const m = ar.state.members.get('tensors/flags.safetensors');
  const broken = bytes.slice();
  broken[m.dataOffset + m.size - 1] ^= 0xff; // an element byte: found at step 10 only
  const bad = await open(broken);
  await assert.rejects(bad.verify(), (e) => e.code === 'ZIP_CRC_MISMATCH' && e.member === m.name);
  const direct = await runPhases(bad.state, 'integrity');
  assert.deepEqual(
    direct.issues.map((e) => e.code),
    ['ZIP_CRC_MISMATCH'],
  );
});
