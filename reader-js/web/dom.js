// DOM helpers: every string goes into the page as a text node or an
// attribute value, never as markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(parent, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else if (c instanceof Node) parent.appendChild(c);
    else parent.appendChild(document.createTextNode(String(c)));
  }
}

function setProps(el, props) {
  if (!props) return;
  for (const [k, v] of Object.entries(props)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

/**
 * Creates an HTML element.
 * @param {string} tag element name
 * @param {object|null} [props] attributes (`class`, `title`, ...), `dataset`, `value`/`checked`/`disabled`, and `onclick`-style listeners
 * @param {...(Node|string|number|null|Array)} children appended in order; strings become text nodes
 * @returns {HTMLElement}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

/**
 * Creates an SVG element (same conventions as `h`).
 * @param {string} tag SVG element name
 * @param {object|null} [props] attributes
 * @param {...(Node|string|number|null|Array)} children
 * @returns {SVGElement}
 */
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, props);
  append(el, children);
  return el;
}

/**
 * Replaces the children of `el` with `children`.
 * @param {Element} el
 * @param {...(Node|string|null|Array)} children
 * @returns {Element} el
 */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * A two-column table of label/value rows (values may be nodes).
 * @param {Array<[string, Node|string|number]>} rows
 * @param {string} [cls] class of the table
 * @returns {HTMLTableElement}
 */
export function keyValueTable(rows, cls = 'kv') {
  return h(
    'table',
    { class: cls },
    h(
      'tbody',
      null,
      rows.map(([k, v]) => h('tr', null, h('th', { scope: 'row' }, k), h('td', null, v))),
    ),
  );
}

/**
 * An error as page content: its stable code (`ERROR` when it has none), then its detail or message.
 * @param {{code?: string, detail?: string, message?: string}|unknown} e
 * @returns {Array<Node|string>}
 */
export function errorParts(e) {
  return [h('code', { class: 'code' }, e?.code ?? 'ERROR'), ' ', e?.detail ?? e?.message ?? String(e)];
}
