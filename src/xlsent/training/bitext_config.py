"""The configuration keys of a method that learns from bitext a user brings (``--bitext LANG=FILE``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from xlsent.data.user_bitext import BitextError, BitextFile
from xlsent.training.config import ConfigError, TrainConfig


@dataclass
class UserBitextConfig(TrainConfig):
    """``bitext``: the user's files (:class:`~xlsent.data.user_bitext.BitextFile`, a ``[[bitext]]`` table each);
    ``bitext_only``: train on them alone, without the shipped bitext."""

    LATER_KEYS: ClassVar[dict[str, Any]] = {**TrainConfig.LATER_KEYS, "bitext": [], "bitext_only": False}

    bitext: list[BitextFile] = field(default_factory=list)
    bitext_only: bool = False

    @classmethod
    def file_values(cls, table: Mapping[str, Any], source: Path) -> dict[str, Any]:
        """The ``[[bitext]]`` entries of the ``--config`` file ``source`` with their relative paths read from its
        folder; a file that is not there is an error naming ``source``."""
        if not isinstance(table.get("bitext"), list):
            return {}
        try:
            entries = [_from_folder(BitextFile.coerce(value), source.parent) for value in table["bitext"]]
        except BitextError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        missing = next((f"{e.lang}: {p}" for e in entries for p in e.files if not p.is_file()), None)
        if missing:
            raise ConfigError(f"{source}: [[bitext]] {missing}: no such file (a relative path is read from the "
                              f"config file's folder, {source.parent})")
        return {"bitext": entries}

    def problems(self) -> list[str]:
        out = super().problems()
        if self.bitext_only and not self.bitext:
            out.append("bitext_only needs at least one --bitext LANG=FILE")
        return out


def _from_folder(entry: BitextFile, folder: Path) -> BitextFile:
    """``entry`` with its relative paths read from ``folder``.

    >>> _from_folder(BitextFile("kab", "kab.tsv"), Path("cfg")).path
    'cfg/kab.tsv'
    """
    return replace(entry, path=str(folder / entry.path), english=str(folder / entry.english) if entry.english else "")
