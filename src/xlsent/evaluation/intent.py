"""Cross-lingual intent classification by leave-one-out nearest neighbour (EMU, Hirota et al. 2020) on xSID.

Each query utterance in language S takes the intent of its cosine nearest neighbour among the labelled
utterances in language T, after removing the query's own translation (same id) from the pool. Acc@1 is the
share of queries labelled correctly.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from xlsent.data.xsid import XSID_LANGS, load_xsid
from xlsent.encoders.base import l2_normalize
from xlsent.evaluation.task import EmbedFn, SubsetScore, Summary, Task, TaskMetadata

log = logging.getLogger(__name__)

PIVOT = "en"
DIRECTIONS = ("en->xx", "xx->en", "xx->xx")
TSNE_KEY = "tsne"
"""Key of ``TaskResult.options`` holding the 2-D t-SNE map that ``xlsent report`` plots."""

METADATA = TaskMetadata(
    name="intent",
    description="xSID intent classification by leave-one-out nearest neighbour (EMU protocol)",
    languages=XSID_LANGS,
    data_files=("xsid/*.test.conll",),
    main_score="Acc@1 averaged over all cross-lingual pairs (en->xx and xx->en) of the languages run; en-en alone "
               "when only English runs",
    papers=("002 EMU",),
    reference="van der Goot et al. (2021), From Masked Language Modeling to Translation: Non-English Auxiliary "
              "Tasks Improve Zero-shot Spoken Language Understanding (xSID 0.7); protocol of Hirota et al. (2020)",
)


def loo_nn_accuracy(queries: np.ndarray, query_ids: ArrayLike, query_labels: ArrayLike,
                    pool: np.ndarray, pool_ids: ArrayLike, pool_labels: ArrayLike) -> float:
    """Acc@1 (%) of labelling each query with its cosine nearest neighbour in ``pool``, skipping same-id rows.

    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> loo_nn_accuracy(q, ["a", "b"], ["x", "y"], q, ["a", "b"], ["x", "y"])  # only the other row is left
    0.0
    >>> loo_nn_accuracy(q, ["a", "b"], ["x", "y"], np.vstack([q, q]), ["a", "b", "c", "d"], ["x", "y", "x", "y"])
    100.0
    """
    sims = l2_normalize(queries) @ l2_normalize(pool).T
    sims[np.asarray(query_ids)[:, None] == np.asarray(pool_ids)[None, :]] = -np.inf
    predicted = np.asarray(pool_labels)[sims.argmax(axis=1)]
    return float(np.mean(predicted == np.asarray(query_labels))) * 100


@dataclass(frozen=True)
class EncodedSet:
    """One language's utterances: ids, gold intents and embeddings, row-aligned."""

    ids: np.ndarray
    intents: np.ndarray
    vectors: np.ndarray

    def restrict(self, keep: set[str]) -> EncodedSet:
        """The rows whose id is in ``keep``, in the original order."""
        mask = np.isin(self.ids, list(keep))
        return EncodedSet(self.ids[mask], self.intents[mask], self.vectors[mask])


def pair_accuracy(src: EncodedSet, tgt: EncodedSet) -> dict[str, float]:
    """Acc@1 of ``src`` queries against the ``tgt`` pool, both cut to the utterances they share."""
    shared = set(src.ids.tolist()) & set(tgt.ids.tolist())
    s, t = src.restrict(shared), tgt.restrict(shared)
    return {"acc@1": loo_nn_accuracy(s.vectors, s.ids, s.intents, t.vectors, t.ids, t.intents),
            "queries": float(len(s.ids))}


