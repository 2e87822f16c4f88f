// The sums of the portable policy's linear and conv2d (RLA_policy §5): out[r][o] = Σ_k a[r][k] · w[o][k] + bias[o],
// each sum in binary64 (where the product of two float32 values is exact) and rounded once to float32.
//
// Two kernels give the same bits: a WebAssembly SIMD one (source and build: scripts/build-wasm.mjs), used where the
// runtime compiles it (with relaxed SIMD's multiply-adds where the runtime has them), and the pure JavaScript one,
// the fallback. Both add, for each output, the products in the order k = 0, 1, ..., K-1 from +0 and then the bias
// when o is below O - O mod 4 (the columns taken four at a time), and with four interleaved partial sums (`dot`) for
// the last O mod 4 columns.

import { decodeBase64 } from '../../base64.js';
import { GEMM_WASM_BASE64, GEMM_WASM_RELAXED_BASE64 } from './gemm-wasm.js';

/**
 * A function of the WebAssembly kernel: its arguments are integers (offsets in its memory, counts), it returns nothing.
 * @typedef {(...args: number[]) => void} KernelFunction
 */
/**
 * The exports of the WebAssembly kernel (scripts/build-wasm.mjs): the products in binary64 (mm) or from float32
 * weights (mm32), the packing of rows, conv2d's patches, and the rounding with the bias.
 * @typedef {{mm: KernelFunction, mm32: KernelFunction, pack: KernelFunction, im2col: KernelFunction,
 *   finish: KernelFunction}} Kernel
 */

/**
 * The sum over j < n of a[ai + j·as] · b[bi + j] in binary64, with four partial sums (j mod 4), added as
 * (s0 + s1) + (s2 + s3); §5 lets a sum associate in any order. `as` (default 1) is the step between a's terms.
 * @param {ArrayLike<number>} a
 * @param {number} ai
 * @param {ArrayLike<number>} b
 * @param {number} bi
 * @param {number} n
 * @param {number} [as]
 * @returns {number}
 */
export function dot(a, ai, b, bi, n, as = 1) {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < n; j += 4) {
    s0 += a[ai + j * as] * b[bi + j];
    s1 += a[ai + (j + 1) * as] * b[bi + j + 1];
    s2 += a[ai + (j + 2) * as] * b[bi + j + 2];
    s3 += a[ai + (j + 3) * as] * b[bi + j + 3];
  }
  for (; j < n; j++) s0 += a[ai + j * as] * b[bi + j];
  return s0 + s1 + (s2 + s3);
}

/**
 * The pure JavaScript kernel: out[r·O + o] = Σ_k a[r·K + k] · b[o·K + k] + bias[o] (a: R×K, b: O×K, row-major;
 * bias null for none), each sum in binary64 and rounded once to float32 by the Float32Array. Four rows by four
 * columns at a time, so that each loaded value serves four products.
 * @param {Float32Array} a
 * @param {number} R
 * @param {Float32Array} b
 * @param {number} O
 * @param {number} K
 * @param {Float32Array} out at least R·O values
 * @param {Float32Array|null} bias
 */
export function gemm(a, R, b, O, K, out, bias) {
  const c = bias ?? new Float32Array(O);
  let r = 0;
  for (; r + 3 < R; r += 4) {
    let o = 0;
    for (; o + 3 < O; o += 4) block4x4(a, r, b, o, K, O, c, out);
    for (; o < O; o++) for (let i = 0; i < 4; i++) out[(r + i) * O + o] = dot(a, (r + i) * K, b, o * K, K) + c[o];
  }
  for (; r < R; r++) gemmRow(a, r, b, O, K, out, c);
}

/**
 * Rows r .. r + 3 by columns o .. o + 3 of gemm's out: sixteen sums, each loaded value serving four products.
 * @param {Float32Array} a
 * @param {number} r
 * @param {Float32Array} b
 * @param {number} o
 * @param {number} K
 * @param {number} O
 * @param {Float32Array} c the bias
 * @param {Float32Array} out
 */
