// The portable policy (extension RLA_policy): a summary, a diagram of its
// network, an observation form generated from its observation space (with
// the Box bounds), action masks when its algorithm acts with them, the
// recurrent state carried from step to step, and the action computed by the
// reader's Policy#predict in the inspector's worker (while it runs:
// "Computing…" and a Cancel button that stops the worker).

import { h, fill, keyValueTable, errorParts } from '../dom.js';
import { formatNumber, formatShape } from '../format.js';
import { buildObservationForm } from '../obsform.js';
import { isCancelled } from '../worker-client.js';
import { spaceLabel } from './value.js';
import { renderDiagram } from './diagram.js';

/** Heads with more action-mask entries than this get no mask checkboxes (every action allowed). */
export const MAX_MASK_BOXES = 1024;

/**
 * The labels of the action-mask entries a policy's head takes, or null when it takes none.
 * @param {{action: {op: string, sizes?: Array<number|bigint>}, actionSpace: import('../../index.js').Space, maskWidth: number|null}} policy
 * @returns {string[]|null}
 */
export function maskLabels(policy) {
  const head = policy.action;
  if (policy.maskWidth === null) return null;
  if (head.op === 'argmax') {
    const n = Number(policy.actionSpace.n),
      start = Number(policy.actionSpace.start ?? 0);
    return Array.from({ length: n }, (_, k) => String(start + k));
  }
  /** @type {string[]} */
  const labels = [];
  /** @type {Array<number|bigint>} */ (head.sizes).map(Number).forEach((size, i) => {
    for (let k = 0; k < size; k++) labels.push(`${i}: ${k}`);
  });
  return labels;
}

/** Actions with more elements than this show their first ones only. */
export const MAX_SHOWN_ACTION = 4096;

/**
 * An action as text parts: dtype, shape and its elements (the first `max`, then `…`).
 * @param {{dtype: string, shape: number[], data: ArrayLike<number|bigint>}} action
 * @param {number} [max]
 * @returns {{dtype: string, shape: string, values: string}}
 */
export function actionText(action, max = MAX_SHOWN_ACTION) {
  const n = action.data.length;
  const shown = Array.prototype.slice.call(action.data, 0, max).map((v) => formatNumber(v, action.dtype));
  return {
    dtype: action.dtype,
    shape: formatShape(action.shape),
    values: shown.join(', ') + (n > max ? `, … (${n} values)` : ''),
  };
}

/** Algorithms that act with action masks (Annex B: sb3-contrib's MaskablePPO): the panel offers masks for these only. */
export const MASKED_ALGORITHMS = Object.freeze(['MaskablePPO']);

/**
 * The rows of the policy's summary: only what this policy uses (image
 * normalisation for an image observation, VecNormalize when it takes it, the
 * recurrent state when it has one).
 * @param {import('../tasks.js').PolicySummary} policy
 * @returns {Array<[string, string]>}
 */
export function summaryRows(policy) {
  const ops = policy.layers;
  /** @type {Array<[string, string]>} */
  const rows = [
    ['observation space', spaceLabel(policy.observationSpace)],
    ['action space', spaceLabel(policy.actionSpace)],
    ['layers', `${ops.length}: ${ops.slice(0, 24).join(' → ')}${ops.length > 24 ? ' → …' : ''}`],
    ['action head', `${policy.action.op}${policy.action.squash ? ` (squash ${policy.action.squash})` : ''}`],
  ];
  if (policy.imageObservation)
    rows.push(['normalize images', policy.normalizeImages ? 'yes: pixels divided by 255' : 'no']);
  if (policy.vecNormalize)
    rows.push(['VecNormalize', "observations normalised with the archive's RLA_vec_normalize statistics"]);
  if (policy.recurrent)
    rows.push(['recurrent', `LSTM, ${policy.recurrent.layers} layer(s) of ${policy.recurrent.hidden_size} units`]);
  return rows;
}

/**
 * The interactive policy panel. Predict reads the form and asks `run.predict`
 * (the worker) for the action; while it computes, the panel shows
 * "Computing…" with a Cancel button that calls `run.cancel`, and its
 * `#action` element has `data-status` computing, then done, error or cancelled.
 * @param {HTMLElement} el
 * @param {import('../tasks.js').PolicySummary} policy what the worker tells of the policy
 * @param {{predict: (args: {observation: unknown, state: object|null, actionMasks: Uint8Array|null}) => Promise<{action: {dtype: string, shape: number[], data: ArrayLike<number|bigint>}, state: object|null}>, cancel: () => void}} run
 * @param {{masks?: boolean}} [options] `masks`: offer action masks (the algorithm acts with them, MASKED_ALGORITHMS); a head that takes none never shows them
 * @returns {{predict: () => Promise<void>}} what the page's buttons call
 */
