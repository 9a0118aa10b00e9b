"""What a trained model's ``xlsent.json`` says of its training, as typed records every method fills in the same way:
:class:`TrainingRecord`, with :class:`DataRecord`, :class:`ValidationRecord` and :class:`ObjectiveRecord`.

A record is stored as the manifest's ``training`` object (:meth:`TrainingRecord.to_json`) and read back with
:meth:`TrainingRecord.from_json`; the model card (:mod:`xlsent.training.model_card`) renders it without knowing which
method wrote it. Fields a method has beyond the common ones go to ``details`` and are stored beside them.

>>> data = DataRecord.two_sides("bitext", "de", "en", 100, 90)
>>> data.description
'bitext de-en, 100 source / 90 target sentences'
>>> record = TrainingRecord(data, seconds=12.5, steps_done=40, details={"device": "cpu"})
>>> raw = record.to_json()
>>> raw["steps_done"], raw["device"], raw["data"]["src_lang"]
(40, 'cpu', 'de')
>>> TrainingRecord.from_json(raw) == record
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xlsent.encoders.model_dir import read_manifest
from xlsent.machine_measures import cpu_model
from xlsent.threads import cores

if TYPE_CHECKING:
    from xlsent.training.loop import TrainResult


@dataclass(frozen=True)
class DataRecord:
    """What a model trained on: ``kind`` (a phrase), ``description`` (the card's line, built by a constructor below)
    and the method's own counts (``details``)."""

    kind: str
    description: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def language_pairs(cls, kind: str, pairs: Mapping[str, int], /, **details: Any) -> DataRecord:
        """Pairs of several language pairs, ``pairs`` the count of each (``"de-en": 120``).

        >>> DataRecord.language_pairs("bitext", {"de-en": 120, "fr-en": 80}).description
        'bitext: 200 pairs in 2 language pairs (de-en 120, fr-en 80)'
        """
        per = ", ".join(f"{k} {v}" for k, v in pairs.items())
        return cls(kind, f"{kind}: {sum(pairs.values())} pairs in {len(pairs)} language pairs ({per})", details)

    @classmethod
    def multilingual(cls, kind: str, pairs: int, langs: Sequence[str], /, *, parts: Mapping[str, int] | None = None,
                     sampled_from: int | None = None, **details: Any) -> DataRecord:
        """``pairs`` pairs across ``langs``, of which ``parts`` (``{"monolingual": 3, ...}``), sampled from
        ``sampled_from``.

        >>> DataRecord.multilingual("XNLI pairs", 4, ["en", "de"], parts={"monolingual": 1, "cross-lingual": 3},
        ...                         sampled_from=10).description
        'XNLI pairs: 4 pairs (1 monolingual, 3 cross-lingual) sampled from 10 in 2 languages (en de)'
        """
        shares = ", ".join(f"{v} {k}" for k, v in (parts or {}).items())
        return cls(kind, f"{kind}: {pairs} pairs" + (f" ({shares})" if shares else "")
                   + (f" sampled from {sampled_from}" if sampled_from is not None else "")
                   + f" in {len(langs)} languages ({' '.join(langs)})", {"pairs": pairs, "langs": list(langs),
                                                                          **details})

    @classmethod
    def two_sides(cls, kind: str, src_lang: str, tgt_lang: str, src_sentences: int, tgt_sentences: int, /,
                  **details: Any) -> DataRecord:
        """Sentences of a source and a target side (paired or not)."""
        return cls(kind, f"{kind} {src_lang}-{tgt_lang}, {src_sentences} source / {tgt_sentences} target sentences",
                   {"src_lang": src_lang, "tgt_lang": tgt_lang, "src_sentences": src_sentences,
                    "tgt_sentences": tgt_sentences, **details})

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "description": self.description, **self.details}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> DataRecord:
        details = {k: v for k, v in raw.items() if k not in ("kind", "description")}
        return cls(raw.get("kind", ""), raw.get("description", raw.get("kind", "")), details)


