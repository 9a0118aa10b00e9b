"""Reproduce ABSent's tables (paper 003) on our data; results go to ``results/``.

Every model is trained through the methods' own code (:mod:`xlsent.methods.absent`,
:mod:`xlsent.methods.mapping.linear`) into ``models_dir`` (a finished model of the same configuration is reused, so
a killed study resumes) and scored by the ``retrieval_pk`` task's own :func:`~xlsent.evaluation.retrieval_pk.evaluate`
on cached input vectors, each row with its method's retrieval rule (nearest neighbour for ABSent, uni-Sent, the
Conditional GAN and Mikolov's map, globally corrected ranks for Dinu's, the inverted softmax for Smith's, CSLS for
Lample's). Both directions are searched in the target space: source sentences mapped, target sentences as they are
(the shipped encoder's convention; the paper maps eng->deu queries with G_Y or a reverse model).

Datasets (:data:`DATASETS`): short sentences (Tatoeba-Challenge training pairs, Tatoeba v1 test) and long ones
(newstest 2008-2014 training pairs, newstest2012 test: the paper's Europarl role), de-en and es-en.
Input representations (``--inputs``): ``static`` (averages of me5-small's static subword vectors, xlsent's
stand-in for fastText: plain for short sentences, TF-IDF weighted for long ones, the paper's choice) and
``encoder`` (me5-small's own sentence vectors). One result per study and representation (task ``absent``,
variant ``<study>-<representation>``); its summary score is the ABSent row, never the best.

Studies: ``main`` (Table 1: linear maps on 100% of the pairs, Conditional GAN and ABSent on 20%), ``ablations``
(Table 2 at 10%: uni-Sent and ABSent with and without mismatch pairs, the swapped weighting A_s, and ABSent's
generators trained on L_d alone),
``ratios`` (Figure 3: 10/20/40/100% parallel), ``zeroshot`` (Table 5: de<->es from de-en and es-en only),
``lowres`` (Table 3's set-up: 1997 NTREX pairs of kaz, kat, tat with English, tested on Tatoeba v1).

    python -m xlsent.methods.absent.study --studies main ablations ratios zeroshot --inputs static encoder
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.arg_types import positive_int, share
from xlsent.data.held_out import held_out_sentences
from xlsent.data.retrieval_pk import load_set
from xlsent.encoders.base import l2_normalize
from xlsent.encoders.cache import cached_encode, encoder_id
from xlsent.evaluation import retrieval_pk
from xlsent.evaluation.task import EmbedFn
from xlsent.languages import base_lang
from xlsent.methods.absent import model as absent
from xlsent.methods.absent.config import ABSentConfig
from xlsent.methods.mapping import linear as linear_maps
from xlsent.methods.mapping.config import LinearMapConfig, MappingConfig
from xlsent.methods.mapping.data import build_pair_data
from xlsent.methods.mapping.encoder import MappedEncoder
from xlsent.studies.command import main
from xlsent.studies.numbers import apart, listing
from xlsent.studies.settings import StudySettings, option
from xlsent.studies.study import Rows, Study, StudyRun
from xlsent.studies.trained import ensure_trained
from xlsent.studies.verdict import Verdict

log = logging.getLogger(__name__)

TASK = "absent"
DATASET = "retrieval_pk sets (Tatoeba v1, newstest2012, Tatoeba-Challenge)"
Row = dict[str, float]

DATASETS: dict[str, tuple[str, str, str]] = {
    "short de-en": ("short", "de-en", "deu"), "short es-en": ("short", "es-en", "spa"),
    "long de-en": ("long", "de-en", "news-de"), "long es-en": ("long", "es-en", "news-es"),
}
"""Dataset -> (training corpus, language pair, retrieval_pk test set)."""
ZERO_SHOT = {"short": "deu-spa", "long": "news-de-es"}
LOW_RESOURCE = ("kaz", "kat", "tat")
STATIC_WEIGHTING = {"short": "average", "long": "tfidf"}
SWAPPED_WEIGHTING = {"short": "tfidf", "long": "average"}
REPRESENTATIONS = ("static", "encoder")
LINEAR_ROWS = {"lsq": "Mikolov et al. 2013 (least squares)", "lsq-gc": "Dinu et al. 2014 (least squares + GC)",
               "procrustes-isf": "Smith et al. 2017 (Procrustes + ISF)",
               "procrustes-csls": "Lample et al. 2018 (Procrustes + CSLS)"}
FIGURE3_BASELINES = ("procrustes-isf", "procrustes-csls")
NO_MAP = "input space, no map"
LD_ONLY = "L_d only, no adversarial terms (xlsent ablation)"
VIA_ENGLISH = "Procrustes + CSLS via en (zero-shot, extension)"
REPRESENTATION_NOTES = {
    "static": "inputs: averages of me5-small's static input subword vectors (its embedding matrix), xlsent's "
              "stand-in for the paper's fastText word vectors; plain averages for short sentences and TF-IDF "
              "weighted ones for long sentences (the paper's choice), the idf fitted on each model's training "
              "sentences",
    "encoder": "inputs: me5-small's own sentence vectors (already multilingual, unlike averaged fastText vectors: "
               "the row 'input space, no map' shows how aligned they are before any map)",
}


@dataclass(frozen=True)
class Settings(StudySettings):
    """What the study trains and evaluates (CPU-sized)."""

    models_dir: Path = Path("models/absent-study")
    inputs: tuple[str, ...] = option(REPRESENTATIONS, "input representations, one result each",
                                     choices=REPRESENTATIONS)
    datasets: tuple[str, ...] = option(tuple(DATASETS), "datasets of Table 1", choices=tuple(DATASETS))
    detail_datasets: tuple[str, ...] = option(tuple(DATASETS), "datasets of Table 2 and Figure 3",
                                              choices=tuple(DATASETS))
    ratios: tuple[float, ...] = option((0.1, 0.2, 0.4, 1.0), "shares of parallel pairs of Figure 3", type=share)
    steps: int = option(1000, "generator steps per GAN model", type=positive_int)
    max_pairs: int | None = option(None, "cap on the training pairs of each language pair", type=positive_int)
    valid_pairs: int = option(300, "parallel pairs held out for ABSent's model selection", type=positive_int)
    low_resource: tuple[str, ...] = option(LOW_RESOURCE, "low-resource languages of the lowres study")
    backbone: str = option("me5-small", "the encoder whose vectors the maps take")
    threads: int | None = option(None, "torch threads (default: torch's; 1 on a shared machine)", recorded=False,
                                 type=positive_int)


def _percent(ratio: float) -> str:
    return f"{round(ratio * 100)}%"


class Lab:
    """Trains (or reuses) the study's models and scores them with the retrieval_pk task."""

    def __init__(self, settings: Settings) -> None:
        from xlsent.encoders.registry import load_encoder

        if settings.threads:
            import torch

            torch.set_num_threads(settings.threads)
        self.settings = settings
        self.backbone = load_encoder(settings.backbone)
        self.encoder = encoder_id(self.backbone)
        self._banned: set[str] | None = None

    # --- models --------------------------------------------------------------------------------------------------

    def _train(self, method: str, name: str, overrides: Mapping[str, Any], mode: str | None = None
               ) -> MappedEncoder:
        s = self.settings
        m = absent.METHOD if method == "absent" else linear_maps.METHOD
        every = {"backbone": s.backbone, "device": "auto", **overrides}
        if s.max_pairs is not None:
            every["max_pairs"] = s.max_pairs
            name += f"-m{s.max_pairs}"
        config = m.config(sets=s.sets, mode=mode, **every)
        assert isinstance(config, MappingConfig)
        out = s.models_dir / name

        def train() -> Path:
            if self._banned is None:
                self._banned = held_out_sentences(s.data)
            data = build_pair_data(config, s.data, banned=self._banned)
            if isinstance(config, ABSentConfig):
                return absent.train_on(config, data, self.backbone, out, resume=True, progress=False)
            assert isinstance(config, LinearMapConfig)
            return linear_maps.train_on(config, data, self.backbone, out, resume=True, progress=False)

        ensure_trained(m, config, out, retrain=s.retrain, train=train)
        if method == "absent":
            return absent.ABSentEncoder(out, backbone=self.backbone)
        return linear_maps.LinearMapEncoder(out, backbone=self.backbone)

    def linear(self, inputs: str, corpus: str, pairs: Sequence[str], method: str, ratio: float = 1.0
               ) -> linear_maps.LinearMapEncoder:
        name = f"{inputs}-{corpus}-{'+'.join(pairs)}-{method}-{round(ratio * 100)}"
        enc = self._train("linear", name, {"inputs": inputs, "corpus": corpus, "pairs": list(pairs), "method": method,
                                           "parallel_ratio": float(ratio)})
        assert isinstance(enc, linear_maps.LinearMapEncoder)
        return enc

    def absent(self, inputs: str, corpus: str, pairs: Sequence[str], mode: str, ratio: float, *,
               mismatch: bool = True, adversarial: bool = True) -> MappedEncoder:
        variant = mode + ("" if mismatch else "-nomis") + ("" if adversarial else "-noadv")
        name = (f"{inputs}-{corpus}-{'+'.join(pairs)}-{variant}-{round(ratio * 100)}-s{self.settings.steps}"
                f"-v{self.settings.valid_pairs}")
        overrides: dict[str, Any] = {"inputs": inputs, "corpus": corpus, "pairs": list(pairs),
                                     "parallel_ratio": float(ratio), "steps": self.settings.steps,
                                     "valid_pairs": self.settings.valid_pairs}
        if mode != "conditional-gan":
            overrides.update(mismatch=mismatch, adversarial=adversarial)
        return self._train("absent", name, overrides, mode=mode)

    # --- scores --------------------------------------------------------------------------------------------------

    def embed(self, enc: MappedEncoder, mapped: bool = True) -> EmbedFn:
        """The model's vectors (``mapped=False``: its input vectors as they are) from cached input encodings."""
        def embed(sentences: Sequence[str], lang: str | None) -> np.ndarray:
            vectors = cached_encode(enc.inputs, sentences, lang)
            return enc.project(vectors, lang) if mapped else l2_normalize(vectors)

        return embed

    def scores(self, run: StudyRun[Settings], enc: MappedEncoder, test: str, prefix: str, rule: str = "nn",
               mapped: bool = True) -> Row:
        """P@1 and P@5 of both directions of ``test`` under ``rule``, named ``<prefix> <x>-><y> p@k``, and the
        CSLS mean P@1 (``<prefix> csls mean p@1``); the data files read go to ``run.files``."""
        extra = {} if rule in retrieval_pk.RULES else {rule: linear_maps.retrieval_rule(
            rule, enc.isf_beta if isinstance(enc, linear_maps.LinearMapEncoder) else 10.0)}
        result = retrieval_pk.evaluate(self.embed(enc, mapped), encoder_id=enc.id, langs=[test],
                                       root=self.settings.data, rules=extra)
        run.files.update(result.dataset_files)
        got = result.scores[test]
        test_set = load_set(test, self.settings.data)
        x, y = base_lang(test_set.x_lang), base_lang(test_set.y_lang)
        metric = "" if rule == "nn" else f"{rule} "
        out = {f"{prefix} {a}->{b} p@{k}": got[f"{metric}{d} p@{k}"]
               for d, a, b in (("x->y", x, y), ("y->x", y, x)) for k in retrieval_pk.KS}
        out[f"{prefix} csls mean p@1"] = got["csls mean p@1"]
        return out

    def notes(self, run: StudyRun[Settings]) -> list[str]:
        s = run.settings
        return [f"summary row: '{STUDIES[run.name].method_row}'; P@k in percent, columns '<corpus> <x>-><y> p@k' "
                "(each row with its method's retrieval rule), 'mean' columns average them; both directions search "
                "the target space",
                REPRESENTATION_NOTES[run.split],
                f"CPU-sized: {s.steps} generator steps per GAN model (batch 128); training pairs: all filtered pairs "
                "of each corpus (15,433 short de-en, 14,151 short es-en, 16,050 long de-en, 13,043 long es-en, 795 "
                "short and 13,054 long de-es for the zero-shot baselines, 1997 NTREX pairs per low-resource "
                "language; the paper has 60k-160k) unless max_pairs caps them",
                "test sets: Tatoeba v1 deu/spa (1000 pairs), newstest2012 (1600 de-en, 1300 es-en, 490 de-es), "
                "490 Tatoeba-Challenge de-es pairs joined through English (retrieval_pk)"]


