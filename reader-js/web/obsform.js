// An observation form generated from an observation space: number inputs for
// small boxes, a select for Discrete, checkboxes for MultiBinary, sections
// for Dict, and for large or image boxes a compact text field (values in C
// order) with a preview. Each form reads back an observation as the
// reader's Policy#predict takes it.

import { DTYPES } from '../src/index.js';
import { h } from './dom.js';
import { formatShape, formatNumber, formatShort, elementCount } from './format.js';

/** Boxes with at most this many elements get one input per element. */
export const SMALL_BOX = 32;
const MAX_OPTIONS = 1000;
const MAX_CHECKBOXES = 256;
/** @type {Set<string>} */
const INTEGER = new Set(
  Object.values(/** @type {typeof import('../index.js').DTYPES} */ (DTYPES)).flatMap((d) =>
    d.kind === 'int' || d.kind === 'uint' ? [d.code] : [],
  ),
);
/** @type {Record<string, {from(values: number[]): ArrayLike<number>}>} */
const TYPED = { F32: Float32Array, F64: Float64Array, BOOL: Uint8Array };

/**
 * @typedef {import('../index.js').Space} Space
 * @typedef {import('../index.js').NDArray} NDArray
 * @typedef {(values: number[]) => void} SetValues
 */

/**
 * The inputs of one space's values: what they show, how to set and read them, and for a text field `sample`
 * (fills it with a random observation).
 * @typedef {{el: HTMLElement, set: SetValues, values: () => number[], sample?: () => void}} Field
 */

/**
 * An observation form: its element, how to read the observation, and how to fill it with a random or the default one.
 * @typedef {{el: HTMLElement, read: () => unknown, randomize: (rng?: () => number) => void, reset: () => void}} ObservationForm
 */

/** @param {unknown} x */
const num = (x) => Number(x);

/**
 * The multi-index label of element `i` of `shape`, e.g. `[0, 2]`.
 * @param {number} i
 * @param {number[]} shape
 * @returns {string}
 */
function indexLabel(i, shape) {
  if (shape.length <= 1) return `[${i}]`;
  const idx = [];
  for (let d = shape.length - 1; d >= 0; d--) {
    idx.unshift(i % shape[d]);
    i = Math.floor(i / shape[d]);
  }
  return `[${idx.join(', ')}]`;
}

/**
 * @param {Space} sp a Box
 * @param {number} n its element count
 * @returns {{lo: number[], hi: number[]}}
 */
function bounds(sp, n) {
  /** @param {NDArray|undefined} nd */
  const get = (nd) => (nd?.data ? Array.from(nd.data, num) : new Array(n).fill(NaN));
  const lo = get(sp.low),
    hi = get(sp.high);
  return { lo: lo.map((v) => (Number.isNaN(v) ? -Infinity : v)), hi: hi.map((v) => (Number.isNaN(v) ? Infinity : v)) };
}

/**
 * One bound as shown: `-inf`, `inf`, or about 4 significant digits.
 * @param {number} v
 */
const boundText = (v) => (Number.isFinite(v) ? formatShort(v) : v > 0 ? 'inf' : '-inf');

/**
 * The bounds of a Box's elements in one line: `bounds LOW … HIGH` when every
 * element has the same; else `bounds under each value` where each input
 * shows its own, or the range of the lows and of the highs.
 * @param {number[]} lo
 * @param {number[]} hi
 * @param {boolean} [each] whether each element's input shows its bounds
 * @returns {string}
 */
export function boundsText(lo, hi, each = false) {
  /** @param {number[]} xs */
  const same = (xs) => xs.every((x) => Object.is(x, xs[0]));
  if (lo.length && same(lo) && same(hi)) return `bounds ${boundText(lo[0])} … ${boundText(hi[0])}`;
  if (each) return 'bounds under each value';
  /** @param {number[]} xs */
  const range = (xs) => `${boundText(Math.min(...xs))} to ${boundText(Math.max(...xs))}`;
  return `bounds: low from ${range(lo)}, high from ${range(hi)}`;
}

