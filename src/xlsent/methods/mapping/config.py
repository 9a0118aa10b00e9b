"""Configuration of the mapping methods: what every one shares (:class:`MappingConfig`: backbone, inputs, language
pairs, corpus, parallel share) and the linear-map method's own keys (:class:`LinearMapConfig`);
``configs/linear_map.toml`` and ``configs/absent.toml`` document each key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from xlsent.data.bitext import lower_pairs, parse_pair
from xlsent.encoders.static_average import INPUTS
from xlsent.training.config import TrainConfig

NAME = "linear-map"
DEFAULTS = "linear_map.toml"
CORPORA = ("short", "long", "ntrex")
METHODS: dict[str, tuple[str, str]] = {
    "lsq": ("least squares, nearest neighbour (Mikolov, Le & Sutskever 2013)", "nn"),
    "lsq-gc": ("least squares, globally corrected retrieval (Dinu, Lazaridou & Baroni 2014)", "gc"),
    "procrustes": ("orthogonal Procrustes, nearest neighbour (Xing et al. 2015)", "nn"),
    "procrustes-isf": ("orthogonal Procrustes, inverted softmax (Smith et al. 2017)", "isf"),
    "procrustes-csls": ("orthogonal Procrustes, CSLS (supervised MUSE, Lample et al. 2018)", "csls"),
}
"""Linear method -> (what it is, its retrieval rule)."""


@dataclass
class MappingConfig(TrainConfig):
    """Data, inputs and backbone of a mapping method."""

    backbone: str = "me5-small"
    inputs: str = "encoder"
    pairs: list[str] = field(default_factory=lambda: ["de-en"])
    corpus: str = "short"
    max_pairs: int | None = None
    parallel_ratio: float = 1.0
    valid_pairs: int = 0

    def __post_init__(self) -> None:
        """The pair codes in lower case (:func:`~xlsent.data.bitext.lower_pairs`: ``DE-EN`` is ``de-en``)."""
        self.pairs = lower_pairs(self.pairs)

    def problems(self) -> list[str]:
        out = super().problems()
        out += self.one_of(inputs=INPUTS, corpus=CORPORA)
        if not 0 < self.parallel_ratio <= 1:
            out.append("parallel_ratio must be in (0, 1]")
        if self.valid_pairs < 0 or (self.max_pairs is not None and self.max_pairs < 2):
            out.append("valid_pairs must be >= 0 and max_pairs >= 2")
        try:
            parsed = [parse_pair(p) for p in self.pairs]
        except ValueError as exc:
            return [*out, str(exc)]
        if not parsed:
            out.append("pairs is empty")
        elif len({t for _, t in parsed}) != 1 or len({s for s, _ in parsed}) != len(parsed):
            out.append(f"pairs {self.pairs} must share one target language and have distinct source languages")
        return out

    @property
    def sources(self) -> list[str]:
        return [parse_pair(p)[0] for p in self.pairs]

    @property
    def target(self) -> str:
        return parse_pair(self.pairs[0])[1]


@dataclass
class LinearMapConfig(MappingConfig):
    """A linear baseline: ``method`` (a :data:`METHODS` key) and the least-squares ``ridge``."""

    MIN_STEPS: ClassVar[int] = 0  # a closed form: no steps
    steps: int = 0
    method: str = "procrustes-csls"
    ridge: float = 0.0

    def problems(self) -> list[str]:
        out = super().problems()
        out += self.one_of(method=tuple(METHODS))
        if self.ridge < 0:
            out.append("ridge must be >= 0")
        return out
