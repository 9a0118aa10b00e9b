"""The training steps every mapping method shares around its own fit: embed the training data (cached), call the
method's fit, write the model directory (:func:`train_mapping_on`), and the method's ``train`` for
``xlsent train`` (:func:`mapping_train`)."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.registry import load_encoder
from xlsent.methods.mapping.config import MappingConfig
from xlsent.methods.mapping.data import PairData, build_pair_data, data_meta, data_summary
from xlsent.methods.mapping.encoder import write_mapped_model
from xlsent.methods.mapping.inputs import PairVectors, fit_input_encoder, pair_vectors
from xlsent.training.method import TrainFn, begin_training, checked_train
from xlsent.training.record import TrainingRecord, ValidationRecord
from xlsent.training.run_folder import CHECKPOINT_DIR

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FittedMapping:
    """What a mapping method's fit leaves for its model directory: the weights (tensors and file name), the
    manifest's ``mapping`` block, and its validation and final losses where it trains step by step."""

    weights: dict[str, torch.Tensor]
    weights_file: str
    mapping: dict[str, Any]
    validation: ValidationRecord | None = None
    final: dict[str, Any] | None = None


FitMapping = Callable[[Sequence[PairVectors], Path, dict[str, Any]], FittedMapping]
"""``fit(vectors, out, meta)``: the input vectors of every pair, the output folder (for checkpoints) and what
identifies the run (backbone, inputs and data ids: a resumed run must match them)."""


def train_mapping_on(method: str, config: MappingConfig, data: Sequence[PairData], backbone: Encoder,
                     out_dir: str | Path, fit: FitMapping, *, resume: bool = False, progress: bool = True) -> Path:
    """Embed the training data (cached), ``fit`` on it, write the model directory of type ``method`` (checkpoints
    removed once it is written); with ``resume``, a finished ``out_dir`` is returned as it is."""
    run = begin_training(out_dir, resume, config)
    if run is None:
        return Path(out_dir)
    out = run.out
    inputs, idf = fit_input_encoder(backbone, config.inputs, data)
    meta = {"backbone": encoder_id(backbone), "inputs": encoder_id(inputs), "data": data_meta(data)}
    fitted = fit(pair_vectors(inputs, data, progress), out, meta)
    training = TrainingRecord(data_summary(data), run.seconds(), validation=fitted.validation, final=fitted.final,
                              details={"data_keys": meta["data"], "inputs": meta["inputs"]})
    write_mapped_model(out, config, backbone, idf, fitted.weights, fitted.weights_file, method=method,
                       mapping=fitted.mapping, training=training)
    shutil.rmtree(out / CHECKPOINT_DIR, ignore_errors=True)
    log.info("%s model written to %s", method, out)
    return out


def mapping_train(config_class: type[MappingConfig], train_on: Callable[..., Path]) -> TrainFn:
    """The ``train`` of a mapping method (``xlsent train``): ``train_on(config, data, backbone, out, resume=...,
    progress=...)`` on the pairs of the config and its backbone."""

    def train(config: MappingConfig, out: Path, *, resume: bool = False, data: str | Path | None = None,
              progress: bool = True) -> Path:
        """``xlsent train``: build the pair data, load the backbone, fit, write the model directory."""
        return train_on(config, build_pair_data(config, data), load_encoder(config.backbone), out, resume=resume,
                        progress=progress)

    return checked_train(config_class, train)
