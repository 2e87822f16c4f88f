// The annex A testee (bin/conformance.mjs) speaks the protocol correctly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dump, SUPPORTED_EXTENSIONS } from '../src/index.js';
import { archive } from './helpers/build.mjs';

const BIN = fileURLToPath(new URL('../bin/conformance.mjs', import.meta.url));

/** Runs the testee with these request lines; resolves to {lines, code}. */
function run(requests) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.setEncoding('utf8');
    p.stdout.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ lines: out.split('\n').filter((l) => l !== ''), raw: out, code }));
    for (const r of requests) p.stdin.write(typeof r === 'string' ? r + '\n' : JSON.stringify(r) + '\n');
    p.stdin.end();
  });
}

test('handshake, dumps, errors and stop', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rla-conf-'));
  try {
    const good = join(dir, 'good.rlarchive');
    const bytes = archive({ data: '{"data":{"s":"é\u2028x","f":0.5}}' });
    writeFileSync(good, bytes);
    const bad = join(dir, 'bad.rlarchive');
    writeFileSync(bad, archive({ data: '{"data":{"a":NaN}}' }));
    const { lines, raw, code } = await run([
      { cmd: 'start', protocol: 1 },
      { cmd: 'dump', seq: 1, file: good },
      { cmd: 'dump', seq: 2, file: bad },
      { cmd: 'dump', seq: 3, file: join(dir, 'missing.rlarchive') },
      { cmd: 'stop' },
    ]);
    assert.equal(code, 0);
    assert.ok(/^[\x00-\x7f]*$/.test(raw), 'answers are ASCII lines');
    const msgs = lines.map((l) => JSON.parse(l));
    assert.equal(msgs.length, 4);
    assert.deepEqual(msgs[0], {
      ok: true,
      protocol: 1,
      reader: { name: 'rlarchive-reader', version: msgs[0].reader.version, language: 'javascript' },
      extensions: [...SUPPORTED_EXTENSIONS],
      requests: ['predict', 'validate'],
    });
    assert.ok(msgs[0].extensions.includes('RLA_vec_normalize'));
    assert.deepEqual({ ...msgs[1], dump: undefined }, { seq: 1, result: 'dump', dump: undefined });
    assert.equal(msgs[1].dump, await dump(bytes));
    assert.equal(msgs[2].seq, 2);
    assert.equal(msgs[2].result, 'error');
    assert.equal(msgs[2].code, 'JSON_NAN_LITERAL');
    assert.equal(typeof msgs[2].message, 'string');
    assert.equal(msgs[3].code, 'IO_ERROR');
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('an unknown protocol is refused', async () => {
  const { lines, code } = await run([
    { cmd: 'start', protocol: 2 },
    { cmd: 'dump', seq: 1, file: '/nonexistent' },
  ]);
  assert.equal(code, 0);
  assert.deepEqual(
    lines.map((l) => JSON.parse(l)),
    [{ ok: false }],
  );
});

test('every request gets exactly one line, even a bad one', async () => {
  const { lines, code } = await run([{ cmd: 'start', protocol: 1 }, 'not json', { cmd: 'what' }, { cmd: 'stop' }]);
  assert.equal(code, 0);
  assert.equal(lines.length, 3);
});
