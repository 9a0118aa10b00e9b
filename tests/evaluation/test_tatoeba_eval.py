from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xlsent.evaluation import tatoeba
from xlsent.evaluation.retrieval import ratio_margin, retrieval_accuracy
from xlsent.testing import LookupEncoder


def fake_tatoeba(tmp_path: Path, langs: dict[str, int]) -> Path:
    root = tmp_path / "data"
    (root / "tatoeba_v1").mkdir(parents=True)
    for lang, n in langs.items():
        (root / "tatoeba_v1" / f"tatoeba.{lang}-eng.{lang}").write_text(
            "".join(f"{lang} sentence {i}\n" for i in range(n)), encoding="utf-8")
        (root / "tatoeba_v1" / f"tatoeba.{lang}-eng.eng").write_text(
            "".join(f"english {lang} {i}\n" for i in range(n)), encoding="utf-8")
    return root


def one_hot_encoder(langs: dict[str, int], shuffle: bool = False) -> LookupEncoder:
    rng = np.random.default_rng(0)
    dim = max(langs.values())
    table = {}
    for lang, n in langs.items():
        perm = rng.permutation(n) if shuffle else np.arange(n)
        for i in range(n):
            table[f"{lang} sentence {i}"] = np.eye(dim)[i]
            table[f"english {lang} {i}"] = np.eye(dim)[perm[i]]
    return LookupEncoder(table, name="onehot-shuffled" if shuffle else "onehot")


def test_one_hot_line_encoder_is_perfect_and_shuffled_is_not(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    langs = {"deu": 30, "fra": 20}
    root = fake_tatoeba(tmp_path, langs)
    perfect = tatoeba.run(one_hot_encoder(langs), root=root)
    assert perfect.scores["deu"] == {"xx->en": 100.0, "en->xx": 100.0, "mean": 100.0, "pairs": 30.0}
    shuffled = tatoeba.run(one_hot_encoder(langs, shuffle=True), root=root)
    assert shuffled.main_score < 15
    with pytest.raises(ValueError, match="unknown Tatoeba language"):
        tatoeba.run(one_hot_encoder(langs), root=root, langs=["xyz"])


def test_margin_matches_direct_formula() -> None:
    rng = np.random.default_rng(1)
    sims = rng.uniform(-1, 1, size=(6, 5))
    scores = ratio_margin(sims, k=2)
    for i in range(6):
        for j in range(5):
            fwd = np.sort(sims[i])[-2:].mean()
            bwd = np.sort(sims[:, j])[-2:].mean()
            assert scores[i, j] == pytest.approx(sims[i, j] / ((fwd + bwd) / 2))
    with pytest.raises(ValueError, match="same shape"):
        retrieval_accuracy(np.eye(3), np.eye(4))
