"""Per-encoder mining thresholds for ``--threshold auto``: calibrated, stored, shipped and looked up.

Margin thresholds differ a lot between encoders (LASER ~1.04, LaBSE ~1.2), so xlsent calibrates one per
encoder on BUCC-style *dev* sets (gold pairs hidden among distractors, :func:`calibrate`): those of
:func:`xlsent.data.bucc.newstest_bucc_dev` (gold newstest2011, 2014 for ru), never the newstest2012 sets that
``xlsent eval bucc`` reports, so no reported number is tuned on its own test set. A record holds the
threshold and how and on what it was obtained (sets, k, margin, date, xlsent version); a set of fewer than
:data:`MIN_GOLD_PAIRS` gold pairs is logged and recorded as a ``warning``.

:func:`load_calibration` looks for the record of an encoder in one documented order, place by place:

1. its model directory's ``xlsent.json`` (field ``mining``, written by ``xlsent calibrate`` of that directory);
2. ``$XLSENT_HOME/calibration/`` (written by ``xlsent calibrate`` of any copy of the same weights);
3. the thresholds shipped with xlsent (``thresholds.json`` beside this module, written by ``xlsent calibrate
   --ship`` for the registered encoders).

The model directory comes first: a threshold calibrated into the cache for one copy of a model never overrides
the one recorded in the directory being loaded. Every record belongs to one encoder id (name@weights checksum):
a changed model never uses a threshold calibrated for another. Within each place, the record of the encoder's own
id comes before that of the same weights on fp32 (an encoder on a lossy backend, id ``...+openvino-bf16``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from xlsent.atomic import write_json
from xlsent.data.bucc import DEV_YEARS, BuccSet, newstest_bucc_dev
from xlsent.encoders.base import Encoder, FromModelDir
from xlsent.encoders.cache import cached_encode, encoder_id
from xlsent.encoders.model_dir import MANIFEST
from xlsent.inference import fp32_id
from xlsent.languages import named_among
from xlsent.mining.shipped import read_table, write_table
from xlsent.mining.threshold_search import score_set
from xlsent.paths import data_root, xlsent_home
from xlsent.training.model_card import write_card
from xlsent.version import __version__

SHIPPED = Path(__file__).with_name("thresholds.json")
"""The thresholds shipped with xlsent (package data), keyed by encoder id."""
SHIPPED_ABOUT = ("Mining thresholds of the registered encoders for `xlsent mine --threshold auto`, keyed by encoder id "
                 "(name@weights checksum). Written by `xlsent calibrate --model NAME --ship`; do not edit by hand.")
CALIBRATION_SETS = ("de", "fr", "ru")
"""Languages of the BUCC-style newstest dev sets (``LANG-en``) calibrated on by default."""
MIN_GOLD_PAIRS = 500
"""Fewest gold pairs of a dev set for a threshold worth trusting: the F1-optimal threshold of a few dozen pairs moves
with each pair (the newstest dev sets hold about 3,000 each). Fewer is logged and recorded as the record's
``warning``."""

log = logging.getLogger(__name__)


def dev_sets(langs: Sequence[str] = CALIBRATION_SETS, root: str | Path | None = None) -> list[BuccSet]:
    """The BUCC-style newstest dev sets of ``langs`` (:func:`xlsent.data.bucc.newstest_bucc_dev`; codes in any case
    or with a region), each checked to hold gold pairs: ValueError naming a set without any (it has no threshold)."""
    base = data_root(root)
    sets = [newstest_bucc_dev(named_among(lang, list(DEV_YEARS)), base) for lang in dict.fromkeys(langs)]
    for bucc in sets:
        if not bucc.gold:
            raise ValueError(f"{bucc.pair}: the BUCC-style dev set under {base} has no gold pairs ({bucc.description})"
                             ", so no threshold: give the newstest files with their lines (--data), or leave the set "
                             "out (--langs)")
    return sets


def calibrate(encoder: Encoder, *, langs: Sequence[str] = CALIBRATION_SETS, root: str | Path | None = None,
              k: int = 4, progress: bool = False, sets: Sequence[BuccSet] | None = None) -> dict[str, Any]:
    """A mining threshold for ``encoder``: the mean F1-optimal ratio-margin threshold over the BUCC-style newstest
    dev sets of ``langs`` (:func:`dev_sets`; ``sets``: those sets, made before), with how and on what it was
    obtained.

    Encodings go through the on-disk cache (:func:`xlsent.encoders.cache.cached_encode`, shared with
    ``xlsent eval bucc``), so a second calibration of the same encoder re-encodes nothing. ``progress`` shows one
    bar over the sets and the encoding of each side (on standard error).
    """
    sets = list(sets) if sets is not None else dev_sets(langs, root)
    per_set: dict[str, dict[str, Any]] = {}
    with tqdm(sets, desc="calibrate", unit="set", disable=not progress) as bar:
        for bucc in bar:
            bar.set_postfix_str(bucc.pair)
            scores = score_set(lambda sentences, code: cached_encode(encoder, sentences, code, progress=progress),
                               bucc, k=k)
            per_set[bucc.pair] = {**scores, "gold_pairs": len(bucc.gold), "description": bucc.description}
    thresholds = [s["threshold"] for s in per_set.values()]
    record = {"threshold": float(sum(thresholds) / len(thresholds)), "encoder": encoder_id(encoder),
              "margin": "ratio", "k": k, "mode": "max", "sets": list(per_set),
              "method": "mean of the F1-optimal thresholds on the BUCC-style newstest dev sets (xlsent.data.bucc."
                        "newstest_bucc_dev: gold newstest2011, 2014 for ru; not the newstest2012 test sets)",
              "per_set": per_set, "date": datetime.now(UTC).date().isoformat(), "xlsent_version": __version__}
    warning = few_gold_pairs({pair: s["gold_pairs"] for pair, s in per_set.items()})
    if warning:
        log.warning("%s", warning)
        record["warning"] = warning
    return record


def few_gold_pairs(gold_pairs: dict[str, int]) -> str:
    """A warning naming the sets of ``gold_pairs`` (set -> its number of gold pairs) below :data:`MIN_GOLD_PAIRS`,
    or ``""`` when there are none.

    >>> few_gold_pairs({"de-en": 2900, "fr-en": 40})
    'calibrated on too few gold pairs (fr-en: 40; at least 500 a set make a stable threshold): the threshold may be \
far from the best one; calibrate on the full newstest dev sets (--data)'
    """
    few = {pair: n for pair, n in gold_pairs.items() if n < MIN_GOLD_PAIRS}
    if not few:
        return ""
    listed = ", ".join(f"{pair}: {n}" for pair, n in few.items())
    return (f"calibrated on too few gold pairs ({listed}; at least {MIN_GOLD_PAIRS} a set make a stable threshold): "
            "the threshold may be far from the best one; calibrate on the full newstest dev sets (--data)")


def calibration_path(encoder: Encoder) -> Path:
    """Where the calibration of ``encoder`` lives in the cache."""
    return _cache_file(encoder_id(encoder))


def _cache_file(key: str) -> Path:
    """Where the calibration of the encoder id ``key`` lives in the cache."""
    safe = re.sub(r"[^A-Za-z0-9._@-]+", "_", key)
    return xlsent_home() / "calibration" / f"{safe}.json"


def save_threshold(encoder: Encoder, record: dict[str, Any]) -> Path:
    """Store a calibration record (``threshold`` plus how it was obtained) in the cache, and in the encoder's
    model directory when it has one."""
    path = calibration_path(encoder)
    write_json(path, record)
    manifest_path = _manifest_path(encoder)
    if manifest_path is not None:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        manifest["mining"] = record
        write_json(manifest_path, manifest)
        write_card(manifest_path.parent)
    return path


def shipped_records(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The shipped calibration records (``path``: the shipped file), by encoder id; none if the file is absent."""
    return read_table(path or SHIPPED, "thresholds")


