"""Inference backends for transformer encoders: PyTorch, ONNX Runtime and OpenVINO, fp32 or int8.

A backend runs one graph, ``(input_ids, attention_mask) -> per-sentence sums of the last layer's token states``
(mean pooling is the sum over the mask divided by the token count, which the encoder knows), so every backend
plugs into the same token-budget batching. Exported graphs are written once under
``$XLSENT_HOME/backends/<model checksum>/<backend>/``, with the size and SHA-256 of each file
(:mod:`xlsent.encoders.export_record`), and reused while they match: an export whose files differ from their record
(edited, truncated, partial, or built by an older xlsent without one), or that its runtime cannot load, is logged
and rebuilt, never run.

- ``torch``: the model as it is, fp32. ``torch-bf16``: the same under bf16 autocast (lossy: part of the id).
- ``onnx``: ONNX Runtime, all graph optimizations. ``onnx-int8``: dynamic int8 of the MatMul weights (per channel;
  ``reduce_range`` on CPUs without VNNI, where u8 x s8 products saturate).
- ``openvino``: OpenVINO in fp32 on every CPU (its bf16 default on AMX CPUs is about 1e-4 off PyTorch fp32).
  ``openvino-bf16``: the same graph with bf16 matrix work where the CPU has it (AMX, AVX512-BF16; fp32 elsewhere);
  lossy, so part of the encoder id.
  ``openvino-int8``: static int8 (NNCF), calibrated on ``calibration.txt`` (news sentences in 16 languages and
  14 scripts from NTREX-128, CC BY-SA 4.0; never English alone).
- ``auto``: the fastest backend that held the accuracy guard on this kind of CPU in the measured table
  ``backend_table.json`` (or ``$XLSENT_BACKEND_TABLE``; see ``backend_choice``); where the table has no row for this
  CPU class, what a one-minute measurement on the model found fastest within the guard, made on first use and kept
  (:mod:`xlsent.encoders.backend_probe`); OpenVINO fp32 where measuring is turned off.

>>> sorted(BACKENDS)
['onnx', 'onnx-int8', 'openvino', 'openvino-bf16', 'openvino-int8', 'torch', 'torch-bf16']
>>> cpu_class(frozenset({"avx2", "avx512_vnni"})), cpu_class(frozenset({"avx2", "avx512_vnni", "avx512_bf16"}))
('avx512-vnni', 'avx512-bf16')
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlsent.encoders.batching import pad_batch
from xlsent.encoders.export_record import export_problem, record_export
from xlsent.encoders.transformer_model import TransformerModel
from xlsent.inference import BACKENDS, CHOICES
from xlsent.machine_measures import measure_once, measuring_enabled
from xlsent.paths import xlsent_home

log = logging.getLogger(__name__)

CALIBRATION = Path(__file__).with_name("calibration.txt")
TABLE = Path(__file__).with_name("backend_table.json")  # written by ``make bench`` (benchmarks/backend_bench.py)
TABLE_ENV = "XLSENT_BACKEND_TABLE"
CALIBRATION_BATCH = 8
OPSET = 17
RUNTIMES = {"onnx": "onnxruntime", "openvino": "openvino"}
"""Backend family -> the package that runs it."""
OPENVINO_FLOAT_EDGE = 2
"""Transformer layers at each end that OpenVINO's static int8 keeps in float (part of its export folder's name)."""
TABLE_ARCHITECTURES = frozenset({"xlm-roberta"})
"""The architectures (Hugging Face ``model_type``) whose accuracy the measured table's guard checked: me5-small's."""
OPENVINO_SHAPE_CACHE = 500
"""Input shapes whose compiled kernels OpenVINO keeps. Its default, 5000, let a process encoding requests of 1-16
sentences (as ``xlsent serve`` does) grow by 760 MiB over 3000 calls, still growing at the end; with 500 it levelled
off after about 900 calls, 280 MiB above the start, at the same speed (me5-small, openvino-bf16, AMX)."""
SMOOTH_QUANT_ALPHA = 0.5  # static int8: 0.5 (NNCF: 0.95 for transformers) lifted the worst cosine to above 0.99

Runner = Callable[[Iterable[tuple[np.ndarray, np.ndarray]]], Iterator[np.ndarray]]
"""Batches ``(ids, mask)``, int64 ``(batch, tokens)``, -> per batch, in order, ``(batch, dim)`` float32 sums of the
last layer's token states. A runner may work on several batches at once (OpenVINO's streams)."""


class BackendError(ValueError):
    """A backend cannot run here (its package is missing, or the model type has no such graph)."""


def cpu_flags() -> frozenset[str]:
    """The CPU feature flags of ``/proc/cpuinfo`` (empty where there is no such file)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


