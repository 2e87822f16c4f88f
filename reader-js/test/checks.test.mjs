// The check pipeline of §11.1 (src/checks.js): its steps in order, the
// frozen state each returns, and validate() as the steps run by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as api from '../src/index.js';
import { MemorySource } from '../src/sources.js';
import { archive } from './helpers/build.mjs';
import { linearSearches } from './helpers/counting.mjs';

const { STEPS, DEFERRED, runPhases, checkState, checkExtension, validate, open, RlarchiveError } = api;
const dir = new URL('../../test-vectors/', import.meta.url);
const index = JSON.parse(readFileSync(new URL('index.json', dir), 'utf8'));
const bytesOf = (c) => new Uint8Array(readFileSync(new URL(c.file, dir)));

/** The steps of §11.1, in order, with the names Python gives them in snake_case (python/rlarchive/checks.py). */
const NAMES = [
  'identify',
  'readEndRecords',
  'readCentralDirectory',
  'readLocalHeaders',
  'checkLayout',
  'checkManifest',
  'checkData',
  'checkTensorMembers',
  'checkReferences',
  'checkDigests',
  'checkExtensions',
];
const FIELDS = [
  'source',
  'end',
  'members',
  'manifest',
  'document',
  'references',
  'tensorHeaders',
  'failedGroups',
  'warnings',
  'issues',
  'dataJson',
  'digestTensors',
  'tensorDigests',
  'extensionDocuments',
];
/** The field each step sets (documented in index.d.ts), by step number. */
const SETS = { 2: 'end', 3: 'members', 6: 'manifest', 7: 'document', 8: 'tensorHeaders' };

test('STEPS holds the eleven steps of §11.1 in order, each exported under its name', () => {
  assert.deepEqual(
    STEPS.map((f) => f.name),
    NAMES,
  );
  assert.ok(Object.isFrozen(STEPS));
  assert.deepEqual(
    NAMES.map((name) => api[name]),
    [...STEPS],
    'each step is exported under its name',
  );
});

/** A valid vector whose archive has tensor members, references and a supported extension (found, not named). */
async function richValidCase() {
  for (const c of index.cases.filter((x) => x.expect.result === 'dump')) {
    const ar = await open(bytesOf(c));
    const s = ar.state;
    await ar.close();
    const supported = s.manifest.extensionsUsed.filter((x) => api.SUPPORTED_EXTENSIONS.includes(x));
    if (s.references.length && supported.length && s.warnings.length === 0) return c;
  }
  throw new Error('no valid vector with tensors, references and an extension');
}

test('each step on a valid vector returns a new frozen state with the documented fields', async () => {
  const c = await richValidCase();
  let state = checkState({ source: new MemorySource(bytesOf(c)) });
  assert.deepEqual(Object.keys(state).sort(), [...FIELDS].sort());
  for (const [i, step] of STEPS.entries()) {
    const before = state;
    state = await step(before);
    const n = i + 1;
    assert.notEqual(state, before, `${step.name} returns a new state`);
    assert.ok(Object.isFrozen(state), `${step.name}: frozen`);
    assert.deepEqual(Object.keys(state).sort(), [...FIELDS].sort(), `${step.name}: the documented fields`);
    for (const k of ['references', 'failedGroups', 'warnings', 'issues'])
      assert.ok(Object.isFrozen(state[k]), `${step.name}: ${k} frozen`);
    for (const [at, field] of Object.entries(SETS))
      assert.equal(state[field] !== null, n >= Number(at), `${step.name}: ${field}`);
    assert.equal(state.source, before.source);
    assert.deepEqual(state.issues, [], `${step.name}: no issue on a valid vector`);
  }
  assert.ok([...state.members.values()].every((m) => Object.isFrozen(m) && Number.isInteger(m.dataOffset)));
  assert.equal(state.end.count, state.members.size);
  assert.ok(
    state.references.length > 0 &&
      state.references.every((r) => Object.isFrozen(r) && state.tensorHeaders.get(r.group).has(r.name)),
  );
  for (const name of state.manifest.extensionsUsed) assert.deepEqual((await checkExtension(state, name)).issues, []);
});

/** The first invalid vector whose report has exactly two errors and no warning. */
const twoIssues = index.cases.find(
  (c) => c.expect.result === 'error' && c.issues.length === 2 && c.issues.every((i) => i.severity === 'error'),
);

test('validate() collects what the steps give when run by hand', { skip: !twoIssues }, async () => {
  const src = new MemorySource(bytesOf(twoIssues));
  let state = checkState({ source: src });
  state = await runPhases(state, 'structure'); // steps 1 to 6: nothing to reject on this vector
  try {
    state = await runPhases(state, 'data');
  } catch (e) {
    assert.ok(e instanceof RlarchiveError);
    state = checkState({ ...state, issues: [...state.issues, e] });
  }
  state = await runPhases(state, 'tensors');
  const opened = state;
  state = await runPhases(state, ...DEFERRED);
  const byHand = [
    ...opened.issues,
    ...opened.warnings,
    ...state.issues.slice(opened.issues.length),
    ...state.warnings.slice(opened.warnings.length),
  ];
  const loc = (i) => ({
    code: i.code,
    severity: i.severity,
    member: i.member ?? undefined,
    pointer: i.pointer ?? undefined,
    offset: i.offset ?? undefined,
    message: i.message,
  });
  const report = await validate(bytesOf(twoIssues));
  assert.equal(byHand.length, 2);
  assert.deepEqual(report.issues.map(loc), byHand.map(loc));
  assert.deepEqual(
    byHand.map((i) => i.code),
    twoIssues.issues.map((i) => i.code),
  );
  // open() runs steps 1 to 9 and rejects with the first issue
  await assert.rejects(
    open(bytesOf(twoIssues)),
    (e) => e.code === opened.issues[0].code && e.pointer === opened.issues[0].pointer,
  );
});

test('steps 1 to 7 reject at a broken rule; steps 8 to 11 add issues instead', async () => {
  const notZip = checkState({ source: new MemorySource(new Uint8Array(100)) });
  await assert.rejects(api.identify(notZip), (e) => e.code === 'ARCHIVE_NOT_RLARCHIVE');
  let state = checkState({ source: new MemorySource(bytesOf(twoIssues)) });
  state = await runPhases(state, 'structure', 'data');
  const after8 = await api.checkTensorMembers(state);
  assert.equal(after8.issues.length, 1);
  assert.equal(after8.failedGroups.length, 1);
  assert.ok(!after8.tensorHeaders.has(after8.failedGroups[0]));
});

test('the ST_BOOL_VALUE warnings of a group of 20,000 BOOL tensors: found in linear time', async () => {
  const warned = async (n) => {
    const tensors = {};
    for (let i = 0; i < n; i++) tensors[`b${i}`] = { dtype: 'BOOL', shape: [1], data: new Uint8Array([2]) };
    const bytes = archive({ tensors: { flags: tensors } });
    const [report, count] = await linearSearches(() => api.validate(bytes));
    const warnings = report.issues.filter((i) => i.code === 'ST_BOOL_VALUE');
    assert.equal(warnings.length, n);
    assert.equal(report.issues.length, n);
    return count;
  };
  const few = await warned(5000);
  assert.ok((await warned(20000)) <= 4.5 * few + 1000);
});
