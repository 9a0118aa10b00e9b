"""``xlsent train distill``: a LoRA student of the default encoder trained on the bitext of every language with
English, by multilingual knowledge distillation, translation ranking, or both.

- data (:mod:`xlsent.data.multilingual`): the X-en pairs of every corpus of ``parallel/``, test sets removed,
  ``valid_pairs`` per language held out; a batch holds ``batch_size`` pairs of one language, the language drawn with
  temperature ``temperature`` (small languages are seen); with ``char_noise`` > 0, the x sides' words are edited at
  random (:mod:`xlsent.training.char_noise`);
- teacher: the frozen ``teacher`` encoder (on ``teacher_backend``)'s unit vectors of the English sides, encoded when
  a batch first needs them (:class:`~xlsent.methods.distill.teacher.TeacherTargets`: a run pays for the pairs it
  sees, and its first step starts at once);
- student: ``backbone`` with LoRA adapters on every attention and feed-forward Linear (adapter-sized model
  directory, merged on load);
- losses: ``distill`` (:class:`~xlsent.training.losses.TeacherStudentLoss` between the student's unit vectors of
  x and of its English side and the teacher's vector of the English side; Reimers & Gurevych 2020), ``ranking``
  (:class:`~xlsent.training.losses.MultipleNegativesRankingLoss`: bidirectional in-batch softmax with additive
  margin; LaBSE, Feng et al. 2022), or ``both`` (weighted sum); with ``ranking_targets = "teacher"`` the x sides
  are ranked against the teacher's vectors of the English sides (and of the hard negatives) instead of the
  student's, so that ranking moves the x sides alone and the English space is held by distillation; with
  ``relation_weight`` > 0, :class:`~xlsent.training.losses.SimilarityDistillationLoss` also holds how the batch's
  x sides and English sides rank one another to the teacher's English (relational distillation);
- validation: every ``eval_every`` steps, retrieval of the held-out pairs of every language pooled together and
  English STS-B dev (``stsb_dev_tolerance``); the best step's adapters are kept (:func:`held_out_scores`).

>>> from xlsent.training.method import get_method                               # doctest: +SKIP
>>> cfg = get_method("distill").config(sets=["minutes=5"])                        # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from xlsent.atomic import write_json
from xlsent.data.multilingual import (
    EnglishBitext,
    TemperatureSampler,
    bitext_counts,
    build_english_bitext,
    english_languages,
)
from xlsent.data.sts import StsPairs, load_stsb_multi_mt
from xlsent.data.user_bitext import (
    MIN_HELD_OUT,
    BitextError,
    UserBitext,
    check_unchanged,
    load_user_bitext,
    shipped_without,
)
from xlsent.encoders.base import Encoder, l2_normalize
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.model_dir import ModelDirError
from xlsent.encoders.registry import load_encoder
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.selection import retrieval_criterion
from xlsent.evaluation.sts import cosine_spearman
from xlsent.methods.distill.config import DEFAULTS, NAME, SCALES_HOLDING_ENGLISH, DistillConfig
from xlsent.methods.distill.hard_negatives import nearest_non_translations
from xlsent.methods.distill.teacher import TeacherTargets
from xlsent.training import DRAW_PREFIX
from xlsent.training.batching import batch_indices
from xlsent.training.char_noise import noised_all
from xlsent.training.checkpoint import TrainState
from xlsent.training.finetuned import (
    TrainedPart,
    load_finetuned,
    parameter_groups,
    save_finetuned,
    transformer_backbone,
)
from xlsent.training.grad_cache import cached_backward
from xlsent.training.loop import Trainer, TrainResult, held_out_validation
from xlsent.training.losses import MultipleNegativesRankingLoss, SimilarityDistillationLoss, TeacherStudentLoss
from xlsent.training.method import Method, begin_training, checked_train
from xlsent.training.record import DataRecord, ObjectiveRecord, TeacherRecord, TrainingRecord, ValidationRecord
from xlsent.training.toy import TOY_DE, TOY_EN

log = logging.getLogger(__name__)

NOISE_STREAM = 7
"""The random stream of a step's character noise (seeded with the run's seed and the step: a resumed run draws the
same)."""

COUNTS_FILE = "data.json"
"""Next to the model: the training pairs per language, their held-out pairs and sources."""


@dataclass(frozen=True)
class LanguageData:
    """One language's training pairs (those that fit the student's window)."""

    lang: str
    xx: list[str]
    en: list[str]


def fitting(bitext: Sequence[EnglishBitext], learner: TrainableTransformer, max_tokens: int
            ) -> tuple[list[EnglishBitext], dict[str, int]]:
    """The bitext without training pairs holding a side over ``max_tokens`` student tokens (counted per language;
    a language left without pairs is dropped)."""
    limit = min(max_tokens, learner.max_tokens) - 2
    out, dropped = [], {}
    for b in bitext:
        lengths = [len(e.ids) for e in learner.tokenizer.encode_batch([learner.prefix + s for s in b.xx + b.en],
                                                                       add_special_tokens=False)]
        n = len(b.xx)
        keep = [i for i in range(n) if lengths[i] <= limit and lengths[n + i] <= limit]
        dropped[b.lang] = n - len(keep)
        if keep:
            out.append(EnglishBitext(b.lang, [b.xx[i] for i in keep], [b.en[i] for i in keep], b.valid_xx,
                                     b.valid_en, b.sources))
    if any(dropped.values()):
        log.info("pairs with a side over %d tokens left out: %s", limit, {k: v for k, v in dropped.items() if v})
    return out, dropped


@dataclass(frozen=True)
class DevSts:
    """English STS-B dev pairs and the backbone's Spearman on them, which the student must keep."""

    pairs: StsPairs
    baseline: float


