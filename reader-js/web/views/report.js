// The verdict the page leads with, the validation report (spec §14) and the
// error of an archive that fails to open.

import { h, fill } from '../dom.js';
import { formatBytes } from '../format.js';

/**
 * @typedef {import('../../index.js').Report} Report
 * @typedef {import('../../index.js').Issue} Issue
 */

/** @type {Array<'member'|'pointer'|'offset'>} */
const LOCATION = ['member', 'pointer', 'offset'];

/**
 * Shows a report: a banner (valid, or invalid with its error codes) and every
 * issue with its code, severity, message and location fields.
 * @param {HTMLElement} el the section's body
 * @param {Pick<Report, 'valid'|'summary'|'issues'|'validator'>} report
 * @param {{shown?: {code?: string, member?: string, pointer?: string, offset?: number}|null}} [options] `shown`: the error of opening, shown
 *   above already: when the report has no other issue, only a line saying so; else the others
 */
export function renderReport(el, report, { shown = null } = {}) {
  if (shown) {
    /** @param {Issue} i */
    const same = (i) => i.code === shown.code && LOCATION.every((f) => (i[f] ?? null) === (shown[f] ?? null));
    const others = report.issues.filter((i) => !same(i));
    if (others.length === report.issues.length - 1) {
      if (others.length === 0) {
        fill(
          el,
          h(
            'p',
            { class: 'muted small', id: 'report-same' },
            `The full validation (${report.validator.name} ${report.validator.version}) found this error only.`,
          ),
        );
        return;
      }
      report = { ...report, issues: others, summary: { ...report.summary, errors: report.summary.errors - 1 } };
    }
  }
  const errors = report.issues.filter((i) => i.severity === 'error');
  const codes = [...new Set(errors.map((i) => i.code))];
  const { summary } = report;
  const counts = `${summary.errors} error${summary.errors === 1 ? '' : 's'}, ${summary.warnings} warning${summary.warnings === 1 ? '' : 's'}, ${summary.infos} info${summary.infos === 1 ? '' : 's'}`;
  const banner = report.valid
    ? h('div', { class: 'banner ok', role: 'status' }, h('strong', null, 'Valid'), ` — ${counts}`)
    : h(
        'div',
        { class: 'banner bad', role: 'alert' },
        h('strong', null, 'Invalid'),
        ': ',
        codes.map((c, i) => [i ? ', ' : '', h('code', { class: 'code' }, c)]),
        ` — ${counts}`,
      );
  const fields = LOCATION.filter((f) => report.issues.some((i) => i[f] !== undefined));
  const table =
    report.issues.length === 0
      ? h('p', { class: 'muted' }, 'No issues.')
      : h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            { class: 'issues' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', null, 'severity'),
                h('th', null, 'code'),
                fields.map((f) => h('th', null, f)),
                h('th', null, 'message'),
              ),
            ),
            h(
              'tbody',
              null,
              report.issues.map((i) =>
                h(
                  'tr',
                  { class: `sev-${i.severity}`, dataset: { code: i.code } },
                  h('td', null, h('span', { class: `badge ${i.severity}` }, i.severity)),
                  h('td', null, h('code', { class: 'code' }, i.code)),
                  fields.map((f) => h('td', { class: 'loc' }, i[f] === undefined ? '' : String(i[f]))),
                  h(
                    'td',
                    { class: 'message' },
                    i.message.startsWith(`${i.code}: `) ? i.message.slice(i.code.length + 2) : i.message,
                  ),
                ),
              ),
            ),
          ),
        );
  fill(
    el,
    banner,
    table,
    h(
      'p',
      { class: 'muted small' },
      `Checked by ${report.validator.name} ${report.validator.version}: every rule of §11.1, including the CRC-32 and SHA-256 of every member.`,
    ),
  );
}

/**
 * @param {number} n
 * @param {string} word
 */
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The location of an issue or error as `member#pointer @offset` (what is known of it).
 * @param {{member?: string|null, pointer?: string|null, offset?: number|null}} i
 * @returns {string}
 */
function where(i) {
  const at = `${i.member ?? ''}${i.pointer !== undefined && i.pointer !== null ? `#${i.pointer}` : ''}`;
  const offset = i.offset !== undefined && i.offset !== null ? `@${i.offset}` : '';
  return [at, offset].filter(Boolean).join(' ');
}

/**
 * The verdict the page leads with, above everything the file holds: valid, INVALID (with its first error), not
 * opened, or not (yet) validated in full. `el.dataset.verdict` is `valid`, `invalid`, `unopened`, `running` or
 * `pending`.
 * @param {HTMLElement} el
 * @param {{report?: Pick<Report, 'valid'|'summary'|'issues'>|null, openError?: {code?: string}|null, running?: boolean}} state `report`: the validation's;
 *   `openError`: why opening failed; `running`: the validation runs now; none of them: not validated yet
 */
