"""Property tests of the text readers: any text, any bytes, any line endings. Row i is line i, or the reader stops
with an error naming the file and the line (after yielding the rows before it, each equal to its line)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from xlsent.data._files import read_lines, utf16_reason
from xlsent.data.text_input import InputError, InputSpec, iter_rows

SETTINGS = settings(max_examples=60, deadline=None)
LINE = st.text(st.characters(codec="utf-8", blacklist_characters="\n"), max_size=40)
"""One line's text: any Unicode (other line separators, NUL, CRs) but ``\\n``."""
ENDING = st.sampled_from(["\n", "\r\n"])


@st.composite
def documents(draw: st.DrawFn, line: st.SearchStrategy[str] = LINE) -> tuple[list[str], str]:
    """Lines (blank ones included) and a file's text holding them, each ending in LF or CRLF, the last maybe in
    none; a line ending in CR ends in CRLF (after it, an LF would end it in CRLF, and nothing would drop it)."""
    lines = draw(st.lists(line, max_size=12))
    endings = ["\r\n" if line.endswith("\r") else draw(ENDING) for line in lines]
    if lines and not lines[-1].endswith("\r") and draw(st.booleans()):
        endings[-1] = ""
    if lines and endings[-1] == "" and lines[-1] == "":
        lines.pop()  # an empty last line without an ending is no line at all
        endings.pop()
    return lines, "".join(line + end for line, end in zip(lines, endings, strict=True))


@contextmanager
def written(data: bytes, suffix: str = ".txt") -> Iterator[Path]:
    """A temporary file ``in<suffix>`` holding ``data``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"in{suffix}"
        path.write_bytes(data)
        yield path


def rows_of(data: bytes, suffix: str = ".txt", **spec: object) -> list[str]:
    with written(data, suffix) as path:
        return list(iter_rows(InputSpec(path, **spec)))  # type: ignore[arg-type]


@SETTINGS
@given(documents())
@example(([""], "\n"))
@example((["a\u2028b", "\x85", "c\rd"], "a\u2028b\r\n\x85\nc\rd"))
@example((["a\r", "b"], "a\r\r\nb\n"))  # one CR of a CRLF ending goes, not every CR before the LF
def test_txt_row_i_is_line_i(document: tuple[list[str], str]) -> None:
    lines, text = document
    assume(not text.startswith("\ufeff"))  # a file's leading BOM is its encoding's signature: the test below
    assert rows_of(text.encode("utf-8")) == lines
    with written(text.encode("utf-8")) as path:
        assert read_lines(path) == lines  # the benchmark readers split the same way


@SETTINGS
@given(documents(st.text(st.characters(codec="utf-8", blacklist_characters="\t\n\r"), max_size=20)), st.booleans())
def test_tsv_rows_are_their_lines_column(document: tuple[list[str], str], header: bool) -> None:
    cells, _ = document
    text = "".join(f"{i}\t{cell}\n" for i, cell in enumerate(["text", *cells] if header else cells))
    assert rows_of(text.encode("utf-8"), ".tsv", column="1", header=header) == cells


@SETTINGS
@given(st.lists(st.text(st.characters(codec="utf-8"), max_size=30), max_size=10), ENDING)
def test_jsonl_rows_are_their_fields_whatever_the_text(texts: list[str], ending: str) -> None:
    data = "".join(json.dumps({"text": t}, ensure_ascii=False) + ending for t in texts).encode("utf-8")
    assert rows_of(data, ".jsonl") == texts


@SETTINGS
@given(documents(st.text(st.characters(codec="utf-8", blacklist_characters="\t\n\r"), max_size=20)))
@example((["a"], "a\n"))
@example((["\ufeffb"], "\ufeffb\n"))  # a BOM after the signature is text
def test_a_leading_bom_is_a_signature_not_text(document: tuple[list[str], str]) -> None:
    """Editors on Windows start UTF-8 files with a BOM: every reader reads such a file as the same file without it
    (a TSV's header is still recognised, a JSONL's first object still parses), and only that first BOM goes."""
    lines, text = document
    assert rows_of(("\ufeff" + text).encode("utf-8")) == lines
    with written(("\ufeff" + text).encode("utf-8")) as path:
        assert read_lines(path) == lines
    tsv = "".join(f"{i}\t{cell}\n" for i, cell in enumerate(["text", *lines]))
    assert rows_of(("\ufeff" + tsv).encode("utf-8"), ".tsv", column="text") == lines
    jsonl = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in lines)
    assert rows_of(("\ufeff" + jsonl).encode("utf-8"), ".jsonl") == lines


def first_bad_line(data: bytes) -> int | None:
    """The 1-based number of the first line of ``data`` that is not UTF-8 (None: all are)."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return number
    return None


@SETTINGS
@given(st.lists(st.one_of(LINE.map(str.encode), st.binary(max_size=12).filter(lambda b: b"\n" not in b)), max_size=8))
@example([b"fine", b"broken \xff here"])
@example([b"\xe2\x82", b"ok"])  # a character cut short
@example([b"\xef\xbb\xbf"])  # a file of a byte-order mark alone: one empty line
def test_bad_bytes_stop_at_their_line_named(raw_lines: list[bytes]) -> None:
    data = b"".join(raw + b"\n" for raw in raw_lines)
    bad = first_bad_line(data)
    with written(data) as path:
        got: list[str] = []
        readers: list[Callable[[], object]] = [lambda: got.extend(iter_rows(InputSpec(path))), lambda: read_lines(path)]
        if raw_lines and utf16_reason(raw_lines[0] + b"\n"):  # the documented UTF-16 rule, before any line is read
            for read in readers:
                with pytest.raises(ValueError, match=rf"^{path}: is UTF-16"):
                    read()
            assert got == []
            return
        for read in readers:
            if bad is None:
                read()
                continue
            with pytest.raises(ValueError, match=rf"^{path}:{bad}: invalid UTF-8"):
                read()
        expected = [raw.decode("utf-8").removesuffix("\r") for raw in raw_lines[: (bad or len(raw_lines) + 1) - 1]]
        if expected:  # a byte-order mark at the very start is the encoding's signature, not text
            expected[0] = expected[0].removeprefix("\ufeff")
        assert got == expected  # every row before the bad line, each its line


@pytest.mark.parametrize("size", [1 << 20, 4 << 20])
def test_huge_and_blank_lines_keep_their_places(size: int) -> None:
    huge = "ü" * size
    text = f"\n{huge}\r\n\n\nshort\n{huge}"
    assert [len(r) for r in rows_of(text.encode("utf-8"))] == [0, size, 0, 0, 5, size]


def test_a_short_tsv_row_is_named_by_its_line() -> None:
    with written(b"a\tb\nc\td\nlonely\n", ".tsv") as tsv, pytest.raises(
            InputError, match=rf"^{tsv}:3: 1 column\(s\), need column 1"):
        list(iter_rows(InputSpec(tsv, column="1", header=False)))
