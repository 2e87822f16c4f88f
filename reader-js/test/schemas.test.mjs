// The reader's checks and outputs held against the repository's JSON Schemas (../schemas/), which the
// reader itself never reads: the manifest check passes exactly the manifests the manifest schema passes
// (and the repeated member names it cannot say), dumps and data documents validate; and the small
// validator of test/helpers/schema.mjs implements the keywords the schemas use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { loadSchemas, unsupportedKeywords, validateSchema } from './helpers/schema.mjs';
import { checkManifest } from '../src/manifest.js';
import { open, dump, parseJson, RlarchiveError } from '../src/index.js';
import { archive, bytesOf, b64 } from './helpers/build.mjs';

const SCHEMAS = loadSchemas();
const index = new URL('../../test-vectors/index.json', import.meta.url);

test('the validator implements every keyword the schemas use', () => {
  assert.ok(Object.keys(SCHEMAS).length >= 4);
  for (const [name, s] of Object.entries(SCHEMAS)) assert.deepEqual([...unsupportedKeywords(s)], [], name);
});

test('validator semantics follow JSON Schema 2020-12', () => {
  const s = {
    type: 'object',
    required: ['n'],
    properties: {
      n: { type: 'integer', minimum: 0 },
      s: { type: 'string', pattern: '^a$', maxLength: 1 },
      t: { prefixItems: [{ const: 1 }], items: false },
    },
    additionalProperties: false,
  };
  const ok = (v) => validateSchema(s, parseJson(new TextEncoder().encode(v))) === null;
  assert.ok(ok('{"n":1}'));
  assert.ok(ok('{"n":1.0}'), '1.0 is an integer in JSON Schema');
  assert.ok(!ok('{"n":1.5}'));
  assert.ok(!ok('{"n":-1}'));
  assert.ok(!ok('{"n":1,"x":1}'));
  assert.ok(!ok('{"n":1,"s":"a\\n"}'), 'ECMA-262 $ does not match before a final newline');
  assert.ok(ok('{"n":1,"t":[1]}'));
  assert.ok(!ok('{"n":1,"t":[1,2]}'));
  assert.ok(!ok('{}'));
});

// -- the manifest: the reader's check against the schema -----------------------------------------------

const SHA = '0'.repeat(64);
/** Values every node is replaced by: each JSON type (json.js trees), and the edges of every rule of §5.1 and §5.3. */
const REPLACEMENTS = [
  null,
  true,
  0n,
  -1n,
  29.0,
  1.5,
  '',
  'x'.repeat(255),
  'x'.repeat(256),
  'x'.repeat(257),
  'é'.repeat(256),
  'a\n',
  'mimetype',
  'manifest.json',
  'a/b',
  'a//b',
  '/a',
  'a/',
  'RLA_x',
  'Bad-Name',
  'A'.repeat(64),
  'A'.repeat(65),
  SHA,
  `${'0'.repeat(63)}G`,
  [],
  ['RLA_x', 'RLA_x'],
  ['RLA_x', 1n],
  new Map(),
  new Map([['k', 1n]]),
  new Map([['k', 'v']]),
  new Map([
    ['name', 'data.json'],
    ['size', 1n],
    ['sha256', SHA],
  ]),
];

const clone = (v) =>
  v instanceof Map ? new Map([...v].map(([k, x]) => [k, clone(x)])) : Array.isArray(v) ? v.map(clone) : v;

/** Paths to every node (of an array, its first three elements: the rest repeat them). */
function* paths(node, at = []) {
  yield at;
  if (node instanceof Map) for (const [k, v] of node) yield* paths(v, [...at, k]);
  else if (Array.isArray(node)) for (let i = 0; i < Math.min(node.length, 3); i++) yield* paths(node[i], [...at, i]);
}

const nodeAt = (tree, path) => path.reduce((n, p) => (n instanceof Map ? n.get(p) : n[p]), tree);

/** `tree` with the node at `path` replaced by `value` (undefined: deleted from its object). */
function replaced(tree, path, value) {
  if (path.length === 0) return clone(value);
  const out = clone(tree);
  const parent = nodeAt(out, path.slice(0, -1));
  const last = path.at(-1);
  if (parent instanceof Map) {
    if (value === undefined) parent.delete(last);
    else parent.set(last, clone(value));
  } else parent[last] = clone(value);
  return out;
}

/** Each node deleted (from an object) or replaced; each object given a member before and after its own; each array's first element repeated. */
function* mutations(tree) {
  for (const path of paths(tree)) {
    const node = nodeAt(tree, path);
    if (path.length && nodeAt(tree, path.slice(0, -1)) instanceof Map) yield replaced(tree, path, undefined);
    for (const v of REPLACEMENTS) yield replaced(tree, path, v);
    if (node instanceof Map) {
      yield replaced(tree, path, new Map([['zz', 1n], ...node]));
      yield replaced(tree, path, new Map([...node, ['', 'x']]));
    }
    if (Array.isArray(node) && node.length) yield replaced(tree, path, [...node, node[0]]);
  }
}

/** Whether the reader's check passes the manifest's structure (null: it stops before, at a version it does not read). */
function checkPasses(tree) {
  try {
    checkManifest(tree);
    return true;
  } catch (e) {
    if (!(e instanceof RlarchiveError)) throw e;
    if (e.code === 'VERSION_UNSUPPORTED') return null;
    return !['MANIFEST_INVALID', 'LIMIT_EXCEEDED'].includes(e.code);
  }
}

/** Whether the schema passes the manifest, with the rule of §5.3 it cannot say (member names are unique). */
function schemaPasses(tree) {
  if (validateSchema(SCHEMAS['manifest-1.0.schema.json'], tree) !== null) return false;
  const names = tree.get('members').map((e) => e.get('name'));
  return new Set(names).size === names.length;
}

