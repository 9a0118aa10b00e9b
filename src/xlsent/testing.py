"""Helpers for tests and examples: a tiny random transformer model directory, the smallest model of every model
type, and toy encoders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from safetensors.torch import save_file

from xlsent.atomic import write_json
from xlsent.encoders.model_dir import write_manifest
from xlsent.encoders.tokenizer_build import build_unigram_tokenizer
from xlsent.encoders.transformer_model import TransformerConfig, TransformerModel, init_random
from xlsent.inference import DEFAULT_BATCH_TOKENS

if TYPE_CHECKING:
    from xlsent.data.text_input import InputSpec
    from xlsent.encoders.transformer import TransformerEncoder
    from xlsent.methods.mapping.data import PairData
    from xlsent.mining.config import MineConfig, MineSummary
    from xlsent.mining.distributed import RayConfig

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


Builder = Callable[[Path, "TransformerEncoder"], Path]
"""``build(out, tiny_encoder) -> model directory``: the smallest model of one type (tiny backbone, two steps)."""

_EN = ["the dog barks", "a dog barks", "the dog runs", "dog barks", "the cat runs", "a cat runs", "cat runs", "the cat"]
_DE = ["der hund bellt", "ein hund bellt", "der hund rennt", "hund bellt", "der katze rennt", "ein katze rennt",
      "katze rennt", "der katze"]


def _transformer(out: Path, backbone: TransformerEncoder) -> Path:
    return make_tiny_model_dir(out)


def _transformer_lora(out: Path, backbone: TransformerEncoder) -> Path:
    from xlsent.encoders.trainable import TrainableTransformer

    model = TrainableTransformer(backbone)
    model.apply_lora(r=4, alpha=8)
    return model.save(out, name="lora")


def _pair_data() -> PairData:
    from xlsent.data.bitext import Bitext
    from xlsent.methods.mapping.data import PairData, split_rows

    return PairData(Bitext(_DE, _EN, "de", "en"), *split_rows(len(_DE), 0.5, 2, seed=0))


def _mapping_sets(backbone: TransformerEncoder) -> list[str]:
    return [f"backbone={backbone.model_dir}", "device=cpu", "inputs=tfidf"]


def _absent(out: Path, backbone: TransformerEncoder) -> Path:
    from xlsent.methods.absent import model as absent

    cfg = absent.METHOD.config(sets=[*_mapping_sets(backbone), "steps=2", "batch_size=4", "gen_hidden=[8]",
                                     "disc_hidden=[8]", "selection=none"])
    return absent.train_on(cfg, [_pair_data()], backbone, out, progress=False)  # type: ignore[arg-type]


def _linear_map(out: Path, backbone: TransformerEncoder) -> Path:
    from xlsent.methods.mapping import linear as linear_map

    cfg = linear_map.METHOD.config(sets=[*_mapping_sets(backbone), "method=procrustes"])
    return linear_map.train_on(cfg, [_pair_data()], backbone, out, progress=False)  # type: ignore[arg-type]


def _dual_pivot(out: Path, backbone: TransformerEncoder) -> Path:
    from xlsent.data.bitext import Bitext
    from xlsent.methods.dual_pivot import model as dual_pivot

    cfg = dual_pivot.METHOD.config(mode="supervised", sets=["selection=none", "device=cpu", "steps=2", "batch_size=4",
                                                            "checkpoint_every=100"])
    return dual_pivot.train_on(cfg, Bitext(_DE, _EN, "de", "en"), backbone, out, progress=False)  # type: ignore[arg-type]


def _dueam(out: Path, backbone: TransformerEncoder) -> Path:
    from xlsent.methods.dueam import model as dueam
    from xlsent.methods.dueam.data import SentencePairs

    cfg = dueam.METHOD.config(sets=["device=cpu", "eval_every=0", "batch_size=4", "steps=2", "checkpoint_every=100"])
    pairs = SentencePairs(_EN, _DE, ["en"] * len(_EN), ["de"] * len(_DE), sorted(set(_EN + _DE)))
    return dueam.train_on(cfg, pairs, backbone, backbone, out, progress=False,  # type: ignore[arg-type]
                          wmd_root=out.parent / "wmd")


def _distill(out: Path, backbone: TransformerEncoder) -> Path:
    from xlsent.data.multilingual import EnglishBitext
    from xlsent.methods.distill import model as distill

    cfg = distill.METHOD.config(sets=["device=cpu", "eval_every=0", "batch_size=4", "steps=2", "checkpoint_every=100",
                                      "warmup_steps=0"])
    bitext = [EnglishBitext("de", list(_DE), list(_EN))]
    return distill.train_on(cfg, bitext, backbone, backbone, out, progress=False)  # type: ignore[arg-type]


def _emu(out: Path, backbone: TransformerEncoder) -> Path:
    from xlsent.methods.emu import model as emu
    from xlsent.methods.emu.data import EmuData, Sentences

    cfg = emu.METHOD.config(sets=["device=cpu", "steps=2", "batch_size=4", "critic_steps=1", "critic_hidden=8",
                                  "adversarial_langs=de", "checkpoint_every=100", "eval_every=0", "valid_size=0"])
    train = Sentences("en", _EN, [str(i) for i in range(len(_EN))], [i // 4 for i in range(len(_EN))])
    data = EmuData(["dog", "cat"], {"en": train}, {"en": train.subset([])}, {"de": Sentences("de", _DE)})
    return emu.train_on(cfg, data, backbone, out, progress=False)  # type: ignore[arg-type]


def _laser(out: Path, backbone: TransformerEncoder) -> Path:
    from xlsent.methods.laser import model as laser
    from xlsent.methods.laser.data import PairCorpus

    cfg = laser.METHOD.config(sets=[
        "vocab_size=40", "vocab_per_lang=500", "embed_dim=8", "hidden=8", "layers=1", "decoder_hidden=8",
        "decoder_embed_dim=8", "lang_embed_dim=4", "max_tokens=200", "max_sentence_tokens=40", "steps=2",
        "eval_every=0", "checkpoint_every=100", "device=cpu", "languages=de", "targets=en", "save_dtype=float32"])
    return laser.train_on(cfg, [PairCorpus("de", "en", _DE * 4, _EN * 4)], out, progress=False)  # type: ignore[arg-type]


SMALLEST_MODELS: dict[str, Builder] = {
    "transformer": _transformer, "transformer-lora": _transformer_lora, "absent": _absent,
    "linear-map": _linear_map, "dual-pivot": _dual_pivot, "dueam": _dueam, "distill": _distill, "emu": _emu,
    "laser": _laser,
}


def registered_model_types() -> list[str]:
    """The built-in model-directory types and the type of every registered method (each needs an entry in
    :data:`SMALLEST_MODELS`)."""
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
