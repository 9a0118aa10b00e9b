"""A Hugging Face transformer folder read without ``transformers`` and without a network: ``config.json`` ->
:class:`TransformerConfig`, the weights (safetensors, sharded safetensors, or ``pytorch_model.bin`` read with
``weights_only``), and the tokenizer (``tokenizer.json``).

Nothing is downloaded: a file the folder lacks is an error naming it, and where the folder names a model on the
Hugging Face hub (``_name_or_path``, ``tokenizer_name_or_path``) the error says so and how to bring the files.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer

from xlsent.encoders.model_dir import BROKEN_WEIGHTS, ModelDirError
from xlsent.encoders.transformer_model import ACTIVATIONS, ARCHITECTURES, TransformerConfig
from xlsent.settings_file import SettingsError, typed_fields

WEIGHTS = "model.safetensors"
SHARD_INDEX = "model.safetensors.index.json"
PICKLED_WEIGHTS = "pytorch_model.bin"
TOKENIZER = "tokenizer.json"
BRING = ("download the model on a machine with network access and copy its whole folder here (README: Any encoder "
         "on disk)")
PREFIXES = ("bert.", "roberta.")
"""Prefixes of the base model's weights in checkpoints saved with a task head (``BertForMaskedLM`` and the like)."""
JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "true or false",
              type(None): "null"}
"""What JSON calls the values of each Python type that ``json.loads`` gives (objects aside)."""
HEADS = ("pooler.", "cls.", "lm_head.", "classifier.", "embeddings.position_ids", "embeddings.token_type_ids")
"""Weights and buffers that no sentence vector uses."""


