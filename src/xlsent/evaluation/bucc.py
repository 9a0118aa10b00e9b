"""BUCC bitext mining (Artetxe & Schwenk 2019): ratio margin, candidates, threshold optimised on gold."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xlsent.data.bucc import NEWSTEST_BUCC_LANGS, BuccSet, load_bucc_sample, newstest_bucc
from xlsent.evaluation.task import EmbedFn, SubsetScore, Summary, Task, TaskMetadata
from xlsent.mining.threshold_search import score_set

SAMPLE = "zh"
"""Code of the BUCC 2018 sample set (zh-en); the other sets are named by their newstest language."""
SETS: dict[str, str] = {SAMPLE: "zh-en (bucc2018 sample)", **{x: f"{x}-en (newstest)" for x in NEWSTEST_BUCC_LANGS}}
"""Set code -> the name of its row in ``TaskResult.scores``."""

METADATA = TaskMetadata(
    name="bucc",
    description="BUCC-style bitext mining with the ratio margin (F1 with the threshold optimised on gold)",
    languages=(SAMPLE, *NEWSTEST_BUCC_LANGS, "en"),
    data_files=("bucc2018_sample/zh-en.dev.*", "parallel/wmt_newstest/*/newstest*.*",
                "parallel/wmt_newstest/2014/*-en/newstest2014.*"),
    main_score="F1 on the zh-en BUCC 2018 sample; without it, F1 on the one newstest-built set run, else the mean "
               "F1 over the newstest-built sets run (main_metric names which)",
    papers=("001 LASER", "000 DuEAM", "004 dual-pivot"),
    reference="Zweigenbaum, Sharoff & Rapp (2018), Overview of the Third BUCC Shared Task (sample split, zh-en); "
              "the other sets are built here from WMT newstest 2008-2014 (xlsent.data.bucc.newstest_bucc)",
)


def load_set(code: str, root: str | Path | None = None) -> BuccSet:
    """The BUCC set of ``code`` (a key of :data:`SETS`): the zh-en sample, or the newstest-built ``code``-en set."""
    return load_bucc_sample("zh-en", root) if code == SAMPLE else newstest_bucc(code, root)


def f1_summary(f1: dict[str, float]) -> tuple[str, float, dict[str, float]]:
    """Main metric, main score and averages of the per-set F1 of a run (keys: set codes of :data:`SETS`).

    The main score is the sample set's F1 when it ran, else the newstest sets' (mean) F1; averages are named by
    their members and given only where they average more than one set and differ from each other.

    >>> f1_summary({"zh": 90.0, "de": 80.0, "fr": 70.0})
    ('f1, zh-en bucc2018 sample', 90.0, {'newstest de fr': 75.0, '3 sets: zh de fr': 80.0})
    >>> f1_summary({"de": 80.0, "fr": 70.0})
    ('mean f1 over newstest de fr', 75.0, {'newstest de fr': 75.0})
    """
    newstest = [x for x in SETS if x in f1 and x != SAMPLE]
    everything = [x for x in SETS if x in f1]
    newstest_name = "newstest " + " ".join(newstest)
    averages = {}
    if len(newstest) > 1:
        averages[newstest_name] = float(np.mean([f1[x] for x in newstest]))
    if SAMPLE in f1 and newstest:
        listed = " ".join(everything)
        name = f"all {len(SETS)} sets" if len(everything) == len(SETS) else f"{len(everything)} sets: {listed}"
        averages[name] = float(np.mean([f1[x] for x in everything]))
    if SAMPLE in f1:
        return "f1, zh-en bucc2018 sample", f1[SAMPLE], averages
    if len(newstest) == 1:
        return f"f1, {newstest[0]}-en newstest", f1[newstest[0]], averages
    return f"mean f1 over {newstest_name}", averages[newstest_name], averages


class Bucc(Task):
    """F1 on the BUCC 2018 zh-en sample and on BUCC-style sets built from newstest (cs/de/es/fr/ru-en).

    ``langs`` picks sets by code or pair (``zh``, ``de-en``, ...); default all six. Candidates are mined with the
    ratio margin over ``k`` neighbours by ``mode`` retrieval (:mod:`xlsent.mining.threshold_search`).
    """

    metadata = METADATA
    subset_kind = "BUCC set"
    subset_metric = "f1"
    unit = "set"

    def __init__(self, embed: EmbedFn, base: Path, *, mode: str = "max", k: int = 4) -> None:
        super().__init__(embed, base)
        self.mode, self.k = mode, k

    def known_subsets(self) -> list[str]:
        return [*SETS, *(f"{x}-en" for x in SETS)]

    def default_subsets(self) -> list[str]:
        return list(SETS)

    def select(self, langs: Sequence[str] | None) -> list[str]:
        """The set codes named in ``langs`` as codes or pairs, in the order of :data:`SETS`."""
        wanted = {x.removesuffix("-en") for x in super().select(langs)}
        return [x for x in SETS if x in wanted]

    def row(self, subset: str) -> str:
        return SETS[subset]

    def score(self, subset: str) -> SubsetScore:
        bucc = load_set(subset, self.base)
        return SubsetScore(score_set(self.embed, bucc, k=self.k, mode=self.mode), f"{SETS[subset]}: {bucc.description}")

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        main_metric, main, averages = f1_summary({x: scores[name]["f1"] for x, name in SETS.items() if name in scores})
        return Summary(
            dataset="bucc2018_sample zh-en + newstest-built sets", main_score=main, main_metric=main_metric,
            averages=averages, options={"margin": "ratio", "k": self.k, "mode": self.mode,
                                        "threshold": "optimised on gold"},
            notes=[f"ratio margin, k={self.k}, candidates by {self.mode!r} retrieval with LASER's greedy 1:1 filter, "
                   "threshold chosen to maximise F1 on the gold pairs (oracle, as in the papers' sample-set numbers)"],
            files=sorted((self.base / "bucc2018_sample").glob("zh-en.*")),
        )


evaluate = Bucc.evaluate