def stsb_spearman(learner: TrainableTransformer, pairs: StsPairs) -> float:
    """Spearman x 100 of the learner's cosine on STS ``pairs`` against their gold scores."""
    return cosine_spearman(learner.vectors(pairs.sent1), learner.vectors(pairs.sent2), pairs.scores)


def pooled_retrieval(xx: Sequence[np.ndarray], en: Sequence[np.ndarray], english: Sequence[Sequence[str]]) -> float:
    """Accuracy (%) of each held-out sentence retrieving its English side among the distinct English sides of every
    language's held-out pairs (an English sentence held out for several languages is one candidate).

    >>> e = np.eye(3, dtype=np.float32)
    >>> pooled_retrieval([e[:2], e[1:2]], [e[:2], e[2:]], [["a", "b"], ["a"]])  # "a" twice: one candidate (e0)
    66.66666666666666
    """
    index: dict[str, int] = {}
    rows: list[np.ndarray] = []
    for sents, vecs in zip(english, en, strict=True):
        for s, v in zip(sents, vecs, strict=True):
            if s not in index:
                index[s] = len(rows)
                rows.append(v)
    candidates = np.stack(rows)
    queries = l2_normalize(np.concatenate(list(xx)))
    gold = np.array([index[s] for sents in english for s in sents])
    return float(np.mean(np.argmax(queries @ l2_normalize(candidates).T, axis=1) == gold) * 100)


