// Schedules (§9): checking and exact evaluation.

import { pointerJoin, show } from './errors.js';
import { exactMembers, valueError } from './value_rules.js';

/**
 * The members of each kind, in the order of §9's table (the order they are checked in).
 * @type {Readonly<Record<string, string[]>>}
 */
export const SCHEDULE_MEMBERS = Object.freeze({
  constant: ['value'],
  linear: ['start', 'end', 'end_fraction'],
  piecewise: ['points', 'interpolation'],
});

/**
 * @param {unknown} x
 * @returns {x is bigint | number}
 */
const isNumber = (x) => typeof x === 'bigint' || typeof x === 'number';

/**
 * Checks a schedule value (§9) in the order of §9 and §11.2: `kind` (missing: at the schedule;
 * unknown: at `kind`), the set of members, then each member in the order of §9's table, its type
 * before its (S) rules. `points`: the array, at least one point, then each point in turn: a pair
 * of numbers (else at the point), its e_i within [0, 1] and after its predecessor (else at `points/i/0`).
 * @param {import('./json.js').JsonObject} v
 * @param {string} ptr
 * @param {{member?: string}} ctx
 * @returns {undefined}
 */
export function checkSchedule(v, ptr, ctx) {
  if (!v.has('kind')) throw valueError(ctx, 'VALUE_INVALID', 'a schedule needs the member "kind"', ptr);
  const kind = v.get('kind');
  if (typeof kind !== 'string' || !Object.hasOwn(SCHEDULE_MEMBERS, kind)) {
    throw valueError(ctx, 'VALUE_INVALID', `unknown schedule kind ${show(kind)}`, pointerJoin(ptr, 'kind'));
  }
  exactMembers(v, ['kind', ...SCHEDULE_MEMBERS[kind]], [], ptr, ctx, `${kind} schedule`);
  /** @param {string} k */
  const at = (k) => pointerJoin(ptr, k);
  if (kind === 'piecewise') {
    const pts = v.get('points');
    if (!Array.isArray(pts))
      throw valueError(ctx, 'VALUE_INVALID', 'points must be an array of [elapsed, value] number pairs', at('points'));
    if (pts.length === 0)
      throw valueError(ctx, 'SCHEDULE_INVALID', 'a piecewise schedule needs at least one point', at('points'));
    pts.forEach((pt, i) => {
      const p = pointerJoin(at('points'), i);
      if (!(Array.isArray(pt) && pt.length === 2 && pt.every(isNumber)))
        throw valueError(ctx, 'VALUE_INVALID', 'a point must be an [elapsed, value] pair of numbers', p);
      const t = Number(pt[0]);
      if (!(t >= 0 && t <= 1) || (i > 0 && !(t > Number(/** @type {unknown[]} */ (pts[i - 1])[0])))) {
        throw valueError(
          ctx,
          'SCHEDULE_INVALID',
          'points must be strictly increasing within [0, 1]',
          pointerJoin(p, 0),
        );
      }
    });
    const interp = v.get('interpolation');
    if (interp !== 'linear' && interp !== 'step')
      throw valueError(ctx, 'VALUE_INVALID', 'interpolation must be "linear" or "step"', at('interpolation'));
    return;
  }
  for (const k of SCHEDULE_MEMBERS[kind]) {
    if (!isNumber(v.get(k)))
      throw valueError(ctx, 'VALUE_INVALID', 'schedule parameter is not a number literal', at(k));
  }
  if (kind === 'linear') {
    const f = Number(v.get('end_fraction'));
    if (!(f > 0 && f <= 1))
      throw valueError(ctx, 'SCHEDULE_INVALID', 'end_fraction must be in (0, 1]', at('end_fraction'));
  }
}

/**
 * Evaluates a schedule at progress remaining `p` (1 at the start of training,
 * 0 at the end) exactly as spec §9 says: binary64 arithmetic in the order
 * written, `p` clamped to [0, 1]. Accepts a decoded Schedule (see decode.js).
 * @param {import('./decode.js').ScheduleMembers | import('./decode.js').Schedule} schedule
 * @param {number} p
 * @returns {number}
 */
export function evaluateSchedule(schedule, p) {
  // a decoded Schedule has the members of its kind (decode.js)
  const sc = /** @type {import('./decode.js').ScheduleMembers} */ (schedule);
  if (typeof p !== 'number' || Number.isNaN(p)) throw new TypeError('progress remaining must be a number');
  const pc = p < 0 ? 0 : p > 1 ? 1 : p;
  const e = 1 - pc;
  /** @param {number | bigint | undefined} x */
  const num = (x) => Number(x);
  switch (sc.kind) {
    case 'constant':
      return num(sc.value);
    case 'linear': {
      const start = num(sc.start),
        end = num(sc.end),
        f = num(sc.end_fraction);
      if (e > f) return end;
      return start + (e * (end - start)) / f;
    }
    case 'piecewise': {
      const pts = /** @type {number[][]} */ (sc.points).map(([a, b]) => [num(a), num(b)]);
      const last = pts.length - 1;
      if (e <= pts[0][0]) return pts[0][1];
      if (e >= pts[last][0]) return pts[last][1];
      let i = 0;
      while (!(pts[i][0] <= e && e < pts[i + 1][0])) i++;
      const [ei, vi] = pts[i],
        [ej, vj] = pts[i + 1];
      if (sc.interpolation === 'step') return vi;
      return vi + ((e - ei) * (vj - vi)) / (ej - ei);
    }
    default:
      throw new TypeError(`unknown schedule kind ${sc.kind}`);
  }
}
