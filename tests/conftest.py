"""Shared fixtures: a tiny random transformer model directory, and the real default model (converted once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from xlsent.encoders.transformer import TransformerEncoder
from xlsent.testing import make_tiny_model_dir

FIXTURES = Path(__file__).parent / "fixtures"
@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_model_dir(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def tiny_encoder(tiny_model_dir: Path) -> TransformerEncoder:
    torch.manual_seed(0)
    return TransformerEncoder(tiny_model_dir)


@pytest.fixture(scope="session")
def default_encoder() -> TransformerEncoder:
    """The real default model (me5-small), converted into the cache once per machine."""
    from xlsent.encoders.me5_convert import prepare_default_model

    try:
        directory = prepare_default_model()
    except FileNotFoundError as exc:
        pytest.skip(f"default model unavailable: {exc}")
    return TransformerEncoder(directory, name="me5-small")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    from xlsent.paths import data_root

    try:
        return data_root()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.fixture()
def one_torch_thread() -> Iterator[None]:
    """Tiny tensors: extra intra-op threads only add contention on a shared machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
