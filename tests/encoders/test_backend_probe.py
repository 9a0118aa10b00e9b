"""``auto`` on a CPU class without a shipped row: it measures once (speed and the cosine guard), keeps the result
under $XLSENT_HOME keyed by the CPU and package versions, and picks the fastest backend that held the guard; the same
for exact k-NN's precision. The CPU class is faked, so these hold on every machine."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from xlsent import machine_measures
from xlsent.encoders import backend_probe, backends
from xlsent.encoders.registry import load_encoder
from xlsent.mining import precision

FAKE_CLASS = "fake-class"


class ClockedEncoder:
    """A toy encoder whose backends take known (fake) seconds per sentence; ``lossy`` ones move every vector."""

    def __init__(self, seconds: dict[str, float], lossy: Sequence[str] = ()) -> None:
        self.seconds, self.lossy, self.now, self.backend = seconds, set(lossy), 0.0, "torch"
        self.switches: list[str] = []

    def clock(self) -> float:
        return self.now

    def use_backend(self, backend: str) -> None:
        self.backend = backend
        self.switches.append(backend)

    def encode(self, sentences: Sequence[str], lang: str | None = None) -> np.ndarray:
        self.now += self.seconds[self.backend] * len(sentences)
        rows = np.stack([np.eye(4, dtype=np.float32)[len(s) % 4] for s in sentences])
        if self.backend in self.lossy:
            rows = rows + 0.1 * np.roll(rows, 1, axis=1)
            rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        return rows


@pytest.fixture()
def fake_cpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A CPU class that no table has a row for, measuring on, and an empty $XLSENT_HOME (returned)."""
    monkeypatch.setattr(backends, "cpu_class", lambda flags=None: FAKE_CLASS)
    monkeypatch.setattr(precision, "cpu_class", lambda flags=None: FAKE_CLASS)
    monkeypatch.setenv(machine_measures.MEASURE_ENV, "1")
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_candidates_leave_out_emulated_bf16_and_static_int8() -> None:
    every = ("torch", "torch-bf16", "onnx", "onnx-int8", "openvino", "openvino-bf16", "openvino-int8")
    def installed(b: str) -> bool:
        return True
    assert backend_probe.probe_candidates(every, frozenset({"avx2"}), installed) == [
        "torch", "onnx", "openvino", "onnx-int8"]
    assert backend_probe.probe_candidates(every, frozenset({"avx512_bf16"}), installed) == [
        "torch", "onnx", "openvino", "torch-bf16", "openvino-bf16", "onnx-int8"]


def test_the_probe_ranks_by_speed_and_guards_by_cosine() -> None:
    enc = ClockedEncoder({"torch": 0.03, "onnx": 0.01, "onnx-int8": 0.005}, lossy=["onnx-int8"])
    rows = backend_probe.probe_backends(enc, ("torch", "onnx", "onnx-int8", "openvino-int8"),
                                        backend_probe.ProbeConfig(clock=enc.clock))
    assert [(r["backend"], r["guard"]) for r in rows] == [
        ("onnx-int8", False), ("onnx", True), ("torch", True), ("openvino-int8", False)]
    assert rows[1]["sentences/s"] == pytest.approx(100.0) and rows[1]["min cosine"] == pytest.approx(1.0)
    assert rows[0]["min cosine"] < 0.998 and "not measured" in rows[3]
    assert enc.backend == "torch"


def test_a_candidate_that_would_end_past_the_budget_is_not_begun() -> None:
    enc = ClockedEncoder({"torch": 0.05, "onnx": 0.01})  # torch's 136 sentences: 6.8 s, so onnx would end past 10
    rows = backend_probe.probe_backends(enc, ("torch", "onnx"), backend_probe.ProbeConfig(budget_s=10, clock=enc.clock))
    assert [r["backend"] for r in rows] == ["torch", "onnx"]
    assert "not measured" in rows[1] and rows[1]["guard"] is False


