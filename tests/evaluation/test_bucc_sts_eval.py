"""``bucc`` and ``sts`` evaluation on toy data and toy encoders whose answers are known."""

from __future__ import annotations

import fnmatch
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from xlsent.evaluation import bucc
from xlsent.evaluation.runner import run_task
from xlsent.testing import LookupEncoder

N_GOLD, N_NOISE, DIM = 30, 60, 32


def _bucc_root(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """A zh-en BUCC sample folder: 30 gold pairs among 60 distractors per side, and their ideal vectors."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "bucc2018_sample"
    folder.mkdir(parents=True)
    table: dict[str, np.ndarray] = {}
    zh, en, gold = [], [], []
    for i in range(N_GOLD):
        v = rng.normal(size=DIM)
        table[f"zh gold {i}"], table[f"en gold {i}"] = v + 0.05 * rng.normal(size=DIM), v
        zh.append((f"zh-{i:04d}", f"zh gold {i}"))
        en.append((f"en-{i:04d}", f"en gold {i}"))
        gold.append(f"zh-{i:04d}\ten-{i:04d}")
    for i in range(N_NOISE):
        table[f"zh noise {i}"], table[f"en noise {i}"] = rng.normal(size=DIM), rng.normal(size=DIM)
        zh.append((f"zh-n{i:04d}", f"zh noise {i}"))
        en.append((f"en-n{i:04d}", f"en noise {i}"))
    for name, rows in (("zh-en.dev.zh", zh), ("zh-en.dev.en", en)):
        order = rng.permutation(len(rows))
        (folder / name).write_text("".join(f"{rows[j][0]}\t{rows[j][1]}\n" for j in order), encoding="utf-8")
    (folder / "zh-en.dev.gold").write_text("\n".join(gold) + "\n", encoding="utf-8")
    return tmp_path, table


def test_bucc_perfect_encoder_scores_100_and_shuffled_scores_near_0(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    root, table = _bucc_root(tmp_path)
    good = run_task("bucc", LookupEncoder(table, name="good"), langs=["zh"], root=root)
    assert good.main_score == pytest.approx(100.0)
    assert good.scores["zh-en (bucc2018 sample)"]["gold"] == N_GOLD
    shifted = {k: table[f"en gold {(int(k.split()[-1]) + 1) % N_GOLD}"] if k.startswith("en gold") else v
               for k, v in table.items()}
    bad = run_task("bucc", LookupEncoder(shifted, name="bad"), langs=["zh"], root=root)
    assert bad.main_score < 10.0


def test_bucc_scores_any_embedding_function_as_it_scores_the_encoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     recording_embed: Any) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    root, table = _bucc_root(tmp_path)
    encoder = LookupEncoder(table, name="good")
    embed = recording_embed(encoder)
    result = bucc.evaluate(embed, encoder_id="fn", langs=["zh"], root=root)
    assert embed.calls == [(N_GOLD + N_NOISE, "zh"), (N_GOLD + N_NOISE, "en")]
    assert result.scores == run_task("bucc", encoder, langs=["zh-en"], root=root).scores
    assert result.scores["zh-en (bucc2018 sample)"]["f1"] == pytest.approx(100.0)
    assert (result.encoder, result.main_metric, result.subset_metric) == ("fn", "f1, zh-en bucc2018 sample", "f1")
    assert result.averages == {}
    assert all(any(fnmatch.fnmatch(f, p) for p in bucc.METADATA.data_files) for f in result.dataset_files)
    with pytest.raises(ValueError, match="unknown BUCC set"):
        bucc.evaluate(embed, encoder_id="fn", langs=["ja"], root=root)


def test_bucc_summary_names_what_it_averages() -> None:
    f1 = {"zh": 90.0, "cs": 60.0, "de": 70.0, "es": 80.0, "fr": 50.0, "ru": 40.0}
    assert bucc.f1_summary(f1) == ("f1, zh-en bucc2018 sample", 90.0,
                                   {"newstest cs de es fr ru": 60.0, "all 6 sets": 65.0})
    newstest = {x: v for x, v in f1.items() if x != "zh"}
    assert bucc.f1_summary(newstest) == ("mean f1 over newstest cs de es fr ru", 60.0,
                                         {"newstest cs de es fr ru": 60.0})
    assert bucc.f1_summary({"fr": 50.0}) == ("f1, fr-en newstest", 50.0, {})
    assert bucc.f1_summary({"zh": 90.0, "ru": 40.0}) == ("f1, zh-en bucc2018 sample", 90.0,
                                                         {"2 sets: zh ru": 65.0})


def _sts_root(tmp_path: Path, gold: list[float]) -> Path:
    base = tmp_path / "sts2017"
    (base / "STS2017.eval.v1.1").mkdir(parents=True)
    (base / "STS2017.gs").mkdir()
    (base / "STS2017.eval.v1.1" / "STS.input.track5.en-en.txt").write_text(
        "".join(f"a {i}\tb {i}\n" for i in range(len(gold))), encoding="utf-8")
    (base / "STS2017.gs" / "STS.gs.track5.en-en.txt").write_text("".join(f"{g}\n" for g in gold), encoding="utf-8")
    return tmp_path


def test_sts_encoder_whose_cosine_follows_gold_scores_100(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    gold = [float(g) for g in np.random.default_rng(0).uniform(0, 5, size=25)]
    root = _sts_root(tmp_path, gold)
    angle = {i: (5 - g) / 5 * math.pi / 2 for i, g in enumerate(gold)}
    follows = {f"a {i}": [1.0, 0.0] for i in angle} | {f"b {i}": [math.cos(t), math.sin(t)] for i, t in angle.items()}
    inverted = follows | {f"b {i}": [math.sin(t), math.cos(t)] for i, t in angle.items()}
    assert run_task("sts", LookupEncoder(follows, name="f"), langs=["sts17-5"], root=root).main_score == \
        pytest.approx(100.0)
    assert run_task("sts", LookupEncoder(inverted, name="i"), langs=["sts17-5"], root=root).main_score == \
        pytest.approx(-100.0)
    with pytest.raises(ValueError, match="unknown STS subset"):
        run_task("sts", LookupEncoder(follows), langs=["sts17-9"], root=root)


def test_sts_scores_english_stsb_apart_from_the_cross_lingual_pairs(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    gold = [float(g) for g in np.random.default_rng(1).uniform(0, 5, size=25)]
    data = tmp_path / "stsb_multi_mt" / "data"
    data.mkdir(parents=True)
    for lang, second in (("en", "b"), ("de", "d")):
        (data / f"stsb-{lang}-test.csv").write_text("".join(f"{lang} a {i},{second} {i},{g}\n"
                                                            for i, g in enumerate(gold)), encoding="utf-8")
    angle = {i: (5 - g) / 5 * math.pi / 2 for i, g in enumerate(gold)}
    table = ({f"en a {i}": [1.0, 0.0] for i in angle} | {f"b {i}": [math.cos(t), math.sin(t)] for i, t in angle.items()}
             | {f"d {i}": [math.sin(t), math.cos(t)] for i, t in angle.items()})
    result = run_task("sts", LookupEncoder(table, name="t"), langs=["stsb-en", "stsb-en-de"], root=tmp_path)
    assert result.averages == pytest.approx({"stsb en-xx": -100.0, "stsb en": 100.0})


def test_sts_model_giving_every_pair_one_cosine_is_an_error_without_raw_warnings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    root = _sts_root(tmp_path, [0.0, 1.0, 2.5, 5.0])
    constant = {f"{side} {i}": [1.0, 0.0] for side in "ab" for i in range(4)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="sts sts17-5: the model's cosines of the 4 pairs are all 1, so their "
                                             "Spearman correlation with the gold is undefined"):
            run_task("sts", LookupEncoder(constant, name="c"), langs=["sts17-5"], root=root)
