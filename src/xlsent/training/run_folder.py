"""What a training run leaves in its output folder before the model is written: the checkpoints folder, the
training log and the record of the user's bitext files. A folder holding any of them is a (killed or running)
training run, which ``--resume`` continues."""

from __future__ import annotations

from pathlib import Path

from xlsent.data.user_bitext import RECORD_FILE

CHECKPOINT_DIR = "checkpoints"
LOG_FILE = "train.jsonl"


def is_training_run(folder: Path) -> bool:
    """Whether ``folder`` holds a training run's checkpoints, log or record of the user's bitext files."""
    return (folder / CHECKPOINT_DIR).is_dir() or (folder / LOG_FILE).is_file() or (folder / RECORD_FILE).is_file()
