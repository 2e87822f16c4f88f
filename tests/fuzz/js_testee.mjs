#!/usr/bin/env node
// The JavaScript reader as a fuzzing testee: the conformance protocol (spec
// Annex A) of reader-js/bin/conformance.mjs, plus, for an accepted archive,
// decoding of every value (data, optimizers, referenced arrays) and every
// tensor, so that a crash outside dump() is found too. Any exception other
// than RlarchiveError is answered as the code INTERNAL_ERROR (a crash).
import { createInterface } from 'node:readline';
import { open, RlarchiveError } from '../../reader-js/src/index.js';

function send(obj) {
  const line = JSON.stringify(obj).replace(/[\u0080-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  process.stdout.write(line + '\n');
}

async function loadAll(v, seen = 0) {
  if (v === null || typeof v !== 'object') return;
  if (typeof v.load === 'function') await v.load();
  const kids = v instanceof Map ? [...v.keys(), ...v.values()] : Array.isArray(v) ? v : Object.values(v);
  for (const x of kids) await loadAll(x, seen + 1);
}

let phase = 'open';

async function deepRead(file) {
  phase = 'open';
  const ar = await open(file);
  try {
    phase = 'dump';
    const text = await ar.dump();
    phase = 'data';
    await loadAll(ar.data);
    phase = 'optimizers';
    await loadAll(ar.optimizers);
    phase = 'tensors';
    for (const g of ar.groups) for (const t of ar.tensorInfo(g)) await ar.tensor(g, t.name);
    return text;
  } finally {
    await ar.close();
  }
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (line.trim() === '') continue;
  const req = JSON.parse(line);
  if (req.cmd === 'start') {
    send({ ok: req.protocol === 1, protocol: 1, reader: { name: 'rlarchive-reader', version: 'deep', language: 'javascript' } });
  } else if (req.cmd === 'dump') {
    try {
      send({ seq: req.seq, result: 'dump', dump: await deepRead(req.file) });
    } catch (e) {
      // phase: where it failed (open, dump, or decoding data / optimizers / tensors of an accepted archive)
      if (e instanceof RlarchiveError) send({ seq: req.seq, result: 'error', code: e.code, message: String(e.message).slice(0, 500), phase });
      else send({ seq: req.seq, result: 'error', code: 'INTERNAL_ERROR', message: String(e?.stack ?? e).slice(0, 3000), phase });
    }
  } else if (req.cmd === 'stop') break;
  else send({ ok: false, error: 'unknown request' });
}
process.stdout.write('', () => process.exit(0));
