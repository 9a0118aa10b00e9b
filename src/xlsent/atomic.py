"""Atomic file writes: write to a temporary file in the same directory, then rename."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

NAME_MAX = 255
"""The longest file name, in bytes, where the file system does not say (that of ext4, XFS, Btrfs and tmpfs)."""
TEMP_ROOM = 8
"""The characters :func:`tempfile.mkstemp` puts between its prefix and suffix."""


def name_limit(path: str | os.PathLike[str]) -> int:
    """The longest file name, in bytes, that the file system of the folder of ``path`` (or of the nearest folder
    above it that exists) takes."""
    folder = next((p for p in Path(path).absolute().parents if p.is_dir()), Path("/"))
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return NAME_MAX


def check_name_length(path: str | os.PathLike[str], beside: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Raise ValueError naming ``path`` when its name is longer than its file system takes, or leaves no room for the
    names of the files ``beside`` it that go with it (a sidecar).

    >>> check_name_length("e" * 252 + ".txt")
    Traceback (most recent call last):
    ...
    ValueError: eee...e.txt: the name is 256 bytes long, more than the 255 the file system takes; name a shorter file
    >>> check_name_length("e" * 250 + ".npy", ["e" * 250 + ".npy.json"])
    Traceback (most recent call last):
    ...
    ValueError: eee...e.npy: the name leaves no room for eee...e.npy.json beside it (259 bytes, more than ...
    """
    name, limit = len(os.fsencode(Path(path).name)), name_limit(path)
    if name > limit:
        raise ValueError(f"{path}: the name is {name} bytes long, more than the {limit} the file system takes; name a "
                         "shorter file")
    for other in beside:
        if (size := len(os.fsencode(Path(other).name))) > limit:
            raise ValueError(f"{path}: the name leaves no room for {Path(other).name} beside it ({size} bytes, more "
                             f"than the {limit} the file system takes); name the output at most "
                             f"{limit - size + name} bytes long")


def helper_path(path: str | os.PathLike[str], prefix: str = "", suffix: str = "", room: int = 0) -> Path:
    """The file ``prefix + NAME + suffix`` beside ``path`` (``NAME`` its name) that a run keeps with its output (a
    lock, a temporary file, a folder of finished work). Where that name, with ``room`` bytes more, would be longer than
    the file system takes, ``NAME`` is cut short and ends in ``~`` and a hash of the whole name instead, so any output
    name the file system takes has its helpers, and two outputs never share one.

    >>> helper_path("out/v.npy", ".", ".lock")
    PosixPath('out/.v.npy.lock')
    >>> long = helper_path("e" * 250 + ".npy", "", ".parts")
    >>> len(long.name), long.name[-30:]
    (255, 'eeeeeee~3ea9479ce1b3626f.parts')
    """
    path = Path(path)
    name, limit = os.fsencode(path.name), name_limit(path)
    extra = len(os.fsencode(prefix + suffix)) + room
    if len(name) + extra <= limit:
        return path.with_name(prefix + path.name + suffix)
    digest = hashlib.sha256(name).hexdigest()[:16]
    short = path.name[:max(limit - extra - len(digest) - 1, 0)]
    while len(os.fsencode(short)) + extra + len(digest) + 1 > limit:  # a character of several bytes
        short = short[:-1]
    return path.with_name(f"{prefix}{short}~{digest}{suffix}")


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
    prefix = helper_path(target, ".", ".", room=len(".tmp") + TEMP_ROOM).name
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=target.parent)
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
def atomic_folder(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a new empty folder beside ``path``; on success it takes the place of ``path`` (nothing, or a folder that
    is then removed with all it holds), so that ``path`` is at every moment absent, the old folder or the new complete
    one. On failure (an interrupt included) the new folder is removed and ``path`` stays as it was.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_folder(d / "idx") as tmp:
    ...     _ = (tmp / "a.txt").write_text("new")
    >>> sorted(p.name for p in d.iterdir()), (d / "idx" / "a.txt").read_text()
    (['idx'], 'new')
    """
    target = Path(path).resolve() if Path(path).is_symlink() else Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = helper_path(target, ".", ".", room=len(".tmp") + TEMP_ROOM).name
    tmp = Path(tempfile.mkdtemp(prefix=prefix, suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        tmp.chmod(0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=prefix, suffix=".old", dir=target.parent))
            os.replace(target, old / "folder")
            os.replace(tmp, target)
            shutil.rmtree(old)
        else:
            os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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
