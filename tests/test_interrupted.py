"""What a stopped run leaves: SIGTERM (sent by timeout, Slurm, Kubernetes, systemd) unwinds the cleanup Ctrl-C does,
and a second signal does not break into that cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from xlsent import api
from xlsent.atomic import atomic_path
from xlsent.cli import main


@pytest.fixture(autouse=True)
def signal_handlers() -> Iterator[None]:
    """The default handlers of SIGINT and SIGTERM during the test, as a command started in a terminal has them (a
    test process started in the background, as `make test &`, inherits SIGINT ignored, which xlsent leaves alone),
    and as they were before it afterwards: a run a signal stopped leaves its own (the process is ending), which must
    not stay in the test process."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


def embed_args(tmp_path: Path, model: Path) -> list[str]:
    (tmp_path / "in.txt").write_text("the dog barks\n", encoding="utf-8")
    return ["embed", str(tmp_path / "in.txt"), "-o", str(tmp_path / "o.npy"), "--model", str(model)]


def test_sigterm_stops_a_run_as_ctrl_c_does_and_leaves_no_temporary_file(
        tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    def terminated_midway(source: Any, output: Path, **kw: Any) -> None:
        with atomic_path(output) as tmp:
            tmp.write_bytes(b"half")
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(10)  # the signal stops it first

    monkeypatch.setattr(api, "embed", terminated_midway)
    assert main(embed_args(tmp_path, tiny_model_dir)) == 143
    assert capsys.readouterr().err == "xlsent: terminated\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]  # no temporary file, no lock


def test_a_second_ctrl_c_does_not_break_into_the_cleanup_of_the_first(
        tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    cleaned = []

    def interrupted_twice(source: Any, output: Path, **kw: Any) -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(10)  # the signal stops it first
        finally:
            os.kill(os.getpid(), signal.SIGINT)  # pressed again while the cleanup runs
            time.sleep(0.1)
            cleaned.append(True)

    monkeypatch.setattr(api, "embed", interrupted_twice)
    assert main(embed_args(tmp_path, tiny_model_dir)) == 130
    assert capsys.readouterr().err == "xlsent: interrupted\n"
    assert cleaned == [True]


def test_a_run_no_signal_stopped_leaves_the_handlers_as_they_were(tmp_path: Path, tiny_model_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "embed", lambda *a, **kw: (_ for _ in ()).throw(ValueError("no")))
    assert main(embed_args(tmp_path, tiny_model_dir)) == 2
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_serve_shuts_down_on_sigterm(tiny_model_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "xlsent.cli", "serve", "--model", f"tiny={tiny_model_dir}",
                             "--backend", "torch", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        assert proc.stdout is not None
        while "running on" not in (line := proc.stdout.readline()):
            assert line, f"xlsent serve ended early (exit {proc.poll()})"
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
        assert proc.returncode == 143
        assert "Application shutdown complete" in rest and rest.endswith("xlsent: terminated\n")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
