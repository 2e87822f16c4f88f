// Every rule of the spec broken once: the first error code must be the spec's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open, RlarchiveError } from '../src/index.js';
import { cases } from './helpers/cases.mjs';

async function outcome(bytes, stage) {
  let ar;
  try {
    ar = await open(bytes);
  } catch (e) {
    assert.ok(e instanceof RlarchiveError, `not an RlarchiveError: ${e?.stack ?? e}`);
    return { at: 'open', code: e.code, error: e };
  }
  try {
    await ar.dump();
    return { at: 'ok', code: null };
  } catch (e) {
    assert.ok(e instanceof RlarchiveError, `not an RlarchiveError: ${e?.stack ?? e}`);
    return { at: 'dump', code: e.code, error: e };
  } finally {
    await ar.close();
  }
}

for (const c of cases()) {
  test(`${c.id} -> ${c.code ?? 'valid'}`, async () => {
    const r = await outcome(c.make(), c.stage);
    assert.equal(r.code, c.code, r.error?.message);
    if (c.code !== null) assert.equal(r.at, c.stage, `expected the error at ${c.stage}, got it at ${r.at}`);
  });
}
