// Assembles the WebAssembly SIMD module of the portable policy's sums (used by src/extensions/policy/gemm.js) and writes
// src/extensions/policy/gemm-wasm.js, the module's bytes in base64. The functions are written below as lists of
// instructions, with the small encoder they need: the build takes nothing but Node, and gives the
// same bytes every time.
// Usage: node scripts/build-wasm.mjs [--check]   (npm run build-wasm; --check: exit 1 if src/extensions/policy/gemm-wasm.js is
// out of date, as npm pack and test/gemm.test.mjs run it)
//
// The functions, all offsets in bytes into the imported memory:
//   mm(a, w, out, R, K, P)  the products: out[r][4q + j] (R rows of 4P binary64) = the sum over k = 0, 1, ...,
//        K-1, in that order, of a[r][k] · w[4q + j][k], each product exact in binary64 and each partial sum
//        rounded to binary64, from +0 (the order of the pure JavaScript kernel, so the results are equal); a is
//        R rows of K in groups of four interleaved rows, w P panels of four columns of binary64 (see "the
//        kernels"); mm32(...) the same with panels of float32 (converted in the sums: half the bytes to read);
//   pack(src, R, K, a)  R rows of K float32 (row-major) as mm's left operand;
//   im2col(...)  conv2d's patches as mm's left operand (below);
//   finish(s, R, O4, bias, dst, rowStride, colStride)  mm's sums plus the bias, rounded to float32 (below).
// The module is assembled twice: with a multiply and an add for each term, and with relaxed SIMD's
// multiply-add (src/extensions/policy/gemm.js takes it where the runtime compiles it: the same bits, fewer instructions).
import { readFile, writeFile } from 'node:fs/promises';

const out = new URL('../src/extensions/policy/gemm-wasm.js', import.meta.url);

// -- the encoder ----------------------------------------------------------------------------
const uleb = (n) => {
  const b = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    b.push(byte);
  } while (n !== 0);
  return b;
};
const sleb = (n) => {
  const b = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) return [...b, byte];
    b.push(byte | 0x80);
  }
};
const str = (s) => [...uleb(s.length), ...Buffer.from(s, 'utf8')];
const vec = (items) => [...uleb(items.length), ...items.flat()];
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const I32 = 0x7f;
const V128 = 0x7b;
const VOID = 0x40;
const simd = (code, ...imm) => [0xfd, ...uleb(code), ...imm];
const memarg = (align, offset = 0) => [...uleb(align), ...uleb(offset)];

const get = (l) => [0x20, ...uleb(l)];
const set = (l) => [0x21, ...uleb(l)];
const i32 = (n) => [0x41, ...sleb(n)];
const add = [0x6a];
const mul = [0x6c];
const geS = [0x4e];
const gtS = [0x4a];
const geU = [0x4f];
const sub = [0x6b];
const divU = [0x6e];
const and = [0x71];
const shrU = [0x76];
const ltU = [0x49];
const leS = [0x4c];
const ifThen = [0x04, VOID];
const orElse = [0x05];
const f32Load = [0x2a, ...memarg(2, 0)];
const f64Store = [0x39, ...memarg(3, 0)];
const f64PromoteF32 = [0xbb];
const f64Zero = [0x44, 0, 0, 0, 0, 0, 0, 0, 0]; // f64.const +0
const f64Load = [0x2b, ...memarg(3, 0)];
const f32Store = [0x38, ...memarg(2, 0)];
const f64Add = [0xa0];
const f32DemoteF64 = [0xb6];
const block = [0x02, VOID];
const loop = [0x03, VOID];
const end = [0x0b];
const br = (d) => [0x0c, ...uleb(d)];
const brIf = (d) => [0x0d, ...uleb(d)];
const v128Zero = simd(0x0c, ...new Array(16).fill(0)); // v128.const 0
const load128 = (offset) => simd(0x00, ...memarg(4, offset)); // v128.load
const load64Splat = (offset) => simd(0x0a, ...memarg(3, offset));
const load64Zero = (offset) => simd(0x5d, ...memarg(3, offset));
const store = (offset) => simd(0x0b, ...memarg(4, offset));
const promoteLow = simd(0x5f); // f64x2.promote_low_f32x4
const f64x2Add = simd(0xf0);
const f64x2Mul = simd(0xf2);
const f64x2RelaxedMadd = simd(0x107); // relaxed SIMD: a·b + c, fused or not
const inc = (l, by) => [...get(l), ...i32(by), ...add, ...set(l)];

