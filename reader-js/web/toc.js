// The table of contents: a link to each section shown, in the page's order,
// the one being read marked (`aria-current`) as the page scrolls.

import { h, fill } from './dom.js';

/** How far below the viewport's top a section's heading counts as being read, in pixels. */
const READING_LINE = 96;

/**
 * Fills `nav` with links to the visible sections of `main` (each by its `h2`)
 * and keeps the one being read marked while the page scrolls; hidden when
 * there is only one section (an archive that could not be opened).
 * @param {HTMLElement} nav the `<nav>` holding an `<ol>`
 * @param {HTMLElement} main the element whose `section` children are listed
 * @returns {() => void} marks the current section again (after the page changed)
 */
export function tableOfContents(nav, main) {
  const list = nav.querySelector('ol');
  if (list === null) throw new TypeError('the table of contents has no <ol>');
  /** @type {HTMLElement[]} */
  let sections = [];
  const mark = () => {
    let current = sections[0];
    for (const sec of sections) if (sec.getBoundingClientRect().top <= READING_LINE) current = sec;
    // at the bottom of the page the last section is the one being read
    if (window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 2)
      current = sections[sections.length - 1];
    for (const a of list.querySelectorAll('a')) {
      if (a.hash === `#${current?.id}`) a.setAttribute('aria-current', 'true');
      else a.removeAttribute('aria-current');
    }
  };
  const refresh = () => {
    sections = Array.from(main.querySelectorAll(':scope > section')).filter(
      /** @returns {s is HTMLElement} */ (s) => s instanceof HTMLElement && !s.hidden,
    );
    // scrolled to without changing the address (a new history entry would reopen the archive on Back)
    /** @param {HTMLElement} s @returns {(ev: Event) => void} */
    const go = (s) => (ev) => {
      ev.preventDefault();
      s.scrollIntoView({ block: 'start' });
    };
    fill(
      list,
      sections.map((s) =>
        h('li', null, h('a', { href: `#${s.id}`, onclick: go(s) }, s.querySelector('h2')?.textContent ?? s.id)),
      ),
    );
    nav.hidden = sections.length < 2;
    mark();
  };
  let queued = false;
  window.addEventListener(
    'scroll',
    () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        mark();
      });
    },
    { passive: true },
  );
  return refresh;
}
