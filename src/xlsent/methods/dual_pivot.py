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

h is the bidirectional triplet ranking loss with margin alpha over cosine similarities and ``n_neg`` in-batch
negatives per positive, always including the hardest (:func:`triplet_loss`). Losses see L2-normalised y (the
vectors used for retrieval): on raw sums the critic could tell the languages apart by sentence length alone.

>>> import xlsent
>>> from xlsent.methods.dual_pivot import default_config, train, DualPivotEncoder
>>> from xlsent.methods.pivot_data import build_training_data
>>> cfg = default_config("supervised")
>>> data = build_training_data(cfg.mode, cfg.pairs, max_pairs=20000)            # doctest: +SKIP
>>> out = train(cfg, data, xlsent.load("me5-small"), "models/dual-pivot-sup-de-en")  # doctest: +SKIP
>>> DualPivotEncoder(out).encode(["Der Hund bellt.", "The dog barks."]).shape   # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import shutil
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tqdm.auto import tqdm

from xlsent.atomic import atomic_open, atomic_path
from xlsent.encoders.base import HiddenStateEncoder, l2_normalize
from xlsent.encoders.cache import encoder_id, sentences_key
from xlsent.encoders.layer_cache import CHUNK_SENTENCES, LayerStates, cached_layer_means
from xlsent.encoders.model_dir import MANIFEST, ModelDirError, model_checksum, read_manifest, write_manifest
from xlsent.encoders.transformer import DEFAULT_BATCH_TOKENS
from xlsent.methods._training import (
    CriticSchedule,
    TrainState,
    batch_indices,
    critic_updates,
    frozen,
    run_training,
    seed_everything,
    step_generator,
    wasserstein_gap,
)
from xlsent.methods.pivot_data import Bitext, Unpaired

log = logging.getLogger(__name__)

MODEL_TYPE = "dual-pivot"
MODULE_FILE = "module.safetensors"
CONFIG_FILE = "config.toml"
MODES = ("unsupervised", "supervised")
MIX_INITS = ("uniform", "last")
LAST_LAYER_LOGIT = 5.0  # "last" init: softmax puts ~0.93 of the weight on the last layer of a 13-layer backbone

# --- configuration -------------------------------------------------------------------------------------------


@dataclass
class Config:
    """Hyper-parameters and ablation switches; ``src/xlsent/configs/dual_pivot.toml`` documents each one.

    ``Config()`` is the unsupervised default; :func:`default_config` also applies the per-mode overrides
    (the supervised model uses n_neg=1, alpha=0).
    """

    mode: str = "unsupervised"
    backbone: str = "me5-small"
    pairs: list[str] = field(default_factory=lambda: ["de-en"])
    max_pairs: int | None = None
    n_neg: int = 2
    alpha: float = 0.2
    lambda_cycle: float = 10.0
    kappa: int = 2
    lr: float = 1e-3
    batch_size: int = 128
    steps: int = 6000
    seed: int = 0
    checkpoint_every: int = 500
    adversarial: bool = True
    cycle: bool = True
    train_mix: bool = True
    train_map: bool = True
    layer: int | None = None
    mix_init: str = "uniform"
    critic_hidden: int = 0
    critic_gp: float = 10.0
    critic_clip: float = 0.0

    def check(self) -> Config:
        """Raise ValueError for an inconsistent configuration; return self."""
        problems = []
        if self.mode not in MODES:
            problems.append(f"mode must be one of {MODES}, not {self.mode!r}")
        if not self.pairs:
            problems.append("pairs is empty")
        if self.n_neg < 1 or self.kappa < 1 or self.batch_size < 2 or self.steps < 0:
            problems.append("n_neg and kappa must be >= 1, batch_size >= 2, steps >= 0")
        if not (self.train_map or (self.train_mix and self.layer is None)):
            problems.append("nothing to train: enable train_map, or train_mix without a fixed layer")
        if self.mix_init not in MIX_INITS:
            problems.append(f"mix_init must be one of {MIX_INITS}, not {self.mix_init!r}")
        if self.mode == "unsupervised" and not (self.adversarial or self.cycle):
            problems.append("the unsupervised mode needs the adversarial loss, the cycle loss or both")
        if problems:
            raise ValueError("invalid dual-pivot config: " + "; ".join(problems))
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Config:
        """Build from a dict of field values (unknown keys are an error)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown dual-pivot config key(s) {unknown}; known: {sorted(names)}")
        return cls(**values).check()

    def to_toml(self) -> str:
        """The configuration as flat TOML (unset optional values are left out)."""
        lines = []
        for key, value in self.to_dict().items():
            if value is not None:
                lines.append(f"{key} = {_toml_value(value)}")
        return "\n".join(lines) + "\n"

    def fingerprint(self) -> dict[str, Any]:
        """The fields that change the training trajectory (a resumed run must match them)."""
        return {k: v for k, v in self.to_dict().items() if k not in ("steps", "checkpoint_every")}


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def _layered(tables: Sequence[dict[str, Any]], mode: str | None) -> dict[str, Any]:
    """Merge TOML tables: each table's top-level keys, then its ``[mode]`` table, in order."""
    mode = mode or next((t["mode"] for t in reversed(tables) if "mode" in t), "unsupervised")
    merged: dict[str, Any] = {}
    for table in tables:
        merged.update({k: v for k, v in table.items() if k not in MODES})
        merged.update(table.get(mode, {}))
    merged["mode"] = mode
    return merged


