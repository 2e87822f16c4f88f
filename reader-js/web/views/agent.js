// What the agent is and how good it is: an overview shown first (algorithm,
// environment, mean reward, spaces, validation, the policy's layers), then the
// provenance and evaluations of spec/metadata.md (Archive#provenance,
// Archive#evaluations) and how to load it: the facts of the model card
// `rlarchive card` writes, as page content rather than Markdown. Text from the archive goes into the page as text only; the
// environment id is shown as a hint, never resolved.

import { Space } from '../../src/index.js';
import { latestByEnvironment } from '../../src/metadata.js';
import { h, fill, keyValueTable, errorParts } from '../dom.js';
import { formatShort } from '../format.js';
import { spaceLabel } from './value.js';

/**
 * @typedef {import('../../index.js').Archive} Archive
 * @typedef {import('../../index.js').Provenance} Provenance
 * @typedef {import('../../index.js').Evaluation} Evaluation
 * @typedef {import('../dom.js').Child} Child
 */

/**
 * @param {number|bigint} n
 * @param {string} word
 */
const plural = (n, word) => `${n} ${word}${Number(n) === 1 ? '' : 's'}`;
/** @param {number[]} xs */
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/**
 * `MEAN ± STD` with two decimals, as the model card's `model-index` writes it.
 * @param {{mean: number, std: number}} e
 * @returns {string}
 */
export function meanStd(e) {
  return `${Number(e.mean).toFixed(2)} ± ${Number(e.std).toFixed(2)}`;
}

/**
 * What a replay buffer (extension RLA_replay_buffer) holds, in the command line's words:
 * `ReplayBuffer, 300 of 5,000 rows filled in the environment (300 transitions)`.
 * @param {{class: string, buffer_size: number|bigint, n_envs: number|bigint, pos: number|bigint, full: boolean}} rb
 * @returns {string}
 */
export function replayBufferText(rb) {
  /** @param {number|bigint} x */
  const n = (x) => Number(x).toLocaleString('en-US');
  const rows = Number(rb.full ? rb.buffer_size : rb.pos);
  const envs = Number(rb.n_envs) === 1 ? 'the environment' : `each of ${n(rb.n_envs)} environments`;
  const transitions = rows * Number(rb.n_envs);
  return `${rb.class}, ${n(rows)} of ${n(rb.buffer_size)} rows filled in ${envs} (${n(transitions)} transition${transitions === 1 ? '' : 's'})`;
}

/**
 * Fills `el` with what the archive's replay buffer holds (read and checked, its transitions not read), or why not.
 * @param {HTMLElement} el
 * @param {import('../../index.js').Archive} archive
 */
export function showReplayBuffer(el, archive) {
  el.dataset.status = 'reading';
  archive
    .replayBuffer()
    .then((rb) => {
      fill(el, rb === null ? 'none' : replayBufferText(rb));
      el.dataset.status = 'done';
    })
    .catch((e) => {
      fill(el, h('span', { class: 'error' }, errorParts(e)));
      el.dataset.status = 'error';
    });
}

/**
 * The algorithm the metadata names (Annex B: `sb3.algorithm`, or `sb2.algorithm`), or null.
 * @param {Record<string, string>} metadata
 * @returns {string|null}
 */
export function algorithmOf(metadata) {
  return metadata['sb3.algorithm'] || metadata['sb2.algorithm'] || null;
}

/**
 * @param {import('../../index.js').Wrapper} w
 * @returns {string}
 */
function wrapperText(w) {
  const params = Object.entries(w)
    .filter(([k]) => k !== 'name')
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return params.length ? `${w.name}(${params.join(', ')})` : w.name;
}

/**
 * @param {Evaluation} e
 * @returns {string}
 */
function seedsText(e) {
  return e.seeds === null
    ? 'unseeded'
    : e.seeds.length === 1
      ? String(e.seeds[0])
      : `${e.seeds[0]}..${e.seeds[e.seeds.length - 1]}`;
}

/**
 * @param {Archive} archive
 * @param {Provenance} p
 * @param {Evaluation[]} evaluations
 * @param {string|null} algorithm
 * @returns {Array<[string, Child]>}
 */
