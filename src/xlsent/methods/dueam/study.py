"""Measure DuEAM on our data and check the paper's claims; results go to ``results/``.

Every model is scored by the evaluation tasks' own ``evaluate`` on its encodings (cached on disk per model id).
Each study writes one ``TaskResult`` (task ``dueam``, variant = the study) whose rows are models; its summary
score is the row it declares as the paper's method, never the best row. Studies:

- ``anchor``: the anchor's WMD per layer (no training): Spearman x100 of -WMD with the STS17 gold scores and
  WMD nearest-neighbour accuracy on NTREX de-en pairs; it justifies ``anchor_layer`` in ``configs/dueam.toml``.
- ``main`` (Tables 1, 3, 4, 5, 6): the backbone and both DuEAM modes (optionally the weakly supervised model
  fully fine-tuned) on STS17 and cross-lingual STS-B, BUCC, Tatoeba (all 112 languages and the paper's tables'
  languages) and SentEval MR/SUBJ/TREC/SST-2. The DuEAM models' task results are also saved one per task
  (``results/<task>__dueam-....json``) and recorded in their model cards.
- ``objectives`` (Figure 2): weakly supervised with L_A only, L_B only, both; Tatoeba de/fr/hi (both directions).
- ``lambda`` (Figure 3): lambda in {0.0003, 0.003, 0.03, 0.3}; mean STS Spearman over the six pairs of Table 1.
- ``zero-shot`` (Table 2): weakly supervised on en-de only, STS on the eight other pairs of Table 2.

CPU forces far smaller runs than the paper's 5 epochs of ~392k pairs: every result states each model's steps,
batch, pairs, epochs and training time (``options.models`` and the notes).

    python -m xlsent.methods.dueam.study --studies anchor main objectives lambda zero-shot
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from xlsent.arg_types import positive_int
from xlsent.data.parallel import load_ntrex
from xlsent.data.sts import load_sts17
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation import bucc, senteval, sts, tatoeba
from xlsent.evaluation.results import TaskResult
from xlsent.evaluation.task import EmbedFn, encoder_embed
from xlsent.methods.dueam.config import PAPER_LANGS, DueamConfig
from xlsent.methods.dueam.model import METHOD, load_model, resolve_layer
from xlsent.methods.dueam.wmd import unit_rows, wmd
from xlsent.studies.command import main
from xlsent.studies.numbers import listing, versus
from xlsent.studies.settings import StudySettings, option
from xlsent.studies.study import Rows, Study, StudyRun
from xlsent.studies.trained import ensure_trained
from xlsent.studies.verdict import Verdict
from xlsent.training.model_card import record_metrics
from xlsent.training.record import read_training

log = logging.getLogger(__name__)

TASK = "dueam"
DATASET = "STS17, stsb_multi_mt, BUCC, tatoeba_v1, SentEval; trained on XNLI dev"
STS_TABLE1 = {"en-en": "sts17-5", "es-es": "sts17-3", "en-de": "stsb-en-de", "en-tr": "sts17-6",
              "en-es": "sts17-4a", "en-fr": "stsb-en-fr"}
"""Table 1's six STS pairs (Figure 3 averages them) -> xlsent's STS subsets."""
STS_TABLE2 = {"es-es": "sts17-3", "ar-ar": "sts17-1", "en-es": "sts17-4a", "en-ar": "sts17-2", "en-tr": "sts17-6",
              "en-fr": "stsb-en-fr", "en-nl": "stsb-en-nl", "en-it": "stsb-en-it"}
"""Table 2's zero-shot STS pairs (the model trains on en-de only)."""
TATOEBA_GROUPS = {
    "trained 12": ("bul", "cmn", "deu", "ell", "fra", "hin", "rus", "spa", "tur", "tha", "urd", "vie"),
    "table 4": ("deu", "hin", "cmn", "ell"),
    "low-resource 6": ("afr", "tel", "tgl", "gle", "kat", "amh"),
}
"""Tatoeba languages of the paper's tables: appendix Table 14 (the trained languages), Table 4, and Table 5 (four
zero-shot and two small-data under-resourced languages)."""
FIGURE2_LANGS = ("deu", "fra", "hin")
BUCC_SETS = ("zh", "de", "fr", "ru")
"""Table 3's pairs: the zh-en BUCC 2018 sample, and de/fr/ru-en BUCC-style sets built from newstest."""
LAMBDAS = (0.0003, 0.003, 0.03, 0.3)
PAPER_LAMBDA = 0.003
ANCHOR_STS = {"en-en": "5", "es-en": "4a", "ar-en": "2", "es-es": "3"}
ANCHOR_NTREX_PAIRS = 100
MAIN_METRICS = ("sts table-1 avg", "bucc mean f1", "tatoeba trained 12", "tatoeba low-resource 6")


