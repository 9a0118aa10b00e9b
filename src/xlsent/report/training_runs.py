"""The "Training runs" section of ``xlsent report``, from ``train.jsonl`` logs (format in :mod:`xlsent.training`): a
row per run (steps, final loss terms, languages drawn, best validation score and its step) and a plot of the loss
terms and the validation criterion against the step.
"""

from __future__ import annotations

import glob
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from xlsent.report.formatting import (
    fmt_metric,
    fmt_number,
    image_line,
    link_target,
    markdown_table,
    ordered_union,
    plot_link,
    safe_name,
    save_png,
)
from xlsent.training import DRAW_PREFIX

log = logging.getLogger(__name__)


@dataclass
class TrainPoint:
    """A logging line of ``train.jsonl``: loss terms averaged over the interval that ends at ``step``."""

    step: int
    losses: dict[str, float]
    elapsed_s: float | None = None


@dataclass
class ValidationPoint:
    """A validation line of ``train.jsonl``: every metric, the one that selects checkpoints, whether it won, and the
    seconds since the run started (None where the line does not say)."""

    step: int
    metrics: dict[str, float]
    criterion: str
    best: bool
    elapsed_s: float | None = None


@dataclass
class TrainLog:
    """The lines of one ``train.jsonl`` that parse, in step order."""

    path: Path
    train: list[TrainPoint]
    validation: list[ValidationPoint]

    @property
    def last_step(self) -> int:
        """The highest step logged."""
        return max([p.step for p in self.train] + [v.step for v in self.validation], default=0)

    @property
    def terms(self) -> list[str]:
        """The loss terms logged, in the order first seen (not the languages' draw shares)."""
        return [t for t in ordered_union(p.losses for p in self.train) if not t.startswith(DRAW_PREFIX)]

    @property
    def drawn(self) -> list[str]:
        """The languages whose draw share some line logged, in the order first seen."""
        return [t.removeprefix(DRAW_PREFIX) for t in ordered_union(p.losses for p in self.train)
                if t.startswith(DRAW_PREFIX)]

    @property
    def best(self) -> ValidationPoint | None:
        """The last validation that was marked best (the checkpoint kept), or None."""
        return next((v for v in reversed(self.validation) if v.best), None)


def _number_dict(value: Any, name: str) -> dict[str, float]:
    if not isinstance(value, dict) or not value or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()):
        raise ValueError(f"{name!r} is not an object of numbers")
    return {str(k): float(v) for k, v in value.items()}


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def parse_train_line(text: str) -> TrainPoint | ValidationPoint:
    """One ``train.jsonl`` line; ValueError saying why when it is neither a logging nor a validation line.

    >>> parse_train_line('{"step": 5, "elapsed_s": 1.5, "lr": {"m": 0.1}, "losses": {"loss": 0.25}}')
    TrainPoint(step=5, losses={'loss': 0.25}, elapsed_s=1.5)
    >>> parse_train_line('{"step": 5, "validation": {"acc": 90}, "criterion": "acc", "best": true}')
    ValidationPoint(step=5, metrics={'acc': 90.0}, criterion='acc', best=True, elapsed_s=None)
    """
    try:
        line = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(line, dict):
        raise ValueError("not a JSON object")
    if "step" not in line:
        raise ValueError("no step")
    step = line["step"]
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise ValueError(f"step {json.dumps(step)} is not a whole number from 0 up")
    if "validation" in line:
        metrics = _number_dict(line["validation"], "validation")
        criterion, best = line.get("criterion"), line.get("best")
        if criterion not in metrics or not isinstance(best, bool):
            raise ValueError("a validation line needs its criterion among the metrics and best: true/false")
        return ValidationPoint(step, metrics, str(criterion), best, _seconds(line.get("elapsed_s")))
    if "losses" in line:
        return TrainPoint(step, _number_dict(line["losses"], "losses"), _seconds(line.get("elapsed_s")))
    raise ValueError("neither losses nor validation")


def read_train_log(path: Path) -> TrainLog:
    """The lines of ``path`` that parse; a malformed line is skipped with a warning naming the file and line, and
    a file that is not UTF-8 text gives no lines and a warning naming it. A line whose step is below an earlier
    line's starts a resumed run: the earlier lines from that step on are dropped."""
    result = TrainLog(path, [], [])
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        log.warning("%s: not UTF-8 text (%s)", path, exc)
        return result
    last = -1
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            point = parse_train_line(text)
        except ValueError as exc:
            log.warning("%s:%d: skipped malformed line: %s", path, number, exc)
            continue
        if point.step < last:
            log.info("%s:%d: step %d after step %d: a resumed run replaces the lines from there", path, number,
                     point.step, last)
            result.train = [p for p in result.train if p.step < point.step]
            result.validation = [v for v in result.validation if v.step < point.step]
        last = point.step
        if isinstance(point, TrainPoint):
            result.train.append(point)
        else:
            result.validation.append(point)
    return result


