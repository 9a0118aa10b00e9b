"""Per-encoder mining thresholds for ``--threshold auto``.

Margin thresholds differ a lot between encoders (LASER ~1.04, LaBSE ~1.2), so xlsent calibrates one per
encoder on BUCC-style sets (gold pairs hidden among distractors) and stores it: in the model directory's
``xlsent.json`` when the encoder has one, and in ``$XLSENT_HOME/calibration/`` in any case.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from xlsent.atomic import write_json
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.model_dir import MANIFEST
from xlsent.paths import xlsent_home


def calibration_path(encoder: Encoder) -> Path:
    """Where the calibration of ``encoder`` lives in the cache."""
    safe = re.sub(r"[^A-Za-z0-9._@-]+", "_", encoder_id(encoder))
    return xlsent_home() / "calibration" / f"{safe}.json"


def save_threshold(encoder: Encoder, record: dict[str, Any]) -> Path:
    """Store a calibration record (``threshold`` plus how it was obtained)."""
    path = calibration_path(encoder)
    write_json(path, record)
    model_dir = getattr(encoder, "model_dir", None)
    if model_dir is not None and (Path(model_dir) / MANIFEST).is_file():
        manifest_path = Path(model_dir) / MANIFEST
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        manifest["mining"] = record
        write_json(manifest_path, manifest)
    return path


def load_threshold(encoder: Encoder) -> float:
    """The calibrated margin threshold of ``encoder``; a clear error when there is none."""
    model_dir = getattr(encoder, "model_dir", None)
    if model_dir is not None and (Path(model_dir) / MANIFEST).is_file():
        manifest = json.loads((Path(model_dir) / MANIFEST).read_text(encoding="utf-8"))
        if "mining" in manifest:
            return float(manifest["mining"]["threshold"])
    path = calibration_path(encoder)
    if not path.is_file():
        raise FileNotFoundError(f"no calibrated threshold for {encoder_id(encoder)}; run "
                                f"`xlsent calibrate --model {encoder.name}` or pass --threshold VALUE")
    return float(json.loads(path.read_text(encoding="utf-8"))["threshold"])
