"""Evaluation results: one JSON file per (task, encoder) run under ``results/``.

Each file holds the task, dataset and its file checksums, the encoder id, every score, the main score,
the protocol options, seconds taken and the xlsent version; ``xlsent report`` renders them. Saving never
replaces a result that covers a subset (language, pair, row) the new one lacks, unless asked to: a run
on a few languages cannot clobber the full one.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from xlsent.atomic import write_json
from xlsent.checksum import sha256_file
from xlsent.version import __version__

log = logging.getLogger(__name__)


class ResultExistsError(FileExistsError):
    """Saving would replace a result that has scores the new one lacks."""


@dataclass
class TaskResult:
    """The outcome of one evaluation run.

    ``scores`` maps a sub-set name (usually a language or language pair) to a dict of metrics, of which
    ``subset_metric`` is the one tables show (empty in older files: then ``main_metric``); ``averages`` holds
    averages named by what they average; ``main_score`` is the headline number (percent, higher is better) and
    ``main_metric`` says what it is. A study's result also holds ``verdicts``: each claim it checked on its rows,
    as ``claim``, ``held`` (true, false or null: undecided), ``evidence`` and ``source`` (``paper`` or ``xlsent``).
    """

    task: str
    encoder: str
    dataset: str
    main_score: float
    main_metric: str
    scores: dict[str, dict[str, float]]
    averages: dict[str, float] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    dataset_files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    variant: str = ""
    subset_metric: str = ""
    xlsent_version: str = __version__
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))

    def file_name(self) -> str:
        """``<task>[-<variant>]__<encoder>.json`` with unsafe characters replaced."""
        return result_file_name(self.task, self.encoder, self.variant)

    def save(self, out_dir: str | Path, *, overwrite: bool = False) -> Path:
        """Write the result atomically into ``out_dir`` and return the path.

        An existing file is replaced when it holds a result of the same weights (any backend) that covers no
        subset this result lacks (a re-run, or a fuller run), or with ``overwrite``; otherwise
        :class:`ResultExistsError` says what would be lost: another model's result, or subsets.
        """
        path = Path(out_dir) / self.file_name()
        check_result_path(path)
        if overwrite:
            write_json(path, asdict(self))
            return path
        existing, saved_encoder = _saved(path)
        check_same_weights(path, self.task, saved_encoder, self.encoder)
        lost = sorted(existing - set(self.scores))
        if lost:
            shown = ", ".join(lost[:8]) + (f" and {len(lost) - 8} more" if len(lost) > 8 else "")
            raise ResultExistsError(
                f"{path} holds {self.task} scores for {len(existing)} subset(s), this run has "
                f"{len(self.scores)}: replacing it would lose {shown}. Not saved: write elsewhere with "
                "-o/--output DIR, or replace it with --overwrite")
        write_json(path, asdict(self))
        return path


def result_file_name(task: str, encoder_id: str, variant: str = "") -> str:
    """The name of the result file of ``task`` (and ``variant``) for the encoder ``encoder_id``: its name only,
    so a re-run with new weights or on another backend lands in the same file.

    >>> result_file_name("tatoeba", "me5-small@8fdd1051c86ad183+openvino-bf16")
    'tatoeba__me5-small.json'
    """
    stem = task + (f"-{variant}" if variant else "")
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{stem}__{encoder_id.split('@')[0]}") + ".json"


def check_same_weights(path: Path, task: str, saved_encoder: str | None, encoder_id: str) -> None:
    """:class:`ResultExistsError` when the result saved at ``path`` is of other weights than ``encoder_id``'s (two
    models of one name: saving would replace the other's result); a backend of the same weights may replace it. A
    file there that holds no readable result (``saved_encoder`` None: not JSON, not a result) is refused too: what
    it holds is not known, so it is not replaced without ``--overwrite``."""
    if saved_encoder is None and path.is_file():
        raise ResultExistsError(
            f"{path} holds no readable {task} result (not a JSON object with an encoder): replacing it could lose "
            "what it is. Not saved: move it away, write elsewhere with -o/--output DIR, or replace it with "
            "--overwrite")
    if saved_encoder is not None and saved_encoder.partition("+")[0] != encoder_id.partition("+")[0]:
        raise ResultExistsError(
            f"{path} holds the {task} result of {saved_encoder}, another model of the same name as this run's "
            f"{encoder_id}: replacing it would lose that model's result. Not saved: write elsewhere with "
            "-o/--output DIR, rename one of the models, or replace it with --overwrite")


def check_result_path(path: Path) -> None:
    """``ValueError`` naming ``path`` when something other than a file (a folder) stands where its result goes."""
    if path.exists() and not path.is_file():
        raise ValueError(f"{path}: is a folder (or another non-file) where the result file goes: move it "
                         "away, or write elsewhere with -o/--output DIR")


def check_saveable(out_dir: str | Path, task: str, encoder_id: str, *, overwrite: bool = False) -> None:
    """Refuse, before a run, a result of ``task`` that could not be saved in ``out_dir``: a folder stands where
    its file goes (:func:`check_result_path`), or, without ``overwrite``, the file there holds another model's
    result (see :func:`check_same_weights`)."""
    path = Path(out_dir) / result_file_name(task, encoder_id)
    check_result_path(path)
    if not overwrite:
        check_same_weights(path, task, _saved(path)[1], encoder_id)


def _saved(path: Path) -> tuple[set[str], str | None]:
    """The subsets scored in the result file at ``path`` and its encoder id (none when there is no readable
    result)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set(), None
    if not isinstance(raw, dict):
        return set(), None
    scores, encoder = raw.get("scores"), raw.get("encoder")
    return set(scores) if isinstance(scores, dict) else set(), encoder if isinstance(encoder, str) else None


