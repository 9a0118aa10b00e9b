"""EMU (paper 002, Hirota et al. 2020): semantic specialization of a multilingual encoder from monolingual labels.

A pre-trained multilingual encoder E is fine-tuned with a semantic classifier C on labelled utterances of a
training language t (xSID's English valid split here) and a language discriminator D_t per training language:

- C: the L2-constrained softmax loss (u normalised, scaled by alpha = 50, linear layer, softmax cross-entropy;
  :class:`~xlsent.training.losses.L2ConstrainedSoftmaxLoss`) plus the center loss with learned centroids
  (:class:`~xlsent.training.losses.CenterLoss`): L_C = L_L2sm + lambda L_center (Eq. 2).
- D_t: a Wasserstein critic (two 900-d hidden layers, dropout 0.2, weights clipped to [-c, c];
  :class:`~xlsent.training.losses.WassersteinCritic`) telling t's embeddings from those of a random other
  language l; E and C minimise L_C - gamma L_D (Eq. 4), L_D = mean D_t(v^l) - mean D_t(u^t). D_t scores
  L2-normalised embeddings (an xlsent choice: retrieval uses cosine, so length must not be a cue).
- Algorithm 1: k critic updates of D_t (:class:`~xlsent.training.adversarial.CriticGroup`), then one update of
  E and C with D_t frozen; t is drawn at random each step when several languages are labelled (Table 3).

Modes (``--mode``, each a table of ``configs/emu.toml``): ``emu`` (the paper's method), ``emu-no-ld`` and
``emu-no-ld-cl`` (its ablations), ``emu-parallel`` (adversarial sentences are the translations of the training
batch, from xSID valid, instead of unrelated sentences) and the baselines ``softmax``, ``contrastive`` (margin 2)
and ``npair``, which replace C's loss and drop the center loss and the discriminator.

Unlabelled sentences for the discriminator come by default from the Tatoeba-Challenge test pairs (their
non-English side, without the Tatoeba v1 test pairs and without xSID utterances), so they are not translations
of the training utterances. The encoder is the backbone (me5-small) with LoRA adapters (``lora = false``:
fully fine-tuned); the encoder and the heads C have learning rates of their own (``encoder_lr``, ``lr``). The
model directory holds the adapters (or the weights) and reloads with :func:`xlsent.load`. Validation (logged in
``train.jsonl``): leave-one-out Acc@1 of held-out labelled utterances; ``selection = "loo"`` keeps the best step,
the default keeps the last one, as the paper does (no labelled data in other languages can select for transfer).

>>> from xlsent.methods.emu.model import METHOD
>>> cfg = METHOD.config(mode="emu-no-ld")
>>> cfg.loss, cfg.center_loss, cfg.discriminator, cfg.alpha, cfg.center_weight
('l2-softmax', True, False, 50.0, 0.0001)
>>> METHOD.train(cfg, "models/emu-no-ld")                                          # doctest: +SKIP
>>> xlsent.load("models/emu-no-ld").encode(["Wird es heute regnen?"]).shape          # doctest: +SKIP
(1, 384)
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from xlsent.data.parallel import load_tatoeba_challenge
from xlsent.data.xsid import XSID_LANGS, load_xsid
from xlsent.encoders.base import l2_normalize
from xlsent.encoders.cache import sentences_key
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.intent import loo_nn_accuracy
from xlsent.training.adversarial import CriticGroup
from xlsent.training.batching import batch_indices, step_generator
from xlsent.training.checkpoint import TrainState
from xlsent.training.config import TrainConfig
from xlsent.training.finetuned import TrainedPart, load_finetuned, save_finetuned, transformer_backbone
from xlsent.training.loop import Trainer, Validation, resolve_device
from xlsent.training.losses import (
    CenterLoss,
    ContrastiveLoss,
    L2ConstrainedSoftmaxLoss,
    NPairLoss,
    WassersteinCritic,
)
from xlsent.training.method import Method, prepare_output

log = logging.getLogger(__name__)

NAME = "emu"
MODES = ("emu", "emu-no-ld", "emu-no-ld-cl", "emu-parallel", "softmax", "contrastive", "npair")
LOSSES = ("l2-softmax", "softmax", "contrastive", "npair")
ADVERSARIAL = ("random", "parallel")
SELECTIONS = ("none", "loo")
TATOEBA_CHALLENGE_CODES = {"ar": "ara", "da": "dan", "de": "deu", "id": "ind", "it": "ita", "ja": "jpn",
                           "nl": "nld", "tr": "tur", "zh": "zho"}
"""xSID language -> its Tatoeba-Challenge folder code: the languages with unrelated unlabelled sentences here."""
UNLABELLED_SOURCE = "Tatoeba-Challenge test v2021-08-07, non-English side"
ENCODE_ROWS = 64  # sentences per forward pass when embedding without gradients
# batch_indices streams: labelled encoder batches use the training language's index, then these offsets
CRITIC_STREAM, ADVERSARIAL_STREAM = 100, 200

# --- configuration -------------------------------------------------------------------------------------------


@dataclass
class EmuConfig(TrainConfig):
    """Hyper-parameters, data and ablation switches; ``src/xlsent/configs/emu.toml`` documents each one."""

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
    adversarial_langs: list[str] = field(default_factory=lambda: list(TATOEBA_CHALLENGE_CODES))
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

    def problems(self) -> list[str]:
        out = super().problems()
        for key, value, allowed in (("mode", self.mode, MODES), ("loss", self.loss, LOSSES),
                                    ("adversarial", self.adversarial, ADVERSARIAL),
                                    ("selection", self.selection, SELECTIONS)):
            if value not in allowed:
                out.append(f"{key} must be one of {allowed}, not {value!r}")
        unknown = sorted(set(self.train_langs) - set(XSID_LANGS))
        if not self.train_langs or unknown:
            out.append(f"train_langs must be xSID languages ({' '.join(XSID_LANGS)}); got {self.train_langs}")
        if self.discriminator:
            known = XSID_LANGS if self.adversarial == "parallel" else tuple(TATOEBA_CHALLENGE_CODES)
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
        if min(self.center_weight, self.gamma, self.critic_clip, self.dropout, self.lora_dropout,
               self.critic_dropout) < 0 or self.encoder_lr <= 0 or self.critic_lr <= 0:
            out.append("weights, clips and dropouts must be >= 0, learning rates > 0")
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


# --- data ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sentences:
    """Sentences of one language with, where known, their xSID ids (shared by translations) and intent indices."""

    lang: str
    texts: list[str]
    ids: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, rows: Sequence[int]) -> Sentences:
        """The given rows, in that order."""
        return Sentences(self.lang, [self.texts[i] for i in rows], [self.ids[i] for i in rows] if self.ids else [],
                         [self.labels[i] for i in rows] if self.labels else [])


@dataclass(frozen=True)
class EmuData:
    """Labelled training and held-out utterances per training language, and adversarial sentences per language."""

    intents: list[str]
    train: dict[str, Sentences]
    valid: dict[str, Sentences]
    adversarial: dict[str, Sentences]
    summary: dict[str, Any] = field(default_factory=dict)

    def key(self) -> dict[str, Any]:
        """Checksums of every sentence list (a resumed run must see the same data)."""
        return {role: {lang: sentences_key(s.texts + s.ids + [str(x) for x in s.labels], lang)
                       for lang, s in sets.items()}
                for role, sets in (("train", self.train), ("valid", self.valid), ("adversarial", self.adversarial))}


def held_out_ids(ids: Sequence[str], intents: Sequence[str], size: int, seed: int) -> set[str]:
    """``size`` ids set aside for validation, stratified by intent (largest remainder), each intent keeping at
    least one training utterance (so fewer than ``size`` when that cannot be met).

    >>> sorted(held_out_ids([str(i) for i in range(10)], ["a"] * 6 + ["b"] * 3 + ["c"], 5, seed=0), key=int)
    ['2', '3', '5', '6', '7']
    """
    counts = Counter(intents)
    exact = {c: size * n / len(ids) for c, n in counts.items()}
    quota = {c: min(int(exact[c]), n - 1) for c, n in counts.items()}
    left = size - sum(quota.values())
    for c in sorted(counts, key=lambda c: (int(exact[c]) - exact[c], c)):
        if left > 0 and quota[c] < counts[c] - 1:
            quota[c] += 1
            left -= 1
    rng = np.random.default_rng(seed)
    chosen: set[str] = set()
    for c in sorted(counts):
        rows = [i for i, x in enumerate(intents) if x == c]
        chosen.update(ids[rows[j]] for j in rng.permutation(len(rows))[: quota[c]])
    return chosen


def unlabelled_sentences(lang: str, n: int, seed: int, root: str | Path | None = None) -> Sentences:
    """``n`` distinct sentences in ``lang`` drawn (seeded) from :data:`UNLABELLED_SOURCE`, excluding the Tatoeba
    v1 test pairs and every xSID utterance of ``lang`` (valid and test)."""
    texts, _ = load_tatoeba_challenge(TATOEBA_CHALLENGE_CODES[lang], root)
    xsid = {t.strip() for split in ("valid", "test") for t in load_xsid(lang, split, root).texts}
    pool = [t for t in dict.fromkeys(t.strip() for t in texts) if t and t not in xsid]
    rng = np.random.default_rng([seed, *lang.encode()])
    rows = np.sort(rng.choice(len(pool), size=min(n, len(pool)), replace=False))
    return Sentences(lang, [pool[i] for i in rows])


def build_data(config: EmuConfig, root: str | Path | None = None) -> EmuData:
    """Labelled xSID valid utterances of ``train_langs`` (minus ``valid_size`` held-out ids, the same ids in every
    language) and the adversarial sentences: unrelated ones (``random``) or xSID valid translations of the
    training utterances (``parallel``)."""
    english = load_xsid("en", "valid", root)
    held = held_out_ids(english.ids, english.intents, config.valid_size, config.seed)
    sets = {lang: load_xsid(lang, "valid", root) for lang in config.train_langs}
    intents = sorted({i for s in sets.values() for i in s.intents})
    index = {x: i for i, x in enumerate(intents)}
    train, valid = {}, {}
    for lang, s in sets.items():
        rows = Sentences(lang, s.texts, s.ids, [index[x] for x in s.intents])
        train[lang] = rows.subset([i for i, x in enumerate(s.ids) if x not in held])
        valid[lang] = rows.subset([i for i, x in enumerate(s.ids) if x in held])
    adversarial: dict[str, Sentences] = {}
    for lang in config.adversarial_langs if config.discriminator else []:
        if config.adversarial == "parallel":
            s = load_xsid(lang, "valid", root)
            adversarial[lang] = Sentences(lang, s.texts, s.ids).subset([i for i, x in enumerate(s.ids)
                                                                        if x not in held])
        else:
            adversarial[lang] = unlabelled_sentences(lang, config.unlabelled_per_lang, config.seed, root)
    source = "xSID 0.7 valid (translations of the training utterances)" if config.adversarial == "parallel" \
        else UNLABELLED_SOURCE
    summary = {"labelled": {lang: {"source": "xSID 0.7 valid", "train": len(train[lang]),
                                   "held_out": len(valid[lang])} for lang in train},
               "intents": len(intents),
               "adversarial": {"source": source, "sentences": {lang: len(s) for lang, s in adversarial.items()}}}
    return EmuData(intents, train, valid, adversarial, summary)


# --- the heads ----------------------------------------------------------------------------------------------


class SoftmaxLoss(nn.Module):
    """The softmax baseline (paper 002, "Baselines"): a linear layer on u and softmax cross-entropy."""

    def __init__(self, dim: int, n_classes: int) -> None:
        super().__init__()
        self.classifier = nn.Linear(dim, n_classes)

    def forward(self, u: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.classifier(u), labels)


def semantic_loss(config: EmuConfig, dim: int, n_classes: int) -> nn.Module:
    """C's loss ``(u, labels) -> scalar``: EMU's L2-constrained softmax or one of the baselines."""
    if config.loss == "l2-softmax":
        return L2ConstrainedSoftmaxLoss(dim, n_classes, config.alpha)
    if config.loss == "softmax":
        return SoftmaxLoss(dim, n_classes)
    if config.loss == "contrastive":
        return ContrastiveLoss(config.contrastive_margin)
    return NPairLoss(config.npair_scale)


def make_critic(dim: int, hidden: int, dropout: float) -> nn.Module:
    """D_t: two ``hidden``-d fully connected layers with ReLU and dropout, then a linear score (paper: 900, 0.2;
    the activation is not stated)."""
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, 1))


def fitting(model: TrainableTransformer, sentences: Sentences, max_tokens: int) -> Sentences:
    """``sentences`` without those longer than ``max_tokens`` tokens (prefix and special tokens included)."""
    encs = model.tokenizer.encode_batch([model.prefix + t for t in sentences.texts], add_special_tokens=False)
    keep = [i for i, e in enumerate(encs) if len(e.ids) + 2 <= min(max_tokens, model.max_tokens)]
    if len(keep) < len(sentences):
        log.info("%s: dropped %d of %d sentences longer than %d tokens", sentences.lang, len(sentences) - len(keep),
                 len(sentences), max_tokens)
    return sentences.subset(keep)


def encode(model: TrainableTransformer, texts: Sequence[str]) -> np.ndarray:
    """Unit rows of ``model`` for ``texts``, without gradients, in the model's current mode."""
    with torch.no_grad():
        parts = [model.embed(texts[i : i + ENCODE_ROWS]).float().cpu().numpy()
                 for i in range(0, len(texts), ENCODE_ROWS)]
    return l2_normalize(np.vstack(parts) if parts else np.zeros((0, model.dim), np.float32))


