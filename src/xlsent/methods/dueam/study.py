"""Measure DuEAM on our data and check the paper's claims; results go to ``results/``.

Every model is scored by the evaluation tasks' own ``evaluate`` on its encodings (cached on disk per model id).
Each study writes one ``TaskResult`` (task ``dueam``, variant = the study) whose rows are models; its summary
score is the row it declares as the paper's method (:data:`METHOD_ROWS`), never the best row. Studies:

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

import argparse
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from xlsent.data.parallel import load_ntrex
from xlsent.data.sts import load_sts17
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.model_card import record_metrics
from xlsent.encoders.model_dir import read_manifest
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation import bucc, senteval, sts, tatoeba
from xlsent.evaluation.results import TaskResult, load_results
from xlsent.evaluation.task import EmbedFn, encoder_embed
from xlsent.methods.dueam.model import METHOD, DueamConfig, load_model, resolve_layer
from xlsent.methods.dueam.data import PAPER_LANGS
from xlsent.methods.dueam.wmd import unit_rows, wmd

log = logging.getLogger(__name__)

Rows = dict[str, dict[str, float]]
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


def tatoeba_langs(given: Sequence[str] | None) -> tuple[str, ...] | None:
    """The main study's Tatoeba languages from ``--tatoeba-langs``: ``None`` (all 112) when not given, and ``paper``
    expanded to the languages of :data:`TATOEBA_GROUPS`, each once.

    >>> len(tatoeba_langs(["paper"])), tatoeba_langs(["deu", "fra"]), tatoeba_langs(None)
    (18, ('deu', 'fra'), None)
    """
    if not given:
        return None
    expanded = [lang for code in given for lang in (sum(TATOEBA_GROUPS.values(), ()) if code == "paper" else (code,))]
    return tuple(dict.fromkeys(expanded))
BUCC_SETS = ("zh", "de", "fr", "ru")
"""Table 3's pairs: the zh-en BUCC 2018 sample, and de/fr/ru-en BUCC-style sets built from newstest."""
LAMBDAS = (0.0003, 0.003, 0.03, 0.3)
PAPER_LAMBDA = 0.003
ANCHOR_STS = {"en-en": "5", "es-en": "4a", "ar-en": "2", "es-es": "3"}
ANCHOR_NTREX_PAIRS = 100


@dataclass(frozen=True)
class StudySettings:
    """How long each model trains (CPU-sized, see the defaults) and what the studies evaluate on."""

    steps: int = 1500
    ablation_steps: int = 500
    max_pairs: int = 20000
    models_dir: Path = Path("models/dueam")
    data: str | None = None
    tatoeba_langs: tuple[str, ...] | None = None
    full: bool = False
    sets: tuple[str, ...] = ()
    backbone: str = "me5-small"


# --- training and scoring ------------------------------------------------------------------------------------


def _config(settings: StudySettings, mode: str, steps: int, *sets: str) -> DueamConfig:
    cfg = METHOD.config(mode=mode, sets=[f"backbone={settings.backbone}", f"anchor={settings.backbone}",
                                         f"steps={steps}", f"warmup_steps={steps // 3}",
                                         f"max_pairs={settings.max_pairs}", *settings.sets, *sets])
    assert isinstance(cfg, DueamConfig)
    return cfg


@dataclass
class Trained:
    """A trained model of the study and what its training cost."""

    encoder: TransformerEncoder
    directory: Path
    summary: dict[str, Any] = field(default_factory=dict)


