"""A mapping model directory: how a mapping method writes it (:func:`write_mapped_model`) and the encoder base
class that reads it (:class:`MappedEncoder`).

Language routing: a model maps each *source* language of its pairs into the space of the *target* language;
``encode(sentences, lang)`` maps the sentences when ``lang`` is a source language (compared by primary language,
so ``de`` and ``deu`` are the same) and returns the input vectors as they are for the target language or any
other language (logged once). ``lang`` is required: ``xlsent mine --src-lang de --tgt-lang en``.
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from xlsent.atomic import atomic_open, atomic_path
from xlsent.encoders.base import Encoder, OwnAutoBackend, Switchable, l2_normalize, sentence_list
from xlsent.encoders.cache import cached_encode, encoder_id
from xlsent.encoders.model_dir import ModelDirError, model_checksum, read_manifest
from xlsent.encoders.registry import backbone_record, load_backbone
from xlsent.inference import DEFAULT_BATCH_TOKENS, id_suffix
from xlsent.languages import base_lang
from xlsent.methods.mapping.config import MappingConfig
from xlsent.methods.mapping.inputs import input_encoder
from xlsent.training.config import build_config, to_toml
from xlsent.training.method import write_trained_manifest
from xlsent.training.record import TrainingRecord

log = logging.getLogger(__name__)

IDF_FILE = "idf.safetensors"
CONFIG_FILE = "config.toml"


def write_mapped_model(out: Path, config: MappingConfig, backbone: Encoder, idf: np.ndarray | None,
                       weights: dict[str, torch.Tensor], weights_file: str, *, mapping: dict[str, Any],
                       training: TrainingRecord, method: str) -> Path:
    """Write a mapping model: ``weights_file``, the idf (tfidf inputs), ``config.toml``, ``xlsent.json``, card."""
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / weights_file) as tmp:
        save_file({k: v.detach().contiguous() for k, v in weights.items()}, str(tmp))
    if idf is not None:
        with atomic_path(out / IDF_FILE) as tmp:
            save_file({"idf": torch.from_numpy(np.ascontiguousarray(idf))}, str(tmp))
    with atomic_open(out / CONFIG_FILE) as fh:
        fh.write(to_toml(config))
    return write_trained_manifest(
        out, method, config, training, name=out.name,
        backbone=backbone_record(backbone, out),
        languages={"sources": config.sources, "target": config.target}, mapping=mapping)


class MappedEncoder(abc.ABC):
    """Encoder of a mapping model directory: the input encoder, then the map of the sentence's source language
    (see the module docstring for the routing). Subclasses load their weights and implement :meth:`map_source`.
    """

    config_class: type[MappingConfig] = MappingConfig
    model_type = ""

    def __init__(self, model_dir: str | Path, *, backbone: Encoder | None = None, verify: str = "cached") -> None:
        self.model_dir = Path(model_dir)
        self.manifest: dict[str, Any] = read_manifest(self.model_dir, verify=verify)
        if self.manifest["type"] != self.model_type:
            raise ModelDirError(f"{self.model_dir}: type {self.manifest['type']!r}, expected {self.model_type!r}")
        self.config = build_config(self.config_class, [self.manifest["config"]])
        info = self.manifest["backbone"]
        loaded = backbone if backbone is not None else load_backbone(self.model_dir, info)
        if encoder_id(loaded) != info["id"]:
            raise ModelDirError(f"{self.model_dir}: trained on backbone {info['id']}, but {info['ref']} is "
                                f"{encoder_id(loaded)} (different weights)")
        self.backbone = loaded
        idf = self._load(IDF_FILE)["idf"].numpy() if self.config.inputs == "tfidf" else None
        self.inputs = input_encoder(loaded, self.config.inputs, idf)
        self.sources: list[str] = list(self.manifest["languages"]["sources"])
        self.target: str = self.manifest["languages"]["target"]
        self._warned: set[str] = set()
        self.name: str = self.manifest.get("name", self.model_dir.name)
        self.dim: int = self.inputs.dim
        self.id: str = f"{self.name}@{model_checksum(self.manifest)}"

    @property
    def check_langs(self) -> tuple[str | None, ...]:
        """The languages the load check encodes a sentence in: each source language, so that every map is proved
        (:func:`xlsent.encoders.registry.check_output`)."""
        return tuple(self.sources)

    def auto_backend(self) -> str:
        """``auto``'s choice: the backbone's (the measured table's, or this machine's measurement) where the inputs
        are a transformer backbone's own vectors, ``torch`` otherwise (the only backend of averaged subword
        inputs)."""
        if self._own_vectors() and isinstance(self.backbone, OwnAutoBackend):
            return self.backbone.auto_backend()
        return "torch"

    def _own_vectors(self) -> bool:
        """Whether the inputs are a transformer backbone's own vectors (which run on any backend)."""
        return self.inputs is self.backbone and isinstance(self.backbone, Switchable)

    def use_backend(self, backend: str) -> None:
        """Encode the inputs on ``backend`` (one of ``encoders.backends.BACKENDS``) where they are the backbone's
        own vectors; a lossy backend becomes part of the id, as it does the backbone's."""
        if not self._own_vectors() or not isinstance(self.backbone, Switchable):
            if backend == "torch":
                return
            raise ValueError(f"{self.name}: backend {backend!r} runs a transformer backbone's own vectors only; "
                             f"this model's inputs are {self.config.inputs!r} of {self.backbone.name} (use torch)")
        self.backbone.use_backend(backend)
        self.id = f"{self.name}@{model_checksum(self.manifest)}{id_suffix(backend)}"

    def _load(self, file: str) -> dict[str, torch.Tensor]:
        try:
            return load_file(str(self.model_dir / file))
        except Exception as exc:  # safetensors raises several types for a corrupt file
            raise ModelDirError(f"{self.model_dir / file}: cannot be read ({exc})") from exc

    def source_of(self, lang: str | None) -> str | None:
        """The source language whose map ``lang`` takes, or None (target space: vectors as they are)."""
        if lang is None:
            example = self.sources[0]
            raise ValueError(f"{self.name} maps {'/'.join(self.sources)} into {self.target}: pass the language of "
                             f"the sentences (xlsent embed --lang {example}; xlsent mine, score or filter --src-lang/"
                             f"--tgt-lang; encode(..., lang={example!r}))")
        key = base_lang(lang)
        for src in self.sources:
            if base_lang(src) == key:
                return src
        if key != base_lang(self.target) and lang not in self._warned:
            self._warned.add(lang)
            log.warning("%s maps %s into %s; %r is neither, its vectors are left as they are", self.name,
                        "/".join(self.sources), self.target, lang)
        return None

    @abc.abstractmethod
    def map_source(self, vectors: np.ndarray, source: str) -> np.ndarray:
        """``vectors`` of language ``source`` mapped into the target space (each subclass's own map)."""

    def project(self, vectors: np.ndarray, lang: str | None) -> np.ndarray:
        """Unit rows of input ``vectors`` of language ``lang`` in the target space (zero rows stay zero)."""
        source = self.source_of(lang)
        if source is None:
            return l2_normalize(vectors)
        out = l2_normalize(self.map_source(np.asarray(vectors, dtype=np.float32), source))
        out[np.linalg.norm(vectors, axis=1) == 0] = 0.0
        return out

    def encode(self, sentences: Sequence[str], lang: str | None = None, *,
               batch_tokens: int = DEFAULT_BATCH_TOKENS, progress: bool = False, cache: bool = False) -> np.ndarray:
        """``(len(sentences), dim)`` float32 unit rows; ``cache=True`` reads and writes the input encoding cache."""
        sentences = sentence_list(sentences)
        self.source_of(lang)
        inputs = (cached_encode(self.inputs, sentences, lang, progress=progress) if cache
                  else self.inputs.encode(sentences, lang, batch_tokens=batch_tokens, progress=progress))
        return self.project(inputs, lang)