// -- the kernels ---------------------------------------------------------------------------------
//
// The left operand is held as groups of four rows, interleaved: group g holds, for k = 0 .. K-1, the four
// binary64 values a[4g + i][k] (i = 0 .. 3), 32 bytes a column; so the four values one step of the sums takes
// are at fixed offsets from one pointer. The weights are P panels of four columns (binary64, or float32 for mm32):
// panel q holds, for k = 0 .. K-1, the four values w[4q + j][k]. All are the float32 values, held exactly.

/** acc += x · w, two lanes: a multiply and an add, or one relaxed multiply-add (fused or not, the same bits
 * here: the product of two float32 values is exact in binary64, so rounding it first changes nothing). */
const madd = (fused, acc, x, w) =>
  fused
    ? [...get(x), ...get(w), ...get(acc), ...f64x2RelaxedMadd, ...set(acc)]
    : [...get(acc), ...get(x), ...get(w), ...f64x2Mul, ...f64x2Add, ...set(acc)];

/**
 * mm(a, w, out, R, K, P), offsets in bytes: out[r][4q + j] (R rows of 4P binary64) = the sum over
 * k = 0, 1, ..., K-1, in that order, from +0, of a[r][k] · w[4q + j][k]. The groups of four rows go at once (eight
 * two-lane accumulators, which the registers hold), the rows of a last, partial group one at a time. `wsize`: the
 * bytes of a weight (8, or 4 for mm32).
 */
function mm(fused, wsize = 8) {
  const A = 0,
    W = 1,
    OUT = 2,
    R = 3,
    K = 4,
    P = 5;
  const r = 6,
    q = 7,
    ap = 8,
    wp = 9,
    wend = 10,
    o = 11,
    groupBytes = 12,
    outRow = 13,
    abase = 14;
  const s = (i) => 15 + i; // eight accumulators
  const wlo = 23,
    whi = 24,
    x = 25;
  /** The panels of `rows` rows (4: a group from abase; 1: one row, lane abase of its group) from row r. */
  function panels(rows) {
    const body = [...i32(0), ...set(q), ...get(W), ...set(wp)];
    body.push(...block, ...loop, ...get(q), ...get(P), ...geS, ...brIf(1));
    for (let i = 0; i < 2 * rows; i++) body.push(...v128Zero, ...set(s(i)));
    body.push(...get(abase), ...set(ap), ...get(wp), ...get(K), ...i32(4 * wsize), ...mul, ...add, ...set(wend));
    // the sums, k = 0 .. K-1 in order
    body.push(...block, ...loop, ...get(wp), ...get(wend), ...geU, ...brIf(1));
    if (wsize === 8) body.push(...get(wp), ...load128(0), ...set(wlo), ...get(wp), ...load128(16), ...set(whi));
    else
      body.push(
        ...get(wp),
        ...load64Zero(0),
        ...promoteLow,
        ...set(wlo),
        ...get(wp),
        ...load64Zero(8),
        ...promoteLow,
        ...set(whi),
      );
    for (let i = 0; i < rows; i++)
      body.push(
        ...get(ap),
        ...load64Splat(8 * i),
        ...set(x),
        ...madd(fused, s(2 * i), x, wlo),
        ...madd(fused, s(2 * i + 1), x, whi),
      );
    body.push(...inc(wp, 4 * wsize), ...inc(ap, 32), ...br(0), ...end, ...end);
    // out + r·outRow + 32q, a row after another
    body.push(...get(r), ...get(outRow), ...mul, ...get(OUT), ...add, ...get(q), ...i32(32), ...mul, ...add, ...set(o));
    for (let i = 0; i < rows; i++) {
      body.push(...get(o), ...get(s(2 * i)), ...store(0), ...get(o), ...get(s(2 * i + 1)), ...store(16));
      body.push(...get(o), ...get(outRow), ...add, ...set(o));
    }
    body.push(...inc(q, 1), ...br(0), ...end, ...end);
    return body;
  }
  const body = [];
  body.push(...get(K), ...i32(32), ...mul, ...set(groupBytes));
  body.push(...get(P), ...i32(32), ...mul, ...set(outRow));
  body.push(...i32(0), ...set(r), ...get(A), ...set(abase));
  // groups of four while r + 4 <= R
  body.push(...block, ...loop, ...get(r), ...i32(4), ...add, ...get(R), ...gtS, ...brIf(1));
  body.push(...panels(4));
  body.push(...inc(r, 4), ...get(abase), ...get(groupBytes), ...add, ...set(abase), ...br(0), ...end, ...end);
  // the rows of the last group, each its lane
  body.push(...block, ...loop, ...get(r), ...get(R), ...geS, ...brIf(1));
  body.push(...panels(1));
  body.push(...inc(r, 1), ...inc(abase, 8), ...br(0), ...end, ...end);
  const code = [
    ...vec([
      [...uleb(9), I32],
      [...uleb(11), V128],
    ]),
    ...body,
    ...end,
  ];
  return [...uleb(code.length), ...code];
}

