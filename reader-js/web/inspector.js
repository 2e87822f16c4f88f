// The inspector page: opens an archive from a dropped or picked file or from
// `?url=` (Range requests), then shows an overview (algorithm, environment,
// mean reward, spaces, validation, the policy's layers), the interactive
// policy with a diagram of its network, the validation report, provenance and
// evaluations, manifest, data, spaces, schedules and tensors, with a table of
// contents that follows the scroll, reading tensor bytes only when asked. A
// Stable-Baselines model dropped instead gets the command line's advice to
// convert it.
//
// The policy (loading it and Policy#predict) and tensor statistics run in
// workers (worker.js), one for each, which read the archive through the
// page's source; the page stays responsive and can cancel them.
//
// `?autoread=BYTES` (default 16 MiB): archives up to this size are validated
// in full and their policy loaded right away; larger ones wait for a click.
// `window.rlarchiveInspector` exposes the page's state for scripts and tests.

import { open, validate, VERSION } from '../src/index.js';
import { h, fill, errorParts, byId } from './dom.js';
import { formatBytes } from './format.js';
import { openShared, resolveUrl } from './source.js';
import { WorkerClient, isCancelled } from './worker-client.js';
import {
  renderReport,
  renderOpenError,
  renderReportPending,
  renderReportRunning,
  renderVerdict,
} from './views/report.js';
import { renderAgent, renderCard, algorithmOf } from './views/agent.js';
import { renderOverview } from './views/overview.js';
import { renderHyperparameters } from './views/hyperparameters.js';
import { renderSpaces } from './views/spaces.js';
import { renderSchedules } from './views/schedules.js';
import { renderTensors } from './views/tensors.js';
import { setArraySummarizer } from './views/value.js';
import { renderPolicy, renderPolicyPending, renderPolicyLoading, MASKED_ALGORITHMS } from './views/policy.js';
import { zipMemberNames, conversionHint } from './conversion.js';
import { tableOfContents } from './toc.js';

const DEFAULT_AUTOREAD = 16 * 1024 * 1024;
const SECTIONS = [
  'agent',
  'policy',
  'validation',
  'card',
  'overview',
  'hyperparameters',
  'spaces',
  'schedules',
  'tensors',
];

/**
 * @typedef {import('../index.js').Archive} Archive
 * @typedef {import('../index.js').Report} Report
 * @typedef {import('./views/report.js').OpenError} OpenError
 * @typedef {import('./source.js').SharedSource} SharedSource
 * @typedef {{policy: WorkerClient, tensors: WorkerClient}} Workers
 */

/**
 * The page's element with this id (index.html has each one asked for here).
 * @param {string} id
 */
const $ = (id) => byId(id, HTMLElement);
/**
 * The body of the section with this id.
 * @param {string} id
 */
const body = (id) => /** @type {HTMLElement} */ ($(id).querySelector('.body')); // each section has one

const params = new URLSearchParams(location.search);
const autoread =
  params.has('autoread') && Number.isFinite(Number(params.get('autoread')))
    ? Number(params.get('autoread'))
    : DEFAULT_AUTOREAD;

/**
 * What is shown now; `workers` compute for it (`policy` and `tensors`: WorkerClient).
 * @type {{generation: number, label: string|null, source: SharedSource|null, archive: Archive|null,
 *   openError: OpenError|null, report: Report|null, policy: import('./tasks.js').PolicySummary|null,
 *   workers: Workers|null, ready: Promise<void>}}
 */
const current = {
  generation: 0,
  label: null,
  source: null,
  archive: null,
  openError: null,
  report: null,
  policy: null,
  workers: null,
  ready: Promise.resolve(),
};

const refreshToc = tableOfContents($('toc'), /** @type {HTMLElement} */ (document.querySelector('main')));

/**
 * @param {string} id
 * @param {boolean} [visible]
 */
function show(id, visible = true) {
  $(id).hidden = !visible;
  refreshToc();
}

/** @param {string} state */
function setState(state) {
  document.body.dataset.state = state;
}

function refreshStatus() {
  const src = current.source;
  if (!src) return;
  fill(
    $('status'),
    h('strong', null, current.label),
    ` — ${formatBytes(src.size)}; read so far: ${formatBytes(src.transferred)} of it`,
  );
  $('status').dataset.read = String(src.transferred);
}

/**
 * The verdict the page leads with (views/report.js renderVerdict); an invalid or unopened file's validation
 * section comes first too, before what the file holds.
 * @param {NonNullable<Parameters<typeof renderVerdict>[1]>} state
 */
function verdict(state) {
  renderVerdict($('verdict'), state);
  const first = Boolean(state.openError) || state.report?.valid === false;
  if (first) $('agent').before($('validation'));
  else $('policy').after($('validation'));
  refreshToc();
}

