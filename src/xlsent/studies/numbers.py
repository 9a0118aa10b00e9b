"""The one way a verdict's evidence prints numbers: as few decimals as tell the compared values apart.

>>> versus(73.5, 74.1), versus(95.04, 95.01), listing({"10%": 15.0, "20%": 25.04, "40%": 25.01})
('73.5 vs 74.1', '95.04 vs 95.01', '10% 15.00, 20% 25.04, 40% 25.01')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping


def decimals(values: Iterable[float], least: int = 1, most: int = 4) -> int:
    """The fewest decimals (from ``least`` to ``most``) at which the distinct finite ``values`` print differently.

    >>> decimals([73.04, 73.03, 72.9]), decimals([1.0, 1.0]), decimals([0.5, float("nan")])
    (2, 1, 1)
    """
    distinct = {v for v in values if math.isfinite(v)}
    digits = least
    while digits < most and len({f"{v:.{digits}f}" for v in distinct}) < len(distinct):
        digits += 1
    return digits


def apart(*values: float) -> Callable[[float], str]:
    """A formatter printing numbers with the :func:`decimals` that tell ``values`` apart.

    >>> f = apart(60.04, 60.01); f(60.04), f(7.0)
    ('60.04', '7.00')
    """
    digits = decimals(values)
    return lambda value: f"{value:.{digits}f}"


def versus(a: float, b: float) -> str:
    """``"a vs b"`` with the decimals that tell the two apart."""
    f = apart(a, b)
    return f"{f(a)} vs {f(b)}"


def listing(scores: Mapping[str, float]) -> str:
    """``"name value, ..."`` with the decimals that tell the values apart."""
    f = apart(*scores.values())
    return ", ".join(f"{name} {f(value)}" for name, value in scores.items())
