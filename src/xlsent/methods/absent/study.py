"""Reproduce ABSent's tables (paper 003) on our data; results go to ``results/``.

Every model is trained through the methods' own code (:mod:`xlsent.methods.absent`,
:mod:`xlsent.methods.mapping.linear`) into ``models_dir`` (a finished model is reused, so a killed study resumes)
and scored by the ``retrieval_pk`` task's own :func:`~xlsent.evaluation.retrieval_pk.evaluate` on cached input
vectors, each row with its method's retrieval rule (nearest neighbour for ABSent, uni-Sent, the Conditional GAN
and Mikolov's map, globally corrected ranks for Dinu's, the inverted softmax for Smith's, CSLS for Lample's).
Both directions are searched in the target space: source sentences mapped, target sentences as they are (the
shipped encoder's convention; the paper maps eng->deu queries with G_Y or a reverse model).

Datasets (:data:`DATASETS`): short sentences (Tatoeba-Challenge training pairs, Tatoeba v1 test) and long ones
(newstest 2008-2014 training pairs, newstest2012 test: the paper's Europarl role), de-en and es-en.
Input representations (``--inputs``): ``static`` (averages of me5-small's static subword vectors, xlsent's
stand-in for fastText: plain for short sentences, TF-IDF weighted for long ones, the paper's choice) and
``encoder`` (me5-small's own sentence vectors). One result per study and representation (task ``absent``,
variant ``<study>-<representation>``); its summary score is the ABSent row (:data:`METHOD_ROWS`), never the best.

Studies: ``main`` (Table 1: linear maps on 100% of the pairs, Conditional GAN and ABSent on 20%), ``ablations``
(Table 2 at 10%: uni-Sent and ABSent with and without mismatch pairs, the swapped weighting A_s, and ABSent's
generators trained on L_d alone),
``ratios`` (Figure 3: 10/20/40/100% parallel), ``zeroshot`` (Table 5: de<->es from de-en and es-en only),
``lowres`` (Table 3's set-up: 1997 NTREX pairs of kaz, kat, tat with English, tested on Tatoeba v1).

    python -m xlsent.methods.absent.study --studies main ablations ratios zeroshot --inputs static encoder
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.encoders.base import Encoder, l2_normalize
from xlsent.encoders.cache import cached_encode, encoder_id
from xlsent.evaluation import retrieval_pk
from xlsent.evaluation.results import TaskResult
from xlsent.evaluation.task import EmbedFn
from xlsent.languages import base_lang
from xlsent.methods.absent import model as absent
from xlsent.methods.mapping import linear as linear_maps
from xlsent.methods.mapping.linear import MappedEncoder, MappingConfig, build_pair_data, held_out_sentences

log = logging.getLogger(__name__)

Row = dict[str, float]
Rows = dict[str, Row]

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
METHOD_ROWS = {"main": "ABSent (20%)", "ablations": "A (ABSent)", "ratios": "ABSent 20%",
               "zeroshot": "ABSent zero-shot (20%)", "lowres": "ABSent (100%)"}
"""The row each study declares as its method (the paper's configuration): the study's summary score."""


@dataclass(frozen=True)
class StudySettings:
    """What the study trains and evaluates (CPU-sized: see :func:`main`'s defaults)."""

    inputs: tuple[str, ...] = REPRESENTATIONS
    datasets: tuple[str, ...] = tuple(DATASETS)
    detail_datasets: tuple[str, ...] = tuple(DATASETS)
    ratios: tuple[float, ...] = (0.1, 0.2, 0.4, 1.0)
    steps: int = 1000
    max_pairs: int | None = None
    valid_pairs: int = 300
    low_resource: tuple[str, ...] = LOW_RESOURCE
    models_dir: Path = Path("models/absent-study")
    data: str | None = None
    backbone: str = "me5-small"


def _percent(ratio: float) -> str:
    return f"{round(ratio * 100)}%"


class Runner:
    """Trains (or reuses) the study's models and scores them with the retrieval_pk task."""

    def __init__(self, backbone: Encoder, settings: StudySettings) -> None:
        self.backbone = backbone
        self.settings = settings
        self._banned: set[str] | None = None
        self.files: dict[str, str] = {}

    # --- models --------------------------------------------------------------------------------------------------

    def _train(self, method: str, name: str, sets: Sequence[str], mode: str | None = None) -> MappedEncoder:
        s = self.settings
        m = absent.METHOD if method == "absent" else linear_maps.METHOD
        every = [f"backbone={s.backbone}", "device=auto", *sets]
        if s.max_pairs is not None:
            every.append(f"max_pairs={s.max_pairs}")
            name += f"-m{s.max_pairs}"
        config = m.config(sets=every, mode=mode)
        out = s.models_dir / name
        if not (out / "xlsent.json").is_file():
            if self._banned is None:
                self._banned = held_out_sentences(s.data)
            assert isinstance(config, MappingConfig)
            data = build_pair_data(config, s.data, banned=self._banned)
            if isinstance(config, absent.ABSentConfig):
                absent.train_on(config, data, self.backbone, out, resume=True, progress=False)
            elif isinstance(config, linear_maps.LinearMapConfig):
                linear_maps.train_on(config, data, self.backbone, out, resume=True, progress=False)
        if method == "absent":
            return absent.ABSentEncoder(out, backbone=self.backbone)
        return linear_maps.LinearMapEncoder(out, backbone=self.backbone)

    def linear(self, inputs: str, corpus: str, pairs: Sequence[str], method: str, ratio: float = 1.0
               ) -> linear_maps.LinearMapEncoder:
        name = f"{inputs}-{corpus}-{'+'.join(pairs)}-{method}-{round(ratio * 100)}"
        enc = self._train("linear", name, [f"inputs={inputs}", f"corpus={corpus}", "pairs=" + ",".join(pairs),
                                           f"method={method}", f"parallel_ratio={ratio}"])
        assert isinstance(enc, linear_maps.LinearMapEncoder)
        return enc

    def absent(self, inputs: str, corpus: str, pairs: Sequence[str], mode: str, ratio: float, *,
               mismatch: bool = True, adversarial: bool = True) -> MappedEncoder:
        variant = mode + ("" if mismatch else "-nomis") + ("" if adversarial else "-noadv")
        name = (f"{inputs}-{corpus}-{'+'.join(pairs)}-{variant}-{round(ratio * 100)}-s{self.settings.steps}"
                f"-v{self.settings.valid_pairs}")
        sets = [f"inputs={inputs}", f"corpus={corpus}", "pairs=" + ",".join(pairs), f"parallel_ratio={ratio}",
                f"steps={self.settings.steps}", f"valid_pairs={self.settings.valid_pairs}"]
        if mode != "conditional-gan":
            sets += [f"mismatch={str(mismatch).lower()}", f"adversarial={str(adversarial).lower()}"]
        return self._train("absent", name, sets, mode=mode)

    # --- scores --------------------------------------------------------------------------------------------------

    def embed(self, enc: MappedEncoder, mapped: bool = True) -> EmbedFn:
        """The model's vectors (``mapped=False``: its input vectors as they are) from cached input encodings."""
        def embed(sentences: Sequence[str], lang: str | None) -> np.ndarray:
            vectors = cached_encode(enc.inputs, sentences, lang)
            return enc.project(vectors, lang) if mapped else l2_normalize(vectors)

        return embed

    def scores(self, enc: MappedEncoder, test: str, prefix: str, rule: str = "nn", mapped: bool = True) -> Row:
        """P@1 and P@5 of both directions of ``test`` under ``rule``, named ``<prefix> <x>-><y> p@k``, and the
        CSLS mean P@1 (``<prefix> csls mean p@1``)."""
        extra = {} if rule in retrieval_pk.RULES else {rule: linear_maps.retrieval_rule(
            rule, enc.isf_beta if isinstance(enc, linear_maps.LinearMapEncoder) else 10.0)}
        result = retrieval_pk.evaluate(self.embed(enc, mapped), encoder_id=enc.id, langs=[test],
                                       root=self.settings.data, rules=extra)
        self.files.update(result.dataset_files)
        got = result.scores[test]
        test_set = retrieval_pk.load_set(test, self.settings.data)
        x, y = base_lang(test_set.x_lang), base_lang(test_set.y_lang)
        metric = "" if rule == "nn" else f"{rule} "
        out = {f"{prefix} {a}->{b} p@{k}": got[f"{metric}{d} p@{k}"]
               for d, a, b in (("x->y", x, y), ("y->x", y, x)) for k in retrieval_pk.KS}
        out[f"{prefix} csls mean p@1"] = got["csls mean p@1"]
        return out


def with_means(row: Row) -> Row:
    """``mean p@1``, ``mean p@5`` (over every direction column) and ``mean p@1 csls`` first, then ``row``."""
    def mean(suffix: str, csls: bool = False) -> float:
        values = [v for k, v in row.items() if k.endswith(suffix) and ("csls" in k) == csls]
        return float(np.mean(values))

    return {"mean p@1": mean(" p@1"), "mean p@5": mean(" p@5"), "mean p@1 csls": mean("csls mean p@1", True), **row}


def _finish(rows: dict[str, Row]) -> Rows:
    return {name: with_means(row) for name, row in rows.items()}


def _static(rep: str, corpus: str, swapped: bool = False) -> str:
    if rep == "encoder":
        return "encoder"
    return (SWAPPED_WEIGHTING if swapped else STATIC_WEIGHTING)[corpus]


# --- the studies -----------------------------------------------------------------------------------------------


def study_main(run: Runner, rep: str) -> Rows:
    """Table 1: the linear maps on 100% of the pairs, the Conditional GAN and ABSent on 20%, and the input space."""
    rows: dict[str, Row] = {}
    for ds in run.settings.datasets:
        corpus, pair, test = DATASETS[ds]
        inputs = _static(rep, corpus)
        for method, label in LINEAR_ROWS.items():
            enc = run.linear(inputs, corpus, [pair], method)
            if method == "lsq":
                rows.setdefault(NO_MAP, {}).update(run.scores(enc, test, corpus, mapped=False))
            rows.setdefault(label, {}).update(run.scores(enc, test, corpus, enc.retrieval_rule))
        for mode, label in (("conditional-gan", "Conditional GAN (20%)"), ("absent", METHOD_ROWS["main"])):
            rows.setdefault(label, {}).update(run.scores(run.absent(inputs, corpus, [pair], mode, 0.2), test, corpus))
    return _finish(rows)


def study_ablations(run: Runner, rep: str) -> Rows:
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
            enc = run.absent(_static(rep, corpus), corpus, [pair], mode, 0.1, mismatch=mis, adversarial=adv)
            rows.setdefault(label, {}).update(run.scores(enc, test, corpus))
        if rep == "static":
            enc = run.absent(_static(rep, corpus, swapped=True), corpus, [pair], "absent", 0.1)
            rows.setdefault("A_s (swapped weighting)", {}).update(run.scores(enc, test, corpus))
    return _finish(rows)


def study_ratios(run: Runner, rep: str) -> Rows:
    """Figure 3: ABSent, uni-Sent and two linear baselines at 10/20/40/100% parallel pairs."""
    rows: dict[str, Row] = {}
    for ds in run.settings.detail_datasets:
        corpus, pair, test = DATASETS[ds]
        inputs = _static(rep, corpus)
        for ratio in run.settings.ratios:
            pct = _percent(ratio)
            for mode, label in (("absent", "ABSent"), ("uni-sent", "uni-Sent")):
                rows.setdefault(f"{label} {pct}", {}).update(
                    run.scores(run.absent(inputs, corpus, [pair], mode, ratio), test, corpus))
            for method in FIGURE3_BASELINES:
                enc = run.linear(inputs, corpus, [pair], method, ratio)
                rows.setdefault(f"{LINEAR_ROWS[method]} {pct}", {}).update(
                    run.scores(enc, test, corpus, enc.retrieval_rule))
    return _finish(rows)


def study_zeroshot(run: Runner, rep: str) -> Rows:
    """Table 5: de<->es. The linear baselines are fitted on de-es pairs (dedicated supervision, 100%); ABSent
    maps German and Spanish into English from 20% of de-en and es-en pairs and never sees a de-es pair.
    Extension: Procrustes maps de->en and es->en (100%, also zero-shot for de-es)."""
    rows: dict[str, Row] = {}
    for corpus, test in ZERO_SHOT.items():
        inputs = _static(rep, corpus)
        for method, label in LINEAR_ROWS.items():
            lin = run.linear(inputs, corpus, ["de-es"], method)
            if method == "lsq":
                rows.setdefault(NO_MAP, {}).update(run.scores(lin, test, corpus, mapped=False))
            rows.setdefault(f"{label}, de-es pairs", {}).update(run.scores(lin, test, corpus, lin.retrieval_rule))
        via = run.linear(inputs, corpus, ["de-en", "es-en"], "procrustes-csls")
        rows.setdefault("Procrustes + CSLS via en (zero-shot, extension)", {}).update(
            run.scores(via, test, corpus, "csls"))
        enc = run.absent(inputs, corpus, ["de-en", "es-en"], "absent", 0.2)
        rows.setdefault(METHOD_ROWS["zeroshot"], {}).update(run.scores(enc, test, corpus))
    return _finish(rows)


def study_lowres(run: Runner, rep: str) -> Rows:
    """Table 3's set-up: X-en pairs of low-resource languages (1997 NTREX lines each, all used as parallel data),
    tested on Tatoeba v1; plain averages for the static inputs (short test sentences)."""
    rows: dict[str, Row] = {}
    inputs = _static(rep, "short")
    for lang in run.settings.low_resource:
        pair = f"{lang}-en"
        for method in ("lsq", "procrustes-csls"):
            lin = run.linear(inputs, "ntrex", [pair], method)
            if method == "lsq":
                rows.setdefault(NO_MAP, {}).update(run.scores(lin, lang, "tatoeba", mapped=False))
            rows.setdefault(LINEAR_ROWS[method], {}).update(run.scores(lin, lang, "tatoeba", lin.retrieval_rule))
        gan = run.absent(inputs, "ntrex", [pair], "absent", 1.0)
        rows.setdefault(METHOD_ROWS["lowres"], {}).update(run.scores(gan, lang, "tatoeba"))
    return _finish(rows)


STUDIES: dict[str, Callable[[Runner, str], Rows]] = {
    "main": study_main, "ablations": study_ablations, "ratios": study_ratios, "zeroshot": study_zeroshot,
    "lowres": study_lowres}


# --- the paper's claims ----------------------------------------------------------------------------------------


def _verdict(held: bool, claim: str, evidence: str) -> str:
    return f"{'HELD' if held else 'DID NOT HOLD'} here: {claim} ({evidence})"


def _dataset_columns(rows: Rows, suffix: str) -> list[str]:
    first = next(iter(rows.values()))
    return [k for k in first if k.endswith(suffix) and not k.startswith("mean") and "csls" not in k]


def _wins(rows: Rows, a: str, b: str, suffix: str = " p@1") -> str:
    cols = _dataset_columns(rows, suffix)
    return f"higher in {sum(rows[a][c] > rows[b][c] for c in cols)} of {len(cols)} columns"


def claims_main(rows: Rows) -> list[str]:
    """Table 1's claims: ABSent (20%) beats every linear map (100%) and the Conditional GAN."""
    ab = rows[METHOD_ROWS["main"]]
    out = []
    for metric in ("mean p@1", "mean p@5"):
        best = max(LINEAR_ROWS.values(), key=lambda r: rows[r][metric])
        out.append(_verdict(ab[metric] > rows[best][metric],
                            f"ABSent with 20% parallel pairs beats every linear map with 100% on {metric}",
                            f"{ab[metric]:.1f} vs best linear map {best} {rows[best][metric]:.1f}; "
                            f"{_wins(rows, METHOD_ROWS['main'], best, metric[-4:])}"))
    cg = rows["Conditional GAN (20%)"]["mean p@1"]
    out.append(_verdict(ab["mean p@1"] > cg, "ABSent beats the Conditional GAN (same parallel data) on mean p@1",
                        f"{ab['mean p@1']:.1f} vs {cg:.1f}"))
    own = rows[NO_MAP]["mean p@1"]
    out.append(_verdict(ab["mean p@1"] > own, "ABSent improves on the input space without any map (xlsent check)",
                        f"{ab['mean p@1']:.1f} vs {own:.1f} mean p@1"))
    return out


def claims_ablations(rows: Rows) -> list[str]:
    """Table 2's claims: bidirectional beats uni-directional; mismatch pairs help both; the paper's weighting."""
    m = "mean p@1"
    checks = [("A (ABSent)", "U", "bidirectional training (ABSent) beats uni-directional (uni-Sent) at 10% parallel"),
              ("A\\mis", "U\\mis", "without mismatch pairs too, bidirectional beats uni-directional"),
              ("A (ABSent)", "A\\mis", "mismatch pairs help ABSent"),
              ("U", "U\\mis", "mismatch pairs help uni-Sent")]
    if LD_ONLY in rows:
        checks.append(("A (ABSent)", LD_ONLY, "the adversarial terms help: ABSent beats its generators trained on "
                       "L_d alone (xlsent check)"))
    out = [_verdict(rows[a][m] > rows[b][m], claim, f"{a} {rows[a][m]:.1f} vs {b} {rows[b][m]:.1f} {m}; "
                    f"{_wins(rows, a, b)}") for a, b, claim in checks]
    if "A_s (swapped weighting)" in rows:
        a, s = rows["A (ABSent)"], rows["A_s (swapped weighting)"]
        for corpus, weighting in (("short", "plain averages"), ("long", "TF-IDF weighting")):
            cols = [k for k in _dataset_columns(rows, " p@1") if k.startswith(corpus)]
            if cols:
                mine, other = float(np.mean([a[c] for c in cols])), float(np.mean([s[c] for c in cols]))
                out.append(_verdict(mine > other, f"{weighting} beat the swapped weighting on {corpus} sentences",
                                    f"{mine:.1f} vs {other:.1f} p@1"))
    return out


def claims_ratios(rows: Rows) -> list[str]:
    """Figure 3's claims: precision grows with the parallel ratio; ABSent beats uni-Sent at every ratio."""
    pcts = [k.split()[-1] for k in rows if k.startswith("ABSent ")]
    series = [rows[f"ABSent {p}"]["mean p@1"] for p in pcts]
    wins = [rows[f"ABSent {p}"]["mean p@1"] > rows[f"uni-Sent {p}"]["mean p@1"] for p in pcts]
    return [_verdict(all(b > a for a, b in zip(series, series[1:], strict=False)),
                     "ABSent's precision improves as the ratio of parallel pairs grows",
                     ", ".join(f"{p} {v:.1f}" for p, v in zip(pcts, series, strict=True)) + " mean p@1"),
            _verdict(all(wins), "ABSent beats uni-Sent at every parallel ratio",
                     f"higher at {sum(wins)} of {len(wins)} ratios on mean p@1")]


def claims_zeroshot(rows: Rows) -> list[str]:
    """Table 5's claim: zero-shot de<->es works, beating baselines that get de-es pairs."""
    ab = rows[METHOD_ROWS["zeroshot"]]["mean p@1"]
    baselines = [k for k in rows if k.endswith(", de-es pairs")]
    best = max(baselines, key=lambda r: rows[r]["mean p@1"])
    own = rows[NO_MAP]["mean p@1"]
    via = rows["Procrustes + CSLS via en (zero-shot, extension)"]["mean p@1"]
    return [_verdict(ab > rows[best]["mean p@1"], "zero-shot ABSent (no de-es pair) beats every linear baseline "
                     "trained on de-es pairs", f"{ab:.1f} vs {best} {rows[best]['mean p@1']:.1f} mean p@1"),
            _verdict(ab > own, "zero-shot ABSent retrieves de<->es better than the input space without a map",
                     f"{ab:.1f} vs {own:.1f} mean p@1"),
            _verdict(ab > via, "zero-shot ABSent beats Procrustes maps into English (the zero-shot linear "
                     "alternative, xlsent check)", f"{ab:.1f} vs {via:.1f} mean p@1")]


def claims_lowres(rows: Rows) -> list[str]:
    """Table 3's spirit: a few thousand pairs suffice; checked against the linear maps and the input space."""
    ab = rows[METHOD_ROWS["lowres"]]["mean p@1"]
    best = max((LINEAR_ROWS[m] for m in ("lsq", "procrustes-csls")), key=lambda r: rows[r]["mean p@1"])
    return [_verdict(ab > rows[best]["mean p@1"], "on low-resource pairs ABSent beats the linear maps",
                     f"{ab:.1f} vs {best} {rows[best]['mean p@1']:.1f} mean p@1"),
            _verdict(ab > rows[NO_MAP]["mean p@1"], "on low-resource pairs ABSent improves on the input space",
                     f"{ab:.1f} vs {rows[NO_MAP]['mean p@1']:.1f} mean p@1")]


CLAIMS: dict[str, Callable[[Rows], list[str]]] = {
    "main": claims_main, "ablations": claims_ablations, "ratios": claims_ratios, "zeroshot": claims_zeroshot,
    "lowres": claims_lowres}

REPRESENTATION_NOTES = {
    "static": "inputs: averages of me5-small's static input subword vectors (its embedding matrix), xlsent's "
              "stand-in for the paper's fastText word vectors; plain averages for short sentences and TF-IDF "
              "weighted ones for long sentences (the paper's choice), the idf fitted on each model's training "
              "sentences",
    "encoder": "inputs: me5-small's own sentence vectors (already multilingual, unlike averaged fastText vectors: "
               "the row 'input space, no map' shows how aligned they are before any map)",
}


def study_result(name: str, rep: str, rows: Rows, settings: StudySettings, backbone_id: str, seconds: float,
                 files: dict[str, str] | None = None) -> TaskResult:
    """The result of one study on one representation: its declared method row is the summary score."""
    method_row = METHOD_ROWS[name]
    first = next(iter(rows[method_row]))
    return TaskResult(
        task="absent", encoder=backbone_id, dataset="retrieval_pk sets (Tatoeba v1, newstest2012, Tatoeba-Challenge)",
        main_score=rows[method_row][first], main_metric=f"{first}, row '{method_row}' (the paper's method)",
        subset_metric=first, scores=rows, variant=f"{name}-{rep}", dataset_files=dict(sorted((files or {}).items())),
        options={"inputs": rep, "datasets": list(settings.datasets), "detail_datasets": list(settings.detail_datasets),
                 "ratios": list(settings.ratios), "steps": settings.steps, "max_pairs": settings.max_pairs,
                 "method_row": method_row},
        notes=[(STUDIES[name].__doc__ or "").strip(),
               f"summary row: '{method_row}'; P@k in percent, columns '<corpus> <x>-><y> p@k' (each row with its "
               "method's retrieval rule), 'mean' columns average them; both directions search the target space",
               *CLAIMS[name](rows), REPRESENTATION_NOTES[rep],
               f"CPU-sized: {settings.steps} generator steps per GAN model (batch 128); training pairs: all "
               "filtered pairs of each corpus (15,433 short de-en, 14,151 short es-en, 16,050 long de-en, 13,043 "
               "long es-en, 795 short and 13,054 long de-es for the zero-shot baselines, 1997 NTREX pairs per "
               "low-resource language; the paper has 60k-160k) unless max_pairs caps them",
               "test sets: Tatoeba v1 deu/spa (1000 pairs), newstest2012 (1600 de-en, 1300 es-en, 490 de-es), "
               "490 Tatoeba-Challenge de-es pairs joined through English (retrieval_pk)"],
        seconds=seconds,
    )


def run_studies(studies: Sequence[str], settings: StudySettings, out_dir: Path) -> list[Path]:
    """Run the named studies on every representation and save one result JSON each."""
    from xlsent.encoders.registry import load_encoder

    backbone = load_encoder(settings.backbone)
    run = Runner(backbone, settings)
    paths = []
    for rep in settings.inputs:
        for name in studies:
            t0 = time.perf_counter()
            run.files = {}
            rows = STUDIES[name](run, rep)
            result = study_result(name, rep, rows, settings, encoder_id(backbone), time.perf_counter() - t0,
                                  run.files)
            paths.append(result.save(out_dir))
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", nargs="+", default=["main", "ablations", "ratios", "zeroshot"],
                        choices=list(STUDIES))
    parser.add_argument("--inputs", nargs="+", default=list(REPRESENTATIONS), choices=REPRESENTATIONS)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS),
                        help="datasets of Table 1")
    parser.add_argument("--detail-datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS),
                        help="datasets of Table 2 and Figure 3")
    parser.add_argument("--ratios", nargs="+", type=float, default=[0.1, 0.2, 0.4, 1.0])
    parser.add_argument("--steps", type=int, default=1000, help="generator steps per GAN model")
    parser.add_argument("--max-pairs", type=int, help="cap on the training pairs of each language pair")
    parser.add_argument("--valid-pairs", type=int, default=300,
                        help="parallel pairs held out for ABSent's model selection")
    parser.add_argument("--low-resource", nargs="+", default=list(LOW_RESOURCE))
    parser.add_argument("--models", default="models/absent-study", help="where trained models are kept")
    parser.add_argument("--backbone", default="me5-small")
    parser.add_argument("--out", default="results")
    parser.add_argument("--data", help="benchmark data folder")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's; 1 on a shared machine)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    settings = StudySettings(tuple(args.inputs), tuple(args.datasets), tuple(args.detail_datasets),
                             tuple(args.ratios), args.steps, args.max_pairs, args.valid_pairs, tuple(args.low_resource),
                             Path(args.models), args.data, args.backbone)
    for path in run_studies(args.studies, settings, Path(args.out)):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
