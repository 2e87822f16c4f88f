// Assembles the WebAssembly SIMD module of the portable policy's sums (used by src/extensions/policy/gemm.js) and writes
// src/extensions/policy/gemm-wasm.js, the module's bytes in base64. The functions are written below as lists of
// instructions, with the small encoder they need: the build takes nothing but Node, and gives the
// same bytes every time.
// Usage: node scripts/build-wasm.mjs [--check]   (npm run build-wasm; --check: exit 1 if src/extensions/policy/gemm-wasm.js is
// out of date, as npm pack and test/gemm.test.mjs run it)
//
// The products mm32(a, w, out, R, K, P) for float32 operands and mm64(...) for binary64 ones (the
// same float32 values, held exactly: no conversion in the inner loop), all offsets in bytes into the
// imported memory:
//   a    R rows of K values (row-major), the left operand;
//   w    P panels of four columns: panel q holds, for k = 0 .. K-1, the four values w[4q + j][k];
//   out  R rows of 4P float64: out[r][4q + j] = the sum over k = 0, 1, ..., K-1, in that order,
//        of a[r][k] · w[4q + j][k], each product exact in binary64 and each partial sum rounded
//        to binary64, from +0 (the order of the pure JavaScript kernel, so the results are equal).
// Rows go four at a time (eight two-lane accumulators; more would spill registers), then one at a time.
// And im2col64, conv2d's patches as binary64 rows for mm64 (below).
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
const ltU = [0x49];
const leS = [0x4c];
const ifThen = [0x04, VOID];
const orElse = [0x05];
const f32Load = [0x2a, ...memarg(2, 0)];
const f64Store = [0x39, ...memarg(3, 0)];
const f64PromoteF32 = [0xbb];
const f64Zero = [0x44, 0, 0, 0, 0, 0, 0, 0, 0]; // f64.const +0
const block = [0x02, VOID];
const loop = [0x03, VOID];
const end = [0x0b];
const br = (d) => [0x0c, ...uleb(d)];
const brIf = (d) => [0x0d, ...uleb(d)];
const v128Zero = simd(0x0c, ...new Array(16).fill(0)); // v128.const 0
const load128 = (offset) => simd(0x00, ...memarg(4, offset)); // v128.load
const load32Splat = (offset) => simd(0x09, ...memarg(2, offset));
const load64Splat = (offset) => simd(0x0a, ...memarg(3, offset));
const load64Zero = (offset) => simd(0x5d, ...memarg(3, offset));
const store = (offset) => simd(0x0b, ...memarg(4, offset));
const promoteLow = simd(0x5f); // f64x2.promote_low_f32x4
const f64x2Add = simd(0xf0);
const f64x2Mul = simd(0xf2);
const inc = (l, by) => [...get(l), ...i32(by), ...add, ...set(l)];

// -- the kernels ---------------------------------------------------------------------------------
const RB = 4; // rows at a time
// parameters
const A = 0,
  W = 1,
  OUT = 2,
  R = 3,
  K = 4,
  P = 5;
// i32 locals
const r = 6,
  q = 7,
  wp = 8,
  wend = 9,
  rowBytes = 10,
  panelBytes = 11,
  outRow = 12,
  o = 13;
const ptr = (i) => 14 + i; // a pointer per row
const I32_LOCALS = 8 + RB;
// v128 locals
const s = (i) => 14 + RB + i; // 2·RB accumulators
const wlo = 14 + 3 * RB,
  whi = wlo + 1,
  x = wlo + 2;
const V128_LOCALS = 2 * RB + 3;

/** acc += x · w, two lanes */
const madd = (acc, w) => [...get(acc), ...get(x), ...get(w), ...f64x2Mul, ...f64x2Add, ...set(acc)];

