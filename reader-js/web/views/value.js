// Readable renderings of decoded values (spec §7): scalars inline, containers
// as nested lists and tables, arrays and spaces summarised.

import { NDArray, Scalar, Space, Schedule, ClassRef, Opaque, Tuple } from '../../src/index.js';
import { h } from '../dom.js';
import { formatNumber, formatShape, formatBytes, elementCount } from '../format.js';
import { arrayValues, summarizeArray } from '../arrays.js';
import { isCancelled } from '../worker-client.js';

export { arrayValues, summarizeArray };

/**
 * The decoded values as index.d.ts declares them (src/decode.js's Space and Schedule declare no members).
 * @typedef {import('../../index.js').NDArray} NDArrayValue
 * @typedef {import('../../index.js').Space} SpaceValue
 * @typedef {import('../../index.js').Schedule} ScheduleValue
 * @typedef {{dtype: string, shape: number[], data: import('../../index.js').ElementArray}} LoadedArray
 */

const MAX_ITEMS = 50;

/**
 * How a referenced array's summary is computed when its load button is pressed (see setArraySummarizer).
 * @type {(nd: NDArrayValue) => Promise<string>}
 */
let summarizeReferenced = async (nd) => {
  await nd.load();
  return summarizeArray(/** @type {LoadedArray} */ (nd));
};

/**
 * Sets how a referenced array's summary is computed: the inspector has its
 * worker read the tensor and summarise it (worker.js, op 'array').
 * @param {(nd: NDArrayValue) => Promise<string>} fn
 */
export function setArraySummarizer(fn) {
  summarizeReferenced = fn;
}

/**
 * An NDArray: dtype, shape and its values summarised; a reference is shown
 * by name with a button that loads it (only then its bytes are read).
 * @param {NDArrayValue} nd
 * @returns {HTMLElement}
 */
export function renderArray(nd) {
  const head = h('span', { class: 'type' }, `${nd.dtype}${formatShape(nd.shape)}`);
  const body = h('span', { class: 'array-values' });
  const show = () =>
    body.replaceChildren(document.createTextNode(` ${summarizeArray(/** @type {LoadedArray} */ (nd))}`));
  if (nd.data !== null) {
    show();
    return h('span', { class: 'ndarray' }, head, body);
  }
  const count = elementCount(nd.shape);
  const button = h(
    'button',
    {
      type: 'button',
      class: 'small',
      onclick: async () => {
        button.disabled = true;
        try {
          const text = await summarizeReferenced(nd);
          body.replaceChildren(document.createTextNode(` ${text}`));
        } catch (e) {
          const err = /** @type {{code?: string, detail?: string, message?: string}} */ (e);
          if (isCancelled(e)) button.disabled = false;
          else
            body.replaceChildren(
              h('span', { class: 'error' }, ` ${err.code ?? 'ERROR'}: ${err.detail ?? err.message}`),
            );
        }
      },
    },
    'load',
  );
  const ref = /** @type {{group: string, name: string}} */ (nd.ref); // an array without data is a reference
  body.append(` → tensors/${ref.group} ${ref.name} (${count} elements) `, button);
  return h('span', { class: 'ndarray' }, head, body);
}

/**
 * A short one-line description of a space, e.g. `Box(F32, [3])`.
 * @param {SpaceValue} sp
 * @returns {string}
 */
export function spaceLabel(sp) {
  switch (sp.kind) {
    case 'box':
      return `Box(${sp.dtype}, ${formatShape(/** @type {number[]} */ (sp.shape))})`;
    case 'discrete':
      return `Discrete(${sp.n}${Number(sp.start) !== 0 ? `, start=${sp.start}` : ''})`;
    case 'multi_discrete': {
      const nvec = /** @type {NDArrayValue} */ (sp.nvec);
      return `MultiDiscrete(${nvec.data ? summarizeArray(/** @type {LoadedArray} */ (nvec)) : formatShape(nvec.shape)})`;
    }
    case 'multi_binary':
      return `MultiBinary(${Array.isArray(sp.n) ? formatShape(sp.n) : sp.n})`;
    case 'dict':
      return `Dict(${/** @type {unknown[]} */ (sp.spaces).length} keys)`;
    case 'tuple':
      return `Tuple(${/** @type {unknown[]} */ (sp.spaces).length} spaces)`;
    case 'text':
      return `Text(${sp.min_length}..${sp.max_length})`;
    default:
      return `space ${sp.kind}`;
  }
}

/**
 * A schedule in one line, e.g. `linear 0.001 → 0 (end_fraction 0.1)`.
 * @param {ScheduleValue} sc
 * @returns {string}
 */
export function scheduleLabel(sc) {
  /** @param {number|undefined} v */
  const f = (v) => formatNumber(/** @type {number} */ (v));
  if (sc.kind === 'constant') return `constant ${f(sc.value)}`;
  if (sc.kind === 'linear') return `linear ${f(sc.start)} → ${f(sc.end)} (end_fraction ${f(sc.end_fraction)})`;
  return `piecewise, ${/** @type {unknown[]} */ (sc.points).length} points, ${sc.interpolation}`;
}

