"""The folders of $XLSENT_MODELS are loaded by the name ``xlsent models`` lists them under."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from xlsent.encoders.local_models import local_models
from xlsent.encoders.registry import load_encoder


def test_a_listed_folder_loads_by_its_listed_name(tiny_model_dir: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``xlsent models`` listed a folder as 'model', and ``--model model`` said 'unknown model'."""
    root = tmp_path / "mroot"
    shutil.copytree(tiny_model_dir, root / "model")
    monkeypatch.setenv("XLSENT_MODELS", os.pathsep.join([str(tmp_path / "absent"), str(root)]))
    monkeypatch.chdir(tmp_path)
    assert [m.name for m in local_models()] == ["absent", "model"]
    by_name, by_path = load_encoder("model"), load_encoder(root / "model")
    assert np.array_equal(by_name.encode(["hello"], "en"), by_path.encode(["hello"], "en"))
    with pytest.raises(ValueError, match=r"unknown model .absent.: .* or a name of \$XLSENT_MODELS \(names: model\)$"):
        load_encoder("absent")  # listed, but as a missing entry: no model


def test_a_folder_in_the_working_directory_wins_over_a_listed_one(tiny_model_dir: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_MODELS", str(tmp_path / "elsewhere"))
    (tmp_path / "elsewhere" / "model").mkdir(parents=True)  # no model: would fail to load
    shutil.copytree(tiny_model_dir, tmp_path / "here" / "model")
    monkeypatch.chdir(tmp_path / "here")
    assert load_encoder("model").encode(["hello"], "en").shape == (1, 32)
