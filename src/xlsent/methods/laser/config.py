"""LASER's configuration; ``src/xlsent/configs/laser.toml`` documents each key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from xlsent.data.bucc import DEV_YEARS
from xlsent.encoders.bilstm import MODEL_TYPE
from xlsent.training.bitext_config import UserBitextConfig
from xlsent.training.losses import DISTILL_KINDS

NAME = MODEL_TYPE
DEFAULTS = "laser.toml"
SELECTIONS = ("none", "xsim", "mining")
"""``selection`` -> what it restores: the last step, the lowest xsim, or the best dev mining F1."""
OBJECTIVES = ("translate", "distill", "both")
EMBED_INITS = ("random", "teacher")
DTYPES = {"float16": torch.float16, "float32": torch.float32}
"""``save_dtype`` -> the dtype the encoder's weights are saved in."""


@dataclass
class LaserConfig(UserBitextConfig):
    """Corpus, vocabulary, architecture and training of a LASER model; the defaults are the paper's."""

    LATER_KEYS: ClassVar[dict[str, Any]] = {**UserBitextConfig.LATER_KEYS, "ranking_weight": 0.0,
                                            "ranking_scale": 20.0, "ranking_margin": 0.0, "dev_mining": False,
                                            "teacher_ranking_weight": 0.0, "teacher_negatives": 4096}

    languages: list[str] = field(default_factory=lambda: ["de", "fr", "es", "it", "ru"])
    targets: list[str] = field(default_factory=lambda: ["en", "es"])
    max_pairs: int = 0
    vocab_size: int = 50000
    vocab_model: str = "bpe"
    vocab_per_lang: int = 100000
    character_coverage: float = 0.9995
    embed_dim: int = 320
    hidden: int = 512
    layers: int = 5
    decoder_hidden: int = 2048
    decoder_embed_dim: int = 320
    lang_embed_dim: int = 32
    dropout: float = 0.1
    max_tokens: int = 12000
    max_sentence_tokens: int = 250
    minutes: float = 0.0
    valid_pairs: int = 1000
    dev_mining: bool = False
    selection: str = "none"
    save_dtype: str = "float16"
    lr: float = 0.001
    steps: int = 100000
    objective: str = "translate"
    teacher: str = "me5-small"
    distill_loss: str = "mse"
    translate_weight: float = 1.0
    distill_weight: float = 1.0
    ranking_weight: float = 0.0
    ranking_scale: float = 20.0
    ranking_margin: float = 0.0
    teacher_ranking_weight: float = 0.0
    teacher_negatives: int = 4096
    embed_init: str = "random"
    freeze_embeddings: bool = False

    @property
    def translates(self) -> bool:
        """Whether the decoder and its translation term are trained."""
        return self.objective in ("translate", "both")

    @property
    def distills(self) -> bool:
        """Whether the student is trained onto the teacher's vectors."""
        return self.objective in ("distill", "both")

    def problems(self) -> list[str]:
        out = super().problems()
        if not self.targets or any(t in self.targets[:i] for i, t in enumerate(self.targets)):
            out.append("targets must name at least one language, each once")
        if not self.languages and not self.bitext:
            out.append("languages must name at least one training language (or give --bitext LANG=FILE)")
        if self.bitext and "en" not in self.targets:
            out.append("--bitext pairs a language with English: add en to targets")
        if min(self.vocab_size, self.vocab_per_lang, self.embed_dim, self.hidden, self.layers, self.decoder_hidden,
               self.decoder_embed_dim, self.lang_embed_dim, self.max_tokens, self.max_sentence_tokens) < 1:
            out.append("sizes (vocab_size, vocab_per_lang, embed_dim, hidden, layers, decoder sizes, max_tokens, "
                       "max_sentence_tokens) must be >= 1")
        if self.max_sentence_tokens > self.max_tokens:
            out.append("max_sentence_tokens must be <= max_tokens (a batch holds at least one pair)")
        out += self.dropouts("dropout")
        if not 0 < self.character_coverage <= 1:
            out.append(f"character_coverage must be in (0, 1], not {self.character_coverage}")
        if self.minutes < 0 or self.max_pairs < 0 or self.valid_pairs < 0:
            out.append("minutes, max_pairs and valid_pairs must be >= 0")
        out += self.one_of(selection=SELECTIONS)
        if self.selection == "xsim" and (self.eval_every < 1 or self.valid_pairs < 1):
            out.append("selection xsim needs eval_every >= 1 and valid_pairs >= 1")
        if self.selection == "mining" and (self.eval_every < 1 or not self.dev_mining):
            out.append("selection mining needs eval_every >= 1 and dev_mining = true")
        if self.dev_mining and not self.bitext_only and not set(self.languages) & set(DEV_YEARS):
            out.append(f"dev_mining needs a training language with a BUCC-style dev set ({' '.join(DEV_YEARS)})")
        out += self.one_of(objective=OBJECTIVES, distill_loss=DISTILL_KINDS, embed_init=EMBED_INITS)
        if min(self.translate_weight, self.distill_weight, self.ranking_weight) < 0 or self.ranking_scale <= 0:
            out.append("translate_weight, distill_weight and ranking_weight must be >= 0, ranking_scale > 0")
        if self.ranking_weight > 0 and not self.distills:
            out.append("ranking_weight > 0 needs objective distill or both (it ranks the English pairs)")
        if self.teacher_ranking_weight < 0 or self.teacher_negatives < 0:
            out.append("teacher_ranking_weight and teacher_negatives must be >= 0")
        if self.teacher_ranking_weight > 0 and not self.distills:
            out.append("teacher_ranking_weight > 0 needs objective distill or both (it ranks onto the teacher's "
                       "vectors)")
        if self.distills and "en" not in self.targets and "en" not in self.languages:
            out.append("objective distill/both needs English pairs: add en to targets")
        out += self.one_of(save_dtype=tuple(DTYPES))
        return out


_LOSS_TERMS = {"translate": (("translate_weight", "translation"),),
               "distill": (("distill_weight", "distillation"), ("ranking_weight", "in-batch ranking"),
                           ("teacher_ranking_weight", "teacher ranking"))}
_LOSS_TERMS["both"] = _LOSS_TERMS["translate"] + _LOSS_TERMS["distill"]


def loss_terms(objective: str, config: Mapping[str, Any]) -> str:
    """The weighted terms of a LASER objective's loss, or "" where it has one term (the model card's "loss").

    >>> loss_terms("distill", {"distill_weight": 30.0, "ranking_weight": 1.0, "teacher_ranking_weight": 0.0})
    '30 x distillation + 1 x in-batch ranking'
    >>> loss_terms("translate", {"translate_weight": 1.0, "ranking_weight": 1.0})
    ''
    """
    terms = [(float(config.get(key, 0.0)), what) for key, what in _LOSS_TERMS.get(objective, ())]
    used = [f"{weight:g} x {what}" for weight, what in terms if weight > 0]
    return " + ".join(used) if len(used) > 1 else ""
