"""Saved sentence indexes: searched with sentences, only by the encoder that built them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from xlsent.cli import main
from xlsent.data.text_input import InputSpec
from xlsent.embed_job import EmbedOptions, embed_file
from xlsent.mining import search_index
from xlsent.mining.search_index import SentenceIndex, build_sentence_index, check_index_output
from xlsent.testing import LookupEncoder

TABLE: dict[str, Sequence[float]] = {"the dog barks": [1.0, 0.0, 0.0], "a cat runs": [0.0, 1.0, 0.0],
                                     "der hund bellt": [0.9, 0.1, 0.0]}


def test_search_sentences_needs_the_encoder_that_built_the_index(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(s + "\n" for s in TABLE), encoding="utf-8")
    embed_file(InputSpec(corpus), tmp_path / "v.npy", LookupEncoder(TABLE, name="built"), EmbedOptions(progress=False))
    build_sentence_index(InputSpec(corpus), tmp_path / "idx", tmp_path / "v.npy", "built", kind="flat")
    index = SentenceIndex.open(tmp_path / "idx")
    [hits] = index.search_sentences(["der hund bellt"], LookupEncoder(TABLE, name="built"), k=2)
    assert [hit.text for hit in hits] == ["der hund bellt", "the dog barks"]
    with pytest.raises(ValueError, match=r"idx was built with built, but built is now other; rebuild the index"):
        index.search_sentences(["x"], LookupEncoder(TABLE, name="other"))


def test_a_carriage_return_in_an_indexed_line_shifts_no_hit_text(tmp_path: Path) -> None:
    table = {"the dog\rbarks": [1.0, 0.0, 0.0], "a cat runs": [0.0, 1.0, 0.0], "der hund bellt": [0.0, 0.0, 1.0]}
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes("".join(s + "\n" for s in table).encode("utf-8"))
    embed_file(InputSpec(corpus), tmp_path / "v.npy", LookupEncoder(table, name="t"), EmbedOptions(progress=False))
    build_sentence_index(InputSpec(corpus), tmp_path / "idx", tmp_path / "v.npy", "t", kind="flat")
    index = SentenceIndex.open(tmp_path / "idx")
    assert index.texts == list(table)
    [hits] = index.search_sentences(["der hund bellt"], LookupEncoder(table, name="t"), k=1)
    assert (hits[0].row, hits[0].text) == (2, "der hund bellt")


def test_an_index_refuses_empty_input_and_unreadable_manifests(tmp_path: Path) -> None:
    blank = tmp_path / "blank.txt"
    blank.write_text("\n \n\u200b\u00ad\n\ufeff\x01\n", encoding="utf-8")  # blank, or invisible characters only
    with pytest.raises(ValueError, match="blank.txt: no text to index"):
        build_sentence_index(InputSpec(blank), tmp_path / "idx", tmp_path / "never-read.npy", "t")
    assert not (tmp_path / "idx").exists()
    (tmp_path / "idx").mkdir()
    for text, problem in [("[]", "field(s) model, encoder, rows, files missing"), ('{"model": "m", "encoder": "e", '
                          '"rows": "3", "files": {}}', "field(s) rows missing or of the wrong type")]:
        (tmp_path / "idx" / "xlsent.json").write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=rf"idx/xlsent.json: {re.escape(problem)}"):
            SentenceIndex.open(tmp_path / "idx")


def test_search_shortens_the_echo_of_a_long_query(tmp_path: Path, tiny_model_dir: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the dog barks\na cat runs\n", encoding="utf-8")
    assert main(["index", str(corpus), "-o", str(tmp_path / "idx"), "--model", str(tiny_model_dir), "-q"]) == 0
    capsys.readouterr()
    assert main(["search", str(tmp_path / "idx"), "dog " * 25_000, "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert len(out) < 1000 and "… (shortened: 100000 characters)" in out
    assert main(["index", str(corpus), "-o", str(tmp_path / "idx"), "--model", str(tiny_model_dir), "-q",
                 "--overwrite"]) == 0


def test_search_reads_a_query_file_as_lines_and_names_an_undecodable_query(tmp_path: Path, tiny_model_dir: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the dog barks\na cat runs\n", encoding="utf-8")
    assert main(["index", str(corpus), "-o", str(tmp_path / "idx"), "--model", str(tiny_model_dir), "-q"]) == 0
    queries = tmp_path / "queries.tsv"  # its extension names no format: the queries are its lines, tabs and all
    queries.write_text("the dog\tbarks\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["search", str(tmp_path / "idx"), "--file", str(queries), "-k", "1"]) == 0
    assert "query: the dog\tbarks" in capsys.readouterr().out
    assert main(["search", str(tmp_path / "idx"), "fine", "bytes \udcff from argv"]) == 2
    assert "query 2 of 2 holds a lone surrogate (U+DCFF) at position 6" in capsys.readouterr().err


def test_a_blank_row_keeps_its_place_but_is_never_a_hit(tmp_path: Path) -> None:
    table = {"the dog barks": [1.0, 0.0, 0.0], "a cat runs": [0.0, 1.0, 0.0]}
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the dog barks\n\na cat runs\n", encoding="utf-8")
    embed_file(InputSpec(corpus), tmp_path / "v.npy", LookupEncoder(table, name="t"), EmbedOptions(progress=False))
    build_sentence_index(InputSpec(corpus), tmp_path / "idx", tmp_path / "v.npy", "t", kind="flat")
    [hits] = SentenceIndex.open(tmp_path / "idx").search_sentences(["a cat runs"], LookupEncoder(table, name="t"), k=5)
    assert [(hit.rank, hit.row, hit.text) for hit in hits] == [(1, 2, "a cat runs"), (2, 0, "the dog barks")]


def test_a_killed_build_leaves_the_old_index_whole_or_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("".join(s + "\n" for s in TABLE), encoding="utf-8")
    new.write_text("a cat runs\nthe dog barks\n", encoding="utf-8")
    for corpus in (old, new):
        embed_file(InputSpec(corpus), corpus.with_suffix(".npy"), LookupEncoder(TABLE, name="t"),
                   EmbedOptions(progress=False))
    build_sentence_index(InputSpec(old), tmp_path / "idx", old.with_suffix(".npy"), "t", kind="flat")
    before = sorted(p.name for p in tmp_path.iterdir())

    def killed(path: Path, obj: object) -> None:
        raise KeyboardInterrupt  # the kill, after the index and its texts are written, before the manifest

    monkeypatch.setattr(search_index, "write_json", killed)
    for out in ("idx", "fresh"):
        with pytest.raises(KeyboardInterrupt):
            build_sentence_index(InputSpec(new), tmp_path / out, new.with_suffix(".npy"), "t", kind="flat")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert SentenceIndex.open(tmp_path / "idx").texts == list(TABLE)
    monkeypatch.undo()
    build_sentence_index(InputSpec(new), tmp_path / "idx", new.with_suffix(".npy"), "t", kind="flat")
    assert SentenceIndex.open(tmp_path / "idx").texts == ["a cat runs", "the dog barks"]
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_index_replaces_no_folder_holding_other_files(tmp_path: Path) -> None:
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "index.faiss").write_bytes(b"")
    (tmp_path / "idx" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"idx: the folder holds more than an index \(notes.txt\), and a new "
                                              "index replaces the whole folder"):
        check_index_output(tmp_path / "idx", overwrite=True)
    check_index_output(tmp_path / "new", overwrite=False)
