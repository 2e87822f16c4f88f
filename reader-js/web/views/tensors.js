// Tensor groups: each tensor's dtype, shape and size from the safetensors
// headers, the policy first and optimizer state by parameter; choosing one
// has the inspector's worker read its bytes (only then) and compute its
// statistics, which are shown with a histogram under the chosen row.

import { h, fill, keyValueTable, errorParts } from '../dom.js';
import { formatBytes, formatShape, formatNumber, formatShort } from '../format.js';
import { histogramChart } from '../charts.js';
import { isCancelled } from '../worker-client.js';
import { arrayValues } from './value.js';
import { optimizerLayout, orderGroups } from '../optimizers.js';
import { showReplayBuffer } from './agent.js';

/** The group of the replay buffer's arrays (extension RLA_replay_buffer). */
const REPLAY_BUFFER_GROUP = 'RLA_replay_buffer';

/**
 * Statistics and histogram of one tensor, as the worker computed them.
 * @param {import('../stats.js').TensorStatistics} t
 * @param {string} group
 * @param {number} nbytes
 * @returns {HTMLElement}
 */
export function renderTensorDetail(t, group, nbytes) {
  const st = t.stats;
  /** @param {number} x */
  const f = (x) =>
    Number.isFinite(x)
      ? formatNumber(x, t.dtype === 'F64' || t.dtype.endsWith('64') ? undefined : t.dtype)
      : formatNumber(x);
  /** @type {Array<[string, import('../dom.js').Child]>} */
  const rows = [
    ['elements', String(st.count)],
    ['min', h('span', { class: 'stat-min' }, st.finite ? f(st.min) : '—')],
    ['max', h('span', { class: 'stat-max' }, st.finite ? f(st.max) : '—')],
    ['mean', h('span', { class: 'stat-mean' }, st.finite ? formatShort(st.mean) : '—')],
    ['std', st.finite ? formatShort(st.std) : '—'],
  ];
  if (st.nan) rows.push(['NaN', String(st.nan)]);
  if (st.posInf || st.negInf) rows.push(['±inf', `${st.posInf} / ${st.negInf}`]);
  const first = arrayValues({ dtype: t.dtype, data: t.first }).map((v) =>
    typeof v === 'string' ? v : formatNumber(v, t.dtype),
  );
  rows.push(['first values', `${first.join(', ')}${st.count > 8 ? ', …' : ''}`]);
  return h(
    'div',
    { class: 'tensor-detail', dataset: { tensor: `${group}/${t.name}` } },
    h('h3', null, `${group} / ${t.name}`),
    h(
      'p',
      { class: 'muted' },
      `${t.dtype} ${formatShape(t.shape)}, ${formatBytes(nbytes)}${t.dtype === 'C64' ? ' — statistics of |z|' : ''}`,
    ),
    h(
      'div',
      { class: 'tensor-body' },
      histogramChart(st.histogram, { xLabel: t.dtype === 'C64' ? '|value|' : 'value', title: `${group}/${t.name}` }),
      keyValueTable(rows, 'kv stats'),
    ),
  );
}

/**
 * @typedef {import('../../index.js').TensorInfo} TensorInfo
 * @typedef {(group: string, info: TensorInfo, button: HTMLButtonElement, row: HTMLTableRowElement) => void} Choose
 */

/**
 * A row of one tensor: its button (choosing it reads it), dtype, shape and size.
 * @param {string} group
 * @param {TensorInfo} info
 * @param {string|undefined} label
 * @param {Choose} choose
 * @returns {HTMLTableRowElement}
 */
function tensorRow(group, info, label, choose) {
  const button = h(
    'button',
    {
      type: 'button',
      class: 'tensor link',
      dataset: { tensor: `${group}/${info.name}` },
      title: `${group}/${info.name}: read this tensor and show its values`,
    },
    label,
  );
  const row = h(
    'tr',
    { class: 'tensor-row', dataset: { name: info.name.toLowerCase() } },
    h('td', null, button),
    h('td', null, info.dtype),
    h('td', null, formatShape(info.shape)),
    h('td', { class: 'num' }, formatBytes(info.nbytes)),
  );
  button.addEventListener('click', () => choose(group, info, button, row));
  return row;
}