/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
function isPlainObject(v) {
  return v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * Whether a value is shown inline (a scalar of the value model), not as a tree.
 * @param {unknown} v
 * @returns {boolean}
 */
export function isScalarValue(v) {
  return (
    v === null ||
    ['boolean', 'number', 'string', 'bigint'].includes(typeof v) ||
    v instanceof Scalar ||
    v instanceof ClassRef
  );
}

/**
 * @template T
 * @param {T[]} items
 * @param {(item: T) => import('../dom.js').Child} render
 * @param {number} depth
 * @param {boolean} [open]
 * @returns {HTMLUListElement}
 */
function collection(items, render, depth, open) {
  const shown = items.slice(0, MAX_ITEMS);
  const list = h(
    'ul',
    { class: 'tree' },
    shown.map((it) => h('li', null, render(it))),
  );
  if (items.length > MAX_ITEMS) list.appendChild(h('li', { class: 'muted' }, `… ${items.length - MAX_ITEMS} more`));
  return list;
}

/**
 * @param {string} summary
 * @param {HTMLElement} list
 * @param {number} depth
 * @returns {HTMLDetailsElement}
 */
function container(summary, list, depth) {
  return h('details', { class: 'value-tree', open: depth < 2 }, h('summary', null, summary), list);
}

/**
 * Any decoded value as DOM: scalars inline, lists, tuples, maps and dicts as
 * collapsible trees, arrays, spaces, schedules, classes and opaque values summarised.
 * @param {unknown} v a value as the reader decodes it
 * @param {number} [depth] nesting depth (deeper trees start collapsed)
 * @returns {Node}
 */
export function renderValue(v, depth = 0) {
  if (v === null) return h('span', { class: 'v-null' }, 'null');
  if (typeof v === 'boolean') return h('span', { class: 'v-bool' }, v ? 'true' : 'false');
  if (typeof v === 'number') return h('span', { class: 'v-num' }, formatNumber(v));
  if (typeof v === 'bigint') return h('span', { class: 'v-num', title: 'int (beyond ±(2^53 − 1))' }, v.toString());
  if (typeof v === 'string') return h('span', { class: 'v-str' }, JSON.stringify(v));
  if (v instanceof Uint8Array) {
    const hex = Array.from(v.subarray(0, 24), (b) => b.toString(16).padStart(2, '0')).join(' ');
    return h(
      'span',
      { class: 'v-bytes' },
      h('span', { class: 'type' }, `bytes(${v.length})`),
      ` ${hex}${v.length > 24 ? ' …' : ''}`,
    );
  }
  if (v instanceof NDArray) return renderArray(/** @type {NDArrayValue} */ (v));
  if (v instanceof Scalar) {
    const val = Array.isArray(v.value)
      ? `${formatNumber(v.value[0], 'F32')}, ${formatNumber(v.value[1], 'F32')}j`
      : formatNumber(v.value, v.dtype);
    return h('span', { class: 'v-num' }, val, h('span', { class: 'type' }, ` ${v.dtype}`));
  }
  if (v instanceof Space)
    return h(
      'span',
      { class: 'v-space' },
      spaceLabel(/** @type {SpaceValue} */ (v)),
      h('span', { class: 'muted' }, ' (see Spaces)'),
    );
  if (v instanceof Schedule)
    return h(
      'span',
      { class: 'v-schedule' },
      scheduleLabel(/** @type {ScheduleValue} */ (v)),
      h('span', { class: 'muted' }, ' (see Schedules)'),
    );
  if (v instanceof ClassRef)
    return h('span', { class: 'v-class' }, h('span', { class: 'type' }, 'class '), `${v.module}.${v.qualname}`);
  if (v instanceof Opaque) {
    return h(
      'span',
      { class: 'v-opaque' },
      h('span', { class: 'type' }, `opaque ${v.format}`),
      ` ${formatBytes(v.bytes.length)}`,
      v.type ? ` type ${v.type}` : '',
      v.note ? ` — ${v.note}` : '',
    );
  }
  if (v instanceof Tuple) {
    if (v.length === 0) return h('span', { class: 'v-tuple' }, '()');
    if (v.every(isScalarValue) && v.length <= 8)
      return h(
        'span',
        { class: 'v-tuple' },
        '(',
        v.map((x, i) => [i ? ', ' : '', renderValue(x, depth + 1)]),
        ')',
      );
    return container(
      `tuple (${v.length})`,
      collection(v, (x) => renderValue(x, depth + 1), depth),
      depth,
    );
  }
  if (Array.isArray(v)) {
    if (v.length === 0) return h('span', { class: 'v-list' }, '[]');
    if (v.every(isScalarValue) && v.length <= 8)
      return h(
        'span',
        { class: 'v-list' },
        '[',
        v.map((x, i) => [i ? ', ' : '', renderValue(x, depth + 1)]),
        ']',
      );
    return container(
      `list (${v.length})`,
      collection(v, (x) => renderValue(x, depth + 1), depth),
      depth,
    );
  }
  if (v instanceof Map) {
    if (v.size === 0) return h('span', { class: 'v-map' }, 'dict {}');
    return container(
      `dict (${v.size})`,
      collection(
        [...v],
        ([k, x]) => [h('span', { class: 'key' }, renderValue(k, depth + 1)), ': ', renderValue(x, depth + 1)],
        depth,
      ),
      depth,
    );
  }
  if (isPlainObject(v)) {
    const entries = Object.entries(v);
    if (entries.length === 0) return h('span', { class: 'v-map' }, '{}');
    return container(
      `map (${entries.length})`,
      collection(entries, ([k, x]) => [h('span', { class: 'key' }, k), ': ', renderValue(x, depth + 1)], depth),
      depth,
    );
  }
  return h('span', { class: 'muted' }, String(v));
}