/** pack(src, R, K, dst): R rows of K float32 (row-major, from src) as binary64 groups of four interleaved rows. */
function pack() {
  const SRC = 0,
    R = 1,
    K = 2,
    DST = 3;
  const r = 4,
    k = 5,
    src = 6,
    dst = 7,
    groupBytes = 8;
  const body = [...get(K), ...i32(32), ...mul, ...set(groupBytes), ...get(SRC), ...set(src), ...i32(0), ...set(r)];
  body.push(...block, ...loop, ...get(r), ...get(R), ...geS, ...brIf(1));
  // dst = DST + (r >> 2)·groupBytes + (r & 3)·8
  body.push(...get(r), ...i32(2), ...shrU, ...get(groupBytes), ...mul, ...get(DST), ...add);
  body.push(...get(r), ...i32(3), ...and, ...i32(8), ...mul, ...add, ...set(dst));
  body.push(...i32(0), ...set(k), ...block, ...loop, ...get(k), ...get(K), ...geS, ...brIf(1));
  body.push(...get(dst), ...get(src), ...f32Load, ...f64PromoteF32, ...f64Store);
  body.push(...inc(src, 4), ...inc(dst, 32), ...inc(k, 1), ...br(0), ...end, ...end);
  body.push(...inc(r, 1), ...br(0), ...end, ...end);
  const code = [...vec([[...uleb(5), I32]]), ...body, ...end];
  return [...uleb(code.length), ...code];
}

/**
 * finish(s, R, O4, bias, dst, rowStride, colStride): dst[r·rowStride + o·colStride] (float32) = s[r][o] + bias[o]
 * (s: R rows of O4 binary64, bias: O4 binary64), the sum rounded once to float32, for r < R and o < O4.
 */
