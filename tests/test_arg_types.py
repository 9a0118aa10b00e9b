"""The argparse number types that the command line, the studies and the benchmarks share."""

from __future__ import annotations

import argparse

import pytest

from xlsent.arg_types import non_negative


def test_the_non_negative_type_takes_zero_and_refuses_the_rest() -> None:
    assert non_negative(int)("0") == 0 and non_negative(float)("0.5") == 0.5
    for kind, text in ((int, "-1"), (int, "1.5"), (float, "-0.1"), (float, "inf"), (float, "nan")):
        with pytest.raises(argparse.ArgumentTypeError, match=f"at least 0, not '{text}'"):
            non_negative(kind)(text)
