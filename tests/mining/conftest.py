"""Shared by the Ray engine's test modules (each starts its own Ray: ``local_ray``): a small corpus, and the
single-process engine's output to compare with; and the mining benchmark's script, loaded as a module."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from xlsent.data.text_input import InputSpec
from xlsent.embed_job import EmbedOptions, embed_file
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.mining.config import MineConfig
from xlsent.mining.engine import LocalEngine
from xlsent.mining.job import mine_files

RAY_CHUNK_ROWS = 16
WORDS = ["the dog", "the cat", "barks", "runs", "der hund", "bellt", "a", "b"]
WriteCorpus = Callable[[Path, list[str], list[str]], tuple[Path, Path]]
SingleProcess = Callable[[Path, Path, Path, MineConfig], bytes]


@pytest.fixture(scope="session")
def distinct_lines() -> tuple[list[str], list[str]]:
    """40 source and 33 target lines, each distinct."""
    return ([f"{WORDS[i % 8]} {WORDS[(i * 3) % 8]} {i % 5}" for i in range(40)],
            [f"{WORDS[(i * 5) % 8]} {WORDS[i % 7]} {i % 3}" for i in range(33)])


@pytest.fixture(scope="session")
def numbered_lines() -> Callable[[int, int], tuple[list[str], list[str]]]:
    """``(n_src, n_tgt) -> (src_lines, tgt_lines)``: lines made distinct by their number, enough of them for IVF
    indexes of several lists."""
    def lines(n_src: int, n_tgt: int) -> tuple[list[str], list[str]]:
        return ([f"{WORDS[i % 8]} {WORDS[(i * 3) % 8]} {i}" for i in range(n_src)],
                [f"{WORDS[(i * 5) % 8]} {WORDS[i % 7]} {i}" for i in range(n_tgt)])

    return lines


@pytest.fixture(scope="session")
def ray_chunk_rows() -> int:
    """Rows per embedding chunk in the Ray engine's tests (several chunks per side)."""
    return RAY_CHUNK_ROWS


@pytest.fixture(scope="session")
def write_corpus() -> WriteCorpus:
    """``(folder, src_lines, tgt_lines) -> (src, tgt)``: the lines written as two text files in ``folder``."""
    def write(folder: Path, src_lines: list[str], tgt_lines: list[str]) -> tuple[Path, Path]:
        src, tgt = folder / "src.txt", folder / "tgt.txt"
        src.write_text("".join(line + "\n" for line in src_lines), encoding="utf-8")
        tgt.write_text("".join(line + "\n" for line in tgt_lines), encoding="utf-8")
        return src, tgt

    return write


@pytest.fixture(scope="session")
def single_process(tiny_model_dir: Path) -> SingleProcess:
    """``(src, tgt, out, cfg) -> bytes``: the single-process engine's output with the tiny model, from embeddings
    made in the Ray engine's chunks of ``RAY_CHUNK_ROWS`` rows."""
    def run(src: Path, tgt: Path, out: Path, cfg: MineConfig) -> bytes:
        encoder = TransformerEncoder(tiny_model_dir)
        embs = [side.with_suffix(".npy") for side in (src, tgt)]
        for side, emb in zip((src, tgt), embs, strict=True):
            embed_file(InputSpec(side), emb, encoder, EmbedOptions(chunk_rows=RAY_CHUNK_ROWS, progress=False))
        mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(encoder), cfg, src_emb=embs[0], tgt_emb=embs[1],
                   progress=False)
        return out.read_bytes()

    return run


@pytest.fixture(scope="session")
def bench(bench_script: Callable[[str], ModuleType]) -> ModuleType:
    """``benchmarks/mining_bench.py`` loaded as a module."""
    return bench_script("mining_bench")

