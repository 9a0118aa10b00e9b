"""ABSent (paper 003): adversarial bidirectional maps between the sentence-embedding spaces of two languages.

Two generators, G_X (X -> Y) and G_Y (Y -> X), are learned from a small parallel set D_l and a large unlabelled
set. Pairs are always fed to a discriminator as (X-space vector, Y-space vector), as in the Triangle GAN the
paper builds on, so the paper's fake pair (y, G_Y(y)) is the pair (G_Y(y), y):

- D_real tells real pairs (x, y) of D_l (target 1) from fake pairs (x, G_X(x)) and (G_Y(y), y) (Eq. 2) and from
  mismatch pairs (x', y') of sentences that are not translations (Eq. 3; target 0);
- D_dom tells the two kinds of fake pairs apart: 1 for (x, G_X(x)), 0 for (G_Y(y), y) (Eq. 4);
- the generators minimise the adversarial terms (non-saturating: real targets for D_real, swapped targets
  for D_dom) plus ``lambda_d`` L_d, L_d = E[f_d(x, G_Y(y)) + f_d(y, G_X(x))] over D_l with f_d the cosine
  distance (Eqs. 1, 5, 6).

Fake pairs take x and y from the pools of all training sentences (D_l and the unlabelled pairs, each side on
its own); mismatch pairs are a fixed seeded draw of |D_l| pairs (x_i, y_j), i != j, from the same pools.
Generators: FC layers ``gen_hidden`` (512-1024-512) with BatchNorm + ReLU and a tanh output; their output is
L2-normalised (retrieval is by cosine, and real pairs hold unit vectors). Discriminators: FC layers
``disc_hidden`` (512-1024-512) with LeakyReLU(0.2) over the concatenated pair, sigmoid output (BCE with logits,
:class:`~xlsent.training.losses.PairDiscriminator`). Adam, lr 0.002, batch 128. D_real and D_dom take
``disc_steps`` updates per generator update (:class:`~xlsent.training.adversarial.CriticGroup`).

Variants (``mode`` presets in ``configs/absent.toml``; ``mismatch = false`` gives the paper's \\mis ablations):

- ``absent``: the above;
- ``uni-sent``: G_X and D_real only, no G_Y, no D_dom (Eq. 7);
- ``conditional-gan``: one direction, D_real on real vs generated pairs of D_l only: no unlabelled sentences
  and no mismatch pairs (the paper's "no fake or mismatch pairs" read as no pairs beyond D_l);
- ``adversarial = false`` (xlsent ablation, any mode): no discriminator, the generators minimise L_d alone.

``lambda_d`` is not given in the paper; xlsent uses 100. At 10 the adversarial terms dominated and the
generators collapsed towards the mean target vector (retrieval near 0) on our static subword averages and on
a synthetic proxy with their anisotropy (a large component shared by all vectors), while 100 learned.

Zero-shot multilingual (Sect. 3.3): with ``pairs = ["de-en", "es-en"]`` one G_X maps both source languages
into the shared target space, each source language has its own G_Y (Y -> X_i), the discriminators are shared,
and every step minimises L' = (L^(1) + L^(2)) / 2 on one batch of each pair. (The paper alternates batches
between the pairs; a batch of one language would let G_X's BatchNorm subtract what tells the languages apart,
which is constant within such a batch, so G_X sees both languages in each forward pass.) The model then
retrieves de<->es with no de-es data.

The model directory wraps the input encoder and G_X: ``encode(sentences, lang)`` maps sentences of a source
language with G_X and leaves the target language as it is (routing: :mod:`xlsent.methods.mapping.encoder`).

>>> from xlsent.methods.absent.model import METHOD
>>> cfg = METHOD.config(mode="uni-sent", sets=["steps=10"])
>>> cfg.bidirectional, cfg.mismatch, cfg.parallel_ratio, cfg.lr
(False, True, 0.2, 0.002)
>>> METHOD.train(cfg, "models/absent-de-en")                                       # doctest: +SKIP
>>> xlsent.load("models/absent-de-en").encode(["Der Hund bellt."], "de").shape     # doctest: +SKIP
(1, 384)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from xlsent.encoders.base import Encoder
from xlsent.encoders.model_dir import ModelDirError
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.selection import retrieval_criterion
from xlsent.methods.absent.config import DEFAULTS, MODES, NAME, ABSentConfig
from xlsent.methods.mapping.data import PairData, toy_pair_data, toy_sets
from xlsent.methods.mapping.encoder import MappedEncoder
from xlsent.methods.mapping.inputs import PairVectors
from xlsent.methods.mapping.training import FittedMapping, mapping_train, train_mapping_on
from xlsent.training.adversarial import CriticGroup
from xlsent.training.batching import batch_indices, derived_seed
from xlsent.training.checkpoint import TrainState
from xlsent.training.loop import FitResult, Trainer, held_out_validation
from xlsent.training.losses import CosineDistanceLoss, PairDiscriminator, PairDiscriminatorLoss
from xlsent.training.method import Method
from xlsent.training.record import ValidationRecord

log = logging.getLogger(__name__)

GEN_FILE = "generators.safetensors"
CHUNK_ROWS = 8192
LABELLED, X_POOL, Y_POOL, MISMATCH = range(4)  # the batch streams of one pair

# --- the generators --------------------------------------------------------------------------------------------


class Generator(nn.Sequential):
    """FC layers ``dim_in -> hidden... -> dim_out``, BatchNorm + ReLU after each hidden layer, tanh output
    (paper 003, Sect. 4.1)."""

    def __init__(self, dim_in: int, dim_out: int, hidden: Sequence[int]) -> None:
        sizes = [dim_in, *hidden]
        layers: list[nn.Module] = []
        for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
            layers += [nn.Linear(n_in, n_out), nn.BatchNorm1d(n_out), nn.ReLU()]
        super().__init__(*layers, nn.Linear(sizes[-1], dim_out), nn.Tanh())


class Generators(nn.Module):
    """G_X (``to_y``, shared by every source language) and, when bidirectional, one G_Y per source language
    (``to_x[lang]``); both return unit rows."""

    def __init__(self, dim_x: int, dim_y: int, sources: Sequence[str], hidden: Sequence[int],
                 bidirectional: bool) -> None:
        super().__init__()
        self.dim_y = dim_y
        self.to_y = Generator(dim_x, dim_y, hidden)
        self.to_x = nn.ModuleDict({s: Generator(dim_y, dim_x, hidden) for s in sources} if bidirectional else {})

    def map_x(self, x: torch.Tensor) -> torch.Tensor:
        """G_X(x): X-space rows into the Y space."""
        return F.normalize(self.to_y(x), dim=1)

    def map_y(self, y: torch.Tensor, source: str) -> torch.Tensor:
        """G_Y(y): Y-space rows into the space of source language ``source``."""
        return F.normalize(self.to_x[source](y), dim=1)


def map_rows(generators: Generators, x: np.ndarray) -> np.ndarray:
    """G_X of input rows as float32 numpy, in chunks, in the generators' current mode (eval for inference)."""
    device = next(generators.parameters()).device
    out = np.zeros((len(x), generators.dim_y), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(x), CHUNK_ROWS):
            chunk = torch.from_numpy(np.ascontiguousarray(x[start : start + CHUNK_ROWS], dtype=np.float32))
            out[start : start + len(chunk)] = generators.map_x(chunk.to(device)).cpu().numpy()
    return out


