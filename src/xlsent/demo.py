"""The job behind ``make run``: embed the shipped German-English example and pair it back up."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xlsent.data.text_input import InputSpec
from xlsent.embed_job import EmbedOptions, embed_file
from xlsent.encoders.base import Encoder
from xlsent.store import load_embeddings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_demo(encoder: Encoder, out_dir: Path, examples: Path = EXAMPLES, show: int = 5) -> float:
    """Embed ``tatoeba.deu-eng.{deu,eng}``, pair each German line with its nearest English line, print
    a few pairs and return the accuracy against the known alignment."""
    src_path, tgt_path = examples / "tatoeba.deu-eng.deu", examples / "tatoeba.deu-eng.eng"
    vecs = []
    for path in (src_path, tgt_path):
        out = out_dir / f"{path.name}.npy"
        summary = embed_file(InputSpec(path), out, encoder, EmbedOptions(progress=False))
        print(summary.describe())
        vecs.append(load_embeddings(out, mmap=False)[0])
    src_lines = src_path.read_text(encoding="utf-8").splitlines()
    tgt_lines = tgt_path.read_text(encoding="utf-8").splitlines()
    sims = vecs[0] @ vecs[1].T
    best = sims.argmax(axis=1)
    accuracy = float(np.mean(best == np.arange(len(best))))
    print(f"\nnearest-neighbour pairs ({encoder.name}), first {show}:")
    for i in range(min(show, len(best))):
        print(f"  {sims[i, best[i]]:.3f}  {src_lines[i]}  ->  {tgt_lines[best[i]]}")
    print(f"\naccuracy against the known alignment: {accuracy:.1%} ({int(accuracy * len(best))}/{len(best)})")
    return accuracy