# --- training ------------------------------------------------------------------------------------------------


@dataclass
class FitResult:
    """The fine-tuned encoder (best validated weights when selection ran), the effective config and the log."""

    model: TrainableTransformer
    config: EmuConfig
    history: list[dict[str, float]]
    best: dict[str, Any] | None
    validations: list[dict[str, Any]]
    seconds: float


def _validation(config: EmuConfig, data: EmuData, model: TrainableTransformer) -> Validation | None:
    """Leave-one-out nearest-neighbour Acc@1 of the held-out utterances of each training language, their pool
    being the other held-out and all training utterances of that language; ``loo`` is the mean."""
    if config.eval_every < 1 or not any(len(s) for s in data.valid.values()):
        return None

    def evaluate() -> dict[str, float]:
        model.eval()
        scores = {}
        for lang, held in data.valid.items():
            pool = data.train[lang]
            q, p = encode(model, held.texts), encode(model, pool.texts)
            scores[f"loo/{lang}"] = loo_nn_accuracy(q, held.ids, held.labels, np.vstack([q, p]),
                                                    held.ids + pool.ids, held.labels + pool.labels)
        model.train()
        return {"loo": float(np.mean(list(scores.values()))), **scores}

    return Validation(evaluate, "loo", config.eval_every)


def fit(config: EmuConfig, data: EmuData, model: TrainableTransformer, out: Path, *, resume: bool = False,
        progress: bool = True, meta: dict[str, Any] | None = None) -> FitResult:
    """Fine-tune ``model`` on ``data`` in ``out`` (checkpoints, ``train.jsonl``) by Algorithm 1."""
    config.check()
    torch.manual_seed(config.seed)

    def short(sets: dict[str, Sentences]) -> dict[str, Sentences]:
        return {lang: fitting(model, s, config.max_tokens) for lang, s in sets.items()}

    data = dataclasses.replace(data, train=short(data.train), valid=short(data.valid),
                               adversarial=short(data.adversarial))
    train, adversarial = data.train, data.adversarial
    if any(len(s) < 2 for s in train.values()) or any(len(s) < 1 for s in adversarial.values()):
        raise ValueError("need at least two labelled utterances per training language and one adversarial "
                         "sentence per adversarial language")
    if config.adversarial == "parallel" and not all(s.ids for s in adversarial.values()):
        raise ValueError("parallel adversarial sentences need the ids of the utterances they translate")
    config = with_steps(config, sum(len(s) for s in train.values()))
    device = resolve_device(config.device)
    if config.lora:
        model.apply_lora(config.lora_r, config.lora_alpha, config.lora_dropout)
    model.set_dropout(config.dropout, config.dropout)
    model.to(device).train()
    encoder = TrainedPart(model)
    head = semantic_loss(config, model.dim, len(data.intents))
    center = CenterLoss(len(data.intents), model.dim) if config.center_loss else None
    modules: dict[str, nn.Module] = {"encoder": encoder, "head": head}
    if center is not None:
        modules["center"] = center
    head_params = [p for m in (head, center) if m is not None for p in m.parameters()]
    groups: list[dict[str, Any]] = [{"params": [p for p in model.parameters() if p.requires_grad],
                                    "lr": config.encoder_lr, "name": "encoder"}]
    if head_params:
        groups.append({"params": head_params, "lr": config.lr, "name": "head"})
    optimizers: dict[str, torch.optim.Optimizer] = {"model": torch.optim.Adam(groups)}
    critics: dict[str, WassersteinCritic] = {}
    critic_groups: dict[str, CriticGroup] = {}
    if config.discriminator:
        for t in train:
            critics[t] = WassersteinCritic(make_critic(model.dim, config.critic_hidden, config.critic_dropout),
                                           clip=config.critic_clip)
            modules[f"critic_{t}"] = critics[t]
            optimizers[f"critic_{t}"] = torch.optim.Adam(critics[t].parameters(), lr=config.critic_lr)
            critic_groups[t] = CriticGroup({t: critics[t]}, {t: optimizers[f"critic_{t}"]}, config.critic_steps)
    trainer = Trainer(out, config, TrainState(modules, optimizers), meta=meta, progress=progress,
                      validation=_validation(config, data, model), scheduled=["model"], desc=f"emu {config.mode}")
    langs = list(train)
    adv_langs = list(adversarial)
    translations = {lang: dict(zip(s.ids, s.texts, strict=True)) for lang, s in adversarial.items() if s.ids}
    bs, seed, k = config.batch_size, config.seed, config.critic_steps

    def labelled(t: str, draw: int, stream: int) -> Sentences:
        return train[t].subset(batch_indices(len(train[t]), bs, draw, seed, stream + langs.index(t)).tolist())

    def adversarial_batch(t: str, batch: Sentences, draw: int, gen: torch.Generator) -> list[str]:
        """Sentences of a random language l != t: unrelated ones, or the translations of ``batch``."""
        if config.adversarial == "parallel":
            options = [lang for lang in adv_langs if lang != t and set(batch.ids) & translations[lang].keys()]
        else:
            options = [lang for lang in adv_langs if lang != t]
        if not options:
            raise ValueError(f"no adversarial language has a translation of the batch of {t}")
        lang = options[int(torch.randint(len(options), (1,), generator=gen))]
        if config.adversarial == "parallel":
            return [translations[lang][i] for i in batch.ids if i in translations[lang]]
        pool = adversarial[lang]
        rows = batch_indices(len(pool), bs, draw, seed, ADVERSARIAL_STREAM + adv_langs.index(lang))
        return [pool.texts[i] for i in rows]

    def step(s: int) -> dict[str, float]:
        gen = step_generator(seed, s)
        t = langs[int(torch.randint(len(langs), (1,), generator=gen))] if len(langs) > 1 else langs[0]
        metrics: dict[str, float] = {}
        if critic_groups:
            def critic_loss(_: str, j: int) -> torch.Tensor:
                batch = labelled(t, s * k + j, CRITIC_STREAM)
                other = adversarial_batch(t, batch, s * (k + 1) + j, gen)
                with torch.no_grad():
                    u, v = F.normalize(model.embed(batch.texts), dim=1), F.normalize(model.embed(other), dim=1)
                loss: torch.Tensor = critics[t](v, u)
                return loss

            (metrics["critic"],) = critic_groups[t].update(critic_loss).values()
        batch = labelled(t, s, 0)
        labels = torch.tensor(batch.labels, device=device)
        u = model.embed(batch.texts)
        sem = head(u, labels)
        loss = sem
        metrics.update({"semantic": sem.item(), "u_norm": u.detach().norm(dim=1).mean().item()})
        if center is not None:
            cen = center(u, labels)
            loss = loss + config.center_weight * cen
            metrics["center"] = cen.item()
        if critic_groups:
            other = adversarial_batch(t, batch, s * (k + 1) + k, gen)
            v = model.embed(other)
            with critic_groups[t].frozen():
                gap = critics[t].gap(F.normalize(v, dim=1), F.normalize(u, dim=1))
            loss = loss - config.gamma * gap
            metrics["critic_gap"] = gap.item()
        trainer.update("model", loss)
        metrics["loss"] = loss.item()
        return metrics

    result = trainer.run(step, resume=resume)
    best = trainer.restore_best(["encoder"]) if config.selection != "none" else None
    model.eval()
    return FitResult(model, config, result.history, best, result.validations, result.seconds)


