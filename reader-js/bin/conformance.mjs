#!/usr/bin/env node
// The conformance testee of annex A: JSON lines on stdin/stdout, one process for all cases.
//
// Every request line gets exactly one answer line (stop excepted): a line that is not a request of
// annex A.2 is answered INPUT_INVALID as annex A.5 says, and anything the reader did not expect is
// answered INTERNAL_ERROR (with its stack on stderr) rather than ending the process.
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { dump, open, act, parseJson, validate, RlarchiveError, SUPPORTED_EXTENSIONS } from '../src/index.js';
import { checkValue } from '../src/values.js';
import { decodeValue, inlineArray } from '../src/decode.js';
import { jsonCost } from '../src/jsonbounds.js';
import { MAX_INPUT_JSON_MEMORY, MAX_JSON_BYTES } from '../src/limits.js';

/** @typedef {import('../src/json.js').JsonObject} JsonObject */
/**
 * An answer line (annex A.2): its members by name.
 * @typedef {{[member: string]: unknown}} Answer
 */

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/** The requests this testee answers about a file (the handshake lists the ones besides dump). */
const FILE_REQUESTS = ['dump', 'predict', 'validate'];

/** A line that is not a request of annex A.2; `seq` is the request's when it could be read. */
class Malformed extends Error {
  /**
   * @param {string} message
   * @param {number | null} [seq]
   */
  constructor(message, seq = null) {
    super(message);
    this.seq = seq;
  }
}

/**
 * One JSON line, ASCII only, so that no line-splitting convention can cut it.
 * @param {Answer} obj
 */
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

/**
 * The lines of a stream of Buffers, without their `\n` (a last line without one counts); a line longer
 * than `limit` bytes is never held: it comes as null, and the rest of it is read and thrown away.
 * @param {AsyncIterable<Buffer>} stream
 * @param {number} limit
 * @returns {AsyncGenerator<Buffer | null, void, undefined>}
 */
async function* boundedLines(stream, limit) {
  /** @type {Buffer[]} */
  let parts = [];
  let size = 0;
  let tooLong = false;
  for await (const chunk of stream) {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); ; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      if (!tooLong && size + piece.length > limit) {
        tooLong = true;
        parts = [];
      }
      if (!tooLong) {
        parts.push(piece);
        size += piece.length;
      }
      if (nl < 0) break;
      yield tooLong ? null : Buffer.concat(parts, size);
      parts = [];
      size = 0;
      tooLong = false;
      start = nl + 1;
    }
  }
  if (tooLong) yield null;
  else if (size > 0) yield Buffer.concat(parts, size);
}

/**
 * The members of a file request, by their JSON types (annex A.5); throws Malformed.
 * @param {JsonObject} req
 * @param {number} seq
 */
function checkForm(req, seq) {
  const file = req.get('file');
  if (typeof file !== 'string' || file.includes('\0') || !isAbsolute(file))
    throw new Malformed("'file' must be an absolute path (a string)", seq);
  if (req.get('cmd') !== 'predict') return;
  const observations = req.get('observations');
  if (!Array.isArray(observations)) throw new Malformed("'observations' must be an array", seq);
  const starts = req.has('episode_starts') ? req.get('episode_starts') : observations.map(() => false);
  if (!Array.isArray(starts) || starts.length !== observations.length || !starts.every((s) => typeof s === 'boolean'))
    throw new Malformed("'episode_starts' must be an array of booleans, one per observation", seq);
  const masks = req.has('action_masks') ? req.get('action_masks') : observations;
  if (!Array.isArray(masks) || masks.length !== observations.length)
    throw new Malformed("'action_masks' must be an array, one mask per observation", seq);
}

/**
 * A request line as a request of annex A.2 (a json.js tree), its form checked in the order of annex A.5.
 * @param {Buffer} line
 * @returns {JsonObject}
 */
function parseRequest(line) {
  // parsed only within the bound of a caller's JSON (spec §15)
  if (jsonCost(line) > MAX_INPUT_JSON_MEMORY) {
    throw new Malformed(`the request could take more than ${MAX_INPUT_JSON_MEMORY} bytes to parse`);
  }
  let req;
  try {
    req = parseJson(line);
  } catch (e) {
    if (!(e instanceof RlarchiveError)) throw e;
    throw new Malformed(`the line is not a JSON text of spec §6 (${e.message})`);
  }
  if (!(req instanceof Map)) throw new Malformed('the request is not a JSON object');
  const cmd = req.get('cmd');
  if (cmd === 'start' || cmd === 'stop') return req;
  const seq = typeof req.get('seq') === 'bigint' ? Number(req.get('seq')) : null;
  if (!FILE_REQUESTS.includes(/** @type {string} */ (cmd)))
    throw new Malformed(
      req.has('cmd') ? `unknown request ${JSON.stringify(String(cmd).slice(0, 40))}` : "the request has no 'cmd'",
      seq,
    );
  if (seq === null) throw new Malformed("'seq' must be an integer");
  checkForm(req, seq);
  return req;
}

