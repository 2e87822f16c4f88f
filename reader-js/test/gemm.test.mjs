// slow: large matrix kernels (make test-fast leaves this file out)
// The sums of linear and conv2d (src/extensions/policy/gemm.js): the WebAssembly SIMD kernel and the pure JavaScript one (forced
// with setWasmEnabled(false)) give, bit for bit, what a plain implementation here gives with the summation order
// the evaluator keeps (RLA_policy §5: binary64 sums rounded once to float32), on random shapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { Matmul, setWasmEnabled, wasmAvailable } from '../src/extensions/policy/gemm.js';
import { Policy, act, open, parseJson } from '../src/index.js';
import { check } from '../src/extensions/policy/description.js';
import { decodeValue, inlineArray } from '../src/decode.js';
import { decodeBase64, encodeBase64 } from '../src/base64.js';
import { GEMM_WASM_BASE64, GEMM_WASM_RELAXED_BASE64 } from '../src/extensions/policy/gemm-wasm.js';
import { sameActions } from './helpers/actions.mjs';

const KERNELS = ['wasm', 'js'];
const prod = (shape) => shape.reduce((a, b) => a * b, 1);

/** Runs `fn` with the kernel chosen (for the Matmul objects and Policies made inside it). */
function withKernel(kernel, fn) {
  const previous = setWasmEnabled(kernel === 'wasm');
  try {
    return fn();
  } finally {
    setWasmEnabled(previous);
  }
}

/** A deterministic random source. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * float32 values of mixed magnitudes; mode 'special' puts in some zeros of both signs, ±inf, NaN and values near
 * the float32 limit; mode 'cancel' makes about a third of them ±2^30 and the others below 2 in magnitude, so that
 * products of ±2^60 cancel in a sum and the small terms between them are kept or lost by the order of the additions.
 */
function values(rand, n, mode = 'plain') {
  return Float32Array.from({ length: n }, () => {
    const u = rand();
    if (mode === 'special' && u < 0.02) return [NaN, Infinity, -Infinity, 0, -0, 3e38, -3e38][Math.floor(rand() * 7)];
    if (mode === 'cancel') return u < 0.35 ? (rand() < 0.5 ? 2 ** 30 : -(2 ** 30)) : Math.fround((rand() - 0.5) * 4);
    return Math.fround((rand() - 0.5) * 2 ** Math.floor(rand() * 40 - 20));
  });
}

// ---------------------------------------------------------------- the reference: plain loops, the kept order

/** Σ_j a[ai + j]·b[bi + j] for j = 0, 1, ..., n-1 in that order, from +0, in binary64. */
function sequential(a, ai, b, bi, n) {
  let s = 0;
  for (let j = 0; j < n; j++) s += a[ai + j] * b[bi + j];
  return s;
}

/** The same sum as four partial sums over j mod 4, added as (s0 + s1) + (s2 + s3). */
function interleaved(a, ai, b, bi, n) {
  const part = [0, 0, 0, 0];
  for (let j = 0; j < n; j++) part[j < n - (n % 4) ? j % 4 : 0] += a[ai + j] * b[bi + j];
  return part[0] + part[1] + (part[2] + part[3]);
}

/** out[r][o] for rows of K: the columns below O - O mod 4 in order then the bias, the others interleaved then the bias. */
function matmulRef(a, R, w, O, K, bias) {
  const out = new Float32Array(R * O);
  const O4 = O - (O % 4);
  for (let r = 0; r < R; r++) {
    for (let o = 0; o < O; o++) {
      const s = o < O4 ? sequential(a, r * K, w, o * K, K) : interleaved(a, r * K, w, o * K, K);
      out[r * O + o] = s + (bias ? bias[o] : 0);
    }
  }
  return out;
}

