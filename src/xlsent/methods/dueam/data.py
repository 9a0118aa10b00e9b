"""DuEAM's training pairs from XNLI (paper 000, section 5 and appendix C) and its held-out validation pairs.

No pair is a translation and no NLI label is used. From the XNLI *dev* split of each training language (the test
split stays clean for evaluation):

- ``weakly-supervised``: for every XNLI item i and every ordered language pair (A, B), the pair
  (premise of i in A, hypothesis of i in B): monolingual pairs when A = B (XNLI's own premise-hypothesis pairs),
  cross-lingual ones otherwise ("premise from the source language, hypothesis from the target language, and
  vice versa", Table 9). 2490 items x 13 x 13 languages = 420,810 pairs;
- ``unsupervised``: random pairs drawn from all distinct premises and hypotheses of all training languages
  (as many pairs as the weakly supervised set has, unless capped), so the pairs carry no relation.

``max_pairs`` samples that many pairs (seeded), kept in item order so pairs sharing sentences stay together.
Validation (section 5: "accuracy of finding parallel sentences on held-out 1K parallel sentences across
language pairs"; the paper's TED2020 is not available here): NTREX-128 lines, X to English, the lines spread
over the validation languages with no English line used twice.

>>> from xlsent.data.xnli import NliSet
>>> nli = {x: NliSet(x, "dev", [f"p{i}-{x}" for i in range(2)], [f"h{i}-{x}" for i in range(2)], ["neutral"] * 2)
...        for x in ("en", "de")}
>>> weak = weakly_supervised_pairs(nli)
>>> len(weak), weak.pairs()[:3]
(8, [('p0-en', 'h0-en'), ('p0-en', 'h0-de'), ('p0-de', 'h0-en')])
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.data.parallel import load_ntrex
from xlsent.data.xnli import XNLI_LANGS, NliSet, load_xnli
from xlsent.languages import ntrex_code
from xlsent.methods.dueam.config import MODES

log = logging.getLogger(__name__)

SPLIT = "dev"


@dataclass(frozen=True)
class SentencePairs:
    """Sentence pairs ``(src[i], tgt[i])`` (not translations) with their languages, and the corpus they were drawn
    from."""

    src: list[str]
    tgt: list[str]
    src_lang: list[str]
    tgt_lang: list[str]
    corpus: list[str]
    summary: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.src)

    def pairs(self) -> list[tuple[str, str]]:
        return list(zip(self.src, self.tgt, strict=True))

    def subset(self, rows: Sequence[int] | np.ndarray) -> SentencePairs:
        """The pairs at ``rows`` (same corpus and summary)."""
        idx = [int(r) for r in rows]
        return SentencePairs([self.src[i] for i in idx], [self.tgt[i] for i in idx], [self.src_lang[i] for i in idx],
                        [self.tgt_lang[i] for i in idx], self.corpus, self.summary)


@dataclass(frozen=True)
class HeldOut:
    """Row-aligned parallel sentences for model selection: ``src[i]`` (in ``langs[i]``) translates ``tgt[i]``."""

    src: list[str]
    tgt: list[str]
    langs: list[str]
    tgt_lang: str = "eng"


def load_nli(langs: Sequence[str], root: str | Path | None = None) -> dict[str, NliSet]:
    """XNLI dev of every language in ``langs`` (row i is the same item in all of them)."""
    sets = {x: load_xnli(x, SPLIT, root) for x in langs}
    sizes = {x: len(s.premises) for x, s in sets.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"XNLI {SPLIT} sets are not row-aligned: {sizes}")
    return sets


def _corpus(nli: Mapping[str, NliSet]) -> list[str]:
    return sorted({s for x in nli.values() for s in (*x.premises, *x.hypotheses) if s.strip()})


def _sample(total: int, max_pairs: int | None, seed: int) -> np.ndarray:
    if max_pairs is None or max_pairs >= total:
        return np.arange(total)
    return np.sort(np.random.default_rng(seed).choice(total, size=max_pairs, replace=False))


def weakly_supervised_pairs(nli: Mapping[str, NliSet], *, max_pairs: int | None = None, seed: int = 0) -> SentencePairs:
    """(premise of item i in A, hypothesis of item i in B) for every item and ordered language pair (A, B)."""
    langs = list(nli)
    items = len(next(iter(nli.values())).premises)
    k = len(langs)
    rows = _sample(items * k * k, max_pairs, seed)
    src, tgt, src_lang, tgt_lang = [], [], [], []
    for r in rows.tolist():
        item, rest = divmod(r, k * k)
        a, b = langs[rest // k], langs[rest % k]
        p, h = nli[a].premises[item], nli[b].hypotheses[item]
        if p.strip() and h.strip():
            src.append(p)
            tgt.append(h)
            src_lang.append(a)
            tgt_lang.append(b)
    mono = sum(a == b for a, b in zip(src_lang, tgt_lang, strict=True))
    summary = {"mode": "weakly-supervised", "source": f"XNLI {SPLIT}", "langs": langs, "items": items,
               "pairs": len(src), "monolingual": mono, "cross_lingual": len(src) - mono,
               "sampled_from": items * k * k}
    return SentencePairs(src, tgt, src_lang, tgt_lang, _corpus(nli), summary)


def unsupervised_pairs(nli: Mapping[str, NliSet], *, n_pairs: int | None = None, seed: int = 0) -> SentencePairs:
    """``n_pairs`` random pairs of distinct sentences from the premises and hypotheses of every language.

    Default size: that of the weakly supervised set of the same languages (items x languages^2).
    """
    langs = list(nli)
    items = len(next(iter(nli.values())).premises)
    pool = sorted({(s, x) for x, d in nli.items() for s in (*d.premises, *d.hypotheses) if s.strip()})
    if len(pool) < 2:
        raise ValueError("need at least two distinct sentences to draw unsupervised pairs")
    n = items * len(langs) ** 2 if n_pairs is None else n_pairs
    rng = np.random.default_rng(seed)
    first, second = rng.integers(len(pool), size=n), rng.integers(len(pool), size=n)
    keep = first != second
    src = [pool[i][0] for i in first[keep]]
    tgt = [pool[i][0] for i in second[keep]]
    summary = {"mode": "unsupervised", "source": f"XNLI {SPLIT} premises and hypotheses, random pairs",
               "langs": langs, "pool": len(pool), "pairs": len(src)}
    return SentencePairs(src, tgt, [pool[i][1] for i in first[keep]], [pool[i][1] for i in second[keep]],
                    [s for s, _ in pool], summary)


def build_pairs(mode: str, langs: Sequence[str], *, max_pairs: int | None = None, seed: int = 0,
                root: str | Path | None = None) -> SentencePairs:
    """The training pairs of ``mode`` (see :data:`MODES`) from XNLI dev in ``langs``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    unknown = sorted(set(langs) - set(XNLI_LANGS))
    if unknown or not langs:
        raise ValueError(f"training languages must be XNLI languages ({' '.join(XNLI_LANGS)}), got {list(langs)}")
    nli = load_nli(langs, root)
    if mode == "weakly-supervised":
        return weakly_supervised_pairs(nli, max_pairs=max_pairs, seed=seed)
    return unsupervised_pairs(nli, n_pairs=max_pairs, seed=seed)


