"""Method configuration: TOML layers, typed --set values, fingerprints; the method registry."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from xlsent.studies.trained import config_differences
from xlsent.training.config import ConfigError, TrainConfig, build_config, parse_assignment, read_layers, to_toml
from xlsent.training.method import get_method, method_names


@dataclass
class Toy(TrainConfig):
    mode: str = "a"
    width: int = 8
    scale: float = 1.0
    pairs: list[str] = field(default_factory=lambda: ["de-en"])
    layer: int | None = None
    flag: bool = False

    def problems(self) -> list[str]:
        return super().problems() + (["width must be > 0"] if self.width <= 0 else [])


DEFAULTS = 'steps = 10\nwidth = 4\n[b]\nwidth = 16\nscale = 2\n'


def test_layers_apply_in_order_and_modes_pick_their_table(tmp_path: Path) -> None:
    assert build_config(Toy, [DEFAULTS]).width == 4
    cfg = build_config(Toy, [DEFAULTS], mode="b")
    assert (cfg.mode, cfg.width, cfg.scale, cfg.steps) == ("b", 16, 2.0, 10)
    override = tmp_path / "o.toml"
    override.write_text('width = 5\n[b]\nsteps = 3\n')
    cfg = build_config(Toy, read_layers(DEFAULTS, [override]), mode="b")
    assert (cfg.width, cfg.steps) == (5, 3)  # defaults, defaults [b], file, file [b]: later layers win
    assert build_config(Toy, [DEFAULTS], sets=["mode=b"]).width == 16  # --set mode picks the table too
    with pytest.raises(FileNotFoundError, match="missing.toml"):
        read_layers(DEFAULTS, [tmp_path / "missing.toml"])


def test_set_values_are_typed_and_checked() -> None:
    cfg = build_config(Toy, [DEFAULTS], sets=["width=3", "scale=1e-3", "pairs=de-en,ar-en", "layer=8", "flag=true",
                                             "lr=1"])
    assert (cfg.width, cfg.scale, cfg.pairs, cfg.layer, cfg.flag, cfg.lr) == (3, 1e-3, ["de-en", "ar-en"], 8, True,
                                                                                1.0)
    assert build_config(Toy, [DEFAULTS], sets=["layer=none"]).layer is None
    assert build_config(Toy, [DEFAULTS], sets=['pairs=["x-y"]']).pairs == ["x-y"]
    assert parse_assignment("none", str) == "none"  # a plain string key keeps the word
    with pytest.raises(ConfigError, match="width expects int, got 'abc'"):
        build_config(Toy, [DEFAULTS], sets=["width=abc"])
    with pytest.raises(ConfigError, match="flag expects bool"):
        build_config(Toy, [DEFAULTS], sets=["flag=1"])
    with pytest.raises(ConfigError, match="unknown key 'widht'"):
        build_config(Toy, [DEFAULTS], sets=["widht=3"])
    with pytest.raises(ConfigError, match="expected key=value"):
        build_config(Toy, [DEFAULTS], sets=["width"])
    with pytest.raises(ConfigError, match="width must be > 0"):
        build_config(Toy, [DEFAULTS], sets=["width=0"])
    with pytest.raises(ConfigError, match=r"unknown Toy key\(s\) \['colour'\]"):
        build_config(Toy, ["colour = 1\n" + DEFAULTS])
    with pytest.raises(ConfigError, match=r"\['colour'\]"):  # a key in a table of another mode is checked too
        build_config(Toy, [DEFAULTS + "colour = 1\n"])


@pytest.mark.parametrize("sets, layer", [(["lr=inf"], ""), (["scale=nan"], ""), (["scale=-inf"], ""),
                                         ([], "scale = nan\n"), ([], "[b]\nscale = inf\n")])
def test_every_float_setting_is_finite(sets: list[str], layer: str) -> None:
    key = "lr" if "lr=inf" in sets else "scale"
    with pytest.raises(ConfigError, match=f"{key} must be a finite number, not -?(nan|inf)"):
        build_config(Toy, [DEFAULTS, layer], sets=sets, mode="b")


def test_typed_overrides_win_over_sets_and_are_checked() -> None:
    cfg = build_config(Toy, [DEFAULTS], sets=["width=3", "scale=5"], overrides={"width": 7, "pairs": ["fr-en"]})
    assert (cfg.width, cfg.scale, cfg.pairs) == (7, 5.0, ["fr-en"])
    assert build_config(Toy, [DEFAULTS], sets=["width=3"], overrides={"width": 3}) == build_config(
        Toy, [DEFAULTS], sets=["width=3"])
    with pytest.raises(ConfigError, match=r"unknown Toy key\(s\) \['wdth'\]"):
        build_config(Toy, [DEFAULTS], overrides={"wdth": 7})
    with pytest.raises(ConfigError, match="width expects int"):
        build_config(Toy, [DEFAULTS], overrides={"width": "wide"})
    with pytest.raises(ConfigError, match="width must be > 0"):
        build_config(Toy, [DEFAULTS], overrides={"width": 0})
    dual_pivot = get_method("dual-pivot")
    typed = dual_pivot.config(mode="unsupervised", steps=10, pairs=["de-en", "fr-en"], train_mix=False)
    assert typed == dual_pivot.config(mode="unsupervised", sets=["steps=10", "pairs=de-en,fr-en", "train_mix=false"])


def test_steps_must_be_at_least_one_unless_the_method_needs_none() -> None:
    with pytest.raises(ConfigError, match="steps must be >= 1, not 0"):
        build_config(Toy, [DEFAULTS], sets=["steps=0"])
    assert get_method("linear-map").config(sets=["steps=0"]).steps == 0  # a closed form
    assert get_method("emu").config(sets=["steps=0"]).steps == 0  # steps set from epochs
    with pytest.raises(ConfigError, match="steps must be >= 1"):
        get_method("dual-pivot").config(sets=["steps=0"])


def test_config_files_name_themselves_in_every_error(tmp_path: Path) -> None:
    typo = tmp_path / "typo.toml"
    typo.write_text("width = 5\n[bb]\nwidth = 6\n")
    with pytest.raises(ConfigError, match=r"typo.toml: unknown table\(s\) \[bb\]; a table names a mode \(b\)"):
        read_layers(DEFAULTS, [typo])
    assert build_config(Toy, read_layers(DEFAULTS, [typo], modes=["a", "bb"]), mode="bb").width == 6
    broken = tmp_path / "broken.toml"
    broken.write_text("width = 5\nsteps = = 3\n")
    with pytest.raises(ConfigError, match=r"broken.toml: not valid TOML \(.*line 2"):
        read_layers(DEFAULTS, [broken])
    supervsied = tmp_path / "supervsied.toml"
    supervsied.write_text("[supervsied]\nsteps = 3\n")
    with pytest.raises(ConfigError, match=r"supervsied.toml: unknown table\(s\) \[supervsied\]; .*supervised"):
        get_method("dual-pivot").config(files=[supervsied], mode="supervised")


def test_fingerprint_covers_the_trajectory_not_logging() -> None:
    base = build_config(Toy, [DEFAULTS])
    assert base.fingerprint() == build_config(Toy, [DEFAULTS], sets=["log_every=7", "device=cpu"]).fingerprint()
    assert base.fingerprint() != build_config(Toy, [DEFAULTS], sets=["lr=0.5"]).fingerprint()
    assert base.fingerprint() != build_config(Toy, [DEFAULTS], sets=["pairs=ar-en"]).fingerprint()


def test_toml_round_trip() -> None:
    cfg = build_config(Toy, [DEFAULTS], sets=["pairs=de-en,ar-en", "scale=0.25", "flag=true", "mode=b"])
    assert build_config(Toy, [to_toml(cfg)]) == cfg
    unset = build_config(Toy, ["layer = 3\n"], sets=["layer=none"])
    assert unset.layer is None and build_config(Toy, ["layer = 3\n", to_toml(unset)]).layer is None


def test_registry_finds_dual_pivot() -> None:
    assert "dual-pivot" in method_names()
    method = get_method("dual-pivot")
    assert method.model_type == "dual-pivot" and "supervised" in method.modes
    assert method.config(mode="supervised", sets=["steps=5"]).steps == 5
    with pytest.raises(ValueError, match="unknown mode"):
        method.config(mode="semi")
    with pytest.raises(ValueError, match="unknown method 'laser2'; methods: .*dual-pivot"):
        get_method("laser2")


def test_keys_added_later_keep_the_fingerprints_of_older_models() -> None:
    """A key in LATER_KEYS at the value older configs meant is left out of the fingerprint and differences."""
    cfg = build_config(Toy, [DEFAULTS])
    older = {k: v for k, v in cfg.to_dict().items() if k not in TrainConfig.NOT_FINGERPRINTED and k != "precision"}
    assert cfg.fingerprint() == hashlib.sha256(json.dumps(older, sort_keys=True).encode()).hexdigest()[:16]
    assert cfg.differing_keys(older) == []
    assert config_differences(cfg, {"config": older}) == []
    bf16 = build_config(Toy, [DEFAULTS], sets=["precision=bf16"])
    assert bf16.fingerprint() != cfg.fingerprint()
    assert bf16.differing_keys(older) == ["precision 'fp32' -> 'bf16'"]
    with pytest.raises(ConfigError, match="precision must be one of"):
        build_config(Toy, [DEFAULTS], sets=["precision=fp8"])


def test_a_mode_option_contradicting_a_set_or_file_mode_is_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="^--mode b contradicts --set mode=a: give the mode once$"):
        build_config(Toy, [DEFAULTS], sets=["mode=a"], mode="b")
    chosen = tmp_path / "chosen.toml"
    chosen.write_text('mode = "a"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=f"^--mode b contradicts mode = 'a' of {chosen}: give the mode once$"):
        build_config(Toy, read_layers(DEFAULTS, [chosen]), mode="b")
    agreeing = build_config(Toy, read_layers(DEFAULTS, [chosen]), sets=["mode=b"], mode="b")
    assert (agreeing.mode, agreeing.width) == ("b", 16)  # --set mode wins over the file's; --mode agrees with it
    with pytest.raises(ConfigError, match="--mode softmax contradicts --set mode=npair"):
        get_method("emu").config(sets=["mode=npair"], mode="softmax")


@pytest.mark.parametrize("mode", ["foo", ""])
def test_a_mode_of_a_method_without_modes_is_refused(mode: str) -> None:
    with pytest.raises(ValueError, match=f"^linear-map: unknown mode '{mode}'; linear-map has no modes: drop --mode$"):
        get_method("linear-map").config(mode=mode)
    with pytest.raises(ValueError, match=f"^absent: unknown mode '{mode}'; modes: absent, "):
        get_method("absent").config(mode=mode)


@pytest.mark.parametrize("method, key, value, message", [
    ("dual-pivot", "critic_gp", "-1", "critic_gp must be >= 0, not -1.0"),
    ("dual-pivot", "critic_clip", "-1", "critic_clip must be >= 0, not -1.0"),
    ("dual-pivot", "critic_hidden", "-1", "critic_hidden must be >= 0, not -1"),
    ("dual-pivot", "lambda_cycle", "-1", "lambda_cycle must be >= 0, not -1.0"),
    ("emu", "critic_hidden", "0", "critic_hidden must be >= 1, not 0"),
    ("emu", "lora_dropout", "2.0", r"lora_dropout must be in \[0, 1\) \(a dropout probability\), not 2.0"),
    ("emu", "dropout", "1.5", r"dropout must be in \[0, 1\)"),
    ("emu", "critic_dropout", "1", r"critic_dropout must be in \[0, 1\)"),
    ("emu", "gamma", "-1", "gamma must be >= 0, not -1.0"),
    ("distill", "lora_dropout", "3.0", r"lora_dropout must be in \[0, 1\)"),
    ("distill", "dropout", "-0.1", r"dropout must be in \[0, 1\)"),
    ("laser", "dropout", "1", r"dropout must be in \[0, 1\)"),
    ("laser", "vocab_per_lang", "0", r"sizes \(vocab_size, vocab_per_lang,"),
    ("laser", "character_coverage", "0", r"character_coverage must be in \(0, 1\]"),
    ("dueam", "lora_alpha", "0", "lora_alpha must be >= 1, not 0"),
    ("dueam", "lora_dropout", "1", r"lora_dropout must be in \[0, 1\)"),
])
def test_impossible_values_are_refused_up_front_naming_the_key(method: str, key: str, value: str,
                                                               message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        get_method(method).config(sets=[f"{key}={value}"])


@pytest.mark.parametrize("method", ["linear-map", "absent", "dual-pivot"])
def test_pair_codes_are_case_insensitive(method: str) -> None:
    config = get_method(method).config(sets=["pairs=DE-EN,Fr-En"])
    assert config.pairs == ["de-en", "fr-en"]  # type: ignore[attr-defined]