/** @param {number} gen */
async function runValidation(gen) {
  const el = $('report');
  $('validation').dataset.status = 'running';
  renderReportRunning(el);
  verdict({ running: true, openError: current.openError });
  let report;
  try {
    report = await validate(/** @type {SharedSource} */ (current.source));
  } catch (e) {
    if (gen !== current.generation) return;
    $('validation').dataset.status = 'failed';
    fill(el, h('p', { class: 'error' }, 'The validator failed: ', errorParts(e)));
    verdict({ openError: current.openError });
    return;
  }
  if (gen !== current.generation) return;
  current.report = report;
  renderReport(el, report, { shown: current.openError });
  $('validation').dataset.status = report.valid ? 'valid' : 'invalid';
  verdict({ report, openError: current.openError });
  const line = document.getElementById('overview-validation');
  if (line) {
    const { errors, warnings } = report.summary;
    fill(
      line,
      h(
        'a',
        {
          href: '#validation',
          class: report.valid ? 'ok' : 'error',
          /** @param {Event} ev */
          onclick: (ev) => {
            ev.preventDefault();
            $('validation').scrollIntoView();
          },
        },
        report.valid ? 'valid' : 'invalid',
      ),
      ` — ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`,
    );
  }
  refreshStatus();
}

/** @param {number} gen */
async function loadPolicy(gen) {
  const el = body('policy');
  const worker = /** @type {Workers} */ (current.workers).policy; // started with the archive
  renderPolicyLoading(el, () => worker.cancel());
  $('policy').dataset.status = 'loading';
  try {
    const policy = await worker.call('policy');
    if (gen !== current.generation) return;
    current.policy = policy;
    const masks = MASKED_ALGORITHMS.includes(
      /** @type {string} */ (algorithmOf(/** @type {Archive} */ (current.archive).metadata)),
    );
    renderPolicy(
      el,
      policy,
      { predict: (args) => worker.call('predict', args), cancel: () => worker.cancel() },
      { masks },
    );
    $('policy').dataset.status = 'ready';
    const ops = policy.layers;
    const line = document.getElementById('overview-policy');
    if (line)
      fill(
        line,
        `${ops.length} layers: ${ops.slice(0, 12).join(' → ')}${ops.length > 12 ? ' → …' : ''} → ${policy.action.op}`,
      );
  } catch (e) {
    if (gen !== current.generation) return;
    if (isCancelled(e)) {
      $('policy').dataset.status = 'cancelled';
      renderPolicyPending(el, () => loadPolicy(gen), 'Loading the policy was cancelled.');
    } else {
      $('policy').dataset.status = 'error';
      fill(el, h('div', { class: 'banner bad' }, 'Cannot load the policy: ', errorParts(e)));
    }
  }
  refreshStatus();
}

/**
 * @param {Archive} archive
 * @param {number} gen
 */
function renderArchive(archive, gen) {
  renderAgent(body('agent'), archive);
  show('agent');
  const label = /** @type {string} */ (current.label); // set by load()
  renderCard(body('card'), archive, { label });
  show('card');
  renderOverview(body('overview'), archive, { label, size: /** @type {SharedSource} */ (current.source).size });
  renderHyperparameters(body('hyperparameters'), archive.data, archive.optimizers);
  show('overview');
  show('hyperparameters');
  show('spaces', renderSpaces(body('spaces'), archive.data) > 0);
  show('schedules', renderSchedules(body('schedules'), archive.data) > 0);
  const worker = /** @type {Workers} */ (current.workers).tensors;
  show(
    'tensors',
    renderTensors(body('tensors'), archive, {
      statistics: (group, name) => worker.call('tensor', { group, name }),
      cancel: () => worker.cancel(),
      busy: () => worker.busy,
      onRead: () => gen === current.generation && refreshStatus(),
    }) > 0,
  );
}

/**
 * Opens and shows an archive.
 * @param {Blob|string} input a File/Blob, or an absolute http(s) URL
 * @param {string} label what to call it on the page
 * @returns {Promise<void>} resolves once opening, and any automatic validation and policy loading, are done
 */
