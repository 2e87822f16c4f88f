// A diagram of the portable policy's network in HTML and CSS: the
// observation inputs with their preprocessing, each node with its output
// shape, the action head and the action, top to bottom. A node that does not
// read the one just above names what it reads; an activation of the node
// just above is drawn in that node's box. Each node box has `data-op`,
// `data-out` (its output, or its activation's) and `data-shape`.

import { h } from '../dom.js';
import { formatShape } from '../format.js';

/**
 * @param {string} kind
 * @param {string} title
 * @param {string} detail
 * @param {string|null} shape
 * @param {import('../dom.js').Props} [extra]
 * @returns {HTMLDivElement}
 */
function box(kind, title, detail, shape, extra = {}) {
  return h(
    'div',
    { class: `net-box net-${kind}`, ...extra },
    h('div', { class: 'net-title' }, title),
    detail ? h('div', { class: 'net-detail' }, detail) : null,
    shape ? h('div', { class: 'net-shape' }, shape) : null,
  );
}

/**
 * The network diagram of a policy.
 * @param {import('../graph.js').PolicyGraph} graph what the worker computed
 * @param {string} actionLabel the action space in one line, e.g. `Discrete(2)`
 * @returns {HTMLElement} `#policy-diagram`: an ordered list of steps, each `li.net-step` with `data-step` (input, node, head, action)
 */
export function renderDiagram(graph, actionLabel) {
  /**
   * @param {string} kind
   * @param {...import('../dom.js').Child} boxes
   */
  const step = (kind, ...boxes) => h('li', { class: 'net-step', dataset: { step: kind } }, boxes);
  let previous = graph.inputs.length === 1 ? graph.inputs[0].name : null;
  const nodes = [];
  for (const n of graph.nodes) {
    const follows = n.in.length === 1 && n.in[0] === previous;
    previous = n.out;
    const shape = n.shape ? formatShape(n.shape) : '';
    const last = nodes[nodes.length - 1];
    // an activation of the node just above is drawn in that node's box (linear 4 → 8, then tanh)
    if (n.op === 'activation' && follows && last && !last.box.dataset.activation) {
      const detail = last.box.querySelector('.net-detail');
      if (detail) detail.append(`, then ${n.detail}`);
      else
        last.box.insertBefore(
          h('div', { class: 'net-detail' }, `then ${n.detail}`),
          last.box.querySelector('.net-shape'),
        );
      last.box.dataset.activation = n.detail;
      last.box.dataset.out = n.out;
      /** @type {Element} */ (last.box.querySelector('.net-shape')).textContent = `${n.out} ${shape}`;
      continue;
    }
    const detail = [n.detail, follows ? '' : `from ${n.in.join(', ')}`].filter(Boolean).join(' — ');
    const b = box('node', n.op, detail, `${n.out} ${shape}`, { dataset: { op: n.op, out: n.out, shape } });
    nodes.push({ box: b, li: step('node', b) });
  }
  const head = graph.head;
  return h(
    'ol',
    { id: 'policy-diagram', class: 'net', 'aria-label': 'the policy network, from the observation to the action' },
    step(
      'input',
      graph.inputs.map((i) =>
        box('input', i.name, `${i.space}: ${i.preprocessing}`, formatShape(i.shape), {
          dataset: { input: i.name, shape: formatShape(i.shape) },
        }),
      ),
    ),
    nodes.map((n) => n.li),
    step(
      'head',
      box(
        'head',
        `head: ${head.op}`,
        [head.detail, head.in !== previous ? `from ${head.in}` : ''].filter(Boolean).join(' — '),
        null,
        { dataset: { op: head.op } },
      ),
    ),
    step('action', box('action', 'action', actionLabel, null)),
  );
}
