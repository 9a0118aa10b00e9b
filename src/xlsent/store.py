"""Embeddings on disk: ``.npy`` + ``.npy.json`` sidecar, or Parquet with the same metadata inside.

The metadata records dtype, dimension, row count, encoder id and the source file's checksum, so that
pairing embeddings with the wrong text or model is an error rather than a silent garbage result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.atomic import atomic_path, check_folders_above, write_json

FORMAT = "xlsent-embeddings"
META_KEY = b"xlsent"
SUFFIXES = (".npy", ".parquet")
"""The output formats, chosen by the file's extension."""


class EmbeddingFileError(ValueError):
    """An embedding file is missing its metadata or does not belong to the given text or encoder."""


def sidecar_path(path: Path) -> Path:
    """The JSON sidecar of an ``.npy`` embedding file."""
    return path.with_name(path.name + ".json")


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def check_output_path(path: str | Path) -> None:
    """Raise :class:`EmbeddingFileError` unless ``path`` can become an embedding file.

    It must end in ``.npy`` or ``.parquet`` (the format comes from the extension), must not be standard output
    (``-``) or an existing directory, and no folder above it may be a file.

    >>> check_output_path("vectors.csv")
    Traceback (most recent call last):
    ...
    xlsent.store.EmbeddingFileError: vectors.csv: the output format comes from the extension: .npy ... or .parquet
    """
    path = Path(path)
    if str(path) == "-":
        raise EmbeddingFileError("-o -: embeddings are binary and cannot go to standard output; name a .npy or "
                                 ".parquet file")
    if path.is_dir():
        raise EmbeddingFileError(f"{path}: is a directory; name a .npy or .parquet file (e.g. {path / 'vectors.npy'})")
    if path.suffix.lower() not in SUFFIXES:
        raise EmbeddingFileError(f"{path}: the output format comes from the extension: .npy (vectors + .npy.json "
                                 "sidecar) or .parquet")
    check_folders_above(path)
    for beside in written_beside(path):
        if beside.is_dir():
            raise EmbeddingFileError(f"{beside}: is a directory, where the vectors' sidecar of {path} goes; remove it "
                                     "or name another output")


def written_beside(path: Path) -> list[Path]:
    """The files written beside the embedding file ``path``: a ``.npy`` file's sidecar (a Parquet file holds its
    metadata).

    >>> written_beside(Path("v.npy")), written_beside(Path("v.parquet"))
    ([PosixPath('v.npy.json')], [])
    """
    return [sidecar_path(path)] if path.suffix.lower() == ".npy" else []


def base_metadata(rows: int, dim: int, encoder_id: str, source: dict[str, Any] | None) -> dict[str, Any]:
    """Metadata for ``rows x dim`` float32 vectors produced by ``encoder_id`` from ``source``."""
    return {
        "format": FORMAT,
        "version": 1,
        "dtype": "float32",
        "dim": int(dim),
        "rows": int(rows),
        "encoder": encoder_id,
        "source": source or {},
    }


def _parquet_table(array: np.ndarray, meta: dict[str, Any]) -> Any:
    import pyarrow as pa

    flat = pa.array(np.ascontiguousarray(array, dtype=np.float32).reshape(-1))
    col = pa.FixedSizeListArray.from_arrays(flat, array.shape[1])
    return pa.table({"embedding": col}).replace_schema_metadata({META_KEY: json.dumps(meta).encode()})


def save_embeddings(path: str | Path, array: np.ndarray, meta: dict[str, Any]) -> None:
    """Write ``array`` and ``meta`` atomically (``.npy`` + sidecar, or ``.parquet``)."""
    save_embedding_parts(path, [array], meta)