def load_config(path: str | Path | None = None, mode: str | None = None) -> Config:
    """The packaged defaults, overridden by the TOML file at ``path`` and then by ``mode``."""
    tables = [tomllib.loads((resources.files("xlsent") / "configs" / "dual_pivot.toml").read_text("utf-8"))]
    if path is not None:
        with open(path, "rb") as fh:
            tables.append(tomllib.load(fh))
    return Config.from_dict(_layered(tables, mode))


def default_config(mode: str = "unsupervised") -> Config:
    """The paper's defaults for ``mode`` (from ``configs/dual_pivot.toml``)."""
    return load_config(mode=mode)


# --- losses and modules --------------------------------------------------------------------------------------


def select_negatives(sim: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """Column indices ``(B, n)`` of negatives per row of ``sim`` (diagonal = positives).

    The first is the hardest (most similar) negative; the other ``n - 1`` are drawn at random without
    replacement among the remaining columns. ``n`` is capped at ``B - 1``.
    """
    size = sim.shape[0]
    n = min(n, size - 1)
    eye = torch.eye(size, dtype=torch.bool)
    hardest = sim.detach().masked_fill(eye, float("-inf")).argmax(dim=1, keepdim=True)
    if n == 1:
        return hardest
    keys = torch.rand(size, size, generator=generator).masked_fill(eye, -1.0).scatter(1, hardest, -1.0)
    return torch.cat([hardest, keys.topk(n - 1, dim=1).indices], dim=1)


def triplet_loss(a: torch.Tensor, b: torch.Tensor, n_neg: int, alpha: float,
                 generator: torch.Generator) -> torch.Tensor:
    """Bidirectional triplet ranking loss h(a, b) of the paper, averaged over the batch.

    For each positive pair (a_i, b_i): sum over negatives a_j of max(0, alpha - sim(a_i, b_i) + sim(a_j, b_i))
    plus sum over negatives b_j of max(0, alpha - sim(a_i, b_i) + sim(a_i, b_j)), cosine similarity, with
    ``n_neg`` in-batch negatives per direction of which one is always the hardest.
    """
    if len(a) < 2:
        raise ValueError("the triplet loss needs at least two pairs in a batch")
    sim = F.normalize(a, dim=1) @ F.normalize(b, dim=1).T
    pos = sim.diagonal().unsqueeze(1)
    sim_t = sim.T  # sim_t[i, j] = sim(a_j, b_i)
    neg_a = sim_t.gather(1, select_negatives(sim_t, n_neg, generator))
    neg_b = sim.gather(1, select_negatives(sim, n_neg, generator))
    costs = F.relu(alpha - pos + neg_a).sum(dim=1) + F.relu(alpha - pos + neg_b).sum(dim=1)
    return costs.mean()


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


def make_critic(dim: int, hidden: int) -> torch.nn.Module:
    """Language critic: linear ``dim -> 1`` (``hidden == 0``) or one hidden LeakyReLU layer."""
    if hidden <= 0:
        return torch.nn.Linear(dim, 1)
    return torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.LeakyReLU(0.2), torch.nn.Linear(hidden, 1))


