"""``xlsent filter`` on the labelled noisy dev bitexts (:mod:`xlsent.data.noisy_bitext`): keep-F1 (clean pairs are
the positives) and the share of each noise kind dropped, for the filter with its defaults and for two baselines
measured in the same run: the best single cosine threshold and the best single margin threshold, each picked on the
labels themselves (so they are upper bounds of what one threshold can do).

Rows are ``PAIR: METHOD``; ``xlsent eval filter --model MODEL`` writes ``results/filter__MODEL.json``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from xlsent.data.noisy_bitext import DEV_PAIRS, NOISE_KINDS, NoisyBitext, build_noisy_bitext
from xlsent.encoders.base import Encoder
from xlsent.evaluation.task import SubsetScore, Summary, Task, TaskMetadata
from xlsent.mining.config import SearchConfig
from xlsent.mining.filter_config import FilterConfig

if TYPE_CHECKING:
    from xlsent.mining.job import PairScores

METHODS = ("xlsent filter", "xlsent filter at the mining threshold", "best cosine threshold", "best margin threshold")
"""The rows of each dev pair: the filter with its defaults, the filter cutting at the encoder's mining threshold
instead of its filter cut, then the two label-picked baselines."""
BASELINES = METHODS[2:]
MUST_DROP = {"wrong_language": 95.0, "untranslated": 95.0, "boilerplate": 90.0}
"""The noise kinds the filter must drop, and the least share (percent) it must drop of each."""

METADATA = TaskMetadata(
    name="filter",
    description="xlsent filter on labelled noisy dev bitexts: keep-F1 (clean pairs positive) and the share of each "
                "noise kind dropped, against the best single cosine and margin thresholds picked on the labels",
    languages=("de", "zh", "en"),
    data_files=("parallel/ntrex128/NTREX-128/newstest2019-*.txt",
                "parallel/tatoeba_challenge_test/*/tatoeba-test-v2021-08-07.*"),
    main_score="mean keep-F1 of xlsent filter (its defaults, the encoder's calibrated cut) over the dev pairs",
    papers=(),
    reference="dev bitexts built by xlsent.data.noisy_bitext from NTREX-128 and the Tatoeba-Challenge test pairs",
)


def keep_metrics(keep: np.ndarray, kind: Sequence[str]) -> dict[str, float]:
    """Keep-F1, precision and recall (clean pairs positive) and the share of each noise kind dropped, in percent.

    >>> m = keep_metrics(np.array([True, True, False, False]), ["clean", "boilerplate", "clean", "boilerplate"])
    >>> m["keep_f1"], m["drop_boilerplate"]
    (50.0, 50.0)
    """
    labels = np.array(kind)
    clean = labels == "clean"
    hits = int((keep & clean).sum())
    precision = hits / max(int(keep.sum()), 1)
    recall = hits / max(int(clean.sum()), 1)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    metrics = {"keep_f1": 100 * f1, "precision": 100 * precision, "recall": 100 * recall}
    for noise in NOISE_KINDS:
        rows = labels == noise
        if rows.any():
            metrics[f"drop_{noise}"] = 100 * float((~keep[rows]).mean())
    return metrics


class Filter(Task):
    """The filter and the two baselines on each dev pair's test split; ``threshold`` is the score cut of ``xlsent
    filter --threshold auto``, which :meth:`encoder_options` looks up."""

    metadata = METADATA
    subset_kind = "dev row"
    subset_metric = "keep_f1"
    unit = "row"
    data_check_options: ClassVar[dict[str, Any]] = {"threshold": math.nan, "mining_threshold": math.nan}

    def __init__(self, embed: Any, base: Path, *, threshold: float, mining_threshold: float,
                 config: FilterConfig | None = None) -> None:
        super().__init__(embed, base)
        self.threshold, self.mining_threshold = threshold, mining_threshold
        self.config = config or FilterConfig()

    @classmethod
    def encoder_options(cls, encoder: Encoder) -> dict[str, Any]:
        """``threshold``: the cut ``--threshold auto`` takes for ``encoder`` (its filter cut, else its mining
        threshold: :func:`~xlsent.mining.filter_calibration.auto_filter_threshold`); ``mining_threshold``: its
        calibrated mining threshold."""
        from xlsent.mining.auto_threshold import auto_threshold
        from xlsent.mining.filter_calibration import auto_filter_threshold

        search = SearchConfig()
        return {"threshold": auto_filter_threshold(encoder, margin=search.margin, k=search.k).threshold,
                "mining_threshold": auto_threshold(encoder, margin=search.margin, k=search.k).threshold}

    def known_subsets(self) -> list[str]:
        return [f"{pair}: {method}" for pair in DEV_PAIRS for method in METHODS]

    def select(self, langs: Sequence[str] | None) -> list[str]:
        """Every row of the dev pairs named in ``langs`` (``de`` or ``de-en``; default all)."""
        if not langs:
            return self.known_subsets()
        pairs = [pair for pair in DEV_PAIRS if {pair, pair.split("-")[0]} & set(langs)]
        unknown = sorted(set(langs) - {code for pair in pairs for code in (pair, pair.split("-")[0])})
        if unknown:
            raise ValueError(f"unknown dev pair(s) {unknown}; known: {' '.join(DEV_PAIRS)}")
        return [f"{pair}: {method}" for pair in pairs for method in METHODS]

    @lru_cache(maxsize=4)  # noqa: B019 -- one task object per run; the three rows of a pair share its scores
    def _scored(self, pair: str) -> tuple[NoisyBitext, PairScores]:
        from xlsent.mining.job import score_texts

        bitext = build_noisy_bitext(pair, self.base, split="test")
        src_lang, tgt_lang = pair.split("-")
        x, y = self.embed(bitext.src, src_lang), self.embed(bitext.tgt, tgt_lang)
        return bitext, score_texts(bitext.src, bitext.tgt, x, y, SearchConfig())

    def score(self, subset: str) -> SubsetScore:
        from xlsent.mining.filtering import decide, pair_values
        from xlsent.mining.threshold_search import best_threshold

        pair, method = subset.split(": ")
        bitext, scored = self._scored(pair)
        if method in METHODS[:2]:
            src_lang, tgt_lang = pair.split("-")
            cut = self.threshold if method == METHODS[0] else self.mining_threshold
            values = pair_values(bitext.src, bitext.tgt, (src_lang, tgt_lang), self.config)
            decisions = decide(values, scored.score, self.config, threshold=cut)
            note = f"{pair}: {bitext.description}; {bitext.counts()}" if method == METHODS[0] else ""
            return SubsetScore({**keep_metrics(decisions.keep, bitext.kind), "threshold": cut}, note)
        values_of = scored.cosine if method == "best cosine threshold" else scored.score
        clean = np.array(bitext.kind) == "clean"
        best = best_threshold(values_of, clean, int(clean.sum()))
        return SubsetScore({**keep_metrics(values_of >= best.threshold, bitext.kind), "threshold": best.threshold})

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        pairs = list(dict.fromkeys(row.split(": ")[0] for row in scores))
        averages = {method: float(np.mean([scores[f"{p}: {method}"]["keep_f1"] for p in pairs])) for method in METHODS}
        notes = []
        for pair in pairs:
            ours = scores[f"{pair}: xlsent filter"]
            beaten = [m for m in BASELINES if ours["keep_f1"] > scores[f"{pair}: {m}"]["keep_f1"]]
            drops = ", ".join(f"{kind} {ours[f'drop_{kind}']:.1f}% (needs {need:g})"
                              for kind, need in MUST_DROP.items())
            held = len(beaten) == len(BASELINES) and all(ours[f"drop_{k}"] >= need for k, need in MUST_DROP.items())
            notes.append(f"{pair}: xlsent filter keep-F1 {ours['keep_f1']:.1f} beats "
                         f"{' and '.join(beaten) or 'neither baseline'}; drops {drops}: "
                         f"{'every' if held else 'NOT every'} done-when target holds")
        return Summary(dataset="noisy dev bitexts " + " ".join(pairs), main_score=averages["xlsent filter"],
                       main_metric="mean keep-f1 of xlsent filter", averages=averages,
                       options={"threshold": self.threshold, "mining_threshold": self.mining_threshold,
                                "filter": asdict(self.config)}, notes=notes,
                       files=[path for pair in pairs for path in self._scored(pair)[0].files])