# --- training --------------------------------------------------------------------------------------------------


def mismatch_rows(pool: np.ndarray, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``size`` seeded pairs of rows ``(i, j)`` of ``pool`` with i != j: (x_i, y_j) is never a known pair.

    >>> i, j = mismatch_rows(np.array([4, 7, 9]), 50, seed=0)
    >>> bool((i != j).all()), set(i.tolist()) | set(j.tolist()) <= {4, 7, 9}
    (True, True)
    """
    if len(pool) < 2:
        raise ValueError("mismatch pairs need at least two sentences per side")
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, len(pool), size), rng.integers(0, len(pool), size)
    b = np.where(a == b, (b + 1) % len(pool), b)
    return pool[a], pool[b]


@dataclass
class Batch:
    """The rows of one update: parallel ``xl``/``yl``, pool ``xp``/``yp``, mismatch ``xm``/``ym``, and the
    generator outputs ``fx`` = G_X(xp), ``fy`` = G_Y(yp), ``gxl`` = G_X(xl), ``gyl`` = G_Y(yl) (None: not used)."""

    xl: torch.Tensor
    yl: torch.Tensor
    xp: torch.Tensor
    yp: torch.Tensor
    xm: torch.Tensor
    ym: torch.Tensor
    fx: torch.Tensor | None = None
    fy: torch.Tensor | None = None
    gxl: torch.Tensor | None = None
    gyl: torch.Tensor | None = None


def _need(t: torch.Tensor | None, name: str) -> torch.Tensor:
    if t is None:
        raise ValueError(f"the batch has no {name}")
    return t


def real_loss(real: PairDiscriminatorLoss, b: Batch, *, mismatch: bool) -> torch.Tensor:
    """D_real's loss (the negated Eqs. 2 + 3 as BCE): real pairs (xl, yl) -> 1; fake pairs (xp, fx) and, when
    ``b.fy`` is set, (fy, yp) -> 0; with ``mismatch`` the mismatch pairs (xm, ym) -> 0."""
    loss = real(b.xl, b.yl, 1.0) + real(b.xp, _need(b.fx, "fx"), 0.0)
    if b.fy is not None:
        loss = loss + real(b.fy, b.yp, 0.0)
    if mismatch:
        loss = loss + real(b.xm, b.ym, 0.0)
    return loss


def domain_loss(dom: PairDiscriminatorLoss, b: Batch, *, generator: bool = False) -> torch.Tensor:
    """D_dom's loss (the negated Eq. 4 as BCE): (xp, fx) -> 1, (fy, yp) -> 0; ``generator=True`` swaps the
    targets (the generators' non-saturating objective: make the two directions indistinguishable)."""
    fx, fy = _need(b.fx, "fx"), _need(b.fy, "fy")
    one, zero = (0.0, 1.0) if generator else (1.0, 0.0)
    return dom(b.xp, fx, one) + dom(fy, b.yp, zero)


def generator_terms(real: PairDiscriminatorLoss | None, dom: PairDiscriminatorLoss | None, b: Batch
                    ) -> dict[str, torch.Tensor]:
    """The generators' terms: ``dist`` = L_d = f_d(xl, G_Y(yl)) + f_d(yl, G_X(xl)) (Eqs. 1, 6; the G_Y term when
    ``b.gyl`` is set), ``adv`` (fake pairs scored as real by D_real, when ``real`` is given) and ``dom`` (D_dom
    with swapped targets, when ``dom`` is given). The total is ``lambda_d * dist + adv + dom`` (Eq. 5)."""
    distance = CosineDistanceLoss()
    dist = distance(_need(b.gxl, "gxl"), b.yl)
    if b.gyl is not None:
        dist = dist + distance(b.gyl, b.xl)
    out = {"dist": dist}
    if real is not None:
        out["adv"] = real(b.xp, _need(b.fx, "fx"), 1.0)
        if b.fy is not None:
            out["adv"] = out["adv"] + real(b.fy, b.yp, 1.0)
    if dom is not None:
        out["dom"] = domain_loss(dom, b, generator=True)
    return out


@dataclass
class _PairTensors:
    """One pair's input vectors as tensors and the row sets its batches are drawn from."""

    source: str
    x: torch.Tensor
    y: torch.Tensor
    rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # labelled, x pool, y pool, mismatch positions
    mismatch: tuple[np.ndarray, np.ndarray]


def _pair_tensors(config: ABSentConfig, vectors: Sequence[PairVectors]) -> list[_PairTensors]:
    out = []
    for p, (pv, source) in enumerate(zip(vectors, config.sources, strict=True)):
        labelled = pv.data.labelled
        pool = pv.data.pool if config.unlabelled else labelled
        mis = mismatch_rows(pool, len(labelled), derived_seed(config.seed, 7, p))
        rows = (labelled, pool, pool, np.arange(len(labelled)))
        out.append(_PairTensors(source, torch.from_numpy(np.ascontiguousarray(pv.x, dtype=np.float32)),
                                torch.from_numpy(np.ascontiguousarray(pv.y, dtype=np.float32)), rows, mis))
    return out


def held_out_retrieval(generators: Generators, held: Sequence[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """Mean retrieval accuracy (both directions, %) of G_X on each pair's held-out ``(x, y)`` rows."""
    return {"retrieval": float(np.mean([retrieval_criterion(map_rows(generators, x), y) for x, y in held]))}


def fit(config: ABSentConfig, vectors: Sequence[PairVectors], out: Path, *, resume: bool = False,
        progress: bool = True, meta: dict[str, Any] | None = None) -> FitResult[Generators]:
    """Train the generators on the input vectors of every pair of ``config.pairs`` (checkpoints in ``out``); the
    result holds the best validated weights when selection ran."""
    config.check()
    if len(vectors) != len(config.pairs):
        raise ValueError(f"{len(config.pairs)} pairs configured, {len(vectors)} given")
    torch.manual_seed(config.seed)
    dim_x, dim_y = vectors[0].x.shape[1], vectors[0].y.shape[1]
    bi = config.bidirectional
    generators = Generators(dim_x, dim_y, config.sources, config.gen_hidden, bi)
    critics: dict[str, nn.Module] = {}
    if config.adversarial:
        critics["real"] = PairDiscriminator(dim_x, dim_y, config.disc_hidden)
        if bi:
            critics["dom"] = PairDiscriminator(dim_x, dim_y, config.disc_hidden)
    modules: dict[str, nn.Module] = {"generators": generators, **critics}
    optimizers: dict[str, torch.optim.Optimizer] = {
        name: torch.optim.Adam(m.parameters(), lr=config.lr) for name, m in modules.items()}
    held = [(pv.x[pv.data.valid], pv.y[pv.data.valid]) for pv in vectors] if config.selection != "none" else None
    trainer = Trainer(out, config, TrainState(modules, optimizers), meta=meta, scheduled=["generators"],
                      validation=held_out_validation(config, held, partial(held_out_retrieval, generators),
                                                     "retrieval"),
                      progress=progress, desc=f"absent {config.mode}")
    group = CriticGroup(critics, {n: optimizers[n] for n in critics}, config.disc_steps)
    real, dom = (PairDiscriminatorLoss(critics[n]) if n in critics else None for n in ("real", "dom"))
    pairs = _pair_tensors(config, vectors)
    draws = config.disc_steps + 1

    def batches(draw: int) -> list[Batch]:
        """One batch per pair (each drawn from ``(seed, draw, stream)``), G_X applied to all pairs' pool and
        parallel rows in one forward pass (so BatchNorm normalises over every source language at once)."""
        out = []
        for p, pair in enumerate(pairs):
            rows = [pool[batch_indices(len(pool), config.batch_size, draw, config.seed, 4 * p + kind)]
                    for kind, pool in enumerate(pair.rows)]
            xm, ym = pair.mismatch[0][rows[MISMATCH]], pair.mismatch[1][rows[MISMATCH]]
            dev = trainer.device
            out.append(Batch(pair.x[rows[LABELLED]].to(dev), pair.y[rows[LABELLED]].to(dev),
                             pair.x[rows[X_POOL]].to(dev), pair.y[rows[Y_POOL]].to(dev), pair.x[xm].to(dev),
                             pair.y[ym].to(dev)))
        mapped = generators.map_x(torch.cat([t for b in out for t in (b.xp, b.xl)]))
        parts = mapped.split([n for b in out for n in (len(b.xp), len(b.xl))])
        for i, b in enumerate(out):
            b.fx, b.gxl = parts[2 * i], parts[2 * i + 1]
            if bi:
                gy = generators.map_y(torch.cat([b.yp, b.yl]), pairs[i].source)
                b.fy, b.gyl = gy[: len(b.yp)], gy[len(b.yp) :]
        return out

    def step(s: int) -> dict[str, float]:
        fakes: dict[int, list[Batch]] = {}

        def critic_loss(name: str, k: int) -> torch.Tensor:
            if k not in fakes:
                with torch.no_grad():
                    fakes[k] = batches(s * draws + k)
            if name == "dom":
                assert dom is not None
                return torch.stack([domain_loss(dom, b) for b in fakes[k]]).mean()
            assert real is not None
            return torch.stack([real_loss(real, b, mismatch=config.mismatch) for b in fakes[k]]).mean()

        metrics = group.update(critic_loss)
        current = batches(s * draws + draws - 1)
        with group.frozen():
            per_pair = [generator_terms(real, dom, b) for b in current]
        terms = {k: torch.stack([t[k] for t in per_pair]).mean() for k in per_pair[0]}
        loss = config.lambda_d * terms["dist"] + sum((v for k, v in terms.items() if k != "dist"),
                                                     torch.zeros((), device=trainer.device))
        trainer.update("generators", loss)
        return {**metrics, **{k: v.item() for k, v in terms.items()}, "loss": loss.item()}

    result = trainer.run(step, resume=resume)
    best = trainer.restore_best(["generators"])
    generators.cpu().eval()
    return FitResult(generators, result, best)


def train_on(config: ABSentConfig, data: Sequence[PairData], backbone: Encoder, out_dir: str | Path, *,
             resume: bool = False, progress: bool = True) -> Path:
    """Embed the training data (cached), train, write the model directory (checkpoints removed once written)."""

    def fit_generators(vectors: Sequence[PairVectors], out: Path, meta: dict[str, Any]) -> FittedMapping:
        fitted = fit(config, vectors, out, resume=resume, progress=progress, meta=meta)
        return FittedMapping(dict(fitted.model.state_dict()), GEN_FILE,
                             {"dim_x": vectors[0].x.shape[1], "dim_y": vectors[0].y.shape[1],
                              "formula": "normalize(tanh(MLP_GX(x))) for source languages"},
                             ValidationRecord.of_run(config.selection, sum(len(d.valid) for d in data),
                                                     config.selection, fitted.run, restored=fitted.best),
                             fitted.run.final)

    return train_mapping_on(NAME, config, data, backbone, out_dir, fit_generators, resume=resume, progress=progress)


train = mapping_train(ABSentConfig, train_on)


# --- the encoder -----------------------------------------------------------------------------------------------


class ABSentEncoder(MappedEncoder):
    """Encoder of an ``absent`` directory: G_X for source languages, the input vectors for the target language.

    >>> enc = ABSentEncoder("models/absent-de-en")                   # doctest: +SKIP
    >>> enc.encode(["Der Hund bellt."], "de").shape                  # doctest: +SKIP
    (1, 384)
    """

    config_class = ABSentConfig
    model_type = NAME

    def __init__(self, model_dir: str | Path, *, backbone: Encoder | None = None, verify: str = "cached") -> None:
        super().__init__(model_dir, backbone=backbone, verify=verify)
        cfg = self.config
        assert isinstance(cfg, ABSentConfig)
        mapping = self.manifest["mapping"]
        self.generators = Generators(mapping["dim_x"], mapping["dim_y"], self.sources, cfg.gen_hidden,
                                     cfg.bidirectional)
        try:
            self.generators.load_state_dict(self._load(GEN_FILE))
        except RuntimeError as exc:
            raise ModelDirError(f"{self.model_dir}: generators do not fit the configuration ({exc})") from exc
        self.generators.eval()

    def map_source(self, vectors: np.ndarray, source: str) -> np.ndarray:
        return map_rows(self.generators, vectors)



def smallest_model(out: Path, backbone: TransformerEncoder) -> Path:
    """ABSent's smallest model: two steps of tiny generators and critics over tf-idf vectors of the toy pairs."""
    cfg = METHOD.config(sets=[*toy_sets(backbone.model_dir), "steps=2", "batch_size=4", "gen_hidden=[8]",
                              "disc_hidden=[8]", "selection=none"])
    return train_on(cfg, [toy_pair_data()], backbone, out, progress=False)  # type: ignore[arg-type]

METHOD = Method(
    name=NAME,
    summary="ABSent (paper 003): adversarial bidirectional maps between sentence-embedding spaces (GAN, few pairs)",
    config_class=ABSentConfig,
    defaults=DEFAULTS,
    train=train,
    encoder=ABSentEncoder,
    modes=MODES,
    smallest=smallest_model,
)
