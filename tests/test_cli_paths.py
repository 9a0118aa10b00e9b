"""Paths the commands take and write: file names that are not UTF-8, names near the file system's length limit, empty
path options, folders and devices where a file is read."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from xlsent import store
from xlsent.cli import main

LINES = ["the dog barks", "der hund bellt", "a cat runs", "eine katze rennt", "the cat"]
BAD = "bad\udcff"
"""A file name holding the byte 0xff, which is no UTF-8: Python keeps it as a lone surrogate."""


@pytest.fixture()
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's folder, as the working directory, holding en.txt, de.txt and pairs.tsv (5 lines each)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "en.txt").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    (tmp_path / "de.txt").write_text("\n".join(reversed(LINES)) + "\n", encoding="utf-8")
    (tmp_path / "pairs.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in zip(LINES, reversed(LINES), strict=True)),
                                        encoding="utf-8")
    return tmp_path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``xlsent ARGV``'s exit status and standard error."""
    code = main(argv)
    return code, capsys.readouterr().err


def test_a_non_utf8_input_name_is_recorded_printably(work: Path, tiny_model_dir: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The name was written into the sidecar (and the index's manifest) as it came, a lone surrogate that UTF-8 JSON
    cannot hold: the run failed after the work, leaving the vectors without their sidecar."""
    (work / f"{BAD}.txt").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    model = ["--model", str(tiny_model_dir), "-q"]
    assert run(["embed", f"{BAD}.txt", "-o", "v.npy", *model], capsys)[0] == 0
    assert store.read_metadata(work / "v.npy")["source"]["path"] == "bad\\xff.txt"
    assert run(["mine", f"{BAD}.txt", "de.txt", "-o", "m.tsv", *model], capsys)[0] == 0
    assert run(["index", f"{BAD}.txt", "-o", "idx", *model], capsys)[0] == 0
    manifest = json.loads((work / "idx" / "xlsent.json").read_text(encoding="utf-8"))
    assert manifest["source"]["path"] == "bad\\xff.txt"
    assert sorted(p.name for p in work.iterdir()) == sorted(
        [f"{BAD}.txt", "en.txt", "de.txt", "pairs.tsv", "v.npy", "v.npy.json", "m.tsv", "idx"])


def test_a_failed_sidecar_leaves_no_vectors(work: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Vectors whose sidecar could not be written looked finished (and an earlier run's sidecar described other
    vectors)."""
    model = ["--model", str(tiny_model_dir), "-q"]
    assert run(["embed", "de.txt", "-o", "v.npy", *model], capsys)[0] == 0

    def disk_full(path: Path, obj: object) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(store, "write_json", disk_full)
    code, err = run(["embed", "en.txt", "-o", "v.npy", *model], capsys)
    assert code == 1 and "No space left on device" in err
    assert not (work / "v.npy").exists() and not (work / "v.npy.json").exists()


@pytest.mark.parametrize("length", [240, 245, 249, 251])
def test_an_output_name_of_legal_length_is_written(work: Path, tiny_model_dir: Path, length: int,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The hidden helpers beside an output (its lock, its temporary files, its .parts and .work folders) took names
    longer than the file system's limit: the run failed, after the work."""
    model = ["--model", str(tiny_model_dir), "-q"]
    name = "e" * (length - 4)
    outputs = [f"{name}.txt"]
    assert run(["split", "en.txt", "--lang", "en", "-o", f"{name}.txt", "-q"], capsys)[0] == 0
    assert run(["mine", "en.txt", "de.txt", "-o", f"{name}.tsv", *model], capsys)[0] == 0
    outputs.append(f"{name}.tsv")
    if length <= 250:  # room for the sidecar's name, .npy.json
        assert run(["embed", "en.txt", "-o", f"{name}.npy", *model], capsys)[0] == 0
        outputs += [f"{name}.npy", f"{name}.npy.json"]
    assert run(["index", "en.txt", "-o", f"{name}.idx", *model], capsys)[0] == 0  # a folder: its .work beside it
    outputs.append(f"{name}.idx")
    assert sorted(p.name for p in work.iterdir()) == sorted(["en.txt", "de.txt", "pairs.tsv", *outputs])


def test_an_output_name_without_room_for_what_goes_beside_it_is_refused_first(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A name the file system takes, but not its sidecar's; a name longer than the file system takes."""
    code, err = run(["embed", "en.txt", "-o", "e" * 247 + ".npy", "--model", "toy:unloadable", "-q"], capsys)
    assert code == 2 and "e" * 247 + ".npy: the name leaves no room for " in err
    code, err = run(["split", "en.txt", "--lang", "en", "-o", "e" * 252 + ".txt"], capsys)
    assert code == 2 and "e" * 252 + ".txt: the name is 256 bytes long" in err
    assert sorted(p.name for p in work.iterdir()) == ["de.txt", "en.txt", "pairs.tsv"]


@pytest.mark.parametrize("argv", [["score", "--tsv", "dd", "--no-header", "-o", "sc.tsv"],
                                  ["filter", "dd", "-o", "f.tsv", "--threshold", "0"]])
def test_a_folder_as_the_pairs_file_is_named(work: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    (work / "dd").mkdir()
    code, err = run([*argv, "--model", "toy:unloadable", "-q"], capsys)
    assert code == 2 and "dd: is a directory; give a file (or - for standard input)" in err


def test_a_device_as_the_pairs_file_is_named(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["filter", "/dev/null", "-o", "f.tsv", "--model", "toy:unloadable", "-q"], capsys)
    assert code == 2 and "/dev/null: PAIRS.tsv needs a file" in err


@pytest.mark.parametrize(("given", "named"), [("-", "<stdin>"), ("/dev/null", "/dev/null")])
def test_an_empty_stream_to_index_is_named(work: Path, given: str, named: str, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The message named the temporary copy of the stream (/tmp/xlsent-input-...)."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))
    code, err = run(["index", given, "-o", "idx", "--model", "toy:unloadable", "-q"], capsys)
    assert code == 2 and f"xlsent: error: {named}: no text to index" in err


def test_an_index_under_a_file_is_refused_first(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["index", "en.txt", "-o", "en.txt/idx", "--model", "toy:unloadable", "-q"], capsys)
    assert code == 2 and f"en.txt/idx: {work}/en.txt is a file, not a folder" in err


@pytest.mark.parametrize(("argv", "option"), [
    (["embed", "", "-o", "v.npy"], "input"),
    (["embed", "en.txt", "-o", ""], "-o/--output"),
    (["embed", "en.txt", "-o", "v.npy", "--model", ""], "--model"),
    (["eval", "tatoeba", "--model", ""], "--model"),
    (["eval", "tatoeba", "--data", ""], "--data"),
    (["export", "me5-small", "--sentence-transformers", ""], "--sentence-transformers"),
    (["export", "", "--sentence-transformers", "st"], "model"),
    (["mine", "en.txt", "de.txt", "-o", "m.tsv", "--src-emb", ""], "--src-emb"),
    (["score", "--tsv", "", "-o", "s.tsv"], "--tsv"),
    (["filter", "pairs.tsv", "-o", "f.tsv", "--scores", ""], "--scores"),
    (["filter", "pairs.tsv", "-o", "f.tsv", "--config", ""], "--config"),
    (["search", "", "query"], "index"),
    (["search", "idx", "--file", ""], "--file"),
    (["split", "en.txt", "--lang", "en", "-o", ""], "-o/--output"),
    (["align", "en.txt", "", "-o", "a.txt"], "tgt"),
    (["align", "--pairs", ""], "--pairs"),
    (["serve", "--config", ""], "--config"),
    (["train", "laser", "-o", ""], "--out/-o"),
    (["demo", "-o", ""], "-o/--output"),
])
def test_an_empty_path_is_refused(work: Path, argv: list[str], option: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """An empty path meant the current folder: --model "" loaded it as a model, -o "" wrote into it."""
    code, err = run(argv, capsys)
    assert code == 2 and f"argument {option}: empty value" in err


def test_a_folder_as_given_embeddings_is_named(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "dd").mkdir()
    code, err = run(["mine", "en.txt", "de.txt", "--src-emb", "dd", "-o", "m.tsv", "--model", "toy:unloadable", "-q"],
                    capsys)
    assert code == 2 and "--src-emb dd: is a directory" in err


def test_a_query_file_without_queries_is_named(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["search", "idx", "--file", "/dev/null"], capsys)
    assert code == 2 and "--file /dev/null: holds no query" in err
