"""Tables shipped with xlsent as package data beside this module (``thresholds.json``, ``index_recall.json``): a
JSON object with an ``about`` text and one table of records by key, written by the maintainers' tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xlsent.atomic import write_json


def read_table(path: Path, table: str) -> dict[str, dict[str, Any]]:
    """The records of ``table`` in the shipped file ``path``, by key; none if the file is absent."""
    if not path.is_file():
        return {}
    records: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))[table]
    return records


def write_table(path: Path, about: str, table: str, records: dict[str, dict[str, Any]]) -> None:
    """Write ``records`` as the ``table`` of the shipped file ``path``, sorted by key, after ``about``; atomically."""
    write_json(path, {"about": about, table: dict(sorted(records.items()))})