@dataclass(frozen=True)
class Settings(StudySettings):
    """How long each model trains (CPU-sized, see the defaults) and what the studies evaluate on."""

    models_dir: Path = Path("models/dueam")
    steps: int = option(1500, "steps of the main and zero-shot models", type=positive_int)
    ablation_steps: int = option(500, "steps of the Figure 2 and 3 models", type=positive_int)
    max_pairs: int = option(20000, "training pairs sampled from XNLI dev", type=positive_int)
    tatoeba_langs: tuple[str, ...] = option((), "Tatoeba languages of the main study (none given: all 112); "
                                                "'paper': the 18 of the paper's tables (TATOEBA_GROUPS)")
    full: bool = option(False, "main study: also a fully fine-tuned weakly supervised model (paper lr 2e-5)")
    backbone: str = option("me5-small", "learner start and anchor")


def tatoeba_langs(given: Sequence[str]) -> tuple[str, ...] | None:
    """The main study's Tatoeba languages from ``--tatoeba-langs``: ``None`` (all 112) when none are given, and
    ``paper`` expanded to the languages of :data:`TATOEBA_GROUPS`, each once.

    >>> len(tatoeba_langs(["paper"])), tatoeba_langs(["deu", "fra"]), tatoeba_langs(())
    (18, ('deu', 'fra'), None)
    """
    if not given:
        return None
    expanded = [lang for code in given for lang in (sum(TATOEBA_GROUPS.values(), ()) if code == "paper" else (code,))]
    return tuple(dict.fromkeys(expanded))


# --- scoring -------------------------------------------------------------------------------------------------


def sts_columns(result: TaskResult, subsets: dict[str, str], label: str) -> dict[str, float]:
    """``sts <label> avg`` over ``subsets`` (pair -> xlsent STS subset) of an STS result, and one column per pair."""
    cols = {f"sts {pair}": result.scores[name]["spearman"] for pair, name in subsets.items()}
    return {f"sts {label} avg": float(np.mean(list(cols.values()))), **cols}


def sts_subsets(embed: EmbedFn, ident: str, subsets: dict[str, str], label: str, root: str | None
                ) -> dict[str, float]:
    """Evaluate STS on ``subsets`` only and return :func:`sts_columns`."""
    return sts_columns(sts.evaluate(embed, encoder_id=ident, langs=list(subsets.values()), root=root), subsets, label)


def tatoeba_columns(result: TaskResult) -> dict[str, float]:
    """Tatoeba's mean accuracy over every language run and over each of the paper's language groups."""
    per_lang = {lang: v["mean"] for lang, v in result.scores.items()}
    out = {f"tatoeba {len(per_lang)} langs": float(np.mean(list(per_lang.values())))}
    for group, langs in TATOEBA_GROUPS.items():
        if all(x in per_lang for x in langs):
            out[f"tatoeba {group}"] = float(np.mean([per_lang[x] for x in langs]))
    return out


def main_scores(enc: TransformerEncoder, settings: Settings) -> tuple[dict[str, float], list[TaskResult]]:
    """The ``main`` study's columns for one model, and the task results they come from."""
    root, embed, ident = settings.data, encoder_embed(enc), encoder_id(enc)
    tat = tatoeba.evaluate(embed, encoder_id=ident, langs=list(tatoeba_langs(settings.tatoeba_langs) or ()) or None,
                           root=root)
    similarity = sts.evaluate(embed, encoder_id=ident, root=root)
    mined = bucc.evaluate(embed, encoder_id=ident, langs=list(BUCC_SETS), root=root)
    probe = senteval.evaluate(embed, encoder_id=ident, root=root)
    cols = {**tatoeba_columns(tat), **sts_columns(similarity, STS_TABLE1, "table-1"),
            **{f"sts {k}": v for k, v in similarity.averages.items()},
            **{f"bucc {name.split(' ')[0]} f1": v["f1"] for name, v in mined.scores.items()},
            "bucc mean f1": float(np.mean([v["f1"] for v in mined.scores.values()])),
            **{f"senteval {k}": v["accuracy"] for k, v in probe.scores.items()}, "senteval avg": probe.main_score}
    return cols, [tat, similarity, mined, probe]


