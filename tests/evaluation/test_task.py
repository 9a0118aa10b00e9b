"""The task registry and every task's metadata."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xlsent.evaluation import bucc
from xlsent.evaluation.runner import METADATA, MODULES, TASKS, evaluate_task
from xlsent.testing import dataset_or_skip

PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"


def test_registry_is_built_from_the_metadata() -> None:
    assert list(TASKS) == ["tatoeba", "bucc", "sts", "xnli", "intent", "senteval", "retrieval_pk"]
    assert TASKS["bucc"] == bucc.METADATA.description
    for name, meta in METADATA.items():
        assert MODULES[name].__name__ == f"xlsent.evaluation.{name}" and meta.name == name
        assert meta.main_score and meta.reference and meta.data_files
        assert meta.languages or meta.languages_note
        for paper in meta.papers:
            number, short = paper.split(" ", 1)
            assert re.fullmatch(r"\d{3}", number) and short
            if PAPERS.is_dir():
                assert list(PAPERS.glob(f"{number}_*.txt")), paper
    with pytest.raises(ValueError, match="unknown task"):
        evaluate_task("mteb", lambda s, lang: np.zeros((len(s), 2)), encoder_id="x")


@pytest.mark.parametrize(("task", "pattern"), [(t, p) for t, m in METADATA.items() for p in m.data_files])
def test_data_file_patterns_match_the_shared_data(task: str, pattern: str) -> None:
    base = dataset_or_skip(pattern.split("/")[0])
    assert any(p.is_file() for p in base.glob(pattern)), f"{task}: {pattern} matches nothing in {base}"


def test_the_registry_imports_no_heavy_library() -> None:
    """The CLI builds its help from TASKS: importing the task modules must not import torch, sklearn or scipy."""
    code = ("import sys, xlsent.evaluation.runner; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'sklearn', 'scipy'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