def train_model(settings: StudySettings, name: str, cfg: DueamConfig) -> Trained:
    """``models_dir/name`` trained with ``cfg`` (resumed if killed, reused if done) and loaded.

    A finished model of another configuration is an error: the study never scores a stale model.
    """
    out = settings.models_dir / name
    if not (out / "xlsent.json").is_file():
        log.info("training %s (%s, %d steps)", name, cfg.mode, cfg.steps)
        METHOD.train(cfg, out, resume=True, data=settings.data, progress=False)
    manifest = read_manifest(out, verify="none")
    if manifest.get("fingerprint") != cfg.fingerprint():
        raise ValueError(f"{out} holds a model of another configuration (fingerprint {manifest.get('fingerprint')}, "
                         f"the study wants {cfg.fingerprint()}); remove it or use another --models folder")
    training = manifest["training"]
    summary = {"mode": cfg.mode, "steps": training["steps"], "batch": cfg.batch_size, "pairs": training["pairs"],
               "epochs": training["epochs"], "finetune": cfg.finetune, "lr": cfg.lr, "langs": cfg.langs,
               "minutes": round(training["seconds"] / 60, 1),
               "anchor_minutes": round(training["anchor"]["seconds"] / 60, 1),
               "best_step": (training["validation"].get("best") or {}).get("step"), "device": training["device"]}
    return Trained(load_model(out), out, summary)


def _transformer(name: str) -> TransformerEncoder:
    from xlsent.encoders.registry import load_encoder

    enc = load_encoder(name)
    if not isinstance(enc, TransformerEncoder):
        raise ValueError(f"{name} is not a transformer model")
    return enc


def _embed(enc: TransformerEncoder) -> tuple[EmbedFn, str]:
    return encoder_embed(enc), encoder_id(enc)


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


def main_scores(embed: EmbedFn, ident: str, settings: StudySettings) -> tuple[dict[str, float], list[TaskResult]]:
    """The ``main`` study's columns for one model, and the task results they come from."""
    root = settings.data
    tat = tatoeba.evaluate(embed, encoder_id=ident, langs=list(settings.tatoeba_langs or ()) or None, root=root)
    similarity = sts.evaluate(embed, encoder_id=ident, root=root)
    mined = bucc.evaluate(embed, encoder_id=ident, langs=list(BUCC_SETS), root=root)
    probe = senteval.evaluate(embed, encoder_id=ident, root=root)
    cols = {**tatoeba_columns(tat), **sts_columns(similarity, STS_TABLE1, "table-1"),
            **{f"sts {k}": v for k, v in similarity.averages.items()},
            **{f"bucc {name.split(' ')[0]} f1": v["f1"] for name, v in mined.scores.items()},
            "bucc mean f1": float(np.mean([v["f1"] for v in mined.scores.values()])),
            **{f"senteval {k}": v["accuracy"] for k, v in probe.scores.items()}, "senteval avg": probe.main_score}
    return cols, [tat, similarity, mined, probe]


# --- studies -------------------------------------------------------------------------------------------------


@dataclass
class StudyRun:
    """Rows of one study, the training summary of each trained row, the trained models' own task results (saved
    beside the study's) and, where it depends on the backbone, the method row."""

    rows: Rows
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    results: list[TaskResult] = field(default_factory=list)
    method_row: str = ""


def study_anchor(settings: StudySettings) -> StudyRun:
    """WMD of the anchor's unit token vectors per layer (uniform weights, exact EMD): Spearman x100 of -WMD with
    the STS17 gold scores of four tracks, and WMD nearest-neighbour accuracy (both directions) on 100 NTREX de-en
    lines. The method row is the configured ``anchor_layer``."""
    anchor = _transformer(settings.backbone)
    sets = {pair: load_sts17(track, settings.data) for pair, track in ANCHOR_STS.items()}
    de, en = load_ntrex("deu", "eng", settings.data)
    lines = np.random.default_rng(0).choice(len(de), min(ANCHOR_NTREX_PAIRS, len(de)), replace=False)
    de, en = [de[j] for j in lines], [en[j] for j in lines]
    rows: Rows = {}
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
        rows[f"layer {layer}"] = {"sts17 mean": float(np.mean(list(row.values()))), **row,
                                  "ntrex de-en wmd retrieval": float(acc)}
        log.info("anchor layer %d: %s", layer, rows[f"layer {layer}"])
    configured = METHOD.config(sets=list(settings.sets))
    assert isinstance(configured, DueamConfig)
    return StudyRun(rows, method_row=f"layer {resolve_layer(anchor, configured.anchor_layer)}")


