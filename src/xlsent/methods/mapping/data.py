"""Training data of the mapping methods: the bitext of each language pair and how its rows are used.

:func:`build_pair_data` reads, for ``pairs`` like ``["de-en"]`` (several pairs with one target language for
ABSent's zero-shot set-up), the bitext of one ``corpus``:

- ``short``: Tatoeba-Challenge test v2021-08-07 X-eng pairs (the paper's Tatoeba role); a pair without English is
  joined through identical English sentences;
- ``long``: WMT newstest 2008-2011, 2013, 2014 (the paper's Europarl role; newstest2012 is the test set);
- ``ntrex``: NTREX-128 (1997 lines per language: low-resource pairs such as ``kaz-en``; codes through
  :func:`xlsent.languages.ntrex_code`).

Pairs with an empty side, repeated pairs and pairs with a side among
:func:`~xlsent.data.held_out.held_out_sentences` are dropped. ``parallel_ratio`` of the pairs (a seeded draw) are
the parallel set D_l, of which ``valid_pairs`` are held out for model selection; the rest are unlabelled: both
sides are kept as separate sentence pools, their alignment never used (:func:`split_rows`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.data.bitext import Bitext, Loader, bitext_sources, filter_pairs, parse_pair
from xlsent.data.held_out import held_out_sentences
from xlsent.data.parallel import load_ntrex
from xlsent.encoders.cache import sentences_key
from xlsent.languages import ntrex_code
from xlsent.methods.mapping.config import MappingConfig
from xlsent.paths import data_root
from xlsent.training.record import DataRecord
from xlsent.training.toy import TOY_DE, TOY_EN

log = logging.getLogger(__name__)

Sides = tuple[list[str], list[str]]


@dataclass(frozen=True)
class PairData:
    """Every training pair of one language pair (``bitext``, canonical order) and how its rows are used:
    ``labelled`` rows are the parallel set D_l, ``valid`` rows (taken from D_l's share) pick the checkpoint, and
    ``unlabelled`` rows contribute their two sides as unaligned sentence pools."""

    bitext: Bitext
    labelled: np.ndarray
    unlabelled: np.ndarray
    valid: np.ndarray

    @property
    def pool(self) -> np.ndarray:
        """Rows whose sentences (each side on its own) are the unlabelled-plus-labelled pools."""
        return np.sort(np.concatenate([self.labelled, self.unlabelled]))


def _joined_through_english(a: Sides, b: Sides) -> Sides:
    """X-Y pairs from X-en and Y-en pairs sharing an English sentence (the first translation of each side)."""
    firsts = []
    for xs, ens in (a, b):
        first: dict[str, str] = {}
        for x, e in zip(xs, ens, strict=True):
            first.setdefault(e.strip(), x)
        firsts.append(first)
    common = sorted(firsts[0].keys() & firsts[1].keys())
    return [firsts[0][e] for e in common], [firsts[1][e] for e in common]


def corpus_sources(pair: str, corpus: str, root: Path) -> dict[str, Loader]:
    """Loaders of the ``corpus`` bitexts holding ``pair`` (see the module docstring), each -> (src side, tgt side)."""
    a, b = parse_pair(pair)
    if corpus == "ntrex":
        return {"ntrex128": lambda: load_ntrex(ntrex_code(a), ntrex_code(b), root=root)}
    if corpus == "long":
        return {k: v for k, v in bitext_sources(a, b, root).items() if k.startswith("newstest")}
    if "en" in (a, b):
        return {k: v for k, v in bitext_sources(a, b, root).items() if k == "tatoeba-challenge"}
    load_a = bitext_sources(a, "en", root).get("tatoeba-challenge")
    load_b = bitext_sources(b, "en", root).get("tatoeba-challenge")
    if load_a is None or load_b is None:
        return {}
    return {"tatoeba-challenge via en": lambda: _joined_through_english(load_a(), load_b())}


def corpus_bitext(pair: str, corpus: str, root: str | Path | None = None, *, banned: set[str] | None = None,
                  max_pairs: int | None = None, seed: int = 0) -> Bitext:
    """The filtered training bitext of ``pair`` in ``corpus`` (a seeded subset of ``max_pairs`` if set)."""
    base = data_root(root)
    sources = corpus_sources(pair, corpus, base)
    if not sources:
        raise ValueError(f"no {corpus} bitext for {pair} in {base / 'parallel'}")
    banned = held_out_sentences(base) if banned is None else banned
    src, tgt, per_source = filter_pairs(pair, sources, banned, banned_key="held_out_removed")
    if max_pairs is not None and len(src) > max_pairs:
        rows = np.sort(np.random.default_rng(seed).choice(len(src), max_pairs, replace=False))
        src, tgt = [src[i] for i in rows], [tgt[i] for i in rows]
    a, b = parse_pair(pair)
    log.info("%s %s bitext: %d pairs (%s)", corpus, pair, len(src), per_source)
    return Bitext(src, tgt, a, b, {"corpus": corpus, "pairs": len(src), "sources": per_source})


def split_rows(n: int, parallel_ratio: float, valid_pairs: int, seed: int) -> tuple[np.ndarray, ...]:
    """``(labelled, unlabelled, valid)`` sorted row indices: a seeded ``parallel_ratio`` share of the rows is D_l,
    of which ``valid_pairs`` are held out.

    >>> [r.tolist() for r in split_rows(10, 0.5, 1, seed=0)]
    [[2, 3, 6, 7], [0, 1, 5, 8, 9], [4]]
    """
    perm = np.random.default_rng(seed).permutation(n)
    n_l = max(int(round(parallel_ratio * n)), 1)
    if n_l - valid_pairs < 2:
        raise ValueError(f"{n} pairs at parallel_ratio {parallel_ratio} leave {n_l - valid_pairs} parallel training "
                         f"pairs after {valid_pairs} held out: need at least 2")
    return np.sort(perm[valid_pairs:n_l]), np.sort(perm[n_l:]), np.sort(perm[:valid_pairs])


def build_pair_data(config: MappingConfig, root: str | Path | None = None, *, banned: set[str] | None = None
                    ) -> list[PairData]:
    """Training data of every pair of ``config`` (see :func:`corpus_bitext`, :func:`split_rows`); ``banned``
    defaults to :func:`~xlsent.data.held_out.held_out_sentences`."""
    base = data_root(root)
    banned = held_out_sentences(base) if banned is None else banned
    out = []
    for i, pair in enumerate(config.pairs):
        bitext = corpus_bitext(pair, config.corpus, base, banned=banned, max_pairs=config.max_pairs,
                               seed=config.seed + i)
        labelled, unlabelled, valid = split_rows(len(bitext.src), config.parallel_ratio, config.valid_pairs,
                                                 config.seed + i)
        out.append(PairData(bitext, labelled, unlabelled, valid))
    return out


def data_summary(data: Sequence[PairData]) -> DataRecord:
    """The training data for the manifest and model card: languages, sentence counts and, per pair, the corpus
    summary and how many rows are labelled, unlabelled and held out."""
    return DataRecord.two_sides(
        "bitext with a parallel share", "+".join(d.bitext.src_lang for d in data), data[0].bitext.tgt_lang,
        sum(len(d.bitext.src) for d in data), sum(len(d.bitext.tgt) for d in data),
        pairs={f"{d.bitext.src_lang}-{d.bitext.tgt_lang}": {
            **d.bitext.summary, "labelled": len(d.labelled), "unlabelled": len(d.unlabelled), "valid": len(d.valid)}
            for d in data})


def data_meta(data: Sequence[PairData]) -> list[dict[str, str]]:
    """What identifies the training data (sentence lists and row split) for resuming and the manifest."""
    return [{"src": sentences_key(d.bitext.src, d.bitext.src_lang),
             "tgt": sentences_key(d.bitext.tgt, d.bitext.tgt_lang),
             "rows": sentences_key([json.dumps([d.labelled.tolist(), d.unlabelled.tolist(), d.valid.tolist()])])}
            for d in data]


def toy_pair_data() -> PairData:
    """The toy de-en pairs (:mod:`xlsent.training.toy`), half of them held out: what the mapping methods' smallest
    models train on."""
    return PairData(Bitext(TOY_DE, TOY_EN, "de", "en"), *split_rows(len(TOY_DE), 0.5, 2, seed=0))


def toy_sets(backbone_dir: Path) -> list[str]:
    """The config overrides of a mapping method's smallest model over the tiny backbone in ``backbone_dir``."""
    return [f"backbone={backbone_dir}", "device=cpu", "inputs=tfidf"]
