"""ABSent's configuration: the mapping data and inputs (:class:`~xlsent.methods.mapping.config.MappingConfig`),
the GAN's hyper-parameters and the variant switches; ``src/xlsent/configs/absent.toml`` documents each key."""

from __future__ import annotations

from dataclasses import dataclass, field

from xlsent.methods.mapping.config import MappingConfig

NAME = "absent"
DEFAULTS = "absent.toml"
MODES = ("absent", "uni-sent", "conditional-gan")
SELECTIONS = ("none", "retrieval")


@dataclass
class ABSentConfig(MappingConfig):
    """Hyper-parameters and variant switches of ABSent and its ablations (``mode``)."""

    steps: int = 1000
    lr: float = 0.002
    eval_every: int = 250
    parallel_ratio: float = 0.2
    valid_pairs: int = 300
    mode: str = "absent"
    bidirectional: bool = True
    mismatch: bool = True
    unlabelled: bool = True
    lambda_d: float = 100.0
    adversarial: bool = True
    batch_size: int = 128
    disc_steps: int = 1
    gen_hidden: list[int] = field(default_factory=lambda: [512, 1024, 512])
    disc_hidden: list[int] = field(default_factory=lambda: [512, 1024, 512])
    selection: str = "retrieval"

    def problems(self) -> list[str]:
        out = super().problems()
        if self.mode not in MODES:
            out.append(f"mode must be one of {MODES}, not {self.mode!r}")
        elif self.bidirectional != (self.mode == "absent"):
            out.append(f"mode {self.mode} is {'' if self.mode == 'absent' else 'not '}bidirectional: set "
                       f"bidirectional = {str(self.mode == 'absent').lower()} or pick the mode that fits")
        elif self.mode == "conditional-gan" and (self.mismatch or self.unlabelled):
            out.append("conditional-gan uses neither mismatch pairs nor unlabelled sentences")
        if self.selection not in SELECTIONS:
            out.append(f"selection must be one of {SELECTIONS}, not {self.selection!r}")
        elif self.selection == "retrieval" and (self.valid_pairs < 2 or self.eval_every < 1):
            out.append("selection \"retrieval\" needs valid_pairs >= 2 and eval_every >= 1 (or selection = \"none\")")
        if self.batch_size < 2 or self.disc_steps < 1 or self.lambda_d < 0:
            out.append("batch_size must be >= 2, disc_steps >= 1 and lambda_d >= 0")
        if not self.adversarial and self.lambda_d == 0:
            out.append("nothing to train: adversarial = false needs lambda_d > 0")
        if not self.gen_hidden or not self.disc_hidden or min(self.gen_hidden + self.disc_hidden) < 1:
            out.append("gen_hidden and disc_hidden need at least one layer, every size >= 1")
        return out
