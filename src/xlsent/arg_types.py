"""argparse types of numbers that the command line, the studies and the benchmarks share."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

Number = TypeVar("Number", int, float)


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, not {text!r}")
    return value


def share(text: str) -> float:
    """argparse type: a share of the whole, above 0 and at most 1.

    >>> share("0.2"), share("1")
    (0.2, 1.0)
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be a share in (0, 1], not {text!r}")
    return value


def non_negative(kind: type[Number]) -> Callable[[str], Number]:
    """argparse type: a finite ``kind`` (int or float) of at least 0, for an option whose help says what 0 means (the
    other counts and sizes take :func:`positive_int` or :func:`positive_float`)."""
    what = "a whole number" if kind is int else "a finite number"

    def parse(text: str) -> Number:
        try:
            value = kind(text)
        except ValueError:
            value = kind(-1)
        if not (math.isfinite(value) and value >= 0):
            raise argparse.ArgumentTypeError(f"must be {what} of at least 0, not {text!r}")
        return value

    return parse