REQUIRED = ("task", "encoder", "dataset", "main_score", "main_metric", "scores")
"""The fields without a default: a JSON object holding ``task`` and ``main_score`` is a result and needs them all."""


class ResultFileError(ValueError):
    """A result file that cannot be read back: not JSON, or a result with fields missing or of the wrong type."""


def load_result(path: str | Path) -> TaskResult | None:
    """The task result saved at ``path``; None when the JSON file holds something else (no ``task`` and
    ``main_score``); :class:`ResultFileError` naming the file when it is not JSON or a result is incomplete."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultFileError(f"{path}: not a readable result JSON ({exc}): fix or remove the file") from exc
    if not (isinstance(raw, dict) and {"task", "main_score"} <= raw.keys()):
        return None
    missing = [name for name in REQUIRED if name not in raw]
    if missing:
        raise ResultFileError(f"{path}: result JSON lacks field(s) {', '.join(missing)}: re-run its evaluation, "
                              "or remove the file")
    if not (isinstance(raw["main_score"], int | float) and isinstance(raw["scores"], dict)
            and all(isinstance(v, dict) for v in raw["scores"].values())):
        raise ResultFileError(f"{path}: result JSON has a main_score that is not a number or scores that are not "
                              "{subset: {metric: value}}: re-run its evaluation, or remove the file")
    return TaskResult(**{k: v for k, v in raw.items() if k in TaskResult.__dataclass_fields__})


def load_result_files(results_dir: str | Path) -> dict[Path, TaskResult]:
    """Every result JSON in ``results_dir`` by its path, in path order; JSON of another shape is skipped with a warning
    naming it, and :class:`ResultFileError` names a result file that cannot be read back."""
    out = {}
    for path in sorted(Path(results_dir).glob("*.json")):
        result = load_result(path)
        if result is None:
            log.warning("%s: skipped, not a result JSON (no task and main_score fields)", path)
        else:
            out[path] = result
    return out


def load_results(results_dir: str | Path) -> list[TaskResult]:
    """Every result of :func:`load_result_files`, sorted by task, variant and encoder."""
    return sorted(load_result_files(results_dir).values(), key=lambda r: (r.task, r.variant, r.encoder))


def file_checksums(paths: list[Path], root: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of the dataset files a task read."""
    return {str(p.relative_to(root)) if p.is_relative_to(root) else str(p): sha256_file(p) for p in paths}


def recorded_result(results_dir: str | Path, task: str, encoder_id: str, root: Path) -> TaskResult | None:
    """The plain (no variant) result of ``task`` for exactly ``encoder_id`` saved in ``results_dir``, if every
    dataset file it read is unchanged under ``root`` (same sha256); else None. An encoder id names the weights and
    any lossy backend, so the same id on the same files gives the same vectors: a study reuses such a result
    instead of encoding the data again (an hour of CPU for the default encoder's Tatoeba, BUCC and intent rows on
    an AVX2 machine)."""
    for path in sorted(Path(results_dir).glob(f"{task}__*.json")):
        result = load_result(path)
        if result is None or result.task != task or result.variant or result.encoder != encoder_id:
            continue
        files = [root / name for name in result.dataset_files]
        if result.dataset_files and all(f.is_file() for f in files) and file_checksums(files, root) == \
                result.dataset_files:
            log.info("%s: reusing the saved %s result of %s (dataset files unchanged)", path, task, encoder_id)
            return result
    return None

