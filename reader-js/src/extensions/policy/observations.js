// Observations of a space as a policy takes them (RLA_policy §4): one or a batch, and
// preprocessed; the twin of python/rlarchive/extensions/policy/observations.py.
//
// A space is a decoded Space object (kind, shape, n, nvec, low, high, spaces). `asBatch`
// tells a single observation from a batch as Stable-Baselines3's is_vectorized_observation
// does, for every kind, and `batch` for every key of a Dict (all keys single, or all a batch
// of the same size); `preprocess` turns a batch into the float32 input of the network.
// Observations that do not fit are errors of the caller: TypeError.

/** @typedef {import('../../../index.js').Observation} Observation */
/** @typedef {import('../../../index.js').Space} Space */
/** @typedef {import('../../../index.js').ElementArray} ElementArray */
/** @typedef {import('../../../index.js').observations.Batch} Batch */
/**
 * A loaded array of a decoded space (an NDArray of index.d.ts whose data is loaded).
 * @typedef {{dtype: string, shape: number[], data: ElementArray}} SpaceArray
 */
/**
 * A decoded Space as the policy reads it: the members of its kind are present, its arrays loaded, a Dict's spaces
 * [key, space] pairs (the description was checked, RLA_policy §4).
 * @typedef {{kind: string, dtype?: string, shape: number[], low: SpaceArray, high: SpaceArray,
 *   n: number | bigint | ArrayLike<number | bigint>, nvec: SpaceArray, spaces: [string, Space][]}} PolicySpace
 */
/**
 * A value of the network: the batch first, the elements in C order.
 * @typedef {{shape: number[], data: Float32Array}} Tensor
 */

const f32 = Math.fround;
/** @type {<T>(v: T | bigint) => T | number} */
const num = (v) => (typeof v === 'bigint' ? Number(v) : v);

/** The kind of a space: 'box', 'discrete', 'multi_discrete', 'multi_binary', 'dict', ... */
export const kind = (/** @type {Space} */ space) => space.kind;

/** The keys of a Dict space, in its order. */
export const dictKeys = (/** @type {Space} */ space) => /** @type {PolicySpace} */ (space).spaces.map(([key]) => key);

/**
 * The space of `key` in a Dict space.
 * @param {Space} space
 * @param {string} key
 * @returns {Space}
 */
export function subspace(space, key) {
  const found = /** @type {PolicySpace} */ (space).spaces.find(([k]) => k === key);
  if (!found) throw new TypeError(`the Dict space has no key ${JSON.stringify(key)}`);
  return found[1];
}

/** @type {WeakMap<Space, boolean>} */
const IMAGES = new WeakMap();

/**
 * SB3's is_image_space without the channel check: a U8 Box of rank 3 with bounds 0 and 255 (remembered per space).
 * @param {Space} space
 * @returns {boolean}
 */
export function isImage(space) {
  const sp = /** @type {PolicySpace} */ (space);
  if (sp.kind !== 'box' || sp.shape.length !== 3 || sp.low.dtype !== 'U8') return false;
  if (!IMAGES.has(space))
    // a U8 box: low and high are Uint8Array
    IMAGES.set(
      space,
      /** @type {Uint8Array} */ (sp.low.data).every((x) => x === 0) &&
        /** @type {Uint8Array} */ (sp.high.data).every((x) => x === 255),
    );
  return /** @type {boolean} */ (IMAGES.get(space));
}

/**
 * The shape of one observation of a Box, Discrete ([]), MultiDiscrete or MultiBinary space.
 * @param {Space} space
 * @returns {number[]}
 */
export function observationShape(space) {
  const sp = /** @type {PolicySpace} */ (space);
  switch (sp.kind) {
    case 'box':
      return sp.shape.map(num);
    case 'discrete':
      return [];
    case 'multi_discrete':
      return sp.nvec.shape.map(num);
    case 'multi_binary':
      return Array.isArray(sp.n)
        ? sp.n.map(num)
        : ArrayBuffer.isView(sp.n)
          ? Array.from(/** @type {ArrayLike<number | bigint>} */ (space.n), num)
          : [num(/** @type {number | bigint} */ (space.n))];
    default:
      throw new TypeError(`no observation shape for a ${space.kind} space`);
  }
}

