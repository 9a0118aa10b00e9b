"""Fixtures of the encoder tests: weights files made unusable in place."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def nan_in_last_row(path: Path, tensor: str) -> None:
    """The last row of ``tensor`` in the safetensors file ``path`` NaN (for the tiny models' word embeddings: the token
    ``:``, which the check sentence at load does not use, so its vector does not show it)."""
    from safetensors.torch import load_file, save_file

    state = load_file(str(path))
    state[tensor][-1] = float("nan")
    save_file(state, str(path))


@pytest.fixture()
def nan_row() -> Callable[[Path, str], None]:
    """:func:`nan_in_last_row`."""
    return nan_in_last_row