NATIVE_BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})
"""CPU flags of bf16 matrix instructions; without them PyTorch emulates bf16 (a training step of the default encoder
took 15x as long as in fp32 on an AVX2-only EPYC) or has no kernel at all (oneDNN's bf16 LSTM)."""


VNNI_CLASSES = ("amx", "avx512-bf16", "avx512-vnni")
"""CPU classes with int8 dot products (VNNI), where int8 quantization needs no reduced range."""


def native_bf16(flags: frozenset[str] | None = None) -> bool:
    """Whether this CPU (or one with ``flags``) has native bf16 matrix instructions (AMX or AVX512-BF16).

    >>> native_bf16(frozenset({"avx2", "avx512_bf16"})), native_bf16(frozenset({"avx2", "fma"}))
    (True, False)
    """
    return bool(NATIVE_BF16_FLAGS & (cpu_flags() if flags is None else flags))


def cpu_class(flags: frozenset[str] | None = None) -> str:
    """The matrix-instruction class of a CPU: ``amx``, ``avx512-bf16`` (native bf16 products without AMX: AMD Zen 4,
    Intel Cooper Lake), ``avx512-vnni`` (int8 dot products, bf16 emulated: Cascade Lake, Ice Lake), ``avx2`` or
    ``other``. The measured tables keep one row per class: bf16 is the fastest choice on the first two and a slow one
    on the others."""
    flags = cpu_flags() if flags is None else flags
    if "amx_bf16" in flags:
        return "amx"
    if "avx512_bf16" in flags:
        return "avx512-bf16"
    if "avx512_vnni" in flags:
        return "avx512-vnni"
    return "avx2" if "avx2" in flags else "other"


