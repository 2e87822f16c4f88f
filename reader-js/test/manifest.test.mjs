// The manifest's structure is checked in the order of spec §11.2 (§5.1, §5.3), whatever the document order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJson } from '../src/json.js';
import { checkManifest } from '../src/manifest.js';
import { validate } from '../src/index.js';
import { archive } from './helpers/build.mjs';
import { linearSearches } from './helpers/counting.mjs';

const enc = (o) => new TextEncoder().encode(JSON.stringify(o));
const SHA = '0'.repeat(64);

function issue(obj) {
  try {
    checkManifest(parseJson(enc(obj), { member: 'manifest.json' }), null);
  } catch (e) {
    return [e.code, e.pointer];
  }
  return null;
}

function permutations(a) {
  if (a.length <= 1) return [a];
  return a.flatMap((x, i) => permutations([...a.slice(0, i), ...a.slice(i + 1)]).map((p) => [x, ...p]));
}

test('two broken properties: the one earlier in the table, in every document order', () => {
  const members = {
    format: 'rlarchive',
    format_version: '1.0',
    producer: { name: '', version: '1' },
    members: [{ name: 'data.json', size: 2, sha256: SHA }],
    metadata: { n: 5 },
  };
  const keys = Object.keys(members);
  const seen = new Set();
  for (const order of permutations(keys)) {
    seen.add(JSON.stringify(issue(Object.fromEntries(order.map((k) => [k, members[k]])))));
  }
  assert.deepEqual([...seen], [JSON.stringify(['MANIFEST_INVALID', '/producer/name'])]);
});

test('inside an entry: name, size, sha256 in that order; a member not allowed first', () => {
  const base = (entry) => ({
    format: 'rlarchive',
    format_version: '1.0',
    producer: { name: 'p', version: '1' },
    members: [entry],
  });
  assert.deepEqual(issue(base({ sha256: 'X', size: -1, name: 'data.json' })), ['MANIFEST_INVALID', '/members/0/size']);
  assert.deepEqual(issue(base({ sha256: 'X', size: -1, name: 'data.json', crc: 1 })), [
    'MANIFEST_INVALID',
    '/members/0/crc',
  ]);
  assert.deepEqual(issue(base({ size: -1, crc: 1 })), ['MANIFEST_INVALID', '/members/0']);
});

test("a repeated name is at the later entry, before a later entry's issue; more than 4096 entries at the 4097th", () => {
  const e = (name, size = 0) => ({ name, size, sha256: SHA });
  const m = (members) => ({
    format: 'rlarchive',
    format_version: '1.0',
    producer: { name: 'p', version: '1' },
    members,
  });
  assert.deepEqual(issue(m([e('a'), e('a'), e('b', -1)])), ['MANIFEST_INVALID', '/members/1/name']);
  const many = Array.from({ length: 4097 }, (_, i) => e(`z/${i}`));
  assert.deepEqual(issue(m(many)), ['LIMIT_EXCEEDED', '/members/4096']);
  many[7] = e('z/7', -1);
  assert.deepEqual(issue(m(many)), ['MANIFEST_INVALID', '/members/7/size']);
  assert.equal(issue(m(many.slice(0, 7))), null);
});

test('format and format_version: absent at the manifest, wrong at the property', () => {
  assert.deepEqual(issue({ format_version: '1.0' }), ['MANIFEST_INVALID', '']);
  assert.deepEqual(issue({ format: 'x' }), ['MANIFEST_INVALID', '/format']);
  assert.deepEqual(issue({ format: 'rlarchive' }), ['MANIFEST_INVALID', '']);
  assert.deepEqual(issue({ format: 'rlarchive', format_version: '1' }), ['MANIFEST_INVALID', '/format_version']);
});

test('a bad extension key is at the key', () => {
  const m = {
    format: 'rlarchive',
    format_version: '1.0',
    producer: { name: 'p', version: '1' },
    members: [],
    extensions: { ok: 1, 'b-c': 2 },
  };
  assert.deepEqual(issue(m), ['MANIFEST_INVALID', '/extensions/b-c']);
});

test('a manifest with 20,000 extension names is checked in linear time (no search of the list per name)', async () => {
  const scanned = async (n) => {
    const bytes = archive({
      manifest: (m) => ({ ...m, extensions_used: Array.from({ length: n }, (_, i) => `X_e${i}`) }),
    });
    const [report, count] = await linearSearches(() => validate(bytes));
    assert.equal(report.issues.filter((i) => i.severity === 'error').length, 0);
    assert.equal(report.issues.filter((i) => i.code === 'EXTENSION_UNKNOWN').length, n);
    return count;
  };
  const few = await scanned(5000);
  assert.ok((await scanned(20000)) <= 4.5 * few + 1000);
});
