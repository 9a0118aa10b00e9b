"""What a sentence-transformers folder or a plain Hugging Face model folder asks for, read from its JSON files
(no weights are loaded here): the transformer's folder, pooling, dense layers, normalisation, prompt, input length.

A sentence-transformers folder has ``modules.json``: a Transformer, a Pooling (``pooling_mode``, or the older
``pooling_mode_*_tokens`` flags), then Dense and Normalize modules, run in the order it lists them (a Normalize
before a Dense scales the Dense's input to unit length; the final vectors are unit rows whatever comes last, as every
xlsent encoder's are; a Normalize has no files, so its folder may be missing); its default prompt (e.g. e5's
``query: ``) comes from ``config_sentence_transformers.json``. A folder with only ``config.json`` is a Hugging Face
model, mean-pooled as sentence-transformers pools it. Both formats of sentence-transformers (2.x to 6.x) are read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsent.encoders.hf_checkpoint import (
    BRING,
    TOKENIZER,
    read_config,
    read_json,
    read_object,
    string_map,
    weight_files,
)
from xlsent.encoders.model_dir import ModelDirError
from xlsent.encoders.sentence_head import ACTIVATIONS, POOLING_MODES
from xlsent.encoders.transformer_model import TransformerConfig

log = logging.getLogger(__name__)

MODULES = "modules.json"
ST_CONFIG = "config_sentence_transformers.json"
TRANSFORMER_CONFIG = "sentence_bert_config.json"
NORMALIZE = "Normalize"
KINDS = ("Transformer", "Pooling", "Dense", NORMALIZE)
"""The sentence-transformers modules xlsent runs (the last part of their type name)."""
LEGACY_POOLING = {f"pooling_mode_{key}": mode for key, mode in (
    ("cls_token", "cls"), ("max_tokens", "max"), ("mean_tokens", "mean"), ("mean_sqrt_len_tokens",
                                                                            "mean_sqrt_len_tokens"),
    ("weightedmean_tokens", "weightedmean"), ("lasttoken", "lasttoken"))}
MAX_SANE_LENGTH = 1_000_000
"""``model_max_length`` above this is transformers' "no limit" placeholder."""


@dataclass(frozen=True)
class DenseSpec:
    """One Dense module: sizes, bias, activation (sentence-transformers' name) and its weights file."""

    in_features: int
    out_features: int
    bias: bool
    activation: str
    weights: Path


@dataclass(frozen=True)
class FolderSpec:
    """Everything a foreign folder asks for; ``files`` are all the files its encoder reads (its checksum)."""

    root: Path
    kind: str
    transformer: Path
    config: TransformerConfig
    weights: tuple[Path, ...]
    pooling: tuple[str, ...]
    steps: tuple[DenseSpec | str, ...]
    """The Dense modules (their specs) and Normalize modules (:data:`NORMALIZE`) after the pooling, in order."""
    prompt: str
    max_seq_length: int
    lowercase: bool
    files: tuple[Path, ...]

    @property
    def dense(self) -> tuple[DenseSpec, ...]:
        """The Dense modules, in order."""
        return tuple(step for step in self.steps if isinstance(step, DenseSpec))

    @property
    def dim(self) -> int:
        """The length of the sentence vectors."""
        return self.dense[-1].out_features if self.dense else self.config.hidden_size * len(self.pooling)

    @property
    def mean_pooled(self) -> bool:
        """Whether the vectors are the transformer's mean-pooled states (normalised or not): xlsent's own pooling."""
        return self.pooling == ("mean",) and not self.dense


def is_foreign_folder(path: Path) -> bool:
    """Whether ``path`` looks like a sentence-transformers folder or a Hugging Face model folder."""
    return (path / MODULES).is_file() or (path / "config.json").is_file()