function block4x4(a, r, b, o, K, O, c, out) {
  const a0 = r * K,
    a1 = a0 + K,
    a2 = a1 + K,
    a3 = a2 + K;
  const b0 = o * K,
    b1 = b0 + K,
    b2 = b1 + K,
    b3 = b2 + K;
  let s00 = 0,
    s01 = 0,
    s02 = 0,
    s03 = 0,
    s10 = 0,
    s11 = 0,
    s12 = 0,
    s13 = 0;
  let s20 = 0,
    s21 = 0,
    s22 = 0,
    s23 = 0,
    s30 = 0,
    s31 = 0,
    s32 = 0,
    s33 = 0;
  for (let k = 0; k < K; k++) {
    const x0 = a[a0 + k],
      x1 = a[a1 + k],
      x2 = a[a2 + k],
      x3 = a[a3 + k];
    const w0 = b[b0 + k],
      w1 = b[b1 + k],
      w2 = b[b2 + k],
      w3 = b[b3 + k];
    s00 += x0 * w0;
    s01 += x0 * w1;
    s02 += x0 * w2;
    s03 += x0 * w3;
    s10 += x1 * w0;
    s11 += x1 * w1;
    s12 += x1 * w2;
    s13 += x1 * w3;
    s20 += x2 * w0;
    s21 += x2 * w1;
    s22 += x2 * w2;
    s23 += x2 * w3;
    s30 += x3 * w0;
    s31 += x3 * w1;
    s32 += x3 * w2;
    s33 += x3 * w3;
  }
  const c0 = c[o],
    c1 = c[o + 1],
    c2 = c[o + 2],
    c3 = c[o + 3];
  const row = r * O + o;
  out[row] = s00 + c0;
  out[row + 1] = s01 + c1;
  out[row + 2] = s02 + c2;
  out[row + 3] = s03 + c3;
  out[row + O] = s10 + c0;
  out[row + O + 1] = s11 + c1;
  out[row + O + 2] = s12 + c2;
  out[row + O + 3] = s13 + c3;
  out[row + 2 * O] = s20 + c0;
  out[row + 2 * O + 1] = s21 + c1;
  out[row + 2 * O + 2] = s22 + c2;
  out[row + 2 * O + 3] = s23 + c3;
  out[row + 3 * O] = s30 + c0;
  out[row + 3 * O + 1] = s31 + c1;
  out[row + 3 * O + 2] = s32 + c2;
  out[row + 3 * O + 3] = s33 + c3;
}

/**
 * Row r of gemm's out: four columns at a time, then the rest one by one (dot).
 * @param {Float32Array} a
 * @param {number} r
 * @param {Float32Array} b
 * @param {number} O
 * @param {number} K
 * @param {Float32Array} out
 * @param {Float32Array} c the bias
 */
function gemmRow(a, r, b, O, K, out, c) {
  let o = 0;
  for (; o + 3 < O; o += 4) {
    const a0 = r * K,
      b0 = o * K,
      b1 = b0 + K,
      b2 = b1 + K,
      b3 = b2 + K;
    let s0 = 0,
      s1 = 0,
      s2 = 0,
      s3 = 0;
    for (let k = 0; k < K; k++) {
      const x = a[a0 + k];
      s0 += x * b[b0 + k];
      s1 += x * b[b1 + k];
      s2 += x * b[b2 + k];
      s3 += x * b[b3 + k];
    }
    out[r * O + o] = s0 + c[o];
    out[r * O + o + 1] = s1 + c[o + 1];
    out[r * O + o + 2] = s2 + c[o + 2];
    out[r * O + o + 3] = s3 + c[o + 3];
  }
  for (; o < O; o++) out[r * O + o] = dot(a, r * K, b, o * K, K) + c[o];
}

