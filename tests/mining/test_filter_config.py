"""Messages about filter settings name where each value at fault came from: the option as typed, or the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.mining.filter_config import FilterConfig


def test_a_value_from_the_command_line_is_named_as_the_option_not_the_file(tmp_path: Path) -> None:
    """``--config c.toml --min-p-clean 2`` said 'c.toml: min_p_clean must be ...'."""
    path = tmp_path / "c.toml"
    path.write_text("", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        FilterConfig.from_toml(path, min_p_clean=2.0)
    assert str(error.value) == "--min-p-clean 2: min_p_clean must be 'auto' or a probability between 0 and 1, not 2.0"
    with pytest.raises(ValueError, match=r"^--min-p-clean nan: min_p_clean must be"):
        FilterConfig.from_toml(None, min_p_clean=float("nan"))


def test_a_conflict_names_the_file_key_and_the_option(tmp_path: Path) -> None:
    """``score = false`` in the file and ``--threshold 0.3`` said 'c.toml: score is off (--no-score)'."""
    path = tmp_path / "c.toml"
    path.write_text("score = false\n", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        FilterConfig.from_toml(path, threshold=0.3, keep=None)
    assert str(error.value) == (f"{path}: score = false and --threshold 0.3: score is off, so no score cut applies: "
                                "drop threshold or turn score on")
    path.write_text("threshold = 0.3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^--no-score and {path}: threshold = 0.3: score is off"):
        FilterConfig.from_toml(path, score=False)
    path.write_text("max_ratio = 0.5\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}: max_ratio = 0.5: max_ratio must be at least 1, not 0.5$"):
        FilterConfig.from_toml(path)
