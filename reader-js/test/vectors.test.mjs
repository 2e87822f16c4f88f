// The golden test vectors (test-vectors/index.json), judged as annex A says,
// with conformance-xfail.json as the expected-failure list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { open, act, parseJson, RlarchiveError } from '../src/index.js';
import { decodeValue, inlineArray } from '../src/decode.js';
import { sameActions } from './helpers/actions.mjs';

const dir = new URL('../../test-vectors/', import.meta.url);
const indexUrl = new URL('index.json', dir);
const xfail = JSON.parse(readFileSync(new URL('../conformance-xfail.json', import.meta.url), 'utf8'));

if (!existsSync(indexUrl)) {
  test('golden test vectors', (t) => t.skip('test-vectors/index.json is not there'));
} else {
  const index = JSON.parse(readFileSync(indexUrl, 'utf8'));
  test('the xfail list names only existing cases', () => {
    const ids = new Set(index.cases.map((c) => c.id));
    for (const id of Object.keys(xfail)) assert.ok(ids.has(id), `xfail lists unknown case ${id}`);
  });
  for (const c of index.cases.filter((x) => x.expect.result === 'actions')) {
    test(`vector ${c.id}`, async () => {
      const spec = JSON.parse(readFileSync(new URL(c.expect.predict_file, dir), 'utf8'));
      const ar = await open(readFileSync(new URL(c.file, dir)));
      try {
        const policy = await ar.policy();
        const value = (v) => decodeValue(parseJson(new TextEncoder().encode(JSON.stringify(v))), null);
        const masks = spec.action_masks ? spec.action_masks.map(value) : null;
        const got = act(policy, spec.observations.map(value), {
          episodeStarts: spec.episode_starts ?? null,
          actionMasks: masks,
        });
        const why = sameActions(got.map(inlineArray), spec.actions);
        if (c.id in xfail) assert.ok(why !== '', `listed as expected failure (${xfail[c.id]}) but passes`);
        else assert.equal(why, '');
      } finally {
        await ar.close();
      }
    });
  }
  // the request cases (annex A.5, request_file) are about the testee's requests: conformance.test.mjs runs them
  for (const c of index.cases.filter((x) => x.expect.result !== 'actions' && !x.request_file)) {
    test(`vector ${c.id}`, async () => {
      let bytes = readFileSync(new URL(c.file, dir));
      if (c.file.endsWith('.gz')) bytes = gunzipSync(bytes, { maxOutputLength: 1 << 28 });
      let got,
        warnings = [];
      try {
        const ar = await open(bytes);
        try {
          got = { result: 'dump', dump: await ar.dump() };
          warnings = ar.warnings.map((w) => w.code);
        } finally {
          await ar.close();
        }
      } catch (e) {
        assert.ok(e instanceof RlarchiveError, String(e?.stack ?? e));
        got = { result: 'error', code: e.code, message: e.message };
      }
      let ok, why;
      if (c.expect.result === 'error') {
        ok = got.result === 'error' && got.code === c.expect.code;
        why = `expected ${c.expect.code}, got ${got.code ?? 'a dump'} ${got.message ?? ''}`;
      } else {
        const want = readFileSync(new URL(c.expect.dump_file, dir), 'utf8');
        ok = got.result === 'dump' && got.dump === want;
        why = got.result === 'dump' ? 'dump differs' : `expected a dump, got ${got.code}: ${got.message}`;
        if (ok) assert.deepEqual([...warnings].sort(), [...(c.warnings ?? [])].sort(), 'warnings');
      }
      if (c.id in xfail)
        assert.ok(!ok, `listed as expected failure (${xfail[c.id]}) but passes: remove it from conformance-xfail.json`);
      else assert.ok(ok, why);
    });
  }
}