def direction_pairs(langs: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """The (query, pool) language pairs of each direction; ``xx`` ranges over ``langs`` except English.

    >>> direction_pairs(["en", "de"])
    {'en->xx': [('en', 'de')], 'xx->en': [('de', 'en')], 'xx->xx': [('de', 'de')]}
    """
    others = [lang for lang in langs if lang != PIVOT]
    return {"en->xx": [(PIVOT, x) for x in others], "xx->en": [(x, PIVOT) for x in others],
            "xx->xx": [(x, x) for x in others]}


def tsne_map(sets: dict[str, EncodedSet], *, n_intents: int = 10, per_intent: int = 30,
             seed: int = 0) -> dict[str, Any]:
    """A 2-D t-SNE of the utterances of the ``n_intents`` most frequent intents, in every language of ``sets``.

    Uses the first ``per_intent`` shared utterances of each intent (the same ones in every language), cosine
    distance, PCA initialisation and a fixed seed. Returns ``{"points", "labels", "langs", "method"}``.
    """
    from sklearn.manifold import TSNE

    shared = set.intersection(*(set(s.ids.tolist()) for s in sets.values()))
    first = next(iter(sets.values())).restrict(shared)
    top = [intent for intent, _ in Counter(first.intents.tolist()).most_common(n_intents)]
    chosen: set[str] = set()
    for intent in top:
        chosen |= set(first.ids[first.intents == intent][:per_intent].tolist())
    parts = {lang: s.restrict(chosen) for lang, s in sets.items()}
    vectors = np.vstack([p.vectors for p in parts.values()])
    perplexity = float(min(30.0, (len(vectors) - 1) / 3))
    points = TSNE(n_components=2, perplexity=perplexity, metric="cosine", init="pca",
                  random_state=seed).fit_transform(vectors)
    return {"points": np.round(points, 3).tolist(),
            "labels": [str(i) for p in parts.values() for i in p.intents],
            "langs": [lang for lang, p in parts.items() for _ in p.ids],
            "method": f"sklearn t-SNE, cosine, PCA init, perplexity {perplexity:g}, seed {seed}; "
                      f"{len(top)} most frequent intents, at most {per_intent} utterances each"}


class Intent(Task):
    """Acc@1 for en->xx, xx->en and xx->xx on xSID test, for every xSID language xx (or those in ``langs``).

    The subsets are the (query, pool) language pairs, English with itself first. The main score is the mean over all
    cross-lingual pairs (en->xx and xx->en); ``en-en`` is kept as its own score. With ``tsne``, a 2-D t-SNE map of
    ``tsne_langs`` is stored in ``options["tsne"]`` for the report.
    """

    metadata = METADATA
    subset_kind = "xSID language"
    subset_metric = "acc@1"
    unit = "pair"

    def __init__(self, embed: EmbedFn, base: Path, *, tsne_langs: Sequence[str] = ("en", "de", "zh"),
                 tsne: bool = True, seed: int = 0) -> None:
        super().__init__(embed, base)
        self.tsne_langs, self.tsne, self.seed = tsne_langs, tsne, seed
        self.langs: list[str] = []
        self.directions: dict[str, list[tuple[str, str]]] = {}
        self.pairs: dict[str, tuple[str, str]] = {}
        self.sets: dict[str, EncodedSet] = {}

    def known_subsets(self) -> list[str]:
        return list(XSID_LANGS)

    def select(self, langs: Sequence[str] | None) -> list[str]:
        """The pairs of English and the languages in ``langs`` (default all): ``en-en``, then each direction's."""
        self.langs = [PIVOT] + [lang for lang in super().select(langs) if lang != PIVOT]
        self.directions = direction_pairs(self.langs)
        pairs = [(PIVOT, PIVOT)] + [pair for d in DIRECTIONS for pair in self.directions[d]]
        self.pairs = {f"{s}-{t}": (s, t) for s, t in pairs}
        return list(self.pairs)

    def encoded(self, lang: str) -> EncodedSet:
        """The xSID test utterances of ``lang``, embedded once per run."""
        if lang not in self.sets:
            data = load_xsid(lang, "test", self.base)
            self.sets[lang] = EncodedSet(np.asarray(data.ids, dtype=str), np.asarray(data.intents, dtype=str),
                                         self.embed(data.texts, lang))
        return self.sets[lang]

    def score(self, subset: str) -> SubsetScore:
        query, pool = self.pairs[subset]
        return SubsetScore(pair_accuracy(self.encoded(query), self.encoded(pool)))

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        averages = {d: float(np.mean([scores[f"{s}-{t}"]["acc@1"] for s, t in pairs]))
                    for d, pairs in self.directions.items() if pairs}
        if self.directions["en->xx"]:
            averages["cross-lingual"] = (averages["en->xx"] + averages["xx->en"]) / 2
        main_name = "cross-lingual" if "cross-lingual" in averages else f"{PIVOT}-{PIVOT}"
        options: dict[str, Any] = {"split": "test", "similarity": "cosine", "main": main_name, "seed": self.seed}
        plot_langs = [lang for lang in self.tsne_langs if lang in self.sets]
        if self.tsne and plot_langs:
            options[TSNE_KEY] = tsne_map({lang: self.sets[lang] for lang in plot_langs}, seed=self.seed)
        return Summary(
            dataset="xSID 0.7 test (van der Goot et al. 2021)",
            main_score=averages.get(main_name, scores[f"{PIVOT}-{PIVOT}"]["acc@1"]), main_metric="acc@1",
            averages=averages, options=options,
            notes=[
                "leave-one-out nearest neighbour (EMU): the query's own translation (same id) is removed from the "
                "pool; in xx->xx the query itself is removed",
                "each pair uses the utterances present in both languages (Japanese has 250 of the 500)",
                "main score: mean Acc@1 over all cross-lingual pairs (= mean of the en->xx and xx->en averages); "
                "xx->xx averages the monolingual non-English pairs, en-en is reported on its own",
                "pool labels are each language's own gold intents (for Arabic 26 of 500 differ from English, a quirk "
                "of the source that caps its accuracy)",
                "EMU's datasets (HotelQA, ATIS, Quora) are not available; xSID 0.7 test is used instead",
            ],
            files=[self.base / "xsid" / f"{lang}.test.conll" for lang in self.langs],
        )


evaluate = Intent.evaluate
