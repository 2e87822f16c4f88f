// The portable policy (extension RLA_policy): a summary, an observation form
// generated from its observation space, action masks when its head takes
// them, the recurrent state carried from step to step, and the action
// computed by the reader's Policy#predict.

import { h, fill, keyValueTable } from '../dom.js';
import { formatNumber, formatShape } from '../format.js';
import { buildObservationForm } from '../obsform.js';
import { spaceLabel } from './value.js';

/**
 * The labels of the action-mask entries a policy's head takes, or null when it takes none.
 * @param {{action: {op: string, sizes?: Array<number|bigint>}, actionSpace: object, maskWidth: number|null}} policy
 * @returns {string[]|null}
 */
export function maskLabels(policy) {
  const head = policy.action;
  if (policy.maskWidth === null) return null;
  if (head.op === 'argmax') {
    const n = Number(policy.actionSpace.n), start = Number(policy.actionSpace.start ?? 0);
    return Array.from({ length: n }, (_, k) => String(start + k));
  }
  const labels = [];
  head.sizes.map(Number).forEach((size, i) => {
    for (let k = 0; k < size; k++) labels.push(`${i}: ${k}`);
  });
  return labels;
}

/**
 * An action as text parts: dtype, shape and its elements.
 * @param {{dtype: string, shape: number[], data: ArrayLike<number|bigint>}} action
 * @returns {{dtype: string, shape: string, values: string}}
 */
export function actionText(action) {
  return { dtype: action.dtype, shape: formatShape(action.shape), values: Array.from(action.data, (v) => formatNumber(v, action.dtype)).join(', ') };
}

function summary(policy) {
  const d = policy.desc;
  const ops = d.nodes.map((n) => (n.op === 'activation' ? n.fn : n.op));
  const rows = [
    ['observation space', spaceLabel(policy.observationSpace)],
    ['action space', spaceLabel(policy.actionSpace)],
    ['layers', `${ops.length}: ${ops.slice(0, 24).join(' → ')}${ops.length > 24 ? ' → …' : ''}`],
    ['action head', `${policy.action.op}${policy.action.squash ? ` (squash ${policy.action.squash})` : ''}`],
    ['normalize images', d.normalize_images ? 'yes' : 'no'],
    ['VecNormalize', d.vec_normalize ? 'observations normalised with the archive\'s RLA_vec_normalize statistics' : 'no'],
  ];
  if (policy.recurrent) rows.push(['recurrent', `LSTM, ${policy.recurrent.layers} layer(s) of ${policy.recurrent.hidden_size} units`]);
  return keyValueTable(rows);
}

/**
 * The interactive policy panel.
 * @param {HTMLElement} el
 * @param {import('../../index.js').Policy} policy
 * @returns {{predict: () => void}} what the page's buttons call
 */
export function renderPolicy(el, policy) {
  const form = buildObservationForm(policy.observationSpace, 'obs');
  const labels = maskLabels(policy);
  const maskBoxes = labels ? labels.map((l, i) => h('input', { type: 'checkbox', checked: true, dataset: { index: String(i) }, 'aria-label': `allow action ${l}` })) : [];
  const masks = labels
    ? h('fieldset', { id: 'action-masks' }, h('legend', null, 'Action masks (checked = allowed)'),
      h('div', { class: 'inputs checks' }, maskBoxes.map((b, i) => h('label', { class: 'element' }, h('span', { class: 'index' }, labels[i]), b))))
    : null;
  let state = null;
  let step = 0;
  let count = 0;
  const stateInfo = h('span', { id: 'recurrent-state', class: 'muted' });
  const showState = () => {
    stateInfo.textContent = state === null ? 'state: zeros (episode start)' : `state carried from step ${step}`;
  };
  const output = h('div', { id: 'action', class: 'action', 'aria-live': 'polite' }, h('span', { class: 'muted' }, 'Press Predict.'));
  const history = h('ol', { id: 'action-history', class: 'history' });

  const predict = () => {
    let observation, actionMasks = null;
    try {
      observation = form.read();
      if (labels) actionMasks = Uint8Array.from(maskBoxes, (b) => (b.checked ? 1 : 0));
      const r = policy.predict(observation, { state, actionMasks });
      if (policy.recurrent) state = r.state;
      step++;
      count++;
      const t = actionText(r.action);
      output.dataset.count = String(count);
      fill(output,
        h('span', { class: 'label' }, `Action (step ${step}): `),
        h('code', { class: 'action-values' }, t.values === '' ? '(empty)' : t.values), ' ',
        h('span', { class: 'muted' }, h('span', { class: 'action-dtype' }, t.dtype), ' ', h('span', { class: 'action-shape' }, t.shape)));
      output.classList.remove('error');
      history.prepend(h('li', null, `step ${step}: ${t.values}`));
      while (history.children.length > 10) history.lastChild.remove();
    } catch (e) {
      output.classList.add('error');
      fill(output, `Cannot act on this observation: ${e.message}`);
    }
    showState();
  };
  const resetState = () => {
    state = null;
    step = 0;
    history.replaceChildren();
    showState();
  };
  showState();
  fill(el,
    summary(policy),
    h('h3', null, 'Observation'),
    h('div', { id: 'observation-form' }, form.el),
    h('div', { class: 'buttons' },
      h('button', { type: 'button', id: 'random-sample', onclick: () => form.randomize() }, 'Random sample'),
      h('button', { type: 'button', id: 'reset-observation', onclick: () => form.reset() }, 'Reset')),
    masks,
    policy.recurrent ? h('p', { class: 'buttons' }, stateInfo, ' ', h('button', { type: 'button', id: 'reset-state', onclick: resetState }, 'Reset state (new episode)')) : null,
    h('div', { class: 'buttons' }, h('button', { type: 'button', id: 'predict', class: 'primary', onclick: predict }, 'Predict')),
    output,
    history);
  return { predict };
}

/**
 * The panel before the policy is loaded: what loading reads, and a button.
 * @param {HTMLElement} el
 * @param {() => void} load
 */
export function renderPolicyPending(el, load) {
  fill(el, h('p', null, 'This archive carries a portable policy (RLA_policy). Loading it checks its description and reads its weights. ',
    h('button', { type: 'button', id: 'load-policy', onclick: load }, 'Load policy')));
}
