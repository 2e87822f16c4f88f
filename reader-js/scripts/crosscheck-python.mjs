// Development aid: runs every case of test/helpers/cases.mjs through this
// reader and through the Python reference reader, and lists the cases where
// the first error codes differ; with --fuzz N, also N random mutations of
// valid archives. Usage: node scripts/crosscheck-python.mjs [--fuzz N] [PYTHON]
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { cases } from '../test/helpers/cases.mjs';
import { archive, safetensors, bytesOf, b64 } from '../test/helpers/build.mjs';
import { open } from '../src/index.js';

const args = process.argv.slice(2);
const fuzzAt = args.indexOf('--fuzz');
const fuzzN = fuzzAt >= 0 ? Number(args.splice(fuzzAt, 2)[1]) : 0;
const python = args[0] ?? new URL('../../.venv/bin/python', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'rlarchive-xcheck-'));
const list = [];
for (const c of cases()) {
  const path = join(dir, `${c.id}.rlarchive`);
  writeFileSync(path, c.make());
  list.push({ c, path });
}
let seed = 12345;
const rnd = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
const valid = cases().filter((c) => c.code === null).map((c) => c.make());
valid.push(readFileSync(new URL('../test/fixtures/python-rich.rlarchive', import.meta.url)));
for (let n = 0; n < fuzzN; n++) {
  const b = Uint8Array.from(valid[n % valid.length]);
  const edits = 1 + Math.floor(rnd() * 3);
  for (let k = 0; k < edits; k++) b[Math.floor(rnd() * b.length)] = rnd() < 0.5 ? Math.floor(rnd() * 256) : b[Math.floor(rnd() * b.length)] ^ (1 << Math.floor(rnd() * 8));
  const path = join(dir, `fuzz-${n}.rlarchive`);
  writeFileSync(path, b);
  list.push({ c: { id: `fuzz-${n}`, code: '?' }, path });
}
// text mutations of data.json, manifest.json and a safetensors header (CRCs and digests stay right)
const f32 = b64(bytesOf(new Float32Array([0, 1])));
const i64 = b64(bytesOf(new BigInt64Array([2n, 3n])));
const DATA = JSON.stringify({ data: {
  a: [1, 2.5, { $type: 'tuple', items: [1, 'x'] }], b: { $type: 'int', value: '9007199254740993' }, c: { $type: 'float', value: 'nan' },
  d: { $type: 'schedule', kind: 'linear', start: 1, end: 0, end_fraction: 0.5 },
  e: { $type: 'schedule', kind: 'piecewise', points: [[0, 1], [0.5, 2]], interpolation: 'step' },
  s: { $type: 'space', kind: 'box', dtype: 'F32', shape: [2], low: { $type: 'ndarray', dtype: 'F32', shape: [2], base64: f32 }, high: { $type: 'ndarray', dtype: 'F32', shape: [2], ref: { group: 'arrays', name: 'h' } } },
  m: { $type: 'space', kind: 'multi_discrete', dtype: 'I64', nvec: { $type: 'ndarray', dtype: 'I64', shape: [2], base64: i64 }, start: { $type: 'ndarray', dtype: 'I64', shape: [2], base64: i64 } },
  t: { $type: 'space', kind: 'dict', spaces: [['a', { $type: 'space', kind: 'discrete', n: 2, start: 0, dtype: 'I64' }], ['b', { $type: 'space', kind: 'text', min_length: 0, max_length: 3, charset: 'ab' }]] },
  k: { $type: 'dict', entries: [[1, 'a'], [{ $type: 'bytes', base64: 'AAE=' }, null], [{ $type: 'tuple', items: [1.5] }, 2]] },
  o: { $type: 'opaque', format: 'pickle', base64: 'gAROLg==', type: 'x' }, q: { $type: 'class', module: 'a.b', qualname: 'C' },
  r: { $type: 'scalar', dtype: 'F16', base64: 'ADw=' },
} });
const HEADER = '{"h":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"z":{"dtype":"U8","shape":[1,1],"data_offsets":[8,9]}}';
const ALPHA = '{}[]",:0123456789.eE+-_ abcdefFIUnulrsz\\$';
const mutate = (text) => {
  const ch = [...text];
  const edits = 1 + Math.floor(rnd() * 3);
  for (let k = 0; k < edits; k++) ch[Math.floor(rnd() * ch.length)] = ALPHA[Math.floor(rnd() * ALPHA.length)];
  return ch.join('');
};
const tensors = { arrays: { h: { dtype: 'F32', shape: [2], data: bytesOf(new Float32Array([1, 2])) } } };
for (let n = 0; n < fuzzN; n++) {
  let b;
  const which = n % 3;
  if (which === 0) b = archive({ data: mutate(DATA), tensors });
  else if (which === 1) b = archive({ data: DATA, tensors, manifest: (m) => mutate(JSON.stringify({ ...m, extensions_used: ['e1'], metadata: { k: 'v' } })) });
  else b = archive({ data: DATA, tensors: { ...tensors, g: safetensors({}, { header: mutate(HEADER), buffer: new Uint8Array(9), pad: true }) } });
  const path = join(dir, `tfuzz-${n}.rlarchive`);
  writeFileSync(path, b);
  list.push({ c: { id: `fuzz-text-${n}`, code: '?' }, path });
}
const py = `
import sys, json, rlarchive
for path in sys.argv[1:]:
    try:
        with rlarchive.open(path) as ar:
            ar.dump()
        print(json.dumps(None))
    except rlarchive.RlarchiveError as e:
        print(json.dumps(e.code))
    except Exception as e:
        print(json.dumps('CRASH ' + type(e).__name__ + ': ' + str(e)[:80]))
`;
const r = spawnSync(python, ['-c', py, ...list.map((x) => x.path)], { encoding: 'utf8', maxBuffer: 1 << 26 });
if (r.status !== 0) {
  console.error(r.stderr);
  process.exit(2);
}
const pyCodes = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
let diff = 0;
for (let i = 0; i < list.length; i++) {
  let js = null;
  try {
    const ar = await open(list[i].path);
    try {
      await ar.dump();
    } finally {
      await ar.close();
    }
  } catch (e) {
    js = e.code ?? `CRASH ${e}`;
  }
  if (js !== pyCodes[i]) {
    diff++;
    if (list[i].c.id.startsWith('fuzz-')) writeFileSync(`/tmp/xcheck-${list[i].c.id}.rlarchive`, readFileSync(list[i].path));
    console.log(`${list[i].c.id}: js=${js} python=${pyCodes[i]} (expected ${list[i].c.code})`);
  }
}
rmSync(dir, { recursive: true });
if (fuzzN) console.log('differing fuzz files were copied to /tmp/xcheck-fuzz-*.rlarchive');
console.log(`${list.length - diff} agree, ${diff} differ`);