/**
 * conv2d's patches of output positions p0 .. p0 + pb - 1 of observation b, one row of C·KH·KW values each (zero outside the image).
 * @param {Float32Array} xd
 * @param {number} b
 * @param {number} C
 * @param {number} H
 * @param {number} W
 * @param {number} KH
 * @param {number} KW
 * @param {number} sh
 * @param {number} sw
 * @param {number} ph
 * @param {number} pw
 * @param {number} OW
 * @param {number} p0
 * @param {number} pb
 * @param {Float32Array} cols
 */
function im2col(xd, b, C, H, W, KH, KW, sh, sw, ph, pw, OW, p0, pb, cols) {
  const K = C * KH * KW;
  for (let p = p0, k0 = 0; p < p0 + pb; p++, k0 += K) {
    const oy = Math.floor(p / OW);
    const x0 = (p - oy * OW) * sw - pw;
    const y0 = oy * sh - ph;
    let k = k0;
    if (x0 >= 0 && x0 + KW <= W && y0 >= 0 && y0 + KH <= H) {
      // the patch lies inside the image
      for (let c = 0; c < C; c++) {
        let src = ((b * C + c) * H + y0) * W + x0;
        for (let ky = 0; ky < KH; ky++, src += W, k += KW) for (let kx = 0; kx < KW; kx++) cols[k + kx] = xd[src + kx];
      }
      continue;
    }
    for (let c = 0; c < C; c++) {
      for (let ky = 0; ky < KH; ky++) {
        const iy = y0 + ky;
        const src = ((b * C + c) * H + iy) * W + x0;
        const rowOk = iy >= 0 && iy < H;
        for (let kx = 0; kx < KW; kx++, k++) cols[k] = rowOk && x0 + kx >= 0 && x0 + kx < W ? xd[src + kx] : 0;
      }
    }
  }
}

// -- the WebAssembly SIMD kernel -------------------------------------------------------------------

/** @type {{module: WebAssembly.Module, relaxed: boolean} | null | undefined} */
let simd; // {module, relaxed}: the compiled module; null where the runtime has no WebAssembly SIMD (or forbids compiling)
let simdEnabled = true;

/** @returns {{module: WebAssembly.Module, relaxed: boolean} | null} */
function simdModule() {
  if (simd === undefined) {
    simd = null;
    if (typeof WebAssembly === 'object') {
      for (const [bytes, relaxed] of /** @type {[string, boolean][]} */ ([
        [GEMM_WASM_RELAXED_BASE64, true],
        [GEMM_WASM_BASE64, false],
      ])) {
        try {
          simd = { module: new WebAssembly.Module(decodeBase64(bytes)), relaxed };
          break;
        } catch {
          // this runtime lacks the module's instructions, or compiles nothing: the next, or JavaScript
        }
      }
    }
  }
  return simd;
}

/**
 * Whether this runtime runs the WebAssembly SIMD kernel (it compiles the module).
 * @returns {boolean}
 */
export function wasmAvailable() {
  return simdModule() !== null;
}

/**
 * Whether the WebAssembly kernel of this runtime adds its terms by relaxed SIMD multiply-adds (the same bits).
 * @returns {boolean}
 */
export function wasmRelaxed() {
  return simdModule()?.relaxed === true;
}

/**
 * Chooses the kernel of the Matmul objects made from now on (a Policy makes them when it is constructed): true, the
 * WebAssembly SIMD kernel where the runtime has it (the default); false, the pure JavaScript kernel. The results
 * are the same bits; this is for tests and comparisons.
 * @param {boolean} enabled
 * @returns {boolean} the previous setting
 */
export function setWasmEnabled(enabled) {
  const previous = simdEnabled;
  simdEnabled = Boolean(enabled);
  return previous;
}

const SCRATCH_BYTES = 1 << 22; // the left operand and the binary64 sums of one block of rows
const PAGE = 65536;
const align16 = (/** @type {number} */ n) => Math.ceil(n / 16) * 16;

