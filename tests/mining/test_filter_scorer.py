"""The learned filter scorer: its features on pairs with known answers, a scorer's file (JSON, never a pickle) and its
refusals, ``xlsent filter`` keeping by ``p_clean`` row for row, and ``xlsent train filter`` on a user's bitext."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from xlsent.cli import main
from xlsent.data.noisy_bitext import NOISE_KINDS, noisy_from_rows
from xlsent.mining.config import SearchConfig
from xlsent.mining.filter_config import FilterConfig
from xlsent.mining.filter_scorer import Scorer, check_encoder, fit_scorer, load_scorer, shipped_scorer
from xlsent.mining.filtering import SCORE_COLUMNS, decide, pair_values
from xlsent.mining.job import measure_texts, score_texts
from xlsent.mining.pair_features import (
    FEATURES,
    HalfPlan,
    half_cosines,
    half_plan,
    relative_lengths,
    split_halves,
    text_features,
)
from xlsent.testing import LookupEncoder

DIM = 16
LGB = {"objective": "binary", "verbosity": -1, "num_threads": 1, "min_data_in_leaf": 5, "deterministic": True}
COSINE = FEATURES.index("cosine")


def toy_scorer(encoder: str = "toy", cut: float = 0.5) -> Scorer:
    """A scorer that learned that a pair is clean when its cosine is above 0.5."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(600, len(FEATURES)))
    return fit_scorer(x, (x[:, COSINE] > 0.5).astype(int), LGB, 40, encoder=encoder, about={"pairs": ["xx-en"]},
                      cut=cut)


def test_halves_cut_words_or_characters_and_refuse_short_lines() -> None:
    assert split_halves("eins zwei drei vier fünf sechs sieben") == ("eins zwei drei", "vier fünf sechs sieben")
    assert split_halves("我们今天在花园里吃了午饭。") == ("我们今天在花", "园里吃了午饭。")
    assert split_halves("zu kurz hier") is None and split_halves("短い文です") is None
    assert split_halves("a\tb\nc d e f") == ("a b c", "d e f")  # each half is one line of a text file


def test_relative_length_is_against_the_files_own_ratio_and_the_longer_side_is_cut() -> None:
    src = ["ein zwei drei vier fünf sechs", "ein zwei drei vier fünf sechs sieben acht neun zehn elf zwölf"]
    tgt = ["one two three four five six", "one two three four five six"]
    lengths = [np.array([len(t) for t in side]) for side in (src, tgt)]
    rel = relative_lengths(*lengths)
    assert rel[0] < 0 < rel[1]
    plan = half_plan(src, tgt, rel, np.array([True, True]))
    assert plan.rows.tolist() == [0, 1] and plan.side.tolist() == [1, 0]  # the relatively longer side of each
    assert plan.texts_of(0) == list(split_halves(src[1]) or ())
    assert half_plan(src, tgt, rel, np.array([False, True])).rows.tolist() == [1]  # a pair a rule drops: no halves


def test_half_cosines_see_which_half_the_other_side_covers() -> None:
    x, y = np.eye(4, dtype=np.float32)[:2], np.eye(4, dtype=np.float32)[[0, 2]]
    plan = HalfPlan(np.array([0]), np.array([0]), ["first half", "second half"])
    halves = np.eye(4, dtype=np.float32)[[0, 3]]  # the source's first half is the target, the second is not
    assert half_cosines(plan, halves, x, y, np.arange(2), np.arange(2)).tolist() == [[1.0, 0.0]]


def test_string_features_know_their_answers() -> None:
    copied, numbers, agree, names, question, exclaim, final, brackets = text_features(
        "Maria kam am 3. Mai 2019 nach Berlin (zum ersten Mal)?", "Maria came to Berlin on 3 May 2019.")
    assert (numbers, agree, question, final, brackets) == (4.0, 1.0, 1.0, 0.0, 2.0)
    assert names == 0.25  # Berlin of Mai, Berlin, Mal (source) and Berlin, May (target); a first word is no name
    assert copied == pytest.approx(3 / 4)  # Maria, Berlin, 2019 of the target's 4 words of 4 characters or more
    assert math.isnan(text_features("Der Hund schläft.", "The dog sleeps.")[2])  # no number on either side


