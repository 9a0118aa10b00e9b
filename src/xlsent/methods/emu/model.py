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
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from xlsent.encoders.base import l2_normalize
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.intent import loo_nn_accuracy
from xlsent.methods.emu.config import DEFAULTS, MODES, NAME, EmuConfig, with_steps
from xlsent.methods.emu.data import EmuData, Sentences, build_data
from xlsent.training.adversarial import CriticGroup
from xlsent.training.batching import batch_indices, step_generator
from xlsent.training.checkpoint import TrainState
from xlsent.training.finetuned import TrainedPart, load_finetuned, save_finetuned, transformer_backbone
from xlsent.training.loop import FitResult, Trainer, held_out_validation, resolve_device
from xlsent.training.losses import (
    CenterLoss,
    ContrastiveLoss,
    L2ConstrainedSoftmaxLoss,
    NPairLoss,
    WassersteinCritic,
)
from xlsent.training.method import Method, begin_training, checked_train
from xlsent.training.networks import mlp
from xlsent.training.record import DataRecord, TrainingRecord, ValidationRecord
from xlsent.training.toy import TOY_DE, TOY_EN

log = logging.getLogger(__name__)

# batch_indices streams: labelled encoder batches use the training language's index, then these offsets
CRITIC_STREAM, ADVERSARIAL_STREAM = 100, 200

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


def language_critic(dim: int, hidden: int, dropout: float) -> nn.Module:
    """D_t: two ``hidden``-d fully connected layers with ReLU and dropout, then a linear score (paper: 900, 0.2;
    the activation is not stated)."""
    return mlp(dim, [hidden, hidden], 1, activation=nn.ReLU, dropout=dropout)


def fitting(model: TrainableTransformer, sentences: Sentences, max_tokens: int) -> Sentences:
    """``sentences`` without those longer than ``max_tokens`` tokens (prefix and special tokens included)."""
    encs = model.tokenizer.encode_batch([model.prefix + t for t in sentences.texts], add_special_tokens=False)
    keep = [i for i, e in enumerate(encs) if len(e.ids) + 2 <= min(max_tokens, model.max_tokens)]
    if len(keep) < len(sentences):
        log.info("%s: dropped %d of %d sentences longer than %d tokens", sentences.lang, len(sentences) - len(keep),
                 len(sentences), max_tokens)
    return sentences.subset(keep)


# --- training ------------------------------------------------------------------------------------------------


def held_out_loo(model: TrainableTransformer, data: EmuData) -> dict[str, float]:
    """Leave-one-out nearest-neighbour Acc@1 of the held-out utterances of each training language, their pool
    being the other held-out and all training utterances of that language; ``loo`` is the mean."""
    scores = {}
    for lang, held in data.valid.items():
        pool = data.train[lang]
        q, p = l2_normalize(model.vectors(held.texts)), l2_normalize(model.vectors(pool.texts))
        scores[f"loo/{lang}"] = loo_nn_accuracy(q, held.ids, held.labels, np.vstack([q, p]),
                                                held.ids + pool.ids, held.labels + pool.labels)
    return {"loo": float(np.mean(list(scores.values()))), **scores}


@dataclass
class EmuFit(FitResult[TrainableTransformer]):
    """The fit's result and the effective configuration (``steps`` set from ``epochs``)."""

    config: EmuConfig


def fit(config: EmuConfig, data: EmuData, model: TrainableTransformer, out: Path, *, resume: bool = False,
        progress: bool = True, meta: dict[str, Any] | None = None) -> EmuFit:
    """Fine-tune ``model`` on ``data`` in ``out`` (checkpoints, ``train.jsonl``) by Algorithm 1; with selection, the
    result holds the best validated weights."""
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
            critics[t] = WassersteinCritic(language_critic(model.dim, config.critic_hidden, config.critic_dropout),
                                           clip=config.critic_clip)
            modules[f"critic_{t}"] = critics[t]
            optimizers[f"critic_{t}"] = torch.optim.Adam(critics[t].parameters(), lr=config.critic_lr)
            critic_groups[t] = CriticGroup({t: critics[t]}, {t: optimizers[f"critic_{t}"]}, config.critic_steps)
    held = data if any(len(s) for s in data.valid.values()) else None
    trainer = Trainer(out, config, TrainState(modules, optimizers), meta=meta, progress=progress,
                      validation=held_out_validation(config, held, partial(held_out_loo, model), "loo"),
                      scheduled=["model"], desc=f"emu {config.mode}")
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
    return EmuFit(model, result, best, config)