/**
 * Every element of nested arrays, typed arrays, an NDArray-like or a Scalar, as a flat array (a typed array is returned as it is).
 * @param {unknown} v
 * @returns {ArrayLike<number | bigint | boolean>}
 */
export function flatValues(v) {
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return [v];
  if (ArrayBuffer.isView(v)) return /** @type {ElementArray} */ (v);
  if (Array.isArray(v)) return v.flatMap(/** @type {(x: unknown) => (number | bigint | boolean)[]} */ (flatValues));
  if (v !== null && typeof v === 'object') {
    const o = /** @type {{data?: unknown, value?: unknown, dtype?: unknown}} */ (v);
    if (o.data !== undefined) return flatValues(o.data);
    if (o.value !== undefined && o.dtype !== undefined) return flatValues(o.value); // a Scalar
  }
  throw new TypeError(`not an observation array: ${v === null ? 'null' : typeof v}`);
}

/**
 * The shape of nested arrays, a typed array (1-d), an NDArray-like ({shape}), a Scalar or a number ([]).
 * @param {unknown} v
 * @returns {number[]}
 */
export function shapeOf(v) {
  if (v && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v)) {
    const shape = /** @type {{shape?: unknown}} */ (v).shape;
    if (Array.isArray(shape) || ArrayBuffer.isView(shape))
      return Array.from(/** @type {ArrayLike<number | bigint>} */ (shape), num);
  }
  if (Array.isArray(v)) {
    if (v.length === 0) return [0];
    const inner = shapeOf(v[0]);
    for (const item of v)
      if (!sameShape(shapeOf(item), inner)) throw new TypeError('a ragged nested array is not an observation');
    return [v.length, ...inner];
  }
  if (ArrayBuffer.isView(v)) return [/** @type {ElementArray} */ (v).length];
  return [];
}

/**
 * @param {number[]} a
 * @param {number[]} b
 */
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

/**
 * One observation or a batch of `space`: {values (flat, C order), n, single}, transposing channel-last
 * images as SB3 does. Single when the shape is the space's observation shape, a batch of n when it is
 * [n, ...shape]; anything else is a TypeError.
 * @param {unknown} obs
 * @param {Space} space
 * @returns {Batch}
 */
export function asBatch(obs, space) {
  if (obs === undefined || obs === null) throw new TypeError('an observation is missing');
  let shape = shapeOf(obs);
  let values = flatValues(obs);
  const want = observationShape(space);
  if (values.length !== shape.reduce((a, b) => a * b, 1))
    throw new TypeError(`an observation of shape [${shape}] with ${values.length} values`);
  if (
    isImage(space) &&
    (shape.length === 3 || shape.length === 4) &&
    !sameShape(shape.slice(-3), want) &&
    sameShape(shape.slice(-3), [want[1], want[2], want[0]])
  ) {
    const [C, H, W] = want; // SB3's maybe_transpose: the env gives channel-last (H, W, C)
    const n = values.length / (C * H * W);
    /** @type {(number | bigint | boolean)[]} */
    const t = new Array(values.length);
    for (let b = 0; b < n; b++) {
      for (let y = 0; y < H; y++)
        for (let x = 0; x < W; x++)
          for (let c = 0; c < C; c++)
            t[b * C * H * W + (c * H + y) * W + x] = values[b * C * H * W + (y * W + x) * C + c];
    }
    values = t;
    shape = [...shape.slice(0, -3), C, H, W];
  }
  if (sameShape(shape, want)) return { values, n: 1, single: true };
  if (shape.length === want.length + 1 && sameShape(shape.slice(1), want))
    return { values, n: shape[0], single: false };
  throw new TypeError(`observation of shape [${shape}] for a space of shape [${want}]`);
}

/**
 * The observation as a batch ({obs, single, n}): for a Dict space `obs` maps each key to its batch.
 * A Dict observation (an object or a Map) is single when every key is single, a batch of n when every key
 * is a batch of the same n (RLA_policy §4); keys that disagree are a TypeError.
 * @param {unknown} observation
 * @param {Space} space
 * @returns {{obs: Batch | Record<string, Batch>, single: boolean, n: number}}
 */