/** The function body for operands of `size` bytes (4: float32, 8: binary64). */
function kernel(size) {
  /** x = the value at local p, in both lanes as binary64 */
  const splat = (p) =>
    size === 8 ? [...get(p), ...load64Splat(0), ...set(x)] : [...get(p), ...load32Splat(0), ...promoteLow, ...set(x)];
  /** the four weights of the panel at column k, as two binary64 pairs */
  const loadW =
    size === 8
      ? [...get(wp), ...load128(0), ...set(wlo), ...get(wp), ...load128(16), ...set(whi)]
      : [
          ...get(wp),
          ...load64Zero(0),
          ...promoteLow,
          ...set(wlo),
          ...get(wp),
          ...load64Zero(8),
          ...promoteLow,
          ...set(whi),
        ];

  /** the panels loop for `rows` rows starting at row r */
  function panels(rows) {
    const ptrs = Array.from({ length: rows }, (_, i) => ptr(i));
    const body = [];
    body.push(...i32(0), ...set(q), ...get(W), ...set(wp));
    body.push(...block, ...loop);
    body.push(...get(q), ...get(P), ...geS, ...brIf(1));
    for (let i = 0; i < 2 * rows; i++) body.push(...v128Zero, ...set(s(i)));
    // ptr_i = A + (r + i)·rowBytes
    ptrs.forEach((p, i) =>
      body.push(...get(r), ...i32(i), ...add, ...get(rowBytes), ...mul, ...get(A), ...add, ...set(p)),
    );
    body.push(...get(wp), ...get(panelBytes), ...add, ...set(wend));
    // the sums, k = 0 .. K-1 in order
    body.push(...block, ...loop);
    body.push(...get(wp), ...get(wend), ...geU, ...brIf(1));
    body.push(...loadW);
    ptrs.forEach((p, i) => body.push(...splat(p), ...madd(s(2 * i), wlo), ...madd(s(2 * i + 1), whi), ...inc(p, size)));
    body.push(...inc(wp, 4 * size), ...br(0), ...end, ...end);
    // out[(r + i)·4P + 4q ...] = the accumulators (32 bytes a panel, 32P a row)
    body.push(...get(r), ...get(outRow), ...mul, ...get(OUT), ...add, ...get(q), ...i32(32), ...mul, ...add, ...set(o));
    for (let i = 0; i < rows; i++) {
      body.push(...get(o), ...get(s(2 * i)), ...store(0));
      body.push(...get(o), ...get(s(2 * i + 1)), ...store(16));
      body.push(...get(o), ...get(outRow), ...add, ...set(o));
    }
    body.push(...inc(q, 1), ...br(0), ...end, ...end);
    return body;
  }

  const body = [];
  body.push(...get(K), ...i32(size), ...mul, ...set(rowBytes));
  body.push(...get(K), ...i32(4 * size), ...mul, ...set(panelBytes));
  body.push(...get(P), ...i32(32), ...mul, ...set(outRow));
  body.push(...i32(0), ...set(r));
  // RB rows at a time while r + RB <= R
  body.push(...block, ...loop);
  body.push(...get(r), ...i32(RB), ...add, ...get(R), ...gtS, ...brIf(1));
  body.push(...panels(RB));
  body.push(...inc(r, RB), ...br(0), ...end, ...end);
  // then one row at a time
  body.push(...block, ...loop);
  body.push(...get(r), ...get(R), ...geS, ...brIf(1));
  body.push(...panels(1));
  body.push(...inc(r, 1), ...br(0), ...end, ...end);
  const locals = vec([
    [...uleb(I32_LOCALS), I32],
    [...uleb(V128_LOCALS), V128],
  ]);
  const code = [...locals, ...body, ...end];
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
    inside = 25;
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
  const step = [...inc(src, 4), ...inc(dst, 8)];
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
    ...range(kx, i32(0), get(KW), [...zero, ...inc(dst, 8)]),
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
    ...range(c, i32(0), get(C), range(ky, i32(0), get(KH), row)),
  ];
  const body = [
    ...get(COLS),
    ...set(dst),
    ...get(P0),
    ...get(PB),
    ...add,
    ...set(pend),
    ...range(p, get(P0), get(pend), patch),
  ];
  const code = [...vec([[...uleb(12), I32]]), ...body, ...end]; // the locals p .. inside
  return [...uleb(code.length), ...code];
}

/** The module's bytes. */
export function assemble() {
  const type = vec([
    [0x60, ...vec(new Array(6).fill(I32)), ...vec([])],
    [0x60, ...vec(new Array(14).fill(I32)), ...vec([])],
  ]);
  const imports = vec([[...str('env'), ...str('memory'), 0x02, 0x00, ...uleb(1)]]);
  const funcs = vec([uleb(0), uleb(0), uleb(1)]);
  const exports = vec([
    [...str('mm32'), 0x00, ...uleb(0)],
    [...str('mm64'), 0x00, ...uleb(1)],
    [...str('im2col64'), 0x00, ...uleb(2)],
  ]);
  const codes = vec([kernel(4), kernel(8), im2col()]);
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

/** The text of src/extensions/policy/gemm-wasm.js. */
export function render() {
  const b64 = Buffer.from(assemble()).toString('base64');
  const lines = b64
    .match(/.{1,100}/g)
    .map((l) => `  '${l}'`)
    .join(' +\n');
  return (
    "// Generated by scripts/build-wasm.mjs (the kernel's source): do not edit.\n" +
    '/** The WebAssembly SIMD module of the sums of linear and conv2d, in base64. */\n' +
    `export const GEMM_WASM_BASE64 =\n${lines};\n`
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