def _training_note(summary: dict[str, Any]) -> str:
    return (f"{summary['mode']}, {summary['steps']} steps x {summary['batch']} pairs over {summary['pairs']} pairs "
            f"({summary['epochs']:g} epochs), {summary['finetune']} fine-tuning (lr {summary['lr']:g}), "
            f"{summary['minutes']:g} min on {summary['device']} (anchor WMD {summary['anchor_minutes']:g} min), "
            + (f"checkpoint of step {summary['best_step']} (best validation)" if summary["best_step"] else
               "last step (no validation)"))


class Lab:
    """The backbone (learner start and anchor) and the trained (or reused) models."""

    def __init__(self, settings: Settings) -> None:
        from xlsent.encoders.registry import load_encoder

        backbone = load_encoder(settings.backbone)
        if not isinstance(backbone, TransformerEncoder):
            raise ValueError(f"{settings.backbone} is not a transformer model")
        self.settings, self.backbone, self.encoder = settings, backbone, encoder_id(backbone)

    def config(self, mode: str, steps: int, **overrides: Any) -> DueamConfig:
        """The ``mode``'s configuration with the settings' sets, backbone (also the anchor), ``steps`` (a third of
        them warm-up) and a row's typed ``overrides``."""
        s = self.settings
        cfg = METHOD.config(mode=mode, sets=s.sets, **{
            "backbone": s.backbone, "anchor": s.backbone, "steps": steps, "warmup_steps": steps // 3,
            "max_pairs": s.max_pairs, **overrides})
        assert isinstance(cfg, DueamConfig)
        return cfg

    def model(self, run: StudyRun[Settings], row: str, name: str, cfg: DueamConfig) -> TransformerEncoder:
        """``models_dir/name`` trained with ``cfg`` (resumed if killed, reused if done), loaded; what its training
        cost goes into ``run.options["models"][row]``."""
        out = ensure_trained(METHOD, cfg, self.settings.models_dir / name, data=self.settings.data,
                             retrain=self.settings.retrain)
        training = read_training(out)
        best = (training.validation.best if training.validation else None) or {}
        run.options.setdefault("models", {})[row] = {
            "mode": cfg.mode, "steps": training.steps_done, "batch": cfg.batch_size,
            "pairs": training.details["pairs"], "epochs": training.details["epochs"], "finetune": cfg.finetune,
            "lr": cfg.lr, "langs": cfg.langs, "minutes": round(training.seconds / 60, 1),
            "anchor_minutes": round(training.details["anchor"]["seconds"] / 60, 1), "best_step": best.get("step"),
            "device": training.details["device"]}
        return load_model(out)

    def notes(self, run: StudyRun[Settings]) -> list[str]:
        s, method_row = run.settings, run.method_row or STUDIES[run.name].method_row
        models = run.options.get("models", {})
        return [f"summary row: '{method_row}'; the other rows are baselines, ablations or extensions",
                *(f"{row}: {_training_note(summary)}" for row, summary in models.items()),
                "CPU-sized: the paper trains 5 epochs of ~392k XNLI-MT pairs (batch 64, ~30k steps); here a seeded "
                f"sample of at most {s.max_pairs} XNLI dev pairs and "
                + (f"{s.ablation_steps} steps per model (the Figure 2/3 ablations)" if run.name in ABLATION_STUDIES
                   else f"{s.steps} steps per model"),
                f"backbone and anchor {s.backbone} (multilingual-e5-small, itself trained on multilingual pairs), not "
                "the paper's XLM-R base (no sentence objective)"]


def setup(settings: Settings, out_dir: Path) -> Lab:
    return Lab(settings)


# --- studies -------------------------------------------------------------------------------------------------


