"""The public surface: ``load``, ``encode``, ``embed_file``, ``export``.

>>> import xlsent
>>> enc = xlsent.load()                                   # doctest: +SKIP
>>> xlsent.encode(["Guten Morgen", "Good morning"]).shape  # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from xlsent.embed_job import EmbedOptions, EmbedSummary, embed_file
from xlsent.encoders.base import Encoder
from xlsent.encoders.registry import DEFAULT_MODEL, load_encoder

__all__ = ["load", "encode", "embed_file", "EmbedOptions", "EmbedSummary", "export_sentence_transformers", "train"]


@lru_cache(maxsize=4)
def load(name_or_path: str | Path = DEFAULT_MODEL, backend: str = "auto") -> Encoder:
    """An encoder from a registered name (``me5-small``, ``muse``), a model directory or ``module:function``.

    ``backend`` runs transformer models on ``torch``, ``torch-bf16``, ``onnx``, ``onnx-int8``, ``openvino``,
    ``openvino-bf16``, ``openvino-int8`` or ``auto`` (the fastest that holds the accuracy guard on this CPU; see
    ``xlsent.encoders.backends``).
    """
    return load_encoder(name_or_path, backend)


def encode(sentences: Sequence[str], model: str | Path = DEFAULT_MODEL, lang: str | None = None,
           *, progress: bool = False) -> np.ndarray:
    """Embed ``sentences`` with ``model``: ``(n, dim)`` float32 unit rows, row i for sentence i."""
    return load(model).encode(sentences, lang, progress=progress)


def export_sentence_transformers(model: str | Path, out: str | Path) -> Path:
    """Export a transformer-type model as a sentence-transformers folder."""
    from xlsent.encoders.export import export_sentence_transformers as _export
    from xlsent.encoders.transformer import TransformerEncoder

    encoder = load(model)
    if not isinstance(encoder, TransformerEncoder):
        raise ValueError(f"{model}: only transformer models can be exported to sentence-transformers")
    return _export(encoder, out)


def train(method: str, out: str | Path, *, config_files: Sequence[str | Path] = (), sets: Sequence[str] = (),
          mode: str | None = None, resume: bool = False, data: str | Path | None = None,
          progress: bool = True) -> Path:
    """Train ``method`` (a name from ``xlsent train --help``) into the model directory ``out``.

    The configuration is the method's packaged defaults, then ``config_files``, then ``key=value`` ``sets``.
    """
    from xlsent.training.method import get_method

    m = get_method(method)
    config = m.config(config_files, sets, mode)
    return m.train(config, Path(out), resume=resume, data=data, progress=progress)