async function load(input, label) {
  const gen = ++current.generation;
  const previous = current.source;
  for (const w of Object.values(current.workers ?? {})) w.close();
  Object.assign(current, {
    label,
    source: null,
    archive: null,
    openError: null,
    report: null,
    policy: null,
    workers: null,
  });
  setState('loading');
  for (const id of SECTIONS) show(id, false);
  for (const id of ['open-error', 'report', 'verdict']) fill($(id));
  $('verdict').hidden = true;
  $('policy').after($('validation'));
  delete $('validation').dataset.status;
  delete $('policy').dataset.status;
  fill($('status'), `Opening ${label}…`);
  document.title = `${label} — rlarchive inspector`;
  await previous?.release().catch(() => {});

  let src;
  try {
    src = await openShared(input);
  } catch (e) {
    if (gen !== current.generation) return;
    current.openError = /** @type {OpenError} */ (e);
    fill($('status'), label);
    renderOpenError($('open-error'), /** @type {OpenError} */ (e));
    show('validation');
    verdict({ openError: /** @type {OpenError} */ (e) });
    setState('error');
    return;
  }
  if (gen !== current.generation) return src.release();
  current.source = src;
  const onRead = () => gen === current.generation && refreshStatus();
  const workers = {
    policy: new WorkerClient(src, { name: 'policy', onRead }),
    tensors: new WorkerClient(src, { name: 'tensors', onRead }),
  };
  current.workers = workers;
  // a referenced array of the data is read and summarised by the tensors' worker too
  setArraySummarizer((nd) => {
    const ref = /** @type {{group: string, name: string}} */ (nd.ref); // only a reference is summarised so
    return workers.tensors.call('array', { group: ref.group, name: ref.name });
  });
  try {
    current.archive = await open(src);
  } catch (e) {
    current.openError = /** @type {OpenError} */ (e);
  }
  if (gen !== current.generation) return;
  show('validation');
  if (current.openError) {
    const names =
      current.openError.code === 'ARCHIVE_NOT_RLARCHIVE' ? await zipMemberNames(src).catch(() => null) : null;
    if (gen !== current.generation) return;
    renderOpenError($('open-error'), current.openError, conversionHint(names, label));
  } else renderArchive(/** @type {Archive} */ (current.archive), gen);
  refreshStatus();

  const tasks = [];
  const validateNow = () => runValidation(gen);
  verdict({ openError: current.openError });
  if (src.size <= autoread) tasks.push(validateNow());
  else renderReportPending($('report'), src.size, validateNow);
  if (current.archive?.extensionsUsed.includes('RLA_policy')) {
    show('policy');
    if (src.size <= autoread) tasks.push(loadPolicy(gen));
    else renderPolicyPending(body('policy'), () => loadPolicy(gen));
  }
  await Promise.all(tasks);
  if (gen !== current.generation) return;
  refreshStatus();
  setState(current.openError ? 'error' : 'ready');
}

/**
 * @param {Blob|string} input
 * @param {string} label
 * @returns {Promise<void>}
 */
function start(input, label) {
  current.ready = load(input, label).catch((e) => {
    setState('error');
    fill(
      $('status'),
      h('span', { class: 'error' }, `Unexpected failure: ${/** @type {Error|null|undefined} */ (e)?.message ?? e}`),
    );
  });
  return current.ready;
}

/** @param {File|null|undefined} file */
function openFile(file) {
  if (!file) return;
  const q = new URLSearchParams(location.search);
  q.delete('url');
  history.replaceState(null, '', q.size ? `${location.pathname}?${q}` : location.pathname);
  byId('url-input', HTMLInputElement).value = '';
  start(file, file.name);
}

/** @param {string} value */
function openUrl(value) {
  let url;
  try {
    url = resolveUrl(value);
  } catch {
    fill($('status'), h('span', { class: 'error' }, 'Not a URL: ', value));
    return;
  }
  start(url, value);
}

function wire() {
  $('file-input').addEventListener('change', (ev) => {
    const input = /** @type {HTMLInputElement} */ (ev.target); // the file input itself
    openFile(/** @type {FileList} */ (input.files)[0]);
    input.value = '';
  });
  $('url-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const value = byId('url-input', HTMLInputElement).value.trim();
    if (!value) return;
    const q = new URLSearchParams(location.search);
    q.set('url', value);
    history.pushState(null, '', `${location.pathname}?${q}`);
    openUrl(value);
  });
  let depth = 0;
  const overlay = $('drop-overlay');
  /** @param {DragEvent} ev */
  const hasFiles = (ev) => Array.from(ev.dataTransfer?.types ?? []).includes('Files');
  document.addEventListener('dragenter', (ev) => {
    if (!hasFiles(ev)) return;
    depth++;
    overlay.hidden = false;
  });
  document.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) overlay.hidden = true;
  });
  document.addEventListener('dragover', (ev) => {
    if (hasFiles(ev)) ev.preventDefault();
  });
  document.addEventListener('drop', (ev) => {
    ev.preventDefault();
    depth = 0;
    overlay.hidden = true;
    openFile(ev.dataTransfer?.files?.[0]);
  });
  window.addEventListener('popstate', () => {
    const u = new URLSearchParams(location.search).get('url');
    if (u) openUrl(u);
  });
  fill(
    $('footer'),
    `rlarchive-reader ${VERSION} — everything is computed in this page; the only requests are for the archive you open.`,
  );
}

/**
 * The page's state for scripts and tests: `open(input, label)` opens a File,
 * Blob or URL; `ready` resolves when the current archive is shown (with its
 * automatic validation and policy loading); `archive`, `report`,
 * `openError` and `source` are what is shown, and `policy` the policy's
 * summary from the worker (tasks.js policySummary).
 */
/** @type {Window & {rlarchiveInspector?: object}} */ (window).rlarchiveInspector = Object.freeze({
  version: VERSION,
  /**
   * @param {Blob|string} input
   * @param {string} [label]
   */
  open: (input, label = String(/** @type {{name?: string}|null} */ (input)?.name ?? input)) =>
    start(typeof input === 'string' ? resolveUrl(input) : input, label),
  get ready() {
    return current.ready;
  },
  get archive() {
    return current.archive;
  },
  get report() {
    return current.report;
  },
  get policy() {
    return current.policy;
  },
  get openError() {
    return current.openError;
  },
  get source() {
    return current.source;
  },
});

wire();
const initial = params.get('url');
if (initial) openUrl(initial);
