"""ensure_trained: a kept model is reused only when its config fingerprint matches."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from xlsent.encoders.base import Encoder
from xlsent.studies.trained import StaleModelError, ensure_trained
from xlsent.testing import toy_training_record
from xlsent.training.config import TrainConfig
from xlsent.training.method import Method, model_manifest


@dataclass
class ToyConfig(TrainConfig):
    width: int = 4


trained_dirs: list[Path] = []


def _train(config: Any, out: Path, *, resume: bool = False, data: str | Path | None = None,
           progress: bool = True) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "xlsent.json").write_text(json.dumps(model_manifest("toy", config, toy_training_record())), encoding="utf-8")
    trained_dirs.append(out)
    return out


def _no_encoder(path: Path) -> Encoder:
    raise NotImplementedError


TOY = Method("toy", "a toy method", ToyConfig, "toy.toml", _train, _no_encoder)


def test_a_model_is_trained_once_and_reused_while_its_config_matches(tmp_path: Path) -> None:
    trained_dirs.clear()
    out = tmp_path / "m"
    assert ensure_trained(TOY, ToyConfig(steps=3), out) == out
    assert ensure_trained(TOY, ToyConfig(steps=3, device="cpu", log_every=7), out) == out  # not fingerprinted
    assert trained_dirs == [out]


def test_a_model_of_another_configuration_is_refused_with_the_keys_that_differ(tmp_path: Path) -> None:
    out = tmp_path / "m"
    ensure_trained(TOY, ToyConfig(steps=3), out)
    with pytest.raises(StaleModelError, match=rf"{out} holds a model of another configuration \(steps: 3 in the "
                                              r"model, 5 wanted; width: 4 in the model, 8 wanted\).*--retrain"):
        ensure_trained(TOY, ToyConfig(steps=5, width=8), out)
    assert json.loads((out / "xlsent.json").read_text())["config"]["steps"] == 3  # left as it was


def test_retrain_replaces_a_model_of_another_configuration(tmp_path: Path) -> None:
    trained_dirs.clear()
    out = tmp_path / "m"
    ensure_trained(TOY, ToyConfig(steps=3), out)
    (out / "stale.bin").write_bytes(b"old")
    ensure_trained(TOY, ToyConfig(steps=5), out, retrain=True)
    assert json.loads((out / "xlsent.json").read_text())["config"]["steps"] == 5 and not (out / "stale.bin").exists()
    assert trained_dirs == [out, out]


def test_a_model_of_another_method_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "m"
    out.mkdir()
    (out / "xlsent.json").write_text(json.dumps({"type": "other", "fingerprint": ToyConfig().fingerprint()}))
    with pytest.raises(StaleModelError, match="type: 'other' in the folder, 'toy' wanted"):
        ensure_trained(TOY, ToyConfig(), out)


def test_a_custom_train_function_is_called_instead_of_the_methods(tmp_path: Path) -> None:
    calls: list[str] = []
    out = tmp_path / "m"
    ensure_trained(TOY, ToyConfig(), out, train=lambda: calls.append("custom") or _train(ToyConfig(), out))
    ensure_trained(TOY, ToyConfig(), out, train=lambda: calls.append("again"))
    assert calls == ["custom"]