def validation_langs(train_langs: Sequence[str]) -> list[str]:
    """NTREX codes of the non-English training languages (validation pairs go to English).

    >>> validation_langs(["en", "de", "zh"])
    ['deu', 'zho_Hans']
    """
    out = [ntrex_code(x) for x in train_langs if x != "en"]
    if not out:
        raise ValueError("no non-English training language to validate on; set valid_langs")
    return out


def heldout_pairs(langs: Sequence[str], n: int, *, seed: int = 0, root: str | Path | None = None) -> HeldOut:
    """``n`` NTREX-128 lines (seeded choice) to English, line j in ``langs[j % len(langs)]``: each English line
    occurs once, so retrieval over the mixed set is well posed."""
    if not langs:
        raise ValueError("no validation languages")
    sides = {x: load_ntrex(x, "eng", root) for x in langs}
    eng = next(iter(sides.values()))[1]
    usable = [j for j in range(len(eng)) if eng[j].strip() and all(s[0][j].strip() for s in sides.values())]
    if n > len(usable):
        raise ValueError(f"asked for {n} validation pairs, NTREX-128 has {len(usable)} usable lines")
    lines = np.random.default_rng(seed).choice(usable, size=n, replace=False)
    chosen = [(langs[k % len(langs)], int(j)) for k, j in enumerate(lines)]
    return HeldOut([sides[x][0][j] for x, j in chosen], [eng[j] for _, j in chosen], [x for x, _ in chosen])
