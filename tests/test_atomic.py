from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from xlsent.atomic import atomic_path


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
