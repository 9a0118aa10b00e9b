"""What a training run leaves in its output folder before the model is written: the checkpoints folder and the
training log. A folder holding either is a (killed or running) training run, which ``--resume`` continues."""

from __future__ import annotations

from pathlib import Path

CHECKPOINT_DIR = "checkpoints"
LOG_FILE = "train.jsonl"


def is_training_run(folder: Path) -> bool:
    """Whether ``folder`` holds a training run's checkpoints or log."""
    return (folder / CHECKPOINT_DIR).is_dir() or (folder / LOG_FILE).is_file()