/**
 * A value of the request (spec §7, inline arrays), checked and decoded.
 * @param {unknown} tree
 * @param {string} pointer
 */
function requestValue(tree, pointer) {
  /** @type {import('../src/value_rules.js').ValueContext} */
  const ctx = { member: 'request', references: [] };
  checkValue(tree, pointer, ctx);
  if (ctx.references.length > 0)
    throw new RlarchiveError('REF_NOT_FOUND', 'a value outside an archive cannot reference tensors', { pointer });
  return decodeValue(tree, null);
}

/**
 * Annex A predict: the archive's portable policy over the request's observations.
 * @param {JsonObject} req a request whose form checkForm accepted
 * @returns {Promise<Answer>}
 */
async function predict(req) {
  const ar = await open(/** @type {string} */ (req.get('file')));
  try {
    await ar.checkExtensions();
    const policy = await ar.policy();
    // the request does not fit the archive (annex A.5)
    if (policy === null) throw new RlarchiveError('INPUT_INVALID', 'the archive has no portable policy (RLA_policy)');
    let observations, actionMasks;
    try {
      observations = /** @type {unknown[]} */ (req.get('observations')).map((v, i) =>
        requestValue(v, `/observations/${i}`),
      );
      const masks = /** @type {unknown[] | undefined} */ (req.get('action_masks'));
      actionMasks = masks ? masks.map((v, i) => requestValue(v, `/action_masks/${i}`)) : null;
    } catch (e) {
      if (!(e instanceof RlarchiveError)) throw e;
      throw new RlarchiveError('INPUT_INVALID', `the request holds a value that is not one of spec §7: ${e.message}`);
    }
    // the options act() takes (evaluator.js); episode_starts checked by checkForm
    const options = /** @type {Parameters<typeof act>[2]} */ ({
      episodeStarts: req.get('episode_starts') ?? null,
      actionMasks,
    });
    const actions = act(policy, observations, options);
    return { result: 'actions', actions: actions.map(inlineArray) };
  } finally {
    await ar.close();
  }
}

/**
 * The answer to a well-formed file request (dump, predict, validate).
 * @param {JsonObject} req
 * @returns {Promise<Answer>}
 */
async function answer(req) {
  const seq = Number(req.get('seq'));
  const file = /** @type {string} */ (req.get('file')); // checkForm accepted it
  try {
    if (req.get('cmd') === 'validate') return { seq, result: 'report', report: await validate(file) };
    if (req.get('cmd') === 'predict') return { seq, ...(await predict(req)) };
    return { seq, result: 'dump', dump: await dump(file) };
  } catch (e) {
    if (e instanceof RlarchiveError) return { seq, result: 'error', code: e.code, message: e.message };
    throw e;
  }
}

/**
 * @param {JsonObject} req
 * @returns {Answer}
 */
function handshake(req) {
  if (req.get('protocol') !== 1n) return { ok: false };
  return {
    ok: true,
    protocol: 1,
    reader: { name: pkg.name, version: pkg.version, language: 'javascript' },
    extensions: [...SUPPORTED_EXTENSIONS],
    requests: ['predict', 'validate'],
  };
}

/**
 * The answer to one request line (null: a line longer than the limit); null answers stop.
 * @param {Buffer | null} line
 * @returns {Promise<Answer | null>}
 */
async function replyTo(line) {
  let seq = null;
  try {
    if (line === null) throw new Malformed(`the request line is longer than ${MAX_JSON_BYTES} bytes`);
    const req = parseRequest(line);
    if (req.get('cmd') === 'stop') return null;
    if (req.get('cmd') === 'start') return handshake(req);
    seq = Number(req.get('seq'));
    return await answer(req);
  } catch (e) {
    if (e instanceof Malformed) return { seq: e.seq, result: 'error', code: 'INPUT_INVALID', message: e.message };
    // never expected: reported as a failure, not a dead process
    const thrown = /** @type {{stack?: unknown, message?: unknown} | null | undefined} */ (e); // anything may be thrown
    process.stderr.write(`internal error: ${thrown?.stack ?? e}\n`);
    return { seq, result: 'error', code: 'INTERNAL_ERROR', message: String(thrown?.message ?? e) };
  }
}

for await (const line of boundedLines(process.stdin, MAX_JSON_BYTES)) {
  const reply = await replyTo(line);
  if (reply === null) break;
  send(reply);
  if (reply.ok === false) break; // a protocol it does not speak: refused, then it exits
}
finish();