def study_main(settings: StudySettings) -> StudyRun:
    """The backbone and both DuEAM modes (and the fully fine-tuned weakly supervised model with ``full``)."""
    base = _transformer(settings.backbone)
    run = StudyRun({f"{base.name} (backbone)": main_scores(*_embed(base), settings)[0]})
    variants = [("DuEAM unsupervised", "unsup", _config(settings, "unsupervised", settings.steps)),
                ("DuEAM weakly-supervised", "weak", _config(settings, "weakly-supervised", settings.steps))]
    if settings.full:
        variants.append(("DuEAM weakly-supervised, full fine-tune", "weak-full",
                         _config(settings, "weakly-supervised", settings.steps, "finetune=full", "lr=2e-5")))
    for row, name, cfg in variants:
        model = train_model(settings, f"dueam-{name}", cfg)
        run.rows[row], results = main_scores(*_embed(model.encoder), settings)
        run.models[row] = model.summary
        for r in results:
            r.notes.append(f"{row}: {_training_note(model.summary)}")
        record_metrics(model.directory, [asdict(r) for r in results])
        run.results += results
    return run


def _ablation(settings: StudySettings, tag: str, *sets: str) -> Trained:
    cfg = _config(settings, "weakly-supervised", settings.ablation_steps, *sets)
    return train_model(settings, f"ablation-{tag}", cfg)


def study_objectives(settings: StudySettings) -> StudyRun:
    """Figure 2: weakly supervised DuEAM with L_A only, L_B only and L_A + L_B (lambda 0.003), scored on Tatoeba
    de, fr and hi (mean of both directions)."""
    run = StudyRun({})
    for row, tag, objective in (("L_A only", "LA", "LA"), ("L_B only", "LB", "LB"),
                                (METHOD_ROWS["objectives"], f"lambda-{PAPER_LAMBDA}", "both")):
        model = _ablation(settings, tag, f"objective={objective}", f"lambda_b={PAPER_LAMBDA}")
        embed, ident = _embed(model.encoder)
        tat = tatoeba.evaluate(embed, encoder_id=ident, langs=list(FIGURE2_LANGS), root=settings.data)
        per_lang = {f"tatoeba {x}": tat.scores[x]["mean"] for x in FIGURE2_LANGS}
        run.rows[row] = {"tatoeba de/fr/hi": float(np.mean(list(per_lang.values()))), **per_lang}
        run.models[row] = model.summary
    return run


def study_lambda(settings: StudySettings) -> StudyRun:
    """Figure 3: weakly supervised DuEAM per lambda, scored by the mean STS Spearman over Table 1's six pairs."""
    run = StudyRun({})
    for lam in LAMBDAS:
        model = _ablation(settings, f"lambda-{lam}", f"lambda_b={lam}")
        run.rows[f"lambda = {lam}"] = sts_subsets(*_embed(model.encoder), STS_TABLE1, "table-1", settings.data)
        run.models[f"lambda = {lam}"] = model.summary
    return run


def study_zero_shot(settings: StudySettings) -> StudyRun:
    """Table 2: weakly supervised DuEAM trained on en-de XNLI pairs only, on the STS pairs of other languages,
    next to the backbone and the model trained on all 13 languages (the ``main`` study's)."""
    base = _transformer(settings.backbone)
    run = StudyRun({f"{base.name} (backbone)": sts_subsets(*_embed(base), STS_TABLE2, "table-2", settings.data)})
    for row, name, sets in ((METHOD_ROWS["zero-shot"], "dueam-weak-en-de", ["langs=en,de"]),
                            ("weakly-supervised on 13 languages", "dueam-weak", [f"langs={','.join(PAPER_LANGS)}"])):
        model = train_model(settings, name, _config(settings, "weakly-supervised", settings.steps, *sets))
        run.rows[row] = sts_subsets(*_embed(model.encoder), STS_TABLE2, "table-2", settings.data)
        run.models[row] = model.summary
    return run