def train_on(config: EmuConfig, data: EmuData, backbone: TransformerEncoder, out_dir: str | Path, *,
             resume: bool = False, progress: bool = True) -> Path:
    """Fine-tune a trainable copy of ``backbone`` on ``data`` and write the model directory ``out_dir``.

    Checkpoints go to ``out_dir/checkpoints`` and are removed once the model is written; ``resume`` continues a
    killed run (or returns a finished one as it is).
    """
    out = Path(out_dir)
    if prepare_output(out, resume, config):
        return out
    start = time.perf_counter()
    meta = {"backbone": backbone.id, "data": data.key()}
    fitted = fit(config, data, TrainableTransformer(backbone), out, resume=resume, progress=progress, meta=meta)
    held_out = sum(len(s) for s in data.valid.values())
    training = {"data": {"kind": "labelled xSID valid / unlabelled", "src_lang": "+".join(data.train),
                         "tgt_lang": "+".join(data.adversarial),
                         "src_sentences": sum(len(s) for s in data.train.values()),
                         "tgt_sentences": sum(len(s) for s in data.adversarial.values()), "summary": data.summary,
                         "intents": data.intents},
                "validation": {"pairs": held_out, "selection": fitted.config.selection, "best": fitted.best,
                               "last": fitted.validations[-1]["validation"] if fitted.validations else None},
                "final": fitted.history[-1] if fitted.history else {},
                "seconds": round(time.perf_counter() - start, 1)}
    return save_finetuned(out, fitted.model, NAME, fitted.config, training=training, metrics={})