# --- training ------------------------------------------------------------------------------------------------


@dataclass
class FitResult:
    """The trained module and the loss history (means per logged interval)."""

    module: ExtractionModule
    history: list[dict[str, float]]


class _Rows:
    """Layer states as torch tensors, giving float32 sums of selected rows."""

    def __init__(self, states: LayerStates) -> None:
        self.means = torch.from_numpy(np.ascontiguousarray(states.means))
        self.counts = torch.from_numpy(np.ascontiguousarray(states.counts, dtype=np.float32))

    def __len__(self) -> int:
        return len(self.counts)

    def sums(self, rows: np.ndarray) -> torch.Tensor:
        idx = torch.from_numpy(rows)
        return self.means.index_select(0, idx).to(torch.float32) * self.counts.index_select(0, idx)[:, None, None]


def _rows_with_tokens(*states: LayerStates) -> tuple[LayerStates, ...]:
    """``states`` without the rows where any of them has no tokens (rows are aligned across ``states``)."""
    keep = np.flatnonzero(np.logical_and.reduce([s.counts > 0 for s in states]))
    if len(keep) == len(states[0]):
        return states
    log.info("dropping %d of %d rows without tokens", len(states[0]) - len(keep), len(states[0]))
    return tuple(s.subset(keep) for s in states)


def fit(config: Config, src: LayerStates, tgt: LayerStates, *, checkpoint_dir: Path | None = None,
        resume: bool = False, progress: bool = True, meta: dict[str, Any] | None = None,
        log_every: int = 50) -> FitResult:
    """Train the extraction module from cached layer states (paired rows in the supervised mode)."""
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
    seed_everything(config.seed)
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
    critic = make_critic(dim, config.critic_hidden)
    schedule = CriticSchedule(config.kappa, config.critic_clip, config.critic_gp)
    if use_adv:
        modules["critic"] = critic
        optimizers["critic"] = torch.optim.Adam(critic.parameters(), lr=config.lr)
    rows_s, rows_t = _Rows(src), _Rows(tgt)
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
        if use_adv:
            def critic_batch(k: int) -> tuple[torch.Tensor, torch.Tensor]:
                i_s, i_t = batches(s * draws + k)
                with torch.no_grad():
                    return embed(rows_s, i_s), embed(rows_t, i_t)

            metrics["disc"] = critic_updates(critic, optimizers["critic"], critic_batch, schedule, gen)
        i_s, i_t = batches(s * draws + draws - 1)
        y_s, y_t = embed(rows_s, i_s), embed(rows_t, i_t)
        if paired:
            loss = triplet_loss(y_s, y_t, config.n_neg, config.alpha, gen)
            metrics["sup"] = loss.item()
        else:
            loss = torch.zeros(())
            if use_adv:
                with frozen(critic):
                    adv = -wasserstein_gap(critic, y_s, y_t)
                loss = loss + adv
                metrics["adv"] = adv.item()
            if use_cycle:
                f, g = cycle_maps["F"], cycle_maps["G"]
                cyc = (triplet_loss(y_s, g(f(y_s)), config.n_neg, config.alpha, gen)
                       + triplet_loss(f(g(y_t)), y_t, config.n_neg, config.alpha, gen))
                loss = loss + (config.lambda_cycle if use_adv else 1.0) * cyc
                metrics["cycle"] = cyc.item()
        optimizers["module"].zero_grad(set_to_none=True)
        loss.backward()
        optimizers["module"].step()
        metrics["loss"] = loss.item()
        return metrics

    result = run_training(step, steps=config.steps, state=TrainState(modules, optimizers),
                          checkpoint_dir=checkpoint_dir, checkpoint_every=config.checkpoint_every, resume=resume,
                          meta={"config": config.fingerprint(), **(meta or {})}, log_every=log_every,
                          progress=progress, desc=f"dual-pivot {config.mode}")
    return FitResult(module, result.history)


