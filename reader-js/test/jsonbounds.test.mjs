// JSON a caller gives (the testee's requests) is parsed within bounds (src/jsonbounds.js, spec §15):
// its depth and an upper bound of its memory are known before parsing; the bound covers what V8
// keeps of texts built to take the most, measured in a process of their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { jsonCost, parseBounded, rawDepth } from '../src/jsonbounds.js';

const enc = (s) => new TextEncoder().encode(s);
const N = 60000;
const list = (n, f) => Array.from({ length: n }, (_, i) => f(i)).join(',');

/** Texts of about N values built to take the most memory, for each kind of value. */
const HEAVY = {
  floats: `[${list(N, () => '1.5')}]`,
  'large integers': `[${list(N, (i) => String(1e15 + i))}]`,
  'empty arrays': `[${list(N, () => '[]')}]`,
  'empty objects': `[${list(N, () => '{}')}]`,
  'one-key objects, keys all different': `[${list(N, (i) => `{"k${i}":1}`)}]`,
  'arrays nested 63 deep': `[${list(N / 63, () => `${'['.repeat(63)}1${']'.repeat(63)}`)}]`,
  'short strings': `[${list(N, (i) => `"s${i}"`)}]`,
  'wide strings': `[${list(N, (i) => `"\u0100${i}"`)}]`,
  'one long string': `"${'a'.repeat(8 * N)}"`,
};

test('what V8 keeps of a parse is within the cost counted before parsing', () => {
  const url = new URL('../src/jsonbounds.js', import.meta.url).href;
  for (const [name, text] of Object.entries(HEAVY)) {
    const script = `
      import { readFileSync } from 'node:fs';
      import { parseBounded } from ${JSON.stringify(url)};
      const bytes = new Uint8Array(readFileSync(0));
      const used = () => {
        for (let i = 0; i < 4; i++) globalThis.gc();
        const m = process.memoryUsage();
        return m.heapUsed + m.external;
      };
      const before = used();
      const kept = parseBounded(bytes, { maxDepth: 64, maxMemory: Infinity });
      console.log(used() - before, kept ? 1 : 0);`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      input: text,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const kept = Number(r.stdout.split(' ')[0]);
    assert.ok(kept <= jsonCost(enc(text)), `${name}: ${kept} bytes kept, cost ${jsonCost(enc(text))}`);
  }
});

test('a text beyond a bound is INPUT_INVALID, unparsed; within them it parses as JSON.parse', () => {
  const heavy = enc(`[${list(1000, () => '[]')}]`);
  const cost = jsonCost(heavy);
  assert.throws(() => parseBounded(heavy, { maxDepth: 64, maxMemory: cost - 1 }), {
    code: 'INPUT_INVALID',
    message: /may take up to \d+ bytes of memory to parse, above the limit/,
  });
  assert.equal(parseBounded(heavy, { maxDepth: 64, maxMemory: cost }).length, 1000);
  const deep = enc(`${'['.repeat(100000)}${']'.repeat(100000)}`);
  assert.throws(() => parseBounded(deep, { maxDepth: 64, maxMemory: Infinity, what: 'request' }), {
    code: 'INPUT_INVALID',
    message: /request: JSON nested 100000 levels deep, above the limit of 64/,
  });
  for (const bad of [new Uint8Array([0xff]), enc('[1,'), enc('\ufeff[]')])
    assert.throws(() => parseBounded(bad, { maxDepth: 64, maxMemory: Infinity }), { code: 'INPUT_INVALID' });
  assert.equal(rawDepth('["[[[", {"a": "\\"[["}]'), 2);
});

test('the testee answers a request beyond its bounds and reads on', () => {
  const bin = fileURLToPath(new URL('../bin/conformance.mjs', import.meta.url));
  const lines = [
    `${'['.repeat(100000)}${']'.repeat(100000)}`,
    `{"cmd": "predict", "seq": 1, "file": "x", "observations": ${'['.repeat(65)}${']'.repeat(65)}}`,
    '{"cmd": "start", "protocol": 1}',
    '{"cmd": "stop"}',
  ];
  const r = spawnSync(process.execPath, [bin], { input: `${lines.join('\n')}\n`, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const answers = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  // annex A.5: each malformed line is answered INPUT_INVALID, then the handshake is answered
  assert.deepEqual(
    answers.map((a) => a.code ?? a.ok),
    ['INPUT_INVALID', 'INPUT_INVALID', true],
  );
  assert.match(answers[0].message, /JSON_DEPTH/);
  assert.equal(answers[1].seq, null);
  assert.match(answers[1].message, /JSON_DEPTH/);
});