def study_anchor(lab: Lab, run: StudyRun[Settings]) -> None:
    """WMD of the anchor's unit token vectors per layer (uniform weights, exact EMD): Spearman x100 of -WMD with
    the STS17 gold scores of four tracks, and WMD nearest-neighbour accuracy (both directions) on 100 NTREX de-en
    lines. The method row is the configured ``anchor_layer``."""
    anchor, root = lab.backbone, run.settings.data
    sets = {pair: load_sts17(track, root) for pair, track in ANCHOR_STS.items()}
    de, en = load_ntrex("deu", "eng", root)
    lines = np.random.default_rng(0).choice(len(de), min(ANCHOR_NTREX_PAIRS, len(de)), replace=False)
    de, en = [de[j] for j in lines], [en[j] for j in lines]
    for layer in range(anchor.num_layers + 1):
        row: dict[str, float] = {}
        for pair, p in sets.items():
            a = [unit_rows(x) for x in anchor.token_states(p.sent1, layer)]
            b = [unit_rows(x) for x in anchor.token_states(p.sent2, layer)]
            d = np.array([wmd(x, y) if len(x) and len(y) else np.nan for x, y in zip(a, b, strict=True)])
            keep = np.isfinite(d)
            row[f"sts17 {pair}"] = float(spearmanr(-d[keep], np.asarray(p.scores)[keep]).statistic * 100)
        xs = [unit_rows(x) for x in anchor.token_states(de, layer)]
        ys = [unit_rows(x) for x in anchor.token_states(en, layer)]
        dist = np.array([[wmd(x, y) for y in ys] for x in xs])
        hits = np.arange(len(xs))
        acc = ((dist.argmin(1) == hits).mean() + (dist.argmin(0) == hits).mean()) / 2 * 100
        run.rows[f"layer {layer}"] = {"sts17 mean": float(np.mean(list(row.values()))), **row,
                                      "ntrex de-en wmd retrieval": float(acc)}
        log.info("anchor layer %d: %s", layer, run.rows[f"layer {layer}"])
    configured = METHOD.config(sets=list(run.settings.sets))
    assert isinstance(configured, DueamConfig)
    run.method_row = f"layer {resolve_layer(anchor, configured.anchor_layer)}"


def study_main(lab: Lab, run: StudyRun[Settings]) -> None:
    """The backbone and both DuEAM modes (and the fully fine-tuned weakly supervised model with ``full``)."""
    s = run.settings
    run.rows[f"{lab.backbone.name} (backbone)"] = main_scores(lab.backbone, s)[0]
    variants = [("DuEAM unsupervised", "unsup", lab.config("unsupervised", s.steps)),
                (STUDIES["main"].method_row, "weak", lab.config("weakly-supervised", s.steps))]
    if s.full:
        variants.append(("DuEAM weakly-supervised, full fine-tune", "weak-full",
                         lab.config("weakly-supervised", s.steps, finetune="full", lr=2e-5)))
    for row, name, cfg in variants:
        model = lab.model(run, row, f"dueam-{name}", cfg)
        run.rows[row], results = main_scores(model, s)
        for r in results:
            r.notes.append(f"{row}: {_training_note(run.options['models'][row])}")
        record_metrics(model.model_dir, [asdict(r) for r in results])
        run.results += results


def study_objectives(lab: Lab, run: StudyRun[Settings]) -> None:
    """Figure 2: weakly supervised DuEAM with L_A only, L_B only and L_A + L_B (lambda 0.003), scored on Tatoeba
    de, fr and hi (mean of both directions)."""
    for row, tag, objective in (("L_A only", "LA", "LA"), ("L_B only", "LB", "LB"),
                                (STUDIES["objectives"].method_row, f"lambda-{PAPER_LAMBDA}", "both")):
        cfg = lab.config("weakly-supervised", run.settings.ablation_steps, objective=objective, lambda_b=PAPER_LAMBDA)
        model = lab.model(run, row, f"ablation-{tag}", cfg)
        tat = tatoeba.evaluate(encoder_embed(model), encoder_id=encoder_id(model), langs=list(FIGURE2_LANGS),
                               root=run.settings.data)
        per_lang = {f"tatoeba {x}": tat.scores[x]["mean"] for x in FIGURE2_LANGS}
        run.rows[row] = {"tatoeba de/fr/hi": float(np.mean(list(per_lang.values()))), **per_lang}


def study_lambda(lab: Lab, run: StudyRun[Settings]) -> None:
    """Figure 3: weakly supervised DuEAM per lambda, scored by the mean STS Spearman over Table 1's six pairs."""
    for lam in LAMBDAS:
        cfg = lab.config("weakly-supervised", run.settings.ablation_steps, lambda_b=lam)
        model = lab.model(run, f"lambda = {lam}", f"ablation-lambda-{lam}", cfg)
        run.rows[f"lambda = {lam}"] = sts_subsets(encoder_embed(model), encoder_id(model), STS_TABLE1, "table-1",
                                                  run.settings.data)


