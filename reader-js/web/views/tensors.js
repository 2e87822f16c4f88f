// Tensor groups: each tensor's dtype, shape and size from the safetensors
// headers; choosing one has the inspector's worker read its bytes (only then)
// and compute its statistics, which are shown with a histogram.

import { h, fill, keyValueTable, errorParts } from '../dom.js';
import { formatBytes, formatShape, formatNumber, formatShort } from '../format.js';
import { histogramChart } from '../charts.js';
import { isCancelled } from '../worker-client.js';
import { arrayValues } from './value.js';

/**
 * Statistics and histogram of one tensor, as the worker computed them.
 * @param {ReturnType<import('../stats.js').tensorStatistics>} t
 * @param {string} group
 * @param {number} nbytes
 * @returns {HTMLElement}
 */
export function renderTensorDetail(t, group, nbytes) {
  const st = t.stats;
  const f = (x) => (Number.isFinite(x) ? formatNumber(x, t.dtype === 'F64' || t.dtype.endsWith('64') ? undefined : t.dtype) : formatNumber(x));
  const rows = [
    ['elements', String(st.count)],
    ['min', h('span', { class: 'stat-min' }, st.finite ? f(st.min) : '—')],
    ['max', h('span', { class: 'stat-max' }, st.finite ? f(st.max) : '—')],
    ['mean', h('span', { class: 'stat-mean' }, st.finite ? formatShort(st.mean) : '—')],
    ['std', st.finite ? formatShort(st.std) : '—'],
  ];
  if (st.nan) rows.push(['NaN', String(st.nan)]);
  if (st.posInf || st.negInf) rows.push(['±inf', `${st.posInf} / ${st.negInf}`]);
  const first = arrayValues({ dtype: t.dtype, data: t.first }).map((v) => (typeof v === 'string' ? v : formatNumber(v, t.dtype)));
  rows.push(['first values', `${first.join(', ')}${st.count > 8 ? ', …' : ''}`]);
  return h('div', { class: 'tensor-detail', dataset: { tensor: `${group}/${t.name}` } },
    h('h3', null, `${group} / ${t.name}`),
    h('p', { class: 'muted' }, `${t.dtype} ${formatShape(t.shape)}, ${formatBytes(nbytes)}${t.dtype === 'C64' ? ' — statistics of |z|' : ''}`),
    h('div', { class: 'tensor-body' },
      histogramChart(st.histogram, { xLabel: t.dtype === 'C64' ? '|value|' : 'value', title: `${group}/${t.name}` }),
      keyValueTable(rows, 'kv stats')));
}

/**
 * Every tensor group as a table (name, dtype, shape, bytes). Nothing is read
 * until a tensor is chosen; then `statistics(group, name)` (the worker) reads
 * it and computes its statistics, shown with "Computing…" and a Cancel button
 * (`cancel`) meanwhile; choosing another tensor first cancels the one under way.
 * `#tensor-detail` has `data-status` computing, then done, error or cancelled.
 * @param {HTMLElement} el
 * @param {import('../../index.js').Archive} archive
 * @param {{statistics: (group: string, name: string) => Promise<ReturnType<import('../stats.js').tensorStatistics>>, cancel: () => void, busy?: () => boolean, onRead?: () => void}} compute
 * @returns {number} the number of tensors listed
 */
export function renderTensors(el, archive, { statistics, cancel, busy = () => false, onRead = () => {} }) {
  const detail = h('div', { id: 'tensor-detail', class: 'card', hidden: true });
  let total = 0;
  let current = 0;
  const choose = async (group, info, button) => {
    if (busy()) cancel();
    const ticket = ++current;
    detail.hidden = false;
    detail.dataset.status = 'computing';
    fill(detail, h('p', { class: 'muted' }, `Reading ${group}/${info.name} (${formatBytes(info.nbytes)}) and computing its statistics… `,
      h('button', { type: 'button', id: 'cancel-tensor', class: 'small', onclick: () => cancel() }, 'Cancel')));
    el.querySelectorAll('button.tensor.chosen').forEach((b) => b.classList.remove('chosen'));
    button.classList.add('chosen');
    try {
      const t = await statistics(group, info.name);
      if (ticket !== current) return;
      fill(detail, renderTensorDetail(t, group, info.nbytes));
      detail.dataset.status = 'done';
    } catch (e) {
      if (ticket !== current) return;
      detail.dataset.status = isCancelled(e) ? 'cancelled' : 'error';
      fill(detail, isCancelled(e) ? h('p', { class: 'muted' }, 'Cancelled.') : h('p', { class: 'error' }, errorParts(e)));
    } finally {
      onRead();
    }
  };
  const groups = archive.groups.map((group) => {
    const infos = archive.tensorInfo(group);
    total += infos.length;
    const bytes = infos.reduce((a, t) => a + t.nbytes, 0);
    const rows = infos.map((info) => {
      const button = h('button', { type: 'button', class: 'tensor link', dataset: { tensor: `${group}/${info.name}` }, title: 'read this tensor and show its values' }, info.name);
      button.addEventListener('click', () => choose(group, info, button));
      return h('tr', { dataset: { name: info.name.toLowerCase() } }, h('td', null, button), h('td', null, info.dtype), h('td', null, formatShape(info.shape)), h('td', { class: 'num' }, formatBytes(info.nbytes)));
    });
    return h('details', { class: 'group', open: infos.length <= 200, dataset: { group } },
      h('summary', null, h('strong', null, group), ` — ${infos.length} tensor${infos.length === 1 ? '' : 's'}, ${formatBytes(bytes)}`),
      infos.length === 0 ? h('p', { class: 'muted' }, 'This group holds no tensors.') : h('table', { class: 'tensors' },
        h('thead', null, h('tr', null, h('th', null, 'name'), h('th', null, 'dtype'), h('th', null, 'shape'), h('th', null, 'bytes'))),
        h('tbody', null, rows)));
  });
  const filter = h('input', { type: 'search', placeholder: 'filter tensors by name', 'aria-label': 'filter tensors by name' });
  filter.addEventListener('input', () => {
    const q = filter.value.toLowerCase();
    el.querySelectorAll('table.tensors tbody tr').forEach((tr) => {
      tr.hidden = q !== '' && !tr.dataset.name.includes(q);
    });
  });
  fill(el,
    total ? h('p', { class: 'muted' }, 'Choose a tensor to read it and see its histogram; nothing else is read.') : h('p', { class: 'muted' }, 'No tensors.'),
    total > 20 ? filter : null,
    groups,
    detail);
  return total;
}
