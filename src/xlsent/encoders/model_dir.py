"""Model directories: ``xlsent.json`` manifest + safetensors + tokenizer files.

The manifest records the model type, format version, backbone, hyper-parameters, training summary,
metrics and the size and SHA-256 of every file, so a corrupt or partial directory is an error with a fix.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from xlsent.atomic import write_json
from xlsent.checksum import sha256_file

MANIFEST = "xlsent.json"
FORMAT_VERSION = 1


class ModelDirError(ValueError):
    """A model directory is missing, incomplete or corrupt."""


def write_manifest(directory: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Add file sizes and checksums for every file in ``directory`` and write ``xlsent.json``."""
    files = {
        p.name: {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
        for p in sorted(directory.iterdir())
        if p.is_file() and p.name != MANIFEST and not p.name.startswith(".")
    }
    full = {"format_version": FORMAT_VERSION, **manifest, "files": files}
    write_json(directory / MANIFEST, full)
    return full


def read_manifest(directory: str | Path, *, verify: str = "size") -> dict[str, Any]:
    """Read and check ``xlsent.json``; ``verify`` is ``"none"``, ``"size"`` or ``"sha256"``."""
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
    if manifest.get("format_version", 0) > FORMAT_VERSION:
        raise ModelDirError(f"{path}: format version {manifest['format_version']} is newer than this xlsent")
    if verify != "none":
        for name, info in manifest.get("files", {}).items():
            f = directory / name
            if not f.is_file():
                raise ModelDirError(f"{directory}: file {name} listed in {MANIFEST} is missing")
            if f.stat().st_size != info["bytes"]:
                raise ModelDirError(
                    f"{f}: size {f.stat().st_size} != {info['bytes']} recorded in {MANIFEST} (corrupt or partial)"
                )
            if verify == "sha256" and sha256_file(f) != info["sha256"]:
                raise ModelDirError(f"{f}: checksum differs from {MANIFEST} (corrupt)")
    return manifest


def model_checksum(manifest: dict[str, Any]) -> str:
    """A short id of a model's weights, taken from the manifest's file checksums."""
    digest = hashlib.sha256(json.dumps(manifest.get("files", {}), sort_keys=True).encode()).hexdigest()
    return digest[:16]
