"""The Encoder contract shared by every backend, method and evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from xlsent.inference import DEFAULT_BATCH_TOKENS


@runtime_checkable
class Encoder(Protocol):
    """Maps sentences to a ``(len(sentences), dim)`` float32 array of L2-normalised rows.

    Row ``i`` always belongs to ``sentences[i]``. Empty sentences map to a zero row.
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


def l2_normalize(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Return a copy of ``x`` with unit-length rows (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.where(norms > eps, x / np.maximum(norms, eps), 0.0).astype(np.float32)
