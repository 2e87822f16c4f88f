// Schedules (spec §9) plotted over progress remaining, from 1 (start of training) to 0.

import { Schedule, evaluateSchedule } from '../../src/index.js';
import { h, fill } from '../dom.js';
import { lineChart } from '../charts.js';
import { findAll } from '../walk.js';
import { scheduleLabel } from './value.js';

const SAMPLES = 200;

/**
 * The points to plot: a regular grid of progress remaining plus each point where
 * the schedule bends or steps (evaluated on both sides), from 1 down to 0.
 * @param {import('./value.js').ScheduleValue} sc
 * @returns {Array<[number, number]>}
 */
export function schedulePoints(sc) {
  /** @type {Set<number>} */
  const ps = new Set();
  for (let i = 0; i <= SAMPLES; i++) ps.add(1 - i / SAMPLES);
  const breaks = [];
  if (sc.kind === 'linear') breaks.push(1 - Number(sc.end_fraction));
  if (sc.kind === 'piecewise')
    for (const [e] of /** @type {Array<[number, number]>} */ (sc.points)) breaks.push(1 - Number(e));
  for (const b of breaks) {
    for (const p of [b - 1e-9, b, b + 1e-9]) if (p >= 0 && p <= 1) ps.add(p);
  }
  return [...ps].sort((a, b) => b - a).map((p) => [p, evaluateSchedule(sc, p)]);
}

/**
 * Every schedule in the data, each with its parameters and an SVG plot.
 * @param {HTMLElement} el
 * @param {{[key: string]: unknown}} data
 * @returns {number} how many schedules were plotted
 */
export function renderSchedules(el, data) {
  const found = findAll(data, Schedule);
  fill(
    el,
    found.length
      ? h(
          'div',
          { class: 'grid' },
          found.map(([path, sc]) =>
            h(
              'figure',
              { class: 'card schedule', dataset: { path } },
              lineChart(schedulePoints(sc), {
                xFrom: 1,
                xTo: 0,
                xLabel: 'progress remaining',
                yLabel: 'value',
                title: `${path}: ${scheduleLabel(sc)}`,
              }),
              h(
                'figcaption',
                null,
                h('strong', null, path),
                ' — ',
                scheduleLabel(sc),
                ` — at 1: ${sc.valueAt(1)}, at 0.5: ${sc.valueAt(0.5)}, at 0: ${sc.valueAt(0)}`,
              ),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'No schedules in the data.'),
  );
  return found.length;
}
