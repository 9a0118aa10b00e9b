"""STS readers: SemEval-2017 tracks, STS-B and its translations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xlsent.data.sts import (
    STS17_TRACKS,
    STSB_LANGS,
    load_sts17,
    load_stsb_crosslingual,
    load_stsb_multi_mt,
    load_stsbenchmark,
)
from xlsent.paths import data_root

ARABIC = re.compile("[\u0600-\u06ff]")
TURKISH = re.compile("[ğışçöüĞİŞÇÖÜ]")
ENGLISH = re.compile(r"\b(the|is|are|a)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def root() -> Path:
    try:
        base = data_root()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    for folder in ("sts2017", "stsb_multi_mt", "stsbenchmark"):
        if not (base / folder).is_dir():
            pytest.skip(f"{base / folder} missing")
    return base


def share(pattern: re.Pattern[str], texts: list[str]) -> float:
    return sum(bool(pattern.search(t)) for t in texts) / len(texts)


@pytest.mark.data
@pytest.mark.parametrize("track", list(STS17_TRACKS))
def test_sts17_tracks_have_250_scored_pairs(root: Path, track: str) -> None:
    pairs = load_sts17(track, root)
    lang1, lang2 = STS17_TRACKS[track]
    assert pairs.name == f"sts17-{track}-{lang1}-{lang2}"
    assert (pairs.lang1, pairs.lang2) == (lang1, lang2)
    assert len(pairs.sent1) == len(pairs.sent2) == len(pairs.scores) == 250
    assert all(0 <= s <= 5 for s in pairs.scores)


@pytest.mark.data
def test_sts17_sent1_is_in_lang1_even_where_the_file_puts_english_first(root: Path) -> None:
    ar_en = load_sts17("2", root)
    assert share(ARABIC, ar_en.sent1) == 1 and share(ARABIC, ar_en.sent2) == 0
    tr_en = load_sts17("6", root)
    assert share(TURKISH, tr_en.sent1) > 0.9 and share(TURKISH, tr_en.sent2) == 0
    assert share(ENGLISH, tr_en.sent2) > 0.8 and share(ENGLISH, tr_en.sent1) == 0
    assert tr_en.sent2[1] == "The lady is blonde." and tr_en.sent1[1] == "Kadın sarışın."
    es_en_wmt = load_sts17("4b", root)
    assert es_en_wmt.sent1[0].startswith("Los falsificadores") and es_en_wmt.sent2[0].startswith("Counterfeiters")
    es_en = load_sts17("4a", root)
    assert es_en.sent1[0].startswith("La gente") and es_en.sent2[0].startswith("A women")


@pytest.mark.data
def test_sts17_4b_gold_is_integers_two_to_five(root: Path) -> None:
    scores = load_sts17("4b", root).scores
    assert set(scores) == {2.0, 3.0, 4.0, 5.0} and scores.count(5.0) == 132


@pytest.mark.data
def test_stsb_multi_mt_languages_and_sizes(root: Path) -> None:
    files = {p.name.split("-")[1] for p in (root / "stsb_multi_mt" / "data").glob("stsb-*-test.csv")}
    assert set(STSB_LANGS) == files
    for split, n in (("train", 5749), ("dev", 1500), ("test", 1379)):
        pairs = load_stsb_multi_mt("de", split, root)
        assert len(pairs.sent1) == len(pairs.sent2) == len(pairs.scores) == n
        assert min(pairs.scores) == 0.0 and max(pairs.scores) == 5.0
    de = load_stsb_multi_mt("de", "test", root)
    assert de.sent1[0] == "Ein Mädchen frisiert ihr Haar." and de.scores[0] == 2.5
    assert not any(s.endswith("\r") for s in de.sent2)


@pytest.mark.data
def test_crosslingual_rows_come_from_each_language(root: Path) -> None:
    en, zh = load_stsb_multi_mt("en", "test", root), load_stsb_multi_mt("zh", "test", root)
    cross = load_stsb_crosslingual("en", "zh", "test", root)
    assert (cross.lang1, cross.lang2) == ("en", "zh")
    assert cross.sent1 == en.sent1 and cross.sent2 == zh.sent2 and cross.scores == en.scores == zh.scores


@pytest.mark.data
def test_stsbenchmark_matches_the_english_stsb_multi_mt(root: Path) -> None:
    for split, n in (("train", 5749), ("dev", 1500), ("test", 1379)):
        bench = load_stsbenchmark(split, root)
        assert len(bench.scores) == n
    bench, mt = load_stsbenchmark("test", root), load_stsb_multi_mt("en", "test", root)
    assert bench.scores == mt.scores
    assert [s.strip() for s in bench.sent1] == mt.sent1


def fake_sts17(root: Path, track: str, inputs: str, gold: str) -> None:
    lang1, lang2 = STS17_TRACKS[track]
    (root / "sts2017" / "STS2017.eval.v1.1").mkdir(parents=True)
    (root / "sts2017" / "STS2017.gs").mkdir(parents=True)
    (root / "sts2017" / "STS2017.eval.v1.1" / f"STS.input.track{track}.{lang1}-{lang2}.txt").write_text(inputs)
    (root / "sts2017" / "STS2017.gs" / f"STS.gs.track{track}.{lang1}-{lang2}.txt").write_text(gold)


def test_sts17_malformed_gold_names_file_and_line(tmp_path: Path) -> None:
    fake_sts17(tmp_path, "5", "a\tb\nc\td\n", "1.0\nfive\n")
    with pytest.raises(ValueError, match=r"STS\.gs\.track5\.en-en\.txt:2: 'five' is not a number"):
        load_sts17("5", tmp_path)


def test_sts17_malformed_input_and_count_mismatch(tmp_path: Path) -> None:
    fake_sts17(tmp_path / "a", "5", "a\tb\nc d\n", "1\n2\n")
    with pytest.raises(ValueError, match=r"track5\.en-en\.txt:2: 1 tab-separated field\(s\), expected 2"):
        load_sts17("5", tmp_path / "a")
    fake_sts17(tmp_path / "b", "5", "a\tb\nc\td\ne\tf\n", "1\n2\n")
    with pytest.raises(ValueError, match="row counts differ"):
        load_sts17("5", tmp_path / "b")
    fake_sts17(tmp_path / "c", "6", "en1\ttr1\nen2\ttr2\nextra\textra\n", "1\n2\n")
    six = load_sts17("6", tmp_path / "c")
    assert six.sent1 == ["tr1", "tr2"] and six.sent2 == ["en1", "en2"]
    with pytest.raises(ValueError, match="unknown STS17 track '7'; valid: 1 2 3 4a 4b 5 6"):
        load_sts17("7", tmp_path / "c")


def test_crosslingual_refuses_files_with_different_scores(tmp_path: Path) -> None:
    data = tmp_path / "stsb_multi_mt" / "data"
    data.mkdir(parents=True)
    (data / "stsb-en-test.csv").write_text('"A, quoted",b,1.0\r\nc,d,2.0\r\n', encoding="utf-8")
    (data / "stsb-de-test.csv").write_text("x,y,1.0\r\nz,w,2.5\r\n", encoding="utf-8")
    assert load_stsb_multi_mt("en", "test", tmp_path).sent1 == ["A, quoted", "c"]
    with pytest.raises(ValueError, match=r"row 2 has score 2.0 in .*stsb-en-test\.csv but 2.5 in .*stsb-de-test\.csv"):
        load_stsb_crosslingual("en", "de", "test", tmp_path)
    (data / "stsb-fr-test.csv").write_text("x,y\r\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"stsb-fr-test\.csv:1: 2 CSV field\(s\), expected 3"):
        load_stsb_multi_mt("fr", "test", tmp_path)


def _stsb_file(tmp_path: Path, lang: str, scores: list[str]) -> Path:
    data = tmp_path / "stsb_multi_mt" / "data"
    data.mkdir(parents=True, exist_ok=True)
    path = data / f"stsb-{lang}-test.csv"
    path.write_text("".join(f"a {i},b {i},{s}\n" for i, s in enumerate(scores)), encoding="utf-8")
    return path


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "-0.5", "5.01"])
def test_gold_scores_that_are_not_finite_or_off_the_0_to_5_scale_are_refused_naming_file_and_line(
        tmp_path: Path, bad: str) -> None:
    path = _stsb_file(tmp_path, "en", ["1.0", bad, "3"])
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}:2: .*finite similarity score from 0 to 5"):
        load_stsb_multi_mt("en", "test", tmp_path)
    gs = tmp_path / "sts2017" / "STS2017.gs"
    gs.mkdir(parents=True)
    (tmp_path / "sts2017" / "STS2017.eval.v1.1").mkdir()
    (tmp_path / "sts2017" / "STS2017.eval.v1.1" / "STS.input.track5.en-en.txt").write_text("a\tb\nc\td\n")
    (gs / "STS.gs.track5.en-en.txt").write_text(f"0\n{bad}\n")
    with pytest.raises(ValueError, match=r"STS.gs.track5.en-en.txt:2: .*from 0 to 5"):
        load_sts17("5", tmp_path)
    bench = tmp_path / "stsbenchmark"
    bench.mkdir()
    (bench / "sts-test.csv").write_text(f"g\tf\t2017\t1\t{bad}\ts1\ts2\n")
    with pytest.raises(ValueError, match=r"sts-test.csv:1: .*from 0 to 5 in field 5"):
        load_stsbenchmark("test", tmp_path)


def test_gold_scores_at_the_ends_of_the_scale_are_kept(tmp_path: Path) -> None:
    _stsb_file(tmp_path, "en", ["0", "5.0", "2.5"])
    assert load_stsb_multi_mt("en", "test", tmp_path).scores == [0.0, 5.0, 2.5]


def test_gold_of_one_value_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = _stsb_file(tmp_path, "en", ["2.5", "2.5", "2.5"])
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}: all 3 gold scores are 2.5; a correlation needs"):
        load_stsb_multi_mt("en", "test", tmp_path)


def test_cross_lingual_files_of_other_lengths_or_scores_are_named(tmp_path: Path) -> None:
    en = _stsb_file(tmp_path, "en", ["1", "2", "3"])
    de = _stsb_file(tmp_path, "de", ["1", "2"])
    with pytest.raises(ValueError, match=rf"{re.escape(str(en))} has 3, {re.escape(str(de))} has 2"):
        load_stsb_crosslingual("en", "de", "test", tmp_path)
    _stsb_file(tmp_path, "de", ["1", "2", "4"])
    with pytest.raises(ValueError, match=rf"row 3 has score 3.0 in {re.escape(str(en))} but 4.0 in "):
        load_stsb_crosslingual("en", "de", "test", tmp_path)
