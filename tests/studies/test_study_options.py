"""Every study's options are checked when parsed, before any model loads or trains; the defaults that name a file
of the package are read from it, whatever the current folder."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from xlsent.methods.absent import study as absent_study
from xlsent.methods.distill import study as distill_study
from xlsent.methods.dual_pivot import study as dual_pivot_study
from xlsent.methods.dueam import study as dueam_study
from xlsent.methods.emu import study as emu_study
from xlsent.methods.laser import study as laser_study
from xlsent.studies.command import main, parser_for


@pytest.mark.parametrize(("module", "argv", "message"), [
    (absent_study, ["--ratios", "0.1", "-1"], "argument --ratios: must be a share in (0, 1], not '-1'"),
    (absent_study, ["--ratios", "1.5"], "argument --ratios: must be a share in (0, 1], not '1.5'"),
    (absent_study, ["--steps", "-5"], "argument --steps: must be a whole number of at least 1"),
    (absent_study, ["--valid-pairs", "-1"], "argument --valid-pairs: must be a whole number of at least 1"),
    (absent_study, ["--max-pairs", "0"], "argument --max-pairs: must be a whole number of at least 1"),
    (absent_study, ["--threads", "-1"], "argument --threads: must be a whole number of at least 1"),
    (dueam_study, ["--steps", "-1"], "argument --steps: must be a whole number of at least 1"),
    (dueam_study, ["--max-pairs", "-1"], "argument --max-pairs: must be a whole number of at least 1"),
    (dueam_study, ["--ablation-steps", "0"], "argument --ablation-steps: must be a whole number of at least 1"),
    (emu_study, ["--table3-langs", "en", "xyz"], "argument --table3-langs: invalid choice: 'xyz'"),
    (emu_study, ["--langs", "xyz"], "argument --langs: invalid choice: 'xyz'"),
    (laser_study, ["--bitext-max-pairs", "-3"], "argument --bitext-max-pairs: must be a whole number of at least 1"),
    (laser_study, ["--depth-steps", "0"], "argument --depth-steps: must be a whole number of at least 1"),
    (laser_study, ["--study-minutes", "-1"], "argument --study-minutes: must be a finite number above 0"),
    (laser_study, ["--bitext-run", "garbage"], "argument --bitext-run: 'garbage': expected LANG:PAIRS with LANG "
                                               "one of qaa"),
    (laser_study, ["--bitext-run", "qaa:0"], "argument --bitext-run: 'qaa:0': expected LANG:PAIRS"),
    (distill_study, ["--study-steps", "0"], "argument --study-steps: must be a whole number of at least 1, not '0'"),
    (distill_study, ["--bitext-runs", "qaa:300", "garbage"],
     "argument --bitext-runs: 'garbage': expected LANG:PAIRS[:VARIANT]"),
    (distill_study, ["--v2-runs", "qaa:300:nosuch"],
     "argument --v2-runs: 'qaa:300:nosuch': expected LANG:PAIRS[:VARIANT]"),
    (dual_pivot_study, ["--steps", "-3"], "argument --steps: must be a whole number of at least 1, not '-3'"),
    (dual_pivot_study, ["--max-pairs", "-3"], "argument --max-pairs: must be a whole number of at least 1, not '-3'"),
    (dual_pivot_study, ["--ablation-steps", "0"], "argument --ablation-steps: must be a whole number of at least 1, "
                                                  "not '0'"),
    (dual_pivot_study, ["--bucc", "xx"], "argument --bucc: invalid choice: 'xx'"),
], ids=lambda x: " ".join(x) if isinstance(x, list) else "")
def test_a_bad_option_value_is_a_usage_error_when_parsed(module: types.ModuleType, argv: list[str], message: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parser_for(module).parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_laser_reads_its_default_config_layer_from_the_package_in_any_folder(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = laser_study.Settings(models_dir=tmp_path)
    assert settings.configs == (laser_study.SMALL_CONFIG,)  # recorded as before
    config = laser_study.Lab(settings, tmp_path).config()
    assert config.layers == 1 and config.objective == "distill"  # laser-small.toml, not laser.toml


def test_laser_refuses_a_missing_main_model_naming_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # the default models/laser-small is not here
    assert main(laser_study, ["--out", str(tmp_path / "out"), "--models", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "error: --main-model models/laser-small: no model there" in err and "Traceback" not in err
    assert not (tmp_path / "models").exists() and not (tmp_path / "m").exists()
