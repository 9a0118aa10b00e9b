"""The Training runs section of the report: ``train.jsonl`` logs parsed, plotted and tabulated."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from xlsent.report.training_runs import (
    TrainPoint,
    ValidationPoint,
    read_train_log,
    training_runs,
    training_section,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

TRAIN_LOG = [  # a run logged every 100 steps, validated every 200; line 5 is malformed
    {"step": 100, "elapsed_s": 10.0, "lr": {"module": 0.001}, "losses": {"sup": 0.9, "loss": 0.9}},
    {"step": 200, "elapsed_s": 20.0, "lr": {"module": 0.001}, "losses": {"sup": 0.6, "loss": 0.6}},
    {"step": 200, "elapsed_s": 22.0, "validation": {"tatoeba-deu": 90.0, "xsim": 3.0}, "criterion": "tatoeba-deu",
     "best": True},
    {"step": 300, "elapsed_s": 32.0, "lr": {"module": 0.001}, "losses": {"sup": 0.5, "loss": 0.5}},
    "{not json",
    {"step": 400, "elapsed_s": 42.0, "lr": {"module": 0.001}, "losses": {"sup": 0.4, "loss": 0.4}},
    {"step": 400, "elapsed_s": 44.0, "validation": {"tatoeba-deu": 95.5, "xsim": 1.0}, "criterion": "tatoeba-deu",
     "best": True},
    {"step": 500, "elapsed_s": 3725.0, "lr": {"module": 0.001}, "losses": {"sup": 0.35, "loss": 0.3512}},
    {"step": 500, "elapsed_s": 3730.0, "validation": {"tatoeba-deu": 94.0, "xsim": 2.0}, "criterion": "tatoeba-deu",
     "best": False},
]


def write_log(path: Path, lines: Sequence[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_training_runs_plot_each_log_and_the_section_shows_its_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    write_log(Path("models/dual-pivot/sup-de-en/train.jsonl"), TRAIN_LOG)
    write_log(Path("models/short/train.jsonl"), [{"step": 3, "elapsed_s": 90.0, "losses": {"loss": 1.5}}])
    write_log(Path("models/long/train.jsonl"), [{"step": 9, "elapsed_s": 9000.0, "losses": {"loss": 123.4}}])
    write_log(Path("models/mixed/train.jsonl"), [  # languages' draw shares beside the losses: counted, not listed
        {"step": 1, "elapsed_s": 5.0, "losses": {"loss": 2.0, "batches de": 1.0}},
        {"step": 2, "elapsed_s": 9.0, "losses": {"loss": 1.0, "batches fr": 0.5, "batches de": 0.5}}])
    write_log(Path("models/empty/train.jsonl"), [""])
    with caplog.at_level(logging.WARNING, logger="xlsent.report.training_runs"):
        runs = training_runs("models/**/train.jsonl", Path("docs/plots"), Path("docs/results.md"))
    text = "\n".join(training_section(runs))

    assert [folder for folder, _, _ in runs] == ["models/dual-pivot/sup-de-en", "models/long", "models/mixed",
                                                 "models/short"]
    assert runs[2][1].terms == ["loss"] and runs[2][1].drawn == ["de", "fr"]
    assert "| `models/mixed` | 2 | 9 s | loss 1.00; 2 languages drawn |  | [plot](plots/train__mixed.png) |" in text
    assert text.startswith("## Training runs\n")
    assert ("| `models/dual-pivot/sup-de-en` | 500 | 62.1 min | sup 0.35, loss 0.351 | tatoeba-deu 95.5 at step 400 | "
            "[plot](plots/train__dual-pivot_sup-de-en.png) |") in text
    assert "| `models/long` | 9 | 2.5 h | loss 123 |  | [plot](plots/train__long.png) |" in text
    assert "| `models/short` | 3 | 90 s | loss 1.50 |  | [plot](plots/train__short.png) |" in text
    assert "models/empty" not in text
    assert "![train__dual-pivot_sup-de-en](plots/train__dual-pivot_sup-de-en.png)" in text
    assert sorted(p.name for p in Path("docs/plots").glob("*")) == ["train__dual-pivot_sup-de-en.png",
                                                                   "train__long.png", "train__mixed.png",
                                                                   "train__short.png"]
    assert all(p.read_bytes().startswith(PNG_MAGIC) for p in Path("docs/plots").glob("*"))

    warnings = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("models/dual-pivot/sup-de-en/train.jsonl:5: skipped malformed line") for m in warnings)
    assert any("models/empty/train.jsonl: no training or validation line" in m for m in warnings)


def test_train_log_skips_malformed_lines_and_keeps_the_resumed_run(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    path = write_log(tmp_path / "train.jsonl", [
        {"step": 10, "losses": {"loss": 4.0}},
        {"step": 20, "losses": {"loss": 3.0}},
        {"step": 20, "validation": {"acc": 50.0}, "criterion": "acc", "best": True},
        {"step": 30, "losses": {"loss": 2.0}},
        {"losses": {"loss": 1.0}},                                                # line 5: no step
        {"step": 30, "validation": {"acc": 60.0}, "criterion": "f1", "best": True},  # 6: criterion not a metric
        {"step": 30, "losses": {"loss": "low"}},                                  # 7: loss not a number
        [1, 2],                                                                   # 8: not an object
        {"step": 30, "lr": {"m": 0.1}},                                           # 9: neither kind
        "",
        {"step": 25, "losses": {"loss": 2.5}},  # resumed from the step-20 checkpoint: replaces step 30
        {"step": 30, "validation": {"acc": 70.0}, "criterion": "acc", "best": True},
    ])
    with caplog.at_level(logging.WARNING, logger="xlsent.report.training_runs"):
        log = read_train_log(path)
    assert log.train == [TrainPoint(10, {"loss": 4.0}), TrainPoint(20, {"loss": 3.0}), TrainPoint(25, {"loss": 2.5})]
    assert log.validation == [ValidationPoint(20, {"acc": 50.0}, "acc", True),
                              ValidationPoint(30, {"acc": 70.0}, "acc", True)]
    assert log.best == log.validation[-1] and log.last_step == 30
    assert [int(r.getMessage().split(":")[1]) for r in caplog.records] == [5, 6, 7, 8, 9]


def test_unreadable_logs_and_a_glob_matching_nothing_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """A log of bad UTF-8 failed without its name, a folder matching the glob with "Is a directory", a step that is
    not a number was said to be missing, and a glob matching nothing was silent."""
    monkeypatch.chdir(tmp_path)
    Path("models/bytes").mkdir(parents=True)
    Path("models/bytes/train.jsonl").write_bytes(b"\xff\xfe\n")
    Path("models/folder/train.jsonl").mkdir(parents=True)
    write_log(Path("models/text/train.jsonl"), [{"step": "x", "losses": {"loss": 1.0}},
                                                {"step": 1, "losses": {"loss": 1.0}}])
    with caplog.at_level(logging.WARNING, logger="xlsent.report.training_runs"):
        runs = training_runs("models/*/train.jsonl", Path("plots"), Path("results.md"))
        assert training_runs("nowhere/*/train.jsonl", Path("plots"), Path("results.md")) == []
    assert [folder for folder, _, _ in runs] == ["models/text"]
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings[0].startswith("models/bytes/train.jsonl: not UTF-8 text (")
    assert "models/folder/train.jsonl: not a file, left out (--train-logs models/*/train.jsonl matches it)" in warnings
    assert 'models/text/train.jsonl:1: skipped malformed line: step "x" is not a whole number from 0 up' in warnings
    assert warnings[-1] == ("--train-logs nowhere/*/train.jsonl: matches no file, so the page has no Training runs "
                            "section")