def held_out_scores(learner: TrainableTransformer, bitext: Sequence[EnglishBitext], dev: DevSts | None,
                    tolerance: float, user: frozenset[str] = frozenset(),
                    scales: Sequence[float] = (1.0,)) -> dict[str, float]:
    """Validation: retrieval accuracy (%, both directions) of each language's held-out pairs among themselves and its
    mean over languages (``retrieval``), ``pooled retrieval`` (:func:`pooled_retrieval`) of the shipped languages,
    the mean retrieval of the ``user`` languages (``user retrieval``: those of ``--bitext``), English STS-B dev with
    its change against the backbone, and the ``selection`` criterion: pooled retrieval (its mean with user retrieval
    where the user brought bitext; user retrieval alone without shipped languages), less 100 for every point of
    STS-B dev lost beyond ``tolerance`` (so a checkpoint that keeps STS-B dev always wins over one that does not).

    With ``scales`` below 1, the step is scored at the adapter scale :func:`english_scale` picks (``adapter scale``:
    its LoRA updates scaled down, the weights interpolated towards the backbone), and training goes on at 1."""
    if len(scales) < 2 or dev is None:
        return scaled_scores(learner, bitext, dev, tolerance, user)
    try:
        scale, sts = english_scale(learner, dev, tolerance, scales)
        return {**scaled_scores(learner, bitext, dev, tolerance, user, sts), "adapter scale": scale}
    finally:
        learner.scale_adapters(1.0)


def english_scale(learner: TrainableTransformer, dev: DevSts, tolerance: float, scales: Sequence[float]
                  ) -> tuple[float, float]:
    """The largest of ``scales`` at which the adapters (:meth:`~xlsent.encoders.trainable.TrainableTransformer.
    scale_adapters`) keep English STS-B dev within ``tolerance`` of the backbone, or the smallest where none does,
    with its STS-B dev; the adapters are left at that scale."""
    for scale in sorted(scales, reverse=True):
        learner.scale_adapters(scale)
        sts = stsb_spearman(learner, dev.pairs)
        if dev.baseline - sts <= tolerance:
            break
    return scale, sts


def scaled_scores(learner: TrainableTransformer, bitext: Sequence[EnglishBitext], dev: DevSts | None,
                  tolerance: float, user: frozenset[str], sts: float | None = None) -> dict[str, float]:
    """:func:`held_out_scores` of the adapters at their present scale (``sts``: their English STS-B dev, when known)."""
    xx = [learner.vectors(b.valid_xx) for b in bitext]
    en = [learner.vectors(b.valid_en) for b in bitext]
    scores = {f"retrieval/{b.lang}": retrieval_criterion(x, e) for b, x, e in zip(bitext, xx, en, strict=True)}
    shipped = [i for i, b in enumerate(bitext) if b.lang not in user]
    out = {"retrieval": float(np.mean(list(scores.values())))}
    if shipped:
        out["pooled retrieval"] = pooled_retrieval([xx[i] for i in shipped], [en[i] for i in shipped],
                                                   [bitext[i].valid_en for i in shipped])
    if len(shipped) < len(bitext):
        out["user retrieval"] = float(np.mean([scores[f"retrieval/{b.lang}"] for b in bitext if b.lang in user]))
    out["selection"] = float(np.mean([out[k] for k in ("pooled retrieval", "user retrieval") if k in out]))
    if dev is not None:
        sts = stsb_spearman(learner, dev.pairs) if sts is None else sts
        lost = dev.baseline - sts
        out.update({"stsb-en dev": sts, "stsb-en dev change": -lost,
                    "selection": out["selection"] - 100.0 * max(0.0, lost - tolerance)})
    return {**out, **scores}