export function batch(observation, space) {
  if (space.kind !== 'dict') {
    const b = asBatch(observation, space);
    return { obs: b, single: b.single, n: b.n };
  }
  if (
    observation === null ||
    typeof observation !== 'object' ||
    Array.isArray(observation) ||
    ArrayBuffer.isView(observation)
  ) {
    throw new TypeError('a Dict observation space takes an object (or a Map) of observations');
  }
  const get = (/** @type {string} */ k) =>
    observation instanceof Map
      ? observation.get(k)
      : Object.hasOwn(observation, k)
        ? /** @type {Record<string, unknown>} */ (observation)[k]
        : undefined;
  /** @type {Record<string, Batch>} */
  const obs = {};
  /** @type {boolean | null} */
  let single = null;
  /** @type {number | null} */
  let n = null;
  for (const [key, sub] of /** @type {PolicySpace} */ (space).spaces) {
    if (get(key) === undefined) throw new TypeError(`the observation lacks the key ${JSON.stringify(key)}`);
    const b = asBatch(get(key), sub);
    if (single === null) {
      single = b.single;
      n = b.n;
    } else if (b.single !== single || b.n !== n) {
      const what = (/** @type {boolean | null} */ one, /** @type {number | null} */ size) =>
        one ? 'one observation' : `a batch of ${size}`;
      throw new TypeError(
        `the key ${JSON.stringify(key)} is ${what(b.single, b.n)} while the keys before it are ${what(single, n)}`,
      );
    }
    obs[key] = b;
  }
  // a Dict space has at least one key (RLA_policy §4), so single and n are set
  return { obs, single: /** @type {boolean} */ (single), n: /** @type {number} */ (n) };
}

/**
 * The one-hot vectors of each component (sizes `nvec`), concatenated per observation.
 * @param {ArrayLike<number | bigint | boolean>} values
 * @param {number[]} nvec
 * @param {number} n
 * @returns {Tensor}
 */
export function oneHot(values, nvec, n) {
  const width = nvec.reduce((a, b) => a + b, 0);
  const data = new Float32Array(n * width);
  for (let b = 0; b < n; b++) {
    let offset = 0;
    nvec.forEach((size, k) => {
      const v = num(values[b * nvec.length + k]);
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= size)
        throw new TypeError(`a discrete observation outside 0..${size - 1}`);
      data[b * width + offset + v] = 1;
      offset += size;
    });
  }
  return { shape: [n, width], data };
}

/**
 * float32 copies of numbers (a typed array is converted in one pass; BigInts and booleans as numbers).
 * @param {ArrayLike<number | bigint | boolean>} values
 * @returns {Float32Array}
 */
function toFloat32(values) {
  if (ArrayBuffer.isView(values) && !(values instanceof BigInt64Array || values instanceof BigUint64Array))
    return new Float32Array(/** @type {ArrayLike<number>} */ (values));
  return Float32Array.from(values, (v) => Number(v));
}

/**
 * A batch of observations of `space` ({values, n}, the values already normalised when they had to be) as the float32 input: {shape, data}.
 * @param {{values: ArrayLike<number | bigint | boolean>, n: number}} b
 * @param {Space} space
 * @param {boolean} normalizeImages
 * @returns {Tensor}
 */
export function preprocess(b, space, normalizeImages) {
  const sp = /** @type {PolicySpace} */ (space);
  const values = b.values;
  const n = b.n;
  switch (sp.kind) {
    case 'box': {
      const data = toFloat32(values);
      if (normalizeImages && isImage(space)) for (let i = 0; i < data.length; i++) data[i] = f32(data[i] / 255);
      return { shape: [n, ...observationShape(space)], data };
    }
    case 'discrete':
      return oneHot(values, [num(/** @type {number | bigint} */ (sp.n))], n);
    case 'multi_discrete':
      return oneHot(values, Array.from(/** @type {ArrayLike<number | bigint>} */ (sp.nvec.data), num), n);
    case 'multi_binary':
      return { shape: [n, ...observationShape(space)], data: toFloat32(values) };
    default:
      throw new TypeError(`no preprocessing for a ${sp.kind} space`);
  }
}
