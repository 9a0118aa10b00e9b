"""P@k translation retrieval, the protocol of ABSent (paper 003, Sect. 4.2): is the translation among the top k?

For each test pair (x_i, y_i), x_i is a query searched among *all* test targets y; P@k is the share of queries
whose translation is among the k best-scored targets (Mikolov, Le & Sutskever 2013). Both directions (x->y and
y->x), k = 1 and 5, scored by cosine nearest neighbour (``nn``, the paper's f_d) and by CSLS (Lample et al.
2018, k = 10); :func:`evaluate` also takes further retrieval rules (e.g. Dinu's globally corrected ranks).

Test sets (``langs`` picks them by code; :func:`reserved_sentences` lists the sentences training data must leave
out):

- ``deu``, ``spa`` (short sentences, the paper's Tatoeba): Tatoeba v1 deu-eng / spa-eng, 1000 pairs each; any
  other Tatoeba v1 code (``kaz``, ...) is a set of the same kind;
- ``news-de``, ``news-es`` (long sentences, the paper's Europarl role; no Europarl here): the first 1600 de-en /
  1300 es-en lines of newstest2012 (the paper's test sizes), pairs repeating an earlier sentence dropped;
- ``deu-spa`` (zero-shot de<->es, short): 490 German-Spanish pairs (the paper's number) joined through identical
  English sentences of Tatoeba-Challenge deu-eng and eng-spa (Tatoeba v1 overlaps removed), a seeded sample;
- ``news-de-es`` (zero-shot, long): the first 490 de-es lines of newstest2012.

>>> import numpy as np
>>> cos = np.array([[0.9, 0.1, 0.0], [0.8, 0.7, 0.0], [0.0, 0.2, 0.1]])
>>> gold_ranks(cos).tolist()
[0, 1, 1]
>>> precision_at_k(cos, (1, 2))
{1: 33.33333333333333, 2: 100.0}
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from xlsent.data.parallel import load_newstest, load_tatoeba_challenge
from xlsent.data.tatoeba import FOLDER, load_tatoeba, tatoeba_languages
from xlsent.encoders.base import Encoder, l2_normalize
from xlsent.encoders.cache import encoder_id
from xlsent.evaluation.results import TaskResult, file_checksums
from xlsent.evaluation.selection import csls
from xlsent.evaluation.task import EmbedFn, TaskMetadata, encoder_embed
from xlsent.paths import data_root

ScoreRule = Callable[[np.ndarray], np.ndarray]
"""A retrieval rule: the cosine matrix (queries x targets) -> scores whose row maxima are the retrieved targets."""

NEWSTEST_SIZES = {"news-de": ("de", "en", 1600), "news-es": ("es", "en", 1300), "news-de-es": ("de", "es", 490)}
ZERO_SHOT_SHORT = "deu-spa"
ZERO_SHOT_PAIRS = 490
DEFAULT_SETS = ("deu", "spa", "news-de", "news-es", ZERO_SHOT_SHORT, "news-de-es")
KS = (1, 5)
CSLS_K = 10
NEWSTEST_FOLDER = "parallel/wmt_newstest/2012"
CHALLENGE_FOLDER = "parallel/tatoeba_challenge_test"

METADATA = TaskMetadata(
    name="retrieval_pk",
    description="ABSent's P@k translation retrieval (P@1, P@5 among all test targets, both directions, NN and CSLS)",
    languages=("deu", "spa", "eng", "de", "es", "en"),
    languages_note="sets deu spa (Tatoeba v1, or any other Tatoeba v1 code), news-de news-es news-de-es "
                   "(newstest2012), deu-spa (Tatoeba-Challenge joined through English)",
    data_files=(f"{FOLDER}/tatoeba.deu-eng.*", f"{FOLDER}/tatoeba.spa-eng.*", f"{NEWSTEST_FOLDER}/newstest2012.*",
                f"{CHALLENGE_FOLDER}/deu-eng/*", f"{CHALLENGE_FOLDER}/eng-spa/*"),
    main_score="mean of x->y and y->x P@1 (cosine nearest neighbour), averaged over the sets run",
    papers=("003 ABSent",),
    reference="Fu et al. (2020), ABSent: Cross-Lingual Sentence Representation Mapping with Bidirectional GANs, "
              "AAAI (protocol); data: Tatoeba v1 (Artetxe & Schwenk 2019), WMT newstest2012, Tatoeba-Challenge "
              "test v2021-08-07 (Tiedemann 2020)",
)


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


# --- scoring ---------------------------------------------------------------------------------------------------


def gold_ranks(scores: np.ndarray) -> np.ndarray:
    """0-based rank of the gold target (the diagonal) in each row of ``scores``; ties go to the lower column."""
    n = scores.shape[0]
    if scores.shape != (n, n):
        raise ValueError(f"scores must be square (row i's gold target is column i), got {scores.shape}")
    gold = scores.diagonal()[:, None]
    col = np.arange(n)
    return (scores > gold).sum(axis=1) + ((scores == gold) & (col[None, :] < col[:, None])).sum(axis=1)


def precision_at_k(scores: np.ndarray, ks: Sequence[int] = KS) -> dict[int, float]:
    """P@k (percent) for each k: the share of rows whose gold column is among the k highest scores."""
    ranks = gold_ranks(scores)
    return {k: float(np.mean(ranks < k)) * 100 for k in ks}


def pair_scores(x: np.ndarray, y: np.ndarray, rules: Mapping[str, ScoreRule], ks: Sequence[int] = KS
                ) -> dict[str, float]:
    """P@k of both directions and their mean per rule, from row-aligned embeddings (rows are normalised here).

    Metric names: ``<rule> x->y p@k``, ``<rule> y->x p@k``, ``<rule> mean p@k``; the ``nn`` rule has no prefix.
    A rule gets the cosine matrix with the queries as rows (its transpose for y->x).
    """
    if x.shape != y.shape:
        raise ValueError(f"x {x.shape} and y {y.shape} must have the same shape (row i is a pair)")
    cos = l2_normalize(x) @ l2_normalize(y).T
    out: dict[str, float] = {}
    for name, rule in rules.items():
        prefix = "" if name == "nn" else f"{name} "
        fwd, bwd = precision_at_k(rule(cos), ks), precision_at_k(rule(cos.T), ks)
        for k in ks:
            out[f"{prefix}x->y p@{k}"] = fwd[k]
            out[f"{prefix}y->x p@{k}"] = bwd[k]
            out[f"{prefix}mean p@{k}"] = (fwd[k] + bwd[k]) / 2
    out["pairs"] = float(len(x))
    return out


def nn_rule(cos: np.ndarray) -> np.ndarray:
    """Cosine nearest neighbour: the scores are the cosines."""
    return cos


def csls_rule(cos: np.ndarray) -> np.ndarray:
    """CSLS with k = 10 (:func:`xlsent.evaluation.selection.csls`)."""
    return csls(cos, CSLS_K)


RULES: dict[str, ScoreRule] = {"nn": nn_rule, "csls": csls_rule}


# --- test sets -------------------------------------------------------------------------------------------------


def _first_unique(x: Sequence[str], y: Sequence[str], size: int) -> tuple[list[str], list[str]]:
    """The first ``size`` pairs (stripped, non-empty) whose sentences occur in no earlier kept pair."""
    seen: set[str] = set()
    xs: list[str] = []
    ys: list[str] = []
    for a, b in zip(x, y, strict=True):
        a, b = a.strip(), b.strip()
        if a and b and a not in seen and b not in seen:
            seen.update((a, b))
            xs.append(a)
            ys.append(b)
            if len(xs) == size:
                break
    return xs, ys


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
        x, y = _first_unique(*load_newstest(2012, a, b, root=base), size)
        files = tuple(base / NEWSTEST_FOLDER / f"newstest2012.{lang}" for lang in (a, b))
        return TestSet(code, a, b, x, y, files, f"newstest2012 {a}-{b}, first {len(x)} lines")
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


# --- the task --------------------------------------------------------------------------------------------------


def evaluate(embed: EmbedFn, *, encoder_id: str, langs: list[str] | None = None, root: str | Path | None = None,
             progress: bool = False, rules: Mapping[str, ScoreRule] | None = None) -> TaskResult:
    """P@1 and P@5 of both directions per test set (``langs``: set codes, default :data:`DEFAULT_SETS`).

    ``rules`` adds retrieval rules to ``nn`` and ``csls`` (their metrics are prefixed with the rule's name).
    Every pair of sentences is embedded with the set's languages (``embed(x, x_lang)``, ``embed(y, y_lang)``).
    """
    start = time.perf_counter()
    base = data_root(root)
    codes = list(langs or DEFAULT_SETS)
    every_rule = {**RULES, **(rules or {})}
    scores: dict[str, dict[str, float]] = {}
    files: list[Path] = []
    notes = []
    for code in tqdm(codes, disable=not progress, desc="retrieval_pk", unit="set"):
        test = load_set(code, base)
        files += list(test.files)
        scores[code] = pair_scores(embed(test.x, test.x_lang), embed(test.y, test.y_lang), every_rule)
        notes.append(f"{code}: x = {test.x_lang}, y = {test.y_lang}; {test.description}")
    main = float(np.mean([s["mean p@1"] for s in scores.values()]))
    return TaskResult(
        task="retrieval_pk", encoder=encoder_id, dataset="Tatoeba v1, newstest2012, Tatoeba-Challenge (ABSent P@k)",
        main_score=main, main_metric="mean p@1", subset_metric="mean p@1", scores=scores,
        options={"sets": codes, "ks": list(KS), "rules": list(every_rule), "csls_k": CSLS_K},
        dataset_files=file_checksums(sorted(set(files)), base), seconds=time.perf_counter() - start,
        notes=["P@k: share of queries whose translation is among the k best of all the set's targets (percent); "
               "rows without a rule prefix are cosine nearest neighbour", *notes],
    )


def run(encoder: Encoder, *, langs: list[str] | None = None, root: str | Path | None = None,
        progress: bool = False) -> TaskResult:
    """:func:`evaluate` ``encoder`` (encodings cached on disk)."""
    return evaluate(encoder_embed(encoder), encoder_id=encoder_id(encoder), langs=langs, root=root,
                    progress=progress)
