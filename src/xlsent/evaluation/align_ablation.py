"""``xlsent eval align_ablation``: the dev sets of ``xlsent eval align`` aligned with each shipped setting of
``xlsent align`` changed in turn (cost, overlaps, normalisation, band, bead sizes, null cost, length term, number
anchors, brackets); one row per setting, the mean strict F1 over the sets and each set's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from xlsent.align.config import AlignConfig, Cost, LengthRatio, Norm, Spans
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
UNSURE_SHARES = (0.0, 0.05, 0.2)
NULL_SCALES = (0.05, 0.1, 0.2, 0.3)
WORD_WEIGHTS = (0.01, 0.02, 0.05, 0.1)
"""Word anchors' weights tried beside the shipped one (a number anchor takes 0.02 off a bead's cost)."""
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
    **{f"word-weight {w:g}": AlignConfig(word_weight=w) for w in WORD_WEIGHTS},
    **{f"bracket-cost {c:g}" + (" (brackets left out)" if c == 0 else ""): AlignConfig(bracket_cost=c)
       for c in (0.0, 0.1)},
    "spans all (every span embedded, Vecalign)": AlignConfig(spans=Spans.ALL),
    **{f"unsure-share {u:g}": AlignConfig(unsure_share=u) for u in UNSURE_SHARES},
    "unsure-radius 2": AlignConfig(unsure_radius=2),
    **{f"null-scale {v:g}": AlignConfig(null_scale=v) for v in NULL_SCALES},
}
"""Row name -> the settings it runs; each changes one choice of :data:`SHIPPED`."""
KNOBS = {"null-scale": ("null-scale ", "null_scale"), "unsure-share": ("unsure-share ", "unsure_share"),
         "word-weight": ("word-weight ", "word_weight")}
"""The settings chosen on the mean over the sets, checked by leaving each set out (:func:`left_out`): their rows'
name prefix and the field they set."""


def left_out(scores: dict[str, dict[str, float]], rows: list[str], sets: list[str]) -> dict[str, tuple[str, float]]:
    """For each set, the row of ``rows`` with the best mean strict F1 over the *other* sets, and its strict F1 on
    the set left out: what choosing on the mean would have given on a set it never saw.

    >>> scores = {"a": {"x strict": 90.0, "y strict": 80.0}, "b": {"x strict": 85.0, "y strict": 95.0}}
    >>> left_out(scores, ["a", "b"], ["x", "y"])
    {'x': ('b', 85.0), 'y': ('a', 80.0)}
    """
    out = {}
    for held in sets:
        others = [s for s in sets if s != held]
        best = max(rows, key=lambda row: float(np.mean([scores[row][f"{s} strict"] for s in others])))
        out[held] = (best, scores[best][f"{held} strict"])
    return out


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
                            "span_chars_embedded": float(np.mean([s["span_chars_embedded"] for s in per_set.values()])),
                            **{f"{name} strict": s["strict_f1"] for name, s in per_set.items()}, **pieces})

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        main = scores[SHIPPED]["strict_f1"] if SHIPPED in scores else float(np.mean([s["strict_f1"]
                                                                                       for s in scores.values()]))
        sets = [name for name in available(self.base) if all(f"{name} strict" in s for s in scores.values())]
        checks, averages = [], {}
        for knob, (prefix, field) in KNOBS.items():
            rows = [SHIPPED] + [row for row in scores if row.startswith(prefix)]  # a tie keeps the shipped one
            if SHIPPED not in scores or len(rows) < 2 or len(sets) < 2:
                continue
            picks = left_out(scores, rows, sets)
            shipped_value = getattr(AlignConfig(), field)
            held = float(np.mean([f1 for _, f1 in picks.values()]))
            averages[f"{knob} chosen leaving each set out: mean held-out strict F1"] = held
            checks.append(f"{knob} (shipped {shipped_value:g}) chosen on the mean of the other sets, each set left "
                          "out in turn: " + "; ".join(
                              f"{name}: {row.removeprefix(prefix) if row != SHIPPED else f'{shipped_value:g}'} "
                              f"({f1:.1f})" for name, (row, f1) in picks.items())
                          + f"; mean held-out strict F1 {held:.2f} against {main:.2f} with the shipped setting")
        return Summary(
            dataset="Text+Berg de-fr dev + documents built from NTREX-128 and WMT newstest", main_score=main,
            main_metric="mean strict f1, shipped settings", averages=averages,
            options={"shipped": options(AlignConfig()), "sets": available(self.base)},
            notes=["each row changes one setting of the shipped ones (see xlsent align --help)",
                   f"the means are over the sets; '{TEXTBERG_PIECES}' (the Text+Berg dev document cut into "
                   f"{PIECES}, each aligned alone) is left out of them", *checks],
            files=[f for name in available(self.base) for f in self.embedded.get(name)[0].files],
        )
