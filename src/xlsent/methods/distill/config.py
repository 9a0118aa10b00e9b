"""The distillation method's configuration; ``src/xlsent/configs/distill.toml`` documents each key."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from xlsent.inference import CHOICES
from xlsent.training.bitext_config import UserBitextConfig
from xlsent.training.losses import DISTILL_KINDS

NAME = "distill"
DEFAULTS = "distill.toml"
LOSSES = ("distill", "ranking", "both")
RANKING_TARGETS = ("student", "teacher")
SCALES_HOLDING_ENGLISH = [1.0, 0.75, 0.5]
"""The ``adapter_scales`` the studies try where a step loses English STS-B dev (the shipped default is ``[1.0]``)."""


@dataclass
class DistillConfig(UserBitextConfig):
    """Teacher, student, data, losses and optimisation of a distilled multilingual student.

    The field defaults are the first shipped student's recipe (v1, ``models/me5-distill-v1``), which the studies
    change one key at a time; the packaged ``distill.toml`` (what ``xlsent train distill`` reads) holds the shipped
    recipe, whose fingerprint ``models/me5-distill`` records.
    """

    LATER_KEYS: ClassVar[dict[str, Any]] = {**UserBitextConfig.LATER_KEYS, "bitext_share": 0.5,
                                            "teacher_backend": "torch", "grad_cache": False,
                                            "hard_negatives": False, "hard_negative_max_cos": 0.95,
                                            "languages_per_batch": 1, "bitext_epochs": 0.0,
                                            "ranking_targets": "student", "adapter_scales": [1.0],
                                            "relation_weight": 0.0, "bitext_start": "",
                                            "char_noise": 0.0}

    teacher: str = "me5-small"
    teacher_backend: str = "torch"
    backbone: str = "me5-small"
    languages: list[str] = field(default_factory=list)
    max_pairs: int = 3000
    valid_pairs: int = 50
    temperature: float = 5.0
    max_sentence_tokens: int = 128
    loss: str = "both"
    distill_loss: str = "cosine"
    distill_weight: float = 1.0
    ranking_weight: float = 1.0
    relation_weight: float = 0.0
    ranking_scale: float = 100.0
    ranking_margin: float = 0.0
    ranking_targets: str = "student"
    batch_size: int = 32
    micro_batch: int = 16
    languages_per_batch: int = 1
    grad_cache: bool = False
    hard_negatives: bool = False
    hard_negative_max_cos: float = 0.95
    char_noise: float = 0.0
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    dropout: float = 0.0
    minutes: float = 0.0
    steps: int = 200
    lr: float = 2e-4
    warmup_steps: int = 40
    schedule: str = "linear"
    grad_clip: float = 1.0
    eval_every: int = 100
    stsb_dev_tolerance: float = 0.5
    adapter_scales: list[float] = field(default_factory=lambda: [1.0])
    precision: str = "bf16"
    bitext_share: float = 0.5
    bitext_epochs: float = 3.5
    bitext_start: str = ""

    def user_steps(self, user_pairs: int) -> int:
        """The steps of a run given ``user_pairs`` training pairs of ``--bitext``: enough for each to be drawn
        ``bitext_epochs`` times on average in its share of the batches (all of them with ``bitext_only``), and, from
        the backbone, never fewer than ``steps`` (from a trained student, ``bitext_start``, that many alone);
        ``steps`` alone without user pairs, a share or epochs.

        >>> DistillConfig().user_steps(900), DistillConfig().user_steps(2800), DistillConfig().user_steps(0)
        (200, 613, 200)
        >>> DistillConfig(bitext_only=True).user_steps(2800), DistillConfig(bitext_epochs=0).user_steps(2800)
        (307, 200)
        >>> DistillConfig(bitext_start="models/me5-distill").user_steps(900)
        197
        """
        share = 1.0 if self.bitext_only else self.bitext_share
        if not (user_pairs and share and self.bitext_epochs):
            return self.steps
        needed = math.ceil(self.bitext_epochs * user_pairs / (self.batch_size * share))
        return needed if self.bitext_start else max(self.steps, needed)

    def fingerprinted(self) -> dict[str, Any]:
        """The base's keys, less ``bitext_epochs`` and ``bitext_start`` where no ``--bitext`` file is given (they
        change nothing there, so students trained before them keep their fingerprint).

        >>> sorted({"bitext_epochs", "bitext_start"} & set(DistillConfig().fingerprinted()))
        []
        """
        kept = super().fingerprinted()
        if not self.bitext:
            kept.pop("bitext_epochs", None)
            kept.pop("bitext_start", None)
        return kept

    @property
    def distills(self) -> bool:
        return self.loss in ("distill", "both")

    @property
    def ranks(self) -> bool:
        return self.loss in ("ranking", "both")

    def problems(self) -> list[str]:
        out = super().problems()
        out += self.one_of(loss=LOSSES, distill_loss=DISTILL_KINDS, teacher_backend=CHOICES,
                           ranking_targets=RANKING_TARGETS)
        if self.temperature <= 0:
            out.append("temperature must be > 0 (1 follows the data; larger favours small languages)")
        if self.micro_batch < 0:
            out.append("micro_batch must be >= 0 (0 = the whole batch in one forward pass)")
        if self.batch_size < 2:
            out.append("batch_size must be >= 2 (the ranking loss needs in-batch negatives)")
        if min(self.max_pairs, self.valid_pairs, self.minutes) < 0 or self.max_sentence_tokens < 3:
            out.append("max_pairs, valid_pairs and minutes must be >= 0, max_sentence_tokens >= 3")
        if min(self.distill_weight, self.ranking_weight, self.relation_weight) < 0 or self.ranking_scale <= 0:
            out.append("distill_weight, ranking_weight and relation_weight must be >= 0, ranking_scale > 0")
        if self.relation_weight and not self.distills:
            out.append("relation_weight needs the teacher's vectors: loss = both or distill, or relation_weight = 0 "
                       "(the shipped recipe has 0.1)")
        if self.relation_weight and self.batch_size < 3:
            out.append("relation_weight needs batch_size >= 3 (each pair's similarities to at least two others)")
        if self.bitext_epochs < 0:
            out.append(f"bitext_epochs must be >= 0 (0: steps alone), not {self.bitext_epochs}")
        if not 0 <= self.bitext_share <= 1:
            out.append(f"bitext_share must be in [0, 1] (0: the user's languages join the temperature sampling like "
                       f"any other), not {self.bitext_share}")
        if self.languages_per_batch < 1 or self.batch_size % self.languages_per_batch:
            out.append(f"languages_per_batch must be >= 1 and divide batch_size ({self.batch_size}), not "
                       f"{self.languages_per_batch}")
        if (self.hard_negatives or self.ranking_targets == "teacher") and not self.distills:
            out.append("hard_negatives and ranking_targets = teacher need the teacher's vectors: loss = both or "
                       "distill")
        if not -1 < self.hard_negative_max_cos <= 1:
            out.append(f"hard_negative_max_cos must be in (-1, 1], not {self.hard_negative_max_cos}")
        if 1.0 not in self.adapter_scales or not all(0 < s <= 1 for s in self.adapter_scales):
            out.append(f"adapter_scales must hold 1 (the adapters as trained) and scales in (0, 1], not "
                       f"{self.adapter_scales}")
        if not 0 <= self.char_noise <= 1:
            out.append(f"char_noise must be in [0, 1] (the share of the x sides' words edited; 0 = off), not "
                       f"{self.char_noise}")
        if self.lora_r < 1 or self.lora_alpha < 1:
            out.append("lora_r and lora_alpha must be >= 1")
        out += self.dropouts("lora_dropout", "dropout")
        return out
