"""``xlsent eval align_ablation``: the dev sets of ``xlsent eval align`` aligned with each shipped setting of
``xlsent align`` changed in turn (cost, overlaps, normalisation, band, bead sizes, null cost, length term, number
anchors, brackets); one row per setting, the mean strict F1 over the sets and each set's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from xlsent.align.config import AlignConfig, Cost, LengthRatio, Norm
from xlsent.data.align_sets import TEXTBERG
from xlsent.evaluation.align import METADATA as ALIGN_METADATA
from xlsent.evaluation.align import PIECES, TEXTBERG_PIECES, Embedded, available, options
from xlsent.evaluation.task import EmbedFn, SubsetScore, Summary, Task

METADATA = replace(
    ALIGN_METADATA, name="align_ablation",
    description="xlsent align with each shipped choice changed in turn (mean strict F1 over the dev sets)",
    main_score="mean strict F1 (percent) over the dev sets with the shipped settings",
)

SHIPPED = "shipped settings"
ABLATIONS: dict[str, AlignConfig] = {
    SHIPPED: AlignConfig(),
    **{f"max-beads {k} (overlaps {k - 1})": AlignConfig(max_beads=k) for k in (2, 3, 4, 5)},
    **{f"cost distance, norm {n.value}" + (" (Vecalign)" if n is Norm.RANDOM else ""):
       AlignConfig(cost=Cost.DISTANCE, norm=n) for n in Norm},
    **{f"band {w}": AlignConfig(band=w) for w in (2, 4, 16)},
    "no band (whole grid)": AlignConfig(full_dp=1 << 30),
    **{f"null-cost {c:g}" + (" (Bertalign's skip)" if c == 0.1 else ""): AlignConfig(null_cost=c)
       for c in (0.03, 0.1)},
    **{f"length-weight {w:g}": AlignConfig(length_weight=w) for w in (0.0, 0.5, 2.0)},
    "length-ratio documents (one alignment)": AlignConfig(length_ratio=LengthRatio.DOCUMENTS),
    **{f"number-weight {w:g}" + (" (no number anchors)" if w == 0 else ""): AlignConfig(number_weight=w)
       for w in (0.0, 0.05)},
    "number-min 0 (every number anchors)": AlignConfig(number_min=0),
    **{f"bracket-cost {c:g}" + (" (brackets left out)" if c == 0 else ""): AlignConfig(bracket_cost=c)
       for c in (0.0, 0.1)},
}
"""Row name -> the settings it runs; each changes one choice of :data:`SHIPPED`."""


class AlignAblation(Task):
    """Rows: the settings of :data:`ABLATIONS`; cells: mean strict F1 over the dev sets, and each set's."""

    metadata = METADATA
    subset_kind = "setting"
    subset_metric = "strict_f1"
    unit = "setting"

    def __init__(self, embed: EmbedFn, base: Path) -> None:
        super().__init__(embed, base)
        self.embedded = Embedded(embed, base)

    def known_subsets(self) -> list[str]:
        return list(ABLATIONS) if available(self.base) else []

    def score(self, subset: str) -> SubsetScore:
        sets = available(self.base)
        per_set = {name: self.embedded.scores(name, ABLATIONS[subset]) for name in sets}
        pieces = ({f"{TEXTBERG_PIECES} strict": self.embedded.scores(TEXTBERG, ABLATIONS[subset],
                                                                      pieces=PIECES)["strict_f1"]}
                  if TEXTBERG in sets else {})
        return SubsetScore({"strict_f1": float(np.mean([s["strict_f1"] for s in per_set.values()])),
                            "lax_f1": float(np.mean([s["lax_f1"] for s in per_set.values()])),
                            **{f"{name} strict": s["strict_f1"] for name, s in per_set.items()}, **pieces})

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        main = scores[SHIPPED]["strict_f1"] if SHIPPED in scores else float(np.mean([s["strict_f1"]
                                                                                       for s in scores.values()]))
        return Summary(
            dataset="Text+Berg de-fr dev + NTREX-built documents", main_score=main,
            main_metric="mean strict f1, shipped settings", averages={},
            options={"shipped": options(AlignConfig()), "sets": available(self.base)},
            notes=["each row changes one setting of the shipped ones (see xlsent align --help)",
                   f"the means are over the sets; '{TEXTBERG_PIECES}' (the Text+Berg dev document cut into "
                   f"{PIECES}, each aligned alone) is left out of them"],
            files=[f for name in available(self.base) for f in self.embedded.get(name)[0].files],
        )