STUDIES: dict[str, Callable[[StudySettings], StudyRun]] = {
    "anchor": study_anchor, "main": study_main, "objectives": study_objectives, "lambda": study_lambda,
    "zero-shot": study_zero_shot,
}
ABLATION_STUDIES = ("objectives", "lambda")
"""The studies whose models train ``ablation_steps`` steps."""
# the row each study declares as its method (the paper's configuration): the study's summary score; the anchor
# study's is the configured anchor layer, found from the backbone's layer count
METHOD_ROWS = {"main": "DuEAM weakly-supervised", "objectives": f"L_A + L_B (lambda {PAPER_LAMBDA})",
               "lambda": f"lambda = {PAPER_LAMBDA}", "zero-shot": "weakly-supervised on en-de only"}


# --- claims --------------------------------------------------------------------------------------------------


def _verdict(held: bool, claim: str, evidence: str) -> str:
    return f"{'HELD' if held else 'DID NOT HOLD'} here: {claim} ({evidence})"


def decimals(values: Sequence[float], most: int = 4) -> int:
    """The fewest decimals (at least one, at most ``most``) at which the distinct ``values`` print differently.

    >>> decimals([73.04, 73.03, 72.9]), decimals([1.0, 1.0])
    (2, 1)
    """
    distinct = set(values)
    digits = 1
    while digits < most and len({f"{v:.{digits}f}" for v in distinct}) < len(distinct):
        digits += 1
    return digits


def versus(a: float, b: float) -> str:
    """``"a vs b"`` with one decimal, or as many more (up to four) as it takes to tell the two apart.

    >>> versus(73.5, 74.1), versus(95.04, 95.01)
    ('73.5 vs 74.1', '95.04 vs 95.01')
    """
    digits = decimals([a, b])
    return f"{a:.{digits}f} vs {b:.{digits}f}"


def listing(scores: dict[str, float]) -> str:
    """``"name value, ..."`` with the decimals :func:`decimals` needs to tell the values apart.

    >>> listing({"0.003": 73.06, "0.03": 73.14})
    '0.003 73.06, 0.03 73.14'
    """
    digits = decimals(list(scores.values()))
    return ", ".join(f"{name} {value:.{digits}f}" for name, value in scores.items())


MAIN_METRICS = ("sts table-1 avg", "bucc mean f1", "tatoeba trained 12", "tatoeba low-resource 6")


def _backbone_row(rows: Rows) -> dict[str, float]:
    return next(v for k, v in rows.items() if k.endswith("(backbone)"))


def claims_main(rows: Rows, metric: str, method_row: str) -> list[str]:
    """Weak supervision beats no supervision (Tables 1, 3, 4, 5); and, not a claim of the paper (whose baseline,
    XLM-R, has no sentence objective), whether DuEAM improves on its backbone."""
    weak, unsup, base = rows[method_row], rows["DuEAM unsupervised"], _backbone_row(rows)
    out = [_verdict(weak[m] > unsup[m], f"weakly supervised DuEAM beats unsupervised DuEAM on {m}",
                    versus(weak[m], unsup[m])) for m in MAIN_METRICS if m in weak]
    out += [_verdict(weak[m] > base[m], f"weakly supervised DuEAM improves on its backbone on {m} (an xlsent check, "
                     "not a paper claim: the paper's backbone XLM-R has no sentence objective)",
                     versus(weak[m], base[m])) for m in dict.fromkeys((metric, *MAIN_METRICS)) if m in weak]
    return out


def claims_objectives(rows: Rows, metric: str, method_row: str) -> list[str]:
    """Figure 2: the joint objective beats each of its terms alone."""
    both = rows[method_row][metric]
    return [_verdict(both > rows[alone][metric], f"L_A + L_B beats {alone}",
                     f"{versus(both, rows[alone][metric])} {metric}") for alone in ("L_A only", "L_B only")]


