"""A line chart as SVG text, so a story's curve comparison needs no plotting library; curves
may carry a band (an interval per step), and charts can sit side by side in one file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from wild_stories.analysis import number

WIDTH, HEIGHT, MARGIN = 640, 400, 56
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


@dataclass(frozen=True)
class Series:
    """One curve: its label, y values at steps 1…N, colour index and whether it is dashed;
    `band` is a low and a high value per step, drawn as a shaded area around it."""

    label: str
    values: Sequence[float]
    colour: int = 0
    dashed: bool = False
    band: tuple[Sequence[float], Sequence[float]] | None = None


def _scale(lo: float, hi: float, size: float, flip: bool) -> tuple[float, float]:
    span = hi - lo or 1.0
    factor = size / span
    return (-factor, MARGIN + size + lo * factor) if flip else (factor, MARGIN - lo * factor)


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    y_label: str,
    first_step: int = 1,
    x_label: str = "step",
) -> str:
    """The curves on shared axes, with a legend; the first value of each is at `first_step`."""
    count = max((len(s.values) for s in series), default=1)
    last = first_step + max(count - 1, 1)
    drawn = [[*s.values, *(v for side in s.band or () for v in side)] for s in series]
    y_lo = min((min(v) for v in drawn if v), default=0.0)
    y_hi = max((max(v) for v in drawn if v), default=1.0)
    plot_w, plot_h = WIDTH - 2 * MARGIN - 150, HEIGHT - 2 * MARGIN
    xa, xb = _scale(first_step, last, plot_w, flip=False)
    ya, yb = _scale(y_lo, y_hi, plot_h, flip=True)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="24" text-anchor="middle" font-size="15">{escape(title)}</text>',
        f'<line x1="{MARGIN}" y1="{MARGIN + plot_h}" x2="{MARGIN + plot_w}" '
        f'y2="{MARGIN + plot_h}" stroke="black"/>',
        f'<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{MARGIN + plot_h}" stroke="black"/>',
        f'<text x="{MARGIN + plot_w / 2}" y="{HEIGHT - 14}" '
        f'text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{MARGIN + plot_h / 2}" transform="rotate(-90 14 {MARGIN + plot_h / 2})" '
        f'text-anchor="middle">{escape(y_label)}</text>',
    ]
    for k in range(5):
        value = y_lo + (y_hi - y_lo) * k / 4
        y = ya * value + yb
        parts.append(f'<text x="{MARGIN - 6}" y="{y + 4:.1f}" text-anchor="end">{value:.3g}</text>')
    for step in sorted({first_step, last, *range(5, last + 1, 5)}):
        x = xa * step + xb
        parts.append(
            f'<text x="{x:.1f}" y="{MARGIN + plot_h + 16}" text-anchor="middle">{step}</text>'
        )
    for s in series:  # every band first, so no band hides a curve
        if s.band:
            low, high = s.band
            edge = [(first_step + i, v) for i, v in enumerate(high)]
            edge += [(first_step + i, v) for i, v in reversed(list(enumerate(low)))]
            points = " ".join(f"{xa * x + xb:.1f},{ya * v + yb:.1f}" for x, v in edge)
            colour = COLOURS[s.colour % len(COLOURS)]
            parts.append(f'<polygon points="{points}" fill="{colour}" fill-opacity="0.12"/>')
    for n, s in enumerate(series):
        colour = COLOURS[s.colour % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        points = " ".join(
            f"{xa * (first_step + i) + xb:.1f},{ya * v + yb:.1f}" for i, v in enumerate(s.values)
        )
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        y = MARGIN + 18 * n
        x = WIDTH - MARGIN - 140
        parts.append(
            f'<line x1="{x}" y1="{y}" x2="{x + 24}" y2="{y}" stroke="{colour}" '
            f'stroke-width="2"{dash}/>'
        )
        parts.append(f'<text x="{x + 30}" y="{y + 4}">{escape(s.label)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def side_by_side(charts: Sequence[str]) -> str:
    """Charts from `line_chart` in one SVG, left to right."""
    inner = [
        chart.replace("<svg ", f'<svg x="{n * WIDTH}" y="0" ', 1) for n, chart in enumerate(charts)
    ]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH * len(charts)}" '
        f'height="{HEIGHT}">\n' + "".join(inner) + "</svg>\n"
    )


def mean_curve(curves: Sequence[Sequence[Mapping[str, float]]], key: str) -> list[float]:
    """The step-wise mean of `key` over curves, as long as the shortest curve; a step whose
    value is not a number counts as 0, so one bad line cannot break a chart."""
    usable = [c for c in curves if c]
    length = min((len(c) for c in usable), default=0)
    return [sum(number(c[i], key) or 0.0 for c in usable) / len(usable) for i in range(length)]
