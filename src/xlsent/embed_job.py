"""``xlsent embed``: stream a text file through an encoder into an embedding file, resumably.

The input is cut into fixed chunks of rows; each finished chunk is saved atomically under
``OUTPUT.parts/``, so a killed run resumes at the first missing chunk and, chunk boundaries being the
same, produces a byte-identical result. The parts are assembled into the output at the end.
"""

from __future__ import annotations

import itertools
import json
import logging
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from xlsent.atomic import atomic_path, write_json
from xlsent.checksum import sha256_file
from xlsent.data.text_input import InputError, InputSpec, iter_rows
from xlsent.encoders.base import Encoder
from xlsent.languages import check_lang
from xlsent.store import base_metadata, save_embedding_parts

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbedOptions:
    """Options of an embedding job."""

    chunk_rows: int = 50_000
    batch_tokens: int = 2048
    strict: bool = False
    resume: bool = False
    progress: bool = True
    lang: str | None = None

    def __post_init__(self) -> None:
        check_lang(self.lang)
        if self.chunk_rows < 1 or self.batch_tokens < 1:
            raise ValueError(f"chunk_rows and batch_tokens must be positive, got {self.chunk_rows}, "
                             f"{self.batch_tokens}")


@dataclass
class EmbedSummary:
    """What an embedding job did."""

    output: Path
    rows: int
    empty_rows: list[int] = field(default_factory=list)
    dim: int = 0
    seconds: float = 0.0
    resumed_chunks: int = 0

    def describe(self) -> str:
        rate = self.rows / self.seconds if self.seconds else float("inf")
        empty = f", {len(self.empty_rows)} empty row(s) -> zero vectors" if self.empty_rows else ""
        resumed = f", {self.resumed_chunks} chunk(s) reused" if self.resumed_chunks else ""
        return (f"wrote {self.output}: {self.rows} x {self.dim} float32{empty}{resumed} "
                f"in {self.seconds:.1f}s ({rate:.0f} sentences/s)")


def _chunks(rows: Iterator[str], size: int) -> Iterator[list[str]]:
    while chunk := list(itertools.islice(rows, size)):
        yield chunk


def _job_key(spec: InputSpec, sha: str, encoder: Encoder, opts: EmbedOptions) -> dict[str, Any]:
    return {"input_sha256": sha, "format": spec.resolved_format(), "column": spec.column, "field": spec.field,
            "encoder": getattr(encoder, "id", encoder.name), "chunk_rows": opts.chunk_rows, "lang": opts.lang}


def _prepare_parts(parts: Path, key: dict[str, Any], resume: bool) -> None:
    state = parts / "job.json"
    if parts.exists():
        previous = json.loads(state.read_text(encoding="utf-8")) if state.is_file() else None
        if resume and previous == key:
            return
        if resume:
            log.warning("%s belongs to another input or encoder; starting over", parts)
        shutil.rmtree(parts)
    parts.mkdir(parents=True)
    write_json(state, key)


def embed_file(spec: InputSpec, output: str | Path, encoder: Encoder, opts: EmbedOptions | None = None
               ) -> EmbedSummary:
    """Embed every row of ``spec`` into ``output`` (``.npy`` + sidecar, or ``.parquet``)."""
    opts = opts or EmbedOptions()
    output = Path(output)
    start = time.perf_counter()
    sha = sha256_file(spec.path)
    parts = output.with_name(output.name + ".parts")
    key = _job_key(spec, sha, encoder, opts)
    _prepare_parts(parts, key, opts.resume)
    summary = EmbedSummary(output=output, rows=0, dim=encoder.dim)
    bar = tqdm(disable=not opts.progress, unit="sent", desc=f"embed {spec.path.name}")
    for index, chunk in enumerate(_chunks(iter(iter_rows(spec)), opts.chunk_rows)):
        base = index * opts.chunk_rows
        empty = [base + i for i, s in enumerate(chunk) if not s.strip()]
        if empty and opts.strict:
            raise InputError(f"{spec.path}:{empty[0] + 1}: empty line ({len(empty)} in this chunk); "
                             "drop --strict to keep them as zero vectors")
        summary.empty_rows += empty
        part = parts / f"{index:06d}.npy"
        if part.is_file():
            summary.resumed_chunks += 1
        else:
            vectors = encoder.encode(chunk, opts.lang, batch_tokens=opts.batch_tokens)
            with atomic_path(part) as tmp, open(tmp, "wb") as fh:
                np.save(fh, vectors.astype(np.float32))
        summary.rows += len(chunk)
        bar.update(len(chunk))
    bar.close()
    if summary.empty_rows:
        log.warning("%s: %d empty row(s) kept as zero vectors (first at line %d)", spec.path,
                    len(summary.empty_rows), summary.empty_rows[0] + 1)
    meta = base_metadata(summary.rows, encoder.dim, key["encoder"], {
        "path": str(spec.path), "sha256": sha, "format": key["format"], "column": spec.column,
        "field": spec.field,
    })
    meta["empty_rows"] = len(summary.empty_rows)
    save_embedding_parts(output, sorted(parts.glob("[0-9]*.npy")), meta)
    shutil.rmtree(parts)
    summary.seconds = time.perf_counter() - start
    return summary

