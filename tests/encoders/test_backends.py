"""Inference backends: the same vectors on every backend, graphs exported once, ``auto`` chosen by the table."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from xlsent.encoders import backends, registry
from xlsent.encoders.registry import load_encoder
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.testing import LookupEncoder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TINY_SENTENCES = ["the dog barks", "der hund bellt", "a cat runs", "q: b", "the the the dog dog cat"]


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_float_backends_match_torch(tiny_model_dir: Path, home: Path, backend: str) -> None:
    ref = TransformerEncoder(tiny_model_dir).encode(TINY_SENTENCES)
    enc = TransformerEncoder(tiny_model_dir)
    enc.use_backend(backend)
    out = enc.encode(TINY_SENTENCES)
    assert np.sum(out * ref, axis=1).min() >= 0.9999
    assert enc.id == TransformerEncoder(tiny_model_dir).id  # lossless: the vectors keep the model's id


def test_int8_backend_changes_the_id(tiny_model_dir: Path, home: Path, caplog: pytest.LogCaptureFixture) -> None:
    enc = TransformerEncoder(tiny_model_dir)
    with caplog.at_level(logging.WARNING):
        enc.use_backend("onnx-int8")
    assert not [r for r in caplog.records if r.name == "root"], "onnxruntime's quantizer advice is not shown"
    assert enc.id.endswith("+onnx-int8")
    assert enc.encode(TINY_SENTENCES).shape == (len(TINY_SENTENCES), enc.dim)


def test_graph_is_exported_once(tiny_model_dir: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    TransformerEncoder(tiny_model_dir).use_backend("openvino")
    exported = list((home / "backends").glob("*/openvino/model.xml"))
    assert len(exported) == 1

    def no_export(*_: object) -> None:
        raise AssertionError("the cached graph was rebuilt")

    monkeypatch.setattr(backends, "_export_openvino", no_export)
    enc = TransformerEncoder(tiny_model_dir)
    enc.use_backend("openvino")
    assert enc.encode(TINY_SENTENCES[:1]).shape == (1, enc.dim)


GRAPH_FILES = {"onnx": "model.onnx", "openvino": "model.bin"}


def flip_bytes(path: Path) -> None:
    """Flip a stretch of bytes in the middle of ``path``, keeping its size."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def garbage_recorded(path: Path) -> None:
    """Replace the graph by bytes no runtime loads, and record them as the export's own (the checksum holds)."""
    path.write_bytes(b"not a graph" * 100)
    backends.record_export(path.parent)


def unrecorded(path: Path) -> None:
    """Remove the export's record, as an export written by an older xlsent has none."""
    (path.parent / "export.json").unlink()


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
@pytest.mark.parametrize(("damage", "logged"), [
    (flip_bytes, "checksum differs from export.json (corrupt or edited); rebuilding this cached export"),
    (truncate, "bytes, not the"), (garbage_recorded, "the cached export cannot be loaded"),
    (unrecorded, "no readable export.json")], ids=["bytes-flipped", "truncated", "unloadable", "no-record"])
def test_a_damaged_cached_graph_is_logged_and_rebuilt(tiny_model_dir: Path, home: Path, backend: str, damage: object,
                                                      logged: str, caplog: pytest.LogCaptureFixture) -> None:
    ref = TransformerEncoder(tiny_model_dir).encode(TINY_SENTENCES)
    TransformerEncoder(tiny_model_dir).use_backend(backend)
    [graph] = (home / "backends").glob(f"*/{backend}/{GRAPH_FILES[backend]}")
    damage(graph)  # type: ignore[operator]
    enc = TransformerEncoder(tiny_model_dir)
    with caplog.at_level("WARNING", logger="xlsent.encoders.backends"):
        enc.use_backend(backend)
    assert logged in caplog.text and str(graph.parent) in caplog.text
    assert np.sum(enc.encode(TINY_SENTENCES) * ref, axis=1).min() >= 0.9999
    assert backends.export_problem(graph.parent) == ""
    assert sorted(p.name for p in graph.parent.parent.iterdir()) == [backend]  # nothing stale left beside it


