// Optimizer state under the names of the parameters it belongs to (DOM-free).
//
// An optimizer's state (spec §7.9) is a `dict` from integer keys to each
// parameter's state (Adam's `exp_avg`, `exp_avg_sq`, `step`), its tensors in
// the group `optimizer.NAME`; the keys are the ids its `param_groups` list.
// A parameter group names its parameters by the tensors of the group
// `policy` they are in `param_tensors`: those names are taken as recorded.
// An archive written without them (an older writer) gets a guess: each
// position is matched to a parameter of the module the optimizer belongs to
// (Annex B: `policy.optimizer` the whole policy, `actor.optimizer` the
// tensors `actor.*`, `ent_coef_optimizer` the variable `log_ent_coef`) with
// the shape of its state, taking the parameters in PyTorch's usual order
// (`weight` before `bias`, numbered layers in their order), which need not be
// the optimizer's; a guess is `certain` when no other parameter of the module
// has that shape. Python's rlarchive.param_tensors names them the same way.

import { NDArray } from '../src/index.js';
import { findAll } from './walk.js';

/**
 * A parameter of the module an optimizer belongs to: its tensor group, name and shape.
 * @typedef {{group: string, name: string, shape: number[]}} Parameter
 * @typedef {import('../index.js').Archive} Archive
 * @typedef {{params?: unknown, param_tensors?: unknown}|null|undefined} ParamGroup a `param_groups` entry as decoded (members checked where read)
 * @typedef {{position: number, key: string, parameter: Parameter|null, recorded: boolean, certain: boolean, alternatives: string[], sameShape: number, tensors: string[]}} Position
 */

/** @type {Record<string, number>} */
const LAST = { weight: 0, bias: 1 };

/**
 * PyTorch's usual order of parameter names: component by component, numbers as numbers, `weight` before `bias`.
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function compareParameterNames(a, b) {
  const pa = a.split('.'),
    pb = b.split('.');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i],
      y = pb[i];
    if (x === y) continue;
    if (/^\d+$/.test(x) && /^\d+$/.test(y)) return Number(x) - Number(y);
    if (x in LAST && y in LAST) return LAST[x] - LAST[y];
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

/**
 * The tensor groups in the order the page lists them: `policy` first, then
 * the other modules and variables, then the optimizers' states.
 * @param {string[]} groups
 * @returns {string[]}
 */
export function orderGroups(groups) {
  /** @param {string} g */
  const rank = (g) => (g === 'policy' ? 0 : g.startsWith('optimizer.') ? 2 : 1);
  return [0, 1, 2].flatMap((r) => groups.filter((g) => rank(g) === r));
}

/**
 * The parameters an optimizer may optimize: [{group, name, shape}] in PyTorch's usual order.
 * @param {Archive} archive
 * @param {string} optimizer
 * @returns {Parameter[]}
 */
function moduleParameters(archive, optimizer) {
  /**
   * @param {string} g
   * @returns {Parameter[]}
   */
  const infos = (g) =>
    archive.groups.includes(g)
      ? archive.tensorInfo(g).map((t) => ({ group: g, name: t.name, shape: t.shape.map(Number) }))
      : [];
  const module = optimizer.replace(/[._]optimizer$/, '');
  const policy = infos('policy');
  const prefixed = module === 'policy' ? policy : policy.filter((t) => t.name.startsWith(`${module}.`));
  const variables = infos('variables').filter((t) => t.name.includes(module));
  const found = prefixed.length ? prefixed : variables.length ? variables : [...infos('variables'), ...policy];
  return found.sort((a, b) => compareParameterNames(a.name, b.name));
}

/** How many names of other parameters of the same shape a guessed position lists (`alternatives`); `sameShape` counts them all. */
export const ALTERNATIVES_SHOWN = 8;

/**
 * State key (the parameter's id, as a string) -> the policy tensor its group's `param_tensors` names it by.
 * @param {Archive} archive
 * @param {ParamGroup[]} groups
 * @returns {Map<string, Parameter>}
 */
