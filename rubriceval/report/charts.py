"""SVG chart geometry for the HTML reports (bars, columns, labels shortened by rendered width)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

COLOR_PASS, COLOR_FAIL, COLOR_NEUTRAL = "#2e7d32", "#c62828", "#1565c0"


def _label_width(text: str) -> float:
    """Approximate rendered width in px at 12px: CJK glyphs are about twice as wide as Latin ones."""
    return sum(12.0 if ord(ch) > 0x2E80 else 7.0 for ch in text)


def shorten_label(text: str, max_px: float) -> str:
    if _label_width(text) <= max_px:
        return text
    while text and _label_width(text + "…") > max_px:
        text = text[:-1]
    return text + "…"


def hbar_chart(items: Sequence[tuple[str, float | None, float | None, str]], lo: float, hi: float,
               width: int = 560, bar_height: int = 22) -> dict[str, Any]:
    """Horizontal bars for means on [lo, hi]: (label, value, threshold, value text). A None value draws no bar."""
    label_w, value_w, gap = 170, 70, 8
    plot_w = width - label_w - value_w
    span = hi - lo

    def x(v: float) -> float:
        return label_w + plot_w * (min(max(v, lo), hi) - lo) / span

    bars = []
    for i, (label, value, threshold, text) in enumerate(items):
        y = 10 + i * (bar_height + gap)
        passed = None if value is None or threshold is None else value >= threshold
        bars.append({
            "label": shorten_label(label, label_w - 12), "full_label": label, "y": y, "h": bar_height,
            "x0": label_w, "w": 0 if value is None else max(1.0, x(value) - label_w),
            "text": text, "text_x": label_w + plot_w + 6,
            "tx": None if threshold is None else x(threshold),
            "color": COLOR_NEUTRAL if passed is None else (COLOR_PASS if passed else COLOR_FAIL),
        })
    height = 10 + len(items) * (bar_height + gap) + 18
    ticks = [{"x": x(lo + span * k / 4), "label": f"{lo + span * k / 4:g}"} for k in range(5)]
    return {"width": width, "height": height, "bars": bars, "ticks": ticks, "axis_y": height - 16,
            "plot_x0": label_w, "plot_x1": label_w + plot_w}


def column_chart(labels: Sequence[str], counts: Sequence[int], passing: Sequence[bool | None],
                 width: int = 300, height: int = 150) -> dict[str, Any]:
    """Vertical bars of counts (a 1–5 distribution or a 0–1 histogram), coloured by whether the bin passes."""
    top, bottom = 18, 22
    plot_h = height - top - bottom
    n = max(1, len(counts))
    slot = width / n
    peak = max(counts) if counts and max(counts) > 0 else 1
    cols = []
    for i, (label, count, ok) in enumerate(zip(labels, counts, passing)):
        h = plot_h * count / peak
        cols.append({"x": i * slot + slot * 0.15, "w": slot * 0.7, "y": top + plot_h - h, "h": h,
                     "count": count, "label": label, "cx": i * slot + slot / 2,
                     "color": COLOR_NEUTRAL if ok is None else (COLOR_PASS if ok else COLOR_FAIL)})
    return {"width": width, "height": height, "cols": cols, "base_y": top + plot_h, "label_y": height - 6}


LINE_COLORS = ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037", "#ad1457")


def line_chart(periods: Sequence[str], series: Sequence[tuple[str, Sequence[tuple[str, float | None, float | None,
                                                                                     float | None]]]],
               lo: float, hi: float, width: int = 640, height: int = 220) -> dict[str, Any]:
    """Lines over periods (trend): series = (label, [(period, value, ci low, ci high), …]); a CI is a vertical
    whisker at its point; a period a series lacks breaks nothing (the line joins the points it has)."""
    left, right, top, bottom = 44, 150, 12, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    span = (hi - lo) or 1.0
    step = plot_w / max(1, len(periods) - 1)
    place = {p: left + (i * step if len(periods) > 1 else plot_w / 2) for i, p in enumerate(periods)}

    def y(v: float) -> float:
        return top + plot_h * (1 - (min(max(v, lo), hi) - lo) / span)

    lines = []
    for i, (label, points) in enumerate(series):
        color = LINE_COLORS[i % len(LINE_COLORS)]
        pts = [{"x": place[p], "y": y(v), "text": f"{p}: {v:.2f}" + (f" [{a:.2f}, {b:.2f}]" if a is not None and
                                                                       b is not None else ""),
                "y_low": None if a is None else y(a), "y_high": None if b is None else y(b)}
               for p, v, a, b in points if v is not None and p in place]
        lines.append({"label": shorten_label(label, right - 24), "full_label": label, "color": color, "points": pts,
                      "path": " ".join(f"{pt['x']:.1f},{pt['y']:.1f}" for pt in pts),
                      "legend_y": top + 14 * i + 10})
    ticks = [{"y": y(lo + span * k / 4), "label": f"{lo + span * k / 4:g}"} for k in range(5)]
    labels = [{"x": x, "label": shorten_label(p, max(step, 40) - 4)} for p, x in place.items()]
    return {"width": width, "height": height, "lines": lines, "ticks": ticks, "periods": labels,
            "plot_x0": left, "plot_x1": left + plot_w, "axis_y": top + plot_h, "legend_x": left + plot_w + 12}