test("the manifest check passes exactly what the manifest schema passes, over every valid vector's manifest and its mutations", async (t) => {
  if (!existsSync(index)) return t.skip('no test vectors');
  const bases = new Map();
  for (const c of JSON.parse(readFileSync(index, 'utf8')).cases) {
    if (c.expect.result !== 'dump') continue;
    const ar = await open(readFileSync(new URL(c.file, index)));
    const raw = ar.state.manifest.raw;
    await ar.close();
    const shape = JSON.stringify([
      ...raw.keys(),
      raw.get('members').length > 3,
      [...(raw.get('metadata') ?? [])].length,
    ]);
    if (!bases.has(shape)) bases.set(shape, raw);
    assert.ok(schemaPasses(raw), `${c.id}: its manifest breaks the schema`);
  }
  const entry = (i) =>
    new Map([
      ['name', `z/${i}`],
      ['size', 0n],
      ['sha256', SHA],
    ]);
  const many = replaced(
    [...bases.values()][0],
    ['members'],
    Array.from({ length: 4097 }, (_, i) => entry(i)),
  );
  const cases = [many, ...[...bases.values()].flatMap((b) => [...mutations(b)])];
  let refused = 0;
  const wrong = [];
  for (const tree of cases) {
    const check = checkPasses(tree);
    if (check === null) continue;
    if (check !== schemaPasses(tree))
      wrong.push(
        `${JSON.stringify(tree, (_, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Map ? Object.fromEntries(v) : v)).slice(0, 300)}: the check ${check ? 'passes' : 'refuses'} it`,
      );
    if (!check) refused++;
  }
  assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} of ${cases.length} manifests`);
  assert.ok(cases.length > 3000 && refused > cases.length / 2, `${refused} of ${cases.length} refused`);
});

// -- what the reader produces ----------------------------------------------------------------------------

const sample = () =>
  archive({
    data: {
      data: {
        gamma: 0.99,
        big: { $type: 'int', value: '123456789012345678901' },
        box: {
          $type: 'space',
          kind: 'box',
          dtype: 'F32',
          shape: [1],
          low: { $type: 'ndarray', dtype: 'F32', shape: [1], base64: b64(bytesOf(new Float32Array([0]))) },
          high: { $type: 'ndarray', dtype: 'F32', shape: [1], ref: { group: 'arrays', name: 'h' } },
        },
        lr: { $type: 'schedule', kind: 'linear', start: 1, end: 0.5, end_fraction: 1.0 },
      },
      optimizers: { adam: { $type: 'dict', entries: [[0, { $type: 'tuple', items: [0.9, 0.999] }]] } },
    },
    tensors: { arrays: { h: { dtype: 'F32', shape: [1], data: bytesOf(new Float32Array([1])) } } },
  });

/** The dump, the data document and the manifest of an opened archive against their schemas: the first problem of each, or nulls. */
async function schemaProblems(bytes) {
  const ar = await open(bytes);
  const doc = new Map([
    ['data', ar.rawData.data],
    ['optimizers', ar.rawData.optimizers],
  ]);
  const out = [
    validateSchema(SCHEMAS['dump-1.0.schema.json'], parseJson(new TextEncoder().encode(await ar.dump()))),
    validateSchema(SCHEMAS['data-1.0.schema.json'], doc),
    validateSchema(SCHEMAS['manifest-1.0.schema.json'], ar.state.manifest.raw),
  ];
  await ar.close();
  return out;
}

test('dumps validate against dump-1.0.schema.json, data documents against data-1.0.schema.json', async () => {
  const fixture = readFileSync(new URL('./fixtures/python-rich.rlarchive', import.meta.url));
  for (const bytes of [sample(), fixture]) {
    assert.deepEqual(await schemaProblems(bytes), [null, null, null]);
    assert.equal(
      validateSchema(SCHEMAS['dump-1.0.schema.json'], parseJson(new TextEncoder().encode(await dump(bytes)))),
      null,
    );
  }
});

test('every valid golden vector: its dump, data document and manifest validate', async (t) => {
  if (!existsSync(index)) return t.skip('no test vectors');
  for (const c of JSON.parse(readFileSync(index, 'utf8')).cases) {
    if (c.expect.result !== 'dump') continue;
    assert.deepEqual(await schemaProblems(readFileSync(new URL(c.file, index))), [null, null, null], c.id);
  }
});

test('uniqueItems: equal as JSON (numbers by value, objects unordered), checked in linear time', () => {
  const unique = (text) => validateSchema({ uniqueItems: true }, parseJson(new TextEncoder().encode(text)));
  assert.equal(unique('[1, "1", [1], {"a": 1}, {"a": "1"}, true, null, 0]'), null);
  for (const [text, at] of [
    ['[1, 2, 1.0]', '/2'],
    ['[{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]', '/1'],
    ['[[1, [2]], [1, [2]]]', '/1'],
    ['[-0.0, 0]', '/1'],
    ['[null, false, null]', '/2'],
  ])
    assert.equal(unique(text)?.pointer, at, text);
  // the items iterated, for n and 4n distinct objects: a comparison of every pair would make it 16 times
  let iterated = 0;
  class Counted extends Map {
    *[Symbol.iterator]() {
      iterated++;
      yield* super[Symbol.iterator]();
    }
  }
  const count = (n) => {
    iterated = 0;
    assert.equal(
      validateSchema(
        { uniqueItems: true },
        Array.from({ length: n }, (_, i) => new Counted([['k', i]])),
      ),
      null,
    );
    return iterated;
  };
  const few = count(500);
  assert.ok(few >= 500 && count(2000) <= 4.5 * few);
});