def train_on(config: DistillConfig, bitext: Sequence[EnglishBitext], teacher: Encoder,
             backbone: TransformerEncoder, out_dir: str | Path, *, resume: bool = False,
             progress: bool = True, stsb_dev: StsPairs | None = None, user: UserBitext | None = None,
             started: bool = False) -> Path:
    """Train the student on ``bitext`` (and the ``user``'s, which takes ``config.bitext_share`` of the batches) and
    write its model directory (adapters, config, card); with ``stsb_dev`` (English STS-B dev) and
    ``config.stsb_dev_tolerance >= 0``, validation keeps only checkpoints that hold it against the ``backbone``;
    ``started``: the backbone is the trained student of ``config.bitext_start`` (recorded)."""
    run = begin_training(out_dir, resume, config)
    if run is None:
        return Path(out_dir)
    out = run.out
    user = user or UserBitext([], [])
    check_unchanged(out, user.records, resume)
    bitext = [*bitext, *user.bitext]
    mine = frozenset(user.languages)
    learner = TrainableTransformer(backbone)
    learner.set_dropout(config.dropout, config.dropout)
    learner.eval()
    dev = (DevSts(stsb_dev, stsb_spearman(learner, stsb_dev))
           if config.eval_every and stsb_dev is not None and config.stsb_dev_tolerance >= 0 else None)
    learner.apply_lora(r=config.lora_r, alpha=config.lora_alpha, dropout=config.lora_dropout)
    usable, dropped = fitting(bitext, learner, config.max_sentence_tokens)
    if not usable:
        raise ValueError("no training pairs fit max_sentence_tokens; raise it or check the data")
    data = [LanguageData(b.lang, b.xx, b.en) for b in usable]
    targets = TeacherTargets(teacher, [d.en for d in data]) if config.distills else None
    sampler = TemperatureSampler([len(d.xx) for d in data], config.temperature, seed=config.seed,
                                 boosted=[d.lang in mine for d in data], share=config.bitext_share)
    optimizer = torch.optim.AdamW(parameter_groups(learner, config.lr), lr=config.lr)
    valid = [b for b in usable if len(b.valid_xx) >= 2] if config.eval_every else []
    trainer = Trainer(out, with_user_steps(config, user),
                      TrainState({"learner": TrainedPart(learner)}, {"learner": optimizer}),
                      meta={"teacher": encoder_id(teacher), "backbone": encoder_id(backbone)},
                      validation=held_out_validation(config, valid or None,
                                                     partial(held_out_scores, learner, dev=dev,
                                                             tolerance=config.stsb_dev_tolerance, user=mine,
                                                             scales=config.adapter_scales),
                                                     "selection"),
                      progress=progress, desc="distill", time_budget_s=60.0 * config.minutes,
                      bar_keys=("loss", "distill", "ranking"))
    distill = TeacherStudentLoss(config.distill_loss)
    relation = SimilarityDistillationLoss(config.ranking_scale)
    ranking = MultipleNegativesRankingLoss(config.ranking_scale, config.ranking_margin, bidirectional=True)
    hard = ([nearest_non_translations(targets.whole(i, progress=progress), d.en, config.hard_negative_max_cos)
             for i, d in enumerate(data)] if config.hard_negatives and targets is not None else None)
    if hard is not None:
        log.info("hard negatives: %d of %d pairs have one (nearest other English side by the teacher, cosine < %g)",
                 sum(int((h >= 0).sum()) for h in hard), sum(len(h) for h in hard), config.hard_negative_max_cos)

    weights = {"distill": config.distill_weight, "ranking": config.ranking_weight,
               "relation": config.relation_weight}
    active = {"distill": config.distills, "ranking": config.ranks,
              "relation": config.distills and config.relation_weight > 0}
    on_teacher = config.ranking_targets == "teacher"

    def teacher_rows(rows: list[tuple[int, np.ndarray]], device: torch.device) -> torch.Tensor:
        """The teacher's vectors of the English sides ``rows`` ((language, rows) groups), stacked."""
        assert targets is not None
        return torch.from_numpy(np.concatenate([targets.rows(lang, r) for lang, r in rows])).to(device)

    def losses(batch: list[tuple[int, np.ndarray]], emb: torch.Tensor
               ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The step's loss over the vectors of its x sides, English sides and (ranked against the student's English)
        hard negatives, in that order, for the ``batch``'s (language, rows) groups; ranked against the teacher's
        English, the candidates are the teacher's vectors of the English sides and of the hard negatives."""
        n = sum(len(rows) for _, rows in batch)
        x, en, negatives = emb[:n], emb[n : 2 * n], emb[2 * n :]
        terms: dict[str, torch.Tensor] = {}
        if targets is not None:
            target = teacher_rows(batch, emb.device)
            terms["distill"] = distill(F.normalize(x, dim=1), F.normalize(en, dim=1), target)
            if active["relation"]:
                terms["relation"] = relation(x, en, teacher=target)
            if on_teacher:
                en = target
                if hard is not None:
                    picked = [(lang, hard[lang][rows]) for lang, rows in batch]
                    negatives = teacher_rows([(lang, h[h >= 0]) for lang, h in picked], emb.device)
        if active["ranking"]:
            terms["ranking"] = ranking(x, en, negatives if len(negatives) else None)
        loss = sum(weights[k] * v for k, v in terms.items())
        assert isinstance(loss, torch.Tensor)
        return loss, terms

    def step(s: int) -> dict[str, float]:
        per = config.batch_size // config.languages_per_batch
        batch = []
        for j in range(config.languages_per_batch):
            draw = s * config.languages_per_batch + j
            lang = sampler.language(draw)
            batch.append((lang, batch_indices(len(data[lang].xx), per, draw, config.seed, stream=lang)))
        xx = [data[lang].xx[i] for lang, rows in batch for i in rows]
        if config.char_noise:
            xx = noised_all(xx, config.char_noise, np.random.default_rng([config.seed, s, NOISE_STREAM]))
        sentences = xx + [data[lang].en[i] for lang, rows in batch for i in rows]
        if hard is not None and not on_teacher:
            sentences += [data[lang].en[j] for lang, rows in batch for j in hard[lang][rows] if j >= 0]
        if config.grad_cache:
            cached: list[tuple[torch.Tensor, dict[str, torch.Tensor]]] = []
            trainer.update_with("learner", lambda: cached.append(cached_backward(
                learner.embed, sentences, partial(losses, batch), config.micro_batch)))
            loss, terms = cached[0]
        else:
            loss, terms = losses(batch, learner.embed(sentences, config.micro_batch))
            trainer.update("learner", loss)
        return {"loss": loss.item(), **{k: v.item() for k, v in terms.items()},
                **{f"{DRAW_PREFIX}{data[lang].lang}": len(rows) / config.batch_size for lang, rows in batch}}

    result = trainer.run(step, resume=resume)
    best = trainer.restore_best(["learner"]) if valid else None
    learner.eval()
    english = kept_english(result, best, config.stsb_dev_tolerance) if dev else {}
    scale = kept_scale(result, best)
    if scale != 1.0:
        log.info("the kept step's adapters are scaled by %g (adapter_scales: the largest that held English STS-B dev)",
                 scale)
        learner.scale_adapters(scale)
    counts = bitext_counts(usable)
    terms = " + ".join(f"{weights[k]:g} x {k}" for k, on in active.items() if on)
    training = TrainingRecord(
        DataRecord.multilingual("X-en bitext of every corpus", counts["pairs"], [b.lang for b in usable],
                                per_lang=counts["per_lang"]),
        run.seconds(), steps_done=result.steps, train_seconds=round(result.seconds, 1),
        time_budget_minutes=config.minutes, user_bitext=user.records,
        objective=ObjectiveRecord(config.loss, terms, TeacherRecord(config.teacher, encoder_id(teacher),
                                                                    config.distill_loss) if config.distills else None),
        validation=ValidationRecord.of_run(
            ("pooled retrieval accuracy % of the held-out pairs of every shipped language"
             + (", averaged with the mean retrieval of the user's languages" if mine else "")
             if len(mine) < len(usable) else "mean retrieval accuracy % of the held-out pairs of the user's languages")
            + (f", less 100 a point of English STS-B dev lost beyond {config.stsb_dev_tolerance:g}" if dev else ""),
            sum(len(b.valid_xx) for b in valid), "selection" if valid else "none", result, restored=best,
            stsb_dev_backbone=dev.baseline if dev else None, **english,
            **({"adapter_scale": scale} if len(config.adapter_scales) > 1 else {})),
        details={"over_long_pairs_left_out": dropped, "temperature": config.temperature,
                 "sampling": {d.lang: round(float(w), 5) for d, w in zip(data, sampler.weights, strict=True)},
                 "pairs_seen": result.steps * config.batch_size,
                 **({"started_from": encoder_id(backbone)} if started else {}),
                 "teacher_sentences_encoded": targets.encoded if targets is not None else 0,
                 "precision": trainer.precision})
    write_json(out / COUNTS_FILE, {**counts, **({"user_bitext": user.records} if user.records else {})})
    path = save_finetuned(out, learner, NAME, config, training=training)
    trainer.finish()
    return path


