"""Property tests of the configuration parser: TOML layers and ``--set`` values either build the configuration
they say or fail with a :class:`ConfigError` (a file's naming the file); a written configuration reads back equal."""

from __future__ import annotations

import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from xlsent.training.config import ConfigError, TrainConfig, build_config, read_layers, to_toml


def toml_value(value: Any) -> str:
    """One value (no table) as TOML writes it on the right of ``=``."""
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")


SETTINGS = settings(max_examples=80, deadline=None)


@dataclass
class Kinds(TrainConfig):
    """A key of every kind the parser reads: text, whole and real numbers, lists of them, optional, flag."""

    mode: str = "a"
    width: int = 8
    scale: float = 1.0
    names: list[str] = field(default_factory=list)
    weights: list[float] = field(default_factory=lambda: [0.5])
    layer: int | None = None
    flag: bool = False


DEFAULTS = "steps = 10\nwidth = 4\n[b]\nwidth = 16\n"
TEXT = st.text(st.characters(codec="utf-8"), max_size=20)
"""Any Unicode, control characters (which TOML needs escaped) included."""
FINITE = st.floats(allow_nan=False, allow_infinity=False)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "mode": TEXT.filter(lambda s: s.strip().lower() not in ("none", "null")), "width": st.integers(-10**9, 10**9),
    "scale": FINITE, "names": st.lists(TEXT, max_size=4),
    "weights": st.lists(FINITE, max_size=3), "layer": st.none() | st.integers(-5, 50),
    "flag": st.booleans(), "steps": st.integers(1, 10**6), "lr": st.floats(1e-9, 10.0),
    "seed": st.integers(0, 2**31),
}
ANY_VALUE = st.recursive(st.booleans() | st.integers() | FINITE | TEXT,
                         lambda inner: st.lists(inner, max_size=3), max_leaves=6)


@SETTINGS
@given(st.fixed_dictionaries({}, optional=VALUES))
def test_a_written_configuration_reads_back_equal(values: dict[str, Any]) -> None:
    config = build_config(Kinds, [values])
    assert build_config(Kinds, [to_toml(config)]) == config
    assert {k: getattr(config, k) for k in values} == {k: as_read(k, v) for k, v in values.items()}


@SETTINGS
@given(st.sampled_from(sorted(VALUES)).flatmap(lambda k: st.tuples(st.just(k), VALUES[k])))
def test_set_takes_every_value_written_as_toml(item: tuple[str, Any]) -> None:
    key, value = item
    text = "none" if value is None else toml_value(value)  # strings quoted, as TOML writes them
    config = build_config(Kinds, [DEFAULTS], sets=[f"{key}={text}"])
    assert getattr(config, key) == as_read(key, value)


@SETTINGS
@given(st.text(st.characters(codec="utf-8"), max_size=30), st.text(st.characters(codec="utf-8"), max_size=30))
def test_any_set_builds_or_is_a_config_error(key: str, raw: str) -> None:
    try:
        build_config(Kinds, [DEFAULTS], sets=[f"{key}={raw}"])
    except ConfigError as exc:
        assert str(exc)


@SETTINGS
@given(st.dictionaries(st.sampled_from([*VALUES, "unknown", "b"]), ANY_VALUE, max_size=5))
def test_any_toml_layer_builds_what_it_says_or_is_a_config_error(table: dict[str, Any]) -> None:
    text = tomli_w.dumps(table)
    try:
        config = build_config(Kinds, [DEFAULTS, text])
    except ConfigError as exc:
        assert str(exc)
        return
    for key, value in tomllib.loads(text).items():
        assert getattr(config, key) == as_read(key, value)


def as_read(key: str, value: Any) -> Any:
    """What a key of :class:`Kinds` holds after reading ``value``: whole numbers as reals where reals are expected,
    a string split at commas where a list is."""
    if key in ("names", "weights") and isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if key == "weights":
        return [float(v) for v in value]
    return float(value) if key == "scale" else value


@SETTINGS
@given(st.binary(max_size=60))
def test_a_config_file_that_is_not_toml_is_named(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "my.toml"
        path.write_bytes(data)
        try:
            read_layers(DEFAULTS, [path])
        except ConfigError as exc:
            assert str(exc).startswith(f"{path}: ")


@pytest.mark.parametrize("mode", ["[]", "[\"b\"]", "{ x = 1 }"])
def test_a_mode_that_is_not_a_string_is_a_config_error(mode: str) -> None:
    with pytest.raises(ConfigError, match="mode"):
        build_config(Kinds, [DEFAULTS, f"mode = {mode}\n"])


def test_a_string_with_del_reads_back() -> None:
    config = build_config(Kinds, [{"mode": "a\x7fb"}])
    assert build_config(Kinds, [to_toml(config)]) == config


def test_a_misspelt_mode_table_is_named() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "my.toml"
        path.write_text("[bb]\nwidth = 3\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=r"my\.toml: unknown table\(s\) \[bb\]"):
            read_layers(DEFAULTS, [path])
