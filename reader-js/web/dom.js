// DOM helpers: every string goes into the page as a text node or an
// attribute value, never as markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * What `h`, `s` and `fill` accept as children: nodes, text, numbers, nested lists; null,
 * undefined and false are skipped.
 * @typedef {Node|string|number|bigint|boolean|null|undefined|Child[]} Child
 */

/**
 * Attributes (`class`, `title`, ...), `dataset`, `value`/`checked`/`disabled`/`selected`, and
 * `onclick`-style listeners; null, undefined and false are skipped.
 * @typedef {{[name: string]: unknown}} Props
 */

/**
 * @param {Node} parent
 * @param {Child[]} children
 */
function append(parent, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else if (c instanceof Node) parent.appendChild(c);
    else parent.appendChild(document.createTextNode(String(c)));
  }
}

/**
 * @param {HTMLElement|SVGElement} el
 * @param {Props|null|undefined} props
 */
function setProps(el, props) {
  if (!props) return;
  for (const [k, v] of Object.entries(props)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function')
      el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected')
      /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (el))[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

/**
 * Creates an HTML element.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag element name
 * @param {Props|null} [props] attributes (`class`, `title`, ...), `dataset`, `value`/`checked`/`disabled`, and `onclick`-style listeners
 * @param {...Child} children appended in order; strings become text nodes
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

/**
 * Creates an SVG element (same conventions as `h`).
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag SVG element name
 * @param {Props|null} [props] attributes
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, props);
  append(el, children);
  return el;
}

/**
 * Replaces the children of `el` with `children`.
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 * @returns {E} el
 */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * The page's element with id `id`, checked to be a `type` (HTMLElement, HTMLInputElement, ...); a TypeError
 * when the page has none (its markup has every one asked for).
 * @template {HTMLElement} E
 * @param {string} id
 * @param {{new (): E, prototype: E}} type
 * @returns {E}
 */
export function byId(id, type) {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new TypeError(`the page has no ${type.name} #${id}`);
  return el;
}

/**
 * A two-column table of label/value rows (values may be nodes).
 * @param {Array<[string, Child]>} rows
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
 * @param {unknown} e an error, or anything thrown
 * @returns {Array<Node|string>}
 */
export function errorParts(e) {
  const err = /** @type {{code?: string, detail?: string, message?: string}|null|undefined} */ (e);
  return [h('code', { class: 'code' }, err?.code ?? 'ERROR'), ' ', err?.detail ?? err?.message ?? String(e)];
}
