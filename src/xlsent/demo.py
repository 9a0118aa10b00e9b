"""The job behind ``make run``: embed the shipped German-English example and mine the pairs back out of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xlsent.data.text_input import InputSpec
from xlsent.embed_job import EmbedOptions, embed_file
from xlsent.encoders.base import Encoder
from xlsent.mining.config import MineConfig
from xlsent.mining.stages import mine_arrays
from xlsent.store import load_embeddings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_demo(encoder: Encoder, out_dir: Path, examples: Path = EXAMPLES, show: int = 5) -> float:
    """Embed ``tatoeba.deu-eng.{deu,eng}``, mine German-English pairs with the ratio margin (k=4, best of
    both directions, 1:1), print the best few and return the share of German lines mined with their
    known translation."""
    src_path, tgt_path = examples / "tatoeba.deu-eng.deu", examples / "tatoeba.deu-eng.eng"
    vecs = []
    for path in (src_path, tgt_path):
        out = out_dir / f"{path.name}.npy"
        summary = embed_file(InputSpec(path), out, encoder, EmbedOptions(progress=False))
        print(summary.describe())
        vecs.append(load_embeddings(out, mmap=False)[0])
    src_lines = src_path.read_text(encoding="utf-8").splitlines()
    tgt_lines = tgt_path.read_text(encoding="utf-8").splitlines()
    cfg = MineConfig()
    cands = mine_arrays(vecs[0], vecs[1], cfg)
    print(f"\nmined pairs ({encoder.name}, {cfg.margin} margin k={cfg.k}, {cfg.mode} retrieval), best {show}:")
    for s, t, score in list(zip(cands.src, cands.tgt, cands.score, strict=True))[:show]:
        print(f"  {score:.3f}  {src_lines[s]}  ->  {tgt_lines[t]}")
    right = int(np.sum(cands.src == cands.tgt))
    accuracy = right / len(src_lines)
    print(f"\n{len(cands.score)} pairs mined; German lines paired with their known translation: "
          f"{accuracy:.1%} ({right}/{len(src_lines)})")
    return accuracy
