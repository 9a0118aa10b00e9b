"""Throughput of ``xlsent filter`` (embedding included) against ``xlsent score`` on the same pairs.

``--pairs`` de-en pairs (default 100k): the filtered de-en bitext of ``xlsent.data.bitext`` (Multi30k train,
newstest, Tatoeba-Challenge), then, to reach ``--pairs``, sources paired with the targets of other rows (misaligned
noise). Both runs start from an empty work folder and read the same TSV; the row is filter pairs/s against score
pairs/s measured in the same run (the filter's rule filters, language ID and writing on top of the margins), with
the share of pairs kept. Written to ``<--out>/filter.json`` for ``xlsent report``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import DEFAULT_OUT, OUT_HELP, BenchRow, load_model, start_record, timed  # noqa: E402

import xlsent.api as api  # noqa: E402
from xlsent.arg_types import positive_int  # noqa: E402
from xlsent.data.bitext import pair_bitext  # noqa: E402
from xlsent.data.text_input import InputSpec  # noqa: E402
from xlsent.inference import CHOICES  # noqa: E402

PACKAGES = ("numpy", "torch", "openvino", "faiss-cpu", "py3langid")


def bench_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` de-en pairs: the real ones first, then sources with the targets of other rows."""
    bitext = pair_bitext("de-en")
    src, tgt = list(bitext.src[:n]), list(bitext.tgt[:n])
    rng = np.random.default_rng(seed)
    while len(src) < n:
        rows = rng.permutation(len(bitext.src))[: n - len(src)]
        src += [bitext.src[i] for i in rows]
        tgt += [bitext.tgt[(i + 1 + int(rng.integers(len(bitext.tgt) - 1))) % len(bitext.tgt)] for i in rows]
    return src, tgt


def build_parser() -> argparse.ArgumentParser:
    """The bench's options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=positive_int, default=100_000, help="pairs filtered (default 100000)")
    parser.add_argument("--model", default="me5-small", help="encoder (default me5-small)")
    parser.add_argument("--backend", default="auto", choices=CHOICES, help="its backend (default auto)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    encoder = load_model(parser, args.model, args.backend)  # loaded (its graph compiled) before either clock starts
    record = start_record("filter", "xlsent filter: pairs per second, embedding included, against xlsent score",
                          __file__, argv, args, PACKAGES)
    src, tgt = bench_pairs(args.pairs)
    with tempfile.TemporaryDirectory() as tmp:
        pairs = Path(tmp) / "pairs.tsv"
        pairs.write_text("".join(f"{s}\t{t}\n" for s, t in zip(src, tgt, strict=True)), encoding="utf-8")
        sides = [InputSpec(pairs, format="tsv", column=c, header=False) for c in ("0", "1")]
        start = time.perf_counter()
        api.score(*sides, Path(tmp) / "scored.tsv", model=args.model, backend=args.backend, progress=False)
        score_rate = len(src) / (time.perf_counter() - start)
        start = time.perf_counter()
        summary = api.filter(*sides, Path(tmp) / "kept.tsv", model=args.model, backend=args.backend,
                             src_lang="de", tgt_lang="en", progress=False)
        filter_rate = len(src) / (time.perf_counter() - start)
    kept = summary.counts.get("kept", 0) / len(src)
    record.rows.append(BenchRow(f"{len(src)} de-en pairs, {args.model}", "pairs/s", filter_rate, score_rate,
                                "xlsent score, same pairs", details={"kept share": kept}, **timed(encoder)))
    record.notes.append(f"dropped per reason: {summary.counts}")
    print(f"xlsent filter: {filter_rate:.1f} pairs/s; xlsent score: {score_rate:.1f} pairs/s "
          f"(ratio {filter_rate / score_rate:.2f}); kept {kept:.1%}")
    print(f"wrote {record.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
