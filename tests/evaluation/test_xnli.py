from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from xlsent.evaluation import xnli
from xlsent.evaluation.runner import run_task
from xlsent.evaluation.xnli import NliConfig, build_classifier, nli_features, train_classifier
from xlsent.testing import LookupEncoder

LANGS = ("ar", "bg", "de", "el", "en", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh")
LABELS = ("entailment", "neutral", "contradiction")
FAST: dict[str, Any] = {"max_epochs": 40, "patience": 10}


@dataclass
class FakeNliSet:
    lang: str
    split: str
    premises: list[str]
    hypotheses: list[str]
    labels: list[str]


def synthetic_nli(n_per_set: dict[tuple[str, str], int], dim: int = 8, seed: int = 0
                  ) -> tuple[dict[tuple[str, str], FakeNliSet], dict[str, Any]]:
    """NLI sets whose label is recoverable from geometry: h = p (entailment), -p (contradiction), random (neutral)."""
    rng = np.random.default_rng(seed)
    sets: dict[tuple[str, str], FakeNliSet] = {}
    table: dict[str, Any] = {}
    for (lang, split), n in n_per_set.items():
        labels = [LABELS[i % 3] for i in range(n)]
        prem, hyp = [], []
        for i, label in enumerate(labels):
            p = rng.normal(size=dim)
            h = {"entailment": p, "contradiction": -p}.get(label, rng.normal(size=dim)) + 0.1 * rng.normal(size=dim)
            prem.append(f"{lang} {split} premise {i}")
            hyp.append(f"{lang} {split} hypothesis {i}")
            table[prem[-1]], table[hyp[-1]] = p, h
        sets[lang, split] = FakeNliSet(lang, split, prem, hyp, labels)
    return sets, table


def install_fake_reader(monkeypatch: pytest.MonkeyPatch, sets: dict[tuple[str, str], FakeNliSet]) -> None:
    """Make the XNLI task read ``sets`` (languages :data:`LANGS`, labels :data:`LABELS`) instead of XNLI."""
    monkeypatch.setattr(xnli, "XNLI_LANGS", LANGS)
    monkeypatch.setattr(xnli, "XNLI_LABELS", LABELS)
    monkeypatch.setattr(xnli, "load_xnli", lambda lang, split="dev", root=None: sets[lang, split])


def test_features_and_classifier_shape() -> None:
    p, h = np.array([[1.0, -2.0]]), np.array([[3.0, 2.0]])
    assert nli_features(p, h).tolist() == [[1.0, -2.0, 3.0, 2.0, 3.0, -4.0, 2.0, 4.0]]
    model = build_classifier(32, 3, NliConfig())
    linears = [m for m in model if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(32, 512), (512, 384), (384, 3)]
    assert any(isinstance(m, nn.Tanh) for m in model)
    assert any(isinstance(m, nn.ReLU) for m in build_classifier(32, 3, NliConfig(activation="relu")))
    with pytest.raises(ValueError, match="activation"):
        NliConfig(activation="gelu")


def test_training_is_seeded_and_leaves_global_rng_alone() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(120, 6)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    state = torch.get_rng_state()
    a = train_classifier(x, y, 2, NliConfig(max_epochs=15))
    assert torch.equal(torch.get_rng_state(), state)
    b = train_classifier(x, y, 2, NliConfig(max_epochs=15))
    assert (a.train_size, a.heldout_size) == (108, 12)
    assert a.best_epoch == b.best_epoch and np.array_equal(a.predict(x), b.predict(x))
    assert a.heldout_accuracy >= 75


def test_english_classifier_transfers_to_other_languages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    sets, table = synthetic_nli({("en", "dev"): 300, **{(lang, "test"): 45 for lang in LANGS}})
    install_fake_reader(monkeypatch, sets)
    result = run_task("xnli", LookupEncoder(table, name="geometry"), root=tmp_path, **FAST)
    assert set(result.scores) == set(LANGS)
    assert all(s["accuracy"] >= 90 and s["pairs"] == 45 for s in result.scores.values())
    assert set(result.averages) == {"all-15", "zero-shot-14"}
    assert result.main_score == result.averages["all-15"]
    assert result.options["hidden"] == (512, 384) and result.options["train_pairs"] == 270
    assert result.task == "xnli" and result.encoder == "geometry" and result.seconds > 0
    assert any("MultiNLI is not available" in note for note in result.notes)

    subset = run_task("xnli", LookupEncoder(table, name="geometry"), langs=["de"], root=tmp_path, **FAST)
    assert subset.scores["de"] == result.scores["de"] and not subset.averages
    with pytest.raises(ValueError, match="unknown XNLI language"):
        run_task("xnli", LookupEncoder(table), langs=["xx"], root=tmp_path)


@pytest.mark.data
def test_real_xnli_pipeline_with_random_encoder(shared_data: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    reader = pytest.importorskip("xlsent.data.xnli")
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    rng = np.random.default_rng(0)
    table: dict[str, Any] = {}
    for lang, split in (("en", "dev"), ("de", "test")):
        nli = reader.load_xnli(lang, split, shared_data)
        table.update({s: rng.normal(size=8) for s in [*nli.premises, *nli.hypotheses]})
    result = run_task("xnli", LookupEncoder(table, name="random"), langs=["de"], root=shared_data, max_epochs=3)
    assert result.scores["de"]["pairs"] == 5010
    assert 20 < result.scores["de"]["accuracy"] < 50  # random vectors: chance level
    assert (result.options["train_pairs"], result.options["heldout_pairs"]) == (2241, 249)
    assert result.options["epochs_run"] == 3
    assert "xnli/xtreme/dev-en.tsv" in result.dataset_files


@pytest.mark.parametrize(("rows", "labels", "shown"), [
    (30, ("entailment",), "30 rows (entailment 30, neutral 0, contradiction 0)"),
    (9, LABELS, "9 rows (entailment 3, neutral 3, contradiction 3)"),
])
def test_an_english_dev_set_that_cannot_train_the_classifier_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, labels: tuple[str, ...], shown: str) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    sets, table = synthetic_nli({("en", "dev"): rows, ("de", "test"): 6})
    sets["en", "dev"] = replace(sets["en", "dev"], labels=[labels[i % len(labels)] for i in range(rows)])
    install_fake_reader(monkeypatch, sets)
    with pytest.raises(ValueError, match=rf"xnli/xtreme/dev-en\.tsv: {re.escape(shown)} cannot train the NLI "
                                         r"classifier: .*\(21 rows at least\)"):
        run_task("xnli", LookupEncoder(table), langs=["de"], root=tmp_path, **FAST)
