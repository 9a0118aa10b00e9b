"""Model directories: ``xlsent.json`` manifest + safetensors + tokenizer files.

The manifest records the model type, format version, backbone, hyper-parameters, training summary,
metrics and the size and SHA-256 of every file, so a corrupt, partial or edited directory is an error
with a fix. Loading checks every listed file against its checksum: small files on every load, big ones
(the weights) whenever their size, modification or change time differs from the last check, remembered in
a JSON checksum cache (``$XLSENT_HOME/checksums.json``; an unreadable cache is ignored and rewritten).

What is verified: the weights, configuration and tokenizer files, i.e. every file of the directory but the
manifest, hidden files and training logs (``*.jsonl``, e.g. ``train.jsonl``): logs are records of the run, not
part of the model, so they are not listed and a model whose log was deleted still loads. The model directory
loader (:func:`xlsent.encoders.registry.load_encoder`) verifies every model type this way before its encoder
reads a byte.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from pathlib import Path
from typing import Any

from xlsent.atomic import write_json
from xlsent.checksum import sha256_file
from xlsent.paths import xlsent_home

log = logging.getLogger(__name__)

MANIFEST = "xlsent.json"
FORMAT_VERSION = 1
VERIFY = ("none", "size", "cached", "sha256")
"""Checks of :func:`read_manifest`: nothing; sizes; checksums (big files through the cache); every checksum now."""
BIG_FILE_BYTES = 64 << 20
"""Files at least this large are checksummed once per change (``cached``); smaller ones on every load."""
CACHE_FILE = "checksums.json"
CACHE_VERSION = 1
LOG_SUFFIX = ".jsonl"
"""Files with this suffix are training logs: neither listed nor verified."""
BROKEN_WEIGHTS = ("the weights are broken (NaN or infinite values?), so the model is not used; bring an intact "
                  "copy")
"""The end of the error for a model whose weights, or its check vector, are not finite."""
INDEX_TYPE = "sentence-index"
"""The manifest ``type`` of a sentence index folder (``xlsent index``), which shares the manifest's name with a model
directory but is not one."""


class ModelDirError(ValueError):
    """A model directory is missing, incomplete or corrupt."""


def is_log(name: str) -> bool:
    """Whether the file ``name`` of a model directory is a training log (not part of the model)."""
    return name.endswith(LOG_SUFFIX)


def write_manifest(directory: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Add file sizes and checksums for every file in ``directory`` (logs and hidden files aside) and write
    ``xlsent.json``."""
    files = {
        p.name: {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
        for p in sorted(directory.iterdir())
        if p.is_file() and p.name != MANIFEST and not p.name.startswith(".") and not is_log(p.name)
    }
    full = {"format_version": FORMAT_VERSION, **manifest, "files": files}
    write_json(directory / MANIFEST, full)
    return full


def checksum_cache_path() -> Path:
    """The JSON file remembering the checksums of big files: ``$XLSENT_HOME/checksums.json``."""
    return xlsent_home() / CACHE_FILE


def _stamp(st: os.stat_result) -> dict[str, int]:
    return {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}


def _read_cache(cache: Path) -> dict[str, dict[str, Any]]:
    try:
        raw = json.loads(cache.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable checksum cache %s (%s)", cache, exc)
        return {}
    files = raw.get("files") if isinstance(raw, dict) and raw.get("version") == CACHE_VERSION else None
    return {k: v for k, v in files.items() if isinstance(v, dict)} if isinstance(files, dict) else {}


def cached_sha256(path: str | Path, cache: Path | None = None) -> str:
    """SHA-256 of ``path``, hashed only when its size, ``mtime_ns`` or ``ctime_ns`` differ from the cached entry.

    Entries are keyed by absolute path; a stale one is re-hashed and replaced, and entries of files that no
    longer exist are dropped. A file that changes while being hashed is not cached.
    """
    path = Path(path).absolute()
    cache = cache or checksum_cache_path()
    entries = _read_cache(cache)
    before = _stamp(path.stat())
    entry = entries.get(str(path))
    if entry is not None and {k: entry.get(k) for k in before} == before and isinstance(entry.get("sha256"), str):
        return str(entry["sha256"])
    digest = sha256_file(path)
    if _stamp(path.stat()) == before:
        entries = {k: v for k, v in _read_cache(cache).items() if Path(k).exists()}
        entries[str(path)] = {**before, "sha256": digest}
        try:
            write_json(cache, {"version": CACHE_VERSION, "files": entries})
        except OSError as exc:
            log.warning("cannot write checksum cache %s (%s); big files will be hashed on every load", cache, exc)
    return digest


def _verify_file(f: Path, info: dict[str, Any], verify: str) -> None:
    if not f.is_file():
        raise ModelDirError(f"{f.parent}: file {f.name} listed in {MANIFEST} is missing")
    size = f.stat().st_size
    if size != info.get("bytes"):
        raise ModelDirError(f"{f}: size {size} != {info.get('bytes')} recorded in {MANIFEST} (corrupt or partial)")
    if verify == "size":
        return
    digest = cached_sha256(f) if verify == "cached" and size >= BIG_FILE_BYTES else sha256_file(f)
    if digest != info.get("sha256"):
        raise ModelDirError(f"{f}: checksum differs from {MANIFEST} (corrupt or edited); restore the file or write "
                            "the model again (the default model: `xlsent models --prepare --force`)")


def read_manifest(directory: str | Path, *, verify: str = "cached") -> dict[str, Any]:
    """Read ``xlsent.json`` and check the files it lists (logs listed by older versions aside); ``verify`` is one
    of :data:`VERIFY`."""
    if verify not in VERIFY:
        raise ValueError(f"verify must be one of {', '.join(VERIFY)}, not {verify!r}")
    directory = Path(directory)
    path = directory / MANIFEST
    if not path.is_file():
        raise ModelDirError(f"{directory}: not an xlsent model directory (no {MANIFEST})")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelDirError(f"{path}: unreadable manifest ({exc})") from exc
    if not isinstance(manifest, dict) or "type" not in manifest:
        raise ModelDirError(f"{path}: manifest has no 'type' field")
    if manifest["type"] == INDEX_TYPE:
        raise ModelDirError(f"{directory}: is a sentence index (made by `xlsent index`), not a model; query it with "
                            f"`xlsent search {directory} ...`, and name the model it was built with "
                            f"({manifest.get('model')}) where a model is asked for")
    if manifest.get("format_version", 0) > FORMAT_VERSION:
        raise ModelDirError(f"{path}: format version {manifest['format_version']} is newer than this xlsent")
    files = manifest.get("files", {})
    if not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
        raise ModelDirError(f"{path}: 'files' must map file names to their bytes and sha256")
    check_mining_record(path, manifest.get("mining"))
    if verify != "none":
        for name, info in files.items():
            if not is_log(name):
                _verify_file(directory / name, info, verify)
    return manifest


def check_mining_record(path: Path, record: Any) -> None:
    """Raise :class:`ModelDirError` naming ``path`` and the field unless ``record``, the ``mining`` field of a manifest,
    is absent (None) or a calibration record: an object with a finite number ``threshold`` and a string ``encoder``.

    >>> check_mining_record(Path("m/xlsent.json"), {"threshold": "high", "encoder": "m@1"})
    Traceback (most recent call last):
    ...
    xlsent.encoders.model_dir.ModelDirError: m/xlsent.json: field 'mining' is not a calibration record ('threshold' \
is 'high', not a finite number); remove the field, then `xlsent calibrate --model m` records a new one
    """
    if record is None:
        return
    if not isinstance(record, dict):
        problem = f"a {type(record).__name__}, not an object"
    elif not isinstance(record.get("encoder", ""), str):
        problem = f"'encoder' is {record['encoder']!r}, not an encoder id"
    else:
        threshold = record.get("threshold")
        finite = isinstance(threshold, int | float) and not isinstance(threshold, bool) and math.isfinite(threshold)
        problem = "" if finite else f"'threshold' is {threshold!r}, not a finite number"
    if problem:
        raise ModelDirError(f"{path}: field 'mining' is not a calibration record ({problem}); remove the field, then "
                            f"`xlsent calibrate --model {path.parent}` records a new one")


def require_listed(manifest: dict[str, Any], directory: Path, names: tuple[str, ...]) -> None:
    """Raise :class:`ModelDirError` unless every file in ``names`` is listed (so verified) in the manifest."""
    missing = [n for n in names if n not in manifest.get("files", {})]
    if missing:
        raise ModelDirError(f"{directory / MANIFEST}: does not list {', '.join(missing)}, so "
                            f"{'they' if len(missing) > 1 else 'it'} cannot be verified; write the model again")


def model_checksum(manifest: dict[str, Any]) -> str:
    """A short id of a model's weights, taken from the manifest's file checksums."""
    digest = hashlib.sha256(json.dumps(manifest.get("files", {}), sort_keys=True).encode()).hexdigest()
    return digest[:16]