/**
 * The rows of an optimizer's group: each parameter's name, then its state tensors (exp_avg, ...).
 * @param {import('../../index.js').Archive} archive
 * @param {string} group
 * @param {readonly TensorInfo[]} infos the group's tensors
 * @param {Choose} choose
 * @returns {{rows: HTMLTableRowElement[], note: string}}
 */
function optimizerRows(archive, group, infos, choose) {
  const layout = optimizerLayout(archive, group.slice('optimizer.'.length));
  const byName = new Map(infos.map((t) => [t.name, t]));
  /** @param {string} t a tensor of the group */
  const info = (t) => /** @type {TensorInfo} */ (byName.get(t));
  /** @type {HTMLTableRowElement[]} */
  const rows = [];
  for (const p of layout.params) {
    const name = p.parameter ? `${p.parameter.name}${p.recorded ? '' : '?'}` : `parameter ${p.key}`;
    const note =
      p.parameter === null
        ? ' (no parameter of this shape)'
        : p.recorded
          ? ''
          : p.certain
            ? ' (guessed by shape: the only parameter of this shape)'
            : ` (guessed by shape and order; same shape: ${p.alternatives.join(', ')}${
                p.sameShape > p.alternatives.length ? ` and ${p.sameShape - p.alternatives.length} more` : ''
              })`;
    const names = p.tensors.filter((t) => byName.has(t));
    rows.push(
      h(
        'tr',
        {
          class: 'param-row',
          dataset: {
            name: [p.parameter?.name ?? '', ...names].join(' ').toLowerCase(),
            position: String(p.position),
            parameter: p.parameter?.name ?? '',
            recorded: String(p.recorded),
            certain: String(p.certain),
          },
        },
        h(
          'td',
          { colspan: 4 },
          h('span', { class: 'param-name' }, name),
          h(
            'span',
            { class: 'muted small' },
            ` — parameter ${p.position}${p.parameter ? ` ${formatShape(p.parameter.shape)}` : ''}${note}`,
          ),
        ),
      ),
    );
    for (const t of names) rows.push(tensorRow(group, info(t), t.split('/').pop(), choose));
  }
  if (layout.other.length && layout.params.length)
    rows.push(
      h(
        'tr',
        { class: 'param-row', dataset: { name: layout.other.join(' ').toLowerCase() } },
        h('td', { colspan: 4 }, h('span', { class: 'param-name' }, 'other state')),
      ),
    );
  for (const t of layout.other) rows.push(tensorRow(group, info(t), t, choose));
  const guessed = layout.params.some((p) => !p.recorded);
  return {
    rows,
    note: guessed
      ? "The archive does not name these parameters (param_tensors, spec §7.9, written by newer writers): each is matched to a parameter of the same shape in PyTorch's usual order, which need not be the optimizer's, and marked ?."
      : 'Each parameter as the archive names it (param_tensors, spec §7.9).',
  };
}

/**
 * Every tensor group as a table (name, dtype, shape, bytes): `policy` first,
 * the optimizers' states last and each under the parameter it belongs to
 * (optimizers.js). Nothing is read until a tensor is chosen; then
 * `statistics(group, name)` (the worker) reads it and computes its
 * statistics, shown right under the chosen row, with "Computing…" and a
 * Cancel button (`cancel`) meanwhile; choosing another tensor first cancels
 * the one under way. `#tensor-detail` has `data-status` computing, then
 * done, error or cancelled.
 * @param {HTMLElement} el
 * @param {import('../../index.js').Archive} archive
 * @param {{statistics: (group: string, name: string) => Promise<import('../stats.js').TensorStatistics>, cancel: () => void, busy?: () => boolean, onRead?: () => void}} compute
 * @returns {number} the number of tensors listed
 */
