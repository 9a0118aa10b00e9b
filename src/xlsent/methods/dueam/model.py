"""DuEAM (paper 000): a dual-encoder learner taught by a frozen anchor's Word Mover's Distance, no parallel data.

The same sentence pair (s_i, t_i), not translations, possibly in two languages, goes to a frozen *anchor*, which
scores it by the Word Mover's Distance of its contextual token embeddings (:mod:`xlsent.methods.dueam.wmd`, a scalar
without gradient), and to the *learner*, the encoder being trained (mean pooling of its last layer), which
embeds s_i and t_i as s'_i and t'_i. The learner minimises (eqs. 1, 2 and section 3.3)::

    L_A = mean_i exp(|exp(-d_euc(s'_i, t'_i)) - exp(-d_wmd(s_i, t_i))|)
    L_B = mean_i cos(s'_i, t'_i)
    L   = L_A - lambda L_B,   lambda = 0.003

The ablations train ``objective = "LA"`` (L_A alone) or ``"LB"`` (minimise -L_B alone; its Figure 2). The
learner starts from the backbone (:class:`~xlsent.encoders.trainable.TrainableTransformer`) and is fine-tuned
fully or through LoRA adapters. Pairs come from XNLI dev (:mod:`xlsent.methods.dueam.data`); the checkpoint is
chosen by retrieval accuracy on held-out parallel pairs. The model directory (type ``dueam``) holds the learner's
weights (a ``transformer`` model, or ``transformer-lora`` adapters over the named backbone) and loads as an
ordinary transformer encoder.

>>> from xlsent.methods.dueam.model import METHOD
>>> cfg = METHOD.config(mode="unsupervised", sets=["steps=200"])
>>> cfg.mode, cfg.lambda_b, cfg.objective, cfg.steps
('unsupervised', 0.003, 'both', 200)
>>> METHOD.train(cfg, "models/dueam-unsup")                                      # doctest: +SKIP
>>> xlsent.load("models/dueam-unsup").encode(["Der Hund bellt.", "The dog barks."]).shape  # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from xlsent.encoders.cache import encoder_id, sentences_key
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.selection import retrieval_criterion
from xlsent.methods.dueam.config import DEFAULTS, MODES, NAME, OBJECTIVES, DueamConfig
from xlsent.methods.dueam.data import HeldOut, SentencePairs, build_pairs, heldout_pairs, validation_langs
from xlsent.methods.dueam.wmd import Idf, TokenAnchor, WmdSettings, content_ids, pair_distances
from xlsent.training.batching import batch_indices
from xlsent.training.checkpoint import TrainState
from xlsent.training.finetuned import (
    TrainedPart,
    load_finetuned,
    parameter_groups,
    save_finetuned,
    transformer_backbone,
)
from xlsent.training.loop import FitResult, Trainer, held_out_validation
from xlsent.training.method import Method, begin_training, checked_train
from xlsent.training.record import DataRecord, TrainingRecord, ValidationRecord
from xlsent.training.toy import TOY_DE, TOY_EN

log = logging.getLogger(__name__)

# --- the loss ------------------------------------------------------------------------------------------------


class DueamLoss(nn.Module):
    """``L = L_A - lambda L_B`` (paper 000, eqs. 1-2, section 3.3) of a batch of learner embeddings and anchor WMDs.

    ``normalize`` scales the learner's vectors to unit length before ``d_euc`` and the cosine (the paper leaves it
    open; unit vectors put ``d_euc`` in [0, 2], the range of WMD over unit token vectors). ``objective`` ``LA``
    minimises L_A alone, ``LB`` minimises -L_B alone. Returns the loss and every term (logged either way).

    >>> loss_fn = DueamLoss(lambda_b=0.5, normalize=False)
    >>> s, t = torch.zeros(1, 2), torch.tensor([[3.0, 4.0]])       # d_euc = 5, cosine of a zero vector = 0
    >>> loss, terms = loss_fn(s, t, torch.tensor([5.0]))           # d_wmd = d_euc: L_A = exp(0) = 1
    >>> round(loss.item(), 6), terms["L_A"], terms["L_B"], terms["d_euc"]
    (1.0, 1.0, 0.0, 5.0)
    """

    def __init__(self, lambda_b: float = 0.003, objective: str = "both", normalize: bool = True) -> None:
        super().__init__()
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, not {objective!r}")
        self.lambda_b, self.objective, self.normalize = lambda_b, objective, normalize

    def forward(self, s: torch.Tensor, t: torch.Tensor, d_wmd: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
        if self.normalize:
            s, t = F.normalize(s, dim=1), F.normalize(t, dim=1)
        d_euc = torch.linalg.vector_norm(s - t, dim=1)
        target = torch.exp(-d_wmd.to(s.dtype))
        loss_a = torch.exp((torch.exp(-d_euc) - target).abs()).mean()
        loss_b = F.cosine_similarity(s, t, dim=1).mean()
        if self.objective == "both":
            loss = loss_a - self.lambda_b * loss_b
        elif self.objective == "LA":
            loss = loss_a
        else:
            loss = -loss_b
        terms = {"L_A": loss_a.item(), "L_B": loss_b.item(), "loss": loss.item(), "d_euc": d_euc.mean().item(),
                 "d_wmd": d_wmd.float().mean().item()}
        return loss, terms


# --- the learner ---------------------------------------------------------------------------------------------


def make_learner(backbone: TransformerEncoder, config: DueamConfig) -> TrainableTransformer:
    """A trainable copy of ``backbone`` with the config's dropout, and LoRA adapters if ``finetune = "lora"``."""
    learner = TrainableTransformer(backbone)
    learner.set_dropout(config.dropout, config.dropout)
    if config.finetune == "lora":
        learner.apply_lora(r=config.lora_r, alpha=config.lora_alpha, dropout=config.lora_dropout)
    return learner