def train_on(config: EmuConfig, data: EmuData, backbone: TransformerEncoder, out_dir: str | Path, *,
             resume: bool = False, progress: bool = True) -> Path:
    """Fine-tune a trainable copy of ``backbone`` on ``data`` and write the model directory ``out_dir``.

    Checkpoints go to ``out_dir/checkpoints`` and are removed once the model is written; ``resume`` continues a
    killed run (or returns a finished one as it is).
    """
    run = begin_training(out_dir, resume, config)
    if run is None:
        return Path(out_dir)
    out = run.out
    meta = {"backbone": backbone.id, "data": data.key()}
    fitted = fit(config, data, TrainableTransformer(backbone), out, resume=resume, progress=progress, meta=meta)
    held_out = sum(len(s) for s in data.valid.values())
    training = TrainingRecord(
        DataRecord.two_sides("labelled xSID valid / unlabelled", "+".join(data.train), "+".join(data.adversarial),
                             sum(len(s) for s in data.train.values()),
                             sum(len(s) for s in data.adversarial.values()), summary=data.summary,
                             intents=data.intents),
        run.seconds(), steps_done=fitted.config.steps, train_seconds=round(fitted.run.seconds, 1),
        final=fitted.run.final,
        validation=ValidationRecord.of_run("loo", held_out, fitted.config.selection, fitted.run,
                                           restored=fitted.best))
    return save_finetuned(out, fitted.model, NAME, fitted.config, training=training)


def _train(config: EmuConfig, out: Path, *, resume: bool = False, data: str | Path | None = None,
           progress: bool = True) -> Path:
    """``xlsent train emu``: build the xSID (and unlabelled) data, load the backbone, fine-tune, save."""
    return train_on(config, build_data(config, data), transformer_backbone(config.backbone), out, resume=resume,
                    progress=progress)


train = checked_train(EmuConfig, _train)


# --- model directory -----------------------------------------------------------------------------------------


def load_model(model_dir: str | Path, *, name: str | None = None, verify: str = "cached") -> TransformerEncoder:
    """The encoder of an EMU model directory: the backbone with the adapters merged in, or the full weights.

    >>> enc = load_model("models/emu")                                   # doctest: +SKIP
    >>> enc.encode(["Wird es heute regnen?", "Will it rain today?"]).shape  # doctest: +SKIP
    (2, 384)
    """
    return load_finetuned(model_dir, NAME, name=name, verify=verify)



def smallest_model(out: Path, backbone: TransformerEncoder) -> Path:
    """EMU's smallest model: two steps on the toy English sentences in two classes, German for the critic."""
    cfg = METHOD.config(sets=["device=cpu", "steps=2", "batch_size=4", "critic_steps=1", "critic_hidden=8",
                              "adversarial_langs=de", "checkpoint_every=100", "eval_every=0", "valid_size=0"])
    train = Sentences("en", TOY_EN, [str(i) for i in range(len(TOY_EN))], [i // 4 for i in range(len(TOY_EN))])
    data = EmuData(["dog", "cat"], {"en": train}, {"en": train.subset([])}, {"de": Sentences("de", TOY_DE)})
    return train_on(cfg, data, backbone, out, progress=False)  # type: ignore[arg-type]

METHOD = Method(
    name=NAME,
    summary="EMU (paper 002): semantic specialization from English intent labels (L2-softmax + center loss + "
            "language critic)",
    config_class=EmuConfig,
    defaults=DEFAULTS,
    train=train,
    encoder=load_model,
    modes=MODES,
    smallest=smallest_model,
)
