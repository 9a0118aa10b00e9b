"""The task template, the task registry and every task's metadata."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from xlsent.evaluation import bucc
from xlsent.evaluation.runner import METADATA, REGISTRY, TASKS, evaluate_task
from xlsent.evaluation.task import NoDataError, SubsetScore, Summary, Task, TaskMetadata
from xlsent.testing import dataset_or_skip

PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"


def test_registry_is_built_from_the_metadata() -> None:
    assert list(TASKS)[:8] == ["tatoeba", "bucc", "sts", "xnli", "intent", "senteval", "retrieval_pk", "filter"]
    assert TASKS["bucc"] == bucc.METADATA.description
    for name, meta in METADATA.items():
        assert REGISTRY[name].__module__ == f"xlsent.evaluation.{name}" and meta.name == name
        assert meta.main_score and meta.reference and meta.data_files
        assert meta.languages or meta.languages_note
        for paper in meta.papers:
            number, short = paper.split(" ", 1)
            assert re.fullmatch(r"\d{3}", number) and short
            if PAPERS.is_dir():
                assert list(PAPERS.glob(f"{number}_*.txt")), paper
    with pytest.raises(ValueError, match="unknown task"):
        evaluate_task("mteb", lambda s, lang: np.zeros((len(s), 2)), encoder_id="x")


@pytest.mark.parametrize(("task", "pattern"), [(t, p) for t, m in METADATA.items() for p in m.data_files])
def test_data_file_patterns_match_the_shared_data(task: str, pattern: str) -> None:
    base = dataset_or_skip(pattern.split("/")[0])
    assert any(p.is_file() for p in base.glob(pattern)), f"{task}: {pattern} matches nothing in {base}"


def test_the_registry_imports_no_heavy_library() -> None:
    """The CLI builds its help from TASKS: importing the task modules must not import torch, sklearn or scipy."""
    code = ("import sys, xlsent.evaluation.runner; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'sklearn', 'scipy'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


class Halves(Task):
    """A toy task: the subsets are the files ``a.txt`` and ``b.txt``; the score is the embeddings' mean."""

    metadata = TaskMetadata("halves", "toy", ("xx",), ("*.txt",), "mean of the subsets' means", (), "none")
    subset_kind = "toy file"
    subset_metric = "mean"

    def known_subsets(self) -> list[str]:
        return ["a", "b"]

    def score(self, subset: str) -> SubsetScore:
        lines = (self.base / f"{subset}.txt").read_text(encoding="utf-8").splitlines()
        return SubsetScore({"mean": float(self.embed(lines, subset).mean())}, note=f"{subset}: {len(lines)} lines")

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        main = float(np.mean([s["mean"] for s in scores.values()]))
        return Summary("toy", main, "mean", {}, {}, ["toy notes"], [self.base / f"{s}.txt" for s in scores])


def test_the_template_checks_subsets_first_and_checksums_what_the_task_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("4\n", encoding="utf-8")
    calls: list[str | None] = []

    def embed(sentences: Sequence[str], lang: str | None) -> np.ndarray:
        calls.append(lang)
        return np.array([[float(s)] for s in sentences])

    with pytest.raises(ValueError, match=r"unknown toy file\(s\) \['c'\]; known: a b"):
        Halves.evaluate(embed, encoder_id="toy", langs=["c", "a"], root=tmp_path)
    assert calls == []
    result = Halves.evaluate(embed, encoder_id="toy", langs=["b", "a", "b"], root=tmp_path)
    assert calls == ["b", "a"] and list(result.scores) == ["b", "a"]
    assert (result.task, result.encoder, result.main_score, result.subset_metric) == ("halves", "toy", 2.75, "mean")
    assert result.notes == ["toy notes", "b: 1 lines", "a: 2 lines"]
    assert list(result.dataset_files) == ["b.txt", "a.txt"] and result.seconds > 0
    assert list(Halves.evaluate(embed, encoder_id="toy", root=tmp_path).scores) == ["a", "b"]


