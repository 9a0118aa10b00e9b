"""Dual-pivot transfer (paper 004): a light extraction module on a frozen multilingual LM, trained on one pair.

The module has two trainable parts: a softmax-normalised weighting of all hidden layers (ELMo-style scalar
mix) and a linear map (no bias, initialised to the identity) applied to the sum-pooled mix:

    encode(x) = normalize(W @ sum_l softmax(w)_l * sum_tokens h_l(x))

Mix and pooling are linear, so training only needs each sentence's per-layer sum-pooled states, computed once
and cached (:mod:`xlsent.encoders.layer_cache`). Two training modes:

- ``unsupervised``: unpaired sentences of the two languages. A critic d scores language identity with
  L_disc = d(y_s) - d(y_t) (Wasserstein-style), the module gets L_adv = -L_disc, plus cycle consistency with
  linear maps F (s->t), G (t->s): L_cycle = h(y_s, G(F(y_s))) + h(F(G(y_t)), y_t); L = L_adv + lambda L_cycle.
  The critic is updated ``kappa`` times per module step.
- ``supervised``: a bitext of one pair, L_sup = h(y_s, y_t).

h is the bidirectional triplet ranking loss (:class:`~xlsent.training.losses.TripletRankingLoss`). Losses see
L2-normalised y (the vectors used for retrieval): on raw sums the critic could tell the languages apart by
sentence length alone. Model selection (``selection``): the checkpoint with the best criterion on held-out
pairs of the training language pair, ``csls`` (mean cosine of CSLS translations, Lample et al. 2018: no
alignment used, fit for the unsupervised mode) or ``retrieval`` (accuracy on the held-out pairs).

>>> from xlsent.methods.dual_pivot.model import METHOD
>>> cfg = METHOD.config(mode="supervised", sets=["steps=200"])
>>> cfg.n_neg, cfg.alpha, cfg.steps, cfg.selection
(1, 0.0, 200, 'retrieval')
>>> METHOD.train(cfg, "models/dp-sup-de-en")                                    # doctest: +SKIP
>>> xlsent.load("models/dp-sup-de-en").encode(["Der Hund bellt.", "The dog barks."]).shape  # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import copy
import logging
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm.auto import tqdm

from xlsent.atomic import atomic_open, atomic_path
from xlsent.data.bitext import Bitext, Unpaired, build_training_data
from xlsent.encoders.base import HiddenStateEncoder, l2_normalize, sentence_list
from xlsent.encoders.cache import encoder_id, sentences_key
from xlsent.encoders.layer_cache import CHUNK_SENTENCES, LayerStates, cached_layer_means
from xlsent.encoders.model_dir import ModelDirError, model_checksum, read_manifest
from xlsent.encoders.registry import backbone_record, load_backbone, load_encoder
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.selection import csls_mean_cosine, retrieval_criterion
from xlsent.inference import DEFAULT_BATCH_TOKENS, id_suffix
from xlsent.methods.dual_pivot.config import DEFAULTS, MODES, NAME, DualPivotConfig
from xlsent.training.adversarial import CriticGroup
from xlsent.training.batching import batch_indices, step_generator
from xlsent.training.checkpoint import TrainState
from xlsent.training.config import build_config, to_toml
from xlsent.training.loop import FitResult, Trainer, held_out_validation
from xlsent.training.losses import TripletRankingLoss, WassersteinCritic
from xlsent.training.method import Method, begin_training, checked_train, write_trained_manifest
from xlsent.training.networks import mlp
from xlsent.training.record import DataRecord, TrainingRecord, ValidationRecord
from xlsent.training.run_folder import CHECKPOINT_DIR
from xlsent.training.toy import TOY_DE, TOY_EN

log = logging.getLogger(__name__)

MODULE_FILE = "module.safetensors"
LAST_FILE = "module-last.safetensors"
CONFIG_FILE = "config.toml"
LAST_LAYER_LOGIT = 5.0  # "last" init: softmax puts ~0.93 of the weight on the last layer of a 13-layer backbone

# --- the module ----------------------------------------------------------------------------------------------


class ExtractionModule(torch.nn.Module):
    """Softmax-weighted layer mix + linear map over sum-pooled states ``(n, layers, dim) -> (n, dim)``.

    The mix starts uniform (the paper; ELMo's scalar mix) or, with ``mix_init="last"``, mostly on the last
    layer, i.e. near the backbone's own output. A frozen mix keeps its start; a fixed ``layer`` is a frozen
    one-hot mix (logits -inf elsewhere); a frozen map stays the identity.
    """

    def __init__(self, layers: int, dim: int, *, layer: int | None = None, train_mix: bool = True,
                 train_map: bool = True, mix_init: str = "uniform") -> None:
        super().__init__()
        logits = torch.zeros(layers)
        if mix_init == "last":
            logits[-1] = LAST_LAYER_LOGIT
        if layer is not None:
            if not 0 <= layer < layers:
                raise ValueError(f"layer {layer} out of range: the backbone has layers 0..{layers - 1}")
            logits = torch.full((layers,), float("-inf"))
            logits[layer] = 0.0
        self.mix_logits = torch.nn.Parameter(logits, requires_grad=train_mix and layer is None)
        self.map = torch.nn.Parameter(torch.eye(dim), requires_grad=train_map)

    def mix_weights(self) -> torch.Tensor:
        return torch.softmax(self.mix_logits, dim=0)

    def forward(self, sums: torch.Tensor) -> torch.Tensor:
        return (self.mix_weights() @ sums) @ self.map.T


def _identity_linear(dim: int) -> torch.nn.Linear:
    lin = torch.nn.Linear(dim, dim, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.eye(dim))
    return lin


def language_critic(dim: int, hidden: int) -> torch.nn.Module:
    """The language critic d: linear ``dim -> 1`` (``hidden == 0``) or one hidden LeakyReLU(0.2) layer."""
    return mlp(dim, [hidden] if hidden > 0 else [], 1, activation=lambda: torch.nn.LeakyReLU(0.2))


def project(module: ExtractionModule, sums: np.ndarray) -> np.ndarray:
    """Unit rows of ``module`` applied to sum-pooled layer states ``(n, layers, dim)`` (zero rows stay zero)."""
    device = next(module.parameters()).device
    with torch.inference_mode():
        out = module(torch.from_numpy(np.ascontiguousarray(sums, dtype=np.float32)).to(device)).cpu().numpy()
    return l2_normalize(out)


# --- training ------------------------------------------------------------------------------------------------


class _Rows:
    """Layer states as torch tensors, giving float32 sums of selected rows on a device."""

    def __init__(self, states: LayerStates, device: torch.device) -> None:
        self.means = torch.from_numpy(np.ascontiguousarray(states.means))
        self.counts = torch.from_numpy(np.ascontiguousarray(states.counts, dtype=np.float32))
        self.device = device

    def __len__(self) -> int:
        return len(self.counts)

    def sums(self, rows: np.ndarray) -> torch.Tensor:
        idx = torch.from_numpy(rows)
        sums = self.means.index_select(0, idx).to(torch.float32) * self.counts.index_select(0, idx)[:, None, None]
        return sums.to(self.device)


def _rows_with_tokens(*states: LayerStates) -> tuple[LayerStates, ...]:
    """``states`` without the rows where any of them has no tokens (rows are aligned across ``states``)."""
    keep = np.flatnonzero(np.logical_and.reduce([s.counts > 0 for s in states]))
    if len(keep) == len(states[0]):
        return states
    log.info("dropping %d of %d rows without tokens", len(states[0]) - len(keep), len(states[0]))
    return tuple(s.subset(keep) for s in states)


def held_out_criteria(module: ExtractionModule, held: tuple[np.ndarray, np.ndarray]) -> dict[str, float]:
    """Both selection criteria of ``module`` on held-out pairs (their sum-pooled layer states): ``csls`` (mean
    cosine of CSLS translations) and ``retrieval`` (accuracy, %)."""
    ys, yt = project(module, held[0]), project(module, held[1])
    return {"csls": csls_mean_cosine(ys, yt), "retrieval": retrieval_criterion(ys, yt)}


@dataclass
class DualPivotFit(FitResult[ExtractionModule]):
    """The fit's result, and the module's weights at the last step (``last``; the model holds the selected ones)."""

    last: dict[str, torch.Tensor]


def fit(config: DualPivotConfig, src: LayerStates, tgt: LayerStates, out: Path, *,
        valid: tuple[LayerStates, LayerStates] | None = None, resume: bool = False, progress: bool = True,
        meta: dict[str, Any] | None = None) -> DualPivotFit:
    """Train the extraction module from cached layer states (paired rows in the supervised mode) in ``out``."""
    config.check()
    paired = config.mode == "supervised"
    if paired:
        if len(src) != len(tgt):
            raise ValueError(f"supervised training needs paired rows: {len(src)} != {len(tgt)}")
        src, tgt = _rows_with_tokens(src, tgt)
    else:
        (src,), (tgt,) = _rows_with_tokens(src), _rows_with_tokens(tgt)
    if len(src) < 2 or len(tgt) < 2:
        raise ValueError("need at least two non-empty sentences on each side")
    torch.manual_seed(config.seed)
    layers, dim = src.means.shape[1:]
    module = ExtractionModule(layers, dim, layer=config.layer, mix_init=config.mix_init, train_mix=config.train_mix,
                              train_map=config.train_map)
    modules: dict[str, torch.nn.Module] = {"module": module}
    params = [p for p in module.parameters() if p.requires_grad]
    use_cycle = not paired and config.cycle
    use_adv = not paired and config.adversarial
    cycle_maps = torch.nn.ModuleDict({"F": _identity_linear(dim), "G": _identity_linear(dim)})
    if use_cycle:
        modules["cycle"] = cycle_maps
        params += list(cycle_maps.parameters())
    optimizers: dict[str, torch.optim.Optimizer] = {"module": torch.optim.Adam(params, lr=config.lr)}
    critic = WassersteinCritic(language_critic(dim, config.critic_hidden), config.critic_clip, config.critic_gp)
    if use_adv:
        modules["critic"] = critic
        optimizers["critic"] = torch.optim.Adam(critic.parameters(), lr=config.lr)
    held = (tuple(s.sums() for s in _rows_with_tokens(*valid)) if valid is not None and config.selection != "none"
            else None)
    trainer = Trainer(out, config, TrainState(modules, optimizers), meta=meta, progress=progress,
                      validation=held_out_validation(config, held, partial(held_out_criteria, module),
                                                     config.selection),
                      scheduled=["module"], desc=f"dual-pivot {config.mode}")
    critics = CriticGroup({"critic": critic}, {"critic": optimizers["critic"]}, config.kappa) if use_adv else None
    rows_s, rows_t = _Rows(src, trainer.device), _Rows(tgt, trainer.device)
    h = TripletRankingLoss(config.n_neg, config.alpha)
    draws = (config.kappa if use_adv else 0) + 1

    def embed(rows: _Rows, idx: np.ndarray) -> torch.Tensor:
        return F.normalize(module(rows.sums(idx)), dim=1)

    def batches(draw: int) -> tuple[np.ndarray, np.ndarray]:
        bs, seed = config.batch_size, config.seed
        if paired:
            idx = batch_indices(len(rows_s), bs, draw, seed)
            return idx, idx
        return batch_indices(len(rows_s), bs, draw, seed, 0), batch_indices(len(rows_t), bs, draw, seed, 1)

    def step(s: int) -> dict[str, float]:
        gen = step_generator(config.seed, s)
        metrics: dict[str, float] = {}
        if critics is not None:
            def critic_loss(_: str, k: int) -> torch.Tensor:
                i_s, i_t = batches(s * draws + k)
                with torch.no_grad():
                    y_s, y_t = embed(rows_s, i_s), embed(rows_t, i_t)
                return critic(y_s, y_t, gen)

            metrics.update(critics.update(critic_loss))
        i_s, i_t = batches(s * draws + draws - 1)
        y_s, y_t = embed(rows_s, i_s), embed(rows_t, i_t)
        if paired:
            loss = h(y_s, y_t, gen)
            metrics["sup"] = loss.item()
        else:
            loss = torch.zeros((), device=trainer.device)
            if critics is not None:
                with critics.frozen():
                    adv = -critic.gap(y_s, y_t)
                loss = loss + adv
                metrics["adv"] = adv.item()
            if use_cycle:
                f, g = cycle_maps["F"], cycle_maps["G"]
                cyc = h(y_s, g(f(y_s)), gen) + h(f(g(y_t)), y_t, gen)
                loss = loss + (config.lambda_cycle if use_adv else 1.0) * cyc
                metrics["cycle"] = cyc.item()
        trainer.update("module", loss)
        metrics["loss"] = loss.item()
        return metrics

    result = trainer.run(step, resume=resume)
    last = {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}
    best = trainer.restore_best(["module"])
    module.cpu().eval()
    return DualPivotFit(module, result, best, last)


def _states(backbone: HiddenStateEncoder, data: Bitext | Unpaired, progress: bool) -> tuple[LayerStates, LayerStates]:
    return (cached_layer_means(backbone, data.src, data.src_lang or None, progress=progress),
            cached_layer_means(backbone, data.tgt, data.tgt_lang or None, progress=progress))


def train_on(config: DualPivotConfig, data: Bitext | Unpaired, backbone: HiddenStateEncoder, out_dir: str | Path, *,
             resume: bool = False, progress: bool = True) -> Path:
    """Cache the backbone's layer states of ``data`` (and its held-out ``data.valid``), train, write the model.

    ``data`` is a :class:`Bitext` for the supervised mode and :class:`Unpaired` for the unsupervised one.
    Checkpoints go to ``out_dir/checkpoints`` and are removed once the model is written; ``resume`` continues
    a killed run (or returns a finished one as it is).
    """
    config.check()
    expected = Bitext if config.mode == "supervised" else Unpaired
    if not isinstance(data, expected):
        raise TypeError(f"{config.mode} training needs {expected.__name__} data, got {type(data).__name__}")
    run = begin_training(out_dir, resume, config)
    if run is None:
        return Path(out_dir)
    out = run.out
    valid = data.valid
    if config.selection != "none" and valid is None:
        raise ValueError(f"selection {config.selection!r} needs held-out pairs: build the data with valid_pairs > 0")
    src, tgt = _states(backbone, data, progress)
    valid_states = _states(backbone, valid, progress) if valid is not None and config.selection != "none" else None
    meta: dict[str, Any] = {"backbone": encoder_id(backbone),
                            "data": {"src": sentences_key(data.src, data.src_lang or None),
                                     "tgt": sentences_key(data.tgt, data.tgt_lang or None)}}
    if valid is not None:
        meta["valid"] = sentences_key(valid.src + valid.tgt, None)
    fitted = fit(config, src, tgt, out, valid=valid_states, resume=resume, progress=progress, meta=meta)
    training = TrainingRecord(
        DataRecord.two_sides(type(data).__name__, data.src_lang, data.tgt_lang, len(data.src), len(data.tgt),
                             **meta["data"], summary=data.summary),
        run.seconds(), steps_done=config.steps, train_seconds=round(fitted.run.seconds, 1), final=fitted.run.final,
        validation=ValidationRecord.of_run(config.selection, len(valid.src) if valid else 0, config.selection,
                                           fitted.run, restored=fitted.best))
    save_model(out, fitted, config, backbone, training)
    log.info("dual-pivot model written to %s", out)
    return out


def _train(config: DualPivotConfig, out: Path, *, resume: bool = False, data: str | Path | None = None,
           progress: bool = True) -> Path:
    """``xlsent train dual-pivot``: build the training (and held-out) data, load the backbone, train, save."""
    held_out = config.valid_pairs if config.selection != "none" else 0
    training = build_training_data(config.mode, config.pairs, root=data, max_pairs=config.max_pairs,
                                   seed=config.seed, valid_pairs=held_out)
    backbone = load_encoder(config.backbone)
    if not isinstance(backbone, HiddenStateEncoder):
        raise ValueError(f"backbone {config.backbone} does not expose layer_pooled")
    return train_on(config, training, backbone, out, resume=resume, progress=progress)


train = checked_train(DualPivotConfig, _train)


# --- model directory and encoder -----------------------------------------------------------------------------


def save_model(directory: str | Path, fitted: DualPivotFit, config: DualPivotConfig, backbone: HiddenStateEncoder,
               training: TrainingRecord, *, name: str | None = None) -> Path:
    """Write ``module.safetensors`` (+ the last-step weights when selection chose another step), ``config.toml``
    and the ``xlsent.json`` manifest (type dual-pivot); the training log ``train.jsonl`` is already there."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / MODULE_FILE) as tmp:
        save_file({k: v.detach().contiguous() for k, v in fitted.model.state_dict().items()}, str(tmp))
    if fitted.best is not None and fitted.best["step"] != config.steps:
        with atomic_path(out / LAST_FILE) as tmp:
            save_file({k: v.contiguous() for k, v in fitted.last.items()}, str(tmp))
    with atomic_open(out / CONFIG_FILE) as fh:
        fh.write(to_toml(config))
    weights = fitted.model.mix_weights().detach().tolist()
    write_trained_manifest(
        out, NAME, config, training, name=name or out.name,
        backbone=backbone_record(backbone, out),
        module={"layers": len(weights), "dim": fitted.model.map.shape[0], "mix_weights": weights,
                "formula": "normalize(map @ sum_l softmax(mix_logits)_l * sum_tokens h_l)"})
    shutil.rmtree(out / CHECKPOINT_DIR, ignore_errors=True)
    return out


class DualPivotEncoder:
    """Encoder of a dual-pivot model directory: backbone layer states -> layer mix -> linear map -> unit rows.

    The backbone is loaded from the manifest (registered name or path) unless given, and must have the id the
    module was trained on. ``encode(..., cache=True)`` reads and writes the layer cache; the default does not.

    >>> enc = DualPivotEncoder("models/dual-pivot-unsup-de-en")          # doctest: +SKIP
    >>> enc.encode(["Der Hund bellt.", "The dog barks."]).shape            # doctest: +SKIP
    (2, 384)
    """

    def __init__(self, model_dir: str | Path, *, backbone: HiddenStateEncoder | None = None,
                 verify: str = "cached", weights: str = "selected") -> None:
        self.model_dir = Path(model_dir)
        self.manifest: dict[str, Any] = read_manifest(self.model_dir, verify=verify)
        if self.manifest["type"] != NAME:
            raise ModelDirError(f"{self.model_dir}: type {self.manifest['type']!r}, expected {NAME!r}")
        self.config = build_config(DualPivotConfig, [self.manifest["config"]])
        info = self.manifest["backbone"]
        loaded = backbone if backbone is not None else load_backbone(self.model_dir, info)
        if not isinstance(loaded, HiddenStateEncoder):
            raise ModelDirError(f"{self.model_dir}: backbone {info['ref']} does not expose layer_pooled")
        if encoder_id(loaded) != info["id"]:
            raise ModelDirError(f"{self.model_dir}: trained on backbone {info['id']}, but {info['ref']} is "
                                f"{encoder_id(loaded)} (different weights)")
        self.backbone = loaded
        if weights not in ("selected", "last"):
            raise ValueError(f"weights must be 'selected' or 'last', not {weights!r}")
        last = weights == "last" and (self.model_dir / LAST_FILE).is_file()
        self.weight_file = self.model_dir / (LAST_FILE if last else MODULE_FILE)
        try:
            state = load_file(str(self.weight_file))
        except Exception as exc:  # safetensors raises several types for a corrupt file
            raise ModelDirError(f"{self.weight_file}: cannot be read ({exc})") from exc
        self.module = ExtractionModule(loaded.num_layers + 1, loaded.dim, layer=self.config.layer)
        try:
            self.module.load_state_dict(state)
        except RuntimeError as exc:
            raise ModelDirError(f"{self.model_dir}: module does not fit backbone {info['id']} ({exc})") from exc
        self.module.eval()
        self.name: str = self.manifest.get("name", self.model_dir.name)
        self.dim: int = loaded.dim
        self.id: str = f"{self.name}@{model_checksum(self.manifest)}"
        self.backend = "torch"
        self._mixed: TransformerEncoder | None = None

    def project(self, sums: np.ndarray) -> np.ndarray:
        """Unit rows from sum-pooled layer states ``(n, layers, dim)`` (zero rows stay zero)."""
        return project(self.module, sums)

    def use_backend(self, backend: str, *, threads: int | None = None) -> None:
        """Run ``encode`` on ``backend``: the backbone's graph with this model's layer mix built in (exported once
        per backbone and mix), then the linear map. An input longer than the backbone's window is encoded as its
        windows' mixes averaged (the PyTorch path sums them); every other input gets the PyTorch path's vector.
        A lossy backend (bf16, int8) becomes part of the id, as for the backbone."""
        if not isinstance(self.backbone, TransformerEncoder):
            raise ValueError(f"{self.name}: backends run transformer backbones only")
        mixed = copy.copy(self.backbone)  # its own runner; the shared backbone keeps its own
        mixed.use_backend(backend, threads=threads, layer_weights=self.module.mix_weights().detach().numpy())
        self._mixed = mixed
        self.backend = backend
        self.id = f"{self.name}@{model_checksum(self.manifest)}{id_suffix(backend)}"

    def encode(self, sentences: Sequence[str], lang: str | None = None, *,
               batch_tokens: int = DEFAULT_BATCH_TOKENS, progress: bool = False,
               cache: bool = False) -> np.ndarray:
        """``(len(sentences), dim)`` float32 unit rows; empty sentences give zero rows."""
        sentences = sentence_list(sentences)
        if cache:
            return self.project(cached_layer_means(self.backbone, sentences, lang, progress=progress).sums())
        if self._mixed is not None:
            mixes = self._mixed.encode(sentences, batch_tokens=batch_tokens, progress=progress)
            return l2_normalize(mixes @ self.module.map.detach().numpy().T)
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        bar = tqdm(total=len(sentences), disable=not progress, unit="sent", desc=f"encode {self.name}")
        for start in range(0, len(sentences), CHUNK_SENTENCES):
            chunk = sentences[start : start + CHUNK_SENTENCES]
            sums, _ = self.backbone.layer_pooled(chunk, batch_tokens=batch_tokens)
            out[start : start + len(chunk)] = self.project(sums)
            bar.update(len(chunk))
        bar.close()
        return out



def smallest_model(out: Path, backbone: TransformerEncoder) -> Path:
    """Dual-pivot's smallest model: two supervised steps on the toy pairs."""
    cfg = METHOD.config(mode="supervised", sets=["selection=none", "device=cpu", "steps=2", "batch_size=4",
                                                 "checkpoint_every=100"])
    return train_on(cfg, Bitext(TOY_DE, TOY_EN, "de", "en"), backbone, out, progress=False)  # type: ignore[arg-type]

METHOD = Method(
    name=NAME,
    summary="dual-pivot transfer (paper 004): frozen LM + layer mix + linear map, trained on one language pair",
    config_class=DualPivotConfig,
    defaults=DEFAULTS,
    train=train,
    encoder=DualPivotEncoder,
    modes=MODES,
    smallest=smallest_model,
)