def train(config: TrainConfig, out: str | Path, *, resume: bool = False, data: str | Path | None = None,
          progress: bool = True) -> Path:
    """``xlsent train emu``: build the xSID (and unlabelled) data, load the backbone, fine-tune, save."""
    if not isinstance(config, EmuConfig):
        raise TypeError(f"expected an EmuConfig, got {type(config).__name__}")
    if prepare_output(out, resume):
        return Path(out)
    return train_on(config, build_data(config, data), transformer_backbone(config.backbone), out, resume=resume,
                    progress=progress)


# --- model directory -----------------------------------------------------------------------------------------


def load_model(model_dir: str | Path, *, name: str | None = None, verify: str = "cached") -> TransformerEncoder:
    """The encoder of an EMU model directory: the backbone with the adapters merged in, or the full weights.

    >>> enc = load_model("models/emu")                                   # doctest: +SKIP
    >>> enc.encode(["Wird es heute regnen?", "Will it rain today?"]).shape  # doctest: +SKIP
    (2, 384)
    """
    return load_finetuned(model_dir, NAME, name=name, verify=verify)


METHOD = Method(
    name=NAME,
    summary="EMU (paper 002): semantic specialization from English intent labels (L2-softmax + center loss + "
            "language critic)",
    config_class=EmuConfig,
    defaults="emu.toml",
    train=train,
    encoder=load_model,
    modes=MODES,
)