/** conv2d over x [n, C, H, W]: four or more output channels as matmulRef over the zero-padded patches; fewer from the bias over the image only. */
function convRef(x, [n, C, H, W], w, [O, , KH, KW], bias, [sh, sw], [ph, pw]) {
  const OH = Math.floor((H + 2 * ph - KH) / sh) + 1;
  const OW = Math.floor((W + 2 * pw - KW) / sw) + 1;
  const K = C * KH * KW;
  const out = new Float32Array(n * O * OH * OW);
  for (let b = 0; b < n; b++) {
    for (let oy = 0; oy < OH; oy++) {
      for (let ox = 0; ox < OW; ox++) {
        const patch = new Float32Array(K);
        const inside = new Uint8Array(K);
        let k = 0;
        for (let c = 0; c < C; c++) {
          for (let ky = 0; ky < KH; ky++) {
            for (let kx = 0; kx < KW; kx++, k++) {
              const iy = oy * sh + ky - ph;
              const ix = ox * sw + kx - pw;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W) {
                patch[k] = x[((b * C + c) * H + iy) * W + ix];
                inside[k] = 1;
              }
            }
          }
        }
        for (let o = 0; o < O; o++) {
          let s;
          if (O < 4) {
            s = bias ? bias[o] : 0;
            for (let j = 0; j < K; j++) if (inside[j]) s += patch[j] * w[o * K + j];
          } else {
            s = matmulRef(patch, 1, w, O, K, bias)[o];
          }
          out[((b * O + o) * OH + oy) * OW + ox] = s;
        }
      }
    }
  }
  return out;
}

