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
    src = tmp_path / "src.txt"
    tgt = tmp_path / "tgt.txt"
    src.write_text("".join(f"{words[i % 8]} {words[(i * 3) % 8]} {i % 5}\n" for i in range(40)), encoding="utf-8")
    tgt.write_text("".join(f"{words[(i * 5) % 8]} {words[i % 7]} {i % 3}\n" for i in range(33)), encoding="utf-8")
    cfg = MineConfig(k=3, shard_rows=15, with_ids=True, dedup=False)
    single, dist = tmp_path / "single.tsv", tmp_path / "ray.tsv"
    mine_files(InputSpec(src), InputSpec(tgt), single, TransformerEncoder(tiny_model_dir), cfg, progress=False)
    summary = mine_files_ray(InputSpec(src), InputSpec(tgt), dist, str(tiny_model_dir), cfg, num_cpus=2,
                             chunk_rows=50_000, progress=False)
    assert summary.src_rows == 40 and summary.tgt_rows == 33
    assert dist.read_bytes() == single.read_bytes()
