// The annex A testee (bin/conformance.mjs) speaks the protocol correctly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dump, SUPPORTED_EXTENSIONS } from '../src/index.js';
import { archive } from './helpers/build.mjs';

const BIN = fileURLToPath(new URL('../bin/conformance.mjs', import.meta.url));

/** Runs the testee with these request lines (objects, strings or Buffers); resolves to {lines, code}. */
function run(requests) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.setEncoding('utf8');
    p.stdout.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ lines: out.split('\n').filter((l) => l !== ''), raw: out, code }));
    for (const r of requests) {
      if (Buffer.isBuffer(r)) p.stdin.write(Buffer.concat([r, Buffer.from('\n')]));
      else p.stdin.write(typeof r === 'string' ? r + '\n' : JSON.stringify(r) + '\n');
    }
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

const VECTORS = new URL('../../test-vectors/', import.meta.url);
const vectorPath = (rel) => fileURLToPath(new URL(rel, VECTORS));
const DICT_POLICY = vectorPath('valid/policy-ppo-dict-observation.rlarchive');
const MINIMAL = vectorPath('valid/minimal.rlarchive');
const nd = (dtype, shape, bytes) => ({ $type: 'ndarray', dtype, shape, base64: Buffer.from(bytes).toString('base64') });
const DICT_OBS = { pos: nd('F32', [3], new Uint8Array(12)), mode: nd('I64', [], new Uint8Array(8)) };

/** The answers after the handshake, one per request line (Buffers or strings), with stop sent last. */
async function answers(lines) {
  const { lines: out, code } = await run([{ cmd: 'start', protocol: 1 }, ...lines, { cmd: 'stop' }]);
  assert.equal(code, 0);
  return out.slice(1).map((l) => JSON.parse(l));
}

test('a malformed request is answered INPUT_INVALID, with its seq when it has one (annex A.5)', async () => {
  const cases = [
    ['not json', null],
    ['', null],
    ['[1, 2]', null],
    ['{"cmd": "dump", "seq": 1, "seq": 1, "file": "/x"}', null],
    [`{"cmd": "dump", "seq": 1, "file": "/x", "deep": ${'['.repeat(100000)}${']'.repeat(100000)}}`, null],
    [{ cmd: 'dump', file: MINIMAL }, null],
    [{ cmd: 'dump', seq: '2', file: MINIMAL }, null],
    [{ cmd: 'inspect', seq: 3, file: MINIMAL }, 3],
    [{ seq: 4, file: MINIMAL }, 4],
    [{ cmd: 'dump', seq: 5 }, 5],
    [{ cmd: 'dump', seq: 6, file: 'minimal.rlarchive' }, 6],
    [{ cmd: 'dump', seq: 7, file: 'http://127.0.0.1:9/minimal.rlarchive' }, 7],
    [{ cmd: 'predict', seq: 8, file: DICT_POLICY }, 8],
    [{ cmd: 'predict', seq: 9, file: DICT_POLICY, observations: [DICT_OBS], episode_starts: [1] }, 9],
    [{ cmd: 'predict', seq: 10, file: DICT_POLICY, observations: [DICT_OBS], action_masks: [] }, 10],
    [{ cmd: 'predict', seq: 11, file: MINIMAL, observations: [DICT_OBS] }, 11],
  ];
  const got = await answers(cases.map(([line]) => line));
  assert.equal(got.length, cases.length);
  got.forEach((a, i) => {
    assert.deepEqual([a.seq, a.result, a.code], [cases[i][1], 'error', 'INPUT_INVALID'], JSON.stringify(a));
    assert.equal(typeof a.message, 'string');
  });
});

test('a Dict observation mixing a batch and one observation is INPUT_INVALID, not INTERNAL_ERROR', async () => {
  const mixed = { pos: nd('F32', [2, 3], new Uint8Array(24)), mode: nd('I64', [], new Uint8Array(8)) };
  const [bad, good] = await answers([
    { cmd: 'predict', seq: 1, file: DICT_POLICY, observations: [mixed] },
    { cmd: 'predict', seq: 2, file: DICT_POLICY, observations: [DICT_OBS] },
  ]);
  assert.deepEqual([bad.seq, bad.result, bad.code], [1, 'error', 'INPUT_INVALID']);
  assert.deepEqual([good.seq, good.result], [2, 'actions']);
});

test('the request cases of the golden vectors are answered as index.json says (annex A.5)', async () => {
  const index = JSON.parse(readFileSync(new URL('index.json', VECTORS), 'utf8'));
  const cases = index.cases.filter((c) => c.request_file);
  assert.ok(cases.length >= 20);
  const lines = cases.map((c, i) => {
    let raw = readFileSync(new URL(c.request_file, VECTORS));
    if (c.request_file.endsWith('.gz')) raw = gunzipSync(raw, { maxOutputLength: 1 << 28 });
    const file = JSON.stringify(vectorPath(c.file));
    return Buffer.from(
      raw
        .toString('latin1')
        .replaceAll('$SEQ', String(i + 1))
        .replaceAll('$FILE', file),
      'latin1',
    );
  });
  const got = await answers(lines);
  assert.equal(got.length, cases.length);
  cases.forEach((c, i) => {
    const want = c.expect.result === 'error' ? c.expect.code : c.expect.result;
    assert.equal(got[i].code ?? got[i].result, want, `${c.id}: ${JSON.stringify(got[i]).slice(0, 300)}`);
    assert.equal(got[i].seq, c.seq_unreadable ? null : i + 1, c.id);
  });
});

test('random malformed requests each get exactly one answer, never INTERNAL_ERROR', async () => {
  let state = 20261128;
  const rand = (n) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % n;
  };
  const pick = (xs) => xs[rand(xs.length)];
  const values = [
    null,
    true,
    7,
    -1.5,
    2 ** 60,
    '',
    'dump',
    '/abs',
    [],
    {},
    DICT_OBS,
    nd('F32', [2], new Uint8Array(3)),
  ];
  const lines = [];
  for (let seq = 1; seq <= 150; seq++) {
    const req = { cmd: pick(['dump', 'validate', 'predict', 'what']), seq, file: pick([MINIMAL, DICT_POLICY, 'rel']) };
    if (req.cmd === 'predict') req.observations = [pick([DICT_OBS, ...values])];
    for (let k = rand(3); k > 0; k--) {
      const key = pick(['cmd', 'seq', 'file', 'observations', 'episode_starts', 'action_masks']);
      if (rand(2)) delete req[key];
      else req[key] = pick(values);
    }
    let text = JSON.stringify(req);
    if (rand(4) === 0) text = text.slice(0, rand(text.length + 1));
    lines.push(text);
  }
  const got = await answers(lines);
  assert.equal(got.length, lines.length);
  for (const a of got) {
    assert.ok('seq' in a && ['dump', 'error', 'actions', 'report'].includes(a.result), JSON.stringify(a));
    assert.notEqual(a.code, 'INTERNAL_ERROR', JSON.stringify(a));
  }
});