export function renderVerdict(el, { report = null, openError = null, running = false } = {}) {
  // scrolled to without a new history entry (going Back to one would reopen the archive)
  /** @param {Event} ev */
  const go = (ev) => {
    ev.preventDefault();
    document.getElementById('validation')?.scrollIntoView({ block: 'start' });
  };
  const see = h('a', { href: '#validation', onclick: go }, 'the validation report');
  let verdict, banner;
  if (report?.valid) {
    verdict = 'valid';
    banner = h(
      'div',
      { class: 'banner ok', role: 'status' },
      h('strong', null, 'Valid'),
      ` — every rule of the spec checked, every member's CRC-32 and SHA-256 included: no error, ${plural(report.summary.warnings, 'warning')}.`,
    );
  } else if (report) {
    verdict = 'invalid';
    const first = /** @type {Issue} */ (report.issues.find((i) => i.severity === 'error')); // an invalid report has an error
    const text = first.message.startsWith(`${first.code}: `)
      ? first.message.slice(first.code.length + 2)
      : first.message;
    const message = text.replace(/ \[[^\]]*\]$/, ''); // its location is given above
    banner = h(
      'div',
      { class: 'banner bad', role: 'alert' },
      h('strong', null, 'INVALID'),
      ` — ${plural(report.summary.errors, 'error')}; the first: `,
      h('code', { class: 'code' }, first.code),
      where(first) ? [' at ', h('code', { class: 'loc' }, where(first))] : null,
      h('div', { class: 'message' }, message),
      h(
        'div',
        { class: 'small' },
        'This file breaks the spec: what the page shows below is what it holds, not a valid agent. See ',
        see,
        '.',
      ),
    );
  } else if (openError) {
    verdict = 'unopened';
    banner = h(
      'div',
      { class: 'banner bad', role: 'alert' },
      h('strong', null, 'Not opened'),
      ' — ',
      h('code', { class: 'code' }, openError.code ?? 'ERROR'),
      ': see ',
      see,
      '.',
    );
  } else {
    verdict = running ? 'running' : 'pending';
    banner = h(
      'div',
      { class: 'banner warn', role: 'status' },
      h('strong', null, running ? 'Validating…' : 'Not validated yet'),
      ' — the archive opened (its layout, manifest, data and tensor headers are sound); its members’ CRC-32 and SHA-256 ',
      running ? 'are being checked.' : ['are not checked until you validate it in full: see ', see, '.'],
    );
  }
  el.dataset.verdict = verdict;
  fill(el, banner);
  el.hidden = false;
}

/**
 * Shows why an archive could not be opened: the error code, its message and
 * location, and the advice to convert it when it is a Stable-Baselines model.
 * @param {HTMLElement} el
 * @param {OpenError} error
 * @param {string} [hint] the command line's advice (conversion.js), or ''
 *
 * @typedef {Error & {code?: string, detail?: string, member?: string, pointer?: string, offset?: number}} OpenError
 *   why an archive could not be opened: the reader's RlarchiveError, or another error of its source
 */
export function renderOpenError(el, error, hint = '') {
  const code = error?.code ?? 'ERROR';
  const loc = LOCATION.filter((f) => error?.[f] !== undefined && error?.[f] !== null)
    .map((f) => `${f} ${error[f]}`)
    .join(', ');
  fill(
    el,
    h(
      'div',
      { class: 'banner bad', role: 'alert', dataset: { code } },
      h('strong', null, 'Cannot open this archive: '),
      h('code', { class: 'code' }, code),
      h('div', { class: 'message' }, error?.detail ?? error?.message ?? String(error)),
      loc ? h('div', { class: 'loc' }, loc) : null,
      hint
        ? h(
            'div',
            { class: 'hint-convert', id: 'convert-hint' },
            hint.split(/(rlarchive import-sb[23] .*$)/).map((part, i) => (i % 2 ? h('code', null, part) : part)),
          )
        : null,
    ),
  );
}

/**
 * Shows that the full validation has not run yet, with a button that runs it.
 * @param {HTMLElement} el
 * @param {number} size the file's size (validation reads all of it)
 * @param {() => void} run
 */
export function renderReportPending(el, size, run) {
  fill(
    el,
    h(
      'p',
      null,
      `Opening checked the layout, manifest, data and tensor headers. The full validation checks every member's CRC-32 and SHA-256 and reads the whole file (${formatBytes(size)}). `,
      h('button', { type: 'button', id: 'run-validation', onclick: run }, 'Validate fully'),
    ),
  );
}

/**
 * Shows that validation is running.
 * @param {HTMLElement} el
 */
export function renderReportRunning(el) {
  fill(el, h('p', { class: 'muted' }, 'Validating…'));
}
