"""Batch invariance of each backend: how far one sentence's vector moves with the other sentences in its batch.

Per backend of ``--model``: ``--sentences`` sentences (Tatoeba and newstest lines in turn, short and long mixed, so
padded lengths differ between batchings) encoded in one call against the same encoded ``--chunk-rows`` at a time
(other neighbours, other padded lengths) and against the first ``--alone`` encoded one at a time (no padding).
ours = the largest absolute difference of a vector component over both; the check is the backend's bound in
:mod:`xlsent.encoders.batch_invariance` (1e-5 on fp32 backends). Written to ``<--out>/invariance.json`` for
``xlsent report``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import DEFAULT_OUT, OUT_HELP, BenchRow, load_model, start_record, timed  # noqa: E402
from embed_bench import bench_sentences, news_sentences  # noqa: E402

from xlsent.arg_types import positive_int  # noqa: E402

PACKAGES = ("numpy", "torch", "onnxruntime", "openvino", "nncf")


def sentences(n: int) -> tuple[list[str], str]:
    """``n`` sentences, Tatoeba and newstest lines in turn (Tatoeba alone without the benchmark data)."""
    short, source = bench_sentences(n)
    news = news_sentences(n)
    if news is None:
        return short, source
    mixed = [s for pair in zip(short, news[0], strict=False) for s in pair][:n]
    return mixed, f"{source}; {news[1]}"


def measure(model: str, backend: str, texts: list[str], chunk_rows: int, alone: int) -> BenchRow:
    """The row of ``backend``: the larger difference of the chunked and the one-at-a-time batchings."""
    from xlsent.encoders.batch_invariance import batch_difference, tolerance
    from xlsent.encoders.registry import load_encoder

    encoder = load_encoder(model, backend)
    chunked = batch_difference(encoder, texts, chunk_rows)
    single = batch_difference(encoder, texts[:alone], 1)
    worst, bound = max(chunked, single), tolerance(backend)
    return BenchRow(backend, "max abs difference", worst, checks={f"within the bound {bound:g}": worst <= bound},
                    details={f"chunks of {chunk_rows}": chunked, "one at a time": single}, **timed(encoder))


def build_parser() -> argparse.ArgumentParser:
    from xlsent.inference import BACKENDS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="me5-small", help="model (default %(default)s)")
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS,
                        help="backends to measure (default: all)")
    parser.add_argument("--sentences", type=positive_int, default=600, help="sentences (default %(default)s)")
    parser.add_argument("--chunk-rows", type=positive_int, default=100, help="rows per call of the chunked batching "
                        "(default %(default)s)")
    parser.add_argument("--alone", type=positive_int, default=50, help="sentences also encoded one at a time "
                        "(default %(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from xlsent.encoders.backends import available

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    load_model(parser, args.model, "torch")  # a model that does not load: an error now, before any backend's turn
    record = start_record("invariance", "Batch invariance: a vector against its batch neighbours, per backend",
                          __file__, argv, args, PACKAGES)
    texts, source = sentences(args.sentences)
    for backend in args.backends:
        if not available(backend):
            print(f"{backend}: its runtime is not installed; skipped")
            continue
        row = measure(args.model, backend, texts, args.chunk_rows, args.alone)
        record.rows.append(row)
        print(f"{backend}: max abs difference {row.ours:.2e} ({row.details})")
    record.notes += [f"Inputs: {len(texts)} sentences ({source}), encoded in one call, in calls of "
                     f"{args.chunk_rows}, and the first {args.alone} one at a time; a row is the largest absolute "
                     "difference of any vector component between the one call and either other batching.",
                     "Bounds: xlsent.encoders.batch_invariance (fp32 backends 1e-5; bf16 and int8 backends round "
                     "their matrix work, and which rows and padded lengths share a product changes the rounding)."]
    print(f"wrote {record.write(args.out)}")
    return 0 if all(all(row.checks.values()) for row in record.rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
