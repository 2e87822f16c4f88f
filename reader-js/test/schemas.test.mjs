// The project's JSON Schemas: the embedded copy, the validator, and what the reader produces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { render } from '../scripts/embed-schemas.mjs';
import embedded from '../src/schemas-embedded.js';
import { unsupportedKeywords, validateSchema } from '../src/schema.js';
import { getSchema, SCHEMA_FILES } from '../src/schemas.js';
import { open, dump, parseJson } from '../src/index.js';
import { archive, bytesOf, b64 } from './helpers/build.mjs';

const schemaDir = new URL('../../schemas/', import.meta.url);

test('the embedded schemas equal the files in schemas/', async () => {
  const current = readFileSync(new URL('../src/schemas-embedded.js', import.meta.url), 'utf8');
  assert.equal(current, await render(), 'run `npm run embed-schemas`');
  for (const f of SCHEMA_FILES) {
    if (existsSync(new URL(f, schemaDir)))
      assert.deepEqual(embedded[f], JSON.parse(readFileSync(new URL(f, schemaDir), 'utf8')), f);
  }
});

test('the validator implements every keyword the schemas use', () => {
  for (const [name, s] of Object.entries(embedded)) assert.deepEqual([...unsupportedKeywords(s)], [], name);
});

test('getSchema gives the embedded copy, equal to the file in schemas/', async () => {
  const s = await getSchema('manifest-1.0.schema.json');
  assert.deepEqual(s, JSON.parse(readFileSync(new URL('manifest-1.0.schema.json', schemaDir), 'utf8')));
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

test('dumps validate against dump-1.0.schema.json, data documents against data-1.0.schema.json', async () => {
  const dumpSchema = await getSchema('dump-1.0.schema.json');
  const dataSchema = await getSchema('data-1.0.schema.json');
  const fixture = readFileSync(new URL('./fixtures/python-rich.rlarchive', import.meta.url));
  for (const bytes of [sample(), fixture]) {
    const text = await dump(bytes);
    assert.equal(validateSchema(dumpSchema, parseJson(new TextEncoder().encode(text))), null);
    const ar = await open(bytes);
    const doc = new Map([
      ['data', ar.rawData.data],
      ['optimizers', ar.rawData.optimizers],
    ]);
    assert.equal(validateSchema(dataSchema, doc), null);
  }
});

test('every valid golden vector: its dump and data document validate', async (t) => {
  const index = new URL('../../test-vectors/index.json', import.meta.url);
  if (!existsSync(index)) return t.skip('no test vectors');
  const dumpSchema = await getSchema('dump-1.0.schema.json');
  const dataSchema = await getSchema('data-1.0.schema.json');
  for (const c of JSON.parse(readFileSync(index, 'utf8')).cases) {
    if (c.expect.result !== 'dump') continue;
    const bytes = readFileSync(new URL(c.file, index));
    const ar = await open(bytes);
    const r = validateSchema(dumpSchema, parseJson(new TextEncoder().encode(await ar.dump())));
    assert.equal(r, null, `${c.id}: ${JSON.stringify(r)}`);
    const doc = new Map([
      ['data', ar.rawData.data],
      ['optimizers', ar.rawData.optimizers],
    ]);
    assert.equal(validateSchema(dataSchema, doc), null, c.id);
    assert.deepEqual(await ar.schemaIssues(), [], c.id);
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
