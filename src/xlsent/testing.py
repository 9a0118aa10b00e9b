"""Helpers for tests and examples: a tiny random transformer model directory, and toy encoders."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from safetensors.torch import save_file

from xlsent.atomic import write_json
from xlsent.encoders.model_dir import write_manifest
from xlsent.encoders.tokenizer_build import build_unigram_tokenizer
from xlsent.encoders.transformer_model import TransformerConfig, TransformerModel, init_random

TINY_WORDS = ["▁the", "▁dog", "▁cat", "▁barks", "▁runs", "▁der", "▁hund", "▁bellt", "▁q", ":", "▁a", "▁b"]
TINY_CHARS = list("abcdefghijklmnopqrstuvwxyzäöü.,!?:")


def make_tiny_model_dir(directory: Path, *, max_positions: int = 64, seed: int = 0) -> Path:
    """Write a tiny random XLM-R style model directory (2 layers, 32 dims) that xlsent loads."""
    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁", *TINY_WORDS, *TINY_CHARS]
    scores = [0.0, 0.0, 0.0, 0.0, -2.0] + [-3.0] * len(TINY_WORDS) + [-6.0] * len(TINY_CHARS)
    cfg = TransformerConfig(vocab_size=len(pieces), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=64, max_position_embeddings=max_positions + 2)
    model = TransformerModel(cfg)
    init_random(model, seed=seed)
    directory.mkdir(parents=True, exist_ok=True)
    save_file(dict(model.state_dict()), str(directory / "model.safetensors"))
    write_json(directory / "config.json", cfg.to_hf_dict())
    build_unigram_tokenizer(pieces, scores, charsmap=None).save(str(directory / "tokenizer.json"))
    write_manifest(directory, {"type": "transformer", "name": "tiny",
                               "encoder": {"prefix": "q: ", "pooling": "mean", "bos_id": 0, "eos_id": 2}})
    return directory


class LookupEncoder:
    """A toy encoder with known answers: each sentence maps to a fixed vector from a table.

    Unknown sentences map to zero rows. Useful for evaluation and mining tests.

    >>> enc = LookupEncoder({"a": [1.0, 0.0], "b": [0.0, 2.0]})
    >>> enc.encode(["b", "a", "zzz"]).tolist()
    [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]
    """

    def __init__(self, table: dict[str, Sequence[float]], name: str = "lookup") -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}
        self.dim = len(next(iter(self.table.values())))
        self.name = name
        self.id = name

    def encode(self, sentences: Sequence[str], lang: str | None = None, *, batch_tokens: int = 2048,
               progress: bool = False) -> np.ndarray:
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for i, s in enumerate(sentences):
            v = self.table.get(s)
            if v is not None and np.linalg.norm(v) > 0:
                out[i] = v / np.linalg.norm(v)
        return out


def dataset_or_skip(folder: str) -> Path:
    """The benchmark data root if ``folder`` exists in it; otherwise skip the calling test (pytest)."""
    import pytest

    from xlsent.paths import data_root

    try:
        base = data_root()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    if not (base / folder).is_dir():
        pytest.skip(f"{base / folder} missing")
    return base
