"""Curves a study keeps in its result (``options[CURVES_KEY]``), which ``xlsent report`` plots: panels side by side
over one x axis, a line per series (a marker alone for a series of one point), a series the same colour in every
panel.

The stored form (JSON)::

    {"x": "minutes since the run started",
     "panels": [{"y": "held-out pooled retrieval (dev)", "series": {"shipped": [[4.1, 96.98], [11.8, 97.19]]}},
                {"y": "Tatoeba-112 (test)", "series": {"shipped": [[11.8, 76.5]]}}]}
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from xlsent.report.formatting import ordered_union, save_png

log = logging.getLogger(__name__)

CURVES_KEY = "curves"
"""The result option that holds a study's curves (left out of the options line of its section)."""


def curves(x: str, panels: dict[str, dict[str, list[tuple[float, float]]]]) -> dict[str, Any]:
    """The stored form of ``panels`` (y label -> series name -> points) over the axis ``x``.

    >>> curves("minutes", {"accuracy": {"a": [(1.0, 90.0)]}})
    {'x': 'minutes', 'panels': [{'y': 'accuracy', 'series': {'a': [[1.0, 90.0]]}}]}
    """
    return {"x": x, "panels": [{"y": y, "series": {name: [[float(a), float(b)] for a, b in points]
                                                   for name, points in series.items()}}
                               for y, series in panels.items()]}


def plot_curves(spec: Any, title: str, path: Path) -> bool:
    """Plot the stored curves ``spec`` into ``path``; False (with a warning naming ``title``) when it is malformed."""
    try:
        panels = [(str(p["y"]), {str(name): [(float(a), float(b)) for a, b in points]
                                 for name, points in p["series"].items()}) for p in spec["panels"]]
        x_label = str(spec["x"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        log.warning("%s: curves not plotted: malformed %r option (%s)", title, CURVES_KEY, exc)
        return False
    if not panels:
        return False
    colours = {name: f"C{i % 10}" for i, name in enumerate(ordered_union(series for _, series in panels))}
    fig = Figure(figsize=(5.0 * len(panels), 4.5))
    handles = {}
    for i, (y_label, series) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        for name, points in series.items():
            if points:
                xs, ys = zip(*sorted(points), strict=True)
                handles[name] = ax.plot(xs, ys, "o-", ms=4, lw=1.2, color=colours[name], label=name)[0]
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.grid(alpha=0.3)
    names = [name for name in colours if name in handles]
    fig.legend([handles[n] for n in names], names, fontsize=8, loc="lower center", ncol=2, frameon=False)
    fig.suptitle(title)
    fig.subplots_adjust(bottom=0.22 + 0.04 * ((len(names) + 1) // 2))
    save_png(fig, path)
    return True