def setup(settings: Settings, out_dir: Path) -> Lab:
    return Lab(settings)


def with_means(row: Row) -> Row:
    """``mean p@1``, ``mean p@5`` (over every direction column) and ``mean p@1 csls`` first, then ``row``."""
    def mean(suffix: str, csls: bool = False) -> float:
        values = [v for k, v in row.items() if k.endswith(suffix) and ("csls" in k) == csls]
        return float(np.mean(values))

    return {"mean p@1": mean(" p@1"), "mean p@5": mean(" p@5"), "mean p@1 csls": mean("csls mean p@1", True), **row}


def _finish(run: StudyRun[Settings], rows: dict[str, Row]) -> None:
    run.rows.update({name: with_means(row) for name, row in rows.items()})


def _static(rep: str, corpus: str, swapped: bool = False) -> str:
    if rep == "encoder":
        return "encoder"
    return (SWAPPED_WEIGHTING if swapped else STATIC_WEIGHTING)[corpus]


# --- the studies -----------------------------------------------------------------------------------------------


def study_main(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 1: the linear maps on 100% of the pairs, the Conditional GAN and ABSent on 20%, and the input space."""
    rows: dict[str, Row] = {}
    for ds in run.settings.datasets:
        corpus, pair, test = DATASETS[ds]
        inputs = _static(run.split, corpus)
        for method, label in LINEAR_ROWS.items():
            enc = lab.linear(inputs, corpus, [pair], method)
            if method == "lsq":
                rows.setdefault(NO_MAP, {}).update(lab.scores(run, enc, test, corpus, mapped=False))
            rows.setdefault(label, {}).update(lab.scores(run, enc, test, corpus, enc.retrieval_rule))
        for mode, label in (("conditional-gan", "Conditional GAN (20%)"), ("absent", STUDIES["main"].method_row)):
            gan = lab.absent(inputs, corpus, [pair], mode, 0.2)
            rows.setdefault(label, {}).update(lab.scores(run, gan, test, corpus))
    _finish(run, rows)


def study_ablations(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 2 (10% parallel): uni-Sent (U) and ABSent (A) with and without mismatch pairs; A_s swaps the
    weighting (TF-IDF for short sentences, plain for long ones; static inputs only); L_d only drops every
    adversarial term (xlsent ablation: the generators as plain non-linear regressors on the parallel pairs)."""
    rows: dict[str, Row] = {}
    variants = (("U\\mis", "uni-sent", False, True), ("U", "uni-sent", True, True),
                ("A\\mis", "absent", False, True), ("A (ABSent)", "absent", True, True),
                (LD_ONLY, "absent", True, False))
    for ds in run.settings.detail_datasets:
        corpus, pair, test = DATASETS[ds]
        for label, mode, mis, adv in variants:
            enc = lab.absent(_static(run.split, corpus), corpus, [pair], mode, 0.1, mismatch=mis, adversarial=adv)
            rows.setdefault(label, {}).update(lab.scores(run, enc, test, corpus))
        if run.split == "static":
            enc = lab.absent(_static(run.split, corpus, swapped=True), corpus, [pair], "absent", 0.1)
            rows.setdefault("A_s (swapped weighting)", {}).update(lab.scores(run, enc, test, corpus))
    _finish(run, rows)


def study_ratios(lab: Lab, run: StudyRun[Settings]) -> None:
    """Figure 3: ABSent, uni-Sent and two linear baselines at 10/20/40/100% parallel pairs."""
    rows: dict[str, Row] = {}
    for ds in run.settings.detail_datasets:
        corpus, pair, test = DATASETS[ds]
        inputs = _static(run.split, corpus)
        for ratio in run.settings.ratios:
            pct = _percent(ratio)
            for mode, label in (("absent", "ABSent"), ("uni-sent", "uni-Sent")):
                rows.setdefault(f"{label} {pct}", {}).update(
                    lab.scores(run, lab.absent(inputs, corpus, [pair], mode, ratio), test, corpus))
            for method in FIGURE3_BASELINES:
                enc = lab.linear(inputs, corpus, [pair], method, ratio)
                rows.setdefault(f"{LINEAR_ROWS[method]} {pct}", {}).update(
                    lab.scores(run, enc, test, corpus, enc.retrieval_rule))
    _finish(run, rows)


def study_zeroshot(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 5: de<->es. The linear baselines are fitted on de-es pairs (dedicated supervision, 100%); ABSent
    maps German and Spanish into English from 20% of de-en and es-en pairs and never sees a de-es pair.
    Extension: Procrustes maps de->en and es->en (100%, also zero-shot for de-es)."""
    rows: dict[str, Row] = {}
    for corpus, test in ZERO_SHOT.items():
        inputs = _static(run.split, corpus)
        for method, label in LINEAR_ROWS.items():
            lin = lab.linear(inputs, corpus, ["de-es"], method)
            if method == "lsq":
                rows.setdefault(NO_MAP, {}).update(lab.scores(run, lin, test, corpus, mapped=False))
            rows.setdefault(f"{label}, de-es pairs", {}).update(lab.scores(run, lin, test, corpus, lin.retrieval_rule))
        via = lab.linear(inputs, corpus, ["de-en", "es-en"], "procrustes-csls")
        rows.setdefault(VIA_ENGLISH, {}).update(lab.scores(run, via, test, corpus, "csls"))
        enc = lab.absent(inputs, corpus, ["de-en", "es-en"], "absent", 0.2)
        rows.setdefault(STUDIES["zeroshot"].method_row, {}).update(lab.scores(run, enc, test, corpus))
    _finish(run, rows)


def study_lowres(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 3's set-up: X-en pairs of low-resource languages (1997 NTREX lines each, all used as parallel data),
    tested on Tatoeba v1; plain averages for the static inputs (short test sentences)."""
    rows: dict[str, Row] = {}
    inputs = _static(run.split, "short")
    for lang in run.settings.low_resource:
        pair = f"{lang}-en"
        for method in ("lsq", "procrustes-csls"):
            lin = lab.linear(inputs, "ntrex", [pair], method)
            if method == "lsq":
                rows.setdefault(NO_MAP, {}).update(lab.scores(run, lin, lang, "tatoeba", mapped=False))
            rows.setdefault(LINEAR_ROWS[method], {}).update(lab.scores(run, lin, lang, "tatoeba", lin.retrieval_rule))
        gan = lab.absent(inputs, "ntrex", [pair], "absent", 1.0)
        rows.setdefault(STUDIES["lowres"].method_row, {}).update(lab.scores(run, gan, lang, "tatoeba"))
    _finish(run, rows)


# --- the paper's claims ----------------------------------------------------------------------------------------


def _dataset_columns(rows: Rows, suffix: str) -> list[str]:
    first = next(iter(rows.values()))
    return [k for k in first if k.endswith(suffix) and not k.startswith("mean") and "csls" not in k]


def _wins(rows: Rows, a: str, b: str, suffix: str = " p@1") -> str:
    cols = _dataset_columns(rows, suffix)
    return f"higher in {sum(rows[a][c] > rows[b][c] for c in cols)} of {len(cols)} columns"


def claims_main(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 1's claims: ABSent (20%) beats every linear map (100%) and the Conditional GAN."""
    ab = rows[method_row]
    out = []
    for m in ("mean p@1", "mean p@5"):
        best = max(LINEAR_ROWS.values(), key=lambda r: rows[r][m])
        f = apart(ab[m], rows[best][m])
        out.append(Verdict(f"ABSent with 20% parallel pairs beats every linear map with 100% on {m}",
                           ab[m] > rows[best][m], f"{f(ab[m])} vs best linear map {best} {f(rows[best][m])}; "
                           f"{_wins(rows, method_row, best, m[-4:])}"))
    cg = rows["Conditional GAN (20%)"]["mean p@1"]
    f = apart(ab["mean p@1"], cg)
    out.append(Verdict("ABSent beats the Conditional GAN (same parallel data) on mean p@1", ab["mean p@1"] > cg,
                       f"{f(ab['mean p@1'])} vs {f(cg)}"))
    own = rows[NO_MAP]["mean p@1"]
    f = apart(ab["mean p@1"], own)
    out.append(Verdict("ABSent improves on the input space without any map", ab["mean p@1"] > own,
                       f"{f(ab['mean p@1'])} vs {f(own)} mean p@1", "xlsent"))
    return out


def claims_ablations(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 2's claims: bidirectional beats uni-directional; mismatch pairs help both; the paper's weighting."""
    m = "mean p@1"
    checks = [("A (ABSent)", "U", "bidirectional training (ABSent) beats uni-directional (uni-Sent) at 10% parallel",
               "paper"),
              ("A\\mis", "U\\mis", "without mismatch pairs too, bidirectional beats uni-directional", "paper"),
              ("A (ABSent)", "A\\mis", "mismatch pairs help ABSent", "paper"),
              ("U", "U\\mis", "mismatch pairs help uni-Sent", "paper")]
    if LD_ONLY in rows:
        checks.append(("A (ABSent)", LD_ONLY, "the adversarial terms help: ABSent beats its generators trained on "
                       "L_d alone", "xlsent"))
    out = []
    for a, b, claim, source in checks:
        f = apart(rows[a][m], rows[b][m])
        out.append(Verdict(claim, rows[a][m] > rows[b][m], f"{a} {f(rows[a][m])} vs {b} {f(rows[b][m])} {m}; "
                           f"{_wins(rows, a, b)}", source))
    if "A_s (swapped weighting)" in rows:
        a_row, s_row = rows["A (ABSent)"], rows["A_s (swapped weighting)"]
        for corpus, weighting in (("short", "plain averages"), ("long", "TF-IDF weighting")):
            cols = [k for k in _dataset_columns(rows, " p@1") if k.startswith(corpus)]
            if cols:
                mine, other = float(np.mean([a_row[c] for c in cols])), float(np.mean([s_row[c] for c in cols]))
                f = apart(mine, other)
                out.append(Verdict(f"{weighting} beat the swapped weighting on {corpus} sentences", mine > other,
                                   f"{f(mine)} vs {f(other)} p@1"))
    return out


def claims_ratios(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Figure 3's claims: precision grows with the parallel ratio; ABSent beats uni-Sent at every ratio."""
    pcts = [k.split()[-1] for k in rows if k.startswith("ABSent ")]
    series = {p: rows[f"ABSent {p}"]["mean p@1"] for p in pcts}
    values = list(series.values())
    wins = [rows[f"ABSent {p}"]["mean p@1"] > rows[f"uni-Sent {p}"]["mean p@1"] for p in pcts]
    return [Verdict("ABSent's precision improves as the ratio of parallel pairs grows",
                    all(b > a for a, b in zip(values, values[1:], strict=False)), listing(series) + " mean p@1"),
            Verdict("ABSent beats uni-Sent at every parallel ratio", all(wins),
                    f"higher at {sum(wins)} of {len(wins)} ratios on mean p@1")]


def claims_zeroshot(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 5's claim: zero-shot de<->es works, beating baselines that get de-es pairs."""
    ab = rows[method_row]["mean p@1"]
    baselines = [k for k in rows if k.endswith(", de-es pairs")]
    best = max(baselines, key=lambda r: rows[r]["mean p@1"])
    own = rows[NO_MAP]["mean p@1"]
    via = rows[VIA_ENGLISH]["mean p@1"]
    f, g, h = apart(ab, rows[best]["mean p@1"]), apart(ab, own), apart(ab, via)
    return [Verdict("zero-shot ABSent (no de-es pair) beats every linear baseline trained on de-es pairs",
                    ab > rows[best]["mean p@1"], f"{f(ab)} vs {best} {f(rows[best]['mean p@1'])} mean p@1"),
            Verdict("zero-shot ABSent retrieves de<->es better than the input space without a map", ab > own,
                    f"{g(ab)} vs {g(own)} mean p@1"),
            Verdict("zero-shot ABSent beats Procrustes maps into English (the zero-shot linear alternative)",
                    ab > via, f"{h(ab)} vs {h(via)} mean p@1", "xlsent")]


def claims_lowres(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 3's spirit: a few thousand pairs suffice; checked against the linear maps and the input space."""
    ab = rows[method_row]["mean p@1"]
    best = max((LINEAR_ROWS[m] for m in ("lsq", "procrustes-csls")), key=lambda r: rows[r]["mean p@1"])
    own = rows[NO_MAP]["mean p@1"]
    f, g = apart(ab, rows[best]["mean p@1"]), apart(ab, own)
    return [Verdict("on low-resource pairs ABSent beats the linear maps", ab > rows[best]["mean p@1"],
                    f"{f(ab)} vs {best} {f(rows[best]['mean p@1'])} mean p@1"),
            Verdict("on low-resource pairs ABSent improves on the input space", ab > own,
                    f"{g(ab)} vs {g(own)} mean p@1")]


STUDIES = {
    "main": Study(study_main, "ABSent (20%)", claims=claims_main, split="inputs"),
    "ablations": Study(study_ablations, "A (ABSent)", claims=claims_ablations, split="inputs"),
    "ratios": Study(study_ratios, "ABSent 20%", claims=claims_ratios, split="inputs"),
    "zeroshot": Study(study_zeroshot, "ABSent zero-shot (20%)", claims=claims_zeroshot, split="inputs"),
    "lowres": Study(study_lowres, "ABSent (100%)", claims=claims_lowres, split="inputs", default=False),
}
"""Each study and the row it declares as its method (the paper's configuration): the study's summary score; one
result per input representation."""


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.modules[__name__]))