function summaryRows(archive, p, evaluations, algorithm) {
  const notRecorded = () => h('span', { class: 'muted' }, 'not recorded');
  const rewards = /** @type {Evaluation[]} */ (latestByEnvironment(evaluations)).map((e) =>
    h(
      'div',
      { class: 'reward', dataset: { env: e.env_id } },
      h('strong', { class: 'reward-value' }, meanStd(e)),
      ` over ${plural(e.episodes, 'episode')} of `,
      h('code', null, e.env_id),
      h('span', { class: 'muted' }, ` (${e.deterministic ? 'deterministic' : 'stochastic'}, ${e.date})`),
    ),
  );
  const run = [];
  if (p.nEnvs !== null) run.push(`${plural(p.nEnvs, 'environment')} in parallel`);
  if (p.seed !== null) run.push(`seed ${p.seed}`);
  return [
    [
      'environment',
      p.envId === null
        ? notRecorded()
        : h(
            'span',
            null,
            h('code', { id: 'agent-env' }, p.envId),
            h('span', { class: 'muted' }, ' (as recorded: a hint)'),
          ),
    ],
    [
      'algorithm',
      algorithm === null
        ? notRecorded()
        : h(
            'span',
            { id: 'agent-algorithm' },
            algorithm,
            archive.metadata['sb3.algorithm_class']
              ? h('span', { class: 'muted' }, ` (${archive.metadata['sb3.algorithm_class']})`)
              : null,
          ),
    ],
    [
      'mean reward',
      rewards.length
        ? h('div', { id: 'agent-reward' }, rewards)
        : h('span', { class: 'muted' }, 'no evaluation recorded'),
    ],
    [
      'timesteps',
      p.numTimesteps === null
        ? notRecorded()
        : h(
            'span',
            { id: 'agent-timesteps' },
            String(p.numTimesteps),
            run.length ? h('span', { class: 'muted' }, ` (${run.join(', ')})`) : null,
          ),
    ],
  ];
}

/**
 * @param {Archive} archive
 * @param {Provenance} p
 * @returns {Array<[string, Child]>}
 */
function provenanceRows(archive, p) {
  /** @type {Array<[string, Child]>} */
  const rows = [];
  if (p.envId !== null) rows.push(['environment', p.envId]);
  if (p.nEnvs !== null) rows.push(['environments in parallel', String(p.nEnvs)]);
  if (p.numTimesteps !== null) rows.push(['timesteps trained', String(p.numTimesteps)]);
  if (p.seed !== null) rows.push(['seed', String(p.seed)]);
  for (const [lib, version] of Object.entries(p.versions)) rows.push([lib, version]);
  for (const w of p.wrappers ?? []) rows.push(['wrapper', h('code', null, wrapperText(w))]);
  rows.push(['written by', `${archive.producer.name} ${archive.producer.version}`]);
  return rows;
}

/**
 * A number of the evaluations table: about 6 significant digits, the exact value in its title and data-value.
 * @param {number} x
 * @param {string} cls
 * @returns {HTMLTableCellElement}
 */
function evalNumber(x, cls) {
  const v = Number(x);
  return h('td', { class: `num ${cls}`, title: String(v), dataset: { value: String(v) } }, formatShort(v, 6));
}

/**
 * @param {Evaluation[]} evaluations
 * @returns {HTMLTableElement}
 */
function evaluationsTable(evaluations) {
  const head = [
    'environment',
    'episodes',
    'seeds',
    'mean return',
    'std',
    'mean length',
    'deterministic',
    'evaluator',
    'date',
  ];
  return h(
    'table',
    { class: 'evaluations', id: 'evaluations-table' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        head.map((x) => h('th', null, x)),
      ),
    ),
    h(
      'tbody',
      null,
      evaluations.map((e) =>
        h(
          'tr',
          { dataset: { env: e.env_id } },
          h('td', null, h('code', null, e.env_id)),
          h('td', null, String(e.episodes)),
          h('td', null, seedsText(e)),
          evalNumber(e.mean, 'eval-mean'),
          evalNumber(e.std, 'eval-std'),
          evalNumber(mean(e.lengths), 'eval-length'),
          h('td', null, e.deterministic ? 'yes' : 'no'),
          h('td', null, `${e.evaluator.name} ${e.evaluator.version}`),
          h('td', null, e.date),
        ),
      ),
    ),
  );
}

/**
 * @param {string} label
 * @param {string|null} envId
 * @param {boolean} sb3
 * @param {boolean} hasPolicy
 * @param {boolean} normalized
 * @returns {HTMLDivElement}
 */
