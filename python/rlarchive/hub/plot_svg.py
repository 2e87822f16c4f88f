"""Training curves drawn as an SVG image (the ``training_curves.svg`` of a package), with nothing but text.

One chart: the return of each training episode against the environment steps taken (a thin line), and each
evaluation's mean return with its standard deviation (points and bars), on shared axes. Coordinates are rounded to
two decimals, so the same curves always give the same bytes. No text of the image comes from a file: the labels are
numbers and this module's own words.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["curves_svg"]

_W, _H = 720, 360
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 20, 40, 50
#: The most points the training line has (longer runs are thinned evenly).
MAX_LINE_POINTS = 2000


def _fmt(x: float) -> str:
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _label(x: float) -> str:
    return f"{x:.4g}"


def _thinned(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= MAX_LINE_POINTS:
        return list(points)
    step = len(points) / MAX_LINE_POINTS
    return [points[int(i * step)] for i in range(MAX_LINE_POINTS)] + [points[-1]]


def curves_svg(episodes: Sequence[tuple[float, float]], evaluations: Sequence[tuple[float, float, float]]) -> str:
    """The chart of ``episodes`` (timesteps, return) and ``evaluations`` (timesteps, mean, std) as an SVG document."""
    xs = [e[0] for e in episodes] + [e[0] for e in evaluations]
    ys = [e[1] for e in episodes] + [v for _, m, s in evaluations for v in (m - s, m + s)]
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    y0, y1 = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if x1 <= x0:
        x0, x1 = x0 - 1, x1 + 1
    if y1 <= y0:
        y0, y1 = y0 - 1, y1 + 1
    pw, ph = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM

    def px(x: float) -> str:
        return _fmt(_LEFT + (x - x0) / (x1 - x0) * pw)

    def py(y: float) -> str:
        return _fmt(_TOP + ph - (y - y0) / (y1 - y0) * ph)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{_W}" height="{_H}" fill="white"/>',
        f'<text x="{_W // 2}" y="22" text-anchor="middle" font-size="15">Training curves</text>',
        f'<path d="M{_LEFT},{_TOP}V{_TOP + ph}H{_LEFT + pw}" fill="none" stroke="black"/>',
    ]
    for frac in (0.0, 0.5, 1.0):
        x, y = x0 + frac * (x1 - x0), y0 + frac * (y1 - y0)
        out.append(f'<text x="{px(x)}" y="{_TOP + ph + 18}" text-anchor="middle">{_label(x)}</text>')
        out.append(f'<text x="{_LEFT - 6}" y="{py(y)}" text-anchor="end" dominant-baseline="middle">{_label(y)}</text>')
    out.append(f'<text x="{_LEFT + pw // 2}" y="{_H - 10}" text-anchor="middle">environment steps</text>')
    out.append(
        f'<text x="16" y="{_TOP + ph // 2}" text-anchor="middle" transform="rotate(-90 16 {_TOP + ph // 2})">return</text>'
    )
    line = _thinned([(e[0], e[1]) for e in episodes])
    if line:
        d = "M" + "L".join(f"{px(x)},{py(y)}" for x, y in line)
        out.append(f'<path d="{d}" fill="none" stroke="#7aa6d6" stroke-width="1"/>')
    for x, m, s in evaluations:
        out.append(f'<path d="M{px(x)},{py(m - s)}V{py(m + s)}" stroke="#c0392b" stroke-width="1.5"/>')
        out.append(f'<circle cx="{px(x)}" cy="{py(m)}" r="3.5" fill="#c0392b"/>')
    legend = []
    if line:
        legend.append(("#7aa6d6", "training episodes"))
    if evaluations:
        legend.append(("#c0392b", "evaluations (mean, std)"))
    for i, (colour, words) in enumerate(legend):
        y = _TOP + 8 + 16 * i
        out.append(f'<rect x="{_LEFT + pw - 170}" y="{y - 6}" width="12" height="4" fill="{colour}"/>')
        out.append(f'<text x="{_LEFT + pw - 152}" y="{y}" dominant-baseline="middle">{words}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
