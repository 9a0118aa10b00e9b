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


@pytest.mark.parametrize("argv", [["split", "{w}/in.txt", "--lang", "en", "-o", "-"],
                                  ["align", "{w}/in.txt", "{w}/in.txt", "-o", "-", "--model", "toy:unloadable"],
                                  ["mine", "{w}/in.txt", "{w}/in.txt", "-o", "-", "--model", "toy:unloadable"]])
def test_output_to_a_closed_standard_output_is_refused_first(argv: list[str], tmp_path) -> None:
    """`-o -` with standard output closed (`>&-`): an error naming it before any work (the model is never loaded),
    not a traceback at the end."""
    (tmp_path / "in.txt").write_text("One sentence. Another one.\nA third.\n", encoding="utf-8")
    args = [a.replace("{w}", str(tmp_path)) for a in argv]
    proc = subprocess.run(["bash", "-c", 'exec "$@" >&-', "bash", sys.executable, "-m", "xlsent.cli", *args],
                          stderr=subprocess.PIPE, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "- names standard output, which is closed" in err and "Traceback" not in err
