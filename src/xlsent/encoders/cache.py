"""Encodings cached on disk per (encoder, sentences, language), so re-running an evaluation costs nothing."""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from xlsent.encoders.base import Encoder, Identified, Named
from xlsent.paths import xlsent_home
from xlsent.store import EmbeddingFileError, base_metadata, load_embeddings, save_embeddings

log = logging.getLogger(__name__)


def sentences_key(sentences: Sequence[str], lang: str | None = None) -> str:
    """A checksum of an ordered list of sentences (length-prefixed, so no two lists collide by joining)."""
    h = hashlib.sha256((lang or "").encode() + b"\0")
    for s in sentences:
        raw = s.encode("utf-8", "surrogatepass")
        h.update(len(raw).to_bytes(8, "little") + raw)
    return h.hexdigest()


def encoder_id(encoder: Named) -> str:
    """The encoder's (or token anchor's) id: its name plus weights checksum where it has one."""
    return encoder.id if isinstance(encoder, Identified) else encoder.name


TEXT_READING = "t2"
"""How an encoder reads a sentence, as the cache folders of what it made from sentences record it: ``t2`` since
surrounding whitespace is no token (:meth:`xlsent.encoders.transformer.TransformerEncoder._texts`). Folders made
before (no such suffix) hold vectors of the older reading and are no longer read."""


def cache_dir(encoder: Encoder, root: Path | None = None) -> Path:
    """Folder holding ``encoder``'s cached encodings (named by its id and :data:`TEXT_READING`)."""
    safe = re.sub(r"[^A-Za-z0-9._@-]+", "_", encoder_id(encoder))
    return (root or xlsent_home() / "encodings") / f"{safe}.{TEXT_READING}"


PART_ROWS = 8192
"""Distinct sentences per resumable part: a list longer than that is encoded part by part, each part saved as it is
done, so an interrupted run resumes at the first missing part."""


def cached_encode(encoder: Encoder, sentences: Sequence[str], lang: str | None = None, *,
                  root: Path | None = None, progress: bool = False) -> np.ndarray:
    """``encoder.encode(sentences, lang)``, read from or written to the on-disk cache.

    The cache key is the encoder's id and the checksum of the ordered sentences (and ``lang``). Repeated sentences
    are encoded once (an encoder's vector does not depend on its batch); more than :data:`PART_ROWS` distinct ones
    are encoded in resumable parts.
    """
    key = sentences_key(sentences, lang)
    path = cache_dir(encoder, root) / f"{key[:32]}.npy"
    if path.is_file():
        try:
            vecs, _ = load_embeddings(path, mmap=False, expect_sha256=key, expect_rows=len(sentences))
            return np.asarray(vecs)
        except (EmbeddingFileError, ValueError) as exc:
            log.warning("ignoring unusable cache file %s (%s)", path, exc)
    unique, inverse = np.unique(np.asarray(sentences, dtype=object), return_inverse=True)
    texts = [str(u) for u in unique]
    parts = path.with_suffix(".parts")
    if len(texts) > PART_ROWS:
        distinct = _encode_in_parts(encoder, texts, lang, parts, progress)
    else:
        distinct = encoder.encode(texts, lang, progress=progress)
    vecs = distinct[inverse.reshape(-1)]
    meta = base_metadata(len(sentences), vecs.shape[1], encoder_id(encoder), {"sha256": key, "lang": lang})
    save_embeddings(path, vecs.astype(np.float32), meta)
    shutil.rmtree(parts, ignore_errors=True)
    return vecs


def _encode_in_parts(encoder: Encoder, texts: list[str], lang: str | None, parts: Path,
                     progress: bool) -> np.ndarray:
    """The vectors of ``texts``, :data:`PART_ROWS` at a time, each part kept in ``parts`` (reused when intact)."""
    parts.mkdir(parents=True, exist_ok=True)
    blocks = []
    starts = range(0, len(texts), PART_ROWS)
    kept = 0
    for n, start in enumerate(tqdm(starts, disable=not progress, unit="part", desc=f"encode {encoder.name}")):
        chunk = texts[start : start + PART_ROWS]
        key = sentences_key(chunk, lang)
        part = parts / f"{n:05d}.npy"
        try:
            block, _ = load_embeddings(part, mmap=False, expect_sha256=key, expect_rows=len(chunk))
            kept += 1
        except (EmbeddingFileError, ValueError, OSError):
            block = encoder.encode(chunk, lang)
            save_embeddings(part, block.astype(np.float32),
                            base_metadata(len(chunk), block.shape[1], encoder_id(encoder), {"sha256": key}))
        blocks.append(np.asarray(block))
    if kept:
        log.info("resumed %s: %d of %d parts were encoded already", parts, kept, len(starts))
    return np.concatenate(blocks)
