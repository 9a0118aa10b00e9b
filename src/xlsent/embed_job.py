"""``xlsent embed``: stream a text file through an encoder into an embedding file, resumably.

The input is cut into fixed chunks of rows; each finished chunk is saved atomically under
``OUTPUT.parts/``, so a killed run resumes at the first missing chunk and, chunk boundaries being the
same, produces a byte-identical result. The parts are assembled into the output at the end.

Paths and options are checked before any work. A run that fails removes the parts folder unless it holds
finished chunks that ``--resume`` can reuse (it keeps them and says so); a bad input row is not such a
case, since the input has to change. A part file that cannot be read back is named and recomputed.

The metadata describes what was written: the output is assembled from exactly the chunks of the rows this
run read (a stray file in the parts folder is never taken in), its row count is theirs, and the input's
checksum is taken again once every row is read: an input that changed meanwhile is an error, never a sidecar
naming one file over the rows of another.
"""

from __future__ import annotations

import itertools
import json
import logging
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from xlsent.atomic import atomic_path, check_name_length, helper_path, write_json
from xlsent.checksum import sha256_file
from xlsent.data.empty_text import is_empty
from xlsent.data.text_input import (
    InputError,
    InputSpec,
    check_not_an_input,
    check_work_folder,
    file_key,
    iter_rows,
    readable,
)
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.inference import DEFAULT_BATCH_TOKENS
from xlsent.languages import check_lang
from xlsent.store import (
    EmbeddingFileError,
    base_metadata,
    check_output_path,
    first_non_finite,
    save_embedding_parts,
    written_beside,
)

log = logging.getLogger(__name__)

JOB_FILE = "job.json"
KEY_FLAGS = {"format": "--format", "column": "--column", "field": "--field", "header": "--header/--no-header",
             "lang": "--lang", "chunk_rows": "--chunk-rows"}
"""Job-key entries set by a command-line option: a resume refused over one of them names the flag."""


