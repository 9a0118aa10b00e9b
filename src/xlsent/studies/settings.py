"""What every study is run with: the settings its command line sets, one option per dataclass field.

A study module's ``Settings`` subclasses :class:`StudySettings` (frozen dataclass, every field with a default);
each field declared with :func:`option` gets its help text, and may name its flag, its choices, the argparse type
that checks each value (:func:`share`, :func:`parsed_by`, :func:`xlsent.cli.options.positive_int`) or repeated use.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def option(default: Any, help: str, *, flag: str = "", metavar: str = "", choices: Sequence[Any] = (),
           nargs: str = "", repeat: bool = False, recorded: bool = True,
           type: Callable[[str], Any] | None = None) -> Any:
    """A settings field and its command-line option: ``--<field-name>`` unless ``flag`` names another; a tuple
    field takes its values after one flag (``nargs``, default ``+``) or, with ``repeat``, one per repeated flag;
    ``type`` reads (and checks) each value given, instead of the field's own type. A setting that says where or how
    to run, not what, is not ``recorded`` in the results."""
    meta = {"help": help, "flag": flag, "metavar": metavar, "choices": tuple(choices), "nargs": nargs,
            "repeat": repeat, "recorded": recorded, "type": type}
    return field(default=default, metadata=meta)


def parsed_by(parse: Callable[[str], object]) -> Callable[[str], str]:
    """argparse type: the text as given, once ``parse`` reads it without a ``ValueError`` (whose message is then
    the usage error's)."""
    def checked(text: str) -> str:
        try:
            parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text

    return checked


@dataclass(frozen=True)
class StudySettings:
    """The settings of every study: where trained models are kept, the data, config overrides, and what to do
    with a kept model of another configuration."""

    models_dir: Path = option(Path("models/study"), "where trained models are kept, and reused when their config "
                              "fingerprint matches", flag="--models", metavar="DIR")
    data: str | None = option(None, "benchmark data folder (default: $XLSENT_DATA or ../shared/data)",
                              metavar="DIR", recorded=False)
    sets: tuple[str, ...] = option((), "config override for every trained model, e.g. device=cuda", flag="--set",
                                   metavar="KEY=VALUE", repeat=True)
    retrain: bool = option(False, "retrain a kept model of another configuration (default: stop and list the keys "
                           "that differ)", recorded=False)


def declarations(settings: type[StudySettings]) -> list[tuple[dataclasses.Field[Any], Mapping[str, Any]]]:
    """Each field of ``settings`` with its :func:`option` declaration (a field redeclared only to change its
    default keeps the declaration of :class:`StudySettings`)."""
    common = {f.name: f.metadata for f in dataclasses.fields(StudySettings)}
    return [(f, f.metadata or common.get(f.name) or {}) for f in dataclasses.fields(settings)]


def recorded(settings: StudySettings) -> dict[str, Any]:
    """The settings as a result's options record them (JSON values; those not ``recorded`` left out).

    >>> recorded(StudySettings(models_dir=Path("m"), sets=("steps=3",)))
    {'models_dir': 'm', 'sets': ['steps=3']}
    """
    out: dict[str, Any] = {}
    for f, declared in declarations(type(settings)):
        value = getattr(settings, f.name)
        if declared.get("recorded", True):
            out[f.name] = str(value) if isinstance(value, Path) else list(value) if isinstance(value, tuple) else value
    return out
