"""A fine-tuned transformer inside a method: the part of it that checkpoints hold, and its model directory.

A method that fine-tunes a backbone (:class:`~xlsent.encoders.trainable.TrainableTransformer`, fully or through
LoRA adapters) checkpoints only the parameters that train (:class:`TrainedPart`), writes the model directory with
:func:`save_finetuned` (the backbone's own ``transformer`` or ``transformer-lora`` directory, with ``type`` the
method's name and ``weights`` that directory type) and loads it back with :func:`load_finetuned`.

>>> from torch import nn
>>> net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
>>> _ = net[0].requires_grad_(False)
>>> sorted(TrainedPart(net).state_dict())
['inner.1.bias', 'inner.1.weight']
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from torch import nn

from xlsent.atomic import atomic_open
from xlsent.encoders.lora import LORA_TYPE, LoraEncoder
from xlsent.encoders.model_dir import ModelDirError, read_manifest, write_manifest
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.training.config import TrainConfig, to_toml
from xlsent.training.method import model_manifest
from xlsent.training.model_card import write_card
from xlsent.training.record import TrainingRecord
from xlsent.training.run_folder import CHECKPOINT_DIR

log = logging.getLogger(__name__)

CONFIG_FILE = "config.toml"


class TrainedPart(nn.Module):
    """A module whose ``state_dict`` holds only ``inner``'s trainable parameters (checkpoints of LoRA runs stay
    small), shared with ``inner``, not copied.

    ``load_state_dict`` expects exactly those parameters and leaves the frozen ones as they are.
    """

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.trained = frozenset(f"inner.{n}" for n, p in inner.named_parameters() if p.requires_grad)

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        return {k: v for k, v in super().state_dict(*args, **kwargs).items() if k in self.trained}

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> Any:
        missing, unexpected = sorted(self.trained - set(state_dict)), sorted(set(state_dict) - self.trained)
        if strict and (missing or unexpected):
            raise RuntimeError(f"trainable parameters differ: missing {missing[:3]}, unexpected {unexpected[:3]}")
        return super().load_state_dict(state_dict, strict=False, assign=assign)


def parameter_groups(learner: nn.Module, lr: float, weight_decay: float = 0.01) -> list[dict[str, Any]]:
    """AdamW groups of the trainable parameters as sentence-transformers' ``fit`` builds them: weight decay 0.01,
    none on biases and LayerNorm weights (empty groups are left out).

    >>> groups = parameter_groups(nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2)), 1e-3)
    >>> [(g["name"], len(g["params"]), g["weight_decay"]) for g in groups]
    [('decay', 1, 0.01), ('no_decay', 3, 0.0)]
    """
    norms = {id(p) for m in learner.modules() if isinstance(m, nn.LayerNorm) for p in m.parameters()}
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for name, p in learner.named_parameters():
        if p.requires_grad:
            (no_decay if name.endswith("bias") or id(p) in norms else decay).append(p)
    groups = [{"params": decay, "lr": lr, "weight_decay": weight_decay, "name": "decay"},
              {"params": no_decay, "lr": lr, "weight_decay": 0.0, "name": "no_decay"}]
    return [g for g in groups if g["params"]]


def transformer_backbone(name: str, role: str = "backbone") -> TransformerEncoder:
    """The encoder ``name`` (registered name or model directory), which must be a transformer to fine-tune."""
    from xlsent.encoders.registry import load_encoder

    encoder = load_encoder(name)
    if not isinstance(encoder, TransformerEncoder):
        raise ValueError(f"the {role} must be a transformer model, not {name}")
    return encoder


def save_finetuned(directory: str | Path, model: TrainableTransformer, method: str, config: TrainConfig, *,
                   training: TrainingRecord, name: str | None = None, **fields: Any) -> Path:
    """Write ``model`` (full weights or LoRA adapters), ``config.toml`` and an ``xlsent.json`` of type ``method``
    whose ``weights`` names the model's own directory type, with the ``training`` record and ``fields``; checkpoints
    are removed, ``train.jsonl`` stays."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / CONFIG_FILE) as fh:
        fh.write(to_toml(config))
    common = model_manifest(method, config, training, **fields)
    model.save(out, name=name or out.name, extra={k: v for k, v in common.items() if k != "type"})
    saved = read_manifest(out, verify="none")
    kept = {k: v for k, v in saved.items() if k not in ("files", "format_version", "type")}
    write_manifest(out, {"type": method, "weights": saved["type"], **kept})
    write_card(out)
    shutil.rmtree(out / CHECKPOINT_DIR, ignore_errors=True)
    log.info("%s model written to %s", method, out)
    return out


def load_finetuned(model_dir: str | Path, method: str, *, name: str | None = None, verify: str = "cached"
                   ) -> TransformerEncoder:
    """The encoder of a model directory that :func:`save_finetuned` wrote for ``method``: the fine-tuned
    transformer (LoRA adapters merged into the backbone on load)."""
    directory = Path(model_dir)
    manifest = read_manifest(directory, verify="none")
    if manifest["type"] != method:
        raise ModelDirError(f"{directory}: type {manifest['type']!r}, expected {method!r}")
    weights = manifest.get("weights")
    if weights == LORA_TYPE:
        return LoraEncoder(directory, name=name, verify=verify)
    if weights == "transformer":
        return TransformerEncoder(directory, name=name, verify=verify)
    raise ModelDirError(f"{directory}: unknown fine-tuned weights {weights!r} (expected transformer or {LORA_TYPE})")
