"""The test sets of ABSent's P@k retrieval (:mod:`xlsent.evaluation.retrieval_pk`): which sentences each holds, and
so which sentences training data must leave out (:func:`reserved_sentences`).

- ``deu``, ``spa`` (short sentences, the paper's Tatoeba): Tatoeba v1 deu-eng / spa-eng, 1000 pairs each; any
  other Tatoeba v1 code (``kaz``, ...) is a set of the same kind;
- ``news-de``, ``news-es`` (long sentences, the paper's Europarl role; no Europarl here): the first 1600 de-en /
  1300 es-en lines of newstest2012 (the paper's test sizes), pairs repeating an earlier sentence dropped;
- ``deu-spa`` (zero-shot de<->es, short): 490 German-Spanish pairs (the paper's number) joined through identical
  English sentences of Tatoeba-Challenge deu-eng and eng-spa (Tatoeba v1 overlaps removed), a seeded sample;
- ``news-de-es`` (zero-shot, long): the first 490 de-es lines of newstest2012.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.data.parallel import load_newstest, load_tatoeba_challenge
from xlsent.data.tatoeba import FOLDER, load_tatoeba, tatoeba_languages
from xlsent.paths import data_root

NEWSTEST_SIZES = {"news-de": ("de", "en", 1600), "news-es": ("es", "en", 1300), "news-de-es": ("de", "es", 490)}
ZERO_SHOT_SHORT = "deu-spa"
ZERO_SHOT_PAIRS = 490
DEFAULT_SETS = ("deu", "spa", "news-de", "news-es", ZERO_SHOT_SHORT, "news-de-es")
NEWSTEST_FOLDER = "parallel/wmt_newstest/2012"
CHALLENGE_FOLDER = "parallel/tatoeba_challenge_test"


@dataclass(frozen=True)
class TestSet:
    """Row-aligned test pairs: ``x[i]`` translates ``y[i]``; the languages as passed to ``embed``."""

    code: str
    x_lang: str
    y_lang: str
    x: list[str]
    y: list[str]
    files: tuple[Path, ...]
    description: str


def _first_unique(x: Sequence[str], y: Sequence[str], size: int) -> tuple[list[str], list[str], int]:
    """The first ``size`` pairs (stripped, non-empty) whose sentences occur in no earlier kept pair, and the number
    of lines read to find them."""
    seen: set[str] = set()
    xs: list[str] = []
    ys: list[str] = []
    read = 0
    for a, b in zip(x, y, strict=True):
        read += 1
        a, b = a.strip(), b.strip()
        if a and b and a not in seen and b not in seen:
            seen.update((a, b))
            xs.append(a)
            ys.append(b)
            if len(xs) == size:
                break
    return xs, ys, read


def _challenge_triples(base: Path) -> list[tuple[str, str, str]]:
    """(German, Spanish, English) of English sentences with a German and a Spanish Tatoeba-Challenge translation
    (the first of each), Tatoeba v1 overlaps removed, sorted, no German or Spanish sentence twice."""
    firsts: list[dict[str, str]] = []
    for code in ("deu", "spa"):
        xx, en = load_tatoeba_challenge(code, base, exclude_tatoeba_v1=True)
        first: dict[str, str] = {}
        for x, e in zip(xx, en, strict=True):
            if x.strip() and e.strip():
                first.setdefault(e.strip(), x.strip())
        firsts.append(first)
    de, es = firsts
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for triple in sorted((de[e], es[e], e) for e in de.keys() & es.keys()):
        if triple[0] not in seen and triple[1] not in seen:
            seen.update(triple[:2])
            out.append(triple)
    return out


def load_set(code: str, root: str | Path | None = None) -> TestSet:
    """The test set named ``code`` (see the module docstring)."""
    base = data_root(root)
    if code in NEWSTEST_SIZES:
        a, b, size = NEWSTEST_SIZES[code]
        x, y, read = _first_unique(*load_newstest(2012, a, b, root=base), size)
        files = tuple(base / NEWSTEST_FOLDER / f"newstest2012.{lang}" for lang in (a, b))
        dropped = f" ({read - len(x)} dropped: an empty side or a repeated sentence)" if read > len(x) else ""
        return TestSet(code, a, b, x, y, files, f"newstest2012 {a}-{b}, first {read} lines: {len(x)} pairs{dropped}")
    if code == ZERO_SHOT_SHORT:
        triples = _challenge_triples(base)
        rows = np.sort(np.random.default_rng(0).choice(len(triples), min(ZERO_SHOT_PAIRS, len(triples)),
                                                       replace=False))
        folder = base / CHALLENGE_FOLDER
        files = tuple(sorted([*(folder / "deu-eng").glob("*.deu"), *(folder / "deu-eng").glob("*.eng"),
                              *(folder / "eng-spa").glob("*.spa"), *(folder / "eng-spa").glob("*.eng")]))
        return TestSet(code, "deu", "spa", [triples[i][0] for i in rows], [triples[i][1] for i in rows], files,
                       f"Tatoeba-Challenge deu-spa through English, {len(rows)} of {len(triples)} pairs")
    if code in tatoeba_languages(base):
        x, y = load_tatoeba(code, base)
        files = (base / FOLDER / f"tatoeba.{code}-eng.{code}", base / FOLDER / f"tatoeba.{code}-eng.eng")
        return TestSet(code, code, "eng", x, y, files, f"Tatoeba v1 {code}-eng, {len(x)} pairs")
    raise ValueError(f"unknown retrieval_pk set {code!r}: use {', '.join(DEFAULT_SETS)} or a Tatoeba v1 language")


def reserved_sentences(root: str | Path | None = None) -> set[str]:
    """Every sentence (stripped) of the :data:`DEFAULT_SETS`, and the English sentences joining the ``deu-spa``
    pairs: training data must leave them out (mapping methods also leave out all of Tatoeba v1)."""
    base = data_root(root)
    out: set[str] = set()
    for code in DEFAULT_SETS:
        test = load_set(code, base)
        out.update(s.strip() for s in (*test.x, *test.y))
    zero_shot = set(load_set(ZERO_SHOT_SHORT, base).x)
    out.update(e for d, _, e in _challenge_triples(base) if d in zero_shot)
    return out