# --- data preparation ----------------------------------------------------------------------------------------


def resolve_layer(anchor: TokenAnchor, layer: int) -> int:
    """``layer`` as an index into the anchor's ``num_layers + 1`` states (negative counts from the last)."""
    n = anchor.num_layers + 1
    if not -n <= layer < n:
        raise ValueError(f"anchor_layer {layer} is out of range for {anchor.name} (states 0..{n - 1})")
    return layer % n


def _too_long(sentences: Sequence[str], anchor: TokenAnchor, learner: TrainableTransformer) -> set[str]:
    """Sentences that do not fit the anchor's or the learner's position window (with their specials)."""
    anchor_lengths = [len(ids) for ids, _ in anchor.prefixed_ids(sentences)]
    learner_lengths = [len(e.ids) for e in learner.tokenizer.encode_batch(
        [learner.prefix + s for s in sentences], add_special_tokens=False)]
    return {s for s, a, b in zip(sentences, anchor_lengths, learner_lengths, strict=True)
            if a > anchor.max_tokens - 2 or b > learner.max_tokens - 2}


def usable_pairs(data: SentencePairs, anchor: TokenAnchor, learner: TrainableTransformer) -> SentencePairs:
    """``data`` without the pairs that hold a sentence too long for the anchor or the learner."""
    long = _too_long(sorted(set(data.src) | set(data.tgt)), anchor, learner)
    if not long:
        return data
    keep = [i for i, (s, t) in enumerate(zip(data.src, data.tgt, strict=True)) if s not in long and t not in long]
    log.info("dropping %d of %d pairs with a sentence longer than the model window", len(data) - len(keep), len(data))
    return data.subset(keep)


def usable_heldout(valid: HeldOut, anchor: TokenAnchor, learner: TrainableTransformer) -> HeldOut:
    """``valid`` without the pairs too long for the learner (or the anchor)."""
    long = _too_long(sorted(set(valid.src) | set(valid.tgt)), anchor, learner)
    keep = [i for i, (s, t) in enumerate(zip(valid.src, valid.tgt, strict=True)) if s not in long and t not in long]
    return HeldOut([valid.src[i] for i in keep], [valid.tgt[i] for i in keep], [valid.langs[i] for i in keep],
                   valid.tgt_lang)


def anchor_id(anchor: TokenAnchor) -> str:
    """What identifies the anchor's vectors: its encoder id, or its name where it has none."""
    return str(getattr(anchor, "id", anchor.name))


def wmd_settings(config: DueamConfig, anchor: TokenAnchor, idf: Idf | None) -> WmdSettings:
    """The anchor distance settings of ``config`` (layer resolved, idf checksum when idf-weighted)."""
    return WmdSettings(anchor=anchor_id(anchor), layer=resolve_layer(anchor, config.anchor_layer),
                       weighting=config.weighting, solver=config.solver, reg=config.sinkhorn_reg,
                       idf=idf.checksum() if idf is not None else "")