@dataclass(frozen=True)
class EmbedOptions:
    """Options of an embedding job."""

    chunk_rows: int = 50_000
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    strict: bool = False
    resume: bool = False
    progress: bool = True
    lang: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "lang", check_lang(self.lang))  # one spelling of the code (EN -> en)
        if self.chunk_rows < 1 or self.batch_tokens < 1:
            raise ValueError(f"--chunk-rows and --batch-tokens must be positive, got {self.chunk_rows}, "
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
    encoded_rows: int = 0
    """Rows encoded by this run (those of reused chunks aside): what the speed counts."""

    def describe(self) -> str:
        """One line: the file, its shape, empty rows, reused chunks, the time and the speed of what was encoded.

        >>> EmbedSummary(Path("o.npy"), rows=1, dim=4, seconds=3.0, encoded_rows=1).describe()
        'wrote o.npy: 1 x 4 float32 in 3.0s (0.333 sentences/s)'
        >>> EmbedSummary(Path("o.npy"), rows=8, dim=4, seconds=0.01, resumed_chunks=2).describe()
        'wrote o.npy: 8 x 4 float32, 2 chunk(s) reused in 0.0s'
        """
        empty = f", {len(self.empty_rows)} empty row(s) -> zero vectors" if self.empty_rows else ""
        resumed = f", {self.resumed_chunks} chunk(s) reused" if self.resumed_chunks else ""
        speed = f" ({rate_text(self.encoded_rows, self.seconds)} sentences/s)" if self.encoded_rows and self.seconds \
            else ""
        return f"wrote {self.output}: {self.rows} x {self.dim} float32{empty}{resumed} in {self.seconds:.1f}s{speed}"


def rate_text(count: int, seconds: float) -> str:
    """``count / seconds`` with three significant digits below 100, whole numbers above (never ``0`` for a slow
    run).

    >>> rate_text(1, 3.0), rate_text(55, 1.0), rate_text(12345, 2.0)
    ('0.333', '55', '6172')
    """
    rate = count / seconds
    return f"{rate:.3g}" if rate < 100 else f"{rate:.0f}"


def parts_path(output: Path) -> Path:
    """The folder of finished chunks of a job writing ``output``: ``OUTPUT.parts`` (shortened where that name is too
    long: :func:`~xlsent.atomic.helper_path`)."""
    return helper_path(output, "", ".parts")


def check_job(spec: InputSpec, output: str | Path) -> None:
    """Raise ValueError for an input or output path that the job cannot use, before anything is computed."""
    spec.check()
    output = Path(output)
    check_name_length(output, written_beside(output))
    check_output_path(output)
    check_not_an_input([output, *written_beside(output)], [spec.path])
    parts = parts_path(output)
    if parts.exists() and not parts.is_dir():
        raise EmbeddingFileError(f"{parts}: exists and is not a folder; remove it (it would hold finished chunks)")
    check_work_folder(parts, [spec.path], JOB_FILE)


ChunkVectors = Callable[[Iterator[tuple[int, list[str]]], "EmbedOptions"], Iterator[tuple[int, np.ndarray]]]
"""``vectors(chunks, opts)``: each chunk ``(index, rows)`` embedded, yielded as it is done (in any order)."""


@dataclass(frozen=True)
class ChunkEncoder:
    """What embeds a job's chunks: the encoder's id and dimension, and where the chunks are embedded (this process:
    :meth:`local`; Ray: :func:`xlsent.cluster.ray_chunk_vectors`, wrapped by :mod:`xlsent.api`)."""

    id: str
    dim: int
    vectors: ChunkVectors

    @classmethod
    def local(cls, encoder: Encoder) -> ChunkEncoder:
        """The chunks embedded one after the other by ``encoder`` in this process."""
        def vectors(chunks: Iterator[tuple[int, list[str]]], opts: EmbedOptions) -> Iterator[tuple[int, np.ndarray]]:
            for index, rows in chunks:
                yield index, encoder.encode(rows, opts.lang, batch_tokens=opts.batch_tokens)

        return cls(encoder_id(encoder), encoder.dim, vectors)


def _chunks(rows: Iterator[str], size: int) -> Iterator[list[str]]:
    while chunk := list(itertools.islice(rows, size)):
        yield chunk


def _job_key(spec: InputSpec, sha: str, encoder: ChunkEncoder, opts: EmbedOptions) -> dict[str, Any]:
    source = spec.source()
    return {"input_sha256": sha, "format": source["format"], "column": spec.column, "field": spec.field,
            "header": source["header"], "encoder": encoder.id,
            "chunk_rows": opts.chunk_rows, "lang": opts.lang}


def _finished(parts: Path) -> list[Path]:
    return sorted(parts.glob("[0-9]*.npy"))


def key_differences(previous: dict[str, Any], key: dict[str, Any]) -> list[str]:
    """What made ``previous`` another job than ``key``, in the user's terms (flags, not field names).

    >>> key_differences({"chunk_rows": 8, "encoder": "a"}, {"chunk_rows": 16, "encoder": "a"})
    ['--chunk-rows 8 (this run: 16)']
    """
    out = []
    for name in dict.fromkeys([*previous, *key]):
        old, new = previous.get(name), key.get(name)
        if old == new:
            continue
        if name in KEY_FLAGS:
            out.append(f"{KEY_FLAGS[name]} {old} (this run: {new})")
        elif name == "encoder":
            out.append(f"encoder {old} (this run: {new})")
        elif name.endswith("sha256"):
            out.append("another version of the input (its checksum differs)")
        else:
            out.append(f"{name} {old} (this run: {new})")
    return out


def _prepare_parts(parts: Path, key: dict[str, Any], resume: bool) -> None:
    """Reuse ``parts`` for a resumed job with the same key; otherwise start it empty, saying what is discarded."""
    if parts.exists():
        state = parts / JOB_FILE
        try:
            previous = json.loads(state.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = None
        done = len(_finished(parts))
        if resume and previous == key:
            return
        if resume:
            why = "; ".join(key_differences(previous, key)) if isinstance(previous, dict) else "an unreadable job.json"
            log.warning("%s: its %d finished chunk(s) cannot be reused: they were made with %s; starting over",
                        parts, done, why)
        elif done:
            same = " (they match this job: --resume would reuse them)" if previous == key else ""
            log.warning("%s: discarding %d finished chunk(s) of an earlier run%s", parts, done, same)
        shutil.rmtree(parts)
    parts.mkdir(parents=True)
    write_json(parts / JOB_FILE, key)


def _readable_part(part: Path, rows: int, dim: int) -> bool:
    """Whether a finished chunk file holds a ``rows x dim`` float32 array of finite values; if not, say so (it is
    recomputed)."""
    try:
        array = np.load(part, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        problem = f"truncated or unreadable ({exc})"
    else:
        if array.shape != (rows, dim) or array.dtype != np.float32:
            problem = f"holds {array.shape} {array.dtype}, expected ({rows}, {dim}) float32"
        elif (bad := first_non_finite(array)) is not None:
            problem = f"row {bad} holds NaN or inf"
        else:
            return True
    log.warning("%s: %s; recomputing this chunk", part, problem)
    return False


def _clean_up(parts: Path, exc: BaseException) -> None:
    """After a failure: keep finished chunks that a resumed run can use and say so; remove anything else."""
    done = len(_finished(parts)) if parts.is_dir() else 0
    if done and not isinstance(exc, InputError):
        log.warning("kept %d finished chunk(s) in %s: the same command with --resume continues from them",
                    done, parts)
    else:
        shutil.rmtree(parts, ignore_errors=True)


def embed_file(spec: InputSpec, output: str | Path, encoder: Encoder | ChunkEncoder, opts: EmbedOptions | None = None
               ) -> EmbedSummary:
    """Embed every row of ``spec`` (a file, standard input ``-`` or a pipe) into ``output`` (``.npy`` + sidecar, or
    ``.parquet``) with ``encoder`` (an :class:`~xlsent.encoders.base.Encoder` in this process, or a
    :class:`ChunkEncoder`: the same chunks, so the same bytes, wherever they are embedded)."""
    opts = opts or EmbedOptions()
    chunks = encoder if isinstance(encoder, ChunkEncoder) else ChunkEncoder.local(encoder)
    output = Path(output)
    check_job(spec, output)
    start = time.perf_counter()
    parts = parts_path(output)
    with readable(spec) as spec:
        sha = sha256_file(spec.path)
        key = _job_key(spec, sha, chunks, opts)
        _prepare_parts(parts, key, opts.resume)
        try:
            summary, written = _embed_chunks(spec, output, chunks, opts)
            if sha256_file(spec.path) != sha:
                raise InputError(f"{spec.name}: changed while it was being embedded (its checksum differs from the "
                                 "start of the run); run again once it is complete")
            meta = base_metadata(summary.rows, chunks.dim, key["encoder"],
                                 {**spec.source(), "sha256": sha, "lang": opts.lang})
            meta["empty_rows"] = len(summary.empty_rows)
            _save(output, written, meta)
        except BaseException as exc:
            _clean_up(parts, exc)
            raise
    shutil.rmtree(parts)
    summary.seconds = time.perf_counter() - start
    return summary


def _save(output: Path, written: list[Path], meta: dict[str, Any]) -> None:
    """Save the embedding file ``output`` of the chunk files ``written``; a save that fails once the vectors are
    replaced (their sidecar not written) removes them and the sidecar: a failed run leaves no output that looks
    finished, nor one whose sidecar describes other vectors."""
    before = file_key(output)
    try:
        save_embedding_parts(output, written, meta)
    except BaseException:
        if file_key(output) != before:
            for path in (output, *written_beside(output)):
                path.unlink(missing_ok=True)
        raise


def _embed_chunks(spec: InputSpec, output: Path, encoder: ChunkEncoder, opts: EmbedOptions
                  ) -> tuple[EmbedSummary, list[Path]]:
    """Embed every chunk of ``spec`` that is missing (or unreadable) in the parts folder of ``output``; the summary
    and the chunk files of the rows read, in order."""
    parts = parts_path(output)
    summary = EmbedSummary(output=output, rows=0, dim=encoder.dim)
    written: list[Path] = []
    first = spec.first_line
    bar = tqdm(disable=not opts.progress, unit="sent", desc=f"embed {Path(spec.name).name}")

    def missing() -> Iterator[tuple[int, list[str]]]:
        """The chunks to embed, read as they are asked for; the others counted as reused."""
        for index, chunk in enumerate(_chunks(iter(iter_rows(spec)), opts.chunk_rows)):
            base = index * opts.chunk_rows
            empty = [base + i for i, s in enumerate(chunk) if is_empty(s)]
            if empty and opts.strict:
                raise InputError(f"{spec.name}:{empty[0] + first}: empty line ({len(empty)} in this chunk); "
                                 "drop --strict to keep them as zero vectors")
            summary.empty_rows += empty
            part = parts / f"{index:06d}.npy"
            written.append(part)
            summary.rows += len(chunk)
            if part.is_dir():  # in the run's own parts folder, emptied when the run ends: never a user's
                log.warning("%s: a folder where a finished chunk goes; removed, the chunk is recomputed", part)
                shutil.rmtree(part)
            if part.is_file() and _readable_part(part, len(chunk), encoder.dim):
                summary.resumed_chunks += 1
                bar.update(len(chunk))
            else:
                yield index, chunk

    for index, vectors in encoder.vectors(missing(), opts):
        with atomic_path(parts / f"{index:06d}.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, vectors.astype(np.float32))
        summary.encoded_rows += len(vectors)
        bar.update(len(vectors))
    bar.close()
    if summary.empty_rows:
        log.warning("%s: %d empty row(s) kept as zero vectors (first at line %d)", spec.name,
                    len(summary.empty_rows), summary.empty_rows[0] + first)
    return summary, written
