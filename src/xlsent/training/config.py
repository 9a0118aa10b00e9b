"""Method configuration: dataclasses filled from packaged TOML defaults, TOML files and ``--set key=value``.

Layers, each overriding the one before: the method's packaged defaults (``xlsent/configs/<method>.toml``), the
files given with ``--config``, then ``--set`` pairs. Inside each TOML layer, top-level keys come first and the
table named after the chosen mode (e.g. ``[supervised]``) after them. Values are checked against the dataclass
field types, so ``--set steps=abc`` is an error naming the pair and the type it expects, and every float is checked
finite (``--set lr=inf`` or a weight of ``nan`` in a TOML file is an error naming the file and the key). Every mode
table of a ``--config`` file is checked, the ones the run does not pick too, and each error names where its values
came from: ``t.toml [supervised]: steps = 0`` or ``--set steps=0``.

Every method's config derives from :class:`TrainConfig` (the keys the training loop reads). A fingerprint of the
effective configuration goes into every checkpoint and model directory; resuming with another one is an error.

>>> from dataclasses import dataclass
>>> @dataclass
... class Toy(TrainConfig):
...     mode: str = "a"
...     width: int = 8
>>> cfg = build_config(Toy, ['steps = 10', 'width = 4\\n[b]\\nwidth = 16'], sets=["lr=0.5"], mode="b")
>>> cfg.steps, cfg.width, cfg.lr, cfg.mode
(10, 16, 0.5, 'b')
>>> parse_assignment("de-en,ar-en", list[str])
['de-en', 'ar-en']
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import tomllib
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import tomli_w

SCHEDULES = ("constant", "linear", "cosine")
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("fp32", "bf16")
SEED_LIMIT = 2**32
"""Seeds run from 0 to one below this (NumPy's global generator takes no other)."""


class ConfigError(ValueError):
    """A configuration key or value is unknown, mistyped or inconsistent."""


@dataclass
class TrainConfig:
    """The keys every method shares: what the training loop, checkpoints and validation read.

    ``warmup_steps`` ramps the learning rate linearly from 0; ``schedule`` then keeps it (``constant``) or decays
    it to 0 at ``steps`` (``linear``, ``cosine``). ``grad_clip`` > 0 clips the global gradient norm of each
    optimizer's parameters. ``eval_every`` > 0 runs the method's validation (and keeps the best checkpoint).
    ``precision = "bf16"`` runs each training step under ``torch.autocast`` in bfloat16 (matrix work on AMX
    CPUs and recent GPUs; weights, optimizer state and validation stay float32) where the hardware has native bf16
    matrix instructions, and fp32 elsewhere (:func:`xlsent.training.loop.resolve_precision`).

    Keys added after models were trained are listed in ``LATER_KEYS`` with the value that older configurations
    meant; at that value they are left out of the fingerprint, so those models keep theirs.
    """

    NOT_FINGERPRINTED: ClassVar[frozenset[str]] = frozenset(
        {"checkpoint_every", "log_every", "device", "progress"})
    LATER_KEYS: ClassVar[dict[str, Any]] = {"precision": "fp32"}
    MIN_STEPS: ClassVar[int] = 1
    """The least ``steps`` (0 where the method does not train step by step or derives them)."""

    seed: int = 0
    device: str = "auto"
    steps: int = 1000
    lr: float = 1e-3
    warmup_steps: int = 0
    schedule: str = "constant"
    grad_clip: float = 0.0
    checkpoint_every: int = 500
    log_every: int = 50
    eval_every: int = 0
    precision: str = "fp32"

    @classmethod
    def file_values(cls, table: Mapping[str, Any], source: Path) -> dict[str, Any]:
        """The values of ``table``, the ``--config`` file ``source``'s, as read from the file's folder (its relative
        paths); none here: the keys of a subclass that names files override it."""
        return {}

    def check(self) -> None:
        """Raise :class:`ConfigError` for inconsistent values; subclasses extend it with their own rules."""
        problems = self.problems()
        if problems:
            raise ConfigError(f"invalid {type(self).__name__}: " + "; ".join(problems))

    def problems(self) -> list[str]:
        """What is wrong with the values (empty when consistent)."""
        out = []
        if not 0 <= self.seed < SEED_LIMIT:
            out.append(f"seed must be a whole number >= 0 and < 2**32 (--seed, or the key seed), not {self.seed}")
        if self.steps < self.MIN_STEPS:
            out.append(f"steps must be >= {self.MIN_STEPS}, not {self.steps}")
        if self.warmup_steps < 0 or self.eval_every < 0:
            out.append("warmup_steps and eval_every must be >= 0")
        if self.checkpoint_every < 1 or self.log_every < 1:
            out.append("checkpoint_every and log_every must be >= 1")
        out += self.one_of(schedule=SCHEDULES, device=DEVICES, precision=PRECISIONS)
        if self.lr <= 0 or self.grad_clip < 0:
            out.append("lr must be > 0 and grad_clip >= 0")
        return out

    def one_of(self, **choices: Sequence[str]) -> list[str]:
        """A problem for each named key whose value is not among its choices.

        >>> TrainConfig(schedule="steep").one_of(schedule=SCHEDULES)
        ["schedule must be one of ('constant', 'linear', 'cosine'), not 'steep'"]
        """
        return [f"{key} must be one of {tuple(options)}, not {getattr(self, key)!r}"
                for key, options in choices.items() if getattr(self, key) not in options]

    def at_least(self, minimum: float, *keys: str) -> list[str]:
        """A problem for each named key whose value is below ``minimum``.

        >>> TrainConfig(warmup_steps=-2).at_least(0, "warmup_steps", "eval_every")
        ['warmup_steps must be >= 0, not -2']
        """
        return [f"{key} must be >= {minimum}, not {getattr(self, key)}" for key in keys if getattr(self, key) < minimum]

    def dropouts(self, *keys: str) -> list[str]:
        """A problem for each named key (a dropout probability) outside [0, 1).

        >>> TrainConfig().dropouts()
        []
        """
        return [f"{key} must be in [0, 1) (a dropout probability), not {getattr(self, key)}" for key in keys
                if not 0 <= getattr(self, key) < 1]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def fingerprinted(self) -> dict[str, Any]:
        """The keys that shape the training trajectory (not logging or device; a later key at its old meaning
        is left out)."""
        return {k: v for k, v in self.to_dict().items()
                if k not in self.NOT_FINGERPRINTED and not (k in self.LATER_KEYS and self.LATER_KEYS[k] == v)}

    def differing_keys(self, saved: dict[str, Any]) -> list[str]:
        """``key old -> new`` for each fingerprinted key whose value in the ``saved`` config (a model's) differs."""
        mine = self.fingerprinted()
        return [f"{k} {saved.get(k, self.LATER_KEYS.get(k))!r} -> {v!r}" for k, v in sorted(mine.items())
                if saved.get(k, self.LATER_KEYS.get(k)) != v]

    def fingerprint(self) -> str:
        """16 hex digits identifying the values that shape the training trajectory (not logging or device)."""
        kept = self.fingerprinted()
        return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


C = TypeVar("C", bound=TrainConfig)


def _field_types(cls: type[TrainConfig]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _coerce(key: str, value: Any, kind: Any) -> Any:
    """``value`` checked against (and, for int -> float, converted to) the annotation ``kind``."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(kind)
        unset = value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null"))
        if unset and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(key, value, option)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0])
    if origin in (list, tuple):  # a tuple field is read as a list is (tuple[str, ...]: items of one type)
        item = typing.get_args(kind)[0]
        if isinstance(value, str):
            value = [_item(key, v.strip(), item) for v in value.split(",") if v.strip()]
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{key} expects a list, got {value!r}")
        items = [_coerce(key, v, item) for v in value]
        return tuple(items) if origin is tuple else items
    if dataclasses.is_dataclass(kind) and isinstance(kind, type) and hasattr(kind, "coerce"):
        try:
            return kind.coerce(value)
        except ValueError as exc:
            raise ConfigError(f"{key}: {exc}") from exc
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind in (int, float, str, bool) and (type(value) is not kind):
        raise ConfigError(f"{key} expects {kind.__name__}, got {value!r}")
    if kind is float and not math.isfinite(value):
        raise ConfigError(f"{key} must be a finite number, not {value!r}: nan and inf would train a model of NaN "
                          "weights")
    return value


def _item(key: str, text: str, kind: Any) -> Any:
    """One item of a comma-separated list: a number or boolean as TOML reads it where the items are numbers or
    booleans (``4`` of ``gen_hidden=4,8``), else the text."""
    return parse_assignment(text, kind, key) if kind in (int, float, bool) else text


def parse_assignment(raw: str, kind: Any, key: str = "value") -> Any:
    """The value of a ``--set`` right-hand side: TOML syntax if it parses (``3``, ``1e-3``, ``true``,
    ``["a", "b"]``), else the bare string; ``none`` / ``null`` unset an optional key; commas split lists."""
    optional = typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in typing.get_args(kind)
    if optional and raw.strip().lower() in ("none", "null"):
        return None
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    try:
        return _coerce(key, value, kind)
    except ConfigError as typed:
        if isinstance(value, str):
            raise
        try:
            return _coerce(key, raw, kind)
        except ConfigError:
            raise typed from None


def _layer(table: Mapping[str, Any], mode: str | None, modes: Sequence[str]) -> dict[str, Any]:
    merged = {k: v for k, v in table.items() if not (k in modes and isinstance(v, dict))}
    if mode is not None and isinstance(table.get(mode), dict):
        merged.update(table[mode])
    return merged


def build_config(cls: type[C], layers: Sequence[str | dict[str, Any]], *, sets: Sequence[str] = (),
                 mode: str | None = None, overrides: Mapping[str, Any] | None = None,
                 adjust: Callable[[C], C] | None = None, what: str | None = None) -> C:
    """A ``cls`` from TOML ``layers`` (texts or parsed tables, later ones win), ``key=value`` sets, then
    ``overrides`` (typed values, which win over both: what a study fixes for one of its rows); its values typed,
    then ``adjust`` applied (values the caller adds), then checked.

    ``mode`` picks the per-mode tables; without it the last ``mode`` key of the layers (or of ``sets``) is used.
    Tables named after any mode are never read as keys. Every value of a ``--config`` file (a :class:`FileLayer`) is
    typed, in every mode table, and each mode table the run does not pick is checked as that mode would read it:
    a file holds no wrong value that a later run would meet. Each error names where its values came from (the file
    and its table, or the ``--set`` pair) and ``what`` the settings are for (the method; by default the class).
    """
    tables = [tomllib.loads(t) if isinstance(t, str) else t for t in layers]
    types_ = _field_types(cls)
    what = what or cls.__name__
    assignments = _assignments(sets, types_)
    modes = [t for table in tables for t, v in table.items() if isinstance(v, dict)]
    if mode is None:
        mode = assignments["mode"][0] if "mode" in assignments else next(
            (t["mode"] for t in reversed(tables) if "mode" in t), None)
    else:
        check_mode_given_once(mode, {k: v for k, (v, _) in assignments.items()}, tables)
    if mode is not None and not isinstance(mode, str):
        raise ConfigError(f"mode expects str (the name of a mode), got {mode!r}")
    _refuse_unknown_keys(tables, set(overrides or {}), types_, modes, what)
    _type_files(tables, types_)
    config, origin = _merged(cls, tables, mode, modes, assignments, overrides or {}, adjust)
    _refuse(config.problems(), origin, f"invalid {what} settings")
    for table in [t for t in tables if isinstance(t, FileLayer)]:
        for name in _other_modes(table, mode):
            without = FileLayer({k: v for k, v in table.items() if k != name}, table.source)
            other, origin = _merged(cls, tables, name, modes, assignments, overrides or {}, adjust)
            before, _ = _merged(cls, [without if t is table else t for t in tables], name, modes, assignments,
                                overrides or {}, adjust)
            _refuse([p for p in other.problems() if p not in before.problems()], origin,
                    f"{table.source} [{name}]: invalid {what} settings for mode {name}")
    return config


def _assignments(sets: Sequence[str], types_: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    """Each ``key=value`` of ``sets`` (``--set``) typed: key -> (value, the pair as given), an error naming the pair
    otherwise."""
    assignments = {}
    for item in sets:
        key, sep, raw = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise ConfigError(f"--set {item!r}: expected key=value")
        if key not in types_:
            raise ConfigError(f"--set {item!r}: unknown key {key!r}; known: {', '.join(sorted(types_))}")
        try:
            assignments[key] = (parse_assignment(raw, types_[key], key), f"--set {item}")
        except ConfigError as exc:
            raise ConfigError(f"--set {item}: {exc}") from None
    return assignments


def _refuse_unknown_keys(tables: Sequence[Mapping[str, Any]], overridden: set[str], types_: Mapping[str, Any],
                         modes: Sequence[str], what: str) -> None:
    """An error for the keys of ``tables`` (at their top level and in their mode tables) and of ``overridden``
    that ``types_`` lacks, naming the first file that holds one (and a mode written as a key)."""
    unknown = set().union(overridden, *(_table_keys(t) for t in tables)) - set(types_)
    if unknown:
        files = [t for t in tables if isinstance(t, FileLayer) and _table_keys(t) & unknown]
        shown = sorted(_table_keys(files[0]) & unknown if files else unknown)
        named = f"{files[0].source}: " if files else ""
        hint = "".join(f" ({k} is a mode: its keys go under a table [{k}])" for k in shown if k in modes)
        raise ConfigError(f"{named}unknown {what} key(s) {shown}{hint}; known: {', '.join(sorted(types_))}")


def _type_files(tables: Sequence[Mapping[str, Any]], types_: Mapping[str, Any]) -> None:
    """An error naming the file and table of the first value of a :class:`FileLayer` of ``tables`` (top level or
    any mode table, picked or not) that is not of its key's type."""
    for table in tables:
        if isinstance(table, FileLayer):
            for where, entries in [(str(table.source), table), *(
                    (f"{table.source} [{name}]", own) for name, own in table.items() if isinstance(own, dict))]:
                for key, value in entries.items():
                    if not isinstance(value, dict):
                        try:
                            _coerce(key, value, types_[key])
                        except ConfigError as exc:
                            raise ConfigError(f"{where}: {exc}") from None


def _merged(cls: type[C], tables: Sequence[Mapping[str, Any]], mode: str | None, modes: Sequence[str],
            assignments: Mapping[str, tuple[Any, str]], overrides: Mapping[str, Any],
            adjust: Callable[[C], C] | None) -> tuple[C, dict[str, str]]:
    """The unchecked ``cls`` of ``tables`` as ``mode`` reads them, then ``assignments`` and ``overrides``, with
    ``adjust`` applied; and, by key, where each value a user gave came from (``t.toml [supervised]: steps = 0``,
    ``--set steps=0``)."""
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for table in tables:
        picked = table.get(mode) if mode is not None else None
        for key, value in _layer(table, mode, modes).items():
            values[key] = value
            if isinstance(table, FileLayer):
                where = f"{table.source} [{mode}]" if isinstance(picked, dict) and key in picked else table.source
                origin[key] = f"{where}: {key} = {value!r}"
            else:
                origin.pop(key, None)
    for key, (value, item) in assignments.items():
        values[key], origin[key] = value, item
    types_ = _field_types(cls)
    if mode is not None and "mode" in types_ and values.get("mode") != mode:
        values["mode"] = mode
        origin.pop("mode", None)
    values.update(overrides)
    for key in overrides:
        origin.pop(key, None)
    config = cls(**{k: _coerce(k, v, types_[k]) for k, v in values.items()})
    return (adjust(config) if adjust else config), origin


def _other_modes(table: FileLayer, mode: str | None) -> list[str]:
    """The names of the mode tables of ``table`` other than ``mode``'s."""
    return [k for k, v in table.items() if isinstance(v, dict) and k != mode]


def _refuse(problems: Sequence[str], origin: Mapping[str, str], heading: str) -> None:
    """A :class:`ConfigError` of ``heading`` and the ``problems`` (if any), each naming where the values of the keys
    it names came from (:func:`_sourced`)."""
    if problems:
        raise ConfigError(f"{heading}: " + "; ".join(_sourced(p, origin) for p in problems))


def _sourced(problem: str, origin: Mapping[str, str]) -> str:
    """``problem`` followed by the ``origin`` of each key it names (a value a user gave).

    >>> _sourced("ridge must be >= 0", {"ridge": "t.toml: ridge = -1", "steps": "--set steps=2"})
    'ridge must be >= 0 (t.toml: ridge = -1)'
    """
    named = [text for key, text in origin.items() if re.search(rf"\b{re.escape(key)}\b", problem)]
    return f"{problem} ({'; '.join(named)})" if named else problem


def check_mode_given_once(mode: str, assignments: Mapping[str, Any], tables: Sequence[Mapping[str, Any]]) -> None:
    """Refuse ``--mode`` ``mode`` where the key ``mode`` names another: its last ``--set`` (``assignments``), else
    the last ``--config`` file (a :class:`FileLayer` of ``tables``) that sets it; the settings of one mode would be
    trained as the other.

    >>> check_mode_given_once("a", {"mode": "b"}, [])
    Traceback (most recent call last):
    ...
    xlsent.training.config.ConfigError: --mode a contradicts --set mode=b: give the mode once
    """
    files = [(f"mode = {t['mode']!r} of {t.source}", t["mode"]) for t in tables if isinstance(t, FileLayer)
             and "mode" in t]
    given = [(f"--set mode={assignments['mode']}", assignments["mode"])] if "mode" in assignments else files[-1:]
    if given and given[0][1] != mode:
        raise ConfigError(f"--mode {mode} contradicts {given[0][0]}: give the mode once")


def _table_keys(table: Mapping[str, Any]) -> set[str]:
    """The config keys a TOML table sets, at its top level and in its mode tables."""
    return {k for k, v in table.items() if not isinstance(v, dict)} | {
        k for v in table.values() if isinstance(v, dict) for k in v}


class FileLayer(dict[str, Any]):
    """The table of one ``--config`` file, which remembers the file for messages about its values."""

    def __init__(self, table: dict[str, Any], source: Path) -> None:
        super().__init__(table)
        self.source = source


def read_layers(defaults: str, files: Sequence[str | Path] = (), modes: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The packaged defaults followed by the tables of ``files``; a missing or malformed file, or a table in it that
    is not a mode (one of ``modes`` or a table of the defaults), is an error naming the file."""
    layers = [tomllib.loads(defaults)]
    known = set(modes) | {k for k, v in layers[0].items() if isinstance(v, dict)}
    for f in files:
        path = Path(f)
        if path.is_dir():
            raise ConfigError(f"config file {path} is a folder, not a file: give --config a TOML file")
        if not path.exists():
            raise FileNotFoundError(f"config file {path} not found")
        if not path.is_file():
            raise ConfigError(f"config file {path} is not a regular file (a device, a pipe or a socket): give "
                              "--config a TOML file")
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
        unknown = sorted(k for k, v in table.items() if isinstance(v, dict) and k not in known)
        if unknown:
            raise ConfigError(f"{path}: unknown table(s) {', '.join(f'[{k}]' for k in unknown)}; a table names a "
                              f"mode ({', '.join(sorted(known)) or 'this method has none'})")
        layers.append(FileLayer(table, path))
    return layers


def to_toml(config: TrainConfig) -> str:
    """The effective configuration as flat TOML (an unset optional value as ``"none"``); reads back equal."""
    return tomli_w.dumps({k: "none" if v is None else v for k, v in config.to_dict().items()})
