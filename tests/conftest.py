"""Shared fixtures: a tiny random transformer model directory, the real default model (converted once), and
`xlsent` runs of the tiny model that a test holds back (:class:`GatedRuns`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from xlsent.encoders.transformer import TransformerEncoder
from xlsent.testing import load_script, make_tiny_model_dir

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session", autouse=True)
def unmeasured_backend_table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``auto`` runs OpenVINO fp32 (the choice on a CPU without a measured table, with measuring on first use turned
    off) on every machine, so tests that compare a command's vectors with PyTorch's hold whatever the shipped table
    or a measurement picks for this CPU (bf16 on AMX); the backends themselves are tested one by one in
    tests/encoders/test_backends.py, the measurement in tests/encoders/test_backend_probe.py."""
    table = tmp_path_factory.mktemp("backend-table") / "table.json"
    table.write_text("{}", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLSENT_BACKEND_TABLE", str(table))
        mp.setenv("XLSENT_AUTO_MEASURE", "0")
        yield


@pytest.fixture()
def shipped_backend_table(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The backend table as it ships, read by ``auto`` for one test (instead of the suite's empty one); its rows."""
    from xlsent.encoders import backends

    monkeypatch.setenv(backends.TABLE_ENV, str(backends.TABLE))
    table: dict[str, Any] = json.loads(backends.TABLE.read_text(encoding="utf-8"))
    return table


@pytest.fixture(scope="session")
def multiscript() -> list[str]:
    """The lines of tests/fixtures/multiscript.txt (sentences in many scripts)."""
    return (FIXTURES / "multiscript.txt").read_text(encoding="utf-8").splitlines()


RAY_SYSTEM_CONFIG = {"idle_worker_killing_time_threshold_ms": 600_000}
"""Idle Ray workers live on between the tests' jobs: by default Ray kills them after a second, so every job paid for
new worker processes (each importing torch) for its k-NN and index tasks."""


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray session of 2 CPUs for the module's tests."""
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             _system_config=RAY_SYSTEM_CONFIG)
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_model_dir(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def tiny_encoder(tiny_model_dir: Path) -> TransformerEncoder:
    torch.manual_seed(0)
    return TransformerEncoder(tiny_model_dir)


@pytest.fixture(scope="session")
def default_encoder() -> TransformerEncoder:
    """The real default model (me5-small), converted into the cache once per machine."""
    from xlsent.encoders.me5_convert import prepare_default_model

    try:
        directory = prepare_default_model()
    except FileNotFoundError as exc:
        pytest.skip(f"default model unavailable: {exc}")
    return TransformerEncoder(directory, name="me5-small")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    from xlsent.paths import data_root

    try:
        return data_root()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.fixture()
def one_torch_thread() -> Iterator[None]:
    """Tiny tensors: extra intra-op threads only add contention on a shared machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


GATE_MODULE = '''"""The tiny test model, held back by a test: encode calls after the first FREE wait for the file GO."""
import time
from pathlib import Path

from xlsent.encoders.transformer import TransformerEncoder

MODEL, GO, FREE = {model!r}, {go!r}, {free}
calls = 0


class Gated(TransformerEncoder):
    def encode(self, sentences, lang=None, **kw):
        global calls
        calls += 1
        while calls > FREE and not Path(GO).exists():
            time.sleep(0.05)
        return super().encode(sentences, lang, **kw)


def tiny():
    return Gated(MODEL)
'''


class GatedRuns:
    """``xlsent`` runs in ``folder`` with ``--model gate:tiny``, the tiny model whose encode calls after the first
    ``free`` wait until :meth:`open` is called: a test can act (kill, start another run) while a run is under way.
    The module ``gate`` is importable in the test's process too."""

    def __init__(self, folder: Path, model: Path, free: int, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder = folder
        (folder / "gate.py").write_text(GATE_MODULE.format(model=str(model), go=str(folder / "GO"), free=free),
                                        encoding="utf-8")
        monkeypatch.syspath_prepend(str(folder))

    def start(self, *argv: str) -> subprocess.Popen[str]:
        """``xlsent ARGV`` in a new process run in the folder."""
        env = {**os.environ, "PYTHONPATH": str(self.folder), "XLSENT_HOME": str(self.folder / "home")}
        return subprocess.Popen([sys.executable, "-m", "xlsent.cli", *argv], cwd=self.folder, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def open(self) -> None:
        """Let every held encode call go on."""
        (self.folder / "GO").touch()

    def wait_for(self, path: str, seconds: float = 60) -> None:
        """Wait until ``path`` (relative to the folder) exists."""
        deadline = time.monotonic() + seconds
        while not (self.folder / path).exists():
            assert time.monotonic() < deadline, f"timed out waiting for {path}"
            time.sleep(0.05)


@pytest.fixture()
def gated_runs(tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[int], GatedRuns]:
    """``free -> GatedRuns`` in ``tmp_path``."""
    return lambda free: GatedRuns(tmp_path, tiny_model_dir, free, monkeypatch)


@pytest.fixture(scope="session")
def bench_script() -> Callable[[str], ModuleType]:
    """Loads ``benchmarks/<name>.py`` as a module (the scripts are not part of the package)."""
    return lambda name: load_script(Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py")
