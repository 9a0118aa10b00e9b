"""Tatoeba v1 reader: real counts from the shared data, errors on tiny synthetic folders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xlsent.data.tatoeba import PAPER14, XTREME36, load_tatoeba, tatoeba_languages
from xlsent.testing import dataset_or_skip


@pytest.fixture(scope="module")
def root() -> Path:
    return dataset_or_skip("tatoeba_v1")


def write_pair(root: Path, lang: str, xx: bytes, en: bytes) -> None:
    folder = root / "tatoeba_v1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"tatoeba.{lang}-eng.{lang}").write_bytes(xx)
    (folder / f"tatoeba.{lang}-eng.eng").write_bytes(en)


def test_language_lists() -> None:
    assert len(XTREME36) == len(set(XTREME36)) == 36
    assert len(PAPER14) == len(set(PAPER14)) == 14


@pytest.mark.data
def test_112_languages_include_the_standard_subsets(root: Path) -> None:
    langs = tatoeba_languages(root)
    assert len(langs) == 112 and langs == sorted(langs)
    assert set(XTREME36) <= set(langs) and set(PAPER14) <= set(langs)


@pytest.mark.data
def test_counts_match_the_paper(root: Path) -> None:
    sizes = {lang: len(load_tatoeba(lang, root)[0]) for lang in tatoeba_languages(root)}
    assert sum(sizes.values()) == 88_877
    assert sizes["deu"] == 1000
    assert {k: sizes[k] for k in ("tzl", "swg", "gsw", "ast", "ang", "cha", "xho", "amh")} == {
        "tzl": 104, "swg": 112, "gsw": 117, "ast": 127, "ang": 134, "cha": 137, "xho": 142, "amh": 168}


@pytest.mark.data
def test_pairs_are_aligned_lines(root: Path) -> None:
    deu, eng = load_tatoeba("deu", root)
    assert len(deu) == len(eng) == 1000
    assert all(s and "\n" not in s for s in deu + eng)
    cmn, eng_cmn = load_tatoeba("cmn", root)
    assert len(cmn) == len(eng_cmn) == 1000 and eng_cmn != eng


def test_keeps_whitespace_and_strips_only_the_newline(tmp_path: Path) -> None:
    write_pair(tmp_path, "xxx", b"  a b \nc\n", b"A B\t\nC")
    assert load_tatoeba("xxx", tmp_path) == (["  a b ", "c"], ["A B\t", "C"])
    assert tatoeba_languages(tmp_path) == ["xxx"]


def test_errors_name_the_problem(tmp_path: Path) -> None:
    write_pair(tmp_path, "xxx", b"a\nb\n", b"A\n")
    with pytest.raises(ValueError, match=r"tatoeba\.xxx-eng\.xxx has 2.*tatoeba\.xxx-eng\.eng has 1"):
        load_tatoeba("xxx", tmp_path)
    with pytest.raises(ValueError, match="unknown Tatoeba language 'yyy'; valid: xxx"):
        load_tatoeba("yyy", tmp_path)
    write_pair(tmp_path, "zzz", b"ok\n\xff\n", b"A\nB\n")
    with pytest.raises(ValueError, match=r"tatoeba\.zzz-eng\.zzz:2: invalid UTF-8"):
        load_tatoeba("zzz", tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="tatoeba_v1 not found"):
        tatoeba_languages(tmp_path / "empty")


@pytest.mark.parametrize("kind", ["missing", "dangling link", "folder"])
def test_a_language_with_one_file_is_an_error_naming_the_other(tmp_path: Path, kind: str) -> None:
    write_pair(tmp_path, "xxx", b"a\n", b"A\n")
    write_pair(tmp_path, "deu", b"b\n", b"B\n")
    other = tmp_path / "tatoeba_v1" / "tatoeba.deu-eng.deu"
    other.unlink()
    if kind == "dangling link":
        other.symlink_to(tmp_path / "nowhere")
    elif kind == "folder":
        other.mkdir()
    with pytest.raises(ValueError, match=rf"{re.escape(str(other))} (is missing|is a link|is a folder).*needs both"):
        tatoeba_languages(tmp_path)
    with pytest.raises(ValueError, match=r"tatoeba\.deu-eng\.deu"):
        load_tatoeba("deu", tmp_path)