def save_embedding_parts(path: str | Path, parts: Sequence[np.ndarray | Path], meta: dict[str, Any]) -> None:
    """Write row blocks (arrays or ``.npy`` files, in order) as one embedding file, streaming, atomically."""
    path = Path(path)

    def blocks() -> Iterator[np.ndarray]:
        for part in parts:
            yield np.load(part, allow_pickle=False) if isinstance(part, Path) else part

    if is_parquet(path):
        import pyarrow.parquet as pq

        with atomic_path(path) as tmp:
            writer = None
            row = 0
            for block in blocks():
                table = _parquet_table(block, meta)
                writer = writer or pq.ParquetWriter(tmp, table.schema)
                writer.write_table(table)
                row += len(block)
            if writer is None:
                pq.write_table(_parquet_table(np.zeros((0, meta["dim"]), np.float32), meta), tmp)
            else:
                writer.close()
            if row != meta["rows"]:
                raise ValueError(f"{path}: wrote {row} rows, metadata says {meta['rows']}")
        return
    with atomic_path(path) as tmp:
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(meta["rows"], meta["dim"]))
        row = 0
        for block in blocks():
            out[row : row + len(block)] = block
            row += len(block)
        if row != meta["rows"]:
            raise ValueError(f"{path}: wrote {row} rows, metadata says {meta['rows']}")
        out.flush()
        del out
        # the old sidecar goes first: a kill before the new one is written leaves vectors without a sidecar (refused
        # by their readers), never the new vectors beside the old sidecar
        sidecar_path(path).unlink(missing_ok=True)
    write_json(sidecar_path(path), meta)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The metadata of an embedding file, without reading the vectors."""
    path = Path(path)
    if not path.is_file():
        raise EmbeddingFileError(f"{path}: no such embedding file")
    if is_parquet(path):
        import pyarrow.parquet as pq

        raw = (pq.read_schema(path).metadata or {}).get(META_KEY)
        if raw is None:
            raise EmbeddingFileError(f"{path}: Parquet file has no xlsent metadata")
        meta: dict[str, Any] = json.loads(raw)
        return meta
    side = sidecar_path(path)
    if not side.is_file():
        raise EmbeddingFileError(f"{path}: missing sidecar {side.name}; re-create it with `xlsent embed`")
    try:
        meta = json.loads(side.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EmbeddingFileError(f"{side}: not readable JSON ({exc}); re-create it with `xlsent embed`") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise EmbeddingFileError(f"{side}: not an xlsent embedding sidecar")
    return meta


def _read_array(path: Path, meta: dict[str, Any], *, mmap: bool) -> np.ndarray:
    """The vectors of the embedding file ``path`` (memory-mapped for ``.npy`` when ``mmap``)."""
    if is_parquet(path):
        import pyarrow.parquet as pq

        col = pq.read_table(path, columns=["embedding"]).column(0).combine_chunks()
        return np.asarray(col.values.to_numpy().reshape(len(col), meta["dim"]))
    return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)


def first_non_finite(array: np.ndarray, block: int = 65536) -> int | None:
    """The first row of ``array`` holding NaN or inf (None when every value is finite), read ``block`` rows at a time
    (a memory-mapped file is not loaded whole).

    >>> first_non_finite(np.array([[0.0, 1.0], [np.nan, 0.0]], dtype=np.float32), block=1)
    1
    """
    for start in range(0, len(array), block):
        finite = np.isfinite(array[start:start + block]).reshape(min(block, len(array) - start), -1).all(axis=1)
        if not finite.all():
            return start + int(np.argmin(finite))
    return None


def load_embeddings(
    path: str | Path,
    *,
    mmap: bool = True,
    expect_sha256: str | None = None,
    expect_encoder: str | None = None,
    expect_rows: int | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Read an embedding file (memory-mapped for ``.npy``) and check it against what the caller expects."""
    path = Path(path)
    meta = read_metadata(path)
    try:
        array = _read_array(path, meta, mmap=mmap)
    except (ValueError, OSError, EOFError) as exc:
        raise EmbeddingFileError(f"{path}: truncated or unreadable ({exc}); re-create it with `xlsent embed`") from exc
    if array.shape != (meta["rows"], meta["dim"]) or str(array.dtype) != meta["dtype"]:
        raise EmbeddingFileError(f"{path}: array {array.shape} {array.dtype} disagrees with its metadata "
                                 f"({meta['rows']}x{meta['dim']} {meta['dtype']})")
    src_sha = meta.get("source", {}).get("sha256")
    if expect_sha256 is not None and src_sha != expect_sha256:
        raise EmbeddingFileError(f"{path}: embeddings were made from another file (checksum {str(src_sha)[:12]}, "
                                 f"expected {expect_sha256[:12]}); re-run `xlsent embed`")
    if expect_encoder is not None and meta["encoder"] != expect_encoder:
        raise EmbeddingFileError(f"{path}: made by encoder {meta['encoder']}, expected {expect_encoder}")
    if expect_rows is not None and meta["rows"] != expect_rows:
        raise EmbeddingFileError(f"{path}: {meta['rows']} rows, expected {expect_rows}")
    if (bad := first_non_finite(array)) is not None:  # last: the one check that reads the whole file
        raise EmbeddingFileError(f"{path}: row {bad} (0-based) holds NaN or inf, which no encoder writes (a damaged "
                                 "file?); re-create it with `xlsent embed`")
    return array, meta