def plot_train_log(train_log: TrainLog, title: str, path: Path) -> None:
    """Loss terms against the step, the validation criterion on a second axis, the best validation marked."""
    fig = Figure(figsize=(8, 4.5))
    ax = fig.add_subplot()
    for term in train_log.terms:
        points = [(p.step, p.losses[term]) for p in train_log.train if term in p.losses]
        ax.plot(*zip(*points, strict=True), lw=1.2, label=term)
    ax.set_xlabel("step")
    ax.set_ylabel("loss (mean over the logging interval)")
    ax.grid(alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    if train_log.validation:
        criterion = train_log.validation[-1].criterion
        points = [(v.step, v.metrics[criterion]) for v in train_log.validation if criterion in v.metrics]
        ax2 = ax.twinx()
        handles += ax2.plot(*zip(*points, strict=True), "o-", color="black", ms=3, lw=1, label=f"{criterion} (val)")
        best = train_log.best
        if best is not None and criterion in best.metrics:
            handles += ax2.plot([best.step], [best.metrics[criterion]], "*", color="red", ms=14,
                                label=f"best {fmt_metric(best.metrics[criterion])} at step {best.step}")
            ax.axvline(best.step, color="red", ls=":", lw=1)
        ax2.set_ylabel(f"validation {criterion}")
    ax.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=4, frameon=False)
    ax.set_title(f"Training run {title}")
    save_png(fig, path)


def _glob_root(pattern: str) -> Path:
    """The folder part of a glob pattern before its first wildcard."""
    parts = Path(pattern).parts
    return Path(*parts[: next((i for i, p in enumerate(parts) if glob.has_magic(p)), len(parts))])


def _display(path: Path) -> str:
    """``path`` relative to the working directory where it lies below it."""
    absolute = path.resolve()
    return absolute.relative_to(Path.cwd()).as_posix() if absolute.is_relative_to(Path.cwd()) else absolute.as_posix()


def training_runs(pattern: str, plots_dir: Path, docs_path: Path) -> list[tuple[str, TrainLog, str]]:
    """Read and plot every log that ``pattern`` matches: (model folder, log, plot link) of those with lines; a
    warning names a pattern that matches nothing, and each match that is not a file or has no lines."""
    runs = []
    root = _glob_root(pattern)
    names = sorted(glob.glob(pattern, recursive=True))
    if not names:
        log.warning("--train-logs %s: matches no file, so the page has no Training runs section", pattern)
    for name in names:
        if not Path(name).is_file():
            log.warning("%s: not a file, left out (--train-logs %s matches it)", name, pattern)
            continue
        train_log = read_train_log(Path(name))
        if not train_log.train and not train_log.validation:
            log.warning("%s: no training or validation line, left out", name)
            continue
        folder = Path(name).parent
        rel = folder.relative_to(root) if folder.is_relative_to(root) and folder != root else Path(folder.name)
        plot = plots_dir / f"train__{safe_name(rel.as_posix())}.png"
        plot_train_log(train_log, _display(folder), plot)
        runs.append((_display(folder), train_log, plot_link(plot, docs_path)))
    return runs


def _duration(seconds: float | None) -> str:
    """``41 s``, ``12.5 min``, ``2.3 h``; empty when unknown."""
    if seconds is None:
        return ""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def training_section(runs: Sequence[tuple[str, TrainLog, str]]) -> list[str]:
    """The "Training runs" markdown: per (model folder, log, plot link), its steps, time, final loss terms, best
    validation score and step, and the plot."""
    rows = []
    for folder, train_log, link in runs:
        last = train_log.train[-1] if train_log.train else None
        best = train_log.best
        rows.append([f"`{folder}`", str(train_log.last_step),
                     _duration(last.elapsed_s if last else None),
                     ", ".join(f"{k} {fmt_number(last.losses[k])}" for k in train_log.terms if k in last.losses)
                     + (f"; {len(train_log.drawn)} languages drawn" if train_log.drawn else "") if last else "",
                     f"{best.criterion} {fmt_metric(best.metrics[best.criterion])} at step {best.step}" if best else "",
                     f"[plot]({link_target(link)})"])
    lines = ["## Training runs", "", "From each run's `train.jsonl` (`xlsent report --train-logs GLOB`). Final loss "
             "terms: means over the last logging interval; best validation: the criterion of the checkpoint kept.",
             ""]
    lines += markdown_table(["model folder", "steps", "time", "final loss terms", "best validation", "plot"], rows)
    return lines + [""] + [line for _, _, link in runs for line in (image_line(link), "")]
