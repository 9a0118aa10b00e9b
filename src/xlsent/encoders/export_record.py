"""The record of an exported backend graph (``$XLSENT_HOME/backends/<model checksum>/<backend>/``): the size and
SHA-256 of each of its files, written when the export is built and checked, like a model directory, before it is
used.

A cached export is data on disk that anything may have edited or cut short (a full disk, a copy interrupted, bytes
flipped): run as it is, it gives zero vectors under the genuine encoder id, or a runtime's traceback. So
:func:`export_problem` compares every file with the record: sizes on every load, checksums through the checksum
cache of :func:`xlsent.encoders.model_dir.cached_sha256` (a file is hashed again only when its size, modification
or change time differ from its last check). An export without a record (built by an older xlsent) is not trusted
either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xlsent.atomic import write_json
from xlsent.checksum import sha256_file
from xlsent.encoders.model_dir import cached_sha256

RECORD = "export.json"
"""The record's file name, inside the export folder."""
RECORD_VERSION = 1


def _files(folder: Path) -> list[Path]:
    """The files of the export in ``folder`` (its record aside), sorted."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != RECORD)


def record_export(folder: Path) -> None:
    """Write the record of the export in ``folder``: each file's size and SHA-256, by its path in the folder."""
    files = {p.relative_to(folder).as_posix(): {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
             for p in _files(folder)}
    write_json(folder / RECORD, {"version": RECORD_VERSION, "files": files})


def _read_record(folder: Path) -> dict[str, Any] | None:
    """The files listed by the record of ``folder``, or None when it has no readable record."""
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = record.get("files") if isinstance(record, dict) and record.get("version") == RECORD_VERSION else None
    if not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
        return None
    return files


def export_problem(folder: Path) -> str:
    """What makes the export in ``folder`` untrustworthy, in a few words, or ``""`` when every file is the one its
    record lists: no readable record, a listed file missing or of another size or checksum, a file not listed."""
    listed = _read_record(folder)
    if listed is None:
        return f"no readable {RECORD} (the size and checksum of each file), so it cannot be verified"
    present = {p.relative_to(folder).as_posix(): p for p in _files(folder)}
    unlisted = sorted(set(present) - set(listed))
    if unlisted:
        return f"{unlisted[0]} is not listed in {RECORD}"
    for name, info in listed.items():
        path = present.get(name)
        if path is None:
            return f"{name} is missing"
        size = path.stat().st_size
        if size != info.get("bytes"):
            return f"{name} has {size} bytes, not the {info.get('bytes')} of {RECORD} (truncated or partial)"
        if cached_sha256(path) != info.get("sha256"):
            return f"{name}: checksum differs from {RECORD} (corrupt or edited)"
    return ""