def ship_threshold(encoder: Encoder, record: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``record`` into the shipped thresholds (``path``: the shipped file) as that of ``encoder``, a
    registered encoder, replacing the records of its other versions (other weights checksums)."""
    from xlsent.encoders.registry import REGISTERED

    if encoder.name not in REGISTERED:
        raise ValueError(f"--ship stores thresholds of the registered encoders ({', '.join(REGISTERED)}) only; "
                         f"{encoder.name!r} is not one (without --ship its threshold is saved for your own use)")
    key = encoder_id(encoder)
    if record.get("encoder") != key:
        raise ValueError(f"the record was calibrated for {record.get('encoder')!r}, not for {key!r}")
    path = path or SHIPPED
    records = {other: r for other, r in shipped_records(path).items() if other.partition("@")[0] != encoder.name}
    records[key] = record
    write_table(path, SHIPPED_ABOUT, "thresholds", records)
    return path


Found = tuple[dict[str, Any], str]
"""A calibration record and where it was found."""


def load_calibration(encoder: Encoder) -> Found:
    """The calibration record of ``encoder`` and where it was found: the first of its model directory, the user's
    cache, the thresholds shipped with xlsent (the order of the module's docstring: the model directory first).

    A record made for another encoder id is never used, except that an encoder on a lossy backend (id
    ``...+openvino-bf16``) falls back, within each place, to the record of the same weights on fp32 (its id
    without the suffix; logged) when the place has none of its own.
    ``FileNotFoundError`` naming the places looked in, and the command that calibrates, when there is none."""
    key = encoder_id(encoder)
    keys = list(dict.fromkeys([key, fp32_id(key)]))
    for k, found in _records(encoder, keys):
        if k != key:
            log.info("%s has no threshold of its own in %s; using the one calibrated for the same weights on fp32 "
                     "(%s)", key, found[1], k)
        return found
    manifest_path, shipped = _manifest_path(encoder), shipped_records()
    looked = [str(p) for p in (manifest_path, *(_cache_file(k) for k in keys)) if p is not None]
    raise FileNotFoundError(
        f"no calibrated threshold for {key} (looked in {', '.join(looked)} and the thresholds shipped with xlsent "
        f"{__version__}, which cover {', '.join(sorted(shipped)) or 'no encoder'}); run `xlsent calibrate --model "
        f"{_reference(encoder)}` (slow on CPU: it encodes three BUCC-style sets) or pass --threshold VALUE")


def _records(encoder: Encoder, keys: list[str]) -> Iterator[tuple[str, Found]]:
    """Every record of ``encoder`` for one of ``keys`` (its id first), with the key it was made for, in lookup order:
    place by place (model directory, cache, shipped), and within a place key by key."""
    manifest_path = _manifest_path(encoder)
    if manifest_path is not None:
        record = json.loads(manifest_path.read_text(encoding="utf-8")).get("mining")
        made_for = None if record is None else record.get("encoder", keys[0])
        if made_for in keys:
            yield made_for, (record, str(manifest_path))
        elif record is not None:
            log.warning("%s: its mining threshold was calibrated for %s, not %s; ignored", manifest_path, made_for,
                        keys[0])
    for k in keys:
        path = _cache_file(k)
        if path.is_file():
            yield k, (json.loads(path.read_text(encoding="utf-8")), str(path))
    shipped = shipped_records()
    for k in keys:
        if k in shipped:
            yield k, (shipped[k], f"the thresholds shipped with xlsent {__version__}")


def load_threshold(encoder: Encoder) -> float:
    """The calibrated margin threshold of ``encoder`` (see :func:`load_calibration`)."""
    return float(load_calibration(encoder)[0]["threshold"])


def _manifest_path(encoder: Encoder) -> Path | None:
    """The ``xlsent.json`` of the encoder's model directory, if it has one."""
    model_dir = encoder.model_dir if isinstance(encoder, FromModelDir) else None
    path = None if model_dir is None else Path(model_dir) / MANIFEST
    return path if path is not None and path.is_file() else None


def _reference(encoder: Encoder) -> str:
    """How ``--model`` names ``encoder``: its registered name or model directory, else its name."""
    from xlsent.encoders.registry import encoder_reference

    try:
        return encoder_reference(encoder)
    except ValueError:
        return encoder.name