def anchor_distances(config: DueamConfig, data: SentencePairs, anchor: TokenAnchor, *, root: Path | None = None,
                     progress: bool = True) -> tuple[np.ndarray, WmdSettings]:
    """``d_wmd`` of every training pair (cached on disk) and the settings they were computed with.

    Idf weights (``weighting = "idf"``) are counted over ``data.corpus``, every sentence the pairs are drawn from.
    """
    idf = Idf.fit(content_ids(anchor, data.corpus)) if config.weighting == "idf" else None
    settings = wmd_settings(config, anchor, idf)
    return pair_distances(anchor, data.src, data.tgt, settings, idf=idf, root=root, progress=progress), settings


# --- training ------------------------------------------------------------------------------------------------


def held_out_retrieval(learner: TrainableTransformer, valid: HeldOut) -> dict[str, float]:
    """Retrieval accuracy (both directions, %) of the learner on the held-out pairs (paper section 5)."""
    return {"retrieval": retrieval_criterion(learner.vectors(valid.src), learner.vectors(valid.tgt))}


def fit(config: DueamConfig, learner: TrainableTransformer, data: SentencePairs, distances: np.ndarray, out: Path, *,
        valid: HeldOut | None = None, resume: bool = False, progress: bool = True,
        meta: dict[str, Any] | None = None) -> FitResult[TrainableTransformer]:
    """Train ``learner`` on ``data`` with the anchor ``distances`` (row i belongs to pair i) in ``out``; the result
    holds the best validated weights when validation ran."""
    config.check()
    if len(distances) != len(data):
        raise ValueError(f"{len(distances)} distances for {len(data)} pairs")
    if len(data) < 2:
        raise ValueError("need at least two training pairs")
    torch.manual_seed(config.seed)
    part = TrainedPart(learner)
    optimizer = torch.optim.AdamW(parameter_groups(learner, config.lr), lr=config.lr)
    trainer = Trainer(out, config, TrainState({"learner": part}, {"learner": optimizer}), meta=meta,
                      validation=held_out_validation(config, valid, partial(held_out_retrieval, learner),
                                                     "retrieval"),
                      progress=progress,
                      desc=f"dueam {config.mode}")
    criterion = DueamLoss(config.lambda_b, config.objective, config.normalize)
    dist = torch.from_numpy(np.ascontiguousarray(distances, dtype=np.float32))

    def step(s: int) -> dict[str, float]:
        rows = batch_indices(len(data), config.batch_size, s, config.seed)
        src, tgt = [data.src[i] for i in rows], [data.tgt[i] for i in rows]
        emb = learner.embed(src + tgt)
        loss, terms = criterion(emb[: len(rows)], emb[len(rows):], dist[torch.from_numpy(rows)].to(emb.device))
        trainer.update("learner", loss)
        return terms

    result = trainer.run(step, resume=resume)
    best = trainer.restore_best(["learner"])
    learner.eval()
    return FitResult(learner, result, best)


