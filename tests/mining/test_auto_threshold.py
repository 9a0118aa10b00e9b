"""``--threshold auto``: the calibrated threshold, with a warning when the run's k is not the calibrated one, and an
error when its scores are of another scale than the threshold's."""

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


def test_another_k_than_calibrated_warns(encoder: LookupEncoder, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert auto_threshold(encoder, margin="ratio", k=8).threshold == 1.0625
    assert "calibrated with margin=ratio, k=4; this run uses margin=ratio, k=8" in caplog.text


@pytest.mark.parametrize(("margin", "scores"), [("distance", "distance margins"), ("absolute", "cosines")])
def test_a_threshold_never_cuts_scores_of_another_scale(encoder: LookupEncoder, margin: str, scores: str) -> None:
    """A ratio threshold (about 1) on distance margins (about 0) or cosines would keep or drop arbitrary pairs."""
    with pytest.raises(ValueError, match=f"1.0625 .*cuts ratio margins, but the scores of this run are {scores}; run "
                                         "with --margin ratio, or give --threshold VALUE"):
        auto_threshold(encoder, margin=margin, k=4)


def test_a_cosine_cut_serves_cosines(encoder: LookupEncoder) -> None:
    save_threshold(encoder, {"threshold": 1.0625, "cosine_threshold": 0.7, "encoder": "planted", "margin": "ratio",
                             "k": 4, "sets": ["de-en"]})
    assert auto_threshold(encoder, margin="absolute", k=4).threshold == 0.7
    assert auto_threshold(encoder, margin="ratio", k=4).threshold == 1.0625
