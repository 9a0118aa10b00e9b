"""Fixtures shared by the method tests: a home folder of the test's own, the real parallel data, toy pairs for the
mapping methods, a training run killed part-way (to test resuming), and the tolerance of a bf16 backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import numpy as np
import pytest
import torch

from xlsent.data.bitext import Bitext
from xlsent.encoders.backends import cpu_flags
from xlsent.methods.mapping.data import PairData, split_rows
from xlsent.testing import dataset_or_skip
from xlsent.training import loop


@pytest.fixture()
def xlsent_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$XLSENT_HOME`` (encoding cache, checksums) set to a folder in the test's temporary folder."""
    home = tmp_path / "home"
    monkeypatch.setenv("XLSENT_HOME", str(home))
    return home


BF16_ROUNDOFF = 2.0**-8
"""bf16 keeps 8 significant bits: rounding a value to bf16 moves it by at most this fraction of itself."""
BF16_ROUNDINGS = 4
"""bf16 roundings a tiny model's unit vector may carry: each of its few matrix products rounds its inputs once."""


@pytest.fixture()
def bf16_atol() -> float:
    """How far a bf16 backend may move an entry of a tiny model's unit vectors from its fp32 backend (a wrong row,
    layer weight or map moves entries by tenths). Skips the test on a CPU without bf16 matrix instructions (AMX,
    AVX512-BF16), where the bf16 backends run in fp32 and any comparison with fp32 would hold."""
    if not {"amx_bf16", "avx512_bf16"} & cpu_flags():
        pytest.skip("this CPU has no bf16 matrix instructions (AMX, AVX512-BF16): bf16 backends run in fp32 here")
    return BF16_ROUNDINGS * BF16_ROUNDOFF


@pytest.fixture()
def parallel_data() -> Path:
    """The data root holding the parallel corpora and the Tatoeba v1 test files; the test is skipped without them."""
    root = dataset_or_skip("parallel")
    dataset_or_skip("tatoeba_v1")
    return root


def _toy_pair_data(ratio: float = 1.0, valid: int = 0, n: int = 40) -> PairData:
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefghik"), size=rng.integers(3, 7))) for _ in range(n)]
    bitext = Bitext([f"der {w} bellt" for w in words], [f"the {w[::-1]} barks" for w in words], "de", "en")
    return PairData(bitext, *split_rows(n, ratio, valid, seed=0))


@pytest.fixture()
def toy_pair_data() -> Callable[..., PairData]:
    """``make(ratio=1.0, valid=0, n=40)``: ``n`` de-en toy pairs ("der <w> bellt", "the <w reversed> barks") of
    random words, rows split by ``split_rows(n, ratio, valid, seed=0)``."""
    return _toy_pair_data


@pytest.fixture()
def killed_run(monkeypatch: pytest.MonkeyPatch) -> Callable[..., AbstractContextManager[None]]:
    """``with killed_run(n, optimizer=None): fit(...)``: the ``n``-th ``Trainer.update`` call (counting those of
    ``optimizer`` only, when given) raises KeyboardInterrupt as a killed run would; the block must end that way,
    and updates work again after it."""

    @contextmanager
    def killed(n: int, optimizer: str | None = None) -> Iterator[None]:
        update = loop.Trainer.update
        calls: list[str] = []

        def dies(self: loop.Trainer, name: str, loss: torch.Tensor, **kw: bool) -> None:
            calls.append(name)
            if (calls.count(optimizer) if optimizer else len(calls)) == n:
                raise KeyboardInterrupt
            update(self, name, loss, **kw)

        monkeypatch.setattr(loop.Trainer, "update", dies)
        try:
            with pytest.raises(KeyboardInterrupt):
                yield
        finally:
            monkeypatch.setattr(loop.Trainer, "update", update)

    return killed