def train_on(config: DueamConfig, data: SentencePairs, anchor: TransformerEncoder, backbone: TransformerEncoder,
             out_dir: str | Path, *, valid: HeldOut | None = None, resume: bool = False, progress: bool = True,
             wmd_root: Path | None = None) -> Path:
    """Anchor distances of ``data`` (cached), train the learner from ``backbone``, write the model directory.

    Checkpoints go to ``out_dir/checkpoints`` and are removed once the model is written; ``resume`` continues a
    killed run (or returns a finished one as it is).
    """
    run = begin_training(out_dir, resume, config)
    if run is None:
        return Path(out_dir)
    out = run.out
    learner = make_learner(backbone, config)
    data = usable_pairs(data, anchor, learner)
    valid = usable_heldout(valid, anchor, learner) if valid is not None and config.eval_every > 0 else None
    if valid is not None and len(valid.src) < 2:
        raise ValueError("fewer than 2 held-out pairs fit the model window; validate on shorter pairs or set "
                         "eval_every = 0")
    anchor_start = time.perf_counter()
    distances, settings = anchor_distances(config, data, anchor, root=wmd_root, progress=progress)
    wmd_seconds = time.perf_counter() - anchor_start
    meta: dict[str, Any] = {"backbone": encoder_id(backbone), "wmd": settings.key(),
                            "data": sentences_key([*data.src, *data.tgt], None)}
    if valid is not None:
        meta["valid"] = sentences_key([*valid.src, *valid.tgt], None)
    fitted = fit(config, learner, data, distances, out, valid=valid, resume=resume, progress=progress, meta=meta)
    langs = list(data.summary.get("langs", config.langs))
    summary = data.summary
    parts = {k.replace("_", "-"): summary[k] for k in ("monolingual", "cross_lingual") if k in summary}
    training = TrainingRecord(
        DataRecord.multilingual(f"{config.mode} XNLI-dev pairs", summary.get("pairs", len(data)), langs, parts=parts,
                                sampled_from=summary.get("sampled_from"), src_sentences=len(data),
                                pairs_key=meta["data"], summary=summary),
        run.seconds(), steps_done=config.steps, train_seconds=round(fitted.run.seconds, 1), final=fitted.run.final,
        validation=ValidationRecord.of_run(
            "retrieval", len(valid.src) if valid else 0, "retrieval" if valid else "none", fitted.run,
            restored=fitted.best, langs=sorted(set(valid.langs)) if valid else []),
        details={"anchor": {"settings": asdict(settings), "key": settings.key(),
                            "mean_d_wmd": float(np.mean(distances)), "seconds": round(wmd_seconds, 1)},
                 "pairs": len(data), "pairs_seen": config.steps * config.batch_size,
                 "epochs": round(config.steps * config.batch_size / len(data), 3),
                 "device": str(fitted.model.device)})
    return save_model(out, fitted.model, config, anchor, training)


def _train(config: DueamConfig, out: Path, *, resume: bool = False, data: str | Path | None = None,
           progress: bool = True) -> Path:
    """``xlsent train dueam``: build the XNLI pairs and held-out pairs, load anchor and backbone, train, save."""
    pairs = build_pairs(config.mode, config.langs, max_pairs=config.max_pairs or None, seed=config.seed, root=data)
    valid = None
    if config.eval_every > 0:
        langs = config.valid_langs or validation_langs(config.langs)
        valid = heldout_pairs(langs, config.valid_pairs, seed=config.seed, root=data)
    backbone = transformer_backbone(config.backbone)
    anchor = backbone if config.anchor == config.backbone else transformer_backbone(config.anchor, "anchor")
    return train_on(config, pairs, anchor, backbone, out, valid=valid, resume=resume, progress=progress)


train = checked_train(DueamConfig, _train)


# --- model directory and encoder -----------------------------------------------------------------------------


def save_model(directory: str | Path, learner: TrainableTransformer, config: DueamConfig, anchor: TokenAnchor,
               training: TrainingRecord, *, name: str | None = None) -> Path:
    """Write the learner, ``config.toml`` and an ``xlsent.json`` of type ``dueam`` naming the anchor
    (:func:`~xlsent.training.finetuned.save_finetuned`); ``train.jsonl`` is already there."""
    return save_finetuned(directory, learner, NAME, config, name=name,
                          anchor={"name": anchor.name, "id": anchor_id(anchor)},
                          training=training)


def load_model(model_dir: str | Path) -> TransformerEncoder:
    """The encoder of a ``dueam`` model directory: the learner as a transformer encoder (LoRA merged on load)."""
    return load_finetuned(model_dir, NAME)



def smallest_model(out: Path, backbone: TransformerEncoder) -> Path:
    """DuEAM's smallest model: two steps on the toy sentences, the backbone as anchor and learner."""
    cfg = METHOD.config(sets=["device=cpu", "eval_every=0", "batch_size=4", "steps=2", "checkpoint_every=100"])
    pairs = SentencePairs(TOY_EN, TOY_DE, ["en"] * len(TOY_EN), ["de"] * len(TOY_DE), sorted(set(TOY_EN + TOY_DE)))
    return train_on(cfg, pairs, backbone, backbone, out, progress=False,  # type: ignore[arg-type]
                    wmd_root=out.parent / "wmd")

METHOD = Method(
    name=NAME,
    summary="DuEAM (paper 000): learner fine-tuned to match a frozen anchor's WMD, plus cosine; XNLI, no bitext",
    config_class=DueamConfig,
    defaults=DEFAULTS,
    train=train,
    encoder=load_model,
    modes=MODES,
    smallest=smallest_model,
)
