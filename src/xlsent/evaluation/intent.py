"""Cross-lingual intent classification by leave-one-out nearest neighbour (EMU, Hirota et al. 2020) on xSID.

Each query utterance in language S takes the intent of its cosine nearest neighbour among the labelled
utterances in language T, after removing the query's own translation (same id) from the pool. Acc@1 is the
share of queries labelled correctly.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from tqdm.auto import tqdm

from xlsent.data.xsid import XSID_LANGS
from xlsent.encoders.base import Encoder, l2_normalize
from xlsent.encoders.cache import encoder_id
from xlsent.evaluation.results import TaskResult, file_checksums
from xlsent.evaluation.task import EmbedFn, TaskMetadata, encoder_embed
from xlsent.paths import data_root

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


def evaluate(embed: EmbedFn, *, encoder_id: str, langs: list[str] | None = None, root: str | Path | None = None,
             progress: bool = False, tsne_langs: Sequence[str] = ("en", "de", "zh"), tsne: bool = True,
             seed: int = 0) -> TaskResult:
    """Acc@1 for en->xx, xx->en and xx->xx on xSID test, for every xSID language xx (or those in ``langs``).

    The main score is the mean over all cross-lingual pairs (en->xx and xx->en); ``en-en`` is kept as its own
    score. With ``tsne``, a 2-D t-SNE map of ``tsne_langs`` is stored in ``options["tsne"]`` for the report.
    """
    from xlsent.data.xsid import XSID_LANGS, load_xsid

    start = time.perf_counter()
    base = data_root(root)
    langs = [PIVOT] + [lang for lang in (langs or XSID_LANGS) if lang != PIVOT]
    unknown = sorted(set(langs) - set(XSID_LANGS))
    if unknown:
        raise ValueError(f"unknown xSID language(s) {unknown}; known: {' '.join(XSID_LANGS)}")
    sets: dict[str, EncodedSet] = {}
    for lang in tqdm(langs, disable=not progress, desc="intent", unit="lang"):
        data = load_xsid(lang, "test", base)
        sets[lang] = EncodedSet(np.asarray(data.ids, dtype=str), np.asarray(data.intents, dtype=str),
                                embed(data.texts, lang))
    pairs = direction_pairs(langs)
    scores = {f"{PIVOT}-{PIVOT}": pair_accuracy(sets[PIVOT], sets[PIVOT])}
    for direction in DIRECTIONS:
        scores.update({f"{s}-{t}": pair_accuracy(sets[s], sets[t]) for s, t in pairs[direction]})
    averages = {d: float(np.mean([scores[f"{s}-{t}"]["acc@1"] for s, t in pairs[d]])) for d in DIRECTIONS
                if pairs[d]}
    if pairs["en->xx"]:
        averages["cross-lingual"] = (averages["en->xx"] + averages["xx->en"]) / 2
    main_name = "cross-lingual" if "cross-lingual" in averages else f"{PIVOT}-{PIVOT}"
    main = averages.get(main_name, scores[f"{PIVOT}-{PIVOT}"]["acc@1"])
    options: dict[str, Any] = {"split": "test", "similarity": "cosine", "main": main_name, "seed": seed}
    plot_langs = [lang for lang in tsne_langs if lang in sets]
    if tsne and plot_langs:
        options[TSNE_KEY] = tsne_map({lang: sets[lang] for lang in plot_langs}, seed=seed)
    notes = [
        "leave-one-out nearest neighbour (EMU): the query's own translation (same id) is removed from the pool; "
        "in xx->xx the query itself is removed",
        "each pair uses the utterances present in both languages (Japanese has 250 of the 500)",
        "main score: mean Acc@1 over all cross-lingual pairs (= mean of the en->xx and xx->en averages); "
        "xx->xx averages the monolingual non-English pairs, en-en is reported on its own",
        "pool labels are each language's own gold intents (for Arabic 26 of 500 differ from English, a quirk of "
        "the source that caps its accuracy)",
        "EMU's datasets (HotelQA, ATIS, Quora) are not available; xSID 0.7 test is used instead",
    ]
    files = [base / "xsid" / f"{lang}.test.conll" for lang in langs]
    return TaskResult(
        task="intent", encoder=encoder_id, dataset="xSID 0.7 test (van der Goot et al. 2021)",
        main_score=main, main_metric="acc@1", subset_metric="acc@1", scores=scores, averages=averages, options=options,
        dataset_files=file_checksums([p for p in files if p.is_file()], base), seconds=time.perf_counter() - start,
        notes=notes,
    )


def run(encoder: Encoder, *, langs: list[str] | None = None, root: str | Path | None = None,
        progress: bool = False, tsne_langs: Sequence[str] = ("en", "de", "zh"), tsne: bool = True,
        seed: int = 0) -> TaskResult:
    """:func:`evaluate` ``encoder`` (encodings cached on disk)."""
    return evaluate(encoder_embed(encoder), encoder_id=encoder_id(encoder), langs=langs, root=root,
                    progress=progress, tsne_langs=tsne_langs, tsne=tsne, seed=seed)
