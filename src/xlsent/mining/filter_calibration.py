"""The score cut of ``xlsent filter --threshold auto``: calibrated for filtering, stored, shipped and looked up.

The mining threshold (:mod:`xlsent.mining.calibration`) is calibrated for choosing pairs among nearest-neighbour
candidates; given pairs of a noisy bitext score lower, and on the dev bitexts the mining threshold drops many clean
pairs (``docs/filter.md``). So the filter has its own cut per encoder: the mean over the dev pairs of the
F1-optimal margin cut among the pairs that pass the rule filters, on the *tune* split of
:mod:`xlsent.data.noisy_bitext` (the evaluation reports the *test* split). :func:`filter_threshold` looks for an
encoder's record in ``$XLSENT_HOME/calibration/filter/`` (``xlsent calibrate --for filter``), then among the cuts
shipped with xlsent (``filter_thresholds.json`` beside this module, ``--ship``); without one, ``--threshold auto``
takes the mining threshold, with a warning.

A record also holds ``cosine_threshold``, the cut calibrated the same way on the cosines of the same pairs: the cut
of a run whose scores are cosines (``--margin absolute``, or a side with fewer than k sentences, where no margin can
be computed). A cut is never applied to scores of another scale (:meth:`~xlsent.mining.auto_threshold.AutoThreshold.
cut_for`): without a cosine cut such a run is refused, naming what to do.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.atomic import write_json
from xlsent.data.noisy_bitext import DEV_PAIRS, build_noisy_bitext
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import cached_encode, encoder_id
from xlsent.inference import fp32_id
from xlsent.mining.auto_threshold import AutoThreshold, calibrated_record
from xlsent.mining.config import SearchConfig
from xlsent.mining.filter_config import FilterConfig
from xlsent.mining.filtering import decide, pair_values
from xlsent.mining.job import score_texts
from xlsent.mining.shipped import read_table, write_table
from xlsent.mining.threshold_search import best_threshold
from xlsent.paths import xlsent_home
from xlsent.version import __version__

log = logging.getLogger(__name__)

SHIPPED = Path(__file__).with_name("filter_thresholds.json")
"""The filter cuts shipped with xlsent (package data), keyed by encoder id."""
SHIPPED_ABOUT = ("Score cuts of `xlsent filter --threshold auto`, keyed by encoder id (name@weights checksum): the "
                 "mean F1-optimal margin cut on the tune split of the noisy dev bitexts (xlsent.data.noisy_bitext). "
                 "Written by `xlsent calibrate --for filter --ship`; do not edit by hand.")


def calibrate_filter(encoder: Encoder, *, pairs: Sequence[str] = DEV_PAIRS, root: str | Path | None = None,
                     config: FilterConfig | None = None, progress: bool = False) -> dict[str, Any]:
    """The filter cut of ``encoder``: for each dev pair's tune split, the F1-optimal cut (clean pairs positive) on
    the margin scores of the pairs that ``config``'s rule filters pass; their mean, with how it was obtained. The same
    on the cosines of those pairs gives ``cosine_threshold``, the cut of runs whose scores are cosines."""
    cfg, search = config or FilterConfig(), SearchConfig()
    per_pair: dict[str, dict[str, float]] = {}
    for pair in pairs:
        bitext = build_noisy_bitext(pair, root, split="tune")
        src_lang, tgt_lang = pair.split("-")
        scored = score_texts(bitext.src, bitext.tgt, cached_encode(encoder, bitext.src, src_lang, progress=progress),
                             cached_encode(encoder, bitext.tgt, tgt_lang, progress=progress), search)
        passed = np.array(decide(pair_values(bitext.src, bitext.tgt, (src_lang, tgt_lang), cfg), scored.score, cfg,
                                 threshold=None).reason) == ""
        clean = np.array(bitext.kind) == "clean"
        best = best_threshold(scored.score[passed], clean[passed], int(clean.sum()))
        cosine = best_threshold(scored.cosine[passed], clean[passed], int(clean.sum()))
        per_pair[pair] = {"threshold": best.threshold, "f1": best.f1, "precision": best.precision,
                          "recall": best.recall, "cosine_threshold": cosine.threshold, "cosine_f1": cosine.f1}
    return {"threshold": float(np.mean([p["threshold"] for p in per_pair.values()])),
            "cosine_threshold": float(np.mean([p["cosine_threshold"] for p in per_pair.values()])),
            "encoder": encoder_id(encoder), "margin": search.margin, "k": search.k, "sets": list(per_pair),
            "per_pair": per_pair,
            "method": "mean of the F1-optimal margin cuts (cosine_threshold: cosine cuts), among the pairs the default "
                      "rule filters pass, on the tune split of the noisy dev bitexts (xlsent.data.noisy_bitext)",
            "date": datetime.now(UTC).date().isoformat(), "xlsent_version": __version__}


def _cache_file(key: str) -> Path:
    """Where the filter cut of the encoder id ``key`` lives in the cache."""
    return xlsent_home() / "calibration" / "filter" / f"{re.sub(r'[^A-Za-z0-9._@-]+', '_', key)}.json"


def save_filter_threshold(record: dict[str, Any], *, ship: bool = False, path: Path | None = None) -> Path:
    """Store ``record`` in the cache, or with ``ship`` in the shipped cuts (``path``: the shipped file), replacing
    the record of the same encoder's other versions."""
    key = str(record["encoder"])
    if not ship:
        write_json(_cache_file(key), record)
        return _cache_file(key)
    path = path or SHIPPED
    name = key.partition("@")[0]
    records = {other: r for other, r in read_table(path, "thresholds").items() if other.partition("@")[0] != name}
    write_table(path, SHIPPED_ABOUT, "thresholds", {**records, key: record})
    return path


def filter_threshold(encoder: Encoder, path: Path | None = None) -> tuple[dict[str, Any], str] | None:
    """The filter cut record of ``encoder`` and where it was found (the cache, then the shipped cuts at ``path``),
    or None; an encoder on a lossy backend (id ``...+openvino-bf16``) without a record of its own takes that of the
    same weights on fp32, as the mining threshold does."""
    key = encoder_id(encoder)
    shipped = read_table(path or SHIPPED, "thresholds")
    for k in dict.fromkeys([key, fp32_id(key)]):
        cached = _cache_file(k)
        if cached.is_file():
            return json.loads(cached.read_text(encoding="utf-8")), str(cached)
        if k in shipped:
            return shipped[k], f"the filter cuts shipped with xlsent {__version__}"
    return None


def auto_filter_threshold(encoder: Encoder, *, margin: str, k: int) -> AutoThreshold:
    """The cut of ``--threshold auto``: ``encoder``'s filter cut (:func:`filter_threshold`), else its mining
    threshold (:func:`~xlsent.mining.auto_threshold.calibrated_record`) with a warning that it drops more clean pairs;
    the cut for the scores a run computes is :meth:`~xlsent.mining.auto_threshold.AutoThreshold.cut_for`'s."""
    found = filter_threshold(encoder)
    if found is None:
        log.warning("%s has no filter cut (xlsent calibrate --for filter): --threshold auto takes its mining "
                    "threshold, which drops more clean pairs", encoder_id(encoder))
        return calibrated_record(encoder)
    record, where = found
    if (record.get("margin"), record.get("k")) != (margin, k) and margin == record.get("margin"):
        log.warning("--threshold auto: the filter cut was calibrated with margin=%s, k=%s; this run uses margin=%s, "
                    "k=%d", record.get("margin"), record.get("k"), margin, k)
    return AutoThreshold(float(record["threshold"]), record, where)
