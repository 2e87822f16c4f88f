// Spaces (spec §8): Box with dtype, shape and bounds, the discrete kinds,
// Text, and Dict and Tuple as trees.

import { Space } from '../../src/index.js';
import { h, fill } from '../dom.js';
import { formatShape } from '../format.js';
import { findAll } from '../walk.js';
import { renderArray, spaceLabel } from './value.js';

/**
 * @typedef {import('./value.js').SpaceValue} SpaceValue
 * @typedef {import('./value.js').NDArrayValue} NDArrayValue
 */

/**
 * The members of a space, by its kind (each kind has its members: spec §8).
 * @param {SpaceValue} sp
 * @returns {HTMLUListElement|null}
 */
function details(sp) {
  switch (sp.kind) {
    case 'box':
      return h(
        'ul',
        { class: 'props' },
        h('li', null, h('span', { class: 'prop' }, 'dtype '), sp.dtype),
        h('li', null, h('span', { class: 'prop' }, 'shape '), formatShape(/** @type {number[]} */ (sp.shape))),
        h(
          'li',
          { class: 'bound' },
          h('span', { class: 'prop' }, 'low '),
          renderArray(/** @type {NDArrayValue} */ (sp.low)),
        ),
        h(
          'li',
          { class: 'bound' },
          h('span', { class: 'prop' }, 'high '),
          renderArray(/** @type {NDArrayValue} */ (sp.high)),
        ),
      );
    case 'discrete':
      return h(
        'ul',
        { class: 'props' },
        h('li', null, `n ${sp.n}, start ${sp.start}, values ${sp.start} … ${Number(sp.start) + Number(sp.n) - 1}`),
        h('li', null, `dtype ${sp.dtype}`),
      );
    case 'multi_discrete':
      return h(
        'ul',
        { class: 'props' },
        h('li', null, h('span', { class: 'prop' }, 'nvec '), renderArray(/** @type {NDArrayValue} */ (sp.nvec))),
        h('li', null, h('span', { class: 'prop' }, 'start '), renderArray(/** @type {NDArrayValue} */ (sp.start))),
        h('li', null, `dtype ${sp.dtype}`),
      );
    case 'multi_binary':
      return h(
        'ul',
        { class: 'props' },
        h('li', null, `shape ${Array.isArray(sp.n) ? formatShape(sp.n) : `[${sp.n}]`}`),
      );
    case 'text': {
      const chars = Array.from(/** @type {string} */ (sp.charset));
      return h(
        'ul',
        { class: 'props' },
        h('li', null, `length ${sp.min_length} … ${sp.max_length}`),
        h(
          'li',
          null,
          `charset (${chars.length}) `,
          h('code', null, chars.slice(0, 80).join('') + (chars.length > 80 ? '…' : '')),
        ),
      );
    }
    case 'dict':
      return h(
        'ul',
        { class: 'tree' },
        /** @type {Array<[string, SpaceValue]>} */ (sp.spaces).map(([key, sub]) =>
          h('li', null, h('span', { class: 'key' }, key), ': ', renderSpace(sub)),
        ),
      );
    case 'tuple':
      return h(
        'ul',
        { class: 'tree' },
        /** @type {SpaceValue[]} */ (sp.spaces).map((sub, i) =>
          h('li', null, h('span', { class: 'key' }, String(i)), ': ', renderSpace(sub)),
        ),
      );
    default:
      return null;
  }
}

/**
 * One space as a tree: its label, then its members (sub-spaces nested).
 * @param {SpaceValue} sp
 * @returns {HTMLElement}
 */
export function renderSpace(sp) {
  return h(
    'div',
    { class: `space space-${sp.kind}`, dataset: { kind: sp.kind } },
    h('span', { class: 'space-label' }, spaceLabel(sp)),
    details(sp),
  );
}

/**
 * Every space found in the data (observation_space, action_space, and any nested one).
 * @param {HTMLElement} el
 * @param {{[key: string]: unknown}} data
 * @returns {number} how many spaces were shown
 */
export function renderSpaces(el, data) {
  const found = findAll(data, Space);
  fill(
    el,
    found.length
      ? found.map(([path, sp]) => h('div', { class: 'card', dataset: { path } }, h('h3', null, path), renderSpace(sp)))
      : h('p', { class: 'muted' }, 'No spaces in the data.'),
  );
  return found.length;
}