@dataclass(frozen=True)
class ValidationRecord:
    """Validation on held-out data during training: ``criterion`` (what was scored), ``pairs`` held out,
    ``selection`` (the rule that picked the kept step; ``"none"``: the last step is kept and validation is only
    logged), the best, last and restored validations as the trainer reports them, ``history`` (``(step, score)``
    of every validation, :attr:`~xlsent.training.loop.TrainResult.scores`) and the method's ``details``.

    >>> ValidationRecord("retrieval", 10, "retrieval", history=((100, 40.0), (200, 52.5))).last_gain()
    12.5
    """

    criterion: str
    pairs: int
    selection: str
    best: Mapping[str, Any] | None = None
    last: Mapping[str, Any] | None = None
    restored: Mapping[str, Any] | None = None
    history: Sequence[tuple[int, float]] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of_run(cls, criterion: str, pairs: int, selection: str, run: TrainResult, *,
               restored: Mapping[str, Any] | None = None, **details: Any) -> ValidationRecord:
        """The record of the validations of ``run``: its best, last and every score."""
        last = run.validations[-1]["validation"] if run.validations else None
        return cls(criterion, pairs, selection, run.best, last, restored, tuple(run.scores), details)

    def last_gain(self) -> float | None:
        """How much the score changed from the second-to-last validation to the last (None with fewer than two)."""
        return self.history[-1][1] - self.history[-2][1] if len(self.history) > 1 else None

    def to_json(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "pairs": self.pairs, "selection": self.selection, "best": self.best,
                "last": self.last, "restored": self.restored, "history": [list(h) for h in self.history],
                **self.details}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> ValidationRecord:
        common = ("criterion", "pairs", "selection", "best", "last", "restored", "history")
        best = raw.get("best")
        return cls(raw.get("criterion") or (best or {}).get("criterion", ""), int(raw.get("pairs", 0)),
                   raw.get("selection", ""), best, raw.get("last"), raw.get("restored"),
                   tuple((int(step), float(score)) for step, score in raw.get("history", ())),
                   {k: v for k, v in raw.items() if k not in common})


@dataclass(frozen=True)
class TeacherRecord:
    """The encoder a student regresses onto: its reference (``ref``, as configured), ``id`` and the ``loss`` onto
    its vectors."""

    ref: str
    id: str
    loss: str


@dataclass(frozen=True)
class ObjectiveRecord:
    """The training objective: its ``name``, its weighted ``loss`` terms, the ``teacher`` it regresses onto (None
    without one) and how subword embeddings were initialised (``embed_init``)."""

    name: str
    loss: str = ""
    teacher: TeacherRecord | None = None
    embed_init: str = ""


_COMMON = ("data", "seconds", "validation", "steps_done", "train_seconds", "time_budget_minutes", "objective",
           "loss", "teacher", "embed_init", "user_bitext", "final", "machine")


def this_machine() -> dict[str, Any]:
    """The CPU model and the cores this process may use (:func:`~xlsent.threads.cores`): what a run's minutes depend
    on.

    >>> sorted(this_machine())
    ['cores', 'cpu']
    """
    return {"cpu": cpu_model(), "cores": cores()}


@dataclass(frozen=True)
class TrainingRecord:
    """A trained model's ``training`` record: its data, the whole command's ``seconds``, validation, steps done,
    seconds of training steps over resumed runs (``train_seconds``), the time budget in minutes, the objective, the
    records of the user's bitext files (:mod:`xlsent.data.user_bitext`), the trainer's ``final`` losses, the
    ``machine`` it ran on (:func:`this_machine`; None in records written before it was kept), and ``details`` of the
    method's own."""

    data: DataRecord
    seconds: float
    validation: ValidationRecord | None = None
    steps_done: int | None = None
    train_seconds: float | None = None
    time_budget_minutes: float | None = None
    objective: ObjectiveRecord | None = None
    user_bitext: Sequence[Mapping[str, Any]] = ()
    final: Mapping[str, Any] | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    machine: Mapping[str, Any] | None = field(default_factory=this_machine)

    def to_json(self) -> dict[str, Any]:
        """The manifest's ``training`` object (fields left unset are left out)."""
        out: dict[str, Any] = {"data": self.data.to_json(), "seconds": round(self.seconds, 1)}
        if self.validation is not None:
            out["validation"] = self.validation.to_json()
        for key in ("steps_done", "train_seconds", "time_budget_minutes", "final", "machine"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.objective is not None:
            out.update({"objective": self.objective.name, "loss": self.objective.loss,
                        "embed_init": self.objective.embed_init,
                        **({"teacher": asdict(self.objective.teacher)} if self.objective.teacher else {})})
        if self.user_bitext:
            out["user_bitext"] = [dict(r) for r in self.user_bitext]
        return {**out, **self.details}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> TrainingRecord:
        """The record a manifest's ``training`` object holds."""
        teacher = raw.get("teacher")
        objective = (ObjectiveRecord(raw["objective"], raw.get("loss", ""),
                                     TeacherRecord(teacher.get("ref", ""), teacher["id"], teacher.get("loss", ""))
                                     if teacher else None, raw.get("embed_init", "")) if "objective" in raw else None)
        validation = raw.get("validation")
        return cls(DataRecord.from_json(raw.get("data", {})), float(raw.get("seconds", 0.0)),
                   ValidationRecord.from_json(validation) if validation else None, raw.get("steps_done"),
                   raw.get("train_seconds"), raw.get("time_budget_minutes"), objective,
                   tuple(raw.get("user_bitext", ())), raw.get("final"),
                   {k: v for k, v in raw.items() if k not in _COMMON}, raw.get("machine"))


def read_training(model_dir: str | Path) -> TrainingRecord:
    """The training record of the trained model in ``model_dir``."""
    return TrainingRecord.from_json(read_manifest(model_dir, verify="none")["training"])