/**
 * @param {() => number} rng
 * @returns {number}
 */
function gaussian(rng) {
  const u = 1 - rng(),
    v = rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * A sample of one Box element as Gymnasium draws it: uniform between finite
 * bounds, exponential from a single finite bound, normal without bounds;
 * integers uniform over the integers in range.
 * @param {string} dtype
 * @param {number} lo
 * @param {number} hi
 * @param {() => number} [rng] uniform in [0, 1)
 * @returns {number}
 */
export function sampleElement(dtype, lo, hi, rng = Math.random) {
  if (dtype === 'BOOL') return rng() < 0.5 ? 0 : 1;
  if (INTEGER.has(dtype)) {
    const a = Math.ceil(Number.isFinite(lo) ? lo : -1e6),
      b = Math.floor(Number.isFinite(hi) ? hi : 1e6);
    return Math.min(b, a + Math.floor(rng() * (b - a + 1)));
  }
  let x;
  if (Number.isFinite(lo) && Number.isFinite(hi)) {
    const r = rng();
    x = (1 - r) * lo + r * hi;
  } else if (Number.isFinite(lo)) x = lo - Math.log(1 - rng());
  else if (Number.isFinite(hi)) x = hi + Math.log(1 - rng());
  else x = gaussian(rng);
  return dtype === 'F32' ? Math.fround(x) : x;
}

/**
 * The default of one Box element: 0 moved into its bounds.
 * @param {string} dtype
 * @param {number} lo
 * @param {number} hi
 * @returns {number}
 */
function defaultElement(dtype, lo, hi) {
  let x = Math.min(Math.max(0, lo), hi);
  if (INTEGER.has(dtype) || dtype === 'BOOL') x = Math.min(Math.ceil(x), Math.floor(hi));
  return x;
}

/**
 * Parses one number as typed by the user: decimal, or nan / inf / -inf.
 * @param {string} text
 * @returns {number} NaN for text that is not a number (check with isNumberText)
 */
export function parseNumber(text) {
  const t = text.trim().toLowerCase();
  if (t === 'nan') return NaN;
  if (t === 'inf' || t === '+inf' || t === 'infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  return t === '' ? NaN : Number(t);
}

/** @param {string} text */
const isNumberText = (text) => !Number.isNaN(parseNumber(text)) || text.trim().toLowerCase() === 'nan';

/**
 * @param {string} dtype
 * @param {number[]} values
 * @returns {ArrayLike<number>}
 */
function typedFor(dtype, values) {
  const T = TYPED[dtype] ?? Float64Array;
  return T.from(values);
}

/** @param {Space} sp */
function isImageBox(sp) {
  return sp.kind === 'box' && sp.dtype === 'U8' && /** @type {number[]} */ (sp.shape).length === 3;
}

/**
 * [height, width, channels, channelFirst] of an image-like shape, or null.
 * @param {number[]} shape
 * @returns {[number, number, number, boolean]|null}
 */
function imageLayout(shape) {
  const [a, b, c] = shape.map(num);
  if ([1, 3, 4].includes(a) && b > 4 && c > 4) return [b, c, a, true];
  if ([1, 3, 4].includes(c) && a > 4 && b > 4) return [a, b, c, false];
  return null;
}

/**
 * @param {HTMLCanvasElement} canvas
 * @param {number[]} shape
 * @param {number[]} values
 */
function drawImage(canvas, shape, values) {
  const layout = imageLayout(shape);
  if (!layout || !canvas.getContext) return;
  const [H, W, C, first] = layout;
  canvas.width = W;
  canvas.height = H;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const img = ctx.createImageData(W, H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      /** @param {number} c */
      const at = (c) => values[first ? (c * H + y) * W + x : (y * W + x) * C + c] ?? 0;
      const o = (y * W + x) * 4;
      img.data[o] = at(0);
      img.data[o + 1] = C >= 3 ? at(1) : at(0);
      img.data[o + 2] = C >= 3 ? at(2) : at(0);
      img.data[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
}

/**
 * A field for many numbers: a text area (C order) with a count, and for images a preview.
 * @param {string} path
 * @param {string} dtype
 * @param {number[]} shape
 * @param {number} n
 * @param {() => number[]} sample
 * @param {number[]} initial
 * @returns {Field}
 */
function compactField(path, dtype, shape, n, sample, initial) {
  const area = h('textarea', {
    class: 'compact',
    rows: 4,
    spellcheck: 'false',
    dataset: { index: 'all' },
    'aria-label': `${path}: ${n} values in C order`,
  });
  const info = h('span', { class: 'muted small' });
  const canvas =
    shape.length === 3 && dtype === 'U8' && imageLayout(shape)
      ? h('canvas', { class: 'preview', title: 'preview of the observation' })
      : null;
  const parse = () => area.value.split(/[\s,]+/).filter((t) => t !== '');
  const refresh = () => {
    const tokens = parse();
    const vals = tokens.map(parseNumber);
    let lo = Infinity,
      hi = -Infinity;
    for (const v of vals) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    const range = lo <= hi ? `, ${formatNumber(lo, dtype)} … ${formatNumber(hi, dtype)}` : '';
    info.textContent = `${tokens.length} of ${n} values${range}`;
    info.classList.toggle('error', tokens.length !== n);
    if (canvas) drawImage(canvas, shape, vals);
  };
  area.addEventListener('input', refresh);
  /** @type {SetValues} */
  const set = (values) => {
    area.value = values.map((v) => formatNumber(v, dtype)).join(' ');
    refresh();
  };
  set(initial);
  const el = h(
    'div',
    { class: 'compact-field' },
    h('div', null, area),
    h('div', null, info, ` — shape ${formatShape(shape)}, C order, separated by spaces or commas`),
    canvas,
  );
  return {
    el,
    set,
    values() {
      const tokens = parse();
      if (tokens.length !== n) throw new Error(`${path}: ${tokens.length} values for ${n}`);
      return tokens.map((t) => {
        if (!isNumberText(t)) throw new Error(`${path}: ${JSON.stringify(t)} is not a number`);
        return parseNumber(t);
      });
    },
    sample: () => set(sample()),
  };
}

/**
 * @param {string} path
 * @param {string} dtype
 * @param {number[]} shape
 * @param {number[]} lo
 * @param {number[]} hi
 * @param {number[]} initial
 * @returns {Field}
 */
function numberInputs(path, dtype, shape, lo, hi, initial) {
  const integer = INTEGER.has(dtype);
  // text, not type=number: a float Box may hold inf, -inf and NaN, which number inputs refuse
  const inputs = initial.map((v, i) =>
    h('input', {
      type: 'text',
      inputmode: integer ? 'numeric' : 'decimal',
      spellcheck: 'false',
      title: `${Number.isFinite(lo[i]) ? formatNumber(lo[i], dtype) : '-inf'} … ${Number.isFinite(hi[i]) ? formatNumber(hi[i], dtype) : 'inf'}${integer ? '' : '; also nan, inf, -inf'}`,
      value: formatNumber(v, dtype),
      dataset: { index: String(i) },
      'aria-label': `${path}${indexLabel(i, shape)}`,
    }),
  );
  const el = h(
    'div',
    { class: 'inputs' },
    inputs.map((input, i) =>
      h(
        'label',
        { class: 'element' },
        h('span', { class: 'index' }, indexLabel(i, shape)),
        input,
        h(
          'span',
          { class: 'bounds', dataset: { low: String(lo[i]), high: String(hi[i]) } },
          `${boundText(lo[i])} … ${boundText(hi[i])}`,
        ),
      ),
    ),
  );
  return {
    el,
    set: (values) => values.forEach((v, i) => (inputs[i].value = formatNumber(v, dtype))),
    values: () =>
      inputs.map((input, i) => {
        if (!isNumberText(input.value)) throw new Error(`${path}${indexLabel(i, shape)}: not a number`);
        return parseNumber(input.value);
      }),
  };
}

/**
 * @param {string} path
 * @param {number[]} shape
 * @param {number[]} initial
 * @returns {Field}
 */
function checkboxes(path, shape, initial) {
  const boxes = initial.map((v, i) =>
    h('input', {
      type: 'checkbox',
      checked: v !== 0,
      dataset: { index: String(i) },
      'aria-label': `${path}${indexLabel(i, shape)}`,
    }),
  );
  const el = h(
    'div',
    { class: 'inputs checks' },
    boxes.map((b, i) => h('label', { class: 'element' }, h('span', { class: 'index' }, indexLabel(i, shape)), b)),
  );
  return {
    el,
    set: (values) => values.forEach((v, i) => (boxes[i].checked = v !== 0)),
    values: () => boxes.map((b) => (b.checked ? 1 : 0)),
  };
}

/**
 * @param {string} path
 * @param {Array<[number, number]>} ranges each select's first value and count
 * @param {number[]|null} shape
 * @returns {Field}
 */
function selects(path, ranges, shape) {
  const sel = ranges.map(([start, count], i) =>
    h(
      'select',
      { dataset: { index: String(i) }, 'aria-label': `${path}${shape ? indexLabel(i, shape) : ''}` },
      Array.from({ length: count }, (_, k) => h('option', { value: String(start + k) }, String(start + k))),
    ),
  );
  const el = h(
    'div',
    { class: 'inputs' },
    sel.map((s, i) =>
      shape ? h('label', { class: 'element' }, h('span', { class: 'index' }, indexLabel(i, shape)), s) : s,
    ),
  );
  return {
    el,
    set: (values) => values.forEach((v, i) => (sel[i].value = String(v))),
    values: () => sel.map((s) => Number(s.value)),
  };
}

/**
 * Builds the form of one space.
 * @param {import('../index.js').Space} sp the observation space (arrays loaded)
 * @param {string} [path] the name shown in messages and set as `data-obs-path`
 * @returns {ObservationForm}
 */
export function buildObservationForm(sp, path = 'obs') {
  /**
   * @param {{el: HTMLElement}} form
   * @param {string} kind
   * @param {string} field
   */
  const wrap = (form, kind, field) => {
    const el = h(
      'div',
      { class: `obs-field obs-${kind}`, dataset: { obsPath: path, form: kind } },
      h('div', { class: 'obs-label' }, h('code', null, path), ' ', h('span', { class: 'muted' }, field)),
      form.el,
    );
    return el;
  };
  switch (sp.kind) {
    case 'box': {
      const dtype = /** @type {import('../index.js').DtypeCode} */ (sp.dtype); // a Box has its dtype and shape
      const shape = /** @type {number[]} */ (sp.shape).map(num);
      const n = elementCount(shape);
      const { lo, hi } = bounds(sp, n);
      const defaults = () => lo.map((l, i) => defaultElement(dtype, l, hi[i]));
      /** @param {() => number} [rng] */
      const sample = (rng) => lo.map((l, i) => sampleElement(dtype, l, hi[i], rng));
      /** @type {Field} */
      let form;
      let kind;
      if (n > SMALL_BOX || isImageBox(sp)) {
        form = compactField(path, dtype, shape, n, sample, defaults());
        kind = 'text';
      } else if (dtype === 'BOOL') {
        form = checkboxes(path, shape, defaults());
        kind = 'checkboxes';
      } else {
        form = numberInputs(path, dtype, shape, lo, hi, defaults());
        kind = 'inputs';
      }
      return {
        el: wrap(form, kind, `Box(${dtype}, ${formatShape(shape)}), ${boundsText(lo, hi, kind === 'inputs')}`),
        read: () => ({ dtype, shape, data: typedFor(dtype, form.values()) }),
        randomize: (rng) => form.set(sample(rng)),
        reset: () => form.set(defaults()),
      };
    }
    case 'discrete': {
      const start = num(sp.start),
        count = num(sp.n);
      if (count <= MAX_OPTIONS) {
        const form = selects(path, [[start, count]], null);
        return {
          el: wrap(form, 'select', `Discrete(${count}${start ? `, start ${start}` : ''})`),
          read: () => form.values()[0],
          randomize: (rng = Math.random) => form.set([start + Math.floor(rng() * count)]),
          reset: () => form.set([start]),
        };
      }
      const form = numberInputs(path, 'I64', [], [start], [start + count - 1], [start]);
      return {
        el: wrap(form, 'inputs', `Discrete(${count})`),
        read: () => form.values()[0],
        randomize: (rng = Math.random) => form.set([start + Math.floor(rng() * count)]),
        reset: () => form.set([start]),
      };
    }
    case 'multi_discrete': {
      const nvecArray = /** @type {NDArray} */ (sp.nvec); // loaded, as the form's space is
      const startArray = /** @type {NDArray|undefined} */ (sp.start); // an array, or absent
      const nvec = Array.from(/** @type {ArrayLike<number|bigint>} */ (nvecArray.data), num);
      const starts = startArray?.data ? Array.from(startArray.data, num) : nvec.map(() => 0);
      const shape = nvecArray.shape.map(num);
      const sample = (rng = Math.random) => nvec.map((c, i) => starts[i] + Math.floor(rng() * c));
      /** @type {Field} */
      const form =
        nvec.length <= SMALL_BOX && nvec.every((c) => c <= MAX_OPTIONS)
          ? selects(
              path,
              nvec.map((c, i) => /** @type {[number, number]} */ ([starts[i], c])),
              shape,
            )
          : compactField(path, 'I64', shape, nvec.length, sample, starts);
      return {
        el: wrap(form, form.sample ? 'text' : 'select', `MultiDiscrete(${formatShape(shape)})`),
        read: () => ({ dtype: 'I64', shape, data: Float64Array.from(form.values()) }),
        randomize: (rng) => form.set(sample(rng)),
        reset: () => form.set(starts),
      };
    }
    case 'multi_binary': {
      const shape = Array.isArray(sp.n) ? sp.n.map(num) : [num(sp.n)];
      const n = elementCount(shape);
      const zeros = () => new Array(n).fill(0);
      const sample = (rng = Math.random) => Array.from({ length: n }, () => (rng() < 0.5 ? 0 : 1));
      /** @type {Field} */
      const form =
        n <= MAX_CHECKBOXES ? checkboxes(path, shape, zeros()) : compactField(path, 'I8', shape, n, sample, zeros());
      return {
        el: wrap(form, form.sample ? 'text' : 'checkboxes', `MultiBinary(${formatShape(shape)})`),
        read: () => ({ dtype: 'I8', shape, data: Int8Array.from(form.values()) }),
        randomize: (rng) => form.set(sample(rng)),
        reset: () => form.set(zeros()),
      };
    }
    case 'dict':
    case 'tuple': {
      /** @type {Array<[string|number, ObservationForm]>} */
      const parts =
        sp.kind === 'dict'
          ? /** @type {Array<[string, Space]>} */ (sp.spaces).map(([k, sub]) => [
              k,
              buildObservationForm(sub, `${path}/${k}`),
            ])
          : /** @type {Space[]} */ (sp.spaces).map((sub, i) => [i, buildObservationForm(sub, `${path}/${i}`)]);
      const el = h(
        'div',
        { class: `obs-${sp.kind}`, dataset: { obsPath: path, form: sp.kind } },
        parts.map(([k, f]) => h('fieldset', null, h('legend', null, String(k)), f.el)),
      );
      return {
        el,
        read: () =>
          sp.kind === 'dict'
            ? Object.fromEntries(parts.map(([k, f]) => [k, f.read()]))
            : parts.map(([, f]) => f.read()),
        randomize: (rng) => parts.forEach(([, f]) => f.randomize(rng)),
        reset: () => parts.forEach(([, f]) => f.reset()),
      };
    }
    default: {
      const input = h('input', { type: 'text', dataset: { index: '0' } });
      return {
        el: wrap({ el: input }, 'text', sp.kind),
        read: () => input.value,
        randomize: () => {},
        reset: () => (input.value = ''),
      };
    }
  }
}