def test_rivals_are_the_best_other_neighbour() -> None:
    x = np.eye(6, dtype=np.float32)[:5]
    y = np.eye(6, dtype=np.float32)[[0, 1, 2, 3, 4]]
    y[1] = (x[1] + x[2]) / np.linalg.norm(x[1] + x[2])  # target 1 is close to sources 1 and 2
    scored = score_texts([f"s{i}" for i in range(5)], [f"t{i}" for i in range(5)], x, y, SearchConfig(k=2))
    assert scored.rival is not None
    assert scored.rival[2] == pytest.approx(float(x[2] @ y[1]))  # source 2's best other target is target 1
    assert scored.rival[1] == pytest.approx(float(y[1] @ x[2]))


def test_a_scorer_is_json_reloads_alike_and_refuses_what_is_not_one(tmp_path: Path) -> None:
    scorer = toy_scorer()
    path = scorer.save(tmp_path / "s")
    assert path.name == "scorer.json" and json.loads(path.read_text())["format"] == "xlsent-filter-scorer/1"
    rows = np.random.default_rng(1).uniform(-1, 1, size=(50, len(FEATURES)))
    assert np.array_equal(load_scorer(tmp_path / "s").p_clean(rows), scorer.p_clean(rows))
    assert math.isnan(scorer.p_clean(np.full((1, len(FEATURES)), np.nan))[0])  # a row a rule dropped
    record = json.loads(path.read_text())
    for broken, message in [({**record, "format": "pickle"}, "not an xlsent filter scorer"),
                            ({**record, "features": ["margin"]}, "train it again"),
                            ({**record, "cut": 2}, "cut must be a probability")]:
        (tmp_path / "bad.json").write_text(json.dumps(broken))
        with pytest.raises(ValueError, match=message):
            load_scorer(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_bytes(b"\x80\x04K.")  # a pickle is not read
    with pytest.raises(ValueError, match="not a filter scorer"):
        load_scorer(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="no filter scorer there"):
        load_scorer(tmp_path / "missing")


def test_a_scorer_is_used_only_with_its_encoders_weights(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    scorer = toy_scorer("toy@abc")
    check_encoder(scorer, "toy@abc+openvino-bf16")  # the same weights on a lossy backend
    with pytest.raises(ValueError, match="trained with the vectors of toy@abc"):
        check_encoder(scorer, "toy@def")
    scorer.save(tmp_path / "toy.json")
    assert shipped_scorer("toy@abc", tmp_path) is not None
    assert shipped_scorer("toy@def", tmp_path) is None and "not used" in caplog.text
    assert shipped_scorer("other@abc", tmp_path) is None


def test_decide_drops_by_p_clean_with_its_own_reason_and_keep_ranks_by_it() -> None:
    src, tgt = ["Das Haus ist rot.", "Der Hund bellt laut.", "Die Katze schläft."], ["The house is red.",
                                                                                   "The dog barks loudly.",
                                                                                   "The cat sleeps."]
    cfg = FilterConfig(langid=False)
    values = pair_values(src, tgt, ("de", "en"), cfg)
    scores, p_clean = np.array([1.3, 1.2, 1.0]), np.array([0.2, 0.9, 0.8])
    d = decide(values, scores, cfg, threshold=0.5, p_clean=p_clean)
    assert d.reason == ["scorer", "", ""]
    kept = decide(values, scores, FilterConfig(langid=False, keep=0.34), threshold=None, p_clean=p_clean)
    assert kept.keep.tolist() == [False, True, False]  # the best third by p_clean, not by margin


@pytest.fixture()
def toy_pairs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    """Twelve clean pairs (each translation its source's direction) and a misaligned one, ``--model`` loading an
    encoder that records what it embeds (halves included: unknown lines map to zero)."""
    rng = np.random.default_rng(5)
    pairs = [(f"Satz {w} mit einigen Wörtern darin und mehr.", f"Sentence {w} with a few words in it and more.")
             for w in ("eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf",
                       "zwölf")]
    table: dict[str, list[float]] = {}
    for s, t in pairs:
        base = rng.normal(size=DIM)
        table[s], table[t] = list(base + 0.1 * rng.normal(size=DIM)), list(base + 0.1 * rng.normal(size=DIM))
    pairs.append((pairs[0][0], pairs[5][1]))
    enc = LookupEncoder(table, name="toy")
    seen: list[str] = []
    original = enc.encode

    def encode(sentences: list[str], lang: str | None = None, **kw: object) -> np.ndarray:
        seen.extend(sentences)
        return original(sentences, lang)

    enc.encode = encode  # type: ignore[method-assign]
    monkeypatch.setattr("xlsent.api.load", lambda model, backend="auto": enc)
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    return path, seen


def test_filter_keeps_by_the_scorer_row_for_row(toy_pairs: tuple[Path, list[str]], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path, seen = toy_pairs
    toy_scorer().save(tmp_path / "scorer")
    kept, scores = tmp_path / "kept.tsv", tmp_path / "all.tsv"
    assert main(["filter", str(path), "-o", str(kept), "--scores", str(scores), "--src-lang", "de", "--tgt-lang",
                 "en", "--scorer", str(tmp_path / "scorer"), "--no-langid", "-q"]) == 0
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert re.search(r"score cut: [0-9.]+ \(p_clean of .*; p_clean\)", said), said  # not named a margin
    rows = [line.split("\t") for line in scores.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == list(SCORE_COLUMNS) and len(rows) == 14
    reasons = [r[SCORE_COLUMNS.index("reason")] for r in rows[1:]]
    assert reasons == [""] * 12 + ["scorer"]
    p_clean = [float(r[SCORE_COLUMNS.index("p_clean")]) for r in rows[1:]]
    assert min(p_clean[:12]) >= 0.5 > p_clean[12]
    assert len(kept.read_text(encoding="utf-8").splitlines()) == 12
    lines = {side for line in path.read_text(encoding="utf-8").splitlines() for side in line.split("\t")}
    halves = [text for text in seen if text not in lines]
    assert len(halves) == 2 * 13  # the two halves of one side of every pair the rules pass


def test_filter_refuses_a_scorer_of_another_encoder(toy_pairs: tuple[Path, list[str]], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = toy_pairs
    toy_scorer("other@123").save(tmp_path / "scorer")
    assert main(["filter", str(path), "-o", str(tmp_path / "kept.tsv"), "--scorer", str(tmp_path / "scorer"),
                 "-q"]) == 2
    assert "trained with the vectors of other@123" in capsys.readouterr().err
    assert not (tmp_path / "kept.tsv").exists()


@pytest.mark.parametrize(("options", "said"), [
    (["-k", "2"], "measured with -k 4 (this run: -k 2); drop the option, or pass --scorer none"),
    (["--margin", "distance", "--no-unify"],
     "measured with --margin ratio --unify (this run: --margin distance --no-unify); drop the options"),
    (["--margin", "absolute"], "measured with --margin ratio (this run: --margin absolute)")])
def test_filter_refuses_margins_measured_otherwise_than_the_scorers(
        toy_pairs: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str],
        said: str) -> None:
    """The scorer learned margins of k=4, ratio, unified: other margins would feed it values off its scale."""
    path, seen = toy_pairs
    toy_scorer().save(tmp_path / "scorer")
    assert main(["filter", str(path), "-o", str(tmp_path / "kept.tsv"), "--scorer", str(tmp_path / "scorer"),
                 *options, "-q"]) == 2
    assert f"the learned scorer {tmp_path / 'scorer'}" in capsys.readouterr().err
    assert not (tmp_path / "kept.tsv").exists() and not seen
    assert main(["filter", str(path), "-o", str(tmp_path / "kept.tsv"), "--scorer", "none", "--threshold", "0.5",
                 *options, "-q"]) == 0


def test_noise_from_a_users_rows_has_every_kind_it_can_make() -> None:
    src = [f"Satz Nummer {i} mit ein paar Wörtern mehr darin." for i in range(120)]
    tgt = [f"Sentence number {i} with a few more words in it." for i in range(120)]
    bitext = noisy_from_rows("xx-en", (src, tgt), ([], []), {}, split="tune", clean=30, per_kind=5, seed=0)
    counts = bitext.counts()
    assert counts["clean"] == 30 and all(counts[k] == 5 for k in NOISE_KINDS if k != "wrong_language")
    assert "wrong_language" not in counts  # no lines of a third language were given
    small = noisy_from_rows("xx-en", (src[:20], tgt[:20]), ([], []), {}, split="test", clean=30, per_kind=5, seed=0)
    assert small.counts()["clean"] <= 5  # it shrinks to what the rows allow


def test_train_filter_on_a_users_bitext_and_filter_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    rng = np.random.default_rng(7)
    words = ["Haus", "Baum", "Fluss", "Berg", "Stadt", "Wald", "Feld", "Meer", "Dorf", "Weg"]
    src = [f"Das {a} liegt neben dem {b} und hat die Nummer {i}." for i, (a, b) in
           enumerate((a, b) for a in words for b in words)]
    tgt = [f"The {a.lower()} lies next to the {b.lower()} and has number {i}." for i, (a, b) in
           enumerate((a, b) for a in words for b in words)]
    table: dict[str, list[float]] = {}
    for s, t in zip(src, tgt, strict=True):
        base = rng.normal(size=DIM)
        table[s], table[t] = list(base + 0.1 * rng.normal(size=DIM)), list(base + 0.1 * rng.normal(size=DIM))
    enc = LookupEncoder(table, name="toy")
    monkeypatch.setattr("xlsent.api.load", lambda model, backend="auto": enc)
    pairs = tmp_path / "xx-en.tsv"
    pairs.write_text("".join(f"{s}\t{t}\n" for s, t in zip(src, tgt, strict=True)), encoding="utf-8")
    out = tmp_path / "my-scorer"
    assert main(["train", "filter", "--bitext", f"de={pairs}", "--bitext-only", "--out", str(out), "--set",
                 "clean=30", "--set", "per_kind=5", "--set", "trees=30", "--set", "dev_pairs=[]", "-q"]) == 0
    assert "--scorer" in capsys.readouterr().out
    scorer = load_scorer(out)
    assert scorer.encoder == "toy" and scorer.record["trained_on"]["kinds"]["clean"] > 0
    measured = measure_texts(src[:40] + [src[0]], tgt[:40] + [tgt[7]], ("de", "en"), enc.encode,
                             FilterConfig(langid=False), SearchConfig())
    p = scorer.p_clean(measured.features)
    assert p[40] < float(np.median(p[:40]))  # the misaligned pair scores under the clean ones
    assert main(["train", "filter", "--bitext", f"de={pairs}", "--bitext-only", "--out", str(out), "-q"]) == 2
    assert "exists" in capsys.readouterr().err


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_scorer_training_refuses_a_seed_the_encoder_methods_refuse(seed: int) -> None:
    from xlsent.mining.scorer_training import scorer_config

    with pytest.raises(ValueError, match=rf"seed must be a whole number >= 0 and < 2\*\*32 .*not {seed}"):
        scorer_config((), [f"seed={seed}"])
