"""The opening every method's ``train`` shares: the config's type, the output folder, resuming a finished model."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.encoders.model_dir import write_manifest
from xlsent.testing import toy_training_record
from xlsent.training.config import ConfigError, TrainConfig
from xlsent.training.method import checked_train, model_manifest
from xlsent.training.run_folder import CHECKPOINT_DIR


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
    write_manifest(tmp_path / "done", model_manifest("toy", TrainConfig(), toy_training_record()))
    with pytest.raises(FileExistsError, match="already holds a model"):
        train(TrainConfig(), tmp_path / "done")
    assert train(TrainConfig(), tmp_path / "done", resume=True) == tmp_path / "done" and len(calls) == 1


def test_resuming_a_finished_model_with_other_steps_is_refused_with_the_keys(tmp_path: Path) -> None:
    train = checked_train(TrainConfig, lambda config, out, **kw: out)
    (tmp_path / "done").mkdir()
    write_manifest(tmp_path / "done", model_manifest("toy", TrainConfig(steps=200), toy_training_record()))
    with pytest.raises(ConfigError, match=r"trained with another configuration \(lr 0.001 -> 0.5, steps 200 -> 300\)"):
        train(TrainConfig(steps=300, lr=0.5), tmp_path / "done", resume=True)
    assert train(TrainConfig(steps=200, log_every=7), tmp_path / "done", resume=True) == tmp_path / "done"


def test_a_folder_of_other_files_is_refused_and_a_killed_run_is_not(tmp_path: Path) -> None:
    calls: list[Path] = []
    train = checked_train(TrainConfig, lambda config, out, **kw: calls.append(out) or out)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="neither an xlsent model nor a training run \\(notes.txt\\)"):
        train(TrainConfig(), tmp_path / "mine")
    (tmp_path / "killed" / CHECKPOINT_DIR).mkdir(parents=True)
    (tmp_path / "killed" / "spm.model").write_text("vocabulary")
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / ".lock").write_text("")
    for out in ("killed", "hidden", "empty", "new"):
        (tmp_path / "empty").mkdir(exist_ok=True)
        assert train(TrainConfig(), tmp_path / out, resume=True) == tmp_path / out
    assert len(calls) == 4


def test_resuming_into_another_methods_model_names_its_type(tmp_path: Path) -> None:
    from xlsent.training.method import get_method

    dual_pivot, linear_map = get_method("dual-pivot"), get_method("linear-map")
    (tmp_path / "done").mkdir()
    write_manifest(tmp_path / "done", model_manifest("dual-pivot", dual_pivot.config(), toy_training_record()))
    with pytest.raises(ConfigError, match=r"done holds a dual-pivot model, not one of the method trained now; --resume "
                                          r"continues a run of the same method only: train into a new --out, or "
                                          r"resume with `xlsent train dual-pivot`$"):
        linear_map.train(linear_map.config(), tmp_path / "done", resume=True)
    assert dual_pivot.train(dual_pivot.config(), tmp_path / "done", resume=True) == tmp_path / "done"


def test_resuming_where_there_is_no_run_says_it_trains_from_scratch(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    train = checked_train(TrainConfig, lambda config, out, **kw: out)
    (tmp_path / "empty").mkdir()
    (tmp_path / "killed" / CHECKPOINT_DIR).mkdir(parents=True)
    with caplog.at_level("WARNING", logger="xlsent.training.method"):
        for out in ("new", "empty", "killed"):
            assert train(TrainConfig(), tmp_path / out, resume=True) == tmp_path / out
    assert f"--resume: {tmp_path / 'new'} does not exist, so there is nothing to resume; training from scratch" \
        in caplog.text
    assert f"--resume: {tmp_path / 'empty'} holds no training run, so there is nothing to resume" in caplog.text
    assert "killed" not in caplog.text
    caplog.clear()
    train(TrainConfig(), tmp_path / "other")
    assert "--resume" not in caplog.text


REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p.parent for p in (REPO / "models").glob("*/xlsent.json") if (p.parent / "config.toml").is_file())


@pytest.mark.parametrize("model_dir", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_model_retrains_from_its_own_config_file(model_dir: Path) -> None:
    import json

    from xlsent.training.method import get_method

    manifest = json.loads((model_dir / "xlsent.json").read_text(encoding="utf-8"))
    config = get_method(manifest["type"]).config([model_dir / "config.toml"])
    assert config.fingerprint() == manifest["fingerprint"]  # models/me5-distill-v1 failed when v2's defaults shipped


def test_a_model_config_file_fills_the_keys_added_after_it_with_their_earlier_values(tmp_path: Path) -> None:
    from xlsent.methods.distill.config import DistillConfig
    from xlsent.methods.distill.model import METHOD

    old = tmp_path / "old"
    old.mkdir()
    (old / "config.toml").write_text("steps = 7\n", encoding="utf-8")  # written before relation_weight existed
    write_manifest(old, model_manifest("distill", DistillConfig(), toy_training_record()))
    filled = METHOD.config([old / "config.toml"])
    assert filled.steps == 7 and filled.relation_weight == DistillConfig.LATER_KEYS["relation_weight"] == 0.0
    assert filled.teacher_backend == "torch" and METHOD.config().relation_weight > 0  # the packaged defaults differ
    mine = tmp_path / "mine.toml"  # a user's own partial file: the packaged defaults fill the rest
    mine.write_text("steps = 7\n", encoding="utf-8")
    assert METHOD.config([mine]).relation_weight == METHOD.config().relation_weight
    (old / "xlsent.json").write_text('{"type": "laser"}', encoding="utf-8")  # another method's model: no filling
    assert METHOD.config([old / "config.toml"]).relation_weight == METHOD.config().relation_weight


def test_cuda_without_a_gpu_is_refused_before_the_body_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)

    def body(config: TrainConfig, out: Path, **kw: object) -> Path:
        raise AssertionError("the body ran (loaded data) before the device was checked")

    with pytest.raises(ValueError, match="--device cuda: no CUDA device is available here; use --device cpu or auto"):
        checked_train(TrainConfig, body)(TrainConfig(device="cuda"), tmp_path / "m")


@pytest.mark.parametrize("existed", [False, True])
def test_a_run_failing_before_its_first_checkpoint_leaves_the_out_folder_as_it_was(tmp_path: Path,
                                                                                    existed: bool) -> None:
    out = tmp_path / "m"
    if existed:
        out.mkdir()
        (out / ".hidden").write_text("mine", encoding="utf-8")

    def body(config: TrainConfig, out: Path, **kw: object) -> Path:
        out.mkdir(exist_ok=True)
        (out / "user_bitext.json").write_text("[]", encoding="utf-8")
        (out / CHECKPOINT_DIR).mkdir()
        raise ValueError("too few pairs")

    with pytest.raises(ValueError, match="too few pairs"):
        checked_train(TrainConfig, body)(TrainConfig(), out)
    assert sorted(p.name for p in out.iterdir()) == [".hidden"] if existed else not out.exists()


def test_a_run_failing_after_a_checkpoint_keeps_it_for_resume(tmp_path: Path) -> None:
    def body(config: TrainConfig, out: Path, **kw: object) -> Path:
        (out / CHECKPOINT_DIR).mkdir(parents=True)
        (out / CHECKPOINT_DIR / "ckpt-000000002.json").write_text("{}", encoding="utf-8")
        raise ValueError("loss is nan")

    with pytest.raises(ValueError, match="loss is nan"):
        checked_train(TrainConfig, body)(TrainConfig(), tmp_path / "m")
    assert (tmp_path / "m" / CHECKPOINT_DIR / "ckpt-000000002.json").is_file()