def test_auto_measures_once_keeps_it_and_picks_the_fastest_that_held(fake_cpu: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    enc = ClockedEncoder({"torch": 0.03, "onnx": 0.01, "onnx-int8": 0.005}, lossy=["onnx-int8"])
    config = backend_probe.ProbeConfig(clock=enc.clock)
    runs_on = ("torch", "onnx", "onnx-int8")
    assert backend_probe.auto_backend_of(enc, "toy-4x1", runs_on=runs_on, config=config) == "onnx"
    kept = list((fake_cpu / "auto").glob(f"{FAKE_CLASS}-*.json"))
    assert len(kept) == 1
    record = json.loads(kept[0].read_text(encoding="utf-8"))
    assert record["packages"]["torch"] and list(record["entries"]) == ["backends transformer toy-4x1"]

    def no_second_measurement(*args: object, **kwargs: object) -> None:
        raise AssertionError("measured again")

    monkeypatch.setattr(backend_probe, "probe_backends", no_second_measurement)
    assert backend_probe.auto_backend_of(enc, "toy-4x1", runs_on=runs_on, config=config) == "onnx"
    monkeypatch.setattr(machine_measures, "package_versions", lambda: {"torch": "99"})  # an upgrade measures again
    with pytest.raises(AssertionError, match="measured again"):
        backend_probe.auto_backend_of(enc, "toy-4x1", runs_on=runs_on, config=config)


def test_a_table_row_wins_and_measuring_off_is_the_lossless_default(fake_cpu: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    enc = ClockedEncoder({"torch": 0.03, "onnx": 0.01})
    table = tmp_path / "table.json"
    table.write_text(json.dumps({FAKE_CLASS: [{"backend": "torch", "guard": True}]}), encoding="utf-8")
    monkeypatch.setenv(backends.TABLE_ENV, str(table))
    assert backend_probe.auto_backend_of(enc, "toy", runs_on=("torch", "onnx")) == "torch"
    assert enc.switches == []  # the table's row: nothing measured
    table.write_text("{}", encoding="utf-8")
    monkeypatch.setenv(machine_measures.MEASURE_ENV, "0")
    assert backend_probe.auto_backend_of(enc, "toy", runs_on=("torch", "onnx")) == (
        "openvino" if backends.available("openvino") else "torch")
    assert enc.switches == [] and not (fake_cpu / "auto").exists()


def test_a_corrupt_measurement_file_is_measured_again(fake_cpu: Path, caplog: pytest.LogCaptureFixture) -> None:
    enc = ClockedEncoder({"torch": 0.03, "onnx": 0.01})
    config = backend_probe.ProbeConfig(clock=enc.clock)
    path = machine_measures.measures_path(FAKE_CLASS)
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    assert backend_probe.auto_backend_of(enc, "toy", runs_on=("torch", "onnx"), config=config) == "onnx"
    assert "not a file of auto's measurements" in caplog.text
    assert json.loads(path.read_text(encoding="utf-8"))["entries"]["backends transformer toy"]["rows"]


def test_loading_on_auto_measures_the_real_backends_of_the_model(fake_cpu: Path, tiny_model_dir: Path) -> None:
    encoder = load_encoder(tiny_model_dir, "auto")
    (kept,) = (fake_cpu / "auto").glob("*.json")
    (entry,) = json.loads(kept.read_text(encoding="utf-8"))["entries"].values()
    rows = {r["backend"]: r for r in entry["rows"]}
    assert {"torch", "onnx", "openvino", "onnx-int8"} <= set(rows)
    assert rows["openvino-int8"]["not measured"]
    for lossless in ("torch", "onnx", "openvino"):
        assert rows[lossless]["guard"] and rows[lossless]["min cosine"] > 0.9999
    chosen = next(r["backend"] for r in entry["rows"] if r["guard"])
    assert encoder.backend == chosen


@pytest.fixture()
def bf16_cpu(fake_cpu: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake CPU class with native bf16 products, exact k-NN's choice forgotten, and a small probe corpus."""
    monkeypatch.setattr(backends, "cpu_flags", lambda: frozenset({"avx2", "avx512_bf16"}))
    monkeypatch.setattr(precision, "measure_precision", partial(precision.measure_precision, rows=400))
    precision.measured_choice.cache_clear()
    yield fake_cpu
    precision.measured_choice.cache_clear()


def test_knn_precision_is_measured_once_on_a_bf16_cpu_without_a_record(bf16_cpu: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    choice = precision.measured_choice()
    (kept,) = (bf16_cpu / "auto").glob("*.json")
    record = json.loads(kept.read_text(encoding="utf-8"))["entries"]["knn precision"]
    assert record["sentences"] == 400 and record["rows_differ"] <= record["rows"]
    assert choice == precision.precision_of(record)
    precision.measured_choice.cache_clear()
    monkeypatch.setattr(precision, "measure_precision", lambda: pytest.fail("measured again"))
    assert precision.measured_choice() == choice


def test_knn_precision_without_native_bf16_is_fp32_unmeasured(fake_cpu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "cpu_flags", lambda: frozenset({"avx2"}))
    monkeypatch.setattr(precision, "measure_precision", lambda: pytest.fail("measured"))
    precision.measured_choice.cache_clear()
    try:
        assert precision.measured_choice() == "fp32"
    finally:
        precision.measured_choice.cache_clear()


def test_a_measured_bf16_that_changes_neighbours_is_not_chosen() -> None:
    assert precision.precision_of({"fp32_s": 9.0, "bf16_s": 1.0, "rows": 1000, "rows_differ": 1}) == "bf16"
    assert precision.precision_of({"fp32_s": 9.0, "bf16_s": 1.0, "rows": 1000, "rows_differ": 2}) == "fp32"
    assert precision.precision_of({"fp32_s": 1.0, "bf16_s": 9.0, "rows": 1000, "rows_differ": 0}) == "fp32"


@pytest.mark.parametrize(("value", "enabled"), [("0", False), ("off", False), ("No", False), ("n", False),
                                                 ("false", False), (" F ", False), ("1", True), ("yes", True),
                                                 ("y", True), ("ON", True), ("true", True), ("", True)])
def test_measuring_is_switched_by_the_usual_spellings(monkeypatch: pytest.MonkeyPatch, value: str,
                                                      enabled: bool) -> None:
    monkeypatch.setenv(machine_measures.MEASURE_ENV, value)
    assert machine_measures.measuring_enabled() is enabled


@pytest.mark.parametrize("value", ["disable", "2", "nope"])
def test_an_unknown_measuring_switch_is_refused_naming_the_variable(monkeypatch: pytest.MonkeyPatch,
                                                                    value: str) -> None:
    """Anything but 0/off/false/no meant 'measure', so XLSENT_AUTO_MEASURE=disable measured."""
    monkeypatch.setenv(machine_measures.MEASURE_ENV, value)
    with pytest.raises(ValueError, match=f"^XLSENT_AUTO_MEASURE={value!r}: .*0, off, false, no.*1, on, true, yes"):
        machine_measures.measuring_enabled()
