// Runs ONNX models in onnxruntime-web (its WebAssembly backend, under Node) for
// the Python tests of `rlarchive export-onnx`: reads jobs from the JSON file
// given as the only argument and prints their outputs as one JSON line.
//
// Jobs: [{"model": PATH, "steps": [FEEDS, ...], "carry": {INPUT: OUTPUT, ...}}, ...]
// where FEEDS maps input names to {"dtype", "dims", "data"} (data a flat list;
// int64 as decimal strings). Steps run in order; from the second step on, each
// input named in `carry` takes the previous step's output (a recurrent state).
// Output: [[{NAME: {"dtype", "dims", "data"}}, ...per step], ...per job].
import { readFileSync } from 'node:fs';
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

function tensor({ dtype, dims, data }) {
  const Kind = ARRAYS[dtype];
  if (!Kind) throw new Error(`unsupported dtype ${dtype}`);
  const values = Kind === BigInt64Array || Kind === BigUint64Array ? data.map((x) => BigInt(x)) : data.map(Number);
  return new ort.Tensor(dtype, Kind.from(values), dims);
}

function plain(t) {
  const data = Array.from(t.data, (x) => (typeof x === 'bigint' ? x.toString() : typeof x === 'boolean' ? Number(x) : x));
  return { dtype: t.type, dims: [...t.dims], data };
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

const results = [];
for (const job of JSON.parse(readFileSync(process.argv[2], 'utf8'))) results.push(await run(job));
process.stdout.write(JSON.stringify(results) + '\n');