def read_json(path: Path) -> Any:
    """The JSON in ``path``; a missing or unreadable file is a :class:`ModelDirError` naming it."""
    if not path.is_file():
        raise ModelDirError(f"{path}: is missing{hub_hint(path.parent)}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelDirError(f"{path}: not readable JSON ({exc})") from exc


def read_object(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in ``path``; JSON of another shape is a :class:`ModelDirError` naming the file and ``what`` it
    should hold."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise ModelDirError(f"{path}: holds {JSON_TYPES[type(data)]}, not {what} (a JSON object)")
    return data


def string_map(path: Path, data: Mapping[str, Any], key: str, example: str) -> dict[str, str]:
    """``data[key]`` (``{}`` where absent) from the JSON file ``path``, which must be an object of strings; anything
    else is a :class:`ModelDirError` naming the file, the key and what it should be (like ``example``).

    >>> string_map(Path("st/config_sentence_transformers.json"), {"prompts": ["query"]}, "prompts",
    ...            '{"query": "query: "}')
    Traceback (most recent call last):
    ...
    xlsent.encoders.model_dir.ModelDirError: st/config_sentence_transformers.json: prompts = ['query']: expected an \
object of names to strings, e.g. {"query": "query: "}
    """
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ModelDirError(f"{path}: {key} = {value!r}: expected an object of names to strings, e.g. {example}")
    return value


def hub_hint(folder: Path) -> str:
    """Where ``folder``'s files name a model that is not on this disk (a hub name): what to do about it."""
    names = []
    for file, key in (("config.json", "_name_or_path"), ("sentence_bert_config.json", "tokenizer_name_or_path"),
                      ("tokenizer_config.json", "name_or_path")):
        try:
            value = json.loads((folder / file).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, str) and value and not (folder / value).exists() and not Path(value).exists():
            names.append(f"{file} names {value!r}")
    if not names:
        return ""
    return f" ({'; '.join(names)}, not on this disk: xlsent never downloads; {BRING})"


def read_config(folder: Path) -> TransformerConfig:
    """The architecture in ``folder/config.json``: BERT, RoBERTa or XLM-RoBERTa, absolute positions, a GELU."""
    path = folder / "config.json"
    raw = read_object(path, "a Hugging Face model config")
    model_type = raw.get("model_type")
    for key in ("model_type", "hidden_act", "position_embedding_type"):
        if key in raw and not isinstance(raw[key], str):
            raise ModelDirError(f"{path}: {key} = {raw[key]!r}: expected a string")
    if model_type not in ARCHITECTURES:
        listed = raw.get("architectures")
        named = ", ".join(map(str, listed)) if isinstance(listed, list) and listed else "no architectures field"
        raise ModelDirError(f"{path}: architecture {model_type!r} ({named}) is not supported; xlsent runs "
                            f"{', '.join(sorted(ARCHITECTURES))} models")
    if raw.get("position_embedding_type", "absolute") != "absolute":
        raise ModelDirError(f"{path}: position_embedding_type {raw['position_embedding_type']!r} is not supported "
                            "(only absolute positions)")
    if raw.get("hidden_act", "gelu") not in ACTIVATIONS:
        raise ModelDirError(f"{path}: hidden_act {raw['hidden_act']!r} is not supported "
                            f"({', '.join(ACTIVATIONS)})")
    dropout = ("hidden_dropout_prob", "attention_probs_dropout_prob")  # inference: off
    try:
        fields = typed_fields(TransformerConfig, {k: raw[k] for k in TransformerConfig.__dataclass_fields__
                                                  if k in raw and raw[k] is not None and k not in dropout}, str(path))
    except SettingsError as exc:
        raise ModelDirError(str(exc)) from None
    fields.setdefault("pad_token_id", 0 if model_type == "bert" else 1)
    config = TransformerConfig(**fields)
    problems = config_problems(config)
    if problems:
        raise ModelDirError(f"{path}: {'; '.join(problems)}")
    return config


def config_problems(config: TransformerConfig) -> list[str]:
    """What makes ``config`` no runnable transformer (sizes under 1, heads that do not divide the width), one
    message each.

    >>> config_problems(TransformerConfig(hidden_size=30, num_attention_heads=4, vocab_size=0))
    ['vocab_size must be at least 1, not 0', 'hidden_size 30 is not a multiple of num_attention_heads 4']
    """
    sizes = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
             "max_position_embeddings", "type_vocab_size")
    out = [f"{key} must be at least 1, not {getattr(config, key)}" for key in sizes if getattr(config, key) < 1]
    if config.vocab_size >= 1 and not 0 <= config.pad_token_id < config.vocab_size:
        out.append(f"pad_token_id {config.pad_token_id} is no token of the vocabulary of {config.vocab_size}")
    if config.num_attention_heads >= 1 and config.hidden_size % config.num_attention_heads:
        out.append(f"hidden_size {config.hidden_size} is not a multiple of num_attention_heads "
                   f"{config.num_attention_heads}")
    if not config.layer_norm_eps > 0:
        out.append(f"layer_norm_eps must be above 0, not {config.layer_norm_eps}")
    return out


def weight_files(folder: Path) -> list[Path]:
    """The files holding ``folder``'s weights: ``model.safetensors``, the shards its index lists, or
    ``pytorch_model.bin``."""
    if (folder / WEIGHTS).is_file():
        return [folder / WEIGHTS]
    if (folder / SHARD_INDEX).is_file():
        index = read_object(folder / SHARD_INDEX, "a shard index")
        weight_map = string_map(folder / SHARD_INDEX, index, "weight_map", '{"TENSOR": "model-1.safetensors"}')
        shards = sorted(set(weight_map.values()))
        if not shards:
            raise ModelDirError(f"{folder / SHARD_INDEX}: lists no shards (no weight_map)")
        missing = [s for s in shards if not (folder / s).is_file()]
        if missing:
            raise ModelDirError(f"{folder / missing[0]}: is missing ({len(missing)} of the {len(shards)} shards "
                                f"that {SHARD_INDEX} lists){hub_hint(folder)}")
        return [folder / s for s in shards]
    if (folder / PICKLED_WEIGHTS).is_file():
        return [folder / PICKLED_WEIGHTS]
    raise ModelDirError(f"{folder / WEIGHTS}: is missing (nor is there {SHARD_INDEX} or {PICKLED_WEIGHTS}): the "
                        f"folder has no weights{hub_hint(folder)}")


def read_tensors(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of one weights file (safetensors, or a PyTorch file read with ``weights_only=True``), every
    floating-point one finite (:func:`check_finite`)."""
    try:
        state = load_file(str(path)) if path.suffix == ".safetensors" else torch.load(path, map_location="cpu",
                                                                                       weights_only=True)
    except pickle.UnpicklingError:  # PyTorch's message advises weights_only=False, i.e. running the file's code
        raise ModelDirError(f"{path}: holds pickled objects beyond tensors, and xlsent loads none (a pickle can run "
                            "code); convert the file to safetensors where you trust its source") from None
    except Exception as exc:  # both libraries raise several types for a corrupt file
        raise ModelDirError(f"{path}: cannot be read ({exc})") from exc
    if not isinstance(state, dict):
        raise ModelDirError(f"{path}: holds no state dict of tensors")
    check_finite(path, state)
    return state


def check_finite(path: Path, state: Mapping[str, torch.Tensor]) -> None:
    """Raise :class:`ModelDirError` naming ``path`` and the first floating-point tensor of ``state`` holding NaN or
    infinite values (which give NaN or zero vectors for the texts that reach them).

    A tensor is summed (one vectorised pass; a NaN or infinite value makes the sum so) and only a sum that is not
    finite is looked at element by element, to tell such a value from a sum that overflowed.
    """
    for name, tensor in state.items():
        if (tensor.is_floating_point() and not bool(torch.isfinite(tensor.sum()))
                and not bool(torch.isfinite(tensor).all())):
            raise ModelDirError(f"{path}: tensor {name} holds values that are not finite numbers: {BROKEN_WEIGHTS}")


def base_model_state(files: Iterable[Path]) -> dict[str, torch.Tensor]:
    """The base model's weights from ``files``, in float32, named as :class:`TransformerModel` names them (task
    heads, the pooler and position-id buffers dropped; TensorFlow-era ``gamma``/``beta`` renamed)."""
    state: dict[str, torch.Tensor] = {}
    for path in files:
        for key, value in read_tensors(path).items():
            for prefix in PREFIXES:
                key = key.removeprefix(prefix)
            if key.startswith(HEADS):
                continue
            if key.endswith("LayerNorm.gamma") or key.endswith("LayerNorm.beta"):
                key = key.rsplit(".", 1)[0] + (".weight" if key.endswith("gamma") else ".bias")
            state[key] = value.float() if value.is_floating_point() else value
    return state


def read_tokenizer(folder: Path, config: TransformerConfig) -> Tokenizer:
    """``folder/tokenizer.json`` with its truncation and padding turned off (xlsent windows and pads itself), giving no
    id past ``config``'s vocabulary (:func:`check_vocabulary`)."""
    path = folder / TOKENIZER
    if not path.is_file():
        raise ModelDirError(f"{path}: is missing (xlsent reads the fast tokenizer's file; where the folder has only "
                            "vocab.txt or sentencepiece.bpe.model, write it with transformers: "
                            f"AutoTokenizer.from_pretrained(FOLDER).save_pretrained(FOLDER)){hub_hint(folder)}")
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception for a malformed file
        raise ModelDirError(f"{path}: not a readable tokenizer ({exc})") from exc
    tokenizer.no_truncation()
    tokenizer.no_padding()
    check_vocabulary(tokenizer, folder, config)
    return tokenizer


def check_vocabulary(tokenizer: Tokenizer, folder: Path, config: TransformerConfig) -> None:
    """Raise :class:`ModelDirError` naming ``folder``'s tokenizer.json and config.json where the tokenizer gives ids
    (added tokens included) past the model's ``vocab_size`` embeddings."""
    added = tokenizer.get_added_tokens_decoder()
    ids = max([tokenizer.get_vocab_size(with_added_tokens=False), *(i + 1 for i in added)])
    if ids > config.vocab_size:
        raise ModelDirError(f"{folder / TOKENIZER}: gives token ids up to {ids - 1}, but {folder / 'config.json'} has "
                            f"vocab_size {config.vocab_size} (ids 0 to {config.vocab_size - 1}): the tokenizer is not "
                            "this model's; bring the tokenizer the model was trained with")


def special_ids(tokenizer: Tokenizer, path: Path) -> tuple[int, int]:
    """The ids the tokenizer puts around a text (``[CLS]``/``[SEP]``, ``<s>``/``</s>``); a tokenizer that adds
    anything else is an error naming ``path``."""
    plain = tokenizer.encode("a b", add_special_tokens=False).ids
    full = tokenizer.encode("a b", add_special_tokens=True).ids
    if len(full) != len(plain) + 2 or full[1:-1] != plain:
        raise ModelDirError(f"{path}: the tokenizer adds {len(full) - len(plain)} special token(s) other than one "
                            "before and one after the text; xlsent runs models whose inputs are [CLS] text [SEP] or "
                            "<s> text </s>")
    return full[0], full[-1]
