"""Encoding throughput of xlsent's default encoder against sentence-transformers on the same sentences.

Both run the same weights (ours exported with ``xlsent export --sentence-transformers``) on the same
2000 Tatoeba sentences in the same process; the ratio is ours / theirs in sentences per second.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from xlsent.encoders.export import export_sentence_transformers
from xlsent.encoders.me5_convert import prepare_default_model
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.paths import data_root

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def bench_sentences(n: int) -> list[str]:
    """``n`` Tatoeba sentences (German and French, then English); the shipped example if the data is absent."""
    try:
        root = data_root() / "tatoeba_v1"
        files = [root / f"tatoeba.{lang}-eng.{lang}" for lang in ("deu", "fra")] + [root / "tatoeba.deu-eng.eng"]
    except FileNotFoundError:
        files = sorted(EXAMPLES.glob("tatoeba.*"))
    out: list[str] = []
    for f in files:
        out += f.read_text(encoding="utf-8").splitlines()
    return (out * (n // max(len(out), 1) + 1))[:n]


def best_rate(fn: Callable[[], np.ndarray], n: int, repeats: int) -> tuple[float, np.ndarray]:
    """Best sentences/s of ``repeats`` timed runs (after one warm-up run)."""
    result = fn()
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = max(best, n / (time.perf_counter() - start))
    return best, result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    from sentence_transformers import SentenceTransformer

    sentences = bench_sentences(args.sentences)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