def claims_lambda(rows: Rows, metric: str, method_row: str) -> list[str]:
    """Figure 3: the paper's lambda (0.003) is best, and larger values score lower."""
    scores = {float(k.split("=")[1]): v[metric] for k, v in rows.items()}
    paper = float(method_row.split("=")[1])
    best = max(scores, key=lambda lam: scores[lam])
    evidence = listing({f"{lam:g}:": v for lam, v in sorted(scores.items())})
    larger = sorted(lam for lam in scores if lam >= paper)
    falling = all(scores[a] > scores[b] for a, b in zip(larger, larger[1:], strict=False))
    return [_verdict(best == paper, f"lambda = {paper:g} gives the best {metric}", evidence),
            _verdict(falling, f"from {paper:g} up, a larger lambda gives a lower {metric}", evidence)]


def claims_zero_shot(rows: Rows, metric: str, method_row: str) -> list[str]:
    """Table 2: trained on en-de only, DuEAM transfers to other STS pairs (the paper: ~20 points over XLM-R mean;
    here against the backbone, which already has a sentence objective)."""
    ende, base = rows[method_row], _backbone_row(rows)
    pairs = [k for k in ende if k != metric]
    better = [k.removeprefix("sts ") for k in pairs if ende[k] > base[k]]
    return [_verdict(ende[metric] > base[metric], "DuEAM trained on en-de only beats its backbone on the mean of "
                     "Table 2's eight STS pairs (zero-shot transfer)", f"{versus(ende[metric], base[metric])}; "
                     f"better on {len(better)} of {len(pairs)}: {' '.join(better) or 'none'}")]


def claims_anchor(rows: Rows, metric: str, method_row: str) -> list[str]:
    """The configured anchor layer is the one whose WMD tracks STS best (an xlsent choice, not a paper claim)."""
    best = max(rows, key=lambda k: rows[k][metric])
    return [_verdict(best == method_row, f"the configured anchor layer ({method_row}) has the best {metric} of "
                     "-WMD (xlsent's choice of layer, not a paper claim)",
                     listing({k: v[metric] for k, v in rows.items()}))]


CLAIMS: dict[str, Callable[[Rows, str, str], list[str]]] = {
    "anchor": claims_anchor, "main": claims_main, "objectives": claims_objectives, "lambda": claims_lambda,
    "zero-shot": claims_zero_shot,
}


def _training_note(summary: dict[str, Any]) -> str:
    return (f"{summary['mode']}, {summary['steps']} steps x {summary['batch']} pairs over {summary['pairs']} pairs "
            f"({summary['epochs']:g} epochs), {summary['finetune']} fine-tuning (lr {summary['lr']:g}), "
            f"{summary['minutes']:g} min on {summary['device']} (anchor WMD {summary['anchor_minutes']:g} min), "
            + (f"checkpoint of step {summary['best_step']} (best validation)" if summary["best_step"] else
               "last step (no validation)"))


def study_result(name: str, run: StudyRun, settings: StudySettings, ident: str, seconds: float) -> TaskResult:
    """The result of one study: its declared method row is the summary; the claims are checked on the rows."""
    rows = run.rows
    first = next(iter(next(iter(rows.values()))))
    method_row = run.method_row or METHOD_ROWS[name]
    what = "the configured anchor layer" if name == "anchor" else "the paper's configuration"
    return TaskResult(
        task="dueam", encoder=ident, dataset="STS17, stsb_multi_mt, BUCC, tatoeba_v1, SentEval; trained on XNLI dev",
        main_score=rows[method_row][first], main_metric=f"{first}, row '{method_row}' ({what})",
        subset_metric=first, scores=rows, variant=name,
        options={"steps": settings.steps, "ablation_steps": settings.ablation_steps, "max_pairs": settings.max_pairs,
                 "method_row": method_row, "models": run.models, "sets": list(settings.sets)},
        notes=[(STUDIES[name].__doc__ or "").strip(),
               f"summary row: '{method_row}'; the other rows are baselines, ablations or extensions",
               *CLAIMS[name](rows, first, method_row),
               *(f"{row}: {_training_note(s)}" for row, s in run.models.items()),
               "CPU-sized: the paper trains 5 epochs of ~392k XNLI-MT pairs (batch 64, ~30k steps); here a seeded "
               f"sample of at most {settings.max_pairs} XNLI dev pairs and "
               + (f"{settings.ablation_steps} steps per model (the Figure 2/3 ablations)" if name in ABLATION_STUDIES
                  else f"{settings.steps} steps per model"),
               f"backbone and anchor {settings.backbone} (multilingual-e5-small, itself trained on multilingual "
               "pairs), not the paper's XLM-R base (no sentence objective)"],
        seconds=seconds,
    )


