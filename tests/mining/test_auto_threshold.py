"""``--threshold auto``: the calibrated threshold, with a warning when the run's margin or k are not calibrated."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from xlsent.mining.auto_threshold import auto_threshold
from xlsent.mining.calibration import save_threshold
from xlsent.testing import LookupEncoder


@pytest.fixture()
def encoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LookupEncoder:
    """A toy encoder whose calibration (ratio margin, k=4, on de-en) is in a fresh ``$XLSENT_HOME``."""
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    enc = LookupEncoder({"a": [1.0, 0.0]}, name="planted")
    save_threshold(enc, {"threshold": 1.0625, "encoder": "planted", "margin": "ratio", "k": 4, "sets": ["de-en"],
                         "date": "2025-01-02"})
    return enc


def test_the_calibrated_threshold_and_where_it_comes_from(encoder: LookupEncoder, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        found = auto_threshold(encoder, margin="ratio", k=4)
    assert found.threshold == 1.0625 and caplog.text == ""
    assert found.describe() == (f"--threshold auto: 1.0625, calibrated on de-en (2025-01-02; from "
                                f"{tmp_path / 'home' / 'calibration' / 'planted.json'})")


@pytest.mark.parametrize(("margin", "k"), [("distance", 4), ("ratio", 8)])
def test_another_margin_or_k_than_calibrated_warns(encoder: LookupEncoder, margin: str, k: int,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert auto_threshold(encoder, margin=margin, k=k).threshold == 1.0625
    assert f"calibrated with margin=ratio, k=4; this run uses margin={margin}, k={k}" in caplog.text
