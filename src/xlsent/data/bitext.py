"""The bitext catalogue: which corpora hold a language pair (:func:`bitext_sources`, read by LASER and the mapping
methods too), and the filtered bitext of one or a few pairs, or unpaired sets cut from it (dual-pivot's training
data, :func:`build_training_data`).

Sources per pair, all from ``../shared/data/parallel`` through :mod:`xlsent.data.parallel`:

- Tatoeba-Challenge test v2021-08-07 when one side is English (31 languages), minus every pair touching the
  Tatoeba v1 test set;
- Multi30k *train* when both languages are among en, de, fr, cs (its test splits are left for evaluation);
- WMT newstest 2008-2011, 2013 (multi-way) and 2014 (X-en) where both languages exist. newstest2012 is held
  out: xlsent's BUCC-style mining evaluation is built from it.

Every source is then filtered (:func:`filter_pairs`, shared with the mapping methods' bitexts): empty lines,
exact duplicate pairs and pairs with either side (stripped) in *any* Tatoeba v1 test file
(:func:`xlsent.data.held_out.tatoeba_v1_sentences`) are dropped. For the
unsupervised mode :func:`split_unpaired` cuts the bitext into two halves and keeps the source side of one and the
target side of the other; lines sharing a sentence (on either side) always fall into the same half, so no sentence
on one side has a corpus translation on the other.

>>> from xlsent.data.bitext import Bitext, split_unpaired
>>> bi = Bitext(["a", "b", "c", "d"], ["A", "B", "C", "D"], "xx", "yy")
>>> un = split_unpaired(bi, seed=0)
>>> len(un.src) + len(un.tgt), {s.upper() for s in un.src} & set(un.tgt)
(4, set())
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.data.held_out import tatoeba_v1_sentences
from xlsent.languages import TATOEBA_CHALLENGE, ntrex_code
from xlsent.paths import data_root

log = logging.getLogger(__name__)

MULTI30K = ("en", "de", "fr", "cs")
# newstest years used for training and their languages (2014 has X-en sets only); 2012 is held out
NEWSTEST = {
    2008: ("cs", "de", "en", "es", "fr", "hu"),
    2009: ("cs", "de", "en", "es", "fr", "hu", "it"),
    2010: ("cs", "de", "en", "es", "fr"),
    2011: ("cs", "de", "en", "es", "fr"),
    2013: ("cs", "de", "en", "es", "fr", "ru"),
}
NEWSTEST_2014_X_EN = ("cs", "de", "fr", "hi", "ru")
# the 16 X-en pairs of the paper's multi-pair experiment (Table 5, footnote 3)
PAPER_MULTI_PAIRS = ("ar-en", "bg-en", "de-en", "el-en", "es-en", "fa-en", "fr-en", "hi-en", "id-en", "ru-en",
                     "sw-en", "th-en", "tr-en", "ur-en", "vi-en", "zh-en")

Loader = Callable[[], tuple[list[str], list[str]]]


@dataclass(frozen=True)
class Bitext:
    """Parallel sentences: ``src[i]`` translates ``tgt[i]``."""

    src: list[str]
    tgt: list[str]
    src_lang: str = ""
    tgt_lang: str = ""
    summary: dict[str, Any] = field(default_factory=dict)
    valid: Bitext | None = None

    def __post_init__(self) -> None:
        if len(self.src) != len(self.tgt):
            raise ValueError(f"bitext sides differ in length: {len(self.src)} != {len(self.tgt)}")


@dataclass(frozen=True)
class Unpaired:
    """Monolingual sentences of two languages with no translation relation between the two lists."""

    src: list[str]
    tgt: list[str]
    src_lang: str = ""
    tgt_lang: str = ""
    summary: dict[str, Any] = field(default_factory=dict)
    valid: Bitext | None = None


def lower_pairs(pairs: Sequence[str]) -> list[str]:
    """Language pairs in lower case: codes are case-insensitive, and the data and models know them so.

    >>> lower_pairs(["DE-EN", "fr-En"])
    ['de-en', 'fr-en']
    """
    return [pair.lower() for pair in pairs]


def parse_pair(pair: str) -> tuple[str, str]:
    """``"de-en"`` -> ``("de", "en")``."""
    parts = pair.split("-")
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ValueError(f"language pair {pair!r}: expected two different codes like de-en")
    return parts[0], parts[1]


def bitext_sources(a: str, b: str, root: Path) -> dict[str, Loader]:
    """The corpora holding ``a``-``b`` sentence pairs, each as a loader returning ``(a side, b side)``."""
    from xlsent.data import parallel

    sources: dict[str, Loader] = {}
    other = b if a == "en" else a if b == "en" else None
    if other in TATOEBA_CHALLENGE:
        code = TATOEBA_CHALLENGE[other]

        def tatoeba() -> tuple[list[str], list[str]]:
            xx, en = parallel.load_tatoeba_challenge(code, root=root, exclude_tatoeba_v1=True)
            return (list(en), list(xx)) if a == "en" else (list(xx), list(en))

        sources["tatoeba-challenge"] = tatoeba
    if a in MULTI30K and b in MULTI30K:
        sources["multi30k-train"] = lambda: _lists(parallel.load_multi30k(a, b, split="train", root=root))
    years = [y for y, langs in NEWSTEST.items() if a in langs and b in langs]
    if other in NEWSTEST_2014_X_EN:
        years.append(2014)
    for year in years:
        sources[f"newstest{year}"] = _newstest(year, a, b, root)
    return sources


def all_sources(a: str, b: str, root: Path) -> dict[str, Loader]:
    """:func:`bitext_sources` and NTREX-128 (newstest2019 and its translations, multi-way) where it has both
    languages: every corpus of ``parallel/`` holding ``a``-``b`` pairs (LASER's corpus, the multilingual bitext)."""
    from xlsent.data.parallel import load_ntrex, ntrex_languages

    sources = bitext_sources(a, b, root)
    have = set(ntrex_languages(root))
    x, y = ntrex_code(a), ntrex_code(b)
    if x in have and y in have:
        sources["ntrex128"] = lambda: load_ntrex(x, y, root=root)
    return sources


def _newstest(year: int, a: str, b: str, root: Path) -> Loader:
    def load() -> tuple[list[str], list[str]]:
        from xlsent.data.parallel import load_newstest

        return _lists(load_newstest(year, a, b, root=root))

    return load


def _lists(sides: tuple[Sequence[str], Sequence[str]]) -> tuple[list[str], list[str]]:
    return list(sides[0]), list(sides[1])


def pair_bitext(pair: str, root: str | Path | None = None, *, max_pairs: int | None = None, seed: int = 0,
                banned: set[str] | None = None, holdout: int = 0) -> Bitext:
    """The filtered bitext of ``pair`` from every source that has it; a seeded random subset if ``max_pairs``.

    ``holdout`` > 0 also keeps that many pairs apart as ``.valid`` (for model selection), none of which shares a
    sentence with the returned training pairs: taken from the lines the cap leaves out when there are enough
    of them (so the training pairs are those of a run without a hold-out), else set aside before the cap.
    """
    a, b = parse_pair(pair)
    base = data_root(root)
    if banned is None:  # the usual case: read and filtered once per process (a study trains many models on it)
        kept = _filtered_without_tatoeba(pair, base.resolve())
        src, tgt, per_source = list(kept[0]), list(kept[1]), copy.deepcopy(kept[2])
    else:
        src, tgt, per_source = filter_pairs(pair, _sources(pair, base), banned, banned_key="tatoeba_v1_removed")
    train_rows, valid_rows = _split_rows(src, tgt, max_pairs, holdout, seed)
    valid = None
    if holdout > 0:
        valid = Bitext([src[i] for i in valid_rows], [tgt[i] for i in valid_rows], a, b,
                       {pair: {"held_out_pairs": len(valid_rows)}})
    src, tgt = [src[i] for i in train_rows], [tgt[i] for i in train_rows]
    log.info("%s bitext: %d pairs (%d held out)", pair, len(src), len(valid_rows))
    return Bitext(src, tgt, a, b, {pair: {"pairs": len(src), "held_out": len(valid_rows), "sources": per_source}},
                  valid)


def _sources(pair: str, base: Path) -> dict[str, Loader]:
    """Every source of bitext for ``pair`` under ``base``; none is an error naming the folder."""
    sources = bitext_sources(*parse_pair(pair), base)
    if not sources:
        raise ValueError(f"no training bitext for {pair} in {base / 'parallel'}")
    return sources


@lru_cache(maxsize=8)
def _filtered_without_tatoeba(pair: str, base: Path) -> tuple[tuple[str, ...], tuple[str, ...],
                                                               dict[str, dict[str, int]]]:
    """:func:`filter_pairs` of ``pair``'s sources under ``base`` without Tatoeba v1's sentences, kept per
    process (callers copy the counts)."""
    src, tgt, per_source = filter_pairs(pair, _sources(pair, base), tatoeba_v1_sentences(base),
                                        banned_key="tatoeba_v1_removed")
    return tuple(src), tuple(tgt), per_source


def filter_pairs(pair: str, sources: dict[str, Loader], banned: set[str], *, banned_key: str
                 ) -> tuple[list[str], list[str], dict[str, dict[str, int]]]:
    """The pairs of every source in turn, stripped, without those with a side in ``banned``, an empty side, or
    seen before; and per source how many lines were ``read``, ``kept`` and removed for a banned side
    (``banned_key``).

    >>> filter_pairs("de-en", {"s": lambda: ([" a", "b", "a", ""], ["A ", "B", "A", "C"])}, {"B"}, banned_key="v1")
    (['a'], ['A'], {'s': {'read': 4, 'kept': 1, 'v1': 1}})
    """
    src: list[str] = []
    tgt: list[str] = []
    seen: set[tuple[str, str]] = set()
    per_source: dict[str, dict[str, int]] = {}
    for name, load in sources.items():
        xs, ys = load()
        kept = removed = 0
        for x, y in zip(xs, ys, strict=True):
            x, y = x.strip(), y.strip()
            if x in banned or y in banned:
                removed += 1
            elif x and y and (x, y) not in seen:
                seen.add((x, y))
                src.append(x)
                tgt.append(y)
                kept += 1
        per_source[name] = {"read": len(xs), "kept": kept, banned_key: removed}
        log.info("%s %s: %d pairs read, %d kept, %d with a banned sentence removed", pair, name, len(xs), kept,
                 removed)
    return src, tgt, per_source


def _split_rows(src: list[str], tgt: list[str], cap: int | None, holdout: int, seed: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Training rows (sorted; the seeded cap) and held-out rows sharing no sentence with them."""
    n = len(src)
    rng_valid = np.random.default_rng([seed, 1])
    if cap is not None and n > cap and (holdout == 0 or n - cap >= 2 * holdout):
        train = np.sort(np.random.default_rng(seed).choice(n, cap, replace=False))
        pool = rng_valid.permutation(np.setdiff1d(np.arange(n), train))
    else:
        pool = rng_valid.permutation(n)
        train = np.arange(n)
    if holdout == 0:
        return train, np.zeros(0, dtype=np.int64)
    used = {src[i] for i in train} | {tgt[i] for i in train} if len(train) < n else set()
    valid = np.array([i for i in pool if src[i] not in used and tgt[i] not in used][:holdout], dtype=np.int64)
    if len(train) == n:
        held = {src[i] for i in valid} | {tgt[i] for i in valid}
        rest = np.array([i for i in range(n) if src[i] not in held and tgt[i] not in held], dtype=np.int64)
        train = rest if cap is None or len(rest) <= cap else np.sort(
            rest[np.random.default_rng(seed).choice(len(rest), cap, replace=False)])
    return train, np.sort(valid)


def _components(bitext: Bitext) -> np.ndarray:
    """Component id per line, lines connected when they share a source or a target sentence."""
    parent = list(range(len(bitext.src)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for side in (bitext.src, bitext.tgt):
        first: dict[str, int] = {}
        for i, s in enumerate(side):
            j = first.setdefault(s, i)
            parent[find(i)] = find(j)
    return np.array([find(i) for i in range(len(parent))], dtype=np.int64)


def split_unpaired(bitext: Bitext, seed: int = 0) -> Unpaired:
    """Source side of one half of the lines, target side of the other half; shared sentences stay in one half."""
    comp = _components(bitext)
    ids, sizes = np.unique(comp, return_counts=True)
    order = np.random.default_rng(seed).permutation(len(ids))
    in_first = np.zeros(len(ids), dtype=bool)
    in_first[order[np.cumsum(sizes[order]) <= len(comp) // 2]] = True
    first = in_first[np.searchsorted(ids, comp)]
    src = [s for s, f in zip(bitext.src, first, strict=True) if f]
    tgt = [t for t, f in zip(bitext.tgt, first, strict=True) if not f]
    log.info("unpaired %s-%s: %d source and %d target sentences from disjoint lines",
             bitext.src_lang, bitext.tgt_lang, len(src), len(tgt))
    summary = {**bitext.summary, "unpaired": {"src": len(src), "tgt": len(tgt)}}
    return Unpaired(src, tgt, bitext.src_lang, bitext.tgt_lang, summary, bitext.valid)


def build_training_data(mode: str, pairs: str | Sequence[str], root: str | Path | None = None,
                        max_pairs: int | None = None, seed: int = 0, valid_pairs: int = 0) -> Bitext | Unpaired:
    """Bitext (``mode="supervised"``) or unpaired sets (``"unsupervised"``) of one or several language pairs.

    With several pairs (the paper's Table 5) ``max_pairs`` is the total, shared equally between them, and the
    per-pair sets are concatenated (source languages on one side, target languages on the other).
    ``valid_pairs`` > 0 holds out that many pairs in all (``.valid``, a :class:`Bitext`) for model selection.
    """
    if mode not in ("supervised", "unsupervised"):
        raise ValueError(f"mode must be supervised or unsupervised, not {mode!r}")
    names = [pairs] if isinstance(pairs, str) else list(pairs)
    if not names:
        raise ValueError("no language pair given")
    base = data_root(root)
    cap = None if max_pairs is None else max(max_pairs // len(names), 1)
    hold = max(valid_pairs // len(names), 1) if valid_pairs > 0 else 0
    parts: list[Bitext | Unpaired] = []
    for i, pair in enumerate(names):
        bi = pair_bitext(pair, base, max_pairs=cap, seed=seed + i, holdout=hold)
        parts.append(bi if mode == "supervised" else split_unpaired(bi, seed=seed + i))
    kind = Bitext if mode == "supervised" else Unpaired
    summary: dict[str, Any] = {"mode": mode, "pairs": names, "newstest_held_out": [2012],
                               "per_pair": [p.summary for p in parts]}
    src_lang = "+".join(dict.fromkeys(p.src_lang for p in parts))
    tgt_lang = "+".join(dict.fromkeys(p.tgt_lang for p in parts))
    held = [p.valid for p in parts if p.valid is not None]
    valid = Bitext([s for v in held for s in v.src], [t for v in held for t in v.tgt], src_lang, tgt_lang,
                   {"held_out_pairs": sum(len(v.src) for v in held)}) if held else None
    data = kind([s for p in parts for s in p.src], [t for p in parts for t in p.tgt], src_lang, tgt_lang, summary,
                valid)
    data.summary.update({"src_sentences": len(data.src), "tgt_sentences": len(data.tgt)})
    log.info("%s training data for %s: %d source / %d target sentences", mode, ", ".join(names),
             len(data.src), len(data.tgt))
    return data
