"""Training machinery shared by the methods: seeding, resumable data order, a checkpointed loop, WGAN critics.

Resumability without pickled RNG state: every random choice of step ``s`` comes from a generator seeded by
``(seed, s, stream)`` (:func:`step_generator`, :func:`batch_indices`), so a run restarted from the checkpoint
of step ``s`` draws exactly what the uninterrupted run would have drawn. Checkpoints hold module parameters and
optimizer state tensors (Adam's ``exp_avg``, ``exp_avg_sq``, ``step`` per parameter) in safetensors, and the
step, optimizer hyper-parameters, loss history and caller metadata in JSON.

>>> import torch
>>> from xlsent.methods._training import TrainState, run_training
>>> lin = torch.nn.Linear(2, 1)
>>> opt = torch.optim.Adam(lin.parameters(), lr=0.1)
>>> def step(s: int) -> dict[str, float]:
...     opt.zero_grad()
...     loss = (lin(torch.ones(1, 2)) - 3).pow(2).sum()
...     loss.backward()
...     opt.step()
...     return {"loss": loss.item()}
>>> result = run_training(step, steps=100, state=TrainState({"lin": lin}, {"opt": opt}), progress=False)
>>> result.history[-1]["loss"] < result.history[0]["loss"]
True
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from tqdm.auto import tqdm

from xlsent.atomic import atomic_path, write_json
from xlsent.checksum import sha256_file

log = logging.getLogger(__name__)

CHECKPOINT_FORMAT = "xlsent-checkpoint"
KEEP_CHECKPOINTS = 2


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (for initialisation; training draws come from :func:`step_generator`)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def derived_seed(seed: int, *keys: int) -> int:
    """A 63-bit seed derived from ``seed`` and ``keys`` (independent streams for distinct keys)."""
    return int(np.random.SeedSequence([seed, *keys]).generate_state(2, np.uint64)[0] >> np.uint64(1))


def step_generator(seed: int, step: int, stream: int = 0) -> torch.Generator:
    """A torch generator whose state depends only on ``(seed, step, stream)``."""
    return torch.Generator().manual_seed(derived_seed(seed, step, stream))


def batch_indices(n: int, batch_size: int, draw: int, seed: int, stream: int = 0) -> np.ndarray:
    """Row indices of the ``draw``-th batch over ``n`` rows: epochs of seeded permutations, last partial dropped.

    Depends only on its arguments, so a resumed run sees the same batches. With ``n < batch_size`` every batch
    is a permutation of all rows.

    >>> first, second = batch_indices(10, 4, 0, seed=1), batch_indices(10, 4, 1, seed=1)
    >>> len(set(first) | set(second)), bool((batch_indices(10, 4, 0, seed=1) == first).all())
    (8, True)
    """
    if n <= 0:
        raise ValueError("cannot draw batches from an empty set")
    size = min(batch_size, n)
    per_epoch = n // size
    epoch, pos = divmod(draw, per_epoch)
    perm = np.random.default_rng(derived_seed(seed, stream, epoch)).permutation(n)
    return perm[pos * size : (pos + 1) * size]


@contextlib.contextmanager
def frozen(*modules: torch.nn.Module) -> Iterator[None]:
    """Switch off gradients of ``modules``' parameters inside the block (e.g. the critic in a generator step)."""
    params = [p for m in modules for p in m.parameters()]
    flags = [p.requires_grad for p in params]
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, flag in zip(params, flags, strict=True):
            p.requires_grad_(flag)


# --- WGAN-style critics -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CriticSchedule:
    """How a Wasserstein-style critic is trained: ``kappa`` updates per generator step, Lipschitz control.

    ``clip`` > 0 clamps critic weights to ``[-clip, clip]`` after each update (WGAN, Arjovsky et al. 2017);
    ``gradient_penalty`` > 0 adds the WGAN-GP term (Gulrajani et al. 2017). Both 0 leaves the critic free.
    """

    kappa: int = 1
    clip: float = 0.0
    gradient_penalty: float = 0.0


