"""``make run``'s job on a toy encoder whose answer is known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xlsent.demo import run_demo
from xlsent.testing import LookupEncoder


def _example(tmp_path: Path, n: int = 20) -> Path:
    (tmp_path / "tatoeba.deu-eng.deu").write_text("".join(f"de {i}\n" for i in range(n)), encoding="utf-8")
    (tmp_path / "tatoeba.deu-eng.eng").write_text("".join(f"en {i}\n" for i in range(n)), encoding="utf-8")
    return tmp_path


def test_demo_mines_every_pair_of_a_perfect_encoder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    table = {}
    for i in range(20):
        v = rng.normal(size=16)
        table[f"de {i}"], table[f"en {i}"] = v + 0.01 * rng.normal(size=16), v
    acc = run_demo(LookupEncoder(table), tmp_path / "out", examples=_example(tmp_path))
    assert acc == 1.0
    assert "(20/20)" in capsys.readouterr().out


def test_demo_reports_a_shuffled_encoder_as_wrong(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    table = {f"de {i}": rng.normal(size=16) for i in range(20)} | {f"en {i}": rng.normal(size=16) for i in range(20)}
    assert run_demo(LookupEncoder(table), tmp_path / "out", examples=_example(tmp_path)) < 0.5
