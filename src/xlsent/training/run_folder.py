"""What a training run leaves in its output folder before the model is written: the checkpoints folder, the
training log and the record of the user's bitext files. A folder holding any of them is a (killed or running)
training run, which ``--resume`` continues."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from xlsent.data.user_bitext import RECORD_FILE
from xlsent.encoders.model_dir import MANIFEST

CHECKPOINT_DIR = "checkpoints"
LOG_FILE = "train.jsonl"


def is_training_run(folder: Path) -> bool:
    """Whether ``folder`` holds a training run's checkpoints, log or record of the user's bitext files."""
    return (folder / CHECKPOINT_DIR).is_dir() or (folder / LOG_FILE).is_file() or (folder / RECORD_FILE).is_file()


def trained_something(folder: Path) -> bool:
    """Whether ``folder`` holds a model or a checkpoint (what ``--resume`` continues from)."""
    checkpoints = folder / CHECKPOINT_DIR
    return (folder / MANIFEST).is_file() or (checkpoints.is_dir() and any(checkpoints.iterdir()))


@contextmanager
def left_as_it_was_on_failure(folder: Path) -> Iterator[None]:
    """Run the block; where it raises an exception and ``folder`` holds no model or checkpoint after it
    (:func:`trained_something`), remove what the block added to ``folder`` (``folder`` itself where it was new): a
    failed run that trained nothing leaves no half-written output folder. A kill (``KeyboardInterrupt``) leaves the
    run for ``--resume``.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "out"
    >>> with left_as_it_was_on_failure(out):
    ...     out.mkdir()
    ...     _ = (out / RECORD_FILE).write_text("[]")
    ...     raise ValueError("too few pairs")
    Traceback (most recent call last):
    ...
    ValueError: too few pairs
    >>> out.exists()
    False
    """
    before = {p.name for p in folder.iterdir()} if folder.is_dir() else None
    try:
        yield
    except Exception:
        if folder.is_dir() and not trained_something(folder):
            added = [folder] if before is None else [p for p in folder.iterdir() if p.name not in before]
            for path in added:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        raise
