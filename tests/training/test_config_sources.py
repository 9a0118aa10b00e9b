"""Where a wrong configuration value came from: every error names the ``--config`` file (and its mode table) or the
``--set`` pair that gave it, and a mode table the run does not pick is checked as well."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xlsent.cli import main
from xlsent.training.config import ConfigError, read_layers
from xlsent.training.method import get_method


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", [None, "unsupervised", "supervised"])
@pytest.mark.parametrize("line, message", [
    ('alpha = "x"', "alpha expects float, got 'x'"),
    ("alpha = nan", "alpha must be a finite number, not nan"),
])
def test_a_wrong_type_in_any_mode_table_names_the_file_and_the_table(tmp_path: Path, mode: str | None, line: str,
                                                                     message: str) -> None:
    t = _file(tmp_path, f"[supervised]\n{line}\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(t))} \[supervised\]: {message}"):
        get_method("dual-pivot").command_config([t], [], mode, [], False)


def test_a_range_error_in_a_mode_table_not_picked_names_the_file_and_the_table(tmp_path: Path) -> None:
    t = _file(tmp_path, "[supervised]\nsteps = 0\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(t))} \[supervised\]: invalid dual-pivot settings for "
                                          rf"mode supervised: steps must be >= 1, not 0 \({re.escape(str(t))} "
                                          r"\[supervised\]: steps = 0\)$"):
        get_method("dual-pivot").command_config([t], [], "unsupervised", [], False)


def test_a_mode_table_not_picked_is_charged_only_with_its_own_problems(tmp_path: Path) -> None:
    # without its [unsupervised] table the file would not train that mode either: not the table's fault
    t = _file(tmp_path, "adversarial = false\ncycle = false\n[unsupervised]\nsteps = 5\n[supervised]\nsteps = 7\n")
    assert get_method("dual-pivot").command_config([t], [], "supervised", [], False).steps == 7


@pytest.mark.parametrize("given, where", [("file", "{t}: ridge = -1"), ("set", "--set ridge=-1")])
def test_a_range_error_names_the_method_and_where_the_value_came_from(tmp_path: Path, given: str, where: str
                                                                      ) -> None:
    t = _file(tmp_path, "ridge = -1\n")
    files, sets = ([t], []) if given == "file" else ([], ["ridge=-1"])
    expected = f"invalid linear-map settings: ridge must be >= 0 ({where.format(t=t)})"
    with pytest.raises(ConfigError, match=f"^{re.escape(expected)}$"):
        get_method("linear-map").command_config(files, sets, None, [], False)


def test_a_wrong_type_given_with_set_names_the_pair() -> None:
    with pytest.raises(ConfigError, match=r"^--set seed=abc: seed expects int, got 'abc'$"):
        get_method("linear-map").config(sets=["seed=abc"])


def test_a_mode_name_as_a_top_level_key_names_the_file(tmp_path: Path) -> None:
    t = _file(tmp_path, "supervised = 3\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(t))}: unknown dual-pivot key\(s\) \['supervised'\] "
                                          r"\(supervised is a mode: its keys go under a table \[supervised\]\)"):
        get_method("dual-pivot").config([t])


def test_a_config_that_is_no_regular_file_says_so() -> None:
    with pytest.raises(ConfigError, match=r"^config file /dev/null is not a regular file"):
        read_layers("steps = 1\n", ["/dev/null"])


def test_seed_out_of_range_is_refused_as_an_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "linear-map", "--out", str(tmp_path / "m"), "-q", "--seed", "-1"]) == 2
    assert "argument --seed: must be a whole number >= 0 and < 2**32, not -1" in capsys.readouterr().err
