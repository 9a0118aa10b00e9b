"""A study's curves (``options["curves"]``): plotted into the study's section, left out of its options line."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from xlsent.evaluation.results import TaskResult
from xlsent.report.curves import CURVES_KEY, curves, plot_curves
from xlsent.report.page import write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SPEC = curves("minutes", {"dev": {"a": [(1.0, 96.0), (2.0, 97.0)], "b": [(3.0, 97.5)]},
                          "test": {"a": [(2.0, 77.0)]}})


def test_a_study_result_with_curves_gets_its_plot_and_a_clean_options_line(tmp_path: Path) -> None:
    results = tmp_path / "results"
    TaskResult(task="distill", encoder="me5-distill@1", dataset="d", main_score=77.0, main_metric="tatoeba",
               scores={"a": {"tatoeba": 77.0}}, variant="recipe",
               options={"method_row": "a", CURVES_KEY: SPEC}).save(results)
    write_report(results, tmp_path / "docs" / "results.md", tmp_path / "docs" / "plots")
    page = (tmp_path / "docs" / "results.md").read_text(encoding="utf-8")
    [plot] = (tmp_path / "docs" / "plots").glob("*curves*")
    assert plot.read_bytes().startswith(PNG_MAGIC)
    assert f"(plots/{plot.name})" in page
    assert "Options: method_row=a." in page and "panels" not in page


def test_malformed_curves_are_named_and_not_plotted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="xlsent.report.curves"):
        assert not plot_curves({"x": "m", "panels": [{"y": "dev", "series": {"a": [[1.0]]}}]}, "a study",
                               tmp_path / "c.png")
    assert "a study: curves not plotted: malformed 'curves' option" in caplog.text
    assert not (tmp_path / "c.png").exists()
    assert plot_curves(SPEC, "a study", tmp_path / "c.png") and (tmp_path / "c.png").is_file()
