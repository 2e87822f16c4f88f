#!/usr/bin/env node
// The conformance testee of annex A: JSON lines on stdin/stdout, one process for all cases.
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import { dump, open, act, parseJson, validate, RlarchiveError, SUPPORTED_EXTENSIONS } from '../src/index.js';
import { checkValue } from '../src/values.js';
import { decodeValue, inlineArray } from '../src/decode.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/** One JSON line, ASCII only, so that no line-splitting convention can cut it. */
function send(obj) {
  const line = JSON.stringify(obj).replace(
    /[\u0080-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
  process.stdout.write(line + '\n');
}

function finish() {
  process.stdout.write('', () => process.exit(0));
}

/** A value of the request (spec §7, inline arrays), checked and decoded. */
function requestValue(v, pointer) {
  const tree = parseJson(new TextEncoder().encode(JSON.stringify(v)), { member: 'request' });
  checkValue(tree, pointer, { member: 'request', references: [] });
  return decodeValue(tree, null);
}

/** Annex A predict: the archive's portable policy over the request's observations. */
async function predict(req) {
  const ar = await open(req.file);
  try {
    await ar.checkExtensions();
    const policy = await ar.policy();
    if (policy === null) return { result: 'skipped', reason: 'the archive has no portable policy (RLA_policy)' };
    const observations = req.observations.map((v, i) => requestValue(v, `/observations/${i}`));
    const actionMasks = req.action_masks ? req.action_masks.map((v, i) => requestValue(v, `/action_masks/${i}`)) : null;
    const actions = act(policy, observations, { episodeStarts: req.episode_starts ?? null, actionMasks });
    return { result: 'actions', actions: actions.map(inlineArray) };
  } finally {
    await ar.close();
  }
}

async function handle(req) {
  if (req?.cmd === 'start') {
    if (req.protocol !== 1) {
      send({ ok: false });
      return 'exit';
    }
    send({
      ok: true,
      protocol: 1,
      reader: { name: pkg.name, version: pkg.version, language: 'javascript' },
      extensions: [...SUPPORTED_EXTENSIONS],
      requests: ['predict', 'validate'],
    });
    return null;
  }
  if (req?.cmd === 'dump' || req?.cmd === 'predict' || req?.cmd === 'validate') {
    const seq = req.seq;
    if (typeof req.file !== 'string') {
      send({ seq, result: 'skipped', reason: 'request has no file path' });
      return null;
    }
    try {
      const answer =
        req.cmd === 'dump'
          ? { result: 'dump', dump: await dump(req.file) }
          : req.cmd === 'validate'
            ? { result: 'report', report: await validate(req.file) }
            : await predict(req);
      send({ seq, ...answer });
    } catch (e) {
      if (e instanceof RlarchiveError) send({ seq, result: 'error', code: e.code, message: e.message });
      else {
        // never expected: reported as a failure, not hidden
        process.stderr.write(`internal error on ${req.file}: ${e?.stack ?? e}\n`);
        send({ seq, result: 'error', code: 'INTERNAL_ERROR', message: String(e?.message ?? e) });
      }
    }
    return null;
  }
  if (req?.cmd === 'stop') return 'exit';
  process.stderr.write(`unknown request: ${JSON.stringify(req)}\n`);
  send({ ok: false, error: 'unknown request' });
  return null;
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (line.trim() === '') continue;
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    process.stderr.write(`not JSON: ${line.slice(0, 200)}\n`);
    send({ ok: false, error: 'request is not JSON' });
    continue;
  }
  if ((await handle(req)) === 'exit') break;
}
finish();