def test_unknown_backend_and_non_transformer_are_errors(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        TransformerEncoder(tiny_model_dir).use_backend("tpu")
    toy = LookupEncoder({"a": [1.0, 0.0]})
    monkeypatch.setattr(registry, "_build", lambda _: toy)
    assert load_encoder("toy", "auto") is toy
    with pytest.raises(ValueError, match="transformer models only"):
        load_encoder("toy", "openvino")


def test_auto_follows_the_measured_table(monkeypatch: pytest.MonkeyPatch) -> None:
    table = {"avx2": [{"backend": "onnx-int8", "guard": False}, {"backend": "onnx", "guard": True}],
             "amx": [{"backend": "openvino-int8", "guard": True}]}
    assert backends.backend_choice(table, "avx2")[0] == "onnx"
    assert backends.backend_choice(table, "amx")[0] == "openvino-int8"
    monkeypatch.setattr(backends, "available", lambda name: name in ("torch", "onnx"))
    assert backends.backend_choice({}, "avx512-vnni")[0] == "torch"


def test_auto_reads_the_table_named_by_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "mine.json"
    table.write_text(json.dumps({backends.cpu_class(): [{"backend": "torch", "guard": True}]}))
    monkeypatch.setenv("XLSENT_BACKEND_TABLE", str(table))
    assert backends.auto_backend() == "torch"
    table.write_text("{not json")
    with pytest.raises(backends.BackendError, match="mine.json: not a backend table"):
        backends.auto_backend()
    monkeypatch.setenv("XLSENT_BACKEND_TABLE", str(tmp_path / "missing.json"))
    with pytest.raises(backends.BackendError, match="missing.json: no such backend table"):
        backends.auto_backend()


def test_a_missing_table_is_a_clear_command_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from xlsent.api import load
    from xlsent.cli import main

    load.cache_clear()  # an earlier test's tiny model on `auto` would be reused without reading the table
    (tmp_path / "in.txt").write_text("Hallo.\n", encoding="utf-8")
    monkeypatch.setenv("XLSENT_BACKEND_TABLE", str(tmp_path / "missing.json"))
    assert main(["embed", str(tmp_path / "in.txt"), "-o", str(tmp_path / "o.npy"), "--model",
                 str(tiny_model_dir), "-q"]) == 2
    assert "missing.json: no such backend table ($XLSENT_BACKEND_TABLE)" in capsys.readouterr().err
    assert not (tmp_path / "o.npy").exists()


def test_the_shipped_table_names_a_guarded_backend_for_each_cpu_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XLSENT_BACKEND_TABLE")
    assert backends.table_path() == backends.TABLE
    table = json.loads(backends.TABLE.read_text(encoding="utf-8"))
    for klass, rows in table.items():
        assert {r["backend"] for r in rows} <= set(backends.BACKENDS), klass
        assert any(r["guard"] for r in rows), klass


@pytest.fixture(scope="module")
def untuned(default_encoder: TransformerEncoder) -> tuple[list[str], np.ndarray]:
    """The lines of multiscript.txt that took no part in choosing the backends' floors or the int8 settings
    (``SMOOTH_QUANT_ALPHA``, the float edge layers, the calibration text), and their PyTorch fp32 vectors: those
    were tuned on 50 lines (lines i with i % 7 < 5, the first 50 of them); these are its 54 other lines, in 16
    languages and 14 scripts."""
    lines = (FIXTURES / "multiscript.txt").read_text(encoding="utf-8").splitlines()
    tuned = set([s for i, s in enumerate(lines) if i % 7 < 5][:50])
    sentences = [s for s in lines if s not in tuned]
    assert len(sentences) == 54 and not set(sentences) & set(backends.CALIBRATION.read_text(
        encoding="utf-8").splitlines())
    return sentences, default_encoder.encode(sentences)


@pytest.mark.integration
@pytest.mark.parametrize(("backend", "floor"), [("openvino", 0.9999), ("onnx", 0.9999),
                                                 ("openvino-bf16", 0.998), ("torch-bf16", 0.998), ("onnx-int8", 0.99),
                                                 ("openvino-int8", 0.99)])
def test_backends_on_the_real_model(default_encoder: TransformerEncoder, untuned: tuple[list[str], np.ndarray],
                                    backend: str, floor: float) -> None:
    """Every backend within its floor of PyTorch fp32 (bf16: 0.998, int8: 0.99) on sentences that took no part in
    choosing them (:func:`untuned`)."""
    sentences, ref = untuned
    enc = TransformerEncoder(default_encoder.model_dir, name="me5-small")
    enc.use_backend(backend)
    cos = np.sum(enc.encode(sentences) * ref, axis=1)
    assert cos.min() >= floor, (backend, sentences[int(cos.argmin())], float(cos.min()))


@pytest.mark.integration
def test_openvino_streams_keep_each_row_with_its_sentence(default_encoder: TransformerEncoder) -> None:
    """Small batches keep several OpenVINO requests in flight; every row still belongs to its own sentence."""
    lines = (FIXTURES / "multiscript.txt").read_text(encoding="utf-8").splitlines()[:30]
    ref = default_encoder.encode(lines)
    enc = TransformerEncoder(default_encoder.model_dir, name="me5-small")
    enc.use_backend("openvino")
    cos = np.sum(enc.encode(lines, batch_tokens=48) * ref, axis=1)
    assert cos.min() >= 0.9999, float(cos.min())


def test_a_failed_export_names_its_folder_and_the_free_space(tmp_path: Path) -> None:
    from xlsent.encoders.backends import _build_once

    def full_disk(out: Path) -> None:
        (out / "model.bin").write_bytes(b"partial")
        raise RuntimeError("basic_ios::clear: iostream error")  # what OpenVINO says when the disk is full

    dest = tmp_path / "exports" / "openvino"
    with pytest.raises(RuntimeError, match=r"could not build .*openvino: basic_ios::clear: iostream error \(\d+\.\d "
                                           r"GiB free on its disk.*XLSENT_HOME"):
        _build_once(dest, full_disk)
    assert not dest.exists() and list(dest.parent.iterdir()) == []  # no half-written export is left to be reused