def wasserstein_gap(critic: torch.nn.Module, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """``mean d(low) - mean d(high)``: the critic minimises it, the generator maximises it."""
    return critic(low).mean() - critic(high).mean()


def gradient_penalty(critic: torch.nn.Module, low: torch.Tensor, high: torch.Tensor,
                     generator: torch.Generator) -> torch.Tensor:
    """WGAN-GP: ``mean (|grad d(x)| - 1)^2`` at random points between paired rows of ``low`` and ``high``."""
    rows = min(len(low), len(high))
    t = torch.rand(rows, 1, generator=generator, dtype=low.dtype)
    x = (t * low[:rows] + (1 - t) * high[:rows]).requires_grad_(True)
    (grad,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)
    return (grad.norm(dim=1) - 1).pow(2).mean()


def critic_updates(critic: torch.nn.Module, optimizer: torch.optim.Optimizer,
                   batch: Callable[[int], tuple[torch.Tensor, torch.Tensor]], schedule: CriticSchedule,
                   generator: torch.Generator) -> float:
    """Run ``schedule.kappa`` critic updates; ``batch(k)`` gives detached ``(low, high)`` rows for update k.

    Returns the mean Wasserstein gap (without the penalty) over the updates.
    """
    gaps = []
    for k in range(schedule.kappa):
        low, high = batch(k)
        optimizer.zero_grad(set_to_none=True)
        gap = wasserstein_gap(critic, low, high)
        loss = gap
        if schedule.gradient_penalty > 0:
            loss = loss + schedule.gradient_penalty * gradient_penalty(critic, low, high, generator)
        loss.backward()
        optimizer.step()
        if schedule.clip > 0:
            with torch.no_grad():
                for p in critic.parameters():
                    p.clamp_(-schedule.clip, schedule.clip)
        gaps.append(gap.item())
    return float(np.mean(gaps)) if gaps else 0.0


# --- checkpoints ---------------------------------------------------------------------------------------------


@dataclass
class TrainState:
    """Everything a checkpoint restores: named modules and named optimizers."""

    modules: dict[str, torch.nn.Module]
    optimizers: dict[str, torch.optim.Optimizer] = field(default_factory=dict)


def _tensors(state: TrainState) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Flatten ``state`` into safetensors-ready tensors and JSON-ready optimizer scalars and hyper-parameters."""
    tensors: dict[str, torch.Tensor] = {}
    for name, module in state.modules.items():
        for key, value in module.state_dict().items():
            tensors[f"module/{name}/{key}"] = value.detach().clone().contiguous()
    optim_json: dict[str, Any] = {}
    for name, opt in state.optimizers.items():
        sd = opt.state_dict()
        scalars: dict[str, dict[str, Any]] = {}
        for idx, per_param in sd["state"].items():
            for key, value in per_param.items():
                if isinstance(value, torch.Tensor):
                    tensors[f"optim/{name}/{idx}/{key}"] = value.detach().clone().contiguous()
                else:
                    scalars.setdefault(str(idx), {})[key] = value
        groups = [{k: list(v) if isinstance(v, tuple) else v for k, v in g.items()} for g in sd["param_groups"]]
        optim_json[name] = {"param_groups": groups, "scalars": scalars}
    return tensors, optim_json


def _restore(state: TrainState, tensors: dict[str, torch.Tensor], optim_json: dict[str, Any]) -> None:
    for name, module in state.modules.items():
        prefix = f"module/{name}/"
        module.load_state_dict({k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)})
    for name, opt in state.optimizers.items():
        per_param: dict[int, dict[str, Any]] = {}
        prefix = f"optim/{name}/"
        for key, value in tensors.items():
            if key.startswith(prefix):
                idx, _, attr = key[len(prefix):].partition("/")
                per_param.setdefault(int(idx), {})[attr] = value
        saved = optim_json[name]
        for idx, scalars in saved["scalars"].items():
            per_param.setdefault(int(idx), {}).update(scalars)
        current = opt.state_dict()["param_groups"]
        groups = [{k: tuple(v) if isinstance(cur.get(k), tuple) else v for k, v in g.items()}
                  for g, cur in zip(saved["param_groups"], current, strict=True)]
        opt.load_state_dict({"state": per_param, "param_groups": groups})


def checkpoint_path(directory: Path, step: int) -> Path:
    """The JSON half of the checkpoint taken after ``step`` steps (the tensors sit beside it)."""
    return directory / f"ckpt-{step:09d}.json"


def save_checkpoint(directory: Path, step: int, state: TrainState, extra: dict[str, Any]) -> Path:
    """Write the checkpoint after ``step`` steps (tensors first, JSON last, both atomic); keep the newest two."""
    tensors, optim_json = _tensors(state)
    json_path = checkpoint_path(directory, step)
    tensor_path = json_path.with_suffix(".safetensors")
    with atomic_path(tensor_path) as tmp:
        save_file(tensors, str(tmp))
    write_json(json_path, {"format": CHECKPOINT_FORMAT, "step": step, "tensors": tensor_path.name,
                           "sha256": sha256_file(tensor_path), "optimizers": optim_json, **extra})
    for old in sorted(directory.glob("ckpt-*.json"))[:-KEEP_CHECKPOINTS]:
        old.with_suffix(".safetensors").unlink(missing_ok=True)
        old.unlink()
    return json_path


def latest_checkpoint(directory: Path) -> Path | None:
    """The newest complete checkpoint's JSON in ``directory``, or None."""
    done = [p for p in sorted(directory.glob("ckpt-*.json")) if p.with_suffix(".safetensors").is_file()]
    return done[-1] if done else None


def load_checkpoint(json_path: Path, state: TrainState) -> dict[str, Any]:
    """Restore ``state`` from a checkpoint; returns its JSON (``step``, caller's extra fields)."""
    info: dict[str, Any] = json.loads(json_path.read_text(encoding="utf-8"))
    if info.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{json_path}: not an xlsent checkpoint")
    tensor_path = json_path.parent / info["tensors"]
    if sha256_file(tensor_path) != info["sha256"]:
        raise ValueError(f"{tensor_path}: checksum differs from {json_path.name} (corrupt checkpoint)")
    _restore(state, load_file(str(tensor_path)), info["optimizers"])
    return info


# --- the loop ------------------------------------------------------------------------------------------------


@dataclass
class TrainResult:
    """What :func:`run_training` did: metric means per ``log_every`` steps, and where it started."""

    history: list[dict[str, float]]
    start_step: int
    steps: int


def run_training(step_fn: Callable[[int], dict[str, float]], *, steps: int, state: TrainState,
                 checkpoint_dir: Path | None = None, checkpoint_every: int = 1000, resume: bool = False,
                 meta: dict[str, Any] | None = None, log_every: int = 1, progress: bool = True,
                 desc: str = "train") -> TrainResult:
    """Call ``step_fn(step)`` for ``step`` in ``[start, steps)``, checkpointing every ``checkpoint_every`` steps.

    ``step_fn`` must draw randomness only from generators derived from the step (see :func:`step_generator`).
    With ``resume``, training continues from the newest checkpoint in ``checkpoint_dir`` (whose ``meta`` must
    equal ``meta``: same configuration and data), giving the same result as an uninterrupted run.
    """
    meta = meta or {}
    start, history, pending = 0, [], {}
    if not resume and checkpoint_dir is not None and latest_checkpoint(checkpoint_dir) is not None:
        raise FileExistsError(f"{checkpoint_dir} holds checkpoints of an earlier run: resume it or remove them")
    if resume and checkpoint_dir is not None and (ckpt := latest_checkpoint(checkpoint_dir)) is not None:
        saved_meta = json.loads(ckpt.read_text(encoding="utf-8")).get("meta", {})
        if saved_meta != json.loads(json.dumps(meta)):
            raise ValueError(f"{ckpt}: checkpoint was made with another configuration or data; "
                             "use a new output folder or train without --resume")
        info = load_checkpoint(ckpt, state)
        start, history, pending = info["step"], info["history"], info["pending"]
        log.info("resuming from %s (step %d of %d)", ckpt, start, steps)
    acc: dict[str, float] = pending.get("sums", {})
    count: int = pending.get("count", 0)
    bar = tqdm(total=steps, initial=start, disable=not progress, desc=desc, unit="step")
    for step in range(start, steps):
        metrics = step_fn(step)
        for k, v in metrics.items():
            acc[k] = acc.get(k, 0.0) + v
        count += 1
        if (step + 1) % log_every == 0 or step + 1 == steps:
            means = {k: v / count for k, v in acc.items()}
            history.append({"step": step + 1, **means})
            bar.set_postfix({k: f"{v:.4g}" for k, v in means.items()})
            acc, count = {}, 0
        bar.update(1)
        if checkpoint_dir is not None and ((step + 1) % checkpoint_every == 0 or step + 1 == steps):
            save_checkpoint(checkpoint_dir, step + 1, state, {"meta": meta, "history": history,
                                                              "pending": {"sums": acc, "count": count}})
    bar.close()
    return TrainResult(history, start, steps)