def read_folder(root: str | Path) -> FolderSpec:
    """The :class:`FolderSpec` of a sentence-transformers folder (with ``modules.json``) or of a Hugging Face model
    folder (mean pooling, as sentence-transformers does; a warning says so)."""
    root = Path(root).resolve()
    if (root / MODULES).is_file():
        return _sentence_transformers(root)
    log.warning("%s: no %s, so a Hugging Face model folder: mean pooling of the transformer's states, as "
                "sentence-transformers pools such a folder (add a %s to pool otherwise)", root, MODULES, MODULES)
    return _assemble(root, "hugging-face", root, pooling=("mean",), steps=(), prompt="", settings={}, files=[])


def _modules(root: Path) -> list[tuple[str, Path]]:
    """``modules.json`` as (kind, folder) pairs, each folder inside ``root`` (a Normalize's folder, which holds no
    file, unchecked)."""
    path = root / MODULES
    entries = read_json(path)
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ModelDirError(f"{path}: not a list of modules (objects with type and path)")
    out = []
    for i, entry in enumerate(entries):
        kind = str(entry.get("type", "")).rsplit(".", 1)[-1]
        if not str(entry.get("type", "")).startswith("sentence_transformers.") or kind not in KINDS:
            raise ModelDirError(f"{path}: module {i} has type {entry.get('type')!r}, which xlsent does not run "
                                f"(it runs {', '.join(KINDS)})")
        sub = str(entry.get("path", ""))
        folder = root / sub if kind == NORMALIZE else _module_folder(root, sub, f"{path}: module {i} ({kind})")
        out.append((kind, folder))
    kinds = [k for k, _ in out]
    if kinds[:2] != ["Transformer", "Pooling"] or "Transformer" in kinds[1:] or "Pooling" in kinds[2:]:
        raise ModelDirError(f"{path}: modules {kinds}; xlsent runs a Transformer, a Pooling, then Dense and "
                            "Normalize modules")
    return out


def _module_folder(root: Path, sub: str, module: str) -> Path:
    """The folder ``sub`` of the model folder ``root`` (resolved) where ``module`` (how errors name it) keeps its
    files; one that is missing, or lies outside ``root`` (through a symlink or ``..``), is a :class:`ModelDirError`
    saying which."""
    given = root / sub
    folder = given.resolve()
    if not folder.is_dir():
        raise ModelDirError(f"{module} has path {sub!r}, which is not a folder inside {root} (a hub name? xlsent "
                            f"never downloads; {BRING})")
    if folder.is_relative_to(root):
        return folder
    link = next((p for p in (given, *given.parents) if p.is_symlink()), None)
    how = f"{link} is a symlink to {link.resolve()}" if link else f"it leads to {folder}"
    raise ModelDirError(f"{module} has path {sub!r}: {how}, outside the model folder {root}; xlsent reads only the "
                        "files inside it (its id is their checksum): copy the module's folder in instead")


def _pooling(folder: Path) -> tuple[str, ...]:
    path = folder / "config.json"
    cfg = read_object(path, "a pooling config")
    mode = cfg.get("pooling_mode")
    modes = ((mode,) if isinstance(mode, str) else tuple(mode) if isinstance(mode, list)
             else tuple(m for key, m in LEGACY_POOLING.items() if cfg.get(key)))
    if not modes or any(m not in POOLING_MODES for m in modes):
        raise ModelDirError(f"{path}: pooling {list(modes)} is not one of {', '.join(POOLING_MODES)}")
    if cfg.get("include_prompt", True) is False:
        raise ModelDirError(f"{path}: include_prompt false (pooling that leaves the prompt out) is not supported")
    return tuple(modes)


def _dense(folder: Path) -> tuple[DenseSpec, list[Path]]:
    path = folder / "config.json"
    cfg = read_object(path, "a Dense config")
    activation = cfg.get("activation_function") or "torch.nn.modules.activation.Tanh"
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ModelDirError(f"{path}: activation_function {activation!r} is not supported ({', '.join(ACTIVATIONS)})")
    weights = next((folder / n for n in ("model.safetensors", "pytorch_model.bin") if (folder / n).is_file()), None)
    if weights is None:
        raise ModelDirError(f"{folder / 'model.safetensors'}: is missing (nor is there pytorch_model.bin): the Dense "
                            "module has no weights")
    try:
        spec = DenseSpec(int(cfg["in_features"]), int(cfg["out_features"]), bool(cfg.get("bias", True)), activation,
                         weights)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelDirError(f"{path}: needs in_features and out_features ({exc!r})") from exc
    return spec, [path, weights]


