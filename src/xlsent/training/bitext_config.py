"""The configuration keys of a method that learns from bitext a user brings (``--bitext LANG=FILE``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from xlsent.data.user_bitext import BitextFile
from xlsent.training.config import TrainConfig


@dataclass
class UserBitextConfig(TrainConfig):
    """``bitext``: the user's files (:class:`~xlsent.data.user_bitext.BitextFile`, a ``[[bitext]]`` table each);
    ``bitext_only``: train on them alone, without the shipped bitext."""

    LATER_KEYS: ClassVar[dict[str, Any]] = {**TrainConfig.LATER_KEYS, "bitext": [], "bitext_only": False}

    bitext: list[BitextFile] = field(default_factory=list)
    bitext_only: bool = False

    def problems(self) -> list[str]:
        out = super().problems()
        if self.bitext_only and not self.bitext:
            out.append("bitext_only needs at least one --bitext LANG=FILE")
        return out