def train(config: Config, data: Bitext | Unpaired, backbone: HiddenStateEncoder, out_dir: str | Path, *,
          resume: bool = False, progress: bool = True) -> Path:
    """Cache the backbone's layer states of ``data``, train, and write the model directory ``out_dir``.

    ``data`` is a :class:`Bitext` for the supervised mode and :class:`Unpaired` for the unsupervised one.
    Checkpoints go to ``out_dir/checkpoints`` and are removed once the model is written; ``resume`` continues
    a killed run (or returns a finished one as it is).
    """
    config.check()
    expected = Bitext if config.mode == "supervised" else Unpaired
    if not isinstance(data, expected):
        raise TypeError(f"{config.mode} training needs {expected.__name__} data, got {type(data).__name__}")
    out = Path(out_dir)
    if (out / MANIFEST).is_file():
        if resume:
            log.info("%s is already a trained model; nothing to resume", out)
            return out
        raise FileExistsError(f"{out} already holds a model; choose another folder")
    start = time.perf_counter()
    src = cached_layer_means(backbone, data.src, data.src_lang or None, progress=progress)
    tgt = cached_layer_means(backbone, data.tgt, data.tgt_lang or None, progress=progress)
    meta: dict[str, Any] = {"backbone": encoder_id(backbone),
            "data": {"src": sentences_key(data.src, data.src_lang or None),
                     "tgt": sentences_key(data.tgt, data.tgt_lang or None)}}
    fitted = fit(config, src, tgt, checkpoint_dir=out / "checkpoints", resume=resume, progress=progress,
                 meta=meta)
    training = {"data": {"kind": type(data).__name__, "src_lang": data.src_lang, "tgt_lang": data.tgt_lang,
                         "src_sentences": len(data.src), "tgt_sentences": len(data.tgt), **meta["data"],
                         "summary": data.summary},
                "final": fitted.history[-1] if fitted.history else {}, "history": fitted.history,
                "seconds": round(time.perf_counter() - start, 1)}
    save_model(out, fitted.module, config, backbone, training)
    shutil.rmtree(out / "checkpoints", ignore_errors=True)
    log.info("dual-pivot model written to %s", out)
    return out


# --- model directory and encoder -----------------------------------------------------------------------------


def backbone_reference(backbone: HiddenStateEncoder) -> str:
    """How to load ``backbone`` again: its registered name, or its model directory."""
    from xlsent.encoders.registry import REGISTERED

    if backbone.name in REGISTERED:
        return backbone.name
    model_dir = getattr(backbone, "model_dir", None)
    if model_dir is None:
        raise ValueError(f"backbone {backbone.name!r} is neither registered nor loaded from a model directory")
    return str(Path(model_dir).resolve())


