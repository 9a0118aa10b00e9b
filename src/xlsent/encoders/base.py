"""The Encoder contract shared by every backend, method and evaluation."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from xlsent.data.text_input import lone_surrogate
from xlsent.inference import DEFAULT_BATCH_TOKENS


@runtime_checkable
class Encoder(Protocol):
    """Maps sentences to a ``(len(sentences), dim)`` float32 array of L2-normalised rows.

    Row ``i`` always belongs to the ``i``-th sentence in iteration order (:func:`sentence_list`). Empty sentences map
    to a zero row.
    """

    name: str
    dim: int

    def encode(
        self,
        sentences: Sequence[str],
        lang: str | None = None,
        *,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        progress: bool = False,
    ) -> np.ndarray: ...


@runtime_checkable
class HiddenStateEncoder(Encoder, Protocol):
    """An encoder that also exposes per-layer sum-pooled token states (for DuEAM, dual-pivot)."""

    num_layers: int

    def layer_pooled(
        self, sentences: Sequence[str], *, batch_tokens: int = DEFAULT_BATCH_TOKENS, progress: bool = False
    ) -> tuple[np.ndarray, np.ndarray]: ...


def sentence_list(sentences: Iterable[str]) -> list[str]:
    """``sentences`` as a list of str in iteration order (a pandas Series by position, a generator read once);
    TypeError for a single str or bytes (a sequence of characters) and for an item that is not a str, naming its
    position; ValueError for a lone surrogate. Every encoder's ``encode`` reads its sentences through it.

    >>> sentence_list(s for s in ("a", "b"))
    ['a', 'b']
    >>> sentence_list(["a", None])
    Traceback (most recent call last):
    ...
    TypeError: sentence 1 (0-based) is NoneType, not str: give text
    """
    if isinstance(sentences, str | bytes):
        raise TypeError(f"encode takes a list of sentences, not one {type(sentences).__name__} (it would embed each "
                        "character): give [text]")
    if hasattr(sentences, "columns"):  # a table (pandas, polars) iterates over its column names
        raise TypeError(f"encode takes a list of sentences, not a {type(sentences).__name__} (it would embed its "
                        "column names): give one column, e.g. df['text']")
    out = list(sentences)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"sentence {i} (0-based) is {type(text).__name__}, not str: give text")
        if why := lone_surrogate(text):
            raise ValueError(f"sentence {i} (0-based) holds {why}")
    return out


class Named(Protocol):
    """Anything with a name, as encoders and token anchors have."""

    name: str


@runtime_checkable
class Identified(Protocol):
    """An encoder with an id beside its name: the name plus its weights' checksum and backend."""

    id: str


@runtime_checkable
class FromModelDir(Protocol):
    """An encoder that names the model directory it was loaded from (None: built another way, e.g. a hub wheel)."""

    model_dir: Path | None


@runtime_checkable
class Manifested(Protocol):
    """An encoder that carries its model directory's manifest (``xlsent.json``), as read when it was loaded."""

    manifest: dict[str, Any]


@runtime_checkable
class Switchable(Protocol):
    """An encoder that runs on the inference backends (``torch``, ``onnx``, ``openvino``, ...)."""

    def use_backend(self, backend: str) -> None: ...


@runtime_checkable
class OwnAutoBackend(Protocol):
    """A :class:`Switchable` encoder whose ``auto`` is a rule of its own, not the measured backend table's."""

    def auto_backend(self) -> str: ...


@runtime_checkable
class Windowed(Protocol):
    """A transformer encoder: content token ids, windows of ``max_tokens``, and encoding from ids tokenized once."""

    max_tokens: int

    def content_ids(self, sentences: Sequence[str]) -> list[list[int]]: ...

    def encode_content(self, content: Sequence[Sequence[int]], lang: str | None = None, *,
                       batch_tokens: int = DEFAULT_BATCH_TOKENS) -> np.ndarray: ...


@runtime_checkable
class LanguageChecked(Protocol):
    """An encoder whose vectors go through a part of the model chosen by the language (a map per source language):
    the languages its load check (:func:`xlsent.encoders.registry.check_output`) encodes a sentence in, so that each
    such part is proved."""

    check_langs: tuple[str | None, ...]


@runtime_checkable
class WholeSentenceTokens(Protocol):
    """An encoder that reads each sentence whole as one token sequence (LASER's SentencePiece, static averages)."""

    def token_ids(self, sentences: Sequence[str]) -> list[list[int]]: ...


def l2_normalize(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Return a copy of ``x`` with unit-length rows (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.where(norms > eps, x / np.maximum(norms, eps), 0.0).astype(np.float32)
