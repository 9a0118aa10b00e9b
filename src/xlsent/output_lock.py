"""Exclusive locks on a run's outputs: a second run writing the same output fails at once, naming it.

The lock of the output ``DIR/NAME`` (a file or a folder, with its ``NAME.parts/`` or ``NAME.work/``) is the
hidden file ``DIR/.NAME.lock`` beside it (``NAME`` shortened where that name would be too long:
:func:`~xlsent.atomic.helper_path`), a :class:`filelock.FileLock` (``flock``) held for the whole run, whose
text is the holder's process id. The operating system drops the lock when its holder exits or dies (``kill -9``
included), so a lock is never stale; the holder removes the file when it is done (filelock takes no lock on a file
removed meanwhile). A holder killed while it was starting a subprocess leaves the lock with the forked child until
that child execs; when the recorded holder is dead, a new run waits up to :data:`DEAD_HOLDER_GRACE_S` for such a
lock before calling the output busy. Folders above the output that the lock had to create are removed again if
they are still empty. ``-`` (standard output) takes no lock.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

from xlsent.atomic import check_name_length, helper_path

STDOUT = "-"
DEAD_HOLDER_GRACE_S = 5.0
"""Seconds to wait for a lock whose recorded holder is dead (see the module docstring)."""
POLL_S = 0.05
"""Seconds between two tries at a lock whose recorded holder is dead."""


class OutputBusyError(ValueError):
    """Another run holds the lock of an output."""


def lock_path(output: str | os.PathLike[str]) -> Path:
    """The lock file of ``output``: ``.NAME.lock`` in the output's folder (symbolic links above it resolved).

    >>> lock_path("/tmp/out/vectors.npy")
    PosixPath('/tmp/out/.vectors.npy.lock')
    """
    path = Path(os.path.abspath(output))
    return helper_path(path.parent.resolve() / path.name, ".", ".lock")


@contextlib.contextmanager
def exclusive_output(output: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the lock of ``output`` for the block; :class:`OutputBusyError` at once if another run holds it."""
    with exclusive_outputs([output]):
        yield


@contextlib.contextmanager
def exclusive_outputs(outputs: Iterable[str | os.PathLike[str]]) -> Iterator[None]:
    """Hold the locks of all ``outputs`` (``-`` skipped) for the block, as :func:`exclusive_output` does. ``-`` with
    standard output closed (``>&-``) is an error before any work: what the run would write there would be lost; so is
    an output whose name is longer than its file system takes (:func:`~xlsent.atomic.check_name_length`)."""
    outputs = list(outputs)
    if sys.stdout is None and any(str(output) == STDOUT for output in outputs):
        raise OSError("- names standard output, which is closed: write to a file instead")
    files = [output for output in outputs if str(output) != STDOUT]
    for output in files:
        check_name_length(output)
    locks = {lock_path(output): lock_path(output).with_name(Path(os.path.abspath(output)).name) for output in files}
    with contextlib.ExitStack() as stack:
        for lock in sorted(locks):
            stack.enter_context(_held(lock, locks[lock]))
        yield


@contextlib.contextmanager
def _held(lock: Path, output: Path) -> Iterator[None]:
    """Hold ``lock``, the lock of ``output``, creating the folders above it as needed and removing those that stay
    empty."""
    try:
        created = _make_folders(lock.parent)
    except (NotADirectoryError, FileExistsError):  # a file where a folder should be: no run can write there
        yield
        return
    except OSError as exc:  # e.g. under /proc, or a folder this user cannot write
        raise OSError(f"{lock.parent}: cannot create the output's folder ({exc.strerror}); choose another output "
                      "path") from None
    try:
        file_lock = _acquire(lock, output)
        try:
            lock.write_text(f"{os.getpid()}\n", encoding="ascii")
            yield
        finally:
            lock.unlink(missing_ok=True)  # before the lock is dropped: a run waiting on this file will retry
            file_lock.release()
    finally:
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and the missing folders above it; the ones created, outermost first."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _acquire(lock: Path, output: Path) -> BaseFileLock:
    """``lock``, the lock of ``output``, held: at once, or within :data:`DEAD_HOLDER_GRACE_S` where its recorded
    holder is dead; else :class:`OutputBusyError` naming the output and the holder."""
    file_lock = FileLock(lock, timeout=0)
    try:
        try:
            file_lock.acquire()
        except Timeout:
            if not _dead(_holder(lock)):
                raise
            file_lock.acquire(timeout=DEAD_HOLDER_GRACE_S, poll_interval=POLL_S)
    except Timeout:
        if problem := _cannot_create(lock):  # no lock file to hold: no run holds it, the folder takes no file
            raise PermissionError(f"{lock}: cannot create the lock file of the output beside it ({problem}); write "
                                  "the output into a folder you can write to") from None
        raise OutputBusyError(
            f"{output}: busy: another xlsent run (process {_holder(lock)}) is writing this output, holding "
            f"{lock.name}; wait for it to finish or write to another path") from None
    except PermissionError as exc:
        raise PermissionError(f"{lock}: cannot create the lock file of the output beside it ({exc.strerror}); "
                              "write the output into a folder you can write to") from None
    return file_lock


def _cannot_create(lock: Path) -> str:
    """Why the missing file ``lock`` cannot be created (empty when it exists or can be: it is then a run's)."""
    if lock.exists():
        return ""
    try:
        os.close(os.open(lock, os.O_WRONLY | os.O_CREAT, 0o644))
    except OSError as exc:
        return exc.strerror or str(exc)
    return ""


def _holder(lock: Path) -> str:
    """The process id written in ``lock`` (``unknown`` when it holds none yet, or is gone)."""
    try:
        return lock.read_text(encoding="ascii", errors="replace").strip() or "unknown"
    except OSError:
        return "unknown"


def _dead(holder: str) -> bool:
    """Whether the process id ``holder`` (a lock file's text) names no running process."""
    try:
        os.kill(int(holder), 0)
    except ProcessLookupError:
        return True
    except (ValueError, OverflowError, PermissionError):  # not a process id, or another user's process
        pass
    return False
