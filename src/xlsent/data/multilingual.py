"""Bitext of every language with English, from every corpus of ``parallel/``, and temperature sampling over it.

For each language that any corpus pairs with English (Tatoeba-Challenge test v2021-08-07, Multi30k train, WMT
newstest 2008-2011, 2013 and 2014, NTREX-128: :func:`xlsent.data.bitext.all_sources`), the X-en pairs of every
corpus in turn, stripped, deduplicated, without empty sides and without any pair touching a reported test set
(:func:`xlsent.data.held_out.held_out_sentences`: every Tatoeba v1 test file and the ``retrieval_pk`` test
sets; newstest2012, the BUCC-style gold, is not a source). Per language, ``valid_pairs`` pairs sharing no sentence
with the rest are held out for validation, and at most ``max_pairs`` of the rest (seeded) are kept for training.

Languages are then drawn with temperature ``T`` (Arivazhagan et al. 2019; LaBSE): language ``l`` with probability
proportional to ``n_l ** (1 / T)``, so ``T = 1`` follows the data and a larger ``T`` lets the small languages be
seen (``T = 5`` is LaBSE's and XLM-R's choice).

>>> weights = temperature_weights([10000, 100], temperature=5.0)
>>> [round(float(w), 3) for w in weights]
[0.715, 0.285]
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.data.bitext import MULTI30K, NEWSTEST, NEWSTEST_2014_X_EN, all_sources, filter_pairs
from xlsent.data.held_out import held_out_sentences
from xlsent.data.parallel import ntrex_languages
from xlsent.languages import TATOEBA_CHALLENGE, from_ntrex
from xlsent.paths import data_root

log = logging.getLogger(__name__)

BANNED_KEY = "held_out_removed"


@dataclass(frozen=True)
class EnglishBitext:
    """One language's training pairs with English, its held-out validation pairs, and where they came from."""

    lang: str
    xx: list[str]
    en: list[str]
    valid_xx: list[str] = field(default_factory=list)
    valid_en: list[str] = field(default_factory=list)
    sources: dict[str, dict[str, int]] = field(default_factory=dict)


def english_languages(root: str | Path | None = None) -> list[str]:
    """Every language some corpus of ``parallel/`` pairs with English, sorted (xlsent's codes)."""
    base = data_root(root)
    langs = {*TATOEBA_CHALLENGE, *MULTI30K, *NEWSTEST_2014_X_EN, *(x for ls in NEWSTEST.values() for x in ls),
             *(from_ntrex(code) for code in ntrex_languages(base))}
    return sorted(langs - {"en"})


def _split(n: int, xx: list[str], en: list[str], valid: int, cap: int, seed: int, i: int
           ) -> tuple[list[int], list[int]]:
    """Training rows (the seeded cap) and ``valid`` held-out rows sharing no sentence with them."""
    order = np.random.default_rng([seed, i]).permutation(n)
    held: list[int] = []
    if valid > 0 and n > 2 * valid:
        held = [int(r) for r in order[:valid]]
    taken = {xx[r] for r in held} | {en[r] for r in held}
    train = [int(r) for r in order[len(held):] if xx[r] not in taken and en[r] not in taken]
    if cap and len(train) > cap:
        train = train[:cap]
    return sorted(train), held


def build_english_bitext(root: str | Path | None = None, *, languages: Sequence[str] | None = None,
                         max_pairs: int = 0, valid_pairs: int = 0, min_pairs: int = 1, seed: int = 0,
                         banned: set[str] | None = None) -> list[EnglishBitext]:
    """The X-en bitext of ``languages`` (default: :func:`english_languages`) in that order; a language with fewer
    than ``min_pairs`` training pairs left is dropped (logged)."""
    base = data_root(root)
    banned = held_out_sentences(base) if banned is None else banned
    out = []
    for i, lang in enumerate(languages if languages is not None else english_languages(base)):
        sources = all_sources(lang, "en", base)
        if not sources:
            raise ValueError(f"no {lang}-en bitext in {base / 'parallel'}: remove {lang} from the languages")
        xx, en, per_source = filter_pairs(f"{lang}-en", sources, banned, banned_key=BANNED_KEY)
        train, held = _split(len(xx), xx, en, valid_pairs, max_pairs, seed, i)
        if len(train) < min_pairs:
            log.info("%s-en: %d training pairs, fewer than %d: left out", lang, len(train), min_pairs)
            continue
        out.append(EnglishBitext(lang, [xx[r] for r in train], [en[r] for r in train], [xx[r] for r in held],
                                 [en[r] for r in held], per_source))
    return out


def bitext_counts(bitext: Sequence[EnglishBitext]) -> dict[str, Any]:
    """``{"pairs": total, "languages": n, "per_lang": {"de": {"pairs", "held_out", "sources"}, ...}}``."""
    per = {b.lang: {"pairs": len(b.xx), "held_out": len(b.valid_xx), "sources": b.sources} for b in bitext}
    return {"pairs": sum(len(b.xx) for b in bitext), "languages": len(bitext), "per_lang": per}


def temperature_weights(sizes: Sequence[int], temperature: float) -> np.ndarray:
    """Sampling probabilities proportional to ``size ** (1 / temperature)``."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, not {temperature}")
    raw = np.asarray(sizes, dtype=np.float64) ** (1.0 / temperature)
    return raw / raw.sum()


def boosted_weights(sizes: Sequence[int], temperature: float, boosted: Sequence[bool], share: float) -> np.ndarray:
    """Temperature weights within two groups, the ``boosted`` languages taking ``share`` of the draws together and
    the others the rest; plain :func:`temperature_weights` when either group is empty or ``share`` is 0.

    >>> [round(float(w), 3) for w in boosted_weights([10000, 10000, 100], 5.0, [False, False, True], 0.5)]
    [0.25, 0.25, 0.5]
    """
    mask = np.asarray(boosted, dtype=bool) if len(boosted) else np.zeros(len(sizes), dtype=bool)
    if share == 0 or mask.all() or not mask.any():
        return temperature_weights(sizes, temperature)
    sizes_ = np.asarray(sizes)
    out = np.zeros(len(sizes_))
    out[mask] = share * temperature_weights(sizes_[mask], temperature)
    out[~mask] = (1 - share) * temperature_weights(sizes_[~mask], temperature)
    return out


class TemperatureSampler:
    """Which language draw ``d`` takes: seeded per draw, so a resumed run draws the same sequence; ``boosted``
    languages take ``share`` of the draws together (:func:`boosted_weights`).

    >>> sampler = TemperatureSampler([100, 100], temperature=1.0, seed=3)
    >>> sampler.language(7) == sampler.language(7), sorted({sampler.language(d) for d in range(50)})
    (True, [0, 1])
    """

    def __init__(self, sizes: Sequence[int], temperature: float, seed: int = 0, *, boosted: Sequence[bool] = (),
                 share: float = 0.0) -> None:
        self.weights = boosted_weights(sizes, temperature, boosted, share)
        self.cumulative = np.cumsum(self.weights)
        self.seed = seed

    def language(self, draw: int) -> int:
        u = float(np.random.default_rng([self.seed, draw]).random())
        return min(int(np.searchsorted(self.cumulative, u, side="right")), len(self.weights) - 1)
