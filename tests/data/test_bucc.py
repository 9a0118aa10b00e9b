"""BUCC readers: the 2018 zh-en sample, and BUCC-style sets built from parallel text."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.data.bucc import (
    DEV_YEARS,
    NEWSTEST_BUCC_LANGS,
    BuccSet,
    build_bucc_style,
    load_bucc_sample,
    newstest_bucc,
    newstest_bucc_dev,
    newstest_dev_sentences,
)
from xlsent.data.parallel import load_newstest
from xlsent.paths import data_root


@pytest.fixture(scope="module")
def root() -> Path:
    try:
        base = data_root()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    for folder in ("bucc2018_sample", "parallel/wmt_newstest"):
        if not (base / folder).is_dir():
            pytest.skip(f"{base / folder} missing")
    return base


def gold_sentences(bucc: BuccSet) -> list[tuple[str, str]]:
    src = dict(zip(bucc.src_ids, bucc.src, strict=True))
    tgt = dict(zip(bucc.tgt_ids, bucc.tgt, strict=True))
    return [(src[a], tgt[b]) for a, b in bucc.gold]


@pytest.mark.data
def test_zh_en_sample(root: Path) -> None:
    bucc = load_bucc_sample("zh-en", root)
    assert bucc.pair == "zh-en"
    assert len(bucc.src) == len(bucc.src_ids) == 8624 and len(bucc.tgt) == len(bucc.tgt_ids) == 13_589
    assert len(set(bucc.src_ids)) == 8624 and len(set(bucc.tgt_ids)) == 13_589
    assert bucc.src_ids[0] == "zh-000000001" and bucc.tgt_ids[0] == "en-000000001"
    assert len(bucc.gold) == len(set(bucc.gold)) == 257
    assert all(zh and en for zh, en in gold_sentences(bucc))
    assert "257 gold pairs" in bucc.description


@pytest.mark.data
def test_incomplete_sample_pairs_say_why(root: Path) -> None:
    with pytest.raises(ValueError, match="French side and the gold pairs of fr-en but not the English side"):
        load_bucc_sample("fr-en", root)
    with pytest.raises(ValueError, match="only the gold pairs of de-en"):
        load_bucc_sample("de-en", root)
    with pytest.raises(ValueError, match="unknown BUCC sample pair 'ja-en'; valid: zh-en"):
        load_bucc_sample("ja-en", root)


SRC = ["s0", "s1", "s2", "s3", "s4"]
TGT = ["t0", "t1", "t2", "t3", "t4"]


def build(seed: int = 0, n_gold: int | None = None) -> BuccSet:
    return build_bucc_style(SRC, TGT, [f"ds{i}" for i in range(20)], [f"dt{i}" for i in range(30)], pair="xx-en",
                            n_gold=n_gold, seed=seed, description="synthetic")


def test_build_hides_recoverable_gold_among_distractors() -> None:
    bucc = build()
    assert len(bucc.src) == 25 and len(bucc.tgt) == 35
    assert sorted(gold_sentences(bucc)) == list(zip(SRC, TGT, strict=True))
    assert bucc.src_ids == [f"src-{i:06d}" for i in range(25)] and bucc.tgt_ids[0] == "tgt-000000"
    assert bucc.src[:5] != SRC  # shuffled
    assert bucc.description == "synthetic" and bucc.pair == "xx-en"


def test_build_is_deterministic_per_seed() -> None:
    assert build(seed=3) == build(seed=3)
    assert build(seed=3).src != build(seed=4).src


def test_build_drops_duplicates_and_distractors_equal_to_gold() -> None:
    bucc = build_bucc_style(["a", "b", "a", "c ", ""], ["A", "B", "X", "C", "E"], ["b", "d", "d", " ", "C"],
                            ["A", "D", "b", "D"], pair="xx-en", description="")
    assert sorted(gold_sentences(bucc)) == [("a", "A"), ("b", "B"), ("c", "C")]
    assert sorted(bucc.src) == ["C", "a", "b", "c", "d"]
    assert sorted(bucc.tgt) == ["A", "B", "C", "D", "b"]


def test_build_subsamples_gold_and_checks_lengths() -> None:
    bucc = build(n_gold=2)
    assert len(bucc.gold) == 2 and len(bucc.src) == 22
    assert set(gold_sentences(bucc)) <= set(zip(SRC, TGT, strict=True))
    with pytest.raises(ValueError, match="n_gold=9, but only 5 usable gold pairs"):
        build(n_gold=9)
    with pytest.raises(ValueError, match="2 source and 1 target lines"):
        build_bucc_style(["a", "b"], ["A"], [], [], pair="xx-en", description="")


@pytest.mark.data
@pytest.mark.parametrize("lang", NEWSTEST_BUCC_LANGS)
def test_newstest_bucc(root: Path, lang: str) -> None:
    bucc = newstest_bucc(lang, root)
    src_lines, tgt_lines = load_newstest(2012, lang, "en", root)
    assert len(src_lines) == 3003
    assert 2990 <= len(bucc.gold) <= 3003
    assert set(gold_sentences(bucc)) <= {(s.strip(), t.strip()) for s, t in zip(src_lines, tgt_lines, strict=True)}
    assert len(set(bucc.src)) == len(bucc.src) > 8000 and len(set(bucc.tgt)) == len(bucc.tgt) > 8000
    assert bucc.pair == f"{lang}-en" and "newstest2012" in bucc.description and "seed 0" in bucc.description


@pytest.mark.data
def test_newstest_bucc_distractors_are_not_translations(root: Path) -> None:
    bucc = newstest_bucc("de", root)
    distractors_src = set(bucc.src) - {s for s, _ in gold_sentences(bucc)}
    distractors_tgt = set(bucc.tgt) - {t for _, t in gold_sentences(bucc)}
    de_pool = {s.strip() for year in (2008, 2009, 2010) for s in load_newstest(year, "de", "en", root)[0]}
    en_pool = {t.strip() for year in (2011, 2013) for t in load_newstest(year, "de", "en", root)[1]}
    assert distractors_src <= de_pool and len(distractors_src) > 7000
    assert distractors_tgt <= en_pool and len(distractors_tgt) > 5900
    assert newstest_bucc("de", root) == bucc


@pytest.mark.data
@pytest.mark.parametrize("lang", sorted(DEV_YEARS))
def test_dev_sets_share_no_sentence_with_the_test_sets(root: Path, lang: str) -> None:
    dev, test = newstest_bucc_dev(lang, root), newstest_bucc(lang, root)
    gold_year = DEV_YEARS[lang][0]
    assert gold_year != 2012 and f"newstest{gold_year}" in dev.description and 2990 <= len(dev.gold) <= 3003
    test_gold = {x for pair in gold_sentences(test) for x in pair}
    dev_gold = {x for pair in gold_sentences(dev) for x in pair}
    assert not dev_gold & test_gold
    assert len((set(dev.src) | set(dev.tgt)) & test_gold) <= 1  # a sentence newstest repeats across years ("Warum?")
    held = newstest_dev_sentences([lang, "zh", "en"], root)
    assert dev_gold <= held and not held & test_gold
    with pytest.raises(ValueError, match="newstest BUCC dev language"):
        newstest_bucc_dev("zh", root)


def write_sample(tmp_path: Path, gold: str, zh: str = "z1\t一\nz2\t二\n") -> Path:
    folder = tmp_path / "bucc2018_sample"
    folder.mkdir(exist_ok=True)
    (folder / "zh-en.dev.zh").write_text(zh, encoding="utf-8")
    (folder / "zh-en.dev.en").write_text("e1\tone\ne2\ttwo\n", encoding="utf-8")
    (folder / "zh-en.dev.gold").write_text(gold, encoding="utf-8")
    return folder


def test_sample_with_an_empty_gold_file_is_refused_naming_it(tmp_path: Path) -> None:
    folder = write_sample(tmp_path, "")
    with pytest.raises(ValueError, match=rf"{folder / 'zh-en.dev.gold'}: holds no gold pair"):
        load_bucc_sample("zh-en", tmp_path)


def test_sample_gold_repeats_are_dropped_and_one_to_many_kept_both_noted(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_sample(tmp_path, "z1\te1\nz1\te1\nz2\te2\nz2\te1\n")
    bucc = load_bucc_sample("zh-en", tmp_path)
    assert bucc.gold == [("z1", "e1"), ("z2", "e2"), ("z2", "e1")]
    assert "3 gold pairs; 1 repeated gold line(s) of zh-en.dev.gold dropped; 2 gold pair(s)" in bucc.description
    assert "one-to-many gold, kept" in bucc.description
    assert "repeated gold line" in caplog.text and "one-to-many" in caplog.text


def test_sample_sentence_without_text_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    folder = write_sample(tmp_path, "z1\te1\n", zh="z1\t一\nz2\t \n")
    with pytest.raises(ValueError, match=rf"{folder / 'zh-en.dev.zh'}:2: a line without text"):
        load_bucc_sample("zh-en", tmp_path)
