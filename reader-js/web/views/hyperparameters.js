// The data's top-level values as a table.

import { h, fill } from '../dom.js';
import { renderValue, isScalarValue } from './value.js';

/**
 * A table of the data's top-level entries: scalars first-class, nested values as trees.
 * @param {HTMLElement} el
 * @param {{[key: string]: unknown}} data the archive's decoded data
 * @param {{[name: string]: unknown}} optimizers the archive's decoded optimizer states
 */
export function renderHyperparameters(el, data, optimizers) {
  const entries = Object.entries(data);
  const scalars = entries.filter(([, v]) => isScalarValue(v));
  const nested = entries.filter(([, v]) => !isScalarValue(v));
  /**
   * @param {Array<[string, unknown]>} rows
   * @param {string} id
   */
  const table = (rows, id) =>
    h(
      'table',
      { class: 'params', id },
      h('thead', null, h('tr', null, h('th', null, 'name'), h('th', null, 'value'))),
      h(
        'tbody',
        null,
        rows.map(([k, v]) => h('tr', null, h('th', { scope: 'row' }, k), h('td', null, renderValue(v, 1)))),
      ),
    );
  const opt = Object.entries(optimizers);
  fill(
    el,
    scalars.length
      ? table(scalars, 'hyperparameters-table')
      : h('p', { class: 'muted' }, entries.length ? 'No scalar values at the top level.' : 'The data map is empty.'),
    nested.length ? [h('h3', null, 'Structured values'), table(nested, 'structured-table')] : null,
    opt.length ? [h('h3', null, 'Optimizers'), table(opt, 'optimizers-table')] : null,
  );
}
