// Inline SVG charts generated from numbers (no text from the file goes into them).

import { s } from './dom.js';
import { formatShort } from './format.js';

const W = 480;
const H = 220;
const M = { left: 64, right: 30, top: 12, bottom: 40 };

/**
 * The linear map from the domain [d0, d1] onto the range [r0, r1].
 * @param {number} d0
 * @param {number} d1
 * @param {number} r0
 * @param {number} r1
 * @returns {(v: number) => number}
 */
function scale(d0, d1, r0, r1) {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return (v) => r0 + (v - d0) * k;
}

/**
 * @param {SVGGElement} g
 * @param {{xTicks: number[], yTicks: number[], x: (v: number) => number, y: (v: number) => number, xLabel?: string, yLabel?: string}} axis
 */
function axes(g, { xTicks, yTicks, x, y, xLabel, yLabel }) {
  const x0 = M.left,
    x1 = W - M.right,
    y0 = H - M.bottom,
    y1 = M.top;
  g.appendChild(s('line', { class: 'axis', x1: x0, y1: y0, x2: x1, y2: y0 }));
  g.appendChild(s('line', { class: 'axis', x1: x0, y1: y0, x2: x0, y2: y1 }));
  for (const t of xTicks) {
    const px = x(t);
    g.appendChild(s('line', { class: 'tick', x1: px, y1: y0, x2: px, y2: y0 + 4 }));
    g.appendChild(s('text', { class: 'tick-label', x: px, y: y0 + 16, 'text-anchor': 'middle' }, formatShort(t)));
  }
  for (const t of yTicks) {
    const py = y(t);
    g.appendChild(s('line', { class: 'grid', x1: x0, y1: py, x2: x1, y2: py }));
    g.appendChild(s('text', { class: 'tick-label', x: x0 - 6, y: py + 4, 'text-anchor': 'end' }, formatShort(t)));
  }
  if (xLabel)
    g.appendChild(s('text', { class: 'axis-label', x: (x0 + x1) / 2, y: H - 6, 'text-anchor': 'middle' }, xLabel));
  if (yLabel)
    g.appendChild(
      s(
        'text',
        {
          class: 'axis-label',
          x: 12,
          y: (y0 + y1) / 2,
          'text-anchor': 'middle',
          transform: `rotate(-90 12 ${(y0 + y1) / 2})`,
        },
        yLabel,
      ),
    );
}

/**
 * @param {number} lo
 * @param {number} hi
 * @returns {[number, number]}
 */
function yRange(lo, hi) {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, 1];
  if (lo === hi) {
    const d = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    return [lo - d, hi + d];
  }
  const pad = (hi - lo) * 0.05;
  return [lo - pad, hi + pad];
}

/**
 * A line chart of `points` ([x, y] pairs), x running from `xFrom` (left) to `xTo` (right).
 * @param {Array<[number, number]>} points
 * @param {{xFrom?: number, xTo?: number, xLabel?: string, yLabel?: string, title?: string}} [options]
 * @returns {SVGSVGElement}
 */
export function lineChart(points, { xFrom = 1, xTo = 0, xLabel = '', yLabel = '', title = '' } = {}) {
  const ys = points.map((p) => p[1]).filter(Number.isFinite);
  const [ylo, yhi] = yRange(Math.min(...ys), Math.max(...ys));
  const x = scale(xFrom, xTo, M.left, W - M.right);
  const y = scale(ylo, yhi, H - M.bottom, M.top);
  const svg = s('svg', {
    class: 'chart line-chart',
    viewBox: `0 0 ${W} ${H}`,
    role: 'img',
    'aria-label': title || 'chart',
  });
  if (title) svg.appendChild(s('title', null, title));
  const g = s('g');
  const dataTicks = [ys.length ? Math.min(...ys) : 0, ys.length ? Math.max(...ys) : 1];
  axes(g, {
    xTicks: [xFrom, (xFrom + xTo) / 2, xTo],
    yTicks: dataTicks[0] === dataTicks[1] ? [dataTicks[0]] : dataTicks,
    x,
    y,
    xLabel,
    yLabel,
  });
  const d = points
    .filter((p) => Number.isFinite(p[1]))
    .map((p, i) => `${i ? 'L' : 'M'}${x(p[0]).toFixed(2)},${y(p[1]).toFixed(2)}`)
    .join('');
  g.appendChild(s('path', { class: 'series', d }));
  svg.appendChild(g);
  return svg;
}

/**
 * A histogram of bin counts over [lo, hi].
 * @param {{lo: number, hi: number, counts: number[], integer?: boolean}} histogram
 * @param {{xLabel?: string, title?: string}} [options]
 * @returns {SVGSVGElement}
 */
export function histogramChart({ lo, hi, counts, integer = false }, { xLabel = 'value', title = '' } = {}) {
  const top = Math.max(1, ...counts);
  const x = scale(lo, hi, M.left, W - M.right);
  const y = scale(0, top, H - M.bottom, M.top);
  const svg = s('svg', {
    class: 'chart histogram',
    viewBox: `0 0 ${W} ${H}`,
    role: 'img',
    'aria-label': title || 'histogram',
  });
  if (title) svg.appendChild(s('title', null, title));
  const g = s('g');
  const xTicks = integer && counts.length <= 12 ? counts.map((_, k) => lo + 0.5 + k) : [lo, (lo + hi) / 2, hi];
  axes(g, { xTicks, yTicks: [0, top], x, y, xLabel, yLabel: 'count' });
  const w = (hi - lo) / counts.length;
  counts.forEach((c, k) => {
    if (c === 0) return;
    const x0 = x(lo + k * w),
      x1 = x(lo + (k + 1) * w);
    const bar = s('rect', {
      class: 'bar',
      x: x0 + 0.5,
      y: y(c),
      width: Math.max(1, x1 - x0 - 1),
      height: Math.max(0.5, y(0) - y(c)),
    });
    bar.appendChild(s('title', null, `${formatShort(lo + k * w)} – ${formatShort(lo + (k + 1) * w)}: ${c}`));
    g.appendChild(bar);
  });
  svg.appendChild(g);
  return svg;
}
