"""Dual-pivot transfer's configuration; ``src/xlsent/configs/dual_pivot.toml`` documents each key."""

from __future__ import annotations

from dataclasses import dataclass, field

from xlsent.data.bitext import lower_pairs
from xlsent.training.config import TrainConfig

NAME = "dual-pivot"
DEFAULTS = "dual_pivot.toml"
MODES = ("unsupervised", "supervised")
MIX_INITS = ("uniform", "last")
SELECTIONS = ("none", "csls", "retrieval")


@dataclass
class DualPivotConfig(TrainConfig):
    """Hyper-parameters, training data and ablation switches of dual-pivot transfer."""

    steps: int = 6000
    mode: str = "unsupervised"
    backbone: str = "me5-small"
    pairs: list[str] = field(default_factory=lambda: ["de-en"])
    max_pairs: int | None = None
    valid_pairs: int = 1000
    selection: str = "csls"
    n_neg: int = 2
    alpha: float = 0.2
    lambda_cycle: float = 10.0
    kappa: int = 2
    batch_size: int = 128
    adversarial: bool = True
    cycle: bool = True
    train_mix: bool = True
    train_map: bool = True
    layer: int | None = None
    mix_init: str = "uniform"
    critic_hidden: int = 0
    critic_gp: float = 10.0
    critic_clip: float = 0.0

    def __post_init__(self) -> None:
        """The pair codes in lower case (:func:`~xlsent.data.bitext.lower_pairs`: ``DE-EN`` is ``de-en``)."""
        self.pairs = lower_pairs(self.pairs)

    def problems(self) -> list[str]:
        out = super().problems()
        out += self.one_of(mode=MODES)
        if not self.pairs:
            out.append("pairs is empty")
        if self.n_neg < 1 or self.kappa < 1 or self.batch_size < 2:
            out.append("n_neg and kappa must be >= 1, batch_size >= 2")
        if not (self.train_map or (self.train_mix and self.layer is None)):
            out.append("nothing to train: enable train_map, or train_mix without a fixed layer")
        out += self.one_of(mix_init=MIX_INITS)
        if self.mode == "unsupervised" and not (self.adversarial or self.cycle):
            out.append("the unsupervised mode needs the adversarial loss, the cycle loss or both")
        out += self.one_of(selection=SELECTIONS)
        out += self.at_least(0, "lambda_cycle", "critic_hidden", "critic_gp", "critic_clip")
        if self.selection != "none" and (self.valid_pairs < 2 or self.eval_every < 1):
            out.append("selection needs valid_pairs >= 2 and eval_every >= 1 (or selection = \"none\")")
        return out
