"""Export a transformer model directory as a sentence-transformers folder with identical vectors."""

from __future__ import annotations

import shutil
from pathlib import Path

from xlsent.atomic import write_json
from xlsent.encoders.foreign import ForeignEncoder
from xlsent.encoders.model_dir import ModelDirError
from xlsent.encoders.transformer import TransformerEncoder

_COPIED = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")


def export_sentence_transformers(encoder: TransformerEncoder, out: str | Path) -> Path:
    """Write ``out`` so that ``SentenceTransformer(out).encode(s)`` equals ``encoder.encode(s)``.

    The e5 prefix becomes the folder's default prompt; pooling is mean over all tokens, then L2. An encoder loaded
    from a sentence-transformers or Hugging Face folder is refused: that folder is already the export.
    """
    if isinstance(encoder, ForeignEncoder):
        raise ValueError(f"{encoder.model_dir} is already a {encoder.spec.kind} folder: copy it instead")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} exists and is not empty; choose a new folder")
    tmp = out.with_name(f".{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "1_Pooling").mkdir(parents=True)
    (tmp / "2_Normalize").mkdir()
    for name in _COPIED:
        src = encoder.model_dir / name
        if not src.is_file():
            raise ModelDirError(f"{encoder.model_dir}: {name} is missing; cannot export")
        shutil.copyfile(src, tmp / name)
    write_json(tmp / "modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ])
    write_json(tmp / "sentence_bert_config.json", {"max_seq_length": encoder.max_tokens, "do_lower_case": False})
    write_json(tmp / "1_Pooling" / "config.json", {
        "word_embedding_dimension": encoder.dim, "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False, "include_prompt": True,
    })
    prompts = {"query": encoder.prefix} if encoder.prefix else {}
    write_json(tmp / "config_sentence_transformers.json", {
        "prompts": prompts, "default_prompt_name": "query" if prompts else None, "similarity_fn_name": "cosine",
    })
    if out.exists():
        out.rmdir()
    tmp.rename(out)
    return out