export function renderTensors(el, archive, { statistics, cancel, busy = () => false, onRead = () => {} }) {
  const detail = h('div', { id: 'tensor-detail', class: 'card' });
  const detailRow = h('tr', { class: 'detail-row' }, h('td', { colspan: 4 }, detail));
  let total = 0;
  let current = 0;
  /** @type {Choose} */
  const choose = async (group, info, button, row) => {
    if (busy()) cancel();
    const ticket = ++current;
    row.after(detailRow);
    detail.dataset.status = 'computing';
    fill(
      detail,
      h(
        'p',
        { class: 'muted' },
        `Reading ${group}/${info.name} (${formatBytes(info.nbytes)}) and computing its statistics… `,
        h('button', { type: 'button', id: 'cancel-tensor', class: 'small', onclick: () => cancel() }, 'Cancel'),
      ),
    );
    el.querySelectorAll('button.tensor.chosen').forEach((b) => b.classList.remove('chosen'));
    button.classList.add('chosen');
    try {
      const t = await statistics(group, info.name);
      if (ticket !== current) return;
      fill(detail, renderTensorDetail(t, group, info.nbytes));
      detail.dataset.status = 'done';
      detailRow.scrollIntoView?.({ block: 'nearest' });
    } catch (e) {
      if (ticket !== current) return;
      detail.dataset.status = isCancelled(e) ? 'cancelled' : 'error';
      fill(
        detail,
        isCancelled(e) ? h('p', { class: 'muted' }, 'Cancelled.') : h('p', { class: 'error' }, errorParts(e)),
      );
    } finally {
      onRead();
    }
  };
  const groups = orderGroups(archive.groups).map((group) => {
    const infos = archive.tensorInfo(group);
    total += infos.length;
    const bytes = infos.reduce((a, t) => a + t.nbytes, 0);
    const optimizer = group.startsWith('optimizer.');
    const byParameter = optimizer ? optimizerRows(archive, group, infos, choose) : null;
    let buffer = null;
    if (group === REPLAY_BUFFER_GROUP && archive.extensionsUsed.includes(REPLAY_BUFFER_GROUP)) {
      buffer = h('span', { id: 'replay-buffer-summary' });
      showReplayBuffer(buffer, archive);
    }
    const rows = byParameter ? byParameter.rows : infos.map((info) => tensorRow(group, info, info.name, choose));
    return h(
      'details',
      { class: 'group', open: !optimizer && infos.length <= 200, dataset: { group } },
      h(
        'summary',
        null,
        h('strong', null, group),
        ` — ${infos.length} tensor${infos.length === 1 ? '' : 's'}, ${formatBytes(bytes)}`,
        optimizer ? h('span', { class: 'muted' }, ', by parameter') : null,
      ),
      buffer ? h('p', { class: 'buffer-summary' }, 'Replay buffer: ', buffer) : null,
      infos.length === 0
        ? h('p', { class: 'muted' }, 'This group holds no tensors.')
        : h(
            'div',
            { class: 'scroll' },
            h(
              'table',
              { class: 'tensors' },
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  h('th', null, 'name'),
                  h('th', null, 'dtype'),
                  h('th', null, 'shape'),
                  h('th', null, 'bytes'),
                ),
              ),
              h('tbody', null, rows),
            ),
          ),
      byParameter ? h('p', { class: 'muted small optimizer-note' }, byParameter.note) : null,
    );
  });
  const filter = h('input', {
    type: 'search',
    placeholder: 'filter tensors by name',
    'aria-label': 'filter tensors by name',
  });
  filter.addEventListener('input', () => {
    const q = filter.value.toLowerCase();
    /** @type {NodeListOf<HTMLTableRowElement>} */ (el.querySelectorAll('table.tensors tbody tr[data-name]')).forEach(
      (tr) => {
        tr.hidden = q !== '' && !(/** @type {string} */ (tr.dataset.name).includes(q));
      },
    );
  });
  fill(
    el,
    total
      ? h(
          'p',
          { class: 'muted' },
          'Choose a tensor to read it and see its histogram, right under it; nothing else is read.',
        )
      : h('p', { class: 'muted' }, 'No tensors.'),
    total > 20 ? filter : null,
    groups,
  );
  return total;
}