function finish() {
  const S = 0,
    R = 1,
    O4 = 2,
    BIAS = 3,
    DST = 4,
    RS = 5,
    CS = 6;
  const r = 7,
    o = 8,
    sp = 9,
    bp = 10,
    dp = 11,
    rowStart = 12;
  const body = [...get(S), ...set(sp), ...get(DST), ...set(rowStart), ...i32(0), ...set(r)];
  body.push(...block, ...loop, ...get(r), ...get(R), ...geS, ...brIf(1));
  body.push(...get(BIAS), ...set(bp), ...get(rowStart), ...set(dp), ...i32(0), ...set(o));
  body.push(...block, ...loop, ...get(o), ...get(O4), ...geS, ...brIf(1));
  body.push(...get(dp), ...get(sp), ...f64Load, ...get(bp), ...f64Load, ...f64Add, ...f32DemoteF64, ...f32Store);
  body.push(...inc(sp, 8), ...inc(bp, 8), ...get(dp), ...get(CS), ...i32(4), ...mul, ...add, ...set(dp));
  body.push(...inc(o, 1), ...br(0), ...end, ...end);
  body.push(...get(rowStart), ...get(RS), ...i32(4), ...mul, ...add, ...set(rowStart));
  body.push(...inc(r, 1), ...br(0), ...end, ...end);
  const code = [...vec([[...uleb(6), I32]]), ...body, ...end];
  return [...uleb(code.length), ...code];
}

// -- im2col64(x, C, H, W, KH, KW, sh, sw, ph, pw, OW, p0, pb, cols) --------------------------------
// The patches of output positions p0 .. p0 + pb - 1 of one float32 image x [C, H, W] (zero padding ph, pw; strides
// sh, sw; OW positions a row), each C·KH·KW binary64 values in the order (c, ky, kx), written from cols on: the
// left operand of mm64 for conv2d. A value outside the image is +0.
function im2col() {
  const X = 0,
    C = 1,
    H = 2,
    Wd = 3,
    KH = 4,
    KW = 5,
    SH = 6,
    SW = 7,
    PH = 8,
    PW = 9,
    OW = 10,
    P0 = 11,
    PB = 12,
    COLS = 13;
  const p = 14,
    pend = 15,
    oy = 16,
    x0 = 17,
    y0 = 18,
    c = 19,
    ky = 20,
    iy = 21,
    kx = 22,
    src = 23,
    dst = 24,
    inside = 25,
    groupBytes = 26;
  /** for (i = start; i < limit; i++) body */
  const range = (i, start, limit, body) => [
    ...start,
    ...set(i),
    ...block,
    ...loop,
    ...get(i),
    ...limit,
    ...geS,
    ...brIf(1),
    ...body,
    ...inc(i, 1),
    ...br(0),
    ...end,
    ...end,
  ];
  const copy = [...get(dst), ...get(src), ...f32Load, ...f64PromoteF32, ...f64Store];
  const zero = [...get(dst), ...f64Zero, ...f64Store];
  const step = [...inc(src, 4), ...inc(dst, 32)]; // the next value of a patch: 32 bytes on, in its lane
  const row = [
    ...get(y0),
    ...get(ky),
    ...add,
    ...set(iy),
    ...get(iy),
    ...get(H),
    ...ltU,
    ...ifThen,
    // src = x + ((c·H + iy)·W + x0)·4
    ...get(c),
    ...get(H),
    ...mul,
    ...get(iy),
    ...add,
    ...get(Wd),
    ...mul,
    ...get(x0),
    ...add,
    ...i32(4),
    ...mul,
    ...get(X),
    ...add,
    ...set(src),
    ...get(inside),
    ...ifThen,
    ...range(kx, i32(0), get(KW), [...copy, ...step]),
    ...orElse,
    ...range(kx, i32(0), get(KW), [
      ...get(x0),
      ...get(kx),
      ...add,
      ...get(Wd),
      ...ltU,
      ...ifThen,
      ...copy,
      ...orElse,
      ...zero,
      ...end,
      ...step,
    ]),
    ...end,
    ...orElse,
    ...range(kx, i32(0), get(KW), [...zero, ...inc(dst, 32)]),
    ...end,
  ];
  const patch = [
    ...get(p),
    ...get(OW),
    ...divU,
    ...set(oy),
    ...get(p),
    ...get(oy),
    ...get(OW),
    ...mul,
    ...sub,
    ...get(SW),
    ...mul,
    ...get(PW),
    ...sub,
    ...set(x0),
    ...get(oy),
    ...get(SH),
    ...mul,
    ...get(PH),
    ...sub,
    ...set(y0),
    // the patch's rows lie inside the image across: 0 ≤ x0 and x0 + KW ≤ W
    ...i32(0),
    ...get(x0),
    ...leS,
    ...get(x0),
    ...get(KW),
    ...add,
    ...get(Wd),
    ...leS,
    ...and,
    ...set(inside),
    // the patch's first value: group (p - p0) >> 2, lane (p - p0) & 3
    ...get(p),
    ...get(P0),
    ...sub,
    ...i32(2),
    ...shrU,
    ...get(groupBytes),
    ...mul,
    ...get(COLS),
    ...add,
    ...get(p),
    ...get(P0),
    ...sub,
    ...i32(3),
    ...and,
    ...i32(8),
    ...mul,
    ...add,
    ...set(dst),
    ...range(c, i32(0), get(C), range(ky, i32(0), get(KH), row)),
  ];
  const body = [
    ...get(C),
    ...get(KH),
    ...mul,
    ...get(KW),
    ...mul,
    ...i32(32),
    ...mul,
    ...set(groupBytes),
    ...get(P0),
    ...get(PB),
    ...add,
    ...set(pend),
    ...range(p, get(P0), get(pend), patch),
  ];
  const code = [...vec([[...uleb(13), I32]]), ...body, ...end]; // the locals p .. groupBytes
  return [...uleb(code.length), ...code];
}

