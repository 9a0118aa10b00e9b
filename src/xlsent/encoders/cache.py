"""Encodings cached on disk per (encoder, sentences, language), so re-running an evaluation costs nothing."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xlsent.encoders.base import Encoder
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


def encoder_id(encoder: Encoder) -> str:
    """The encoder's id (name plus weights checksum where it has one)."""
    return str(getattr(encoder, "id", encoder.name))


def cache_dir(encoder: Encoder, root: Path | None = None) -> Path:
    """Folder holding ``encoder``'s cached encodings."""
    safe = re.sub(r"[^A-Za-z0-9._@-]+", "_", encoder_id(encoder))
    return (root or xlsent_home() / "encodings") / safe


def cached_encode(encoder: Encoder, sentences: Sequence[str], lang: str | None = None, *,
                  root: Path | None = None, progress: bool = False) -> np.ndarray:
    """``encoder.encode(sentences, lang)``, read from or written to the on-disk cache.

    Repeated sentences are encoded once (an encoder's vector does not depend on its batch).
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
    vecs = encoder.encode([str(u) for u in unique], lang, progress=progress)[inverse.reshape(-1)]
    meta = base_metadata(len(sentences), vecs.shape[1], encoder_id(encoder), {"sha256": key, "lang": lang})
    save_embeddings(path, vecs.astype(np.float32), meta)
    return vecs
