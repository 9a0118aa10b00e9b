"""Checkpoints without pickle: module and optimizer tensors in safetensors, everything else in JSON.

A checkpoint restores a run exactly: named modules, named optimizers (Adam's ``exp_avg``, ``exp_avg_sq``,
``step`` per parameter and the param-group hyper-parameters), and every random number generator state
(Python's ``random``, NumPy's legacy global generator, torch's CPU generator and, when present, each CUDA
device's), so a resumed run that uses dropout is byte-identical to an uninterrupted one. Learning-rate
schedules are functions of the step (:mod:`xlsent.training.schedule`) and need no state of their own.

>>> import tempfile, torch
>>> from pathlib import Path
>>> lin = torch.nn.Linear(2, 1)
>>> d = Path(tempfile.mkdtemp())
>>> path = save_checkpoint(d, 7, TrainState({"lin": lin}), {"note": "x"})
>>> with torch.no_grad(): _ = lin.weight.zero_()
>>> info = load_checkpoint(path, TrainState({"lin": lin}))
>>> info["step"], info["note"], bool(lin.weight.abs().sum() > 0)
(7, 'x', True)
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from xlsent.atomic import atomic_path, write_json
from xlsent.checksum import sha256_file

CHECKPOINT_FORMAT = "xlsent-checkpoint"
KEEP_CHECKPOINTS = 2


class CheckpointError(ValueError):
    """A checkpoint is corrupt, of another format, or does not fit the modules it is loaded into."""


@dataclass
class TrainState:
    """Everything a checkpoint restores besides the RNGs: named modules and named optimizers."""

    modules: dict[str, torch.nn.Module]
    optimizers: dict[str, torch.optim.Optimizer] = field(default_factory=dict)


def rng_state() -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The global RNG states: torch's as tensors, Python's and NumPy's as JSON-ready values."""
    tensors = {"rng/torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        for i, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng/cuda/{i}"] = s
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    return tensors, {"python": [version, list(internal), gauss],
                     "numpy": [kind, np.asarray(keys).tolist(), int(pos), int(has_gauss), float(cached)]}


def set_rng_state(tensors: dict[str, torch.Tensor], saved: dict[str, Any]) -> None:
    """Restore what :func:`rng_state` returned."""
    torch.set_rng_state(tensors["rng/torch"])
    cuda = [tensors[k] for k in sorted(k for k in tensors if k.startswith("rng/cuda/"))]
    if cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(cuda)
    version, internal, gauss = saved["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, cached = saved["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))


def state_tensors(state: TrainState) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Flatten ``state`` into CPU tensors and JSON-ready optimizer scalars and param groups."""
    tensors: dict[str, torch.Tensor] = {}
    for name, module in state.modules.items():
        for key, value in module.state_dict().items():
            tensors[f"module/{name}/{key}"] = value.detach().cpu().clone().contiguous()
    optim_json: dict[str, Any] = {}
    for name, opt in state.optimizers.items():
        sd = opt.state_dict()
        scalars: dict[str, dict[str, Any]] = {}
        for idx, per_param in sd["state"].items():
            for key, value in per_param.items():
                if isinstance(value, torch.Tensor):
                    tensors[f"optim/{name}/{idx}/{key}"] = value.detach().cpu().clone().contiguous()
                else:
                    scalars.setdefault(str(idx), {})[key] = value
        groups = [{k: list(v) if isinstance(v, tuple) else v for k, v in g.items()} for g in sd["param_groups"]]
        optim_json[name] = {"param_groups": groups, "scalars": scalars}
    return tensors, optim_json


def restore_modules(modules: dict[str, torch.nn.Module], tensors: dict[str, torch.Tensor]) -> None:
    """Load each module's ``module/<name>/`` tensors (onto the device its parameters live on)."""
    for name, module in modules.items():
        prefix = f"module/{name}/"
        try:
            module.load_state_dict({k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)})
        except RuntimeError as exc:
            raise CheckpointError(f"module {name!r} does not fit the checkpoint ({exc})") from exc


def _restore(state: TrainState, tensors: dict[str, torch.Tensor], optim_json: dict[str, Any]) -> None:
    restore_modules(state.modules, tensors)
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


def save_tensors_json(json_path: Path, tensors: dict[str, torch.Tensor], info: dict[str, Any]) -> Path:
    """Write ``tensors`` beside ``json_path`` and then ``info`` (with the tensors' checksum), both atomically."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    tensor_path = json_path.with_suffix(".safetensors")
    with atomic_path(tensor_path) as tmp:
        save_file(tensors, str(tmp))
    write_json(json_path, {"format": CHECKPOINT_FORMAT, "tensors": tensor_path.name,
                           "sha256": sha256_file(tensor_path), **info})
    return json_path


def corrupt(json_path: Path, why: str) -> CheckpointError:
    """The error of a corrupt checkpoint ``json_path``, naming it, ``why`` and the fix."""
    return CheckpointError(f"{json_path}: corrupt checkpoint ({why}); delete it to resume from the one before")


def read_checkpoint_json(json_path: Path) -> dict[str, Any]:
    """The JSON half of a checkpoint (or of the best weights), checked to be one: unreadable JSON, or JSON without
    its tensors' file and checksum, is a :func:`corrupt` checkpoint."""
    try:
        info = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise corrupt(json_path, str(exc)) from exc
    if not isinstance(info, dict):
        raise corrupt(json_path, f"a JSON {type(info).__name__}, not an object")
    if info.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{json_path}: not an xlsent checkpoint")
    if not isinstance(info.get("tensors"), str) or not isinstance(info.get("sha256"), str):
        raise corrupt(json_path, "no tensors file or checksum")
    return info


def read_tensors_json(json_path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read what :func:`save_tensors_json` wrote, checking format and checksum."""
    info = read_checkpoint_json(json_path)
    tensor_path = json_path.parent / info["tensors"]
    if not tensor_path.is_file() or sha256_file(tensor_path) != info["sha256"]:
        raise CheckpointError(f"{tensor_path}: missing or its checksum differs from {json_path.name} (corrupt); "
                              "delete this checkpoint to resume from the one before")
    return load_file(str(tensor_path)), info


def save_checkpoint(directory: Path, step: int, state: TrainState, extra: dict[str, Any]) -> Path:
    """Write the checkpoint after ``step`` steps, RNG states included; keep the newest two."""
    tensors, optim_json = state_tensors(state)
    rng_tensors, rng_json = rng_state()
    path = save_tensors_json(checkpoint_path(directory, step), {**tensors, **rng_tensors},
                             {"step": step, "optimizers": optim_json, "rng": rng_json, **extra})
    for old in sorted(directory.glob("ckpt-*.json"))[:-KEEP_CHECKPOINTS]:
        old.with_suffix(".safetensors").unlink(missing_ok=True)
        old.unlink()
    return path


def latest_checkpoint(directory: Path) -> Path | None:
    """The newest complete checkpoint's JSON in ``directory``, or None."""
    done = [p for p in sorted(directory.glob("ckpt-*.json")) if p.with_suffix(".safetensors").is_file()]
    return done[-1] if done else None


def load_checkpoint(json_path: Path, state: TrainState) -> dict[str, Any]:
    """Restore ``state`` and the global RNGs from a checkpoint; returns its JSON (``step``, caller's fields)."""
    tensors, info = read_tensors_json(json_path)
    try:
        _restore(state, tensors, info["optimizers"])
        set_rng_state(tensors, info["rng"])
    except (KeyError, TypeError) as exc:
        raise corrupt(json_path, f"{type(exc).__name__}: {exc}") from exc
    return info
