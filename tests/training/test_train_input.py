"""What ``xlsent train`` makes of odd input: corrupt checkpoints, the order of --bitext and the config check, seeds,
comma lists of numbers, --config paths and keys (and the bitext files it names), --resume's warning, and --out of
``train filter``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from xlsent.encoders.model_dir import write_manifest
from xlsent.methods.distill.config import DistillConfig
from xlsent.methods.laser.config import LaserConfig
from xlsent.testing import toy_training_record
from xlsent.training.checkpoint import CheckpointError, TrainState
from xlsent.training.config import ConfigError, TrainConfig, build_config, parse_assignment, read_layers
from xlsent.training.loop import Trainer
from xlsent.training.method import begin_training, checked_train, get_method, model_manifest

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _trainer(out: Path) -> Trainer:
    lin = torch.nn.Linear(2, 1)
    opt = torch.optim.Adam(lin.parameters(), lr=0.1)
    return Trainer(out, TrainConfig(steps=4, checkpoint_every=1, device="cpu"), TrainState({"lin": lin}, {"opt": opt}),
                   progress=False)


def _killed_after_two_steps(out: Path) -> Path:
    """A run folder whose newest checkpoint is the one after step 2 (returned)."""
    trainer = _trainer(out)

    def step(s: int) -> dict[str, float]:
        if s == 2:
            raise KeyboardInterrupt
        loss = trainer.state.modules["lin"](torch.ones(1, 2)).pow(2).sum()
        trainer.update("opt", loss)
        return {"loss": loss.item()}

    with pytest.raises(KeyboardInterrupt):
        trainer.run(step)
    return out / "checkpoints" / "ckpt-000000002.json"


@pytest.mark.parametrize("damage", ["truncated", "a list", "no meta"])
def test_a_corrupt_checkpoint_json_names_the_file_and_the_fix(tmp_path: Path, damage: str) -> None:
    ckpt = _killed_after_two_steps(tmp_path / "run")
    text = ckpt.read_text(encoding="utf-8")
    info = json.loads(text)
    del info["meta"]
    ckpt.write_text({"truncated": text[:100], "a list": "[]\n", "no meta": json.dumps(info)}[damage],
                    encoding="utf-8")
    trainer = _trainer(tmp_path / "run")
    with pytest.raises(CheckpointError, match=rf"^{ckpt}: corrupt checkpoint \(.+\); delete it to resume from the "
                                              r"one before$"):
        trainer.run(lambda s: {}, resume=True)


def test_bitext_only_in_the_config_counts_the_bitext_of_the_command_line(tmp_path: Path) -> None:
    laser = get_method("laser")
    pairs = tmp_path / "de.tsv"
    pairs.write_text("Hund\tdog\n", encoding="utf-8")
    only = tmp_path / "only.toml"
    only.write_text("bitext_only = true\n", encoding="utf-8")
    for files, sets in (([], ["bitext_only=true"]), ([only], [])):
        config = laser.command_config(files, sets, None, [f"de={pairs}"], False)
        assert isinstance(config, LaserConfig) and config.bitext_only and len(config.bitext) == 1
        with pytest.raises(ConfigError, match="bitext_only needs at least one --bitext LANG=FILE"):
            laser.command_config(files, sets, None, [], False)


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_a_seed_out_of_range_is_refused_up_front_naming_the_option(seed: int) -> None:
    with pytest.raises(ConfigError, match=rf"seed must be a whole number >= 0 and < 2\*\*32 \(--seed, or the key "
                                          rf"seed\), not {seed}"):
        get_method("absent").config(sets=[f"seed={seed}"])


def test_comma_lists_of_numbers_are_read_as_numbers() -> None:
    assert parse_assignment("4,8", list[int], "gen_hidden") == [4, 8]
    assert parse_assignment("0.5, 1", list[float], "weights") == [0.5, 1.0]
    assert parse_assignment("true,false", list[bool], "flags") == [True, False]
    assert parse_assignment("de-en,1", list[str], "pairs") == ["de-en", "1"]
    with pytest.raises(ConfigError, match="gen_hidden expects int, got 'x'"):
        parse_assignment("4,x", list[int], "gen_hidden")


def test_config_given_a_folder_says_it_is_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"config file {tmp_path} is a folder, not a file"):
        read_layers("steps = 1\n", [tmp_path])


def test_an_unknown_key_of_a_config_file_names_the_file(tmp_path: Path) -> None:
    typo = tmp_path / "typo.toml"
    typo.write_text("steps = 2\n[b]\nbogus = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{typo}: unknown TrainConfig key\(s\) \['bogus'\]; known: "):
        build_config(TrainConfig, read_layers("steps = 1\n", [typo], modes=["b"]), mode="b")
    with pytest.raises(ConfigError, match=r"^unknown TrainConfig key\(s\) \['bogus'\]"):
        build_config(TrainConfig, ["bogus = 1\n"])


def test_resume_of_a_missing_folder_warns_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def body(config: TrainConfig, out: Path, **kw: Any) -> Path:
        begin_training(out, kw["resume"], config)  # as every method's train_on opens
        return out

    with caplog.at_level("WARNING", logger="xlsent.training.method"):
        checked_train(TrainConfig, body)(TrainConfig(), tmp_path / "R2", resume=True)
    assert caplog.text.count("nothing to resume") == 1


def test_train_filter_out_follows_the_train_rules(tmp_path: Path) -> None:
    from xlsent.api import train_filter

    (tmp_path / "afile").write_text("hi\n", encoding="utf-8")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine\n", encoding="utf-8")
    (tmp_path / "model").mkdir()
    write_manifest(tmp_path / "model", model_manifest("toy", TrainConfig(), toy_training_record()))
    for out, message in (("afile", "afile exists and is not a folder; choose another --out"),
                         ("mine", r"neither an xlsent model nor a training run \(notes.txt\)"),
                         ("model", "model already holds a model; choose another --out")):
        with pytest.raises(FileExistsError, match=message):
            train_filter(tmp_path / out, model=tmp_path / "model")
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]


def test_bitext_paths_of_a_config_file_are_read_from_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "kab.txt").write_text("Azul\n", encoding="utf-8")
    (folder / "en.txt").write_text("Hello\n", encoding="utf-8")
    config_file = folder / "bt.toml"
    config_file.write_text('[[bitext]]\nlang = "kab"\npath = "kab.txt"\nenglish = "en.txt"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # another folder than the config file's
    config = get_method("distill").command_config([config_file], [], None, [], False)
    assert isinstance(config, DistillConfig)
    assert [(b.path, b.english) for b in config.bitext] == [(str(folder / "kab.txt"), str(folder / "en.txt"))]
    config_file.write_text('[[bitext]]\nlang = "kab"\npath = "missing.tsv"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{config_file}: \[\[bitext\]\] kab: {folder / 'missing.tsv'}: no such "
                                          rf"file \(a relative path is read from the config file's folder, {folder}\)"):
        get_method("distill").command_config([config_file], [], None, [], False)
