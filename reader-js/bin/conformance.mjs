#!/usr/bin/env node
// The conformance testee of annex A: JSON lines on stdin/stdout, one process for all cases.
import { readFileSync } from 'node:fs';
import { dump, open, act, parseJson, validate, RlarchiveError, SUPPORTED_EXTENSIONS } from '../src/index.js';
import { checkValue } from '../src/values.js';
import { decodeValue, inlineArray } from '../src/decode.js';
import { PLAIN_BYTE_COST, parseBounded } from '../src/jsonbounds.js';
import { MAX_INPUT_JSON_MEMORY, MAX_JSON_DEPTH } from '../src/limits.js';

/** The longest request line read: a longer one cannot be read and parsed within MAX_INPUT_JSON_MEMORY (§15). */
const MAX_REQUEST_BYTES = Math.floor(MAX_INPUT_JSON_MEMORY / PLAIN_BYTE_COST);

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

/**
 * The lines of a byte stream without their `\n`, each as bytes, or null for a line longer than
 * `limit` bytes (never held: its bytes are dropped as they come).
 */
async function* boundedLines(stream, limit) {
  let parts = [],
    size = 0,
    tooLong = false;
  for await (const chunk of stream) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!tooLong && size + end - start > limit) [tooLong, parts, size] = [true, [], 0];
      if (!tooLong) {
        parts.push(chunk.subarray(start, end));
        size += end - start;
      }
      if (nl < 0) break;
      yield tooLong ? null : Buffer.concat(parts, size);
      [tooLong, parts, size, start] = [false, [], 0, nl + 1];
    }
  }
  if (size > 0 || tooLong) yield tooLong ? null : Buffer.concat(parts, size);
}

for await (const line of boundedLines(process.stdin, MAX_REQUEST_BYTES)) {
  if (line === null) {
    send({ ok: false, error: `request line longer than ${MAX_REQUEST_BYTES} bytes` });
    continue;
  }
  if (line.every((c) => c === 0x20 || c === 0x09 || c === 0x0d)) continue;
  let req;
  try {
    req = parseBounded(line, { maxDepth: MAX_JSON_DEPTH, maxMemory: MAX_INPUT_JSON_MEMORY, what: 'request' });
  } catch (e) {
    process.stderr.write(`${e.message.slice(0, 300)}\n`);
    send({ ok: false, error: e.message });
    continue;
  }
  if ((await handle(req)) === 'exit') break;
}
finish();
