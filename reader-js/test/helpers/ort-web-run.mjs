// Runs ONNX models in onnxruntime-web (its WebAssembly backend, under Node) for
// the Python tests of `rlarchive export-onnx`: reads jobs from the JSON file
// given as the only argument and prints their outputs as one JSON line; with --serve, the path of a jobs file
// per line of standard input and a line of outputs for each.
//
// Jobs: [{"model": PATH, "steps": [FEEDS, ...], "carry": {INPUT: OUTPUT, ...}}, ...]
// where FEEDS maps input names to {"dtype", "dims", "base64"} (the elements'
// little-endian bytes in C order; bool one byte each). Steps run in order; from
// the second step on, each input named in `carry` takes the previous step's
// output (a recurrent state).
// Output: [[{NAME: {"dtype", "dims", "base64"}}, ...per step], ...per job].
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import * as ort from 'onnxruntime-web';

ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';

const ARRAYS = {
  float32: Float32Array,
  float64: Float64Array,
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  bool: Uint8Array,
};

function tensor({ dtype, dims, base64 }) {
  const Kind = ARRAYS[dtype];
  if (!Kind) throw new Error(`unsupported dtype ${dtype}`);
  const bytes = Buffer.from(base64, 'base64');
  const copy = new Uint8Array(bytes); // aligned, owned
  return new ort.Tensor(dtype, new Kind(copy.buffer, 0, copy.length / Kind.BYTES_PER_ELEMENT), dims);
}

function plain(t) {
  const data = Array.isArray(t.data) ? Uint8Array.from(t.data, Number) : t.data; // bool tensors may come as arrays
  return {
    dtype: t.type,
    dims: [...t.dims],
    base64: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64'),
  };
}

async function run(job) {
  const session = await ort.InferenceSession.create(readFileSync(job.model), { executionProviders: ['wasm'] });
  const outputs = [];
  let previous = null;
  for (const step of job.steps) {
    const feeds = {};
    for (const [name, spec] of Object.entries(step)) feeds[name] = tensor(spec);
    if (previous) for (const [input, output] of Object.entries(job.carry ?? {})) feeds[input] = previous[output];
    previous = await session.run(feeds);
    outputs.push(Object.fromEntries(Object.entries(previous).map(([k, v]) => [k, plain(v)])));
  }
  await session.release();
  return outputs;
}

/** @param {string} path */
async function answer(path) {
  const results = [];
  for (const job of JSON.parse(readFileSync(path, 'utf8'))) results.push(await run(job));
  return JSON.stringify(results);
}

if (process.argv[2] === '--serve') {
  // one jobs file per line of standard input, one line of results each ({"error": ...} when a job fails), until
  // the input ends: onnxruntime-web's WebAssembly is compiled once for all of them
  for await (const line of createInterface({ input: process.stdin })) {
    try {
      process.stdout.write(`${await answer(line)}\n`);
    } catch (e) {
      process.stdout.write(`${JSON.stringify({ error: String(e instanceof Error ? e.stack : e) })}\n`);
    }
  }
} else {
  process.stdout.write(`${await answer(process.argv[2])}\n`);
}
