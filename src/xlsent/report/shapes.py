"""The shapes of the JSON that ``xlsent report`` reads (result files, benchmark records), checked once as a file is
read, so that a field of the wrong type is named there instead of failing in a table or plot.

A shape is a type hint: ``str``, ``bool``, ``float`` (a JSON number, see :func:`is_number`), ``None``, ``Any``, a
union, ``dict[str, V]``, ``list[V]``, or a ``TypedDict`` (its required keys present; other keys are not checked).
"""

from __future__ import annotations

import json
import types
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict

LARGEST = 1e15
"""The largest size of a number the report shows: a score (percent), a count of sentences or a time is far below
it; one above it (``1e308``, an overflowing integer) is a corrupt field, not a figure (floats stop holding every
whole number at 2**53, about 9e15)."""


def is_number(value: Any) -> bool:
    """Whether ``value`` is a JSON number the report can show: not a boolean, not infinite, smaller than
    :data:`LARGEST`; NaN is one (a score that could not be computed, shown as ``-``).

    >>> is_number(93.5), is_number(float("nan")), is_number(True), is_number(float("inf")), is_number(10**400)
    (True, True, False, False, False)
    """
    return isinstance(value, int | float) and not isinstance(value, bool) and not abs(value) >= LARGEST


def describe(shape: Any) -> str:
    """What a value of ``shape`` is, in words.

    >>> describe(str | None), describe(dict[str, float]), describe(float)
    ('a string or null', 'an object', 'a number (below 1e+15 in size)')
    """
    if get_origin(shape) in (Union, types.UnionType):
        return " or ".join(describe(s) for s in get_args(shape))
    if shape is float:
        return f"a number (below {LARGEST:g} in size)"
    names = {str: "a string", bool: "true or false", None: "null", type(None): "null", list: "a list"}
    return names.get(get_origin(shape) or shape, "an object")


def _shown(value: Any) -> str:
    """``value`` as JSON, cut to 60 characters."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _fits_alone(value: Any, shape: Any) -> bool:
    """Whether ``value`` is of ``shape``'s kind, its items not looked at."""
    if shape is Any:
        return True
    if get_origin(shape) in (Union, types.UnionType):
        return any(_fits_alone(value, s) for s in get_args(shape))
    if shape is None or shape is type(None):
        return value is None
    if shape is float:
        return is_number(value)
    if shape in (str, bool):
        return isinstance(value, shape)
    return isinstance(value, get_origin(shape) or dict)


def shape_problem(value: Any, shape: Any, where: str) -> str | None:
    """Where ``value`` (named ``where``, e.g. ``scores``) departs from ``shape``, in words; None when it fits.

    >>> shape_problem({"afr": {"mean": "x"}}, dict[str, dict[str, float]], "scores")
    'scores["afr"]["mean"] is "x", not a number (below 1e+15 in size)'
    >>> shape_problem([1, None], list[float | None], "x") is None
    True
    """
    if not _fits_alone(value, shape):
        return f"{where} is {_shown(value)}, not {describe(shape)}"
    if get_origin(shape) in (Union, types.UnionType):
        return shape_problem(value, next(s for s in get_args(shape) if _fits_alone(value, s)), where)
    if is_typeddict(shape):
        hints = get_type_hints(shape)
        missing = [key for key in sorted(shape.__required_keys__) if key not in value]
        if missing:
            return f"{where or 'the record'} lacks {', '.join(missing)}"
        items = [(f"{where}.{key}" if where else key, value[key], hints[key]) for key in hints if key in value]
    elif get_origin(shape) is dict:
        items = [(f"{where}[{json.dumps(key, ensure_ascii=False)}]", v, get_args(shape)[1]) for key, v in value.items()]
    elif get_origin(shape) is list:
        items = [(f"{where}[{i}]", v, get_args(shape)[0]) for i, v in enumerate(value)]
    else:
        return None
    return next((p for p in (shape_problem(v, s, w) for w, v, s in items) if p), None)
