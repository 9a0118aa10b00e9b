"""Help read through a pipe that closes early ends quietly (no traceback)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("argv", [["train", "dual-pivot", "--help"], ["mine", "--help"]])
def test_help_into_a_closed_pipe_has_no_traceback(argv: list[str]) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "xlsent.cli", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # like `| head -c 10`
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err


def test_train_filter_help_lists_the_scorers_settings(capsys: pytest.CaptureFixture[str]) -> None:
    from xlsent.cli import main

    code = main(["train", "filter", "--help"])  # was a traceback: filter is no registered method
    out = capsys.readouterr().out
    assert code == 0 and "config keys of filter" in out and "\ntrees = 300\n" in out
