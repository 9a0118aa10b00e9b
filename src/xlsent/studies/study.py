"""What a study module declares, one study being run, and the one result every study writes.

A study module (``xlsent.methods.<method>.study``, :class:`StudyModule`) names the task its results are filed
under, the data they are scored on, its ``Settings``, and its studies (:class:`Study`): a function that trains or
reuses models and evaluates them, filling a :class:`StudyRun`'s rows (models -> columns), the row it declares as
the paper's method (the result's summary score, never the best row) and the claims checked on the rows.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from xlsent.evaluation.results import TaskResult
from xlsent.studies.settings import StudySettings, recorded
from xlsent.studies.verdict import Verdict

Rows = dict[str, dict[str, float]]
"""A study's table: row (a model, baseline or paper figure) -> column -> value."""
Claims = Callable[[Rows, str, str], list[Verdict]]
"""``claims(rows, metric, method_row)``: the verdicts on a study's rows, given its summary column and row."""

S = TypeVar("S", bound=StudySettings)
FINGERPRINTS = "row fingerprints"
"""The option of a study result that maps each trained row to its model's configuration fingerprint."""


@dataclass
class StudyRun(Generic[S]):
    """One study being run with ``settings`` into ``out_dir``: the rows it accumulates and what it records beside
    them: notes on the run, options, task results saved next to the study's, the data files read (-> sha256),
    the summary row where the run decides it, and the time since it started.

    ``split`` is the value of the study's split setting this run covers (its result's variant is
    ``<study>-<split>``), empty for a study without one. ``previous`` is the study's saved result of the same
    variant, from which :meth:`carry` takes the rows of models this machine does not have; ``fingerprints`` holds
    the configuration fingerprint of each trained row (:meth:`fingerprint`), saved with the result.
    """

    name: str
    settings: S
    out_dir: Path
    split: str = ""
    rows: Rows = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    results: list[TaskResult] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    method_row: str = ""
    previous: TaskResult | None = None
    fingerprints: dict[str, str] = field(default_factory=dict)
    carried: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    @property
    def variant(self) -> str:
        """The variant of the study's result: the study's name, and its split value if any."""
        return f"{self.name}-{self.split}" if self.split else self.name

    def seconds(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.started

    def fingerprint(self, row: str, fingerprint: str) -> None:
        """Record that ``row`` is the model trained with the configuration of ``fingerprint``."""
        self.fingerprints[row] = fingerprint

    def carry(self, row: str) -> bool:
        """Take ``row`` from the previous result where its model was trained with the same configuration
        (:meth:`fingerprint` first): for a model this machine does not have, instead of training it again; False
        where the previous result has no such row.

        >>> saved = TaskResult("t", "e", "d", 1.0, "x", {"a": {"x": 1.0}}, options={FINGERPRINTS: {"a": "f1"}})
        >>> run = StudyRun("s", StudySettings(), Path("."), previous=saved)
        >>> run.fingerprint("a", "f2"); run.carry("a")
        False
        >>> run.fingerprint("a", "f1"); run.carry("a"), run.rows, run.carried
        (True, {'a': {'x': 1.0}}, ['a'])
        """
        previous = self.previous
        if previous is None or row not in previous.scores or row not in self.fingerprints:
            return False
        if previous.options.get(FINGERPRINTS, {}).get(row) != self.fingerprints[row]:
            return False
        self.rows[row] = dict(previous.scores[row])
        self.carried.append(row)
        return True


@dataclass(frozen=True)
class Study:
    """One study: ``run(lab, run)`` trains or reuses its models and fills ``run.rows``; ``method_row`` is the row
    it declares as the paper's method (empty where the run sets ``run.method_row``), ``metric`` the column that
    scores it (None: the method row's first); ``claims`` checks the paper's claims on the rows; ``split`` names a
    tuple setting whose values each get a run and a result of their own; ``default``: run without ``--studies``;
    ``dataset``: what it is scored on, where that is not the module's ``DATASET``.
    """

    run: Callable[[Any, StudyRun[Any]], None]
    method_row: str = ""
    metric: str | None = None
    claims: Claims | None = None
    split: str | None = None
    default: bool = True
    dataset: str | None = None

    @property
    def doc(self) -> str:
        """What the study measures: its run function's docstring."""
        return (self.run.__doc__ or "").strip()


class Lab(Protocol):
    """What a study module sets up once for all the studies of a command (backbone, caches): the encoder id its
    results are filed under, and the notes every study's result gets (training budget, backbone)."""

    @property
    def encoder(self) -> str: ...

    def notes(self, run: StudyRun[Any]) -> list[str]: ...


class StudyModule(Protocol):
    """A method's ``study`` module: the results' task and dataset, its settings class, its studies, and
    ``setup(settings, out_dir)`` returning the :class:`Lab` its studies share."""

    TASK: str
    DATASET: str
    Settings: type[StudySettings]
    STUDIES: Mapping[str, Study]

    def setup(self, settings: Any, out_dir: Path) -> Lab: ...


def judged(result: TaskResult, study: Study) -> TaskResult:
    """``result`` with what its rows decide: the summary score (the method row's metric) and the verdicts (and the
    study's own ``dataset`` where it declares one)."""
    method_row = result.options["method_row"]
    metric = study.metric or next(iter(result.scores[method_row]))
    verdicts = study.claims(result.scores, metric, method_row) if study.claims else []
    return dataclasses.replace(result, main_score=result.scores[method_row][metric], subset_metric=metric,
                               main_metric=f"{metric}, row '{method_row}'", verdicts=[v.to_json() for v in verdicts],
                               dataset=study.dataset or result.dataset)


def study_result(module: StudyModule, run: StudyRun[Any], lab: Lab) -> TaskResult:
    """The result of a finished run: its rows, the settings (the split setting as the value the run covers) and
    the run's options, the study's description with the run's and the lab's notes, the summary score of the
    declared method row, and the verdicts."""
    study = module.STUDIES[run.name]
    method_row = run.method_row or study.method_row
    if method_row not in run.rows:
        raise ValueError(f"{module.TASK} study '{run.name}' has no row '{method_row}' (its method row); rows: "
                         f"{', '.join(run.rows)}")
    split = {study.split: run.split} if study.split else {}  # the split setting's value this result covers
    carried = ([f"rows carried from the result of {run.previous.created} (their models are not on this machine; "
                f"trained there with the same configuration fingerprint): {'; '.join(run.carried)}"]
               if run.carried and run.previous else [])
    result = TaskResult(
        task=module.TASK, encoder=lab.encoder, dataset=module.DATASET, main_score=0.0, main_metric="",
        scores=run.rows, variant=run.variant,
        options={"method_row": method_row, **recorded(run.settings), **split, **run.options,
                 **({FINGERPRINTS: run.fingerprints} if run.fingerprints else {})},
        notes=[study.doc, *run.notes, *carried, *lab.notes(run)], dataset_files=dict(sorted(run.files.items())),
        seconds=run.seconds())
    return judged(result, study)
