"""P@k translation retrieval, the protocol of ABSent (paper 003, Sect. 4.2): is the translation among the top k?

For each test pair (x_i, y_i), x_i is a query searched among *all* test targets y; P@k is the share of queries
whose translation is among the k best-scored targets (Mikolov, Le & Sutskever 2013). Both directions (x->y and
y->x), k = 1 and 5, scored by cosine nearest neighbour (``nn``, the paper's f_d) and by CSLS (Lample et al.
2018, k = 10); :func:`evaluate` also takes further retrieval rules (e.g. Dinu's globally corrected ranks).

The test sets (``deu``, ``spa``, any other Tatoeba v1 code; ``news-de``, ``news-es``; the zero-shot ``deu-spa`` and
``news-de-es``) are built by :mod:`xlsent.data.retrieval_pk`, which also lists the sentences training data must leave
out; ``langs`` picks them by code.

>>> import numpy as np
>>> cos = np.array([[0.9, 0.1, 0.0], [0.8, 0.7, 0.0], [0.0, 0.2, 0.1]])
>>> gold_ranks(cos).tolist()
[0, 1, 1]
>>> precision_at_k(cos, (1, 2))
{1: 33.33333333333333, 2: 100.0}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from xlsent.data.retrieval_pk import CHALLENGE_FOLDER, DEFAULT_SETS, NEWSTEST_FOLDER, load_set
from xlsent.data.tatoeba import FOLDER, RELEASE_LANGUAGES, tatoeba_languages
from xlsent.encoders.base import l2_normalize
from xlsent.evaluation.selection import csls
from xlsent.evaluation.task import EmbedFn, SubsetScore, Summary, Task, TaskMetadata
from xlsent.evaluation.tatoeba import tatoeba_files

ScoreRule = Callable[[np.ndarray], np.ndarray]
"""A retrieval rule: the cosine matrix (queries x targets) -> scores whose row maxima are the retrieved targets."""

KS = (1, 5)
CSLS_K = 10

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


# --- the task --------------------------------------------------------------------------------------------------


class RetrievalPk(Task):
    """P@1 and P@5 of both directions per test set (``langs``: set codes, default :data:`DEFAULT_SETS`).

    ``rules`` adds retrieval rules to ``nn`` and ``csls`` (their metrics are prefixed with the rule's name).
    Every pair of sentences is embedded with the set's languages (``embed(x, x_lang)``, ``embed(y, y_lang)``).
    """

    metadata = METADATA
    subset_kind = "retrieval_pk set"
    subset_metric = "mean p@1"
    unit = "set"

    def __init__(self, embed: EmbedFn, base: Path, *, rules: Mapping[str, ScoreRule] | None = None) -> None:
        super().__init__(embed, base)
        self.rules = {**RULES, **(rules or {})}
        self.files: list[Path] = []

    def known_subsets(self) -> list[str]:
        tatoeba = tatoeba_languages(self.base) if (self.base / FOLDER).is_dir() else []
        return list(dict.fromkeys([*DEFAULT_SETS, *tatoeba]))

    def all_subsets(self) -> list[str]:
        return list(dict.fromkeys([*DEFAULT_SETS, *RELEASE_LANGUAGES]))

    def subset_files(self, subset: str) -> list[str]:
        """The files of a Tatoeba v1 set (:meth:`known_subsets` holds the other sets whether or not their data are
        there: their loaders name what they lack)."""
        return tatoeba_files(subset)

    def default_subsets(self) -> list[str]:
        return list(DEFAULT_SETS)

    def score(self, subset: str) -> SubsetScore:
        test = load_set(subset, self.base)
        self.files += test.files
        return SubsetScore(pair_scores(self.embed(test.x, test.x_lang), self.embed(test.y, test.y_lang), self.rules),
                           f"{subset}: x = {test.x_lang}, y = {test.y_lang}; {test.description}")

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        return Summary(
            dataset="Tatoeba v1, newstest2012, Tatoeba-Challenge (ABSent P@k)",
            main_score=float(np.mean([s["mean p@1"] for s in scores.values()])), main_metric="mean p@1", averages={},
            options={"sets": list(scores), "ks": list(KS), "rules": list(self.rules), "csls_k": CSLS_K},
            notes=["P@k: share of queries whose translation is among the k best of all the set's targets (percent); "
                   "rows without a rule prefix are cosine nearest neighbour"],
            files=sorted(set(self.files)),
        )


evaluate = RetrievalPk.evaluate
