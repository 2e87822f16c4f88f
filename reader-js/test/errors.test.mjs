// Every invalid golden vector is rejected with the spec's code, at the right time:
// open() rejects for steps 1 to 9 of §11.1; the deferred checks (a tensor or
// extension member's CRC-32 and digest) and the checks of supported extensions
// (step 11) wait for dump().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { open, RlarchiveError } from '../src/index.js';

const dir = new URL('../../test-vectors/', import.meta.url);
const DEFERRED = ['ZIP_CRC_MISMATCH', 'MEMBER_DIGEST_MISMATCH'];
// the checks of spec/checks.json: the extensions' checks (step 11), and the checks of an extension member's
// text and values (located in that document), wait for dump()
const CHECKS = new Map(
  JSON.parse(readFileSync(new URL('../../spec/checks.json', import.meta.url), 'utf8')).checks.map((c) => [c.id, c]),
);

async function outcome(bytes) {
  let ar;
  try {
    ar = await open(bytes);
  } catch (e) {
    assert.ok(e instanceof RlarchiveError, `not an RlarchiveError: ${e?.stack ?? e}`);
    return { at: 'open', error: e };
  }
  try {
    await ar.dump();
    return { at: 'ok', error: null };
  } catch (e) {
    assert.ok(e instanceof RlarchiveError, `not an RlarchiveError: ${e?.stack ?? e}`);
    return { at: 'dump', error: e };
  } finally {
    await ar.close();
  }
}

if (!existsSync(new URL('index.json', dir))) {
  test('invalid vectors', (t) => t.skip('test-vectors/index.json is not there'));
} else {
  const index = JSON.parse(readFileSync(new URL('index.json', dir), 'utf8'));
  // a request case (request_file, annex A.5) expects an answer to its request line: conformance.test.mjs
  for (const c of index.cases.filter((x) => x.expect.result === 'error' && !x.request_file)) {
    test(`${c.id} -> ${c.expect.code}`, async () => {
      let bytes = readFileSync(new URL(c.file, dir));
      if (c.file.endsWith('.gz')) bytes = gunzipSync(bytes, { maxOutputLength: 1 << 28 });
      const r = await outcome(bytes);
      assert.equal(r.error?.code, c.expect.code, r.error?.message);
      const deferred = DEFERRED.includes(c.expect.code) && !['manifest.json', 'data.json'].includes(r.error.member);
      const check = CHECKS.get(c.checks[0]);
      const extension =
        check.step === 11 || (check.member === 'document' && (r.error.member ?? '').startsWith('extensions/'));
      assert.equal(r.at, deferred || extension ? 'dump' : 'open', `the error came at ${r.at}`);
    });
  }
}
