"""LASER's training corpus, assembled from ``parallel/``: every training language into English and Spanish.

For each language L of the config and each target T (``en`` and ``es`` by default, the paper's two), the L-T
pairs of every corpus that has them: Tatoeba-Challenge test v2021-08-07 (X-en only), Multi30k train, WMT
newstest 2008-2011, 2013 and 2014 (2012 is the gold of the BUCC-style evaluation sets) and NTREX-128. Pairs with
a side among :func:`~xlsent.data.held_out.held_out_sentences` (every Tatoeba v1 test file, the ``retrieval_pk``
test sets) are removed, as are empty and repeated pairs (:func:`xlsent.data.bitext.filter_pairs`); with
``dev_held_out`` (a config with ``dev_mining``), so are those with a side among the gold of the BUCC-style dev sets
that validation mines (newstest2011, 2014 for ru-en: :func:`~xlsent.data.bucc.newstest_dev_sentences`).
A language gets the targets its corpora have (English always, Spanish where a multi-way corpus has it); English and
Spanish are sources too (into each other). Optionally a seeded ``max_pairs`` subset per pair. The assembly is a function
of the data folder and the config only, so ``python -m xlsent.methods.laser.corpus`` rebuilds it byte for
byte as files, with the counts per pair and source in ``counts.json``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.atomic import atomic_open, write_json
from xlsent.data.bitext import all_sources, filter_pairs
from xlsent.data.bucc import newstest_dev_sentences
from xlsent.data.held_out import held_out_sentences
from xlsent.paths import data_root

log = logging.getLogger(__name__)

BANNED_KEY = "held_out_removed"


@dataclass(frozen=True)
class PairCorpus:
    """The training pairs of one source language into one target language, and where they came from."""

    src_lang: str
    tgt_lang: str
    src: list[str]
    tgt: list[str]
    sources: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.src_lang}-{self.tgt_lang}"


def build_corpus(languages: Sequence[str], targets: Sequence[str], root: str | Path | None = None, *,
                 max_pairs: int = 0, seed: int = 0, banned: set[str] | None = None,
                 dev_held_out: bool = False) -> list[PairCorpus]:
    """The pairs of every language (and target) into every target that has data, in a fixed order, without those
    with a side in ``banned`` (default: the held-out test sentences, and with ``dev_held_out`` the dev sets'
    gold)."""
    base = data_root(root)
    if banned is None:
        banned = held_out_sentences(base)
        if dev_held_out:
            banned |= newstest_dev_sentences([*languages, *targets], base)
    out = []
    for i, src in enumerate(dict.fromkeys([*languages, *targets])):
        for tgt in targets:
            sources = all_sources(src, tgt, base) if src != tgt else {}
            if not sources:
                continue
            xs, ys, per_source = filter_pairs(f"{src}-{tgt}", sources, banned, banned_key=BANNED_KEY)
            if max_pairs and len(xs) > max_pairs:
                rows = np.sort(np.random.default_rng([seed, i, targets.index(tgt)]).choice(len(xs), max_pairs,
                                                                                          replace=False))
                xs, ys = [xs[r] for r in rows], [ys[r] for r in rows]
            if xs:
                out.append(PairCorpus(src, tgt, xs, ys, per_source))
    missing = sorted(set(languages) - {c.src_lang for c in out})
    if missing:
        raise ValueError(f"no training pairs for {', '.join(missing)} into {'/'.join(targets)} in "
                         f"{base / 'parallel'}: remove them from `languages`")
    return out


def corpus_counts(corpus: Sequence[PairCorpus]) -> dict[str, Any]:
    """``{"pairs": total, "languages": [...], "per_pair": {"de-en": {"pairs": n, "sources": {...}}, ...}}``."""
    per_pair = {c.name: {"pairs": len(c.src), "sources": c.sources} for c in corpus}
    languages = sorted({lang for c in corpus for lang in (c.src_lang, c.tgt_lang)})
    return {"pairs": sum(len(c.src) for c in corpus), "languages": languages, "per_pair": per_pair}


def write_corpus(corpus: Sequence[PairCorpus], out: Path) -> Path:
    """``<src>-<tgt>.<src>`` and ``<src>-<tgt>.<tgt>`` files per pair (line i translates line i), ``counts.json``."""
    out.mkdir(parents=True, exist_ok=True)
    for c in corpus:
        for lang, lines in ((c.src_lang, c.src), (c.tgt_lang, c.tgt)):
            with atomic_open(out / f"{c.name}.{lang}") as fh:
                fh.writelines(line + "\n" for line in lines)
    write_json(out / "counts.json", corpus_counts(corpus))
    return out