class Languages(Halves):
    """The toy task over language subsets spelt as Tatoeba does (``deu``, ``cmn``), or none at all."""

    def known_subsets(self) -> list[str]:
        return sorted(p.stem for p in self.base.glob("*.txt"))


def test_a_run_over_no_data_is_an_error_naming_the_folder(tmp_path: Path) -> None:
    def embed(sentences: Sequence[str], lang: str | None) -> np.ndarray:
        return np.array([[float(s)] for s in sentences])

    with pytest.raises(NoDataError, match=f"halves: no data under {tmp_path} "):
        Languages.evaluate(embed, encoder_id="toy", root=tmp_path)
    (tmp_path / "deu.txt").write_text("", encoding="utf-8")
    with pytest.raises(NoDataError, match=f"the deu data under {tmp_path} hold no sentences"):
        Languages.evaluate(embed, encoder_id="toy", root=tmp_path)
    (tmp_path / "deu.txt").write_text("nan\n", encoding="utf-8")
    with pytest.raises(NoDataError, match="no item of the data .* could be scored"):
        Languages.evaluate(embed, encoder_id="toy", root=tmp_path)


def test_any_code_of_a_language_names_its_subset(tmp_path: Path) -> None:
    for name in ("deu", "cmn", "kat"):
        (tmp_path / f"{name}.txt").write_text("1\n", encoding="utf-8")
    result = Languages.evaluate(lambda s, lang: np.ones((len(s), 1)), encoder_id="toy", root=tmp_path,
                                langs=["de", "zh", "ka", "deu"])
    assert list(result.scores) == ["deu", "cmn", "kat"]
    result = Languages.evaluate(lambda s, lang: np.ones((len(s), 1)), encoder_id="toy", root=tmp_path,
                                langs=["DE", "de-DE", "KAT", "zh_CN"])  # any case, a region (as every command takes)
    assert list(result.scores) == ["deu", "kat", "cmn"]
    with pytest.raises(ValueError, match=r"unknown toy file\(s\) \['fr'\]"):
        Languages.evaluate(lambda s, lang: np.ones((len(s), 1)), encoder_id="toy", root=tmp_path, langs=["fr"])


@pytest.mark.parametrize("task", ["bucc", "sts", "intent", "senteval", "xnli", "retrieval_pk", "filter", "align"])
def test_a_data_folder_without_the_tasks_files_is_refused_before_any_model(task: str, tmp_path: Path) -> None:
    """Tasks whose subsets are a fixed list passed the data check on any folder: `xlsent eval bucc --data EMPTY`
    loaded the model first, and `eval tatoeba sts` ran and saved tatoeba before sts found no file."""
    from xlsent.evaluation.runner import check_task_data

    with pytest.raises(NoDataError, match=f"{task}: no data under {tmp_path} "):
        check_task_data(task, root=tmp_path)


class Catalogue(Languages):
    """The toy task over a benchmark of three languages, of which the data folder may hold fewer."""

    def all_subsets(self) -> list[str]:
        return ["deu", "fra", "kat"]

    def subset_files(self, subset: str) -> list[str]:
        return [f"{subset}.txt"]


def test_a_subset_missing_from_the_data_is_told_apart_from_one_the_benchmark_lacks(tmp_path: Path) -> None:
    """`eval tatoeba --langs fra` on a folder holding deu alone said "unknown Tatoeba language(s) ['fra']"."""
    from xlsent.evaluation.task import UnknownSubsetError

    (tmp_path / "deu.txt").write_text("1\n", encoding="utf-8")
    with pytest.raises(NoDataError, match=re.escape(f"the files of toy file(s) ['fra'] are not under {tmp_path}: "
                                                    "fra.txt missing") + ".*--data.*--langs.*under it: deu"):
        Catalogue.check_data(langs=["deu", "fr"], root=tmp_path)
    with pytest.raises(UnknownSubsetError, match=re.escape("unknown toy file(s) ['zzz']; known: deu fra kat "
                                                           f"(with files under {tmp_path}: deu)")):
        Catalogue.check_data(langs=["zzz", "fra"], root=tmp_path)
    assert Catalogue.check_data(langs=["de"], root=tmp_path) == ["deu"]
