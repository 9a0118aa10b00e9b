"""The trained student a ``--bitext`` run starts from (``bitext_start``): its LoRA adapters, checked against the run's
backbone and adapter shape, so that the user's language is added to what the shipped student already knows."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file

from xlsent.encoders.lora import ADAPTER_FILE, LORA_TYPE
from xlsent.encoders.model_dir import ModelDirError, model_checksum, read_manifest
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StartAdapters:
    """A saved student's adapter tensors, the factor that carries its ``alpha`` over to the run's, and its id."""

    tensors: dict[str, torch.Tensor]
    factor: float
    id: str

    def load_into(self, learner: TrainableTransformer) -> None:
        """Give ``learner`` (LoRA applied) the saved student's weights."""
        learner.load_adapters(self.tensors, factor=self.factor)
        log.info("--bitext: the run starts from %s (bitext_start)", self.id)


def start_directory(ref: str | Path) -> Path:
    """``ref`` as a directory, or a :class:`~xlsent.encoders.model_dir.ModelDirError` that says how to give one
    (checked before any model is loaded)."""
    directory = Path(ref)
    if not directory.is_dir():
        raise ModelDirError(f"bitext_start {str(ref)!r}: no such model directory (run from the folder that holds it, "
                            "give its path with --set bitext_start=PATH, or --set bitext_start='' to train the "
                            "user's student from the backbone)")
    return directory


def start_adapters(ref: str | Path, backbone: TransformerEncoder, *, r: int, alpha: float,
                   target_modules: list[str] | None = None) -> StartAdapters:
    """The adapters of the distilled student in directory ``ref``, which must be LoRA adapters of rank ``r`` over
    ``backbone`` (same id); its effective ``alpha`` (a scaled-back student's included) becomes a factor on ``lora_B``
    against the run's ``alpha``. Anything else is a :class:`~xlsent.encoders.model_dir.ModelDirError` naming the fix.

    >>> start_adapters("no/such/dir", None, r=16, alpha=32)  # type: ignore[arg-type]  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    xlsent.encoders.model_dir.ModelDirError: bitext_start 'no/such/dir': no such model directory (run from ...
    """
    directory = start_directory(ref)
    manifest = read_manifest(directory, verify="cached")
    lora = manifest.get("lora") or {}
    problems = []
    if manifest.get("type") != "distill" or manifest.get("weights") != LORA_TYPE:
        problems.append(f"type {manifest.get('type')!r} with weights {manifest.get('weights')!r}, not a distill "
                        f"student of {LORA_TYPE} weights")
    if (manifest.get("backbone") or {}).get("id") != backbone.id:
        problems.append(f"backbone {(manifest.get('backbone') or {}).get('id')}, the run's is {backbone.id}")
    if lora.get("r") != r or (target_modules is not None and lora.get("target_modules") != target_modules):
        problems.append(f"LoRA rank {lora.get('r')} on {lora.get('target_modules')}, the run's {r} on "
                        f"{target_modules}")
    if problems:
        raise ModelDirError(f"bitext_start {directory}: " + "; ".join(problems) + " (set lora_r and backbone to "
                            "the student's, or bitext_start = '' to train from the backbone)")
    path = directory / ADAPTER_FILE
    try:
        tensors = load_file(str(path))
    except Exception as exc:  # safetensors raises several types for a missing or corrupt file
        raise ModelDirError(f"{path}: cannot be read ({exc})") from exc
    return StartAdapters(tensors, float(lora["alpha"]) / alpha,
                         f"{manifest.get('name', directory.name)}@{model_checksum(manifest)}")
