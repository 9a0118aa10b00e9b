"""Output locks: one run per output at a time, for every command that writes one; a dead holder blocks nobody."""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from xlsent import output_lock
from xlsent.checksum import sha256_file
from xlsent.cli import build_parser, main
from xlsent.cli.commands import Commands
from xlsent.output_lock import OutputBusyError, exclusive_output, lock_path
from xlsent.store import load_embeddings

if TYPE_CHECKING:
    from conftest import GatedRuns


def test_second_holder_fails_at_once_naming_the_output(tmp_path: Path) -> None:
    out = tmp_path / "new" / "sub" / "o.npy"
    with exclusive_output(out):
        assert lock_path(out) == tmp_path / "new" / "sub" / ".o.npy.lock"
        assert lock_path(out).read_text(encoding="ascii").strip() == str(os.getpid())
        busy = pytest.raises(OutputBusyError, match=rf"o\.npy: busy: another xlsent run \(process {os.getpid()}\) is "
                             "writing this output")
        with busy, exclusive_output(tmp_path / "new" / "." / "sub" / "o.npy"):  # the same output, spelt otherwise
            pass
        assert lock_path(out).read_text(encoding="ascii").strip() == str(os.getpid())  # the loser left it as it was
        with exclusive_output(tmp_path / "new" / "sub" / "other.npy"):
            pass
    assert list(tmp_path.iterdir()) == []  # the lock file and the folders made for it are gone


def test_lock_is_released_when_the_block_fails(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), exclusive_output(tmp_path / "o.npy"):
        raise KeyboardInterrupt
    with exclusive_output(tmp_path / "o.npy"):
        pass
    assert list(tmp_path.iterdir()) == []


def every_command() -> dict[str, argparse.ArgumentParser]:
    """Every ``xlsent`` command's complete parser, by name."""
    sub = next(a for a in build_parser()._actions if isinstance(a, Commands))
    return {name: sub.build(name) for name in sub.choices}


def test_every_command_declares_what_it_writes() -> None:
    for name, parser in every_command().items():
        writes = parser.get_default("writes")
        assert writes is not None, f"xlsent {name}: set_defaults(writes=...) names its output arguments (or ())"
        dests = {action.dest for action in parser._actions}
        assert set(writes) <= dests, name


BUSY = {  # a command line writing {w}/out (or {w}/out.npy, {w}/out.tsv, {w}/out.md)
    "embed": "embed {w}/in.txt -o {w}/out.npy",
    "mine": "mine {w}/in.txt {w}/in.txt -o {w}/out.tsv",
    "index": "index {w}/in.txt -o {w}/out",
    "eval": "eval tatoeba -o {w}/out",
    "report-docs": "report --results {w} --docs {w}/out.md",
    "report-plots": "report --results {w} --plots {w}/out",
    "export": "export me5-small --sentence-transformers {w}/out",
    "train": "train laser --out {w}/out",
    "demo": "demo -o {w}/out",
    "calibrate": "calibrate --model {w}/out",
}


@pytest.mark.parametrize("command", list(BUSY))
def test_every_writer_refuses_a_busy_output(command: str, tmp_path: Path, tiny_model_dir: Path,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "in.txt").write_text("the dog\n", encoding="utf-8")
    if command == "calibrate":  # its outputs are named by the encoder: it locks the model directory it updates
        shutil.copytree(tiny_model_dir, tmp_path / "out")
        monkeypatch.setenv("XLSENT_DATA", str(tmp_path / "no-data"))  # busy is said first, with or without data
    argv = BUSY[command].format(w=tmp_path).split()
    with exclusive_output(next(arg for arg in argv if arg.startswith(f"{tmp_path}/out"))):
        code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{tmp_path}/out" in err and "busy" in err


def test_two_processes_embedding_into_one_output(tmp_path: Path, gated_runs: Callable[[int], GatedRuns]) -> None:
    runs = gated_runs(0)
    (tmp_path / "a.txt").write_text("".join(f"the dog {i}\n" for i in range(40)), encoding="utf-8")
    (tmp_path / "b.txt").write_text("".join(f"a cat runs {i}\n" for i in range(40)), encoding="utf-8")
    first = runs.start("embed", "a.txt", "-o", "same.npy", "--model", "gate:tiny", "--chunk-rows", "8", "-q")
    runs.wait_for(".same.npy.lock")
    started = time.monotonic()
    second = runs.start("embed", "b.txt", "-o", "same.npy", "--model", "gate:tiny", "--chunk-rows", "8", "-q")
    _, err = second.communicate(timeout=60)
    assert second.returncode == 2, err
    assert "same.npy: busy" in err and time.monotonic() - started < 30  # at once: it never waits for the encoder
    runs.open()
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    vectors, meta = load_embeddings(tmp_path / "same.npy", expect_sha256=sha256_file(tmp_path / "a.txt"))
    assert meta["rows"] == 40 and meta["source"]["path"] == "a.txt"
    assert main(["embed", str(tmp_path / "a.txt"), "-o", str(tmp_path / "alone.npy"), "--model", "gate:tiny",
                 "-q"]) == 0
    np.testing.assert_array_equal(vectors, load_embeddings(tmp_path / "alone.npy")[0])
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_killed_holder_blocks_no_one(tmp_path: Path, gated_runs: Callable[[int], GatedRuns]) -> None:
    runs = gated_runs(0)
    (tmp_path / "a.txt").write_text("".join(f"the dog {i}\n" for i in range(20)), encoding="utf-8")
    holder = runs.start("embed", "a.txt", "-o", "o.npy", "--model", "gate:tiny", "--chunk-rows", "5", "-q")
    runs.wait_for(".o.npy.lock")
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    assert (tmp_path / ".o.npy.lock").is_file()  # left behind by the dead run, but held by no one
    runs.open()
    assert main(["embed", str(tmp_path / "a.txt"), "-o", str(tmp_path / "o.npy"), "--model", "gate:tiny",
                 "--chunk-rows", "5", "-q", "--resume"]) == 0
    assert load_embeddings(tmp_path / "o.npy")[1]["rows"] == 20
    assert not (tmp_path / ".o.npy.lock").exists()


def dead_pid() -> int:
    """The process id of a process that has exited."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def hold_as_dead_process(lock: Path) -> int:
    """A descriptor holding ``lock`` whose text names a dead process: what a holder killed while it was forking
    a subprocess leaves (the fork's child holds the lock until it execs)."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, f"{dead_pid()}\n".encode("ascii"))
    return fd


def test_a_lock_lingering_after_its_dead_holder_is_waited_for(tmp_path: Path) -> None:
    fd = hold_as_dead_process(tmp_path / ".o.npy.lock")
    threading.Timer(0.3, os.close, (fd,)).start()
    started = time.monotonic()
    with exclusive_output(tmp_path / "o.npy"):
        assert time.monotonic() - started >= 0.25
    assert list(tmp_path.iterdir()) == []


def test_a_dead_holders_lock_held_past_the_grace_is_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output_lock, "DEAD_HOLDER_GRACE_S", 0.2)
    fd = hold_as_dead_process(tmp_path / ".o.npy.lock")
    try:
        with pytest.raises(OutputBusyError, match="busy"), exclusive_output(tmp_path / "o.npy"):
            pass
    finally:
        os.close(fd)


def test_a_live_holder_fails_at_once(tmp_path: Path) -> None:
    with exclusive_output(tmp_path / "o.npy"):
        started = time.monotonic()
        with pytest.raises(OutputBusyError), exclusive_output(tmp_path / "o.npy"):
            pass
        assert time.monotonic() - started < 1
