// What the random generators of the extension RLA_training accept: the rules
// of its §3.7, on element bytes. A state outside them is refused by its
// generator, makes it read outside its state, or is degenerate (an MT19937
// that makes only zero words, so that a sampler that rejects draws until one
// fits never returns). The twin of python/rlarchive/extensions/training/generator_states.py.

import { fail } from '../../errors.js';

// Words of an MT19937 state (PyTorch's, NumPy's and Python's generators), and the bytes of PyTorch's and CUDA's states.
export const MT_WORDS = 624;
export const TORCH_BYTES = 5056;
export const CUDA_BYTES = 16;
const TOP_BIT = 0x80000000;

/** PyTorch's CPUGeneratorImplState on a 64-bit little-endian machine (§3.7): field -> byte offset. */
export const TORCH_LAYOUT = Object.freeze({
  the_initial_seed: 0,
  left: 8,
  seeded: 12,
  next: 16,
  state: 24,
  normal_x: 5016,
  normal_y: 5024,
  normal_rho: 5032,
  normal_is_valid: 5040,
  next_float_normal_sample: 5048,
  is_next_float_normal_sample_valid: 5052,
});

/**
 * @param {string} msg
 * @param {string} pointer
 * @param {string} member
 */
const bad = (msg, pointer, member) => fail('EXTENSION_INVALID', msg, { member, pointer });

/**
 * True for MT19937 words whose recurrence makes only zeros: the first word's top bit and the 623 others all 0.
 * @param {ArrayLike<number | bigint>} words
 * @returns {boolean}
 */
export function mtDegenerate(words) {
  if ((Number(words[0]) & TOP_BIT) !== 0) return false;
  for (let i = 1; i < words.length; i++) if (words[i] !== 0 && words[i] !== 0n) return false;
  return true;
}

/**
 * PyTorch's CPU generator state (5056 bytes), its fields in the order of §5 step 6.
 * @param {Uint8Array} raw
 * @param {string} ptr
 * @param {string} member
 */
export function checkTorch(raw, ptr, member) {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const L = TORCH_LAYOUT;
  const left = view.getInt32(L.left, true);
  if (left < 1 || left > MT_WORDS)
    throw bad(`PyTorch's generator state has left = ${left}, outside [1, 624]`, ptr, member);
  const seeded = view.getInt32(L.seeded, true);
  if (seeded !== 1) throw bad(`PyTorch's generator state has seeded = ${seeded}, not 1`, ptr, member);
  const next = view.getBigUint64(L.next, true);
  if (next + BigInt(left) > BigInt(MT_WORDS + 1))
    throw bad(
      `PyTorch's generator state has next + left = ${next + BigInt(left)}, above 625: it would read past its words`,
      ptr,
      member,
    );
  /** @type {number[]} */
  const words = [];
  for (let i = 0; i < MT_WORDS; i++) {
    const w = view.getBigUint64(L.state + 8 * i, true);
    if (w >= 1n << 32n) throw bad(`word ${i} of PyTorch's generator state is not below 2^32`, ptr, member);
    words.push(Number(w));
  }
  if (mtDegenerate(words))
    throw bad("PyTorch's generator state is degenerate (its MT19937 words make only zeros)", ptr, member);
  /** @type {[string, number, string, number][]} */
  const samples = [
    ['normal_is_valid', view.getInt32(L.normal_is_valid, true), 'normal_y', view.getFloat64(L.normal_y, true)],
    [
      'is_next_float_normal_sample_valid',
      view.getUint8(L.is_next_float_normal_sample_valid),
      'next_float_normal_sample',
      view.getFloat32(L.next_float_normal_sample, true),
    ],
  ];
  for (const [flag, valid, sample, value] of samples) {
    if (valid !== 0 && valid !== 1)
      throw bad(`${flag} of PyTorch's generator state is ${valid}, not 0 or 1`, ptr, member);
    if (valid === 1 && !Number.isFinite(value))
      throw bad(`${sample} of PyTorch's generator state is not finite`, ptr, member);
  }
}

/**
 * A CUDA generator's state (16 bytes): its Philox offset a non-negative multiple of 4.
 * @param {Uint8Array} raw
 * @param {string} ptr
 * @param {string} member
 */
export function checkCuda(raw, ptr, member) {
  const offset = new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getBigInt64(8, true);
  if (offset < 0n || offset % 4n !== 0n)
    throw bad(`the CUDA generator's Philox offset ${offset} is not a non-negative multiple of 4`, ptr, member);
}

/**
 * §3.7 on a structurally checked RANDOM's arrays, loaded: `torch` and each of
 * `torchCuda` (Uint8Array), `numpyKey` and `pythonState` (Uint32Array).
 * Throws EXTENSION_INVALID (located at `member`, RANDOM being at `ptr`) at
 * the array that breaks a rule, in the order of §5 step 6.
 * @param {{torch: Uint8Array, torchCuda: Uint8Array[], numpyKey: Uint32Array, pythonState: Uint32Array}} arrays
 * @param {string} ptr
 * @param {string} member
 */
export function checkRandom({ torch, torchCuda, numpyKey, pythonState }, ptr, member) {
  checkTorch(torch, `${ptr}/torch`, member);
  torchCuda.forEach((a, i) => checkCuda(a, `${ptr}/torch_cuda/${i}`, member));
  if (mtDegenerate(numpyKey))
    throw bad("NumPy's MT19937 key is degenerate (it makes only zeros)", `${ptr}/numpy/key`, member);
  const index = pythonState[MT_WORDS];
  if (index > MT_WORDS)
    throw bad(`the index of Python's generator state is ${index}, outside [0, 624]`, `${ptr}/python/state`, member);
  if (mtDegenerate(pythonState.subarray(0, MT_WORDS)))
    throw bad("Python's MT19937 state is degenerate (it makes only zeros)", `${ptr}/python/state`, member);
}
