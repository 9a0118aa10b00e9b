"""Fixtures of the alignment tests."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def align_bench(bench_script: Callable[[str], ModuleType]) -> ModuleType:
    """``benchmarks/align_bench.py`` loaded as a module."""
    return bench_script("align_bench")
