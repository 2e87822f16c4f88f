// Optimizer state under the names of the parameters it belongs to (DOM-free).
//
// An optimizer's state (spec §7.9) is a `dict` from integer keys to each
// parameter's state (Adam's `exp_avg`, `exp_avg_sq`, `step`), its tensors in
// the group `optimizer.NAME`; the keys are positions in the optimizer's
// parameter list, which its `param_groups` give in order. The archive does
// not name the parameters: they are the module's parameters in PyTorch's
// order, which the tensor group's names (sorted) do not keep. So each
// position is matched to a parameter of the module the optimizer belongs to
// (Annex B: `policy.optimizer` the whole policy, `actor.optimizer` the
// tensors `actor.*`, `ent_coef_optimizer` the variable `log_ent_coef`) with
// the shape of its state, taking the parameters in PyTorch's usual order
// (`weight` before `bias`, numbered layers in their order); a match is
// `certain` when no other parameter of the module has that shape.

import { NDArray } from '../src/index.js';
import { findAll } from './walk.js';

const LAST = { weight: 0, bias: 1 };

/** PyTorch's usual order of parameter names: component by component, numbers as numbers, `weight` before `bias`. */
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
  const rank = (g) => (g === 'policy' ? 0 : g.startsWith('optimizer.') ? 2 : 1);
  return [0, 1, 2].flatMap((r) => groups.filter((g) => rank(g) === r));
}

/** The parameters an optimizer may optimize: [{group, name, shape}] in PyTorch's usual order. */
function moduleParameters(archive, optimizer) {
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

/** How many names of other parameters of the same shape a position lists (`alternatives`); `sameShape` counts them all. */
export const ALTERNATIVES_SHOWN = 8;

const shapeKey = (shape) => shape.join(',');

/**
 * The state tensors of optimizer `name` by the parameter they belong to.
 * @param {import('../index.js').Archive} archive
 * @param {string} name the optimizer's name (its tensors are in group `optimizer.NAME`)
 * @returns {{params: Array<{position: number, key: string, parameter: {group: string, name: string, shape: number[]}|null, certain: boolean, alternatives: string[], sameShape: number, tensors: string[]}>, other: string[]}}
 *   each position of the optimizer's parameter list that has state, in order, with its tensor names, the
 *   number of other parameters of its shape (`sameShape`) and the first ALTERNATIVES_SHOWN of their names;
 *   `other`: tensors of the group found under no position
 */
export function optimizerLayout(archive, name) {
  const group = `optimizer.${name}`;
  const value = archive.optimizers[name];
  const all = archive.groups.includes(group) ? archive.tensorInfo(group).map((t) => t.name) : [];
  const byKey = new Map(); // state key -> tensor names
  const state = value?.state;
  const entries = state instanceof Map ? [...state] : state && typeof state === 'object' ? Object.entries(state) : [];
  for (const [key, v] of entries) {
    const refs = findAll(v, NDArray)
      .map(([, nd]) => nd)
      .filter((nd) => nd.ref?.group === group);
    byKey.set(String(key), refs);
  }
  const positions = (Array.isArray(value?.param_groups) ? value.param_groups : []).flatMap((g) =>
    Array.isArray(g?.params) ? g.params.map(String) : [],
  );
  const listedKeys = new Set(positions);
  for (const key of byKey.keys()) if (!listedKeys.has(key)) positions.push(key);
  // the module's parameters by shape, in order; each shape's next unused one is `next` (linear in the parameters)
  const byShape = new Map();
  for (const c of moduleParameters(archive, name)) {
    const key = shapeKey(c.shape);
    if (!byShape.has(key)) byShape.set(key, { fits: [], next: 0 });
    byShape.get(key).fits.push(c);
  }
  const params = [];
  positions.forEach((key, position) => {
    const refs = byKey.get(key);
    if (!refs?.length) return;
    const shaped = refs.find((nd) => nd.shape.length > 0);
    const same = shaped ? byShape.get(shapeKey(shaped.shape.map(Number))) : undefined;
    const fits = same?.fits ?? [];
    const parameter = same && same.next < fits.length ? fits[same.next++] : null;
    const alternatives = [];
    for (let i = 0; i < fits.length && alternatives.length < ALTERNATIVES_SHOWN; i++)
      if (fits[i] !== parameter) alternatives.push(fits[i].name);
    params.push({
      position,
      key,
      parameter,
      certain: parameter !== null && fits.length === 1,
      alternatives,
      sameShape: fits.length - (parameter === null ? 0 : 1),
      tensors: refs.map((nd) => nd.ref.name),
    });
  });
  const listed = new Set(params.flatMap((p) => p.tensors));
  return { params, other: all.filter((t) => !listed.has(t)) };
}