/** '' when a and b hold the same float32 values bit for bit (any NaN equal to any NaN), else the first difference. */
function sameBits(got, want) {
  if (got.length !== want.length) return `${got.length} values, expected ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    if (!(Object.is(got[i], want[i]) || (Number.isNaN(got[i]) && Number.isNaN(want[i]))))
      return `value ${i}: ${got[i]}, expected ${want[i]}`;
  }
  return '';
}

// ---------------------------------------------------------------- policies built here

function nd(shape, data) {
  return {
    $type: 'ndarray',
    dtype: 'F32',
    shape,
    base64: encodeBase64(new Uint8Array(Float32Array.from(data).buffer)),
  };
}

function space(shape) {
  return {
    $type: 'space',
    kind: 'box',
    dtype: 'F32',
    shape,
    low: nd(shape, new Array(prod(shape)).fill(-1e30)),
    high: nd(shape, new Array(prod(shape)).fill(1e30)),
  };
}

/** A checked and decoded description of `nodes` over an observation of `shape`, the output `width` values given as box actions. */
function policyOf(shape, nodes, width) {
  const desc = {
    normalize_images: true,
    observation_space: space(shape),
    nodes,
    action_space: {
      $type: 'space',
      kind: 'box',
      dtype: 'F32',
      shape: [width],
      low: nd([width], new Array(width).fill(-Infinity)),
      high: nd([width], new Array(width).fill(Infinity)),
    },
    action: { op: 'box', in: nodes[nodes.length - 1].out, squash: 'clip' },
  };
  const text = JSON.stringify({ policy: desc }, (k, v) =>
    typeof v === 'number' && !Number.isFinite(v)
      ? { $type: 'float', value: v > 0 ? 'inf' : v < 0 ? '-inf' : 'nan' }
      : v,
  );
  const tree = parseJson(new TextEncoder().encode(text));
  check(tree.get('policy'), new Map([['observation_space', tree.get('policy').get('observation_space')]]), []);
  return decodeValue(tree.get('policy'), null);
}

// ---------------------------------------------------------------- the tests

test('the WebAssembly SIMD kernel compiles in Node, and setWasmEnabled(false) forces the JavaScript one', () => {
  assert.equal(wasmAvailable(), true);
  const w = new Float32Array(8);
  assert.equal(
    withKernel('wasm', () => new Matmul(w, 4, 2, null).kernel),
    'wasm',
  );
  assert.equal(
    withKernel('js', () => new Matmul(w, 4, 2, null).kernel),
    'js',
  );
  assert.equal(
    withKernel('wasm', () => new Matmul(w, 3, 2, null).kernel),
    'js',
    'fewer than four columns: no panel for the SIMD kernel',
  );
});

test('Matmul: both kernels equal the reference bit for bit on random shapes (odd sizes, K = 0, cancelling terms, NaN, ±inf, ±0, overflow)', () => {
  const rand = rng(1);
  const shapes = [
    [1, 1, 1],
    [1, 0, 5],
    [3, 0, 8],
    [7, 37, 13],
    [6, 5, 4],
    [13, 64, 12],
    [1, 3136, 20],
    [12, 9, 7],
    [5, 3, 2],
  ];
  for (let i = 0; i < 40; i++)
    shapes.push([1 + Math.floor(rand() * 15), Math.floor(rand() * 70), 1 + Math.floor(rand() * 23)]);
  shapes.forEach(([R, K, O], i) => {
    const mode = ['cancel', 'special', 'plain'][i % 3];
    const a = values(rand, R * K, mode);
    const w = values(rand, O * K, mode);
    const bias = i % 4 === 0 ? null : values(rand, O, mode);
    const want = matmulRef(a, R, w, O, K, bias);
    for (const kernel of KERNELS) {
      const what = `${kernel}, R ${R}, K ${K}, O ${O}`;
      const mm = withKernel(kernel, () => new Matmul(w, O, K, bias));
      const out = new Float32Array(R * O).fill(NaN);
      mm.run(a, R, out, 0, O, 1);
      assert.equal(sameBits(out, want), '', what);
      // again, written transposed (as conv2d does), and into rows wider than the product's, from a longer array
      const t = new Float32Array(R * O);
      mm.run(Float32Array.from([...a, 7, 8]), R, t, 0, 1, R);
      const back = Float32Array.from({ length: R * O }, (_, j) => t[(j % O) * R + Math.floor(j / O)]);
      assert.equal(sameBits(back, want), '', `${what}, transposed`);
      const wide = new Float32Array(R * (O + 3)).fill(NaN);
      mm.run(a, R, wide, 2, O + 3, 1);
      const inner = Float32Array.from({ length: R * O }, (_, j) => wide[2 + Math.floor(j / O) * (O + 3) + (j % O)]);
      assert.equal(sameBits(inner, want), '', `${what}, rows of ${O + 3}`);
    }
  });
});

test('a product whose WebAssembly memory cannot grow goes on with the JavaScript kernel, with the same bits', () => {
  const rand = rng(4);
  const [R, K, O] = [5, 3000, 10]; // the rows do not fit in the pages of the weights
  const a = values(rand, R * K, 'cancel');
  const w = values(rand, O * K, 'cancel');
  const bias = values(rand, O);
  const want = matmulRef(a, R, w, O, K, bias);
  const grow = WebAssembly.Memory.prototype.grow;
  WebAssembly.Memory.prototype.grow = () => {
    throw new RangeError('out of memory');
  };
  try {
    const mm = withKernel('wasm', () => new Matmul(w, O, K, bias));
    assert.equal(mm.kernel, 'wasm');
    const out = new Float32Array(R * O);
    mm.run(a, R, out, 0, O, 1);
    assert.equal(mm.kernel, 'js');
    assert.equal(sameBits(out, want), '');
  } finally {
    WebAssembly.Memory.prototype.grow = grow;
  }
});

test('linear: more rows than one block of the kernel gives the same bits, in both kernels', () => {
  const rand = rng(2);
  const [R, K, O] = [23, 50000, 5];
  const a = values(rand, R * K, 'cancel');
  const w = values(rand, O * K, 'cancel');
  const bias = values(rand, O);
  const want = matmulRef(a, R, w, O, K, bias);
  for (const kernel of KERNELS) {
    const p = withKernel(
      kernel,
      () =>
        new Policy(
          policyOf(
            [R, K],
            [
              { op: 'linear', in: ['obs'], out: 'y', weight: nd([O, K], w), bias: nd([O], bias) },
              { op: 'flatten', in: ['y'], out: 'f' },
            ],
            R * O,
          ),
        ),
    );
    const blockRows = withKernel(kernel, () => new Matmul(w, O, K, bias).blockRows);
    assert.ok(blockRows < R, `one block holds ${blockRows} rows`);
    const got = p.predict({ dtype: 'F32', shape: [R, K], data: a }).action.data;
    assert.equal(sameBits(got, want), '', kernel);
  }
});

test('conv2d: both kernels equal the reference bit for bit on random shapes, strides, padding and channels', () => {
  const rand = rng(3);
  const cases = [
    [
      [1, 4, 84, 84],
      [32, 4, 8, 8],
      [4, 4],
      [0, 0],
    ],
    [
      [2, 3, 9, 7],
      [5, 3, 3, 2],
      [2, 1],
      [1, 2],
    ],
    [
      [1, 1, 1, 1],
      [4, 1, 1, 1],
      [1, 1],
      [0, 0],
    ],
    [
      [1, 2, 3, 3],
      [6, 2, 5, 5],
      [1, 1],
      [1, 1],
    ], // the kernel wider than the image: padding on every patch
    [
      [3, 2, 6, 5],
      [3, 2, 2, 3],
      [2, 3],
      [1, 0],
    ], // fewer than four channels
    [
      [2, 10, 39, 39],
      [5, 10, 10, 10],
      [1, 1],
      [0, 1],
    ], // 900 positions: more than one block
  ];
  const [, [O, C, KH, KW]] = cases[cases.length - 1];
  assert.ok(new Matmul(new Float32Array(O * C * KH * KW), O, C * KH * KW, null).blockRows < 30 * 31);
  for (let i = 0; i < 25; i++) {
    const [C, H, W] = [1 + Math.floor(rand() * 5), 1 + Math.floor(rand() * 12), 1 + Math.floor(rand() * 12)];
    const [ph, pw] = [Math.floor(rand() * 3), Math.floor(rand() * 3)];
    const [KH, KW] = [1 + Math.floor(rand() * (H + 2 * ph)), 1 + Math.floor(rand() * (W + 2 * pw))];
    cases.push([
      [1 + Math.floor(rand() * 3), C, H, W],
      [1 + Math.floor(rand() * 11), C, KH, KW],
      [1 + Math.floor(rand() * 3), 1 + Math.floor(rand() * 3)],
      [ph, pw],
    ]);
  }
  cases.forEach(([xs, ws, stride, padding], i) => {
    const mode = ['cancel', 'special', 'plain', 'cancel'][i % 4];
    const x = values(rand, prod(xs), mode === 'cancel' ? mode : 'plain');
    const w = values(rand, prod(ws), mode);
    const bias = i % 5 === 2 ? null : values(rand, ws[0], mode);
    const want = convRef(x, xs, w, ws, bias, stride, padding);
    const nodes = [
      { op: 'conv2d', in: ['obs'], out: 'c', weight: nd(ws, w), bias: bias && nd([ws[0]], bias), stride, padding },
      { op: 'flatten', in: ['c'], out: 'f' },
    ];
    const desc = policyOf(xs.slice(1), nodes, want.length / xs[0]);
    for (const kernel of KERNELS) {
      const p = withKernel(kernel, () => new Policy(desc));
      const got = p.predict({ dtype: 'F32', shape: xs, data: x }).action.data;
      assert.equal(sameBits(got, want), '', `${kernel}: x ${xs}, w ${ws}, stride ${stride}, padding ${padding}`);
    }
  });
});

test('the weights are packed once, in float32 for a first call of fewer than four rows, else binary64: both give the reference bits for calls of any size', () => {
  const rand = rng(5);
  const [K, O] = [37, 13];
  const w = values(rand, O * K, 'cancel');
  const bias = values(rand, O);
  const rows = [1, 13, 2, 4, 3];
  const inputs = rows.map((R) => values(rand, R * K, 'cancel'));
  for (const first of [0, 1]) {
    const mm = withKernel('wasm', () => new Matmul(w, O, K, bias));
    const order = first === 0 ? rows.keys() : [1, 0, 2, 3, 4];
    for (const i of order) {
      const R = rows[i];
      const out = new Float32Array(R * O);
      mm.run(inputs[i], R, out, 0, O, 1);
      assert.equal(sameBits(out, matmulRef(inputs[i], R, w, O, K, bias)), '', `first ${rows[first]} rows, then ${R}`);
    }
    assert.equal(mm._mm === mm._exports.mm32, first === 0, 'float32 panels after a first call of one row');
  }
});

test('the relaxed SIMD kernel (multiply-adds), where a runtime has it, gives the reference bits', (t) => {
  // Node 20 has relaxed SIMD behind a flag; later runtimes by default
  const child = `
    import { Matmul, wasmRelaxed } from ${JSON.stringify(new URL('../src/extensions/policy/gemm.js', import.meta.url).href)};
    const [shapes, data] = JSON.parse(process.argv[1]);
    const out = shapes.map(([R, K, O], i) => {
      const [a, w, bias] = data[i].map((v) => Float32Array.from(v));
      const mm = new Matmul(w, O, K, bias);
      const y = new Float32Array(R * O);
      mm.run(a, R, y, 0, O, 1);
      return Array.from(new Uint32Array(y.buffer));
    });
    console.log(JSON.stringify({ relaxed: wasmRelaxed(), out }));`;
  const rand = rng(6);
  const shapes = [
    [1, 40, 8],
    [9, 33, 13],
    [4, 256, 12],
    [6, 5, 4],
  ];
  const data = shapes.map(([R, K, O]) => [
    values(rand, R * K, 'cancel'),
    values(rand, O * K, 'cancel'),
    values(rand, O),
  ]);
  const arg = JSON.stringify([shapes, data.map((d) => d.map((v) => Array.from(v)))], (k, v) =>
    typeof v === 'number' && !Number.isFinite(v) ? 0 : v,
  );
  let result;
  try {
    result = JSON.parse(
      execFileSync(process.execPath, ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', child, arg], {
        encoding: 'utf8',
      }),
    );
  } catch (e) {
    // only a runtime that refuses the flag is a reason to skip; any other failure of the child fails the test
    const stderr = String(/** @type {{stderr?: unknown}} */ (e).stderr ?? '');
    if (!/bad option|unknown option|relaxed-simd/i.test(stderr) || /Error \[|Error:/.test(stderr)) throw e;
    t.skip('this runtime does not take --experimental-wasm-relaxed-simd');
    return;
  }
  if (!result.relaxed) {
    t.skip('this runtime has no relaxed SIMD');
    return;
  }
  shapes.forEach(([R, K, O], i) => {
    const [a, w, bias] = data[i];
    const got = new Float32Array(Uint32Array.from(result.out[i]).buffer);
    assert.equal(sameBits(got, matmulRef(a, R, w, O, K, bias)), '', `R ${R}, K ${K}, O ${O}`);
  });
});

const vectors = new URL('../../test-vectors/', import.meta.url);
if (existsSync(new URL('index.json', vectors))) {
  test('the predict vectors with the pure JavaScript kernel forced give their actions', async () => {
    const index = JSON.parse(readFileSync(new URL('index.json', vectors), 'utf8'));
    const cases = index.cases.filter((c) => c.expect.result === 'actions');
    assert.ok(
      cases.some((c) => c.id.includes('nature-cnn')),
      'the vectors hold a NatureCNN policy',
    );
    const value = (v) => decodeValue(parseJson(new TextEncoder().encode(JSON.stringify(v))), null);
    const previous = setWasmEnabled(false);
    try {
      for (const c of cases) {
        const spec = JSON.parse(readFileSync(new URL(c.expect.predict_file, vectors), 'utf8'));
        const ar = await open(readFileSync(new URL(c.file, vectors)));
        try {
          const policy = await ar.policy();
          const masks = spec.action_masks ? spec.action_masks.map(value) : null;
          const got = act(policy, spec.observations.map(value), {
            episodeStarts: spec.episode_starts ?? null,
            actionMasks: masks,
          });
          assert.equal(sameActions(got.map(inlineArray), spec.actions), '', c.id);
        } finally {
          await ar.close();
        }
      }
    } finally {
      setWasmEnabled(previous);
    }
  });
}

test('src/extensions/policy/gemm-wasm.js is what scripts/build-wasm.mjs assembles, small enough to compile synchronously', () => {
  execFileSync(process.execPath, [new URL('../scripts/build-wasm.mjs', import.meta.url).pathname, '--check']);
  // Chromium compiles a module of at most 4 KB synchronously on a page's main thread (new WebAssembly.Module)
  assert.ok(decodeBase64(GEMM_WASM_BASE64).length <= 4096);
  assert.ok(decodeBase64(GEMM_WASM_RELAXED_BASE64).length <= 4096);
});
