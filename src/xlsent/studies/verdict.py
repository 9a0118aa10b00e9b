"""A verdict on one claim, checked on a study's rows and saved as structured fields of its result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

SOURCES = ("paper", "xlsent")
"""``paper``: a claim the paper makes; ``xlsent``: a check of xlsent's own, not a claim of the paper."""


@dataclass(frozen=True)
class Verdict:
    """Whether ``claim`` held on the rows (``held``; None where the rows cannot decide it), the numbers that say so
    (``evidence``) and whose claim it is (``source``, one of :data:`SOURCES`)."""

    claim: str
    held: bool | None
    evidence: str
    source: str = "paper"

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"verdict source must be one of {SOURCES}, not {self.source!r}")
        if self.held is not None:
            object.__setattr__(self, "held", bool(self.held))  # numpy comparisons give numpy booleans

    def to_json(self) -> dict[str, Any]:
        """The fields as a result file stores them (``TaskResult.verdicts``)."""
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Verdict:
        """The verdict a result file stored with :meth:`to_json`."""
        return cls(raw["claim"], raw["held"], raw["evidence"], raw.get("source", "paper"))
