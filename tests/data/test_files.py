"""Shared file helpers: line splitting, decoding and field errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xlsent.data._files import check_choice, dataset_path, read_legacy_lines, read_lines, split_fields


def test_read_lines_strips_only_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes("  one \r\ntwo\u2028still two\x85\n\nlast".encode())
    assert read_lines(path) == ["  one ", "two\u2028still two\x85", "", "last"]


def test_read_lines_names_the_line_of_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine\nalso fine\ncaf\xe9\n")
    with pytest.raises(ValueError, match=r"bad\.txt:3: invalid UTF-8"):
        read_lines(path)


def test_legacy_lines_use_cp1252_then_latin1(tmp_path: Path) -> None:
    path = tmp_path / "legacy.txt"
    path.write_bytes(b"caf\xe9 \x85 \x93q\x94\r\n\x81x\n")
    assert read_legacy_lines(path) == ["café … “q”", "\x81x"]


def test_split_fields_reports_file_line_and_expectation(tmp_path: Path) -> None:
    assert split_fields("a\tb\tc", tmp_path, 1, 2, at_least=True) == ["a", "b", "c"]
    with pytest.raises(ValueError, match=r":7: 1 tab-separated field\(s\), expected 2"):
        split_fields("no tab", tmp_path / "f.tsv", 7, 2)
    with pytest.raises(ValueError, match="expected 2"):
        split_fields("a\tb\tc", tmp_path / "f.tsv", 1, 2)


def test_missing_path_and_unknown_choice(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere"):
        dataset_path(tmp_path, "nowhere")
    with pytest.raises(ValueError, match="valid: a b"):
        check_choice("c", ("a", "b"), "thing")


def test_a_benchmark_file_that_is_a_folder_is_named_in_a_sentence(tmp_path: Path) -> None:
    folder = tmp_path / "dev.de"
    folder.mkdir()
    with pytest.raises(ValueError, match=rf"{re.escape(str(folder))} is a folder, not a file"):
        read_lines(folder)
    with pytest.raises(ValueError, match=rf"{re.escape(str(folder))} is a folder, not a file"):
        read_legacy_lines(folder)