def run_studies(studies: Sequence[str], settings: StudySettings, out_dir: Path) -> list[Path]:
    """Run the named studies; save one result JSON each, and the trained models' own task results beside them."""
    ident = encoder_id(_transformer(settings.backbone))
    paths = []
    for name in studies:
        t0 = time.perf_counter()
        run = STUDIES[name](settings)
        paths.append(study_result(name, run, settings, ident, time.perf_counter() - t0).save(out_dir, overwrite=True))
        paths += [r.save(out_dir, overwrite=True) for r in run.results]
    return paths


def rescore_saved(studies: Sequence[str], out_dir: Path, backbone: str = "me5-small") -> list[Path]:
    """Rewrite the saved results of ``studies`` in ``out_dir`` from their own rows: the claims and notes of the
    current code, nothing trained or evaluated again. A study with no saved result is an error."""
    ident = encoder_id(_transformer(backbone))
    saved = {r.variant: r for r in load_results(out_dir) if r.task == "dueam" and r.encoder == ident}
    paths = []
    for name in studies:
        if name not in saved:
            raise FileNotFoundError(f"no saved DuEAM '{name}' result of {ident} in {out_dir}: run the study first")
        old = saved[name]
        opts = old.options
        settings = StudySettings(opts["steps"], opts["ablation_steps"], opts["max_pairs"], sets=tuple(opts["sets"]),
                                 backbone=backbone)
        run = StudyRun(old.scores, dict(opts["models"]), method_row=opts["method_row"])
        paths.append(study_result(name, run, settings, ident, old.seconds).save(out_dir, overwrite=True))
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", nargs="+", default=list(STUDIES), choices=list(STUDIES))
    parser.add_argument("--steps", type=int, default=1500, help="steps of the main and zero-shot models")
    parser.add_argument("--ablation-steps", type=int, default=500, help="steps of the Figure 2 and 3 models")
    parser.add_argument("--max-pairs", type=int, default=20000, help="training pairs sampled from XNLI dev")
    parser.add_argument("--tatoeba-langs", nargs="+", help="Tatoeba languages of the main study (default all 112); "
                        "'paper': the 18 of the paper's tables (TATOEBA_GROUPS)")
    parser.add_argument("--full", action="store_true", help="main study: also a fully fine-tuned weakly supervised "
                        "model (paper lr 2e-5)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="config override for every trained model (e.g. device=cuda)")
    parser.add_argument("--backbone", default="me5-small", help="learner start and anchor")
    parser.add_argument("--models", default="models/dueam", help="where trained models are kept (and reused)")
    parser.add_argument("--out", default="results")
    parser.add_argument("--data", help="benchmark data folder")
    parser.add_argument("--rescore", action="store_true", help="rewrite the saved results of --studies from their "
                        "own rows (claims and notes of the current code); nothing is trained or evaluated")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.rescore:
        for path in rescore_saved(args.studies, Path(args.out), args.backbone):
            print(f"wrote {path}")
        return 0
    settings = StudySettings(args.steps, args.ablation_steps, args.max_pairs, Path(args.models), args.data,
                             tatoeba_langs(args.tatoeba_langs), args.full, tuple(args.set),
                             args.backbone)
    for path in run_studies(args.studies, settings, Path(args.out)):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
