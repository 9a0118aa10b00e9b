from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from xlsent.evaluation import intent
from xlsent.evaluation.intent import loo_nn_accuracy
from xlsent.evaluation.runner import run_task
from xlsent.testing import LookupEncoder

INTENTS = ("alarm/set", "weather/find", "PlayMusic", "RateBook", "BookRestaurant", "AddToPlaylist")
LANGS = ("en", "de", "zh", "ja")


@pytest.fixture(autouse=True)
def one_blas_thread() -> Iterator[None]:
    """Two busy shared cores: multi-threaded BLAS/OpenMP makes these tiny fits ten times slower."""
    with threadpool_limits(1):
        yield


@dataclass
class FakeIntentSet:
    lang: str
    split: str
    ids: list[str]
    texts: list[str]
    intents: list[str]
    texts_en: list[str]


def fake_xsid(per_intent: int = 5) -> dict[str, FakeIntentSet]:
    """Every language holds the same utterances (ids); Japanese only the first half, as in xSID."""
    ids = [f"u{i}" for i in range(per_intent * len(INTENTS))]
    labels = [INTENTS[i % len(INTENTS)] for i in range(len(ids))]
    sets = {}
    for lang in LANGS:
        n = len(ids) // 2 if lang == "ja" else len(ids)
        sets[lang] = FakeIntentSet(lang, "test", ids[:n], [f"{lang} {u}" for u in ids[:n]], labels[:n],
                                   [f"en {u}" for u in ids[:n]])
    return sets


def install_fake_reader(monkeypatch: pytest.MonkeyPatch, sets: dict[str, FakeIntentSet]) -> None:
    """Make the intent task read ``sets`` (languages :data:`LANGS`) instead of xSID."""
    monkeypatch.setattr(intent, "XSID_LANGS", LANGS)
    monkeypatch.setattr(intent, "load_xsid", lambda lang, split="test", root=None: sets[lang])


def encoder_from(sets: dict[str, FakeIntentSet], vector: dict[str, np.ndarray], name: str) -> LookupEncoder:
    """Each utterance maps to ``vector[key]`` where key is its intent, or its id when keyed by ids."""
    table: dict[str, Any] = {}
    for s in sets.values():
        for uid, text, label in zip(s.ids, s.texts, s.intents, strict=True):
            table[text] = vector.get(label, vector.get(uid))
    return LookupEncoder(table, name=name)


def test_translation_and_self_are_left_out() -> None:
    q = np.eye(3)
    # Only the same-id row matches the query; once it is removed the neighbour has another label.
    assert loo_nn_accuracy(q, ["a", "b", "c"], ["x", "y", "z"], q, ["a", "b", "c"], ["x", "y", "z"]) == 0.0
    assert loo_nn_accuracy(q, ["a", "b", "c"], ["x", "y", "z"], q, ["d", "e", "f"], ["x", "y", "z"]) == 100.0


def test_intent_encoder_is_perfect_and_random_is_near_chance(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    sets = fake_xsid()
    install_fake_reader(monkeypatch, sets)
    one_hot = {label: np.eye(len(INTENTS))[i] for i, label in enumerate(INTENTS)}
    perfect = run_task("intent", encoder_from(sets, one_hot, "intent-one-hot"), root=tmp_path,
                       tsne_langs=("en", "de"))
    expected = {"en-en", "en-de", "en-zh", "en-ja", "de-en", "zh-en", "ja-en", "de-de", "zh-zh", "ja-ja"}
    assert set(perfect.scores) == expected
    assert all(s["acc@1"] == 100.0 for s in perfect.scores.values())
    assert perfect.scores["en-ja"]["queries"] == 15 and perfect.scores["en-de"]["queries"] == 30
    assert set(perfect.averages) == {"en->xx", "xx->en", "xx->xx", "cross-lingual"}
    assert perfect.main_score == 100.0 and perfect.options["main"] == "cross-lingual"
    tsne = perfect.options[intent.TSNE_KEY]
    assert len(tsne["points"]) == len(tsne["labels"]) == len(tsne["langs"]) == 60
    assert set(tsne["langs"]) == {"en", "de"} and all(len(p) == 2 for p in tsne["points"])

    rng = np.random.default_rng(0)
    random_vectors = {u: rng.normal(size=16) for u in sets["en"].ids}
    shuffled = run_task("intent", encoder_from(sets, random_vectors, "random"), langs=["de"], root=tmp_path,
                        tsne=False)
    # Translations share a vector, but they are removed from the pool: what is left is chance (1/6).
    assert shuffled.scores["en-de"]["acc@1"] < 40 and intent.TSNE_KEY not in shuffled.options
    assert set(shuffled.scores) == {"en-en", "en-de", "de-en", "de-de"}
    with pytest.raises(ValueError, match="unknown xSID language"):
        run_task("intent", encoder_from(sets, one_hot, "x"), langs=["xx"], root=tmp_path)


@pytest.mark.data
def test_real_xsid_with_intent_one_hot_encoder(shared_data: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    reader = pytest.importorskip("xlsent.data.xsid")
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    sets = {lang: reader.load_xsid(lang, "test", shared_data) for lang in ("en", "de")}
    labels = sorted({i for s in sets.values() for i in s.intents})
    one_hot = {label: np.eye(len(labels))[i] for i, label in enumerate(labels)}
    result = run_task("intent", encoder_from(sets, one_hot, "intent-one-hot"), langs=["de"], root=shared_data,
                      tsne=False)
    assert result.scores["en-de"]["queries"] == 500
    assert result.main_score > 95
    assert "xsid/de.test.conll" in result.dataset_files