def save_model(directory: str | Path, module: ExtractionModule, config: Config, backbone: HiddenStateEncoder,
               training: dict[str, Any], *, name: str | None = None) -> Path:
    """Write ``module.safetensors``, ``config.toml`` and the ``xlsent.json`` manifest (type dual-pivot)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / MODULE_FILE) as tmp:
        save_file({k: v.detach().contiguous() for k, v in module.state_dict().items()}, str(tmp))
    with atomic_open(out / CONFIG_FILE) as fh:
        fh.write(config.to_toml())
    weights = module.mix_weights().detach().tolist()
    write_manifest(out, {
        "type": MODEL_TYPE,
        "name": name or out.name,
        "backbone": {"name": backbone.name, "id": encoder_id(backbone), "ref": backbone_reference(backbone)},
        "module": {"layers": len(weights), "dim": module.map.shape[0], "mix_weights": weights,
                   "formula": "normalize(map @ sum_l softmax(mix_logits)_l * sum_tokens h_l)"},
        "config": config.to_dict(),
        "training": training,
        "metrics": {},
    })
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
                 verify: str = "size") -> None:
        from xlsent.encoders.registry import load_encoder

        self.model_dir = Path(model_dir)
        self.manifest: dict[str, Any] = read_manifest(self.model_dir, verify=verify)
        if self.manifest["type"] != MODEL_TYPE:
            raise ModelDirError(f"{self.model_dir}: type {self.manifest['type']!r}, expected {MODEL_TYPE!r}")
        self.config = Config.from_dict(self.manifest["config"])
        info = self.manifest["backbone"]
        loaded = backbone if backbone is not None else load_encoder(info["ref"])
        if not isinstance(loaded, HiddenStateEncoder):
            raise ModelDirError(f"{self.model_dir}: backbone {info['ref']} does not expose layer_pooled")
        if encoder_id(loaded) != info["id"]:
            raise ModelDirError(f"{self.model_dir}: trained on backbone {info['id']}, but {info['ref']} is "
                                f"{encoder_id(loaded)} (different weights)")
        self.backbone = loaded
        try:
            state = load_file(str(self.model_dir / MODULE_FILE))
        except Exception as exc:  # safetensors raises several types for a corrupt file
            raise ModelDirError(f"{self.model_dir / MODULE_FILE}: cannot be read ({exc})") from exc
        self.module = ExtractionModule(loaded.num_layers + 1, loaded.dim, layer=self.config.layer)
        try:
            self.module.load_state_dict(state)
        except RuntimeError as exc:
            raise ModelDirError(f"{self.model_dir}: module does not fit backbone {info['id']} ({exc})") from exc
        self.module.eval()
        self.name: str = self.manifest.get("name", self.model_dir.name)
        self.dim: int = loaded.dim
        self.id: str = f"{self.name}@{model_checksum(self.manifest)}"

    def project(self, sums: np.ndarray) -> np.ndarray:
        """Unit rows from sum-pooled layer states ``(n, layers, dim)`` (zero rows stay zero)."""
        with torch.inference_mode():
            out = self.module(torch.from_numpy(np.ascontiguousarray(sums, dtype=np.float32))).numpy()
        return l2_normalize(out)

    def encode(self, sentences: Sequence[str], lang: str | None = None, *,
               batch_tokens: int = DEFAULT_BATCH_TOKENS, progress: bool = False,
               cache: bool = False) -> np.ndarray:
        """``(len(sentences), dim)`` float32 unit rows; empty sentences give zero rows."""
        if cache:
            return self.project(cached_layer_means(self.backbone, sentences, lang, progress=progress).sums())
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        bar = tqdm(total=len(sentences), disable=not progress, unit="sent", desc=f"encode {self.name}")
        for start in range(0, len(sentences), CHUNK_SENTENCES):
            chunk = sentences[start : start + CHUNK_SENTENCES]
            sums, _ = self.backbone.layer_pooled(chunk, batch_tokens=batch_tokens)
            out[start : start + len(chunk)] = self.project(sums)
            bar.update(len(chunk))
        bar.close()
        return out


# --- command line --------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``xlsent train dual-pivot``."""
    parser.add_argument("--mode", choices=MODES, help="unsupervised (unpaired sentences) or supervised (bitext); "
                        "default: from --config, else unsupervised")
    parser.add_argument("--pair", action="append", dest="pairs", metavar="PAIR",
                        help="language pair such as de-en, ar-en, de-fr (repeat for several; default de-en)")
    parser.add_argument("--config", help="TOML file overriding the defaults of configs/dual_pivot.toml")
    parser.add_argument("--out", required=True, help="model directory to write")
    parser.add_argument("--resume", action="store_true", help="continue a killed run from its last checkpoint")
    parser.add_argument("--steps", type=int, help="training steps (overrides the config)")
    parser.add_argument("--max-pairs", type=int, help="cap on training pairs (overrides the config)")
    parser.add_argument("--backbone", help="frozen LM: registered name or model directory (default me5-small)")
    parser.add_argument("--data", help="benchmark data folder (default $XLSENT_DATA or ../shared/data)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def run_from_args(args: argparse.Namespace) -> Path:
    """Build the configuration and training data from ``args``, train, and return the model directory."""
    from xlsent.encoders.registry import load_encoder
    from xlsent.methods.pivot_data import build_training_data

    config = load_config(args.config, args.mode)
    overrides = {"pairs": args.pairs, "steps": args.steps, "max_pairs": args.max_pairs, "backbone": args.backbone}
    config = dataclasses.replace(config, **{k: v for k, v in overrides.items() if v is not None}).check()
    data = build_training_data(config.mode, config.pairs, root=args.data, max_pairs=config.max_pairs,
                               seed=config.seed)
    backbone = load_encoder(config.backbone)
    if not isinstance(backbone, HiddenStateEncoder):
        raise ValueError(f"backbone {config.backbone} does not expose layer_pooled")
    return train(config, data, backbone, args.out, resume=args.resume, progress=not args.quiet)
