"""Exclusive locks on a run's outputs: a second run writing the same output fails at once, naming it.

The lock of the output ``DIR/NAME`` (a file or a folder, with its ``NAME.parts/`` or ``NAME.work/``) is the
hidden file ``DIR/.NAME.lock`` beside it, held with ``flock`` for the whole run and holding the holder's
process id. The operating system drops the lock when its holder exits or dies (``kill -9`` included), so a
lock is never stale; the holder removes the file when it is done. A holder killed while it was starting a
subprocess leaves the lock with the forked child until that child execs; when the recorded holder is dead, a new
run waits up to :data:`DEAD_HOLDER_GRACE_S` for such a lock before calling the output busy. Folders above the
output that the lock had to create are removed again if they are still empty. ``-`` (standard output) takes no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

STDOUT = "-"
DEAD_HOLDER_GRACE_S = 5.0
"""Seconds to wait for a lock whose recorded holder is dead (see the module docstring)."""


class OutputBusyError(ValueError):
    """Another run holds the lock of an output."""


def lock_path(output: str | os.PathLike[str]) -> Path:
    """The lock file of ``output``: ``.NAME.lock`` in the output's folder (symbolic links above it resolved).

    >>> lock_path("/tmp/out/vectors.npy")
    PosixPath('/tmp/out/.vectors.npy.lock')
    """
    path = Path(os.path.abspath(output))
    return path.parent.resolve() / f".{path.name}.lock"


@contextlib.contextmanager
def exclusive_output(output: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the lock of ``output`` for the block; :class:`OutputBusyError` at once if another run holds it."""
    with exclusive_outputs([output]):
        yield


@contextlib.contextmanager
def exclusive_outputs(outputs: Iterable[str | os.PathLike[str]]) -> Iterator[None]:
    """Hold the locks of all ``outputs`` (``-`` skipped) for the block, as :func:`exclusive_output` does."""
    locks = sorted({lock_path(output) for output in outputs if str(output) != STDOUT})
    with contextlib.ExitStack() as stack:
        for lock in locks:
            stack.enter_context(_held(lock))
        yield


@contextlib.contextmanager
def _held(lock: Path) -> Iterator[None]:
    """Hold ``lock``, creating the folders above it as needed and removing those that stay empty."""
    try:
        created = _make_folders(lock.parent)
    except (NotADirectoryError, FileExistsError):  # a file where a folder should be: no run can write there
        yield
        return
    try:
        fd = _acquire(lock)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)  # before the lock is dropped: a run waiting on this file will retry
            os.close(fd)
    finally:
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and the missing folders above it; the ones created, outermost first."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _acquire(lock: Path) -> int:
    """An open descriptor of ``lock`` holding its exclusive lock; the file's inode is checked after locking, so a
    file its last holder removed meanwhile is never used."""
    deadline = time.monotonic() + DEAD_HOLDER_GRACE_S
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except PermissionError as exc:
            raise PermissionError(f"{lock}: cannot create the lock file of the output beside it ({exc.strerror}); "
                                  "write the output into a folder you can write to") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            if _dead(holder) and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            output = lock.with_name(lock.name[1:-len(".lock")])
            raise OutputBusyError(
                f"{output}: busy: another xlsent run (process {holder}) is writing this output, holding {lock.name}; "
                "wait for it to finish or write to another path") from None
        try:
            current = os.stat(lock)
        except FileNotFoundError:
            current = None
        opened = os.fstat(fd)
        if current is not None and (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino):
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
            return fd
        os.close(fd)


def _dead(holder: str) -> bool:
    """Whether the process id ``holder`` (a lock file's text) names no running process."""
    try:
        os.kill(int(holder), 0)
    except ProcessLookupError:
        return True
    except (ValueError, OverflowError, PermissionError):  # not a process id, or another user's process
        pass
    return False
