"""The Ray engine on a local 2-CPU Ray gives exactly the single-process pipeline's output."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.data.text_input import InputSpec
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.mining.pipeline import MineConfig, mine_files

ray = pytest.importorskip("ray")


def test_ray_output_equals_single_process(tmp_path: Path, tiny_model_dir: Path) -> None:
    from xlsent.mining.distributed import mine_files_ray

    words = ["the dog", "the cat", "barks", "runs", "der hund", "bellt", "a", "b"]
    distinct_src = [f"{words[i % 8]} {words[(i * 3) % 8]} {i % 5}" for i in range(40)]
    distinct_tgt = [f"{words[(i * 5) % 8]} {words[i % 7]} {i % 3}" for i in range(33)]
    corpora = {"distinct": (distinct_src, distinct_tgt),  # and with lines repeated on both sides:
               "repeated": (distinct_src + distinct_src[3:9] * 2, distinct_tgt[:20] + [distinct_tgt[4]] * 6)}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        for name, (src_lines, tgt_lines) in corpora.items():
            src, tgt = tmp_path / f"{name}-src.txt", tmp_path / f"{name}-tgt.txt"
            src.write_text("".join(line + "\n" for line in src_lines), encoding="utf-8")
            tgt.write_text("".join(line + "\n" for line in tgt_lines), encoding="utf-8")
            cfg = MineConfig(k=3, shard_rows=15, with_ids=True, dedup=False)
            single, dist = tmp_path / f"{name}-single.tsv", tmp_path / f"{name}-ray.tsv"
            mine_files(InputSpec(src), InputSpec(tgt), single, TransformerEncoder(tiny_model_dir), cfg,
                       progress=False)
            summary = mine_files_ray(InputSpec(src), InputSpec(tgt), dist, str(tiny_model_dir), cfg,
                                     chunk_rows=50_000, progress=False)
            assert (summary.src_rows, summary.tgt_rows) == (len(src_lines), len(tgt_lines))
            assert (summary.src_distinct, summary.tgt_distinct) == (40, 20 if name == "repeated" else 33)
            assert dist.read_bytes() == single.read_bytes()
            assert ("," in dist.read_text(encoding="utf-8")) == (name == "repeated")  # all lines of a sentence
    finally:
        ray.shutdown()