/**
 * The product by one weight matrix (a linear or conv2d node's), prepared once: out = a · wᵀ + bias, a block of
 * rows at a time, each sum in binary64 and rounded once to float32, with the kernel chosen at construction. The
 * WebAssembly kernel holds the weights as binary64 panels, converted once here; a call converts its rows once.
 */
export class Matmul {
  /**
   * @param {Float32Array} w the weights, O rows of K (row-major)
   * @param {number} O
   * @param {number} K
   * @param {Float32Array|null} bias O values, or null for none
   */
  constructor(w, O, K, bias) {
    this.w = w;
    this.O = O;
    this.K = K;
    this.bias = bias ?? new Float32Array(O);
    this.O4 = O - (O % 4); // the columns taken four at a time
    /** The most rows `run` and `runPatches` take at once. */
    this.blockRows = Math.max(1, Math.floor(SCRATCH_BYTES / Math.max(1, 12 * K + 8 * O)));
    this._rows = 0; // rows of scratch held
    this._imageSize = 0; // float32 values of image held (conv2d's patches)
    /** @type {Float32Array | null} */
    this._imageOf = null; // the array and observation whose image the scratch holds
    this._imageB = -1;
    /** @type {Kernel | null} */
    this._exports = null;
    this._pending = simdEnabled && this.O4 > 0 && simdModule() !== null; // the WebAssembly kernel, from the first call
    /** @type {Float32Array | Float64Array | null} */
    this._a = null;
    /** @type {Float32Array | null} */
    this._out = null;
    // the WebAssembly kernel's, set by _initWasm and _scratch: its product, memory, the offsets and views in it
    /** @type {KernelFunction | null} */
    this._mm = null;
    /** @type {WebAssembly.Memory | null} */
    this._memory = null;
    this._biasOffset = 0;
    this._aOffset = 0;
    this._rowsOffset = 0;
    this._outOffset = 0;
    this._resultOffset = 0;
    this._imageOffset = 0;
    /** @type {Float32Array | null} */
    this._f32 = null;
    /** @type {Float32Array | null} */
    this._result = null;
    /** @type {Float32Array | null} */
    this._image = null;
  }

  /** 'wasm' or 'js': the kernel this product runs. */
  get kernel() {
    return this._exports || this._pending ? 'wasm' : 'js';
  }

  /**
   * The WebAssembly kernel's instance and weights, at the first call of `n` rows. The weights are packed once, in
   * the precision that call favours: float32 for fewer than four rows (a product of one row reads every weight once:
   * half the bytes read), binary64 for more (no conversion in the sums). Where there is no memory for it, the
   * JavaScript kernel.
   * @param {number} n
   */
  _start(n) {
    this._pending = false;
    try {
      this._initWasm(n < 4 ? 4 : 8);
    } catch {
      this._exports = null;
    }
  }

  /** @param {4 | 8} size the bytes of a packed weight */
  _initWasm(size) {
    const { O4, K } = this;
    const P = O4 / 4;
    this._biasOffset = align16(P * K * 4 * size);
    this._aOffset = align16(this._biasOffset + O4 * 8);
    this._memory = new WebAssembly.Memory({ initial: Math.ceil((this._aOffset + 16) / PAGE) });
    const { module } = /** @type {{module: WebAssembly.Module}} */ (simdModule());
    this._exports = /** @type {Kernel} */ (
      /** @type {unknown} */ (new WebAssembly.Instance(module, { env: { memory: this._memory } }).exports)
    );
    this._mm = size === 8 ? this._exports.mm : this._exports.mm32;
    new Float64Array(this._memory.buffer, this._biasOffset, O4).set(this.bias.subarray(0, O4));
    // panel q holds, for each k, the four weights w[4q + j][k]
    const packed = new (size === 8 ? Float64Array : Float32Array)(this._memory.buffer, 0, P * K * 4);
    const w = this.w;
    for (let q = 0; q < P; q++) {
      for (let j = 0; j < 4; j++) {
        const src = (4 * q + j) * K;
        for (let k = 0, d = q * K * 4 + j; k < K; k++, d += 4) packed[d] = w[src + k];
      }
    }
  }

