"""The opening every method's ``train`` shares: the config's type, the output folder, resuming a finished model."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.encoders.model_dir import MANIFEST
from xlsent.training.config import ConfigError, TrainConfig
from xlsent.training.method import checked_train


class OtherConfig(TrainConfig):
    pass


def test_checked_train_checks_before_the_body_runs(tmp_path: Path) -> None:
    calls: list[tuple[Path, bool, str | Path | None, bool]] = []

    def body(config: TrainConfig, out: Path, *, resume: bool, data: str | Path | None, progress: bool) -> Path:
        """Trains."""
        calls.append((out, resume, data, progress))
        return out

    train = checked_train(TrainConfig, body)
    assert train.__doc__ == "Trains."
    assert train(TrainConfig(), str(tmp_path / "m"), data="d", progress=False) == tmp_path / "m"
    assert calls == [(tmp_path / "m", False, "d", False)]
    with pytest.raises(TypeError, match="expected a config of type OtherConfig, got TrainConfig"):
        checked_train(OtherConfig, body)(TrainConfig(), tmp_path / "x")
    with pytest.raises(ConfigError):
        train(TrainConfig(steps=-1), tmp_path / "x")
    (tmp_path / "done").mkdir()
    (tmp_path / "done" / MANIFEST).write_text("{}")
    with pytest.raises(FileExistsError, match="already holds a model"):
        train(TrainConfig(), tmp_path / "done")
    assert train(TrainConfig(), tmp_path / "done", resume=True) == tmp_path / "done" and len(calls) == 1