def physical_cores() -> int:
    """Physical cores this process may use (logical CPUs of the affinity mask, halved when SMT siblings share a
    core)."""
    logical = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return logical
    siblings = cores = 0
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "siblings":
            siblings = int(value)
        elif key.strip() == "cpu cores":
            cores = int(value)
    smt = siblings // cores if cores and siblings >= cores else 1
    return max(1, logical // max(smt, 1))


class PooledSums(torch.nn.Module):
    """The graph every backend runs: sums of the last layer's token states under the attention mask, or, with
    ``layer_weights`` (one per layer, embeddings first), of their weighted mix over every layer (dual-pivot's
    layer mix); with a ``head`` (``(states, mask) -> (batch, dim)``, e.g. a sentence-transformers folder's pooling
    and dense layers), the head's vectors instead of the sums."""

    def __init__(self, model: TransformerModel, layer_weights: np.ndarray | None = None,
                 head: torch.nn.Module | None = None) -> None:
        super().__init__()
        self.model = model
        self.head = head
        self.mix = None if layer_weights is None else torch.nn.Parameter(
            torch.as_tensor(np.asarray(layer_weights, dtype=np.float32)), requires_grad=False)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        if self.mix is None:
            states = self.model(input_ids, attention_mask)[0]
        else:
            layers = torch.stack(self.model(input_ids, attention_mask, all_layers=True))
            states = (layers * self.mix.view(-1, 1, 1, 1)).sum(dim=0)
        if self.head is not None:
            out: torch.Tensor = self.head(states, attention_mask)
            return out
        return (states * attention_mask.unsqueeze(-1).to(states.dtype)).sum(dim=1)


def mix_key(checksum: str, layer_weights: np.ndarray | None) -> str:
    """The export key of a model's graph: its checksum, and a digest of the layer mix where it has one."""
    if layer_weights is None:
        return checksum
    digest = hashlib.sha256(np.ascontiguousarray(layer_weights, dtype=np.float32).tobytes()).hexdigest()[:16]
    return f"{checksum}-mix-{digest}"


def torch_runner(model: TransformerModel, layer_weights: np.ndarray | None = None, *, bf16: bool = False,
                 head: torch.nn.Module | None = None) -> Runner:
    """The model itself under ``torch.inference_mode``: fp32 weights, matrix work in fp32 or, with ``bf16``, under
    bf16 autocast."""
    graph = PooledSums(model, layer_weights, head).eval()

    def run(batches: Iterable[tuple[np.ndarray, np.ndarray]]) -> Iterator[np.ndarray]:
        for ids, mask in batches:
            with torch.inference_mode(), torch.autocast("cpu", torch.bfloat16, enabled=bf16):
                out: np.ndarray = graph(torch.from_numpy(ids), torch.from_numpy(mask)).float().numpy()
            yield out

    return run


def _example_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.tensor([[0, 5, 6, 2], [0, 7, 2, 1]], dtype=torch.long)
    return ids, (ids != 1).long()


def _build_once(dest: Path, build: Callable[[Path], None]) -> Path:
    """Build ``dest`` (a folder) in a temporary sibling, record its files' checksums and rename it into place; reuse
    it when it exists and its files match the record, else (logged) discard and rebuild it."""
    if dest.is_dir():
        problem = export_problem(dest)
        if not problem:
            return dest
        log.warning("%s: %s; rebuilding this cached export", dest, problem)
        _discard(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        try:
            build(tmp)
            record_export(tmp)
        except (OSError, RuntimeError) as e:  # a full disk surfaces as e.g. "basic_ios::clear: iostream error"
            free = shutil.disk_usage(dest.parent).free / 2**30
            raise RuntimeError(f"could not build {dest}: {e} ({free:.1f} GiB free on its disk; an export needs a few "
                               "times the model's size: free some space, or point XLSENT_HOME at a disk with room)"
                               ) from e
        try:
            tmp.rename(dest)
        except OSError:  # another process built it first
            if not dest.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _discard(dest: Path) -> None:
    """Remove the export folder ``dest``: renamed aside first (so no other process loads it half-deleted), then
    deleted; one that another process removed already is fine."""
    aside = Path(tempfile.mkdtemp(prefix=f".{dest.name}.stale.", dir=dest.parent))
    try:
        dest.rename(aside / dest.name)
    except FileNotFoundError:
        pass
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def _load_export(dest: Path, build: Callable[[Path], None], load: Callable[[Path], Runner]) -> Runner:
    """``load`` of the export ``dest``, built once (:func:`_build_once`); an export that its runtime cannot load is
    logged, rebuilt and loaded again, and one freshly built that still cannot load is a RuntimeError naming it."""
    folder = _build_once(dest, build)
    try:
        return load(folder)
    except Exception as exc:  # ONNX Runtime and OpenVINO raise their own types (InvalidProtobuf, RuntimeError, ...)
        log.warning("%s: the cached export cannot be loaded (%s); rebuilding it", dest, _first_line(exc))
    _discard(dest)
    folder = _build_once(dest, build)
    try:
        return load(folder)
    except Exception as exc:  # as above
        raise RuntimeError(f"{dest}: a freshly built export cannot be loaded ({_first_line(exc)}); run with "
                           "--backend torch, and report this") from exc


def _first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (runtimes' messages run to many lines), with its type."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def calibration_sentences() -> list[str]:
    """The shipped multilingual calibration text for static int8 (one sentence a line)."""
    return [s for s in CALIBRATION.read_text(encoding="utf-8").splitlines() if s.strip()]


def _export_onnx(graph: PooledSums, out: Path) -> None:
    torch.onnx.export(graph.eval(), _example_inputs(), str(out / "model.onnx"),
                      input_names=["input_ids", "attention_mask"], output_names=["sums"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                                    "sums": {0: "batch"}},
                      opset_version=OPSET, dynamo=False)


def _edge_layers(model: TransformerModel, per_end: int = 1) -> tuple[int, ...]:
    """The first and last ``per_end`` transformer layers: int8 keeps them in float (their activations have the
    widest range). One per end lifted both int8 backends' worst cosine on the 50-sentence, 14-script check above
    0.99 on AVX2; OpenVINO's static int8 needs two per end on AMX CPUs (0.989 with one, 0.992 with two)."""
    last = model.config.num_hidden_layers - 1
    return tuple(sorted({*range(per_end), *range(last - per_end + 1, last + 1)}))


def _quantize_onnx(fp32: Path, out: Path, model: TransformerModel, reduce_range: bool) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(fp32 / "model.onnx"), load_external_data=False).graph
    edges = tuple(f"/layer.{i}/" for i in _edge_layers(model))
    keep_float = [n.name for n in graph.node if n.op_type == "MatMul" and any(e in n.name for e in edges)]
    root = logging.getLogger()
    quiet = _QuantizerAdvice()
    root.addFilter(quiet)
    try:
        quantize_dynamic(str(fp32 / "model.onnx"), str(out / "model.onnx"), weight_type=QuantType.QInt8,
                         per_channel=True, reduce_range=reduce_range, op_types_to_quantize=["MatMul"],
                         nodes_to_exclude=keep_float)
    finally:
        root.removeFilter(quiet)


class _QuantizerAdvice(logging.Filter):
    """Drops onnxruntime's advice to pre-process the graph before quantizing, which it logs on the *root* logger on
    every export (a user saw ``WARNING root: Please consider to run pre-processing ...`` on the first ``auto``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "root" and "pre-processing before quantization" in record.getMessage())


def _export_openvino(graph: PooledSums, out: Path) -> None:
    import openvino as ov

    converted = ov.convert_model(graph.eval(), example_input=_example_inputs())
    ov.save_model(converted, str(out / "model.xml"), compress_to_fp16=False)


def _quantize_openvino(fp32: Path, out: Path, model: TransformerModel,
                       tokenize: Callable[[list[str]], list[list[int]]], pad: int) -> None:
    import nncf
    import openvino as ov
    from nncf.quantization.advanced_parameters import AdvancedQuantizationParameters, AdvancedSmoothQuantParameters

    seqs = tokenize(calibration_sentences())
    batches = []
    for start in range(0, len(seqs), CALIBRATION_BATCH):
        ids, mask = pad_batch(seqs[start : start + CALIBRATION_BATCH], pad)
        batches.append((ids.numpy(), mask.numpy()))
    graph = ov.Core().read_model(str(fp32 / "model.xml"))
    edges = [rf".*\.layer\.{i}\..*" for i in _edge_layers(model, OPENVINO_FLOAT_EDGE)]
    quantized = nncf.quantize(
        graph, nncf.Dataset(batches), model_type=nncf.ModelType.TRANSFORMER, subset_size=len(batches),
        preset=nncf.QuantizationPreset.MIXED, ignored_scope=nncf.IgnoredScope(patterns=edges, validate=False),
        advanced_parameters=AdvancedQuantizationParameters(
            smooth_quant_alphas=AdvancedSmoothQuantParameters(matmul=SMOOTH_QUANT_ALPHA)))
    ov.save_model(quantized, str(out / "model.xml"))


def _onnx_runner(path: Path, threads: int) -> Runner:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path / "model.onnx"), options, providers=["CPUExecutionProvider"])

    def run(batches: Iterable[tuple[np.ndarray, np.ndarray]]) -> Iterator[np.ndarray]:
        for ids, mask in batches:
            out: np.ndarray = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            yield out

    return run


def _openvino_runner(path: Path, threads: int, precision: str = "f32") -> Runner:
    """OpenVINO with one stream per thread: as many batches in flight as there are cores (a 2-core AMX machine
    encoded Tatoeba text 1.4x faster than with one stream on both cores; small batches do not keep two cores
    busy)."""
    import openvino as ov

    compiled = ov.Core().compile_model(str(path / "model.xml"), "CPU",
                                       {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": threads,
                                        "INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": precision,
                                        "CPU_RUNTIME_CACHE_CAPACITY": OPENVINO_SHAPE_CACHE})

    def finish(request: Any) -> np.ndarray:
        request.wait()
        return np.array(request.get_output_tensor(0).data, dtype=np.float32)

    def run(batches: Iterable[tuple[np.ndarray, np.ndarray]]) -> Iterator[np.ndarray]:
        requests = [compiled.create_infer_request() for _ in range(threads)]  # per call: calls may overlap
        pending: deque[Any] = deque()
        for k, (ids, mask) in enumerate(batches):
            if len(pending) == len(requests):
                yield finish(pending.popleft())  # the oldest batch holds request k % len(requests)
            request = requests[k % len(requests)]
            request.start_async([ids, mask])
            pending.append(request)
        while pending:
            yield finish(pending.popleft())

    return run


def backend_dir(checksum: str, backend: str) -> Path:
    """Where the exported graph of ``backend`` for the model with ``checksum`` is kept."""
    return xlsent_home() / "backends" / checksum / backend


def build_runner(backend: str, model: TransformerModel, checksum: str, *,
                 tokenize: Callable[[list[str]], list[list[int]]], pad: int, threads: int | None = None,
                 layer_weights: np.ndarray | None = None, head: torch.nn.Module | None = None) -> Runner:
    """A runner of ``backend`` for ``model`` (pooling the last layer, or the ``layer_weights`` mix of every layer;
    with ``head``, its vectors: see :class:`PooledSums`), exporting (once per model checksum and mix) what it needs;
    ``checksum`` covers the head's weights where there is one.

    ``tokenize`` turns sentences into full model inputs (specials included) for int8 calibration.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(CHOICES)}")
    threads = threads or physical_cores()
    if backend.startswith("torch"):
        return torch_runner(model, layer_weights, bf16=backend == "torch-bf16", head=head)
    graph = PooledSums(model, layer_weights, head)
    checksum = mix_key(checksum, layer_weights)
    if not available(backend):
        package = RUNTIMES[backend.split("-")[0]]
        raise BackendError(f"backend {backend!r} needs the {package} package (pip install {package})")
    if backend.startswith("onnx"):
        fp32_dir = backend_dir(checksum, "onnx")
        export_onnx = partial(_export_onnx, graph)
        if backend == "onnx":
            return _load_export(fp32_dir, export_onnx, partial(_onnx_runner, threads=threads))
        reduce_range = cpu_class() not in VNNI_CLASSES
        name = "onnx-int8-reduce-range" if reduce_range else "onnx-int8"
        return _load_export(
            backend_dir(checksum, name),
            lambda out: _quantize_onnx(_build_once(fp32_dir, export_onnx), out, model, reduce_range),
            partial(_onnx_runner, threads=threads))
    fp32_dir = backend_dir(checksum, "openvino")
    export_openvino = partial(_export_openvino, graph)
    if backend in ("openvino", "openvino-bf16"):
        precision = "bf16" if backend == "openvino-bf16" else "f32"
        return _load_export(fp32_dir, export_openvino, partial(_openvino_runner, threads=threads, precision=precision))
    name = f"{backend}-edge{OPENVINO_FLOAT_EDGE}"
    return _load_export(
        backend_dir(checksum, name),
        lambda out: _quantize_openvino(_build_once(fp32_dir, export_openvino), out, model, tokenize, pad),
        partial(_openvino_runner, threads=threads))


def available(backend: str) -> bool:
    """Whether ``backend``'s runtime package is installed."""
    package = RUNTIMES.get(backend.split("-")[0])
    if package is None:
        return True
    try:
        __import__(package)
    except ImportError:
        return False
    return True


def table_key(klass: str, family: str = "") -> str:
    """The backend table's key for models of ``family`` on CPUs of ``klass``: the class alone for transformers
    (``family`` ""), ``family:class`` for another family (``laser:amx``).

    >>> table_key("amx"), table_key("amx", "laser")
    ('amx', 'laser:amx')
    """
    return f"{family}:{klass}" if family else klass


def backend_choice(table: dict[str, Any], klass: str | None = None, family: str = "",
                   source: str = "measured table: docs/results.md") -> tuple[str, str]:
    """``auto``'s choice for models of ``family`` ("" for transformers, ``laser``) on a CPU of ``klass`` (default:
    this one) and the reason, from the measured ``table`` (whose origin ``source`` names).

    ``table[table_key(klass, family)]`` lists backends fastest first with whether each held the accuracy guard; the
    first that held and is installed wins. A CPU class that was never measured gets the lossless default: OpenVINO
    fp32 for transformers when installed, else PyTorch fp32.

    >>> t = {"avx2": [{"backend": "onnx-int8", "guard": False}, {"backend": "openvino", "guard": True}]}
    >>> backend_choice(t, "avx2")[0], backend_choice(t, "avx2", "laser")[0]
    ('openvino', 'torch')
    """
    klass = klass or cpu_class()
    key = table_key(klass, family)
    for row in table.get(key, []):
        if row.get("guard") and available(row["backend"]):
            return row["backend"], (f"fastest backend that held the accuracy guard on {klass} CPUs"
                                    f"{f' for {family} models' if family else ''} ({source})")
    if not family and available("openvino"):
        return "openvino", (f"no measured row for {klass} CPUs; openvino (fp32) agrees with torch at min "
                            "cosine 0.9999")
    return "torch", f"no measured row for {key} and no lossless alternative installed; torch (fp32)"


def table_path() -> Path:
    """The measured table ``auto`` reads: ``$XLSENT_BACKEND_TABLE`` (e.g. one that ``backend_bench.py --table``
    measured on your own machine) or the shipped one."""
    env = os.environ.get(TABLE_ENV)
    return Path(env) if env else TABLE


def check_table(path: Path, table: Any) -> None:
    """Raise :class:`BackendError` naming ``path`` and the field unless ``table`` has the shape of a measured backend
    table: an object mapping each CPU class to a list of objects with a string ``backend`` and a boolean ``guard``.

    >>> check_table(Path("t.json"), {"avx2": [{"backend": "openvino"}]})
    Traceback (most recent call last):
    ...
    xlsent.encoders.backends.BackendError: t.json: not a backend table: avx2[0].guard is missing, not true or \
false; write it again with benchmarks/backend_bench.py --table t.json, or unset XLSENT_BACKEND_TABLE
    """
    problem = _table_problem(table)
    if problem:
        raise BackendError(f"{path}: not a backend table: {problem}; write it again with benchmarks/backend_bench.py "
                           f"--table {path}, or unset {TABLE_ENV}")


def _table_problem(table: Any) -> str:
    """What makes ``table`` no measured backend table (the field and its value), or ``""``."""
    if not isinstance(table, dict):
        return f"the file holds a JSON {type(table).__name__}, not an object"
    for klass, rows in table.items():
        if not isinstance(rows, list):
            return f"{klass} is {rows!r}, not a list of measured backends"
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                return f"{klass}[{i}] is {row!r}, not an object"
            for field, kind, what in (("backend", str, "a backend name"), ("guard", bool, "true or false")):
                if not isinstance(row.get(field), kind):
                    return f"{klass}[{i}].{field} is {repr(row[field]) if field in row else 'missing'}, not {what}"
    return ""


@dataclass(frozen=True)
class Measurement:
    """How ``auto`` measures the backends of one model on this machine when no table row holds for it: the entry
    that keys the result in :mod:`xlsent.machine_measures` and the function that measures (``{"rows": [...]}``,
    rows as the table's)."""

    entry: str
    run: Callable[[], dict[str, Any]]


def shipped_backend_table() -> dict[str, Any]:
    """The measured table ``auto`` reads (:func:`table_path`), checked."""
    path = table_path()
    if not path.is_file():
        raise BackendError(f"{path}: no such backend table (${TABLE_ENV}); measure one with "
                           f"benchmarks/backend_bench.py --table {path}, or unset {TABLE_ENV}")
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackendError(f"{path}: not a backend table ({exc}); write it again with "
                           "benchmarks/backend_bench.py") from exc
    check_table(path, table)
    return dict(table)


def auto_backend(family: str = "", measure: Measurement | None = None, *, use_table: bool = True) -> str:
    """``auto``'s backend on this CPU for models of ``family`` ("" for transformers, ``laser``): the measured
    table's row for this CPU class (unless not ``use_table``); where there is none, the result of ``measure`` on
    this machine (kept from an earlier run, else measured now, unless ``$XLSENT_AUTO_MEASURE`` is 0); else the
    lossless default. The choice and the reason are logged."""
    klass = cpu_class()
    key = table_key(klass, family)
    table = shipped_backend_table() if use_table else {}
    source = "measured table: docs/results.md"
    if key not in table and measure is not None and measuring_enabled():
        record, path = measure_once(klass, measure.entry, measure.run, f"backend auto: no measured row for {key} "
                                    "CPUs; measuring this model's backends once (a minute at most)")
        table = {key: record.get("rows")}
        check_table(path, table)
        source = f"measured on this machine on {record.get('date', 'first use')}: {path}"
    backend, reason = backend_choice(table, klass, family, source)
    log.info("backend auto -> %s: %s", backend, reason)
    return backend
