"""What every evaluation task shares (after MTEB): its metadata, and the run that scores an embedding function.

A task module declares ``METADATA`` (what it measures, on which data, for which papers) and a :class:`Task`
subclass that lists the subsets its data offer, scores one subset from the embeddings of an :data:`EmbedFn`, and
sums the subsets up; :meth:`Task.evaluate` does the rest, the same way for every task (timer, data root, subset
check, progress bar, data checksums, the :class:`~xlsent.evaluation.results.TaskResult`). Anything that turns
sentences into unit rows can be scored: an :class:`~xlsent.encoders.base.Encoder` (through :func:`encoder_embed`),
a model being trained, or a study's projection of cached states.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from tqdm.auto import tqdm

from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import cached_encode
from xlsent.evaluation.results import TaskResult, file_checksums
from xlsent.languages import named_among
from xlsent.paths import data_root

EmbedFn = Callable[[Sequence[str], str | None], np.ndarray]
"""``embed(sentences, lang) -> (len(sentences), dim)`` array of unit rows, row i <-> ``sentences[i]``."""


def encoder_embed(encoder: Encoder) -> EmbedFn:
    """The :data:`EmbedFn` of ``encoder``, read from or written to the on-disk encoding cache."""
    return lambda sentences, lang: cached_encode(encoder, sentences, lang)


@dataclass(frozen=True)
class TaskMetadata:
    """What a task measures and on what (MTEB's ``TaskMetadata``, reduced to what xlsent uses).

    ``languages`` are the codes the data cover, in the data's own spelling; where the task finds them in its data
    folder instead, it is empty and ``languages_note`` says how. ``data_files`` are glob patterns relative to the
    data root (:func:`xlsent.paths.data_root`). ``main_score`` says in words what ``TaskResult.main_score`` is.
    ``papers`` name the papers of ``shared/papers`` whose numbers the task reproduces (file number and short
    name); ``reference`` cites the task's data.
    """

    name: str
    description: str
    languages: tuple[str, ...]
    data_files: tuple[str, ...]
    main_score: str
    papers: tuple[str, ...]
    reference: str
    languages_note: str = ""


@dataclass(frozen=True)
class Summary:
    """What a task makes of its subsets' scores: the :class:`~xlsent.evaluation.results.TaskResult` fields that
    depend on the task, and the data files the run read (``files``, checksummed into the result)."""

    dataset: str
    main_score: float
    main_metric: str
    averages: dict[str, float]
    options: dict[str, Any]
    notes: list[str]
    files: list[Path]
    variant: str = ""


@dataclass(frozen=True)
class SubsetScore:
    """The metrics of one subset, and a note on the subset's data for the result's notes (none when empty)."""

    metrics: dict[str, float]
    note: str = ""


class NoDataError(ValueError):
    """A task's data folder offers nothing to score: no subset, a subset without sentences, or no score; or it
    lacks the files of a subset that ``langs`` names."""


class UnknownSubsetError(ValueError):
    """``langs`` names a subset that the task's benchmark does not have, whatever the data folder holds."""


def _refusing_empty(embed: EmbedFn, metadata: TaskMetadata, base: Path) -> EmbedFn:
    """``embed``, raising :class:`NoDataError` (naming the data folder) when asked to embed no sentences."""
    def checked(sentences: Sequence[str], lang: str | None) -> np.ndarray:
        if len(sentences) == 0:
            which = f"{lang} " if lang else ""
            raise NoDataError(f"{metadata.name}: the {which}data under {base} hold no sentences (empty files? looked "
                              f"for {', '.join(metadata.data_files)}): fetch the data again. Not saved")
        return embed(sentences, lang)
    return checked


class Task(ABC):
    """One run of an evaluation task on one embedding function (MTEB's ``AbsTask``, reduced to what xlsent uses).

    A subclass declares :attr:`metadata`, what its subsets are called (:attr:`subset_kind` in errors, :attr:`unit`
    on the progress bar), the metric tables show for a subset (:attr:`subset_metric`), takes its options as keyword
    arguments after ``embed`` and ``base``, and fills in :meth:`known_subsets`, :meth:`score` (one subset) and
    :meth:`summarise` (all of them); :meth:`default_subsets`, :meth:`select` and :meth:`row` have defaults.
    """

    metadata: ClassVar[TaskMetadata]
    subset_kind: ClassVar[str]
    subset_metric: ClassVar[str]
    unit: ClassVar[str] = "lang"
    data_check_options: ClassVar[dict[str, Any]] = {}
    """Stand-ins for the options that :meth:`encoder_options` gives, with which :meth:`check_data` builds the task
    before any encoder exists (nothing is scored with them)."""

    def __init__(self, embed: EmbedFn, base: Path) -> None:
        self.embed = embed
        self.base = base

    @classmethod
    def evaluate(cls, embed: EmbedFn, *, encoder_id: str, langs: Sequence[str] | None = None,
                 root: str | Path | None = None, progress: bool = False, **options: Any) -> TaskResult:
        """Score ``embed`` on the subsets named in ``langs`` (default: the task's usual ones) of the data under
        ``root`` (default :func:`xlsent.paths.data_root`) and return the result (not yet saved).

        ``options`` are the task's own keyword arguments (its class says which). ``ValueError`` names any subset
        the data lack before anything is embedded; :class:`NoDataError` (a ``ValueError``) names the data folder
        when it offers no subset, a subset has no sentences, or no score comes out.
        """
        start = time.perf_counter()
        base = data_root(root)
        task = cls(_refusing_empty(embed, cls.metadata, base), base, **options)
        subsets = task._subsets(langs)
        scored = {subset: task.score(subset)
                  for subset in tqdm(subsets, disable=not progress, desc=cls.metadata.name, unit=cls.unit)}
        scores = {task.row(subset): s.metrics for subset, s in scored.items()}
        summary = task.summarise(scores)
        if not math.isfinite(summary.main_score):
            raise NoDataError(f"{cls.metadata.name}: no item of the data under {base} could be scored (main score "
                              f"{summary.main_score}): check the files there. Not saved")
        files = [p for p in dict.fromkeys(summary.files) if p.is_file()]
        return TaskResult(
            task=cls.metadata.name, encoder=encoder_id, dataset=summary.dataset, main_score=summary.main_score,
            main_metric=summary.main_metric, subset_metric=cls.subset_metric, scores=scores,
            averages=summary.averages, options=summary.options, dataset_files=file_checksums(files, task.base),
            seconds=time.perf_counter() - start, variant=summary.variant,
            notes=summary.notes + [s.note for s in scored.values() if s.note],
        )

    @classmethod
    def check_data(cls, *, langs: Sequence[str] | None = None, root: str | Path | None = None, **options: Any
                   ) -> list[str]:
        """The subsets that :meth:`evaluate` would score, found before any encoder is loaded: a ``ValueError`` names
        the subsets of ``langs`` the data under ``root`` lack, a :class:`NoDataError` the data folder when it offers
        none, or holds none of the task's data files (``options``: the task's own, as for :meth:`evaluate`)."""
        base = data_root(root)

        def never(sentences: Sequence[str], lang: str | None) -> np.ndarray:
            raise RuntimeError(f"{cls.metadata.name}: the data check embedded sentences")

        task = cls(never, base, **{**cls.data_check_options, **options})
        if not any(next(base.glob(pattern), None) for pattern in cls.metadata.data_files):
            raise task.no_data()  # a task whose subsets are a fixed list found out only once it read them
        return task._subsets(langs)

    def _subsets(self, langs: Sequence[str] | None) -> list[str]:
        """:meth:`select`'s subsets; a :class:`NoDataError` naming the data folder when there are none."""
        subsets = self.select(langs)
        if not subsets:
            raise self.no_data()
        return subsets

    def no_data(self) -> NoDataError:
        """The error of a data folder that offers the task nothing, naming it and the files looked for."""
        return NoDataError(f"{self.metadata.name}: no data under {self.base} (looked for "
                           f"{', '.join(self.metadata.data_files)}): fetch the data or point --data at it")

    @classmethod
    def encoder_options(cls, encoder: Encoder) -> dict[str, Any]:
        """Options of the task that depend on the encoder being evaluated (none unless a task says otherwise)."""
        return {}

    @abstractmethod
    def known_subsets(self) -> list[str]:
        """Every subset the data under ``self.base`` offer, as ``langs`` names them."""

    def all_subsets(self) -> list[str]:
        """Every subset of the benchmark, as ``langs`` names them, whether or not the data under ``self.base`` hold
        it: :meth:`known_subsets`, unless the task finds its subsets in its data folder."""
        return self.known_subsets()

    def subset_files(self, subset: str) -> list[str]:
        """The files (relative to ``self.base``, glob patterns allowed) that hold ``subset``, one of
        :meth:`all_subsets`: :attr:`metadata`'s ``data_files``, unless the task says otherwise."""
        return list(self.metadata.data_files)

    def default_subsets(self) -> list[str]:
        """The subsets a run scores when ``langs`` names none: all of them."""
        return self.known_subsets()

    def select(self, langs: Sequence[str] | None) -> list[str]:
        """The subsets a run on ``langs`` scores, in order. A language code names the subset the task spells
        another way (``de`` or ``deu``: see :func:`xlsent.languages.same_language`). :class:`UnknownSubsetError`
        names the codes that are no subset of the benchmark, then :class:`NoDataError` the subsets whose files the
        data lack, and those files."""
        known = self.known_subsets()
        benchmark = list(dict.fromkeys([*self.all_subsets(), *known]))
        chosen = (list(dict.fromkeys(_named(code, known, benchmark) for code in langs)) if langs
                  else self.default_subsets())
        unknown = sorted(set(chosen) - set(benchmark))
        if unknown:
            held = (f" (with files under {self.base}: {' '.join(known) or 'none'})"
                    if set(known) != set(benchmark) else "")
            raise UnknownSubsetError(f"unknown {self.subset_kind}(s) {unknown}; known: {' '.join(benchmark)}{held}")
        missing = [subset for subset in chosen if subset not in known]
        if missing:
            files = dict.fromkeys(f for subset in missing for f in self.subset_files(subset))
            raise NoDataError(f"the files of {self.subset_kind}(s) {missing} are not under {self.base}: "
                              f"{', '.join(files)} missing; fetch them, point --data at a folder that holds them, or "
                              f"leave them out of --langs (under it: {' '.join(known) or 'none'})")
        return chosen

    def row(self, subset: str) -> str:
        """The name of ``subset``'s row in the result's scores: the subset itself, unless a task says otherwise."""
        return subset

    @abstractmethod
    def score(self, subset: str) -> SubsetScore:
        """The metrics of one subset, from the embeddings of ``self.embed``."""

    @abstractmethod
    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        """Main score, averages, options, notes and data files of a run, from every subset's metrics (by row)."""


def _named(code: str, held: Sequence[str], benchmark: Sequence[str]) -> str:
    """The subset ``code`` names (:func:`~xlsent.languages.named_among`): among those the data hold first, so that
    a code naming one of them is not made ambiguous by subsets of the benchmark the data lack."""
    found = named_among(code, held)
    return found if found in held else named_among(code, benchmark)