def kept_english(result: TrainResult, best: Mapping[str, Any] | None, tolerance: float) -> dict[str, Any]:
    """The English STS-B dev change of the kept step (``stsb_dev_change_kept``) and whether it holds ``tolerance``
    (``stsb_dev_held``), logged as a warning where no validated step held it; empty where no step was kept.

    >>> run = TrainResult([], 0, 2, 1.0, None, [{"step": 1, "validation": {"stsb-en dev change": -0.81}}])
    >>> kept_english(run, {"step": 1}, 0.5)
    {'stsb_dev_change_kept': -0.81, 'stsb_dev_tolerance': 0.5, 'stsb_dev_held': False}
    """
    kept = kept_validation(result, best)
    if best is None or "stsb-en dev change" not in kept:
        return {}
    change = round(float(kept["stsb-en dev change"]), 2)
    held = change >= -tolerance
    if not held:
        log.warning("no validated step kept English STS-B dev within %g of the backbone: the kept step %d lost %.2f "
                    "points (ranking_targets = \"teacher\" or adapter_scales = %s keep English, at a cost: "
                    "docs/results.md, \"distill (bitext-recipes)\")", tolerance, best["step"], -change,
                    SCALES_HOLDING_ENGLISH)
    return {"stsb_dev_change_kept": change, "stsb_dev_tolerance": tolerance, "stsb_dev_held": held}


