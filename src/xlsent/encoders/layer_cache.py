"""Per-layer sum-pooled hidden states cached on disk, so that training on top of a frozen backbone runs it once.

A backbone exposing ``layer_pooled`` (see :class:`xlsent.encoders.base.HiddenStateEncoder`) gives, for every
sentence, the sum over its tokens of every layer's hidden state, ``(layers + 1, dim)``. Any module that mixes
layers linearly and pools by summing can be trained from these vectors alone (the mix and the sum commute).

Storage: one ``.npz`` (no pickle) per (encoder, sentences, language) under ``$XLSENT_HOME/layers/<encoder id>/``,
named after :func:`xlsent.encoders.cache.sentences_key`. It holds the per-token *means* as float16 (relative
rounding error below 5e-4, and no overflow since means stay at the scale of single hidden states; float32 is
kept if a mean does not fit float16), the token counts as float32, the sentence key and the encoder id. Sums are
``mean * count``. Files are written atomically and checked against the expected key, encoder and shape on load;
an unusable file is logged and recomputed.

>>> from xlsent.encoders.layer_cache import cached_layer_pooled
>>> sums, counts = cached_layer_pooled(backbone, ["Hallo Welt", ""], "de")   # doctest: +SKIP
>>> sums.shape, counts.tolist()                                              # doctest: +SKIP
((2, 13, 384), [5.0, 0.0])
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from xlsent.atomic import atomic_open
from xlsent.encoders.base import HiddenStateEncoder
from xlsent.encoders.cache import cache_dir, encoder_id, sentences_key
from xlsent.paths import xlsent_home

log = logging.getLogger(__name__)

CHUNK_SENTENCES = 4096


class LayerCacheError(ValueError):
    """A layer-cache file is unreadable or belongs to other sentences, another encoder or another shape."""


@dataclass(frozen=True)
class LayerStates:
    """Per-token means ``(n, layers, dim)`` (float16 or float32) and token counts ``(n,)`` of n sentences."""

    means: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.counts)

    def sums(self, rows: np.ndarray | slice | None = None) -> np.ndarray:
        """Float32 sum-pooled states of ``rows`` (all rows by default)."""
        sel = slice(None) if rows is None else rows
        return self.means[sel].astype(np.float32) * self.counts[sel, None, None]

    def subset(self, rows: np.ndarray) -> LayerStates:
        """The states of ``rows`` only."""
        return LayerStates(self.means[rows], self.counts[rows])


def layer_cache_path(encoder: HiddenStateEncoder, key: str, root: Path | None = None) -> Path:
    """Where the layer cache of the sentences with key ``key`` lives."""
    return cache_dir(encoder, root or xlsent_home() / "layers") / f"{key[:32]}.npz"


def compute_layer_means(encoder: HiddenStateEncoder, sentences: Sequence[str], *,
                        progress: bool = False) -> LayerStates:
    """Run ``encoder.layer_pooled`` in chunks and keep float16 per-token means (float32 where they overflow)."""
    n, layers = len(sentences), encoder.num_layers + 1
    means = np.zeros((n, layers, encoder.dim), dtype=np.float16)
    counts = np.zeros(n, dtype=np.float32)
    bar = tqdm(total=n, disable=not progress, unit="sent", desc=f"layer states {encoder.name}")
    for start in range(0, n, CHUNK_SENTENCES):
        stop = min(start + CHUNK_SENTENCES, n)
        sums, cnt = encoder.layer_pooled(sentences[start:stop])
        chunk = sums / np.maximum(cnt, 1.0)[:, None, None]
        if means.dtype == np.float16 and np.abs(chunk).max(initial=0.0) >= np.finfo(np.float16).max:
            log.warning("hidden-state means exceed float16; caching %s as float32", encoder.name)
            means = means.astype(np.float32)
        means[start:stop] = chunk
        counts[start:stop] = cnt
        bar.update(stop - start)
    bar.close()
    return LayerStates(means, counts)


def save_layer_cache(path: Path, states: LayerStates, key: str, encoder: str) -> None:
    """Write ``states`` with their sentence key and encoder id, atomically, as a pickle-free ``.npz``."""
    with atomic_open(path, "wb") as fh:
        np.savez(fh, means=states.means, counts=states.counts, key=np.array(key), encoder=np.array(encoder))


def load_layer_cache(path: Path, *, key: str, encoder: str, rows: int, layers: int, dim: int) -> LayerStates:
    """Read a layer cache, checking that it holds ``rows x layers x dim`` states of ``key`` by ``encoder``."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            stored_key, stored_encoder = str(npz["key"]), str(npz["encoder"])
            means, counts = npz["means"], npz["counts"]
    except (OSError, KeyError, ValueError) as exc:
        raise LayerCacheError(f"{path}: unreadable layer cache ({exc})") from exc
    if stored_key != key:
        raise LayerCacheError(f"{path}: holds other sentences (key {stored_key[:12]}…, expected {key[:12]}…)")
    if stored_encoder != encoder:
        raise LayerCacheError(f"{path}: made by {stored_encoder}, expected {encoder}")
    if means.shape != (rows, layers, dim) or counts.shape != (rows,):
        raise LayerCacheError(f"{path}: shape {means.shape}, expected {(rows, layers, dim)}")
    return LayerStates(means, counts)


def cached_layer_means(encoder: HiddenStateEncoder, sentences: Sequence[str], lang: str | None = None, *,
                       root: Path | None = None, progress: bool = False) -> LayerStates:
    """The layer states of ``sentences`` (``lang`` is part of the key), read from or written to the cache.

    Repeated sentences run through the encoder once (a sentence's states do not depend on its batch).
    """
    key = sentences_key(sentences, lang)
    path = layer_cache_path(encoder, key, root)
    enc_id = encoder_id(encoder)
    if path.is_file():
        try:
            return load_layer_cache(path, key=key, encoder=enc_id, rows=len(sentences),
                                    layers=encoder.num_layers + 1, dim=encoder.dim)
        except LayerCacheError as exc:
            log.warning("ignoring unusable layer cache (%s)", exc)
    unique, inverse = np.unique(np.asarray(sentences, dtype=object), return_inverse=True)
    states = compute_layer_means(encoder, [str(u) for u in unique], progress=progress)
    states = states.subset(inverse.reshape(-1))
    save_layer_cache(path, states, key, enc_id)
    log.info("cached layer states of %d sentences in %s", len(sentences), path)
    return states


def cached_layer_pooled(encoder: HiddenStateEncoder, sentences: Sequence[str], lang: str | None = None, *,
                        root: Path | None = None, progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``encoder.layer_pooled(sentences)`` as float32 ``(sums, counts)``, through the on-disk cache."""
    states = cached_layer_means(encoder, sentences, lang, root=root, progress=progress)
    return states.sums(), states.counts