export function renderPolicy(el, policy, run, { masks: offerMasks = false } = {}) {
  const form = buildObservationForm(policy.observationSpace, 'obs');
  const maskWidth = offerMasks ? policy.maskWidth : null;
  // too many mask entries for checkboxes: none are given, which allows every action
  const labels = maskWidth !== null && maskWidth <= MAX_MASK_BOXES ? maskLabels(policy) : null;
  const maskBoxes = labels
    ? labels.map((l, i) =>
        h('input', {
          type: 'checkbox',
          checked: true,
          dataset: { index: String(i) },
          'aria-label': `allow action ${l}`,
        }),
      )
    : [];
  const masks = labels
    ? h(
        'fieldset',
        { id: 'action-masks' },
        h('legend', null, 'Action masks (checked = allowed)'),
        h(
          'div',
          { class: 'inputs checks' },
          maskBoxes.map((b, i) => h('label', { class: 'element' }, h('span', { class: 'index' }, labels[i]), b)),
        ),
      )
    : maskWidth !== null
      ? h(
          'p',
          { id: 'action-masks-omitted', class: 'muted' },
          `The head takes ${maskWidth} action-mask entries, too many to show: every action is allowed.`,
        )
      : null;
  /** @type {object|null} */
  let state = null;
  let step = 0;
  let count = 0;
  let computing = false;
  const stateInfo = h('span', { id: 'recurrent-state', class: 'muted' });
  const showState = () => {
    stateInfo.textContent = state === null ? 'state: zeros (episode start)' : `state carried from step ${step}`;
  };
  const output = h(
    'div',
    { id: 'action', class: 'action', 'aria-live': 'polite' },
    h('span', { class: 'muted' }, 'Press Predict.'),
  );
  const history = h('ol', { id: 'action-history', class: 'history' });
  const predictButton = h('button', { type: 'button', id: 'predict', class: 'primary' }, 'Predict');
  const resetButton = policy.recurrent
    ? h('button', { type: 'button', id: 'reset-state' }, 'Reset state (new episode)')
    : null;
  /** @param {string} status */
  const finish = (status) => {
    computing = false;
    output.dataset.status = status;
    predictButton.disabled = false;
    if (resetButton) resetButton.disabled = false;
    showState();
  };

  const predict = async () => {
    if (computing) return;
    let observation,
      actionMasks = null;
    try {
      observation = form.read();
      if (labels) actionMasks = Uint8Array.from(maskBoxes, (b) => (b.checked ? 1 : 0));
    } catch (e) {
      output.classList.add('error');
      fill(output, `Cannot act on this observation: ${/** @type {Error} */ (e).message}`);
      finish('error');
      return;
    }
    computing = true;
    predictButton.disabled = true;
    if (resetButton) resetButton.disabled = true; // the state changes only when an action is computed
    output.dataset.status = 'computing';
    output.classList.remove('error');
    fill(
      output,
      h('span', { class: 'computing' }, 'Computing…'),
      ' ',
      h('button', { type: 'button', id: 'cancel-predict', class: 'small', onclick: () => run.cancel() }, 'Cancel'),
    );
    let r;
    try {
      r = await run.predict({ observation, state, actionMasks });
    } catch (e) {
      if (isCancelled(e)) {
        fill(output, h('span', { class: 'muted' }, 'Cancelled: the prediction was stopped; the state is as before.'));
        finish('cancelled');
      } else {
        output.classList.add('error');
        fill(output, 'Cannot act on this observation: ', errorParts(e));
        finish('error');
      }
      return;
    }
    if (policy.recurrent) state = r.state;
    step++;
    count++;
    const t = actionText(r.action);
    output.dataset.count = String(count);
    fill(
      output,
      h('span', { class: 'label' }, `Action (step ${step}): `),
      h('code', { class: 'action-values' }, t.values === '' ? '(empty)' : t.values),
      ' ',
      h(
        'span',
        { class: 'muted' },
        h('span', { class: 'action-dtype' }, t.dtype),
        ' ',
        h('span', { class: 'action-shape' }, t.shape),
      ),
    );
    history.prepend(h('li', null, `step ${step}: ${t.values}`));
    while (history.children.length > 10) /** @type {ChildNode} */ (history.lastChild).remove();
    finish('done');
  };
  const resetState = () => {
    state = null;
    step = 0;
    history.replaceChildren();
    showState();
  };
  predictButton.addEventListener('click', predict);
  resetButton?.addEventListener('click', resetState);
  showState();
  fill(
    el,
    h(
      'div',
      { class: 'policy-top' },
      h(
        'div',
        { class: 'policy-main' },
        keyValueTable(summaryRows(policy), 'kv policy-summary'),
        h('h3', null, 'Observation'),
        h('div', { id: 'observation-form' }, form.el),
        h(
          'div',
          { class: 'buttons' },
          h('button', { type: 'button', id: 'random-sample', onclick: () => form.randomize() }, 'Random sample'),
          h('button', { type: 'button', id: 'reset-observation', onclick: () => form.reset() }, 'Reset'),
        ),
        masks,
        resetButton ? h('p', { class: 'buttons' }, stateInfo, ' ', resetButton) : null,
        h('div', { class: 'buttons' }, predictButton),
        output,
        history,
      ),
      h(
        'details',
        { class: 'policy-network', open: true },
        h('summary', null, 'Network'),
        renderDiagram(policy.graph, spaceLabel(policy.actionSpace)),
      ),
    ),
  );
  return { predict };
}

/**
 * The panel before the policy is loaded: what loading reads, and a button.
 * @param {HTMLElement} el
 * @param {() => void} load
 * @param {string} [note] shown first (why the policy is not loaded)
 */
export function renderPolicyPending(el, load, note = '') {
  fill(
    el,
    h(
      'p',
      null,
      note ? h('span', { class: 'muted' }, `${note} `) : null,
      'This archive carries a portable policy (RLA_policy). Loading it checks its description and reads its weights. ',
      h('button', { type: 'button', id: 'load-policy', onclick: load }, 'Load policy'),
    ),
  );
}

/**
 * The panel while the worker loads the policy, with a Cancel button.
 * @param {HTMLElement} el
 * @param {() => void} cancel
 */
export function renderPolicyLoading(el, cancel) {
  fill(
    el,
    h(
      'p',
      { class: 'muted' },
      'Loading the policy… ',
      h('button', { type: 'button', id: 'cancel-policy', class: 'small', onclick: cancel }, 'Cancel'),
    ),
  );
}