  /**
   * Scratch for n rows (and, for the WebAssembly kernel, an image of `image` float32 values): the wasm memory grown
   * and the views made again, or the JavaScript buffers. Where the memory cannot grow, the product goes on with the
   * JavaScript kernel.
   * @param {number} n
   */
  _scratch(n, image = 0) {
    if (n <= this._rows && (image <= this._imageSize || !this._exports)) return;
    const { K, O, O4 } = this;
    const rows = n > this._rows ? Math.min(this.blockRows, Math.max(n, 2 * this._rows)) : this._rows;
    this._imageOf = null;
    if (this._exports) {
      const memory = /** @type {WebAssembly.Memory} */ (this._memory);
      const imageSize = Math.max(image, this._imageSize);
      const rowsOffset = align16(this._aOffset + Math.ceil(rows / 4) * K * 32); // the float32 rows pack reads
      const outOffset = align16(rowsOffset + rows * K * 4);
      const resultOffset = align16(outOffset + rows * O4 * 8); // the float32 results finish writes
      const imageOffset = align16(resultOffset + rows * O * 4);
      const pages = Math.ceil((imageOffset + imageSize * 4) / PAGE) - memory.buffer.byteLength / PAGE;
      try {
        if (pages > 0) memory.grow(pages);
        [this._rows, this._imageSize] = [rows, imageSize];
        [this._rowsOffset, this._outOffset, this._resultOffset] = [rowsOffset, outOffset, resultOffset];
        this._imageOffset = imageOffset;
        this._a = new Float64Array(memory.buffer, this._aOffset, Math.ceil(rows / 4) * K * 4);
        this._f32 = new Float32Array(memory.buffer, rowsOffset, rows * K);
        this._result = new Float32Array(memory.buffer, resultOffset, rows * O);
        this._image = new Float32Array(memory.buffer, imageOffset, imageSize);
        return;
      } catch (e) {
        if (!(e instanceof RangeError)) throw e;
        this._exports = null; // no more memory for it
        this._mm = null;
      }
    }
    this._rows = rows;
    this._a = new Float32Array(rows * K); // the JavaScript kernel's rows (conv2d's patches)
    this._out = new Float32Array(rows * O);
  }

  /**
   * out[offset + r·rowStride + o·colStride] = Σ_k a[r·K + k] · w[o·K + k] + bias[o] for r < n (n ≤ blockRows),
   * rounded once to float32.
   * @param {Float32Array} a n rows of K float32 values from its start (row-major)
   * @param {number} n
   * @param {Float32Array} out
   * @param {number} offset
   * @param {number} rowStride
   * @param {number} colStride
   */
  run(a, n, out, offset, rowStride, colStride) {
    if (n > this.blockRows) throw new RangeError(`${n} rows for a block of ${this.blockRows}`);
    const { K } = this;
    if (this._pending) this._start(n);
    this._scratch(n);
    if (this._exports) {
      /** @type {Float32Array} */ (this._f32).set(a.subarray(0, n * K));
      /** @type {Kernel} */ (this._exports).pack(this._rowsOffset, n, K, this._aOffset);
      this._finish(n, out, offset, rowStride, colStride, (r, o) => dot(a, r * K, this.w, o * K, K));
      return;
    }
    this._js(a, n, out, offset, rowStride, colStride);
  }