function howToLoad(label, envId, sb3, hasPolicy, normalized) {
  const q = JSON.stringify(label);
  /**
   * @param {string} title
   * @param {string} code
   */
  const block = (title, code) => [h('h4', null, title), h('pre', { class: 'snippet' }, h('code', null, code))];
  const raw = normalized ? '  # raw observations: the policy applies the VecNormalize statistics itself' : '';
  return h(
    'div',
    { id: 'how-to-load' },
    block(
      'Python (NumPy only, no pickle is run)',
      `import rlarchive\n\nwith rlarchive.open(${q}) as ar:\n    policy = ar.policy()\naction, _ = policy.predict(obs)${raw}`,
    ),
    sb3
      ? block(
          'Back into Stable-Baselines3',
          `from rlarchive import sb3 as rsb3\n\nmodel = rsb3.load(${q})${
            normalized
              ? '\n# this model takes normalised observations, as its VecNormalize hands them on:\naction, _ = model.predict(policy.normalize_obs(obs), deterministic=True)'
              : ''
          }`,
        )
      : null,
    block(
      'JavaScript (Node or a browser)',
      `import { open } from 'rlarchive-reader';\n\nconst ar = await open(${q});\nconst policy = await ar.policy();`,
    ),
    block(
      'ONNX, evaluation, model card',
      `rlarchive export-onnx ${q} agent.onnx\nrlarchive evaluate ${q} --env ${JSON.stringify(envId ?? 'ENV_ID')} --episodes 10 --seed 0\nrlarchive card ${q}`,
    ),
    hasPolicy
      ? null
      : h(
          'p',
          { class: 'muted' },
          'This archive has no portable policy (RLA_policy): the Python, JavaScript and ONNX routes need one.',
        ),
  );
}

/**
 * The overview, shown first: environment, algorithm, mean reward ± std with
 * its episodes, timesteps, the spaces, and two rows the page fills in later
 * (`#overview-validation` when the validation is done, `#overview-policy`
 * when the policy is loaded). Defined metadata keys with malformed values are
 * listed with their warning.
 * @param {HTMLElement} el
 * @param {import('../../index.js').Archive} archive
 */
export function renderAgent(el, archive) {
  const p = archive.provenance;
  const algorithm = algorithmOf(archive.metadata);
  const malformed = archive.warnings.filter((w) => w.code === 'METADATA_INVALID');
  const spaces = Object.entries(archive.data).filter(
    ([k, v]) => v instanceof Space && /^(observation|action)_space$/.test(k),
  );
  /** @type {Array<[string, Child]>} */
  const rows = [
    ...summaryRows(archive, p, archive.evaluations, algorithm),
    ...spaces.map(
      ([k, v]) =>
        /** @type {[string, Child]} */ ([
          k.replace('_', ' '),
          h(
            'span',
            { class: 'space-summary', dataset: { space: k } },
            spaceLabel(/** @type {import('./value.js').SpaceValue} */ (v)),
          ),
        ]),
    ),
    ['validation', h('span', { id: 'overview-validation' }, h('span', { class: 'muted' }, 'not run yet'))],
  ];
  if (archive.extensionsUsed.includes('RLA_policy'))
    rows.push(['policy', h('span', { id: 'overview-policy' }, h('span', { class: 'muted' }, 'not loaded yet'))]);
  if (archive.extensionsUsed.includes('RLA_replay_buffer')) {
    const cell = h('span', { id: 'overview-replay-buffer' }, h('span', { class: 'muted' }, 'reading…'));
    rows.push(['replay buffer', cell]);
    showReplayBuffer(cell, archive);
  }
  fill(
    el,
    keyValueTable(rows, 'kv agent-summary'),
    malformed.length
      ? h(
          'div',
          { class: 'banner warn', id: 'metadata-warnings' },
          'Metadata not shown, its value is malformed:',
          h(
            'ul',
            null,
            malformed.map((w) =>
              h(
                'li',
                null,
                h('code', { class: 'code' }, w.code),
                ' ',
                h('code', { class: 'loc' }, w.pointer),
                ' ',
                w.detail ?? w.message,
              ),
            ),
          ),
        )
      : null,
  );
}

/**
 * The model card's facts after the overview: provenance, evaluations, how to load.
 * @param {HTMLElement} el
 * @param {import('../../index.js').Archive} archive
 * @param {{label: string}} file
 */
export function renderCard(el, archive, file) {
  const p = archive.provenance;
  const evaluations = archive.evaluations;
  const sb3 = archive.metadata.source === 'stable-baselines3';
  fill(
    el,
    h('h3', null, 'Provenance'),
    keyValueTable(provenanceRows(archive, p), 'kv provenance'),
    h('h3', null, 'Evaluations'),
    evaluations.length
      ? [
          h('div', { class: 'scroll' }, evaluationsTable(evaluations)),
          h(
            'p',
            { class: 'muted small' },
            "Returns are the environment's own rewards; the latest evaluation of each environment is the mean reward of the overview.",
          ),
        ]
      : h(
          'p',
          { class: 'muted', id: 'no-evaluations' },
          'None recorded. ',
          h('code', null, 'rlarchive evaluate FILE --env ENV_ID --episodes 10 --seed 0 --record'),
          ' records one.',
        ),
    h('h3', null, 'How to load'),
    howToLoad(
      file.label,
      p.envId,
      sb3,
      archive.extensionsUsed.includes('RLA_policy'),
      archive.extensionsUsed.includes('RLA_vec_normalize'),
    ),
  );
}
