"""DuEAM's configuration; ``src/xlsent/configs/dueam.toml`` documents each key."""

from __future__ import annotations

from dataclasses import dataclass, field

from xlsent.methods.dueam.wmd import SOLVERS, WEIGHTINGS
from xlsent.training.config import TrainConfig

NAME = "dueam"
DEFAULTS = "dueam.toml"
MODES = ("unsupervised", "weakly-supervised")
OBJECTIVES = ("both", "LA", "LB")
FINETUNES = ("lora", "full")
PAPER_LANGS = ("en", "bg", "de", "el", "es", "fr", "hi", "ru", "th", "tr", "ur", "vi", "zh")
"""The 13 XNLI languages DuEAM trains on (paper footnote 1): all of XNLI's but ar and sw."""


@dataclass
class DueamConfig(TrainConfig):
    """Hyper-parameters, training data and ablation switches of DuEAM."""

    steps: int = 1500
    lr: float = 2e-4
    warmup_steps: int = 500
    schedule: str = "linear"
    grad_clip: float = 1.0
    eval_every: int = 250
    mode: str = "weakly-supervised"
    backbone: str = "me5-small"
    anchor: str = "me5-small"
    anchor_layer: int = -1
    weighting: str = "uniform"
    solver: str = "emd"
    sinkhorn_reg: float = 0.05
    langs: list[str] = field(default_factory=lambda: list(PAPER_LANGS))
    max_pairs: int = 20000
    batch_size: int = 64
    lambda_b: float = 0.003
    objective: str = "both"
    normalize: bool = True
    finetune: str = "lora"
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.1
    dropout: float = 0.1
    valid_pairs: int = 1000
    valid_langs: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        out = super().problems()
        out += self.one_of(mode=MODES, objective=OBJECTIVES, finetune=FINETUNES, weighting=WEIGHTINGS, solver=SOLVERS)
        if self.solver == "sinkhorn" and self.sinkhorn_reg <= 0:
            out.append("sinkhorn_reg must be > 0")
        if not self.langs:
            out.append("langs is empty")
        if self.batch_size < 2 or self.max_pairs == 1 or self.max_pairs < 0:
            out.append("batch_size must be >= 2, max_pairs >= 2 (or 0 for all pairs)")
        if self.lambda_b < 0:
            out.append("lambda_b must be >= 0")
        out += self.at_least(1, "lora_r", "lora_alpha") + self.dropouts("lora_dropout", "dropout")
        if self.eval_every > 0 and self.valid_pairs < 2:
            out.append("validation (eval_every > 0) needs valid_pairs >= 2")
        return out