def kept_scale(result: TrainResult, best: Mapping[str, Any] | None) -> float:
    """The adapter scale the kept step was validated at (:func:`held_out_scores`; 1 without a kept step or a scale).

    >>> run = TrainResult([], 0, 2, 1.0, None, [{"step": 1, "validation": {"adapter scale": 0.5}}])
    >>> kept_scale(run, {"step": 1}), kept_scale(run, None)
    (0.5, 1.0)
    """
    return float(kept_validation(result, best).get("adapter scale", 1.0))


def kept_validation(result: TrainResult, best: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The validation scores of the kept step ``best`` (empty without one)."""
    if best is None:
        return {}
    return next((v["validation"] for v in result.validations if v["step"] == best["step"]), {})


def with_user_steps(config: DistillConfig, user: UserBitext) -> DistillConfig:
    """``config`` with the steps the ``user``'s training pairs call for (:meth:`DistillConfig.user_steps`; the
    model's configuration keeps ``steps`` and ``bitext_epochs``, from which a retraining derives them again); a run
    from a trained student (``bitext_start``) keeps the shape of the schedule, its warm-up the same share of its
    steps.

    >>> user = UserBitext([EnglishBitext("kab", ["a"] * 900, ["b"] * 900)], [])
    >>> run = with_user_steps(DistillConfig(bitext_start="s", steps=1000, warmup_steps=200), user)
    >>> run.steps, run.warmup_steps
    (197, 39)
    """
    pairs = sum(len(b.xx) for b in user.bitext)
    steps = config.user_steps(pairs)
    if steps == config.steps:
        return config
    log.info("--bitext: %d steps instead of %d, for each of the %d user pairs to be drawn about %g times "
             "(bitext_epochs)", steps, config.steps, pairs, config.bitext_epochs)
    warmup = round(config.warmup_steps * steps / config.steps) if config.bitext_start else config.warmup_steps
    return replace(config, steps=steps, warmup_steps=warmup)


def _train(config: DistillConfig, out: Path, *, resume: bool = False, data: str | Path | None = None,
           progress: bool = True) -> Path:
    """``xlsent train distill``: build the bitext (the shipped languages' and the user's), load teacher and backbone,
    train, save."""
    user = load_user_bitext(config.bitext, hold_out=bool(config.eval_every), seed=config.seed)
    check_user_pairs(config, user)
    started = bool(user.bitext and config.bitext_start)
    if started:
        check_start(config.bitext_start)
    shipped = shipped_without([] if config.bitext_only else config.languages or english_languages(data), user)
    bitext = build_english_bitext(data, languages=shipped, max_pairs=config.max_pairs,
                                  valid_pairs=config.valid_pairs if config.eval_every else 0,
                                  seed=config.seed) if shipped else []
    backbone = transformer_backbone(config.bitext_start if started else config.backbone)
    teacher = (backbone if config.teacher == config.backbone and config.teacher_backend == "torch" and not started
               else load_encoder(config.teacher, backend=config.teacher_backend))
    return train_on(config, bitext, teacher, backbone, out, resume=resume, progress=progress,
                    stsb_dev=english_stsb_dev(data) if config.eval_every and config.stsb_dev_tolerance >= 0 else None,
                    user=user, started=started)


def check_user_pairs(config: DistillConfig, user: UserBitext) -> None:
    """Without validation (``eval_every = 0``, nothing held out), refuse a ``--bitext`` file of fewer than
    :data:`~xlsent.data.user_bitext.MIN_HELD_OUT` usable pairs, naming it (before any model loads): as many as a run
    with validation trains on at least (it holds out as many again)."""
    if config.eval_every:
        return
    for spec, bitext in zip(config.bitext, user.bitext, strict=True):
        if len(bitext.xx) < MIN_HELD_OUT:
            raise BitextError(f"{spec.label}: {len(bitext.xx)} usable pair(s); at least {MIN_HELD_OUT} are needed to "
                              f"train ({2 * MIN_HELD_OUT} with eval_every > 0, which holds out as many to choose the "
                              "checkpoint)")


def check_start(ref: str) -> None:
    """Refuse a ``bitext_start`` that is not a directory with a :class:`~xlsent.encoders.model_dir.ModelDirError` that
    says how to give one (before any model is loaded).

    >>> check_start("no/such/dir")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    xlsent.encoders.model_dir.ModelDirError: bitext_start 'no/such/dir': no such model directory (run from ...
    """
    if not Path(ref).is_dir():
        raise ModelDirError(f"bitext_start {ref!r}: no such model directory (run from the folder that holds it, "
                            "give its path with --set bitext_start=PATH, or --set bitext_start='' to train the "
                            "user's student from the backbone)")


def english_stsb_dev(data: str | Path | None) -> StsPairs | None:
    """English STS-B dev (``stsb_multi_mt``), or None (logged) when the data folder lacks it."""
    try:
        return load_stsb_multi_mt("en", "dev", data)
    except FileNotFoundError as exc:
        log.warning("validation without English STS-B dev: %s", exc)
        return None


train = checked_train(DistillConfig, _train)


def load_model(model_dir: str | Path) -> TransformerEncoder:
    """The encoder of a ``distill`` model directory (LoRA adapters merged on load)."""
    return load_finetuned(model_dir, NAME)



def smallest_model(out: Path, backbone: TransformerEncoder) -> Path:
    """The smallest distilled student: two steps on the toy pairs, the backbone as teacher."""
    cfg = METHOD.config(sets=["device=cpu", "eval_every=0", "batch_size=4", "steps=2", "checkpoint_every=100",
                              "warmup_steps=0"])
    return train_on(cfg, [EnglishBitext("de", list(TOY_DE), list(TOY_EN))], backbone, backbone,  # type: ignore[arg-type]
                    out, progress=False)

METHOD = Method(
    name=NAME,
    summary="multilingual distillation and translation ranking on all X-en bitext: a LoRA student of me5-small",
    config_class=DistillConfig, defaults=DEFAULTS, train=train, encoder=load_model, smallest=smallest_model)
