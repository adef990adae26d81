"""Small utilisation charts as PNG bytes, for inline images in the email and the HTML report.

Pillow draws them: a few kilobytes each, no plotting stack, and no remote URL for a mail client
to block.
"""

from __future__ import annotations

import io

import pandas as pd
from PIL import Image, ImageDraw

WIDTH, HEIGHT = 300, 72
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 4, 4, 4, 4
# Colours also used by the legend in the templates.
LINE_COLOURS = {"cpu": (49, 112, 191), "memory": (92, 184, 92), "gpu": (230, 126, 34)}
THRESHOLD_COLOUR = (217, 83, 79)
GRID_COLOUR = (230, 230, 230)


def utilisation_chart_png(series: pd.DataFrame, threshold: float = 50.0, days: int = 14) -> bytes | None:
    """CPU, memory and GPU (hourly maxima, 0-100%) over the last `days` days; None without data."""
    columns = [r for r in LINE_COLOURS if f"{r}:Maximum" in series.columns]
    if series.empty or not columns:
        return None
    end = series.index.max()
    start = end - pd.Timedelta(days=days)
    window = series[series.index > start]
    if window.empty:
        return None

    image = Image.new("RGB", (WIDTH, HEIGHT), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    plot_w = WIDTH - PAD_LEFT - PAD_RIGHT
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    span = (end - start).total_seconds()

    def y_of(percent: float) -> float:
        return PAD_TOP + plot_h * (1 - min(max(percent, 0.0), 100.0) / 100.0)

    for day in range(1, days):  # one faint line a day
        x = PAD_LEFT + plot_w * day / days
        draw.line([(x, PAD_TOP), (x, PAD_TOP + plot_h)], fill=GRID_COLOUR)
    draw.rectangle([PAD_LEFT, PAD_TOP, PAD_LEFT + plot_w, PAD_TOP + plot_h], outline=(200, 200, 200))
    threshold_y = y_of(threshold)
    for x in range(PAD_LEFT, PAD_LEFT + plot_w, 6):  # dashed threshold
        draw.line([(x, threshold_y), (min(x + 3, PAD_LEFT + plot_w), threshold_y)], fill=THRESHOLD_COLOUR)

    for resource in columns:
        values = window[f"{resource}:Maximum"].dropna()
        if values.size < 2:
            continue
        points = [
            (PAD_LEFT + plot_w * (ts - start).total_seconds() / span, y_of(float(v)))
            for ts, v in values.items()
        ]
        draw.line(points, fill=LINE_COLOURS[resource], width=1)

    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def weekly_trend_png(points: list[tuple[str, float | None, float | None]]) -> bytes | None:
    """Monthly spend (grey bars) and potential saving (green bars) per week; None without data."""
    known = [(w, c, s) for w, c, s in points if c is not None]
    if not known:
        return None
    width, height, pad, label_h = 480, 150, 8, 16
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    top = max(max(c or 0.0, s or 0.0) for _, c, s in known) or 1.0
    slot = (width - 2 * pad) / len(points)
    plot_h = height - pad - label_h
    for i, (week, cost, saving) in enumerate(points):
        x = pad + i * slot
        for offset, value, colour in ((0.15, cost, (170, 170, 170)), (0.5, saving, (92, 184, 92))):
            if value is None:
                continue
            bar_h = plot_h * value / top
            draw.rectangle([x + slot * offset, pad + plot_h - bar_h, x + slot * (offset + 0.33), pad + plot_h],
                           fill=colour)
        draw.text((x + slot * 0.1, height - label_h + 2), week[-3:], fill=(90, 90, 90))
    draw.line([(pad, pad + plot_h), (width - pad, pad + plot_h)], fill=(200, 200, 200))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()
