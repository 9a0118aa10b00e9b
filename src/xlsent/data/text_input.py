"""Streaming readers for the inputs of ``xlsent embed`` / ``xlsent mine``: txt, TSV, JSONL, Parquet.

Each reader yields one string per input row, in order, so row i of any output matches row i of the
input. Invalid UTF-8 and malformed rows raise :class:`InputError` naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FORMATS = ("txt", "tsv", "jsonl", "parquet")


class InputError(ValueError):
    """An input file cannot be read as asked; the message names the file, the line and a fix."""


@dataclass(frozen=True)
class InputSpec:
    """What to read: a path, its format, and the column (TSV index or name, Parquet name) or JSON field."""

    path: Path
    format: str = "auto"
    column: str | None = None
    field: str | None = None

    def resolved_format(self) -> str:
        if self.format != "auto":
            if self.format not in FORMATS:
                raise InputError(f"unknown input format {self.format!r}; use one of {', '.join(FORMATS)}")
            return self.format
        suffix = self.path.suffix.lower().lstrip(".")
        return {"tsv": "tsv", "jsonl": "jsonl", "json": "jsonl", "parquet": "parquet"}.get(suffix, "txt")


def _decode(raw: bytes, path: Path, line_no: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}:{line_no}: invalid UTF-8 at byte {exc.start} of the line; convert the file "
            f"(e.g. `iconv -f latin1 -t utf-8`) or clean that line"
        ) from exc


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with open(path, "rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            yield line_no, _decode(raw.rstrip(b"\n").rstrip(b"\r"), path, line_no)


def _tsv_rows(spec: InputSpec) -> Iterator[str]:
    column = spec.column if spec.column is not None else "0"
    lines = _lines(spec.path)
    if column.isdigit():
        index = int(column)
    else:
        try:
            _, header = next(lines)
        except StopIteration:
            return
        names = header.split("\t")
        if column not in names:
            raise InputError(f"{spec.path}:1: no column named {column!r} in header {names}")
        index = names.index(column)
    for line_no, line in lines:
        cells = line.split("\t")
        if index >= len(cells):
            raise InputError(f"{spec.path}:{line_no}: {len(cells)} column(s), need column {index} (0-based)")
        yield cells[index]


def _jsonl_rows(spec: InputSpec) -> Iterator[str]:
    field = spec.field or "text"
    for line_no, line in _lines(spec.path):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{spec.path}:{line_no}: not valid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or field not in obj:
            raise InputError(f"{spec.path}:{line_no}: no field {field!r}; choose it with --field")
        value = obj[field]
        yield "" if value is None else str(value)


def _parquet_rows(spec: InputSpec) -> Iterator[str]:
    import pyarrow.parquet as pq

    column = spec.column or "text"
    pf = pq.ParquetFile(spec.path)
    if column not in pf.schema_arrow.names:
        raise InputError(f"{spec.path}: no column {column!r} (columns: {pf.schema_arrow.names})")
    for batch in pf.iter_batches(columns=[column], batch_size=65536):
        for value in batch.column(0).to_pylist():
            yield "" if value is None else str(value)


def iter_rows(spec: InputSpec) -> Iterator[str]:
    """Yield the text of every input row, in order."""
    if not spec.path.is_file():
        raise InputError(f"{spec.path}: no such file")
    fmt = spec.resolved_format()
    if fmt == "txt":
        return (line for _, line in _lines(spec.path))
    if fmt == "tsv":
        return _tsv_rows(spec)
    if fmt == "jsonl":
        return _jsonl_rows(spec)
    return _parquet_rows(spec)
