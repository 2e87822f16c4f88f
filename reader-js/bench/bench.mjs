#!/usr/bin/env node
// Speed of the JavaScript reader on one archive file: open, verify (CRC-32 and
// SHA-256 of every member) and materialise (every tensor read into memory),
// each with the runtime's built-in digests (node:zlib, node:crypto) and with
// the package's JavaScript ones, plus CRC-32 and SHA-256 alone. Every figure
// is the best of --repeat runs. Nothing here asserts a speed: it prints.
//
//   node bench/bench.mjs FILE [--repeat 3] [--json]

import { readFile } from 'node:fs/promises';
import { open } from '../src/index.js';
import { crc32, crc32Ready, crc32Implementation } from '../src/crc32.js';
import { sha256Hex, sha256Implementation } from '../src/sha256.js';
import { useNativeDigests } from '../src/runtime.js';

const HASH_SAMPLE = 64 * 1024 * 1024; // CRC-32 and SHA-256 alone run over at most this many bytes of the file

function parseArgs(argv) {
  const args = { file: null, repeat: 3, json: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--repeat') args.repeat = Math.max(1, Number(argv[++i]) || 1);
    else if (argv[i] === '--json') args.json = true;
    else if (!args.file) args.file = argv[i];
    else throw new Error(`unexpected argument ${argv[i]}`);
  }
  if (!args.file) throw new Error('usage: node bench/bench.mjs FILE [--repeat N] [--json]');
  return args;
}

async function best(fn, repeat) {
  let min = Infinity;
  for (let i = 0; i < repeat; i++) {
    const t = process.hrtime.bigint();
    await fn();
    min = Math.min(min, Number(process.hrtime.bigint() - t) / 1e9);
  }
  return min;
}

async function withArchive(file, fn) {
  const ar = await open(file);
  try {
    return await fn(ar);
  } finally {
    await ar.close();
  }
}

const operations = (file) => ({
  open: () => withArchive(file, (ar) => ar.groups.map((g) => ar.tensorInfo(g))),
  verify: () => withArchive(file, (ar) => ar.verify()),
  materialise: () =>
    withArchive(file, async (ar) => {
      for (const g of ar.groups) for (const t of ar.tensorInfo(g)) await ar.tensor(g, t.name);
    }),
});

async function main() {
  const args = parseArgs(process.argv.slice(2));
  await crc32Ready;
  const whole = await readFile(args.file);
  const sample = whole.subarray(0, Math.min(whole.length, HASH_SAMPLE));
  await operations(args.file).open(); // once untimed: module loading and compilation are not the reader's speed
  const result = {
    node: process.version,
    file_bytes: whole.length,
    hash_sample_bytes: sample.length,
    repeat: args.repeat,
    modes: {},
  };
  for (const native of [true, false]) {
    useNativeDigests(native);
    const mode = { crc32: crc32Implementation(), sha256: await sha256Implementation(), seconds: {} };
    for (const [name, fn] of Object.entries(operations(args.file))) mode.seconds[name] = await best(fn, args.repeat);
    mode.seconds['crc32 alone'] = await best(() => crc32(sample), args.repeat);
    mode.seconds['sha256 alone'] = await best(() => sha256Hex(sample), args.repeat);
    result.modes[native ? 'built-in' : 'javascript'] = mode;
  }
  useNativeDigests(true);
  if (args.json) {
    process.stdout.write(JSON.stringify(result) + '\n');
    return;
  }
  console.log(`${args.file}: ${(whole.length / 1e6).toFixed(0)} MB, Node ${result.node}, best of ${args.repeat}`);
  for (const [name, mode] of Object.entries(result.modes)) {
    console.log(
      `\n${name} digests (CRC-32: ${mode.crc32}; SHA-256: ${mode.sha256.oneShot} / ${mode.sha256.incremental})`,
    );
    for (const [op, s] of Object.entries(mode.seconds)) {
      const bytes = op.endsWith('alone') ? sample.length : whole.length;
      const rate = op === 'open' ? '' : `${(bytes / 1e9 / s).toFixed(2).padStart(8)} GB/s`; // opening reads a few records
      console.log(`  ${op.padEnd(14)} ${s.toFixed(4).padStart(10)} s ${rate}`);
    }
  }
}

main().catch((e) => {
  console.error(`bench: ${e?.message ?? e}`);
  process.exit(2);
});