  /**
   * `run` over conv2d's patches of output positions p0 .. p0 + pb - 1 of observation b of x [n, C, H, W] (strides
   * sh, sw; zero padding ph, pw; OW positions a row of the output), each the C·KH·KW values in the weights' (c, ky,
   * kx) order, +0 outside the image (K must be C·KH·KW): row p of the product is position p0 + p.
   * @param {Float32Array} xd
   * @param {number} b
   * @param {number[]} dims [C, H, W, KH, KW, sh, sw, ph, pw, OW]
   * @param {number} p0
   * @param {number} pb
   * @param {Float32Array} out
   * @param {number} offset
   * @param {number} rowStride
   * @param {number} colStride
   */
  runPatches(xd, b, dims, p0, pb, out, offset, rowStride, colStride) {
    if (pb > this.blockRows) throw new RangeError(`${pb} rows for a block of ${this.blockRows}`);
    const [C, H, W] = dims;
    const size = C * H * W;
    const { K } = this;
    if (this._pending) this._start(pb);
    this._scratch(pb, size);
    if (this._exports) {
      if (p0 === 0 || this._imageOf !== xd || this._imageB !== b) {
        /** @type {Float32Array} */ (this._image).set(xd.subarray(b * size, (b + 1) * size));
        this._imageOf = xd;
        this._imageB = b;
      }
      /** @type {Kernel} */ (this._exports).im2col(this._imageOffset, ...dims, p0, pb, this._aOffset);
      // the patches' values, row r in lane r mod 4 of group r >> 2: from ((r >> 2)·K)·4 + (r & 3), four apart
      const a = /** @type {Float64Array} */ (this._a);
      this._finish(pb, out, offset, rowStride, colStride, (r, o) =>
        dot(a, (r >> 2) * K * 4 + (r & 3), this.w, o * K, K, 4),
      );
      return;
    }
    const cols = /** @type {Float32Array} */ (this._a); // the JavaScript kernel's
    im2col(xd, b, C, H, W, dims[3], dims[4], dims[5], dims[6], dims[7], dims[8], dims[9], p0, pb, cols);
    this._js(cols, pb, out, offset, rowStride, colStride);
  }

  /**
   * The WebAssembly kernel's products of the n rows packed, each plus the bias, rounded to float32 into out;
   * `tail(r, o)` gives the sum of a last column (o ≥ O4). The results are written in the wasm memory in out's
   * order (by rows, or by columns where out's rows are one apart, as conv2d's) and copied a run at a time.
   * @param {number} n
   * @param {Float32Array} out
   * @param {number} offset
   * @param {number} rowStride
   * @param {number} colStride
   * @param {(r: number, o: number) => number} tail
   */
  _finish(n, out, offset, rowStride, colStride, tail) {
    const { K, O, O4 } = this;
    const c = this.bias;
    const ex = /** @type {Kernel} */ (this._exports);
    /** @type {KernelFunction} */ (this._mm)(this._aOffset, 0, this._outOffset, n, K, O4 / 4);
    const byColumns = rowStride === 1 && colStride !== 1;
    const [rs, cs] = byColumns ? [1, n] : [O, 1];
    ex.finish(this._outOffset, n, O4, this._biasOffset, this._resultOffset, rs, cs);
    const res = /** @type {Float32Array} */ (this._result);
    for (let r = 0; r < n; r++) for (let o = O4; o < O; o++) res[r * rs + o * cs] = tail(r, o) + c[o];
    if (byColumns) {
      for (let o = 0; o < O; o++) out.set(res.subarray(o * n, (o + 1) * n), offset + o * colStride);
    } else if (colStride === 1) {
      for (let r = 0; r < n; r++) out.set(res.subarray(r * O, (r + 1) * O), offset + r * rowStride);
    } else {
      for (let r = 0; r < n; r++)
        for (let o = 0; o < O; o++) out[offset + r * rowStride + o * colStride] = res[r * O + o];
    }
  }

  /**
   * The JavaScript kernel over n rows of a (row-major float32).
   * @param {Float32Array} a
   * @param {number} n
   * @param {Float32Array} out
   * @param {number} offset
   * @param {number} rowStride
   * @param {number} colStride
   */
  _js(a, n, out, offset, rowStride, colStride) {
    const { K, O, w } = this;
    const s = /** @type {Float32Array} */ (this._out);
    gemm(a, n, w, O, K, s, this.bias);
    for (let r = 0; r < n; r++) {
      const base = offset + r * rowStride;
      for (let o = 0; o < O; o++) out[base + o * colStride] = s[r * O + o];
    }
  }
}