function recordedNames(archive, groups) {
  const policy = archive.groups.includes('policy') ? archive.tensorInfo('policy') : [];
  const shapes = new Map(policy.map((t) => [t.name, t.shape.map(Number)]));
  /** @type {Map<string, Parameter>} */
  const out = new Map();
  for (const g of groups) {
    const names = g?.param_tensors;
    const ids = g?.params;
    if (!Array.isArray(names) || !Array.isArray(ids) || names.length !== ids.length) continue;
    ids.forEach((id, i) => {
      if (shapes.has(names[i]))
        out.set(String(id), { group: 'policy', name: names[i], shape: /** @type {number[]} */ (shapes.get(names[i])) });
    });
  }
  return out;
}

/**
 * The state tensors of optimizer `name` by the parameter they belong to.
 * @param {import('../index.js').Archive} archive
 * @param {string} name the optimizer's name (its tensors are in group `optimizer.NAME`)
 * @returns {{params: Position[], other: string[]}}
 *   each position of the optimizer's parameter list that has state, in order, with its tensor names (`recorded`:
 *   named by the archive's `param_tensors`, else guessed by shape, with the number of other parameters of its shape,
 *   `sameShape`, and the first ALTERNATIVES_SHOWN of their names); `other`: tensors of the group found under no position
 */
export function optimizerLayout(archive, name) {
  const group = `optimizer.${name}`;
  const value = /** @type {{state?: unknown, param_groups?: unknown}|undefined} */ (archive.optimizers[name]);
  const all = archive.groups.includes(group) ? archive.tensorInfo(group).map((t) => t.name) : [];
  /** @type {Map<string, import('../index.js').NDArray[]>} */
  const byKey = new Map(); // state key -> the state's arrays in the optimizer's group
  const state = value?.state;
  const entries = state instanceof Map ? [...state] : state && typeof state === 'object' ? Object.entries(state) : [];
  for (const [key, v] of entries) {
    const refs = findAll(v, NDArray)
      .map(([, nd]) => /** @type {import('../index.js').NDArray} */ (nd))
      .filter((nd) => nd.ref?.group === group);
    byKey.set(String(key), refs);
  }
  /** @type {ParamGroup[]} */
  const groups = Array.isArray(value?.param_groups) ? value.param_groups : [];
  const positions = groups.flatMap((g) => (Array.isArray(g?.params) ? g.params.map(String) : []));
  const inGroups = new Set(positions);
  for (const key of byKey.keys()) if (!inGroups.has(key)) positions.push(key);
  const named = recordedNames(archive, groups);
  const recorded = new Set([...named.values()].map((p) => p.name));
  // the module's parameters of each shape, in order; a guess takes the next of its shape no recorded name holds
  /** @type {Map<string, Parameter[]>} */
  const byShape = new Map();
  for (const c of moduleParameters(archive, name)) {
    const k = c.shape.join(',');
    if (!byShape.has(k)) byShape.set(k, []);
    /** @type {Parameter[]} */ (byShape.get(k)).push(c);
  }
  /** @type {Map<string|null, number>} */
  const taken = new Map();
  /** @type {Position[]} */
  const params = [];
  positions.forEach((key, position) => {
    const refs = byKey.get(key);
    if (!refs?.length) return;
    const tensors = refs.map((nd) => /** @type {{name: string}} */ (nd.ref).name); // filtered on their ref above
    const own = named.get(key);
    if (own) {
      params.push({
        position,
        key,
        parameter: own,
        recorded: true,
        certain: true,
        alternatives: [],
        sameShape: 0,
        tensors,
      });
      return;
    }
    const shaped = refs.find((nd) => nd.shape.length > 0);
    const shapeKey = shaped ? shaped.shape.map(Number).join(',') : null;
    /** @type {Parameter[]} */
    const fits = shapeKey === null ? [] : (byShape.get(shapeKey) ?? []);
    let i = taken.get(shapeKey) ?? 0;
    while (i < fits.length && fits[i].group === 'policy' && recorded.has(fits[i].name)) i++;
    const parameter = fits[i] ?? null;
    if (parameter) taken.set(shapeKey, i + 1);
    const alternatives = [];
    for (let j = 0; j < fits.length && alternatives.length < ALTERNATIVES_SHOWN; j++)
      if (fits[j] !== parameter) alternatives.push(fits[j].name);
    params.push({
      position,
      key,
      parameter,
      recorded: false,
      certain: parameter !== null && fits.length === 1,
      alternatives,
      sameShape: fits.length - (parameter === null ? 0 : 1),
      tensors,
    });
  });
  const listed = new Set(params.flatMap((p) => p.tensors));
  return { params, other: all.filter((t) => !listed.has(t)) };
}
