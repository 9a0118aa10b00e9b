"""Document alignment speed (``xlsent align``): seconds to align document pairs of 1k, 10k and 100k lines a side,
embedding included (the default encoder over every span of up to ``max_beads - 1`` lines) and the dynamic
programme alone, with the memory the programme's band takes and the process's peak RSS.

The documents are NTREX-128 English and German news lines, repeated to the size asked (numbered so no two lines
are alike) and perturbed as the alignment dev sets are (lines merged, split, dropped, inserted). Sizes above
``--embed-max`` lines are aligned on planted embeddings (a target's span = its source's plus noise) so the
programme can be timed at sizes whose embedding would take hours on a small machine; the row says which.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_record import DEFAULT_OUT, OUT_HELP, BenchRecord, BenchRow, start_record, timed  # noqa: E402

PACKAGES = ("numpy", "numba", "torch")


def documents(lines: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``lines`` parallel news lines a side (NTREX eng/deu repeated and numbered), perturbed."""
    from xlsent.data.doc_perturb import Perturbation, perturb
    from xlsent.data.parallel import load_ntrex

    en, de = load_ntrex("eng", "deu")
    src = [f"{en[i % len(en)]} ({i // len(en)})" for i in range(lines)]
    tgt = [f"{de[i % len(de)]} ({i // len(de)})" for i in range(lines)]
    return perturb(src, tgt, en[:100], de[:100], Perturbation(), seed)[:2]


def planted(n: int, m: int, overlaps: int, dim: int = 384, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Span embeddings of ``n`` and ``m`` lines where target span ``s`` is source span ``s * n // m`` plus noise."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((overlaps, n, dim)).astype(np.float32)
    y = x[:, (np.arange(m) * n // m)] + 0.7 * rng.standard_normal((overlaps, m, dim)).astype(np.float32)
    for v in (x, y):
        v /= np.linalg.norm(v, axis=2, keepdims=True)
    return x, y


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def case_row(lines: int, embed_max: int, model: str) -> BenchRow:
    """Align one document pair of ``lines`` lines a side; the DP's seconds against the embedding's."""
    from xlsent.align.aligner import Doc, align_spans, search_band
    from xlsent.align.config import AlignConfig
    from xlsent.align.overlaps import embed_spans
    from xlsent.api import load

    cfg = AlignConfig()
    src_lines, tgt_lines = documents(lines)
    src, tgt = Doc.of(src_lines, cfg.overlaps), Doc.of(tgt_lines, cfg.overlaps)
    embed_s, recorded = None, {}
    if lines <= embed_max:
        encoder = load(model)
        start = time.perf_counter()
        (x,), (y,) = (embed_spans(lambda t, lang: encoder.encode(t, lang), [d.texts], [d.ok], lang)
                      for d, lang in ((src, "en"), (tgt, "de")))
        embed_s, recorded = time.perf_counter() - start, timed(encoder)
    else:
        x, y = planted(len(src.ids), len(tgt.ids), cfg.overlaps)
    start = time.perf_counter()
    beads = align_spans(src, tgt, x, y, cfg)
    dp_s = time.perf_counter() - start
    cells = search_band(x[0], y[0], cfg).cells
    band_bytes = cells * (4 * len(cfg.bead_types()) + 8 + 1)  # bead costs (float32), totals (float64), moves (int8)
    print(f"  {lines} lines: DP {dp_s:.2f}s, embedding {embed_s if embed_s is not None else 'not run'}", flush=True)
    return BenchRow(f"align {lines} x {lines} lines: dynamic programme" + ("" if embed_s else " (planted embeddings)"),
                    "s", round(dp_s, 3), None if embed_s is None else round(embed_s, 2),
                    f"embedding the spans of both documents ({model})" if embed_s else "",
                    checks={"every line in one bead": sum(len(b.src) for b in beads) == len(src_lines)
                            and sum(len(b.tgt) for b in beads) == len(tgt_lines)},
                    details={"source lines": len(src_lines), "target lines": len(tgt_lines),
                             "band cells": cells, "band MiB": round(band_bytes / 2**20, 1),
                             "cells per line": round(cells / len(src_lines), 1),
                             "peak RSS GiB": round(peak_rss_gib(), 2),
                             **({"total s (embedding + DP)": round(embed_s + dp_s, 2)} if embed_s else {})},
                    **recorded)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000],
                        help="lines a side of each case (default 1000 10000 100000)")
    parser.add_argument("--embed-max", type=int, default=100_000,
                        help="embed documents up to this many lines; larger ones use planted embeddings (default "
                        "100000: every default size is embedded)")
    parser.add_argument("--model", default="me5-small", help="encoder (default me5-small)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    record: BenchRecord = start_record("align", "Document alignment: the dynamic programme against embedding",
                                       __file__, argv, args, PACKAGES)
    from xlsent.align.aligner import align_texts

    align_texts(["warm"], ["up"], lambda t, lang: np.ones((len(t), 4), dtype=np.float32) / 2)  # numba compiles
    record.rows += [case_row(n, args.embed_max, args.model) for n in args.sizes]
    record.notes += ["ours = the dynamic programme's seconds (band search on halved documents, normalisers, bead "
                     "costs, the programme and its read-back); baseline = embedding every span of both documents "
                     "(ratio below 1: the programme takes less time than the embedding)",
                     "band MiB: the programme's arrays (bead costs, totals, moves) over the band's cells; the span "
                     "embeddings themselves take overlaps x lines x dim x 4 bytes a side"]
    print(f"wrote {record.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
