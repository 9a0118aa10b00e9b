"""Export a transformer model directory as a sentence-transformers folder with identical vectors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from safetensors.torch import load_file, save_file

from xlsent.atomic import write_json
from xlsent.encoders.foreign import ForeignEncoder
from xlsent.encoders.lora import LoraEncoder
from xlsent.encoders.model_dir import ModelDirError
from xlsent.encoders.transformer import TransformerEncoder

_COPIED = ("config.json", "tokenizer.json")
"""Files copied from the folder holding the model's configuration and tokenizer (a LoRA model's backbone)."""
TOKENIZER_CONFIG = "tokenizer_config.json"
"""Copied too where the model has one, else derived from the model (:func:`_tokenizer_config`)."""
TOKENIZER_CLASSES = {"xlm-roberta": "XLMRobertaTokenizerFast", "roberta": "RobertaTokenizerFast",
                     "bert": "BertTokenizerFast"}
"""Hugging Face ``model_type`` (each of :data:`xlsent.encoders.transformer_model.ARCHITECTURES`) -> the tokenizer
class that reads its ``tokenizer.json``, with that architecture's special tokens."""
WEIGHTS = "model.safetensors"


def export_sentence_transformers(encoder: TransformerEncoder, out: str | Path) -> Path:
    """Write ``out`` so that ``SentenceTransformer(out).encode(s)`` equals ``encoder.encode(s)``.

    The e5 prefix becomes the folder's default prompt; pooling is mean over all tokens, then L2. A LoRA model
    (``transformer-lora`` weights: me5-distill, emu-en) is exported with its adapters merged into the backbone's
    weights, as loading merges them, and the backbone's configuration and tokenizer. The folder is written under a
    hidden name beside ``out`` and renamed into place at the end: a failed export leaves nothing behind. An encoder
    loaded from a sentence-transformers or Hugging Face folder is refused: that folder is already the export.
    """
    if isinstance(encoder, ForeignEncoder):
        raise ValueError(f"{encoder.model_dir} is already a {encoder.spec.kind} folder: copy it instead")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} exists and is not empty; choose a new folder")
    missing = [name for name in _COPIED if not (encoder.files_dir / name).is_file()]
    if missing:
        raise ModelDirError(f"{encoder.files_dir}: {', '.join(missing)} missing; cannot export")
    if (encoder.files_dir / TOKENIZER_CONFIG).is_file():
        _check_json_object(encoder.files_dir / TOKENIZER_CONFIG)
    tmp = out.with_name(f".{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _write_folder(encoder, tmp)
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _check_json_object(path: Path) -> None:
    """:class:`ModelDirError` naming ``path`` unless it holds a JSON object (a file the manifest does not list, so no
    checksum vouches for it, and one that other libraries read)."""
    try:
        ok = isinstance(json.loads(path.read_text(encoding="utf-8")), dict)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelDirError(f"{path}: not a readable JSON file ({exc}); restore it, then export again") from exc
    if not ok:
        raise ModelDirError(f"{path}: holds no JSON object; restore it, then export again")


def _write_folder(encoder: TransformerEncoder, folder: Path) -> None:
    """Write the sentence-transformers folder of ``encoder`` into ``folder`` (created)."""
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "2_Normalize").mkdir()
    for name in _COPIED:
        shutil.copyfile(encoder.files_dir / name, folder / name)
    if (encoder.files_dir / TOKENIZER_CONFIG).is_file():
        shutil.copyfile(encoder.files_dir / TOKENIZER_CONFIG, folder / TOKENIZER_CONFIG)
    else:
        write_json(folder / TOKENIZER_CONFIG, _tokenizer_config(encoder))
    _write_weights(encoder, folder / WEIGHTS)
    write_json(folder / "modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ])
    write_json(folder / "sentence_bert_config.json", {"max_seq_length": encoder.max_tokens, "do_lower_case": False})
    write_json(folder / "1_Pooling" / "config.json", {
        "word_embedding_dimension": encoder.dim, "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False, "include_prompt": True,
    })
    prompts = {"query": encoder.prefix} if encoder.prefix else {}
    write_json(folder / "config_sentence_transformers.json", {
        "prompts": prompts, "default_prompt_name": "query" if prompts else None, "similarity_fn_name": "cosine",
    })


def _tokenizer_config(encoder: TransformerEncoder) -> dict[str, object]:
    """The ``tokenizer_config.json`` of a model that has none: the tokenizer class of its architecture and its
    longest input (special tokens included), as the model reads its ``tokenizer.json``."""
    return {"tokenizer_class": TOKENIZER_CLASSES[encoder.config.model_type], "model_max_length": encoder.max_tokens}


def _write_weights(encoder: TransformerEncoder, path: Path) -> None:
    """The weights of ``encoder`` at ``path``: a LoRA model's merged weights (as loaded) over its backbone's file
    (which keeps what xlsent does not load, e.g. the pooler, so other libraries find every weight), else its own
    file."""
    if isinstance(encoder, LoraEncoder):
        merged = {k: v.detach().cpu().contiguous() for k, v in encoder.model.state_dict().items()}
        save_file({**load_file(str(encoder.files_dir / WEIGHTS)), **merged}, str(path), metadata={"format": "pt"})
    else:
        shutil.copyfile(encoder.model_dir / WEIGHTS, path)
