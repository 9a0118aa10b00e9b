"""Every study refuses to score a kept model trained under other settings (it used to reuse it without a word,
in all but the DuEAM study): the model folder is left as it is and the error lists the keys that differ."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from xlsent.methods.absent import study as absent_study
from xlsent.methods.dual_pivot import study as dual_pivot_study
from xlsent.methods.dueam import study as dueam_study
from xlsent.methods.emu import study as emu_study
from xlsent.methods.laser import study as laser_study
from xlsent.studies.command import run_studies
from xlsent.studies.trained import StaleModelError


def _stale(folder: Path, method: str) -> str:
    """A model folder of ``method`` whose config differs from any study's (steps = 1); its manifest's text."""
    folder.mkdir(parents=True)
    text = json.dumps({"type": method, "config": {"steps": 1}, "fingerprint": "0" * 16})
    (folder / "xlsent.json").write_text(text, encoding="utf-8")
    return text


def _laser(tmp: Path, backbone: str) -> tuple[Path, str, Callable[[], Any]]:
    settings = laser_study.Settings(main_dir=tmp / "laser-small", configs=(), models_dir=tmp / "models")
    return tmp / "laser-small", "laser", lambda: run_studies(laser_study, ["main"], settings, tmp / "out")


def _dual_pivot(tmp: Path, backbone: str) -> tuple[Path, str, Callable[[], Any]]:
    settings = dual_pivot_study.Settings(models_dir=tmp / "models", backbone=backbone)
    return (tmp / "models" / "abl-adv-mix", "dual-pivot",
            lambda: run_studies(dual_pivot_study, ["losses"], settings, tmp / "out"))


def _dueam(tmp: Path, backbone: str) -> tuple[Path, str, Callable[[], Any]]:
    settings = dueam_study.Settings(models_dir=tmp / "models", backbone=backbone)
    return (tmp / "models" / "ablation-lambda-0.0003", "dueam",
            lambda: run_studies(dueam_study, ["lambda"], settings, tmp / "out"))


def _emu(tmp: Path, backbone: str) -> tuple[Path, str, Callable[[], Any]]:
    settings = emu_study.Settings(models_dir=tmp / "models", backbone=backbone)
    return tmp / "models" / "emu", "emu", lambda: emu_study.setup(settings, tmp / "out").model("emu")


def _absent(tmp: Path, backbone: str) -> tuple[Path, str, Callable[[], Any]]:
    settings = absent_study.Settings(models_dir=tmp / "models", backbone=backbone, inputs=("static",),
                                     datasets=("short de-en",))
    return (tmp / "models" / "average-short-de-en-lsq-100", "linear-map",
            lambda: run_studies(absent_study, ["main"], settings, tmp / "out"))


@pytest.mark.parametrize("study", [_laser, _dual_pivot, _dueam, _emu, _absent],
                         ids=["laser", "dual-pivot", "dueam", "emu", "absent"])
def test_a_kept_model_of_other_settings_is_not_scored(study: Callable[..., tuple[Path, str, Callable[[], Any]]],
                                                      tmp_path: Path, tiny_model_dir: Path) -> None:
    folder, method, run = study(tmp_path, str(tiny_model_dir))
    manifest = _stale(folder, method)
    with pytest.raises(StaleModelError, match=rf"{folder} holds a model of another configuration \(.*steps: 1 in "
                                              r"the model, \d+ wanted"):
        run()
    assert (folder / "xlsent.json").read_text(encoding="utf-8") == manifest
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())  # nothing scored or saved
