"""Atomic file writes: write to a temporary file in the same directory, then rename."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any


def is_special(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (its links followed) is a file that is no regular file and no folder: a device
    (``/dev/null``), a named pipe, a socket, a process substitution's ``/dev/fd/63``.

    >>> is_special(os.devnull), is_special(__file__)
    (True, False)
    """
    target = Path(path)
    return target.exists() and not target.is_file() and not target.is_dir()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it onto ``path``, readable by all (0644) even when
    the writer replaced the temporary file with one of its own (safetensors writes 0600 files).

    ``path`` a special file (:func:`is_special`: ``/dev/null``, a pipe) is yielded itself and written in place:
    renaming onto it would replace the device or the pipe with a regular file. ``path`` a link to a regular file
    (``/dev/stdout`` sent to a file) is written atomically where the link points, and the link stays.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_path(d / "x.txt") as tmp:
    ...     _ = tmp.write_text("hi")
    >>> (d / "x.txt").read_text()
    'hi'
    """
    if is_special(path):
        yield Path(path)
        return
    target = Path(path).resolve() if Path(path).is_symlink() else Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        tmp_path.chmod(0o644)
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a file for writing that appears at ``path`` only when the block succeeds."""
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as fh:
        yield fh
        fh.flush()
        if tmp.is_file():  # a device or a pipe written in place has nothing to sync
            os.fsync(fh.fileno())


def write_lines(output: str | os.PathLike[str], lines: Iterable[str]) -> None:
    """Write ``lines`` (each with its line end) atomically into ``output``; ``-``: to standard output."""
    if str(output) == "-":
        sys.stdout.writelines(lines)
        sys.stdout.flush()
    else:
        with atomic_open(output) as fh:
            fh.writelines(lines)


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented UTF-8 JSON, atomically."""
    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=2, ensure_ascii=False, sort_keys=False)
        fh.write("\n")


def check_folders_above(path: str | os.PathLike[str], flag: str = "") -> None:
    """Raise ValueError when a file stands where a folder above the output ``path`` must be (``flag``: the option
    that named it, for the message).

    >>> import tempfile
    >>> note = Path(tempfile.mkdtemp()) / "note.txt"
    >>> _ = note.write_text("x")
    >>> check_folders_above(note / "out.tsv", "-o")
    Traceback (most recent call last):
    ...
    ValueError: -o .../note.txt/out.tsv: .../note.txt is a file, not a folder
    """
    above = next((p for p in Path(path).absolute().parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise ValueError(f"{f'{flag} ' if flag else ''}{path}: {above} is a file, not a folder")


def check_folder_output(path: str | os.PathLike[str], flag: str) -> None:
    """Raise ValueError naming ``flag`` unless ``path`` can be (or already is) a folder: ``-`` (standard output,
    which cannot hold a folder), or a file at it or above it, is refused.

    >>> check_folder_output("-", "--plots")
    Traceback (most recent call last):
    ...
    ValueError: --plots -: this output is a folder, which standard output cannot take; name a folder
    """
    if str(path) == "-":
        raise ValueError(f"{flag} -: this output is a folder, which standard output cannot take; name a folder")
    if Path(path).exists() and not Path(path).is_dir():
        raise ValueError(f"{flag} {path}: is a file, but this output is a folder; name a new or existing folder")
    check_folders_above(path, flag)
