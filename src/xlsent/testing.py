"""Helpers for tests and examples: a tiny random transformer model directory, the smallest model of every model
type, and toy encoders."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from safetensors.torch import save_file

from xlsent.atomic import write_json
from xlsent.encoders.base import sentence_list
from xlsent.encoders.model_dir import write_manifest
from xlsent.encoders.tokenizer_build import build_unigram_tokenizer
from xlsent.encoders.transformer_model import TransformerConfig, TransformerModel, init_random
from xlsent.inference import DEFAULT_BATCH_TOKENS
from xlsent.training.record import DataRecord, TrainingRecord

if TYPE_CHECKING:
    from xlsent.cluster import RayConfig
    from xlsent.data.text_input import InputSpec
    from xlsent.encoders.transformer import TransformerEncoder
    from xlsent.mining.config import MineConfig, MineSummary

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

    def encode(self, sentences: Sequence[str], lang: str | None = None, *, batch_tokens: int = DEFAULT_BATCH_TOKENS,
               progress: bool = False) -> np.ndarray:
        sentences = sentence_list(sentences)
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for i, s in enumerate(sentences):
            v = self.table.get(s)
            if v is not None and np.linalg.norm(v) > 0:
                out[i] = v / np.linalg.norm(v)
        return out


def toy_training_record(steps: int | None = None) -> TrainingRecord:
    """A training record for a model directory a test writes by hand (one second on toy data)."""
    return TrainingRecord(DataRecord("toy", "toy data"), 1.0, steps_done=steps)


def load_script(path: Path) -> ModuleType:
    """The Python script at ``path`` (e.g. a benchmark of ``benchmarks/``) loaded as a module named by its stem, so that
    a test calls its functions without running it."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python script")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


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


Builder = Callable[[Path, "TransformerEncoder"], Path]
"""``build(out, tiny_encoder) -> model directory``: the smallest model of one type (tiny backbone, two steps)."""


def _transformer(out: Path, backbone: TransformerEncoder) -> Path:
    return make_tiny_model_dir(out)


def _transformer_lora(out: Path, backbone: TransformerEncoder) -> Path:
    from xlsent.encoders.trainable import TrainableTransformer

    model = TrainableTransformer(backbone)
    model.apply_lora(r=4, alpha=8)
    return model.save(out, name="lora")


BUILT_IN_SMALLEST: dict[str, Builder] = {"transformer": _transformer, "transformer-lora": _transformer_lora}
"""The smallest model of each built-in model-directory type; a method's is its :attr:`Method.smallest`."""


def smallest_models() -> dict[str, Builder]:
    """The builder of the smallest model of every model type: the built-in types' and each registered method's
    ``smallest`` (a method that declares none is an error naming it)."""
    from xlsent.training.method import available_methods

    out = dict(BUILT_IN_SMALLEST)
    for name, method in available_methods().items():
        if method.smallest is None:
            raise TypeError(f"method {name} declares no smallest model: set Method.smallest (docs/adding-a-method.md)")
        out[name] = method.smallest
    return out


def registered_model_types() -> list[str]:
    """The built-in model-directory types and the type of every registered method (each has a smallest model in
    :func:`smallest_models`)."""
    from importlib import metadata

    from xlsent.encoders.registry import DIRECTORY_TYPES, METHODS_GROUP

    return sorted({*DIRECTORY_TYPES, *(ep.name for ep in metadata.entry_points(group=METHODS_GROUP))})


def mine_on_ray(src: InputSpec, tgt: InputSpec, output: Path, model: str, cfg: MineConfig,
                ray_cfg: RayConfig | None = None, **options: Any) -> MineSummary:
    """:func:`xlsent.mining.job.mine_files` on a :class:`~xlsent.mining.distributed.RayEngine` of ``model``
    (``options``: the job's keyword arguments)."""
    from xlsent.mining.distributed import RayEngine
    from xlsent.mining.job import mine_files

    with RayEngine(model, ray_cfg) as engine:
        return mine_files(src, tgt, output, engine, cfg, **options)
