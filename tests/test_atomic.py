from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from xlsent.atomic import atomic_open, atomic_path, helper_path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_file_the_writer_replaces_ends_readable_by_all(tmp_path: Path) -> None:
    target = tmp_path / "weights.safetensors"
    with atomic_path(target) as tmp:
        save_file({"w": torch.zeros(2)}, str(tmp))
    assert mode(target) == 0o644  # a shipped model file must not be private to its writer
    with atomic_path(tmp_path / "private.txt") as tmp:
        tmp.unlink()
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    assert mode(tmp_path / "private.txt") == 0o644


def test_a_failed_write_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "x.txt"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer failed")
    assert list(tmp_path.iterdir()) == []


def test_a_named_pipe_is_written_in_place_not_replaced(tmp_path: Path) -> None:
    """An output that is a pipe, a device (``-o /dev/null``) or a process substitution is written into: renaming a
    temporary file onto it replaced it with a regular file (as root, ``xlsent align a b -o /dev/null`` replaced the
    system's /dev/null)."""
    fifo = tmp_path / "out.pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    with atomic_open(fifo) as fh:
        fh.write("[0]:[0]:0.1\n")
    reader.join(10)
    assert got == ["[0]:[0]:0.1\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.pipe"]


def test_a_link_to_a_file_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    with atomic_open(tmp_path / "link.txt") as fh:
        fh.write("new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"


def test_helper_files_of_a_long_name_fit_and_differ(tmp_path: Path) -> None:
    """The temporary file beside an output of 236 bytes or more had a name longer than the file system takes (the
    write failed, after the work); a cut name keeps whole characters and a hash of the name it stands for."""
    target = tmp_path / ("ä" * 125 + ".txt")  # 254 bytes
    with atomic_open(target) as fh:
        fh.write("hi")
    assert target.read_text(encoding="utf-8") == "hi" and [p.name for p in tmp_path.iterdir()] == [target.name]
    locks = [helper_path(tmp_path / ("e" * 250 + end), ".", ".lock") for end in ("a.npy", "b.npy")]
    assert locks[0] != locks[1] and all(len(lock.name) == 255 for lock in locks)
    assert helper_path(target, ".", ".lock").name.encode().decode("utf-8").startswith(".ää")
