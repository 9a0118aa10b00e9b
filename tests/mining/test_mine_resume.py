"""`xlsent mine` killed with SIGKILL mid-run, then run again: the same bytes as a run never interrupted."""

from __future__ import annotations

import hashlib
import importlib
import logging
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from xlsent.cli import main
from xlsent.data.text_input import WorkFolderError, check_work_folder
from xlsent.mining.job import clean_up

if TYPE_CHECKING:
    from conftest import GatedRuns


def test_killed_mine_resumes_byte_identical(tmp_path: Path, gated_runs: Callable[[int], GatedRuns],
                                            numbered_lines: Callable[[int, int], tuple[list[str], list[str]]]) -> None:
    runs = gated_runs(1)  # the source side is embedded, the target side waits: the kill lands between them
    src, tgt = numbered_lines(60, 50)
    (tmp_path / "de.txt").write_text("".join(f"{line}\n" for line in src), encoding="utf-8")
    (tmp_path / "en.txt").write_text("".join(f"{line}\n" for line in tgt), encoding="utf-8")
    argv = ["mine", "de.txt", "en.txt", "-o", "p.tsv", "--model", "gate:tiny", "--with-ids", "-q"]
    killed = runs.start(*argv)
    runs.wait_for("p.tsv.work/src.npy.json")  # the first finished stage: the source side's embeddings
    killed.send_signal(signal.SIGKILL)
    assert killed.wait(timeout=30) == -signal.SIGKILL
    assert not (tmp_path / "p.tsv").exists() and (tmp_path / "p.tsv.work" / "src.npy").is_file()

    runs.open()
    gate = importlib.import_module("gate")
    assert main(["mine", str(tmp_path / "de.txt"), str(tmp_path / "en.txt"), "-o", str(tmp_path / "p.tsv"),
                 "--model", "gate:tiny", "--with-ids", "-q"]) == 0
    assert gate.calls == 1  # the target side only: the source side's embeddings were reused
    assert main(["mine", str(tmp_path / "de.txt"), str(tmp_path / "en.txt"), "-o", str(tmp_path / "q.tsv"),
                 "--model", "gate:tiny", "--with-ids", "-q"]) == 0
    assert (tmp_path / "p.tsv").read_bytes() == (tmp_path / "q.tsv").read_bytes()
    # enough pairs for the comparison to mean something (7 on AMX CPUs with the tiny random model)
    assert (tmp_path / "p.tsv").read_bytes().count(b"\n") >= 5
    assert not any(p.name.endswith((".work", ".lock")) for p in tmp_path.iterdir())


def test_mining_to_standard_output_warns_of_no_other_job(tmp_path: Path, tiny_model_dir: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "de.txt").write_text("der hund bellt\ndie katze\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("the dog barks\nthe cat\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert main(["mine", str(tmp_path / "de.txt"), str(tmp_path / "en.txt"), "-o", "-", "--model",
                     str(tiny_model_dir), "-q"]) == 0
    assert "belongs to another job" not in caplog.text  # its temporary work folder is new, not another job's


def test_a_work_folder_the_run_refused_to_empty_is_left_as_it_was(tmp_path: Path) -> None:
    work = tmp_path / "p.tsv.work"
    (work / "tgt.npy.parts").mkdir(parents=True)
    (work / "src.npy").write_bytes(b"finished stage")
    (work / "tgt.npy.parts" / "notes.txt").write_text("the user's", encoding="utf-8")
    with pytest.raises(WorkFolderError) as refused:
        check_work_folder(work / "tgt.npy.parts", [])
    clean_up(work, refused.value, temporary=False)
    assert (work / "src.npy").read_bytes() == b"finished stage"
    assert (work / "tgt.npy.parts" / "notes.txt").is_file()


class LanguageEncoder:
    """A toy encoder whose vectors depend on the language it is told (as a mapping model's do); it is killed (a
    KeyboardInterrupt) on the line ``dies_on`` when that is set."""

    name = id = "language-toy"
    dim = 8

    def __init__(self) -> None:
        self.dies_on: str | None = None

    def encode(self, sentences: list[str], lang: str | None = None, **kw: object) -> np.ndarray:
        if self.dies_on in sentences:
            raise KeyboardInterrupt
        rows = [np.frombuffer(hashlib.sha256(s.encode()).digest()[:8], np.uint8).astype(np.float32) - 127
                for s in sentences]
        out = np.array([row[::-1] if lang == "fr" else row for row in rows], np.float32).reshape(-1, self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.mark.parametrize("command", ["mine", "score"])
def test_a_rerun_with_other_languages_embeds_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    command: str) -> None:
    """The work folder of a killed run told --src-lang de is not reused by the run told fr."""
    enc = LanguageEncoder()
    monkeypatch.setattr("xlsent.api.load", lambda model, backend="auto": enc)
    (tmp_path / "src.txt").write_text("un\ndeux\ntrois\nquatre\ncinq\n", encoding="utf-8")
    (tmp_path / "tgt.txt").write_text("one\ntwo\nthree\nfour\ncoffee\n", encoding="utf-8")

    def run(out: str, src_lang: str) -> int:
        return main([command, str(tmp_path / "src.txt"), str(tmp_path / "tgt.txt"), "-o", str(tmp_path / out),
                     "--model", "toy", "-k", "2", "--src-lang", src_lang, "--tgt-lang", "en", "-q"])

    assert run("fresh.tsv", "fr") == 0
    enc.dies_on = "coffee"
    assert run("out.tsv", "de") == 130  # interrupted
    assert (tmp_path / "out.tsv.work" / "src.npy").is_file()
    enc.dies_on = None
    assert run("out.tsv", "fr") == 0
    assert (tmp_path / "out.tsv").read_bytes() == (tmp_path / "fresh.tsv").read_bytes()
