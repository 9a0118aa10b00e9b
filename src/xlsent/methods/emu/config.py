"""EMU's configuration; ``src/xlsent/configs/emu.toml`` documents each key."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from xlsent.data.xsid import XSID_LANGS
from xlsent.languages import TATOEBA_CHALLENGE
from xlsent.training.config import TrainConfig

NAME = "emu"
DEFAULTS = "emu.toml"
MODES = ("emu", "emu-no-ld", "emu-no-ld-cl", "emu-parallel", "softmax", "contrastive", "npair")
LOSSES = ("l2-softmax", "softmax", "contrastive", "npair")
ADVERSARIAL = ("random", "parallel")
SELECTIONS = ("none", "loo")
UNLABELLED_LANGS = tuple(lang for lang in XSID_LANGS if lang in TATOEBA_CHALLENGE)
"""xSID languages with a Tatoeba-Challenge test pair, whose sentences serve as unrelated unlabelled sentences."""


@dataclass
class EmuConfig(TrainConfig):
    """Hyper-parameters, data and ablation switches of EMU and its baselines (``mode``)."""

    MIN_STEPS: ClassVar[int] = 0  # 0: set from epochs (with_steps)
    steps: int = 0
    mode: str = "emu"
    backbone: str = "me5-small"
    loss: str = "l2-softmax"
    alpha: float = 50.0
    center_loss: bool = True
    center_weight: float = 1e-4
    contrastive_margin: float = 2.0
    npair_scale: float = 1.0
    discriminator: bool = True
    gamma: float = 1e-4
    critic_steps: int = 5
    critic_clip: float = 0.01
    critic_hidden: int = 900
    critic_dropout: float = 0.2
    critic_lr: float = 5e-4
    train_langs: list[str] = field(default_factory=lambda: ["en"])
    adversarial: str = "random"
    adversarial_langs: list[str] = field(default_factory=lambda: list(UNLABELLED_LANGS))
    unlabelled_per_lang: int = 1000
    max_tokens: int = 40
    batch_size: int = 16
    epochs: float = 3.0
    encoder_lr: float = 5e-4
    lora: bool = True
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.1
    dropout: float = 0.1
    valid_size: int = 60
    selection: str = "none"

    def differing_keys(self, saved: dict[str, Any]) -> list[str]:
        """As for every config, but ``steps = 0`` (set from ``epochs``) matches the steps a model was trained for."""
        return super().differing_keys({**saved, "steps": 0} if self.steps == 0 else saved)

    def problems(self) -> list[str]:
        out = super().problems()
        out += self.one_of(mode=MODES, loss=LOSSES, adversarial=ADVERSARIAL, selection=SELECTIONS)
        unknown = sorted(set(self.train_langs) - set(XSID_LANGS))
        if not self.train_langs or unknown:
            out.append(f"train_langs must be xSID languages ({' '.join(XSID_LANGS)}); got {self.train_langs}")
        if self.discriminator:
            known = XSID_LANGS if self.adversarial == "parallel" else UNLABELLED_LANGS
            unknown = sorted(set(self.adversarial_langs) - set(known))
            if unknown:
                out.append(f"adversarial_langs {unknown} have no {self.adversarial} sentences here; "
                           f"known: {' '.join(known)}")
            lonely = [t for t in self.train_langs if not set(self.adversarial_langs) - {t}]
            if lonely:
                out.append(f"the discriminator of {lonely} needs an adversarial language other than its own")
        if self.batch_size < 2 or self.critic_steps < 1 or self.unlabelled_per_lang < 1 or self.max_tokens < 4:
            out.append("batch_size must be >= 2, critic_steps and unlabelled_per_lang >= 1, max_tokens >= 4")
        if self.alpha <= 0 or self.contrastive_margin <= 0 or self.npair_scale <= 0:
            out.append("alpha, contrastive_margin and npair_scale must be > 0")
        out += self.at_least(0, "center_weight", "gamma", "critic_clip")
        out += self.at_least(1, "critic_hidden")
        out += self.dropouts("dropout", "lora_dropout", "critic_dropout")
        if self.encoder_lr <= 0 or self.critic_lr <= 0:
            out.append("encoder_lr and critic_lr must be > 0")
        if self.steps == 0 and self.epochs <= 0:
            out.append("set epochs > 0 or steps > 0")
        if self.lora and (self.lora_r < 1 or self.lora_alpha < 1):
            out.append("lora_r and lora_alpha must be >= 1")
        if self.valid_size < 0:
            out.append("valid_size must be >= 0")
        if self.selection != "none" and (self.valid_size < 1 or self.eval_every < 1):
            out.append("selection needs valid_size >= 1 and eval_every >= 1 (or selection = \"none\")")
        return out


def with_steps(config: EmuConfig, labelled: int) -> EmuConfig:
    """``config`` with ``steps`` set from ``epochs`` over ``labelled`` utterances when ``steps == 0``.

    >>> with_steps(EmuConfig(epochs=3.0, batch_size=16), 240).steps
    45
    >>> with_steps(EmuConfig(steps=7), 240).steps
    7
    """
    if config.steps > 0:
        return config
    return dataclasses.replace(config, steps=max(1, math.ceil(config.epochs * labelled / config.batch_size)))
