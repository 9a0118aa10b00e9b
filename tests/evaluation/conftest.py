"""Fixtures shared by the evaluation tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from xlsent.encoders.base import Encoder


class RecordingEmbed:
    """An ``EmbedFn`` giving an encoder's vectors without the encoding cache, recording (rows, language) per call."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.calls: list[tuple[int, str | None]] = []

    def __call__(self, sentences: Sequence[str], lang: str | None) -> np.ndarray:
        self.calls.append((len(sentences), lang))
        return self.encoder.encode(sentences, lang)


@pytest.fixture
def recording_embed() -> type[RecordingEmbed]:
    """The :class:`RecordingEmbed` class, to wrap a toy encoder in a test."""
    return RecordingEmbed
