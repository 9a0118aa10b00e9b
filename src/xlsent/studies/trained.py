"""Reuse a study's trained model only when it was trained with the configuration the study asks for."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xlsent.encoders.model_dir import MANIFEST, read_manifest
from xlsent.training.config import TrainConfig
from xlsent.training.method import Method

log = logging.getLogger(__name__)


class StaleModelError(ValueError):
    """A study's model folder holds a model trained with another configuration."""


def require_model(folder: Path, option: str) -> None:
    """Refuse ``folder``, given by ``option`` (or its default), unless it holds a model (its manifest)."""
    if not (folder / MANIFEST).is_file():
        raise FileNotFoundError(f"{option} {folder}: no model there ({(folder / MANIFEST).absolute()} is missing): "
                                "name a trained model's folder (a relative path is read from the current folder)")


def config_differences(config: TrainConfig, manifest: dict[str, Any]) -> list[str]:
    """The fingerprinted keys on which the model of ``manifest`` and ``config`` differ, as ``key: model's value,
    wanted value``.

    >>> config_differences(TrainConfig(steps=3), {"config": {**TrainConfig().to_dict(), "device": "cuda"}})
    ['steps: 1000 in the model, 3 wanted']
    """
    stored = manifest.get("config") or {}
    wanted = config.fingerprinted()
    later = config.LATER_KEYS
    out = [f"{key}: {stored[key]!r} in the model, {value!r} wanted" if key in stored else
           f"{key}: not in the model's config, {value!r} wanted"
           for key, value in wanted.items() if stored.get(key, later.get(key, object())) != value]
    out += [f"{key}: {stored[key]!r} in the model, not a key of {type(config).__name__}"
            for key in stored if key not in wanted and key not in config.NOT_FINGERPRINTED
            and not (key in later and later[key] == stored[key])]
    return out


def ensure_trained(method: Method, config: TrainConfig, out: Path, *, data: str | None = None,
                   retrain: bool = False, train: Callable[[], object] | None = None) -> Path:
    """The model folder ``out`` holding ``method``'s model trained with ``config``.

    A finished model is reused when its type and config fingerprint match; one of another configuration is an
    error listing the keys that differ, or with ``retrain`` removed and trained again. A missing or unfinished
    model is trained (resumed from its checkpoints) by ``train``, by default ``method.train`` on ``data``.
    """
    if (out / MANIFEST).is_file():
        manifest = read_manifest(out, verify="none")
        if manifest.get("type") == method.name and manifest.get("fingerprint") == config.fingerprint():
            return out
        differences = ([f"type: {manifest.get('type')!r} in the folder, {method.name!r} wanted"]
                       if manifest.get("type") != method.name else config_differences(config, manifest))
        listed = "; ".join(differences) or f"fingerprint {manifest.get('fingerprint')} vs {config.fingerprint()}"
        if not retrain:
            raise StaleModelError(f"{out} holds a model of another configuration ({listed}): remove it, keep models "
                                  "elsewhere with another --models folder, or retrain it with --retrain")
        log.warning("%s holds a model of another configuration (%s): retraining it", out, listed)
        shutil.rmtree(out)
    log.info("training %s: %s (fingerprint %s)", out, method.name, config.fingerprint())
    if train is None:
        method.train(config, out, resume=out.exists(), data=data, progress=False)
    else:
        train()
    return out