def _prompt(root: Path) -> tuple[str, list[Path]]:
    """The folder's default prompt, the one ``SentenceTransformer.encode`` adds when not told otherwise."""
    path = root / ST_CONFIG
    if not path.is_file():
        return "", []
    cfg = read_object(path, "a sentence-transformers config")
    prompts = string_map(path, cfg, "prompts", '{"query": "query: "}')
    name = cfg.get("default_prompt_name")
    if name is not None and not isinstance(name, str):
        raise ModelDirError(f"{path}: default_prompt_name = {name!r}: expected a string, the name of one of its "
                            f"prompts ({', '.join(prompts) or 'none'})")
    if name is not None and name not in prompts:
        raise ModelDirError(f"{path}: default_prompt_name {name!r} is not among its prompts ({', '.join(prompts)})")
    return (prompts[name] if name is not None else ""), [path]


def _sentence_transformers(root: Path) -> FolderSpec:
    modules = _modules(root)
    transformer = modules[0][1]
    settings_path = transformer / TRANSFORMER_CONFIG
    settings = read_object(settings_path, "a Transformer config") if settings_path.is_file() else {}
    files = [root / MODULES, modules[1][1] / "config.json", *([settings_path] if settings_path.is_file() else [])]
    steps: list[DenseSpec | str] = []
    for kind, folder in modules[2:]:
        if kind == NORMALIZE:
            steps.append(NORMALIZE)
        else:
            spec, read = _dense(folder)
            steps.append(spec)
            files += read
    prompt, read = _prompt(root)
    return _assemble(root, "sentence-transformers", transformer, pooling=_pooling(modules[1][1]), steps=tuple(steps),
                     prompt=prompt, settings=settings, files=files + read)


def _max_seq_length(transformer: Path, settings: dict[str, Any], config: TransformerConfig) -> int:
    """sentence_bert_config.json's ``max_seq_length`` (sentence-transformers up to 5), else the tokenizer's
    ``model_max_length`` (where 6 keeps it), at most the model's positions."""
    length = settings.get("max_seq_length")
    tokenizer_config = transformer / "tokenizer_config.json"
    if length is None and tokenizer_config.is_file():
        length = read_object(tokenizer_config, "a tokenizer config").get("model_max_length")
    if not isinstance(length, int | float) or not 3 <= length <= MAX_SANE_LENGTH:
        return config.max_tokens
    return min(int(length), config.max_tokens)


def _assemble(root: Path, kind: str, transformer: Path, *, pooling: tuple[str, ...], steps: tuple[DenseSpec | str, ...],
              prompt: str, settings: dict[str, Any], files: list[Path]) -> FolderSpec:
    """The spec, once the transformer's own files (config, weights, tokenizer) are found."""
    config = read_config(transformer)
    weights = tuple(weight_files(transformer))
    extra = [transformer / n for n in ("tokenizer_config.json",) if (transformer / n).is_file()]
    spec = FolderSpec(root=root, kind=kind, transformer=transformer, config=config, weights=weights,
                      pooling=pooling, steps=steps, prompt=prompt,
                      max_seq_length=_max_seq_length(transformer, settings, config),
                      lowercase=bool(settings.get("do_lower_case", False)),
                      files=tuple(dict.fromkeys([*files, transformer / "config.json", *weights,
                                                 transformer / TOKENIZER, *extra])))
    width = config.hidden_size * len(pooling)
    for d in spec.dense:
        if d.in_features != width:
            raise ModelDirError(f"{d.weights.parent / 'config.json'}: in_features {d.in_features}, but what comes "
                                f"before it has {width} dimensions")
        width = d.out_features
    return spec
