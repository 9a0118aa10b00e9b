"""Every docstring example in the package runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import xlsent

MODULES = sorted(m.name for m in pkgutil.walk_packages(xlsent.__path__, "xlsent.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
