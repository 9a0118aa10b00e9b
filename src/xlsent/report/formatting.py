"""How ``xlsent report`` writes what its sections show: numbers, markdown tables, and plot PNGs with their links.

Shared by the task sections (:mod:`xlsent.report.page`), the Benchmarks section
(:mod:`xlsent.report.bench`) and the Training runs section (:mod:`xlsent.report.training_runs`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from xlsent.atomic import atomic_path


def fmt(value: float | None) -> str:
    """One decimal; empty for a missing value, ``-`` for NaN.

    >>> fmt(93.456), fmt(None), fmt(float("nan"))
    ('93.5', '', '-')
    """
    if value is None:
        return ""
    return "-" if math.isnan(value) else f"{value:.1f}"


def fmt_metric(value: float | None) -> str:
    """Like :func:`fmt`, but four significant digits below 10 (thresholds, ratios, small counts).

    >>> fmt_metric(87.449), fmt_metric(1.0190), fmt_metric(None)
    ('87.4', '1.019', '')
    """
    if value is None or math.isnan(value) or abs(value) >= 10:
        return fmt(value)
    return f"{value:.4g}"


def fmt_number(value: float) -> str:
    """A measured figure: whole numbers from 100 up, then one, two or three significant decimals.

    >>> fmt_number(229.4), fmt_number(15.04), fmt_number(8.5), fmt_number(0.00039825), fmt_number(226)
    ('229', '15.0', '8.50', '0.000398', '226')
    """
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3g}"


OUTCOMES = {True: "HELD", False: "DID NOT HOLD", None: "INCONCLUSIVE"}


def verdict_text(verdict: Mapping[str, Any]) -> str:
    """One verdict of a study's result (claim, held, evidence, source) as a line of text.

    >>> verdict_text({"claim": "A beats B", "held": False, "evidence": "60.0 vs 61.0", "source": "paper"})
    'DID NOT HOLD here: A beats B (60.0 vs 61.0)'
    >>> verdict_text({"claim": "A keeps C", "held": True, "evidence": "90.0 vs 91.0", "source": "xlsent"})
    'HELD here (xlsent check, not a paper claim): A keeps C (90.0 vs 91.0)'
    """
    check = " (xlsent check, not a paper claim)" if verdict["source"] == "xlsent" else ""
    return f"{OUTCOMES[verdict['held']]} here{check}: {verdict['claim']} ({verdict['evidence']})"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A GitHub markdown table (first column left-aligned, the others right-aligned).

    >>> markdown_table(["x", "a"], [["r", "1.0"]])
    ['| x | a |', '|:--|--:|', '| r | 1.0 |']
    """
    lines = ["| " + " | ".join(header) + " |", "|:--|" + "--:|" * (len(header) - 1)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def ordered_union(keys: Iterable[Iterable[str]]) -> list[str]:
    """Every key of every group once, in the order first seen (the rows or columns of a table, the lines of a plot).

    >>> ordered_union([["b", "a"], ["c", "a"]])
    ['b', 'a', 'c']
    """
    return list(dict.fromkeys(k for group in keys for k in group))


def safe_name(name: str) -> str:
    """``name`` as a file-name part: each run of characters other than letters, digits, ``.``, ``_``, ``-`` -> ``_``.

    >>> safe_name("tatoeba (margin)"), safe_name("dual-pivot/sup de+en")
    ('tatoeba_margin_', 'dual-pivot_sup_de_en')
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def save_png(fig: Figure, path: Path) -> None:
    """Write ``fig`` to ``path`` as a PNG (100 dpi, tight bounding box), atomically."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100, bbox_inches="tight")


def plot_link(plot: Path, docs_path: Path) -> str:
    """The link to ``plot`` from the markdown file ``docs_path``.

    >>> plot_link(Path("docs/plots/a.png"), Path("docs/results.md")), plot_link(Path("out/a.png"), Path("docs/r.md"))
    ('plots/a.png', '../out/a.png')
    """
    return Path(os.path.relpath(plot, docs_path.parent)).as_posix()


def link_target(link: str) -> str:
    """``link`` as a markdown link's target: in angle brackets where it holds a space or a parenthesis, which end a
    plain target (CommonMark), so a plots folder named ``my plots`` still shows its images.

    >>> link_target("plots/a.png"), link_target("../b c/a (1).png")
    ('plots/a.png', '<../b c/a (1).png>')
    """
    return f"<{link}>" if re.search(r"[\s()<>]", link) else link


def image_line(link: str) -> str:
    """The markdown image of the plot at ``link`` (relative to the page), its file's stem as the alt text.

    >>> image_line("../my plots/a.png")
    '![a](<../my plots/a.png>)'
    """
    return f"![{Path(link).stem}]({link_target(link)})"