def study_zero_shot(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 2: weakly supervised DuEAM trained on en-de XNLI pairs only, on the STS pairs of other languages,
    next to the backbone and the model trained on all 13 languages (the ``main`` study's)."""
    root = run.settings.data
    run.rows[f"{lab.backbone.name} (backbone)"] = sts_subsets(encoder_embed(lab.backbone), lab.encoder, STS_TABLE2,
                                                              "table-2", root)
    for row, name, langs in ((STUDIES["zero-shot"].method_row, "dueam-weak-en-de", ["en", "de"]),
                             ("weakly-supervised on 13 languages", "dueam-weak", list(PAPER_LANGS))):
        model = lab.model(run, row, name, lab.config("weakly-supervised", run.settings.steps, langs=langs))
        run.rows[row] = sts_subsets(encoder_embed(model), encoder_id(model), STS_TABLE2, "table-2", root)


ABLATION_STUDIES = ("objectives", "lambda")
"""The studies whose models train ``ablation_steps`` steps."""


# --- claims --------------------------------------------------------------------------------------------------


def _backbone_row(rows: Rows) -> dict[str, float]:
    return next(v for k, v in rows.items() if k.endswith("(backbone)"))


def claims_main(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Weak supervision beats no supervision (Tables 1, 3, 4, 5); and, not a claim of the paper (whose baseline,
    XLM-R, has no sentence objective), whether DuEAM improves on its backbone."""
    weak, unsup, base = rows[method_row], rows["DuEAM unsupervised"], _backbone_row(rows)
    out = [Verdict(f"weakly supervised DuEAM beats unsupervised DuEAM on {m}", weak[m] > unsup[m],
                   versus(weak[m], unsup[m])) for m in MAIN_METRICS if m in weak]
    out += [Verdict(f"weakly supervised DuEAM improves on its backbone on {m} (the paper's backbone XLM-R has no "
                    "sentence objective)", weak[m] > base[m], versus(weak[m], base[m]), "xlsent")
            for m in dict.fromkeys((metric, *MAIN_METRICS)) if m in weak]
    return out


def claims_objectives(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Figure 2: the joint objective beats each of its terms alone."""
    both = rows[method_row][metric]
    return [Verdict(f"L_A + L_B beats {alone}", both > rows[alone][metric],
                    f"{versus(both, rows[alone][metric])} {metric}") for alone in ("L_A only", "L_B only")]


def claims_lambda(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Figure 3: the paper's lambda (0.003) is best, and larger values score lower."""
    scores = {float(k.split("=")[1]): v[metric] for k, v in rows.items()}
    paper = float(method_row.split("=")[1])
    best = max(scores, key=lambda lam: scores[lam])
    evidence = listing({f"{lam:g}:": v for lam, v in sorted(scores.items())})
    larger = sorted(lam for lam in scores if lam >= paper)
    falling = all(scores[a] > scores[b] for a, b in zip(larger, larger[1:], strict=False))
    return [Verdict(f"lambda = {paper:g} gives the best {metric}", best == paper, evidence),
            Verdict(f"from {paper:g} up, a larger lambda gives a lower {metric}", falling, evidence)]


def claims_zero_shot(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 2: trained on en-de only, DuEAM transfers to other STS pairs (the paper: ~20 points over XLM-R mean;
    here against the backbone, which already has a sentence objective)."""
    ende, base = rows[method_row], _backbone_row(rows)
    pairs = [k for k in ende if k != metric]
    better = [k.removeprefix("sts ") for k in pairs if ende[k] > base[k]]
    return [Verdict("DuEAM trained on en-de only beats its backbone on the mean of Table 2's eight STS pairs "
                    "(zero-shot transfer)", ende[metric] > base[metric], f"{versus(ende[metric], base[metric])}; "
                    f"better on {len(better)} of {len(pairs)}: {' '.join(better) or 'none'}")]


def claims_anchor(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """The configured anchor layer is the one whose WMD tracks STS best (an xlsent choice, not a paper claim)."""
    best = max(rows, key=lambda k: rows[k][metric])
    return [Verdict(f"the configured anchor layer ({method_row}) has the best {metric} of -WMD (xlsent's choice of "
                    "layer)", best == method_row, listing({k: v[metric] for k, v in rows.items()}), "xlsent")]


STUDIES = {
    "anchor": Study(study_anchor, claims=claims_anchor),
    "main": Study(study_main, "DuEAM weakly-supervised", claims=claims_main),
    "objectives": Study(study_objectives, f"L_A + L_B (lambda {PAPER_LAMBDA})", claims=claims_objectives),
    "lambda": Study(study_lambda, f"lambda = {PAPER_LAMBDA}", claims=claims_lambda),
    "zero-shot": Study(study_zero_shot, "weakly-supervised on en-de only", claims=claims_zero_shot),
}
"""Each study and the row it declares as its method (the paper's configuration): the study's summary score; the
anchor study's is the configured anchor layer, found from the backbone's layer count."""


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.modules[__name__]))
