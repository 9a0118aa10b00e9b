from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from xlsent.evaluation import senteval
from xlsent.evaluation.runner import run_task
from xlsent.evaluation.senteval import cv_accuracy, split_accuracy
from xlsent.testing import LookupEncoder

FAST: dict[str, Any] = {"folds": 3, "inner_folds": 2, "c_grid": (1.0, 16.0)}


@pytest.fixture(autouse=True)
def one_blas_thread() -> Iterator[None]:
    """Two busy shared cores: multi-threaded BLAS/OpenMP makes these tiny fits ten times slower."""
    with threadpool_limits(1):
        yield


@dataclass
class FakeClassificationSet:
    task: str
    texts: list[str]
    labels: list[int]
    test_texts: list[str] | None
    test_labels: list[int] | None
    label_names: list[str]


def separable(n: int, classes: int, seed: int, dim: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Class c sits around the c-th axis: linearly separable with a wide margin."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    return np.eye(dim)[y] * 3 + 0.3 * rng.normal(size=(n, dim)), y


def test_logistic_regression_separates_and_random_labels_are_chance() -> None:
    x, y = separable(90, 3, seed=0)
    assert cv_accuracy(x, y, **FAST) == 100.0
    x_test, y_test = separable(30, 3, seed=1)
    acc, c = split_accuracy(x, y, x_test, y_test, c_grid=(1.0, 16.0), inner_folds=2)
    assert acc == 100.0 and c in (1.0, 16.0)
    noise = np.random.default_rng(2).normal(size=(200, 6))
    assert 30 < cv_accuracy(noise, np.arange(200) % 2, **FAST) < 70


def test_run_scores_every_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    table: dict[str, Any] = {}
    sets = {}

    def texts(task: str, part: str, x: np.ndarray) -> list[str]:
        names = [f"{task} {part} {i}" for i in range(len(x))]
        table.update(zip(names, x, strict=True))
        return names

    for i, (task, classes, split) in enumerate([("MR", 2, False), ("SUBJ", 2, False), ("TREC", 6, True),
                                                ("SST2", 2, True)]):
        x, y = separable(60, classes, seed=i)
        x_test, y_test = separable(24, classes, seed=10 + i)
        sets[task] = FakeClassificationSet(
            task, texts(task, "train", x), y.tolist(), texts(task, "test", x_test) if split else None,
            y_test.tolist() if split else None, [str(c) for c in range(classes)])
    monkeypatch.setattr(senteval, "load_senteval", lambda task, root=None: sets[task])

    result = run_task("senteval", LookupEncoder(table, name="axes"), root=tmp_path, **FAST)
    assert list(result.scores) == ["MR", "SUBJ", "TREC", "SST2"]
    assert all(s["accuracy"] == 100.0 for s in result.scores.values())
    assert result.scores["MR"]["folds"] == 3 and result.scores["TREC"]["test"] == 24
    assert result.averages == {"all-4": 100.0} and result.main_score == 100.0
    assert result.task == "senteval" and result.options["c_grid"] == [1.0, 16.0]

    one = run_task("senteval", LookupEncoder(table, name="axes"), langs=["TREC"], root=tmp_path, **FAST)
    assert list(one.scores) == ["TREC"] and not one.averages and one.main_score == 100.0
    with pytest.raises(ValueError, match="unknown SentEval task"):
        run_task("senteval", LookupEncoder(table), langs=["STS"], root=tmp_path)


@pytest.mark.data
def test_real_trec_with_label_one_hot_encoder(shared_data: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    reader = pytest.importorskip("xlsent.data.senteval")
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    data = reader.load_senteval("TREC", shared_data)
    assert data.test_texts is not None and data.test_labels is not None
    eye = np.eye(len(data.label_names))
    texts, labels = [*data.texts, *data.test_texts], [*data.labels, *data.test_labels]
    table: dict[str, Any] = {t: eye[y] for t, y in zip(texts, labels, strict=True)}
    result = run_task("senteval", LookupEncoder(table, name="label-one-hot"), langs=["TREC"], root=shared_data,
                      **FAST)
    assert result.scores["TREC"]["train"] == 5452 and result.scores["TREC"]["test"] == 500
    assert result.main_score > 95
    assert set(result.dataset_files) == {"senteval/harvardnlp_raw/TREC.train", "senteval/harvardnlp_raw/TREC.test"}


@pytest.mark.parametrize(("labels", "message"), [
    ([0] * 20 + [1] * 2, r"senteval MR: the class\(es\) 1 \(2\) have fewer than 3 training examples"),
    ([0] * 22, r"senteval MR: its training examples are all of one class \(0\)"),
])
def test_classes_too_small_for_the_folds_are_an_error_naming_the_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, labels: list[int], message: str) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    x, _ = separable(len(labels), 2, seed=0)
    names = [f"s {i}" for i in range(len(labels))]
    fake = FakeClassificationSet("MR", names, labels, None, None, ["0", "1"])
    monkeypatch.setattr(senteval, "load_senteval", lambda task, root=None: fake)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=message + r".*: check .*rt-polarity\.pos, .*rt-polarity\.neg"):
            run_task("senteval", LookupEncoder(dict(zip(names, x, strict=True))), langs=["MR"], root=tmp_path,
                     **FAST)
