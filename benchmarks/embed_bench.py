"""Encoding throughput of xlsent's default encoder against sentence-transformers on the same sentences.

Both run the same weights (ours exported with ``xlsent export --sentence-transformers``) on the same
2000 Tatoeba sentences (German, French, then English; the shipped example when the benchmark data is absent,
repeated up to ``--sentences``) in the same process; each rate is the best of ``--repeats`` timed runs after
one warm-up. The ratio is ours / theirs in sentences per second (above 1: ours is faster); the check is the
minimum cosine between the two encoders' vectors of the same sentence. The figures are printed and written
to ``<--out>/embed.json`` for ``xlsent report``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import DEFAULT_OUT, OUT_HELP, BenchRecord, BenchRow, start_record  # noqa: E402

from xlsent.paths import data_root  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PACKAGES = ("numpy", "torch", "faiss-cpu", "sentence-transformers", "transformers")
BASELINE = "sentence-transformers encode(batch_size=32), same weights"


def bench_sentences(n: int) -> tuple[list[str], str]:
    """``n`` Tatoeba sentences (German and French, then English; the shipped example if the data is absent),
    and where they come from."""
    try:
        root = data_root() / "tatoeba_v1"
        files = [root / f"tatoeba.{lang}-eng.{lang}" for lang in ("deu", "fra")] + [root / "tatoeba.deu-eng.eng"]
    except FileNotFoundError:
        files = sorted(EXAMPLES.glob("tatoeba.*"))
    out: list[str] = []
    for f in files:
        out += f.read_text(encoding="utf-8").splitlines()
    source = f"{len(out)} lines of {', '.join(f.name for f in files)} ({files[0].parent.name})"
    return (out * (n // max(len(out), 1) + 1))[:n], source


def best_rate(fn: Callable[[], np.ndarray], n: int, repeats: int) -> tuple[float, np.ndarray]:
    """Best sentences/s of ``repeats`` timed runs (after one warm-up run)."""
    result = fn()
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = max(best, n / (time.perf_counter() - start))
    return best, result


def add_results(record: BenchRecord, n: int, ours_rate: float, theirs_rate: float, min_cos: float, source: str,
                threads: int) -> None:
    """Add the measured rates, and how they were measured, to ``record``."""
    record.rows.append(BenchRow(f"encode {n} sentences, me5-small, CPU", "sentences/s", ours_rate, theirs_rate,
                                BASELINE, checks={"min cosine to baseline": min_cos}))
    record.notes += [f"Sentences: {source}, repeated up to {n}.",
                     "ours: xlsent's token-budget batches; baseline: the same weights exported with `xlsent export "
                     "--sentence-transformers`, in the same process. ratio = ours / baseline in sentences/s "
                     "(above 1: ours is faster).",
                     f"Each rate is the best of {record.arguments['repeats']} timed runs after one warm-up; "
                     f"torch threads: {threads}."]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=2000, help="sentences encoded (default 2000)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs of each encoder (best is reported)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    import torch
    from sentence_transformers import SentenceTransformer

    from xlsent.encoders.export import export_sentence_transformers
    from xlsent.encoders.me5_convert import prepare_default_model
    from xlsent.encoders.transformer import TransformerEncoder

    record = start_record("embed", "Encoding throughput: xlsent against sentence-transformers", __file__, argv, args,
                          PACKAGES)
    sentences, source = bench_sentences(args.sentences)
    ours = TransformerEncoder(prepare_default_model(), name="me5-small")
    with tempfile.TemporaryDirectory() as tmp:
        st = SentenceTransformer(str(export_sentence_transformers(ours, Path(tmp) / "st")), device="cpu")
        theirs_rate, theirs = best_rate(lambda: st.encode(sentences, batch_size=32), len(sentences), args.repeats)
    ours_rate, vecs = best_rate(lambda: ours.encode(sentences), len(sentences), args.repeats)
    agree = float(np.min(np.sum(vecs * theirs, axis=1)))
    print(f"encoding {len(sentences)} Tatoeba sentences, me5-small, CPU")
    print(f"  sentence-transformers encode(batch_size=32): {theirs_rate:8.1f} sentences/s")
    print(f"  xlsent (token-budget batches):              {ours_rate:8.1f} sentences/s")
    print(f"  ratio xlsent / sentence-transformers:       {ours_rate / theirs_rate:8.2f}x  (min cosine {agree:.6f})")
    add_results(record, len(sentences), ours_rate, theirs_rate, agree, source, torch.get_num_threads())
    print(f"wrote {record.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