/** The module's bytes. */
/** The module's bytes: with `fused`, mm's sums by relaxed SIMD multiply-adds (a runtime without relaxed SIMD refuses it). */
export function assemble(fused = false) {
  const type = vec([
    [0x60, ...vec(new Array(6).fill(I32)), ...vec([])],
    [0x60, ...vec(new Array(4).fill(I32)), ...vec([])],
    [0x60, ...vec(new Array(14).fill(I32)), ...vec([])],
    [0x60, ...vec(new Array(7).fill(I32)), ...vec([])],
  ]);
  const imports = vec([[...str('env'), ...str('memory'), 0x02, 0x00, ...uleb(1)]]);
  const funcs = vec([uleb(0), uleb(1), uleb(2), uleb(3), uleb(0)]);
  const exports = vec([
    [...str('mm'), 0x00, ...uleb(0)],
    [...str('pack'), 0x00, ...uleb(1)],
    [...str('im2col'), 0x00, ...uleb(2)],
    [...str('finish'), 0x00, ...uleb(3)],
    [...str('mm32'), 0x00, ...uleb(4)],
  ]);
  const codes = vec([mm(fused), pack(), im2col(), finish(), mm(fused, 4)]);
  return Uint8Array.from([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, type),
    ...section(2, imports),
    ...section(3, funcs),
    ...section(7, exports),
    ...section(10, codes),
  ]);
}

/** `bytes` in base64, as lines of a JavaScript string expression. */
function base64Lines(bytes) {
  return Buffer.from(bytes)
    .toString('base64')
    .match(/.{1,100}/g)
    .map((l) => `  '${l}'`)
    .join(' +\n');
}

/** The text of src/extensions/policy/gemm-wasm.js. */
export function render() {
  return (
    "// Generated by scripts/build-wasm.mjs (the kernel's source): do not edit.\n" +
    '/** The WebAssembly SIMD module of the sums of linear and conv2d, in base64. */\n' +
    `export const GEMM_WASM_BASE64 =\n${base64Lines(assemble(false))};\n\n` +
    '/** The same module with the sums by relaxed SIMD multiply-adds (the same bits), for the runtimes that have them. */\n' +
    `export const GEMM_WASM_RELAXED_BASE64 =\n${base64Lines(assemble(true))};\n`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = render();
  if (process.argv.includes('--check')) {
    const current = await readFile(out, 'utf8').catch(() => '');
    if (current !== text) {
      console.error('src/extensions/policy/gemm-wasm.js is out of date: run npm run build-wasm');
      process.exit(1);
    }
  } else {
    await writeFile(out, text);
  }
}
