"""Settings files: the one reader of every settings file xlsent reads (``xlsent filter --config``, ``xlsent serve
--config``, the fields of a Hugging Face ``config.json``), each value checked against the type of the dataclass field
it sets.

A value of the wrong type is an error naming the file and the key, never taken as something else: ``"false"`` (a
string) is not false, ``1`` is not true, ``1.5`` is not a whole number, ``nan`` is no setting; a whole number where
a number is expected is that number (``3`` for ``3.0``), a list where a tuple is expected that tuple. A key that no
field has is an error listing the known ones.

>>> from dataclasses import dataclass
>>> @dataclass
... class Toy:
...     on: bool = True
...     width: int = 8
...     ratio: float = 1.5
>>> typed_fields(Toy, {"width": 4, "ratio": 2}, "toy.toml")
{'width': 4, 'ratio': 2.0}
>>> typed_fields(Toy, {"on": "false"}, "toy.toml")
Traceback (most recent call last):
...
xlsent.settings_file.SettingsError: toy.toml: on = 'false': expected true or false, not a string (write it \
without quotes)
>>> typed_fields(Toy, {"width": 1.5}, "toy.toml")
Traceback (most recent call last):
...
xlsent.settings_file.SettingsError: toy.toml: width = 1.5: expected a whole number, not a number with a fraction
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class SettingsError(ValueError):
    """A settings file cannot be read, or one of its keys is unknown or holds a value of the wrong type."""


def _words(kind: Any) -> str:
    """What a value of the annotation ``kind`` is, in words.

    >>> _words(bool), _words(float | str), _words(tuple[str, ...])
    ('true or false', 'a number or a string', 'a list of strings')
    """
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_words(option) for option in typing.get_args(kind) if option is not type(None))
    if origin in (list, tuple):
        return f"a list of {_words(typing.get_args(kind)[0]).removeprefix('a ')}s"
    return {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}.get(
        kind, getattr(kind, "__name__", str(kind)))


def _kind_of(value: Any) -> str:
    """What ``value`` is, in the words of :func:`_words`."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} (no setting is nan or inf)"
    if isinstance(value, float) and not value.is_integer():
        return "a number with a fraction"
    for kind in (bool, int, float, str):
        if type(value) is kind:
            return _words(kind)
    if isinstance(value, list | tuple):
        return "a list"
    return "a table" if isinstance(value, dict) else type(value).__name__


def typed_value(key: str, value: Any, kind: Any, where: str) -> Any:
    """``value`` checked against the annotation ``kind`` (a whole number taken for a float, a list for a tuple);
    :class:`SettingsError` naming ``where`` (the file) and ``key`` otherwise."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(kind)
        if value is None and type(None) in options:
            return None
        for option in options:
            if option is not type(None):
                try:
                    return typed_value(key, value, option, where)
                except SettingsError:
                    continue
    elif origin in (list, tuple) and isinstance(value, list | tuple):
        item = typing.get_args(kind)[0]
        items = [typed_value(f"{key}[{i}]", v, item, where) for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    elif kind is float and type(value) in (int, float):
        if not math.isfinite(value):
            raise SettingsError(f"{where}: {key} = {value!r}: expected a finite number (nan and inf are no setting)")
        return float(value)
    elif kind is Any or (kind in (bool, int, str) and type(value) is kind):
        return value
    hint = " (write it without quotes)" if isinstance(value, str) and _unquoted_fits(value, kind) else ""
    raise SettingsError(f"{where}: {key} = {value!r}: expected {_words(kind)}, not {_kind_of(value)}{hint}")


def _unquoted_fits(text: str, kind: Any) -> bool:
    """Whether the string ``text``, written without quotes, would be a TOML value of the type ``kind``."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
        typed_value("v", value, kind, "")
    except (tomllib.TOMLDecodeError, SettingsError):
        return False
    return True


def field_types(cls: type) -> dict[str, Any]:
    """The annotation of each field of the dataclass ``cls``, by name."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def typed_fields(cls: type, values: Mapping[str, Any], where: str, what: str = "setting") -> dict[str, Any]:
    """``values``, each checked against the field of its name of the dataclass ``cls`` (:func:`typed_value`); a key
    that is no field is a :class:`SettingsError` naming ``where`` and listing the known keys (``what``: what a key
    is called in the message)."""
    kinds = field_types(cls)
    unknown = sorted(set(values) - set(kinds))
    if unknown:
        raise SettingsError(f"{where}: unknown {what}(s) {', '.join(unknown)}; known: {', '.join(sorted(kinds))}")
    return {key: typed_value(key, value, kinds[key], where) for key, value in values.items()}


def read_toml(path: str | Path) -> dict[str, Any]:
    """The table in the TOML file ``path``; a missing, unreadable or malformed file is a :class:`SettingsError`
    naming it."""
    path = Path(path)
    if not path.is_file():
        raise SettingsError(f"{path}: no such settings file" if not path.exists() else f"{path}: is not a file")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc})") from exc


def read_settings(cls: type, path: str | Path, *, table: str | None = None, what: str = "setting"
                  ) -> dict[str, Any]:
    """The settings of the TOML file ``path`` for the dataclass ``cls``, typed (:func:`typed_fields`): its top-level
    keys, or with ``table`` those under ``[table]`` (a file holds one or the other: a key beside that table is an
    error, never silently left out)."""
    raw = read_toml(path)
    if table is not None and table in raw:
        outside = sorted(key for key in raw if key != table)
        if outside:
            raise SettingsError(f"{path}: key(s) {', '.join(outside)} outside [{table}]; put every {what} under "
                                f"[{table}], or none")
        if not isinstance(raw[table], dict):
            raise SettingsError(f"{path}: {table} = {raw[table]!r}: expected a table [{table}]")
        raw = raw[table]
    return typed_fields(cls, raw, str(path), what)
