"""Parallel text readers: Multi30k, WMT newstest, NTREX-128, Tatoeba-Challenge."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.data.parallel import (
    load_multi30k,
    load_newstest,
    load_ntrex,
    load_tatoeba_challenge,
    ntrex_languages,
    tatoeba_challenge_languages,
)
from xlsent.data.tatoeba import load_tatoeba
from xlsent.testing import dataset_or_skip


@pytest.fixture(scope="module")
def root() -> Path:
    return dataset_or_skip("parallel")


@pytest.mark.data
def test_multi30k(root: Path) -> None:
    en, de = load_multi30k("en", "de", "train", root)
    assert len(en) == len(de) == 29_000
    assert len(load_multi30k("fr", "cs", "val", root)[0]) == 1014
    assert len(load_multi30k("en", "cs", "test_2016_flickr", root)[1]) == 1000
    assert len(load_multi30k("en", "fr", "test_2017_mscoco", root)[0]) == 461
    assert len(load_multi30k("en", "de", "test_2018_flickr", root)[0]) == 1071
    with pytest.raises(ValueError, match="unknown Multi30k test_2017_flickr language 'cs'; valid: de en fr"):
        load_multi30k("en", "cs", "test_2017_flickr", root)
    with pytest.raises(ValueError, match="unknown Multi30k split 'test'; valid: .*train"):
        load_multi30k("en", "de", "test", root)


@pytest.mark.data
def test_newstest(root: Path) -> None:
    de, en = load_newstest(2012, "de", "en", root)
    assert len(de) == len(en) == 3003 and de[0].startswith("Keine befreiende Novelle")
    ru, cs = load_newstest("2013", "ru", "cs", root)
    assert len(ru) == len(cs) == 3000
    en14, hi14 = load_newstest(2014, "en", "hi", root)
    assert len(en14) == len(hi14) == 2507
    with pytest.raises(ValueError, match="newstest2014 has no de-fr set; it has pairs cs-en de-en fr-en hi-en ru-en"):
        load_newstest(2014, "de", "fr", root)
    with pytest.raises(ValueError, match="newstest2008 has no ru-en set; it has languages cs de en es fr hu"):
        load_newstest(2008, "ru", "en", root)
    with pytest.raises(ValueError, match="unknown newstest year '2020'; valid: 2008 2009"):
        load_newstest(2020, "de", "en", root)


@pytest.mark.data
def test_ntrex(root: Path) -> None:
    langs = ntrex_languages(root)
    assert len(langs) == 60 and {"eng", "deu", "fra", "zho_Hans", "srp-Latn"} <= set(langs)
    deu, eng = load_ntrex("deu", "eng", root)
    assert len(deu) == len(eng) == 1997
    assert eng[0] == "Welsh AMs worried about 'looking like muppets'"
    with pytest.raises(ValueError, match="unknown NTREX-128 language 'de'"):
        load_ntrex("de", "eng", root)


@pytest.mark.data
def test_tatoeba_challenge_overlap_removal(root: Path) -> None:
    assert len(tatoeba_challenge_languages(root)) == 31
    full = load_tatoeba_challenge("deu", root, exclude_tatoeba_v1=False)
    assert len(full[0]) == len(full[1]) == 17_565
    deu, eng = load_tatoeba_challenge("deu", root)
    assert len(deu) == len(eng) == 17_565 - 52
    v1_deu, v1_eng = map(set, load_tatoeba("deu", root))
    assert not v1_deu & set(deu) and not v1_eng & set(eng)
    assert len(load_tatoeba_challenge("urd", root)[0]) == 1663 - 1054
    zho, _ = load_tatoeba_challenge("zho", root)
    assert len(zho) == 10_390 - 723
    with pytest.raises(ValueError, match="unknown Tatoeba-Challenge language 'cmn'; valid: ara bul"):
        load_tatoeba_challenge("cmn", root)


def test_mismatched_files_raise(tmp_path: Path) -> None:
    folder = tmp_path / "parallel" / "multi30k"
    folder.mkdir(parents=True)
    (folder / "train.en").write_text("a\nb\n", encoding="utf-8")
    (folder / "train.de").write_text("A\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"train\.en has 2, .*train\.de has 1"):
        load_multi30k("en", "de", "train", tmp_path)
