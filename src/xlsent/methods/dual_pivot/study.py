"""Measure dual-pivot transfer on our data and reproduce the paper's ablations; results go to ``results/``.

Every model is scored by the evaluation tasks' own code (:func:`xlsent.evaluation.tatoeba.evaluate`,
:func:`xlsent.evaluation.bucc.evaluate`) on projections of cached backbone layer states (computed once per
sentence list), so a study runs the backbone only once per evaluation set. Each study writes one ``TaskResult``
(task ``dual-pivot``, variant = the study) whose rows are models and whose columns are:

- ``tatoeba <set>``: Tatoeba accuracy (mean of both directions) averaged over the evaluation languages;
- ``tatoeba <pivot>``: the same on the training pivot's own language (for X-en pivots), and
  ``tatoeba transfer``: over the other languages, i.e. transfer beyond the training pair;
- ``bucc <pair> f1``: BUCC-style mining F1 (ratio margin, k=4, oracle threshold).

Studies: ``main`` (backbone output, best single-layer bag of embeddings, unsupervised and supervised modules
per pivot pair), ``losses`` (the paper's Table 4: adversarial only / cycle only / both x mix / map / both),
``layers`` (Figure 2: a module fixed on one layer), ``pairs`` (Table 5: 1, 2, 4, 8 training language pairs
with the total number of sentences fixed). A study's summary score is the row it declares as its method (the
paper's configuration), never the best row; trained models pick their checkpoint on held-out pairs of the training
pair (csls / retrieval, see ``configs/dual_pivot.toml``), and where that kept an earlier step the final step's
weights are scored too, with each claim's verdict on them.

    python -m xlsent.methods.dual_pivot.study --studies main losses layers pairs
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.arg_types import positive_int
from xlsent.data.bitext import PAPER_MULTI_PAIRS, build_training_data
from xlsent.data.tatoeba import XTREME36, tatoeba_languages
from xlsent.encoders.base import HiddenStateEncoder, l2_normalize
from xlsent.encoders.cache import encoder_id, sentences_key
from xlsent.encoders.layer_cache import LayerStates, cached_layer_means
from xlsent.evaluation import bucc, tatoeba
from xlsent.evaluation.task import EmbedFn
from xlsent.languages import language
from xlsent.methods.dual_pivot.config import DualPivotConfig
from xlsent.methods.dual_pivot.model import METHOD, DualPivotEncoder, train_on
from xlsent.studies.command import main
from xlsent.studies.numbers import apart, listing, versus
from xlsent.studies.settings import StudySettings, option
from xlsent.studies.study import Claims, Rows, Study, StudyRun
from xlsent.studies.trained import ensure_trained
from xlsent.studies.verdict import Verdict
from xlsent.training.model_card import record_metrics

log = logging.getLogger(__name__)

TASK = "dual-pivot"
DATASET = "tatoeba_v1 + BUCC-style sets"
Projector = Callable[[np.ndarray], np.ndarray]
PIVOT_PAIRS = ("de-en", "ar-en", "de-fr")
"""The training pairs of the pairs study (Table 5)."""
LAST = " (last step, no selection)"


def tatoeba_of_pair(pair: str) -> str | None:
    """The Tatoeba v1 test language of an xx-en training pair's source side; None for a pair without English.

    >>> tatoeba_of_pair("ar-en"), tatoeba_of_pair("de-fr")
    ('ara', None)
    """
    src, tgt = pair.split("-")
    lang = language(src)
    return lang.tatoeba_v1[0] if tgt == "en" and lang is not None and lang.tatoeba_v1 else None


@dataclass(frozen=True)
class Settings(StudySettings):
    """What the study evaluates on and how long each model trains (CPU-sized, see the defaults)."""

    models_dir: Path = Path("models/dual-pivot")
    langs: tuple[str, ...] = option(XTREME36, "Tatoeba languages ('all': all 112)")
    bucc_sets: tuple[str, ...] = option(("zh",), "BUCC sets: zh (the sample) and newstest languages",
                                        flag="--bucc", nargs="*", choices=tuple(bucc.SETS))
    max_pairs: int = option(10_000, "training pairs of each model", type=positive_int)
    steps: int = option(3000, "steps of the main models", type=positive_int)
    ablation_steps: int = option(1000, "steps of the ablation models", type=positive_int)
    backbone: str = option("me5-small", "the frozen backbone whose layers the modules mix")


@dataclass
class StateScorer:
    """Scores projections of the backbone's cached layer states with the evaluation tasks' own scorers.

    Layer states are read once per sentence list and kept in memory (float16), so scoring another model only
    costs its projection and the tasks' scoring.
    """

    backbone: HiddenStateEncoder
    langs: tuple[str, ...]
    bucc_sets: tuple[str, ...]
    data: str | None
    _states: dict[str, LayerStates] = field(default_factory=dict)

    def embed(self, project: Projector) -> EmbedFn:
        """The :data:`~xlsent.evaluation.task.EmbedFn` of ``project`` applied to cached layer states."""
        def embed(sentences: Sequence[str], lang: str | None) -> np.ndarray:
            key = sentences_key(sentences, lang)
            if key not in self._states:
                self._states[key] = cached_layer_means(self.backbone, sentences, lang)
            return project(self._states[key].sums())

        return embed

    def scores(self, project: Projector, pivot_lang: str | None) -> dict[str, float]:
        """The study's columns for one model."""
        embed, ident = self.embed(project), encoder_id(self.backbone)
        tat = tatoeba.evaluate(embed, encoder_id=ident, langs=list(self.langs), root=self.data)
        per_lang = {lang: v["mean"] for lang, v in tat.scores.items()}
        out = {f"tatoeba {len(per_lang)} langs": float(np.mean(list(per_lang.values())))}
        if len(per_lang) > len(XTREME36) and set(XTREME36) <= set(per_lang):
            out["tatoeba xtreme-36"] = float(np.mean([per_lang[lang] for lang in XTREME36]))
        if pivot_lang in per_lang:
            out[f"tatoeba {pivot_lang}"] = per_lang[pivot_lang]
            out["tatoeba transfer"] = float(np.mean([v for k, v in per_lang.items() if k != pivot_lang]))
        if self.bucc_sets:
            mined = bucc.evaluate(embed, encoder_id=ident, langs=list(self.bucc_sets), root=self.data)
            for name, v in mined.scores.items():
                out[f"bucc {name.split(' ')[0]} f1"] = v["f1"]
        return out

    def model_rows(self, enc: DualPivotEncoder, name: str, pivot_lang: str | None) -> Rows:
        """The row of a trained model and, when model selection kept an earlier step, its last step's row."""
        rows = {name: self.scores(enc.project, pivot_lang)}
        last = DualPivotEncoder(enc.model_dir, backbone=enc.backbone, weights="last")
        if last.weight_file != enc.weight_file:
            rows[name + LAST] = self.scores(last.project, pivot_lang)
        return rows


def backbone_projector() -> Projector:
    """The backbone's own sentence vector: mean of the last layer (sum and mean agree after normalising)."""
    return lambda sums: l2_normalize(sums[:, -1, :])


def layer_projector(layer: int) -> Projector:
    """Bag of one layer's token embeddings (the paper's single-layer "boe" baseline)."""
    return lambda sums: l2_normalize(sums[:, layer, :])


def _backbone(name: str) -> HiddenStateEncoder:
    from xlsent.encoders.registry import load_encoder

    backbone = load_encoder(name)
    if not isinstance(backbone, HiddenStateEncoder):
        raise ValueError(f"{name} does not expose layer states")
    return backbone


def _scorer(backbone: HiddenStateEncoder, settings: Settings) -> StateScorer:
    langs = tatoeba_languages(settings.data) if settings.langs == ("all",) else settings.langs
    return StateScorer(backbone, tuple(langs), settings.bucc_sets, settings.data)


class Lab:
    """The backbone, the scorer of its cached layer states, and the trained (or reused) modules."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.backbone = _backbone(settings.backbone)
        self.scorer = _scorer(self.backbone, settings)
        self.encoder = encoder_id(self.backbone)

    def config(self, mode: str, steps: int, **overrides: Any) -> DualPivotConfig:
        """The ``mode``'s configuration with the settings' sets, ``steps`` and a row's typed ``overrides``."""
        s = self.settings
        cfg = METHOD.config(mode=mode, sets=s.sets, max_pairs=s.max_pairs, steps=steps, **overrides)
        assert isinstance(cfg, DualPivotConfig)
        return cfg

    def module(self, name: str, cfg: DualPivotConfig) -> DualPivotEncoder:
        """The module ``models_dir/name`` trained with ``cfg`` (trained first unless a model of ``cfg`` is there)."""
        out = self.settings.models_dir / name

        def train() -> Path:
            valid = cfg.valid_pairs if cfg.selection != "none" else 0
            data = build_training_data(cfg.mode, cfg.pairs, root=self.settings.data, max_pairs=cfg.max_pairs,
                                       seed=cfg.seed, valid_pairs=valid)
            return train_on(cfg, data, self.backbone, out, resume=True, progress=False)

        ensure_trained(METHOD, cfg, out, retrain=self.settings.retrain, train=train)
        return DualPivotEncoder(out, backbone=self.backbone)

    def notes(self, run: StudyRun[Settings]) -> list[str]:
        s = run.settings
        return [f"summary row: '{run.method_row or STUDIES[run.name].method_row}'; the other rows are baselines, "
                f"ablations or extensions, and rows ending in '{LAST.strip()}' are the same runs' final weights where "
                "model selection on held-out pairs (csls for unsupervised, retrieval for supervised runs) kept an "
                "earlier step",
                f"CPU-sized: at most {s.max_pairs} training pairs, {s.steps} steps for the main models and "
                f"{s.ablation_steps} for ablations (the paper trains on 9M-sentence corpora)",
                f"backbone {s.backbone} was itself trained on multilingual pairs, unlike XLM-R in the paper"]


def setup(settings: Settings, out_dir: Path) -> Lab:
    return Lab(settings)


# --- studies -------------------------------------------------------------------------------------------------


def study_main(lab: Lab, run: StudyRun[Settings]) -> None:
    """Backbone output, best single layer, and both modes for each pivot pair (plus de-en with the mix
    starting at the last layer, an xlsent extension for backbones already trained on multilingual pairs)."""
    ev, steps = lab.scorer, run.settings.steps
    run.rows[f"{lab.backbone.name} (own output)"] = ev.scores(backbone_projector(), "deu")
    layer_rows = {layer: ev.scores(layer_projector(layer), None) for layer in range(lab.backbone.num_layers + 1)}
    first = next(iter(layer_rows[0]))
    best = max(layer_rows, key=lambda layer: layer_rows[layer][first])
    run.rows[f"layer {best} boe (best single layer)"] = layer_rows[best]
    for pair in PIVOT_PAIRS:
        for mode in ("unsupervised", "supervised"):
            enc = lab.module(f"{mode[:5]}-{pair}", lab.config(mode, steps, pairs=[pair]))
            run.rows.update(ev.model_rows(enc, f"{mode} {pair}", tatoeba_of_pair(pair)))
    for mode in ("unsupervised", "supervised"):
        enc = lab.module(f"{mode[:5]}-de-en-last", lab.config(mode, steps, mix_init="last"))
        run.rows.update(ev.model_rows(enc, f"{mode} de-en, mix starts at last layer (extension)", "deu"))


def study_losses(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 4: adversarial only / cycle only / both, each training the mix only / the map only / both."""
    for losses, adv, cyc in (("adv", True, False), ("cycle", False, True), ("adv+cycle", True, True)):
        for parts, mix, lin in (("mix", True, False), ("map", False, True), ("mix+map", True, True)):
            cfg = lab.config("unsupervised", run.settings.ablation_steps, adversarial=adv, cycle=cyc, train_mix=mix,
                             train_map=lin)
            run.rows.update(lab.scorer.model_rows(lab.module(f"abl-{losses}-{parts}", cfg), f"{losses}, {parts}",
                                                  "deu"))


def study_layers(lab: Lab, run: StudyRun[Settings]) -> None:
    """Figure 2: a supervised de-en module fixed on one layer (map trained), per layer, next to that layer's boe,
    and the same module on the learned mix of all layers (all without model selection, as single runs)."""
    steps = run.settings.ablation_steps
    enc = lab.module("layer-mix", lab.config("supervised", steps, selection="none"))
    run.rows["mix of all layers module"] = lab.scorer.scores(enc.project, "deu")
    for layer in range(lab.backbone.num_layers + 1):
        enc = lab.module(f"layer-{layer}", lab.config("supervised", steps, layer=layer, train_mix=False,
                                                      selection="none"))
        run.rows[f"layer {layer} module"] = lab.scorer.scores(enc.project, "deu")
        run.rows[f"layer {layer} boe"] = lab.scorer.scores(layer_projector(layer), None)


def study_pairs(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 5: unsupervised modules on 1, 2, 4, 8 X-en pairs with the total number of sentences fixed."""
    for n in (1, 2, 4, 8):
        pairs = ["de-en", *[p for p in PAPER_MULTI_PAIRS if p != "de-en"]][:n]
        enc = lab.module(f"pairs-{n}", lab.config("unsupervised", run.settings.ablation_steps, pairs=pairs))
        run.rows.update(lab.scorer.model_rows(enc, f"{n} pair(s): {' '.join(pairs)}", None))


# --- claims --------------------------------------------------------------------------------------------------


def claims_main(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """The paper's main claims (its Tables 2-3) checked on the ``main`` study's rows."""
    own = next(v for k, v in rows.items() if k.endswith("(own output)"))
    boe = next(v for k, v in rows.items() if k.endswith("(best single layer)"))
    out = []
    for mode in ("unsupervised", "supervised"):
        mod = rows[f"{mode} de-en"]
        out.append(Verdict(f"the {mode} de-en module beats the best single-layer bag of embeddings",
                           mod[metric] > boe[metric], f"{versus(mod[metric], boe[metric])} {metric}"))
        out.append(Verdict(f"the {mode} de-en module improves languages outside its training pair over the "
                           "backbone's own output (paper: over XLM-R, which has no sentence objective)",
                           mod["tatoeba transfer"] > own["tatoeba transfer"],
                           f"{versus(mod['tatoeba transfer'], own['tatoeba transfer'])} mean Tatoeba accuracy "
                           "without German"))
    return out


def claims_losses(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 4's three trends checked on the ``losses`` study's rows."""
    adv_best = max(rows[f"adv, {p}"][metric] for p in ("mix", "map", "mix+map"))
    full = rows[method_row][metric]
    f = apart(adv_best, full)
    out = [Verdict("the cycle loss is essential: the adversarial loss alone scores more than 5 points below "
                   "adversarial + cycle", adv_best < full - 5, f"best adv-only {f(adv_best)} vs adv+cycle {f(full)}")]
    for losses in ("cycle", "adv+cycle"):
        mix, lin = rows[f"{losses}, mix"][metric], rows[f"{losses}, map"][metric]
        out.append(Verdict(f"with {losses}, the linear map alone beats the layer mix alone", lin > mix,
                           versus(lin, mix)))
    cyc = {p: rows[f"cycle, {p}"][metric] for p in ("mix", "map", "mix+map")}
    out.append(Verdict("with the cycle loss only, the map alone does best", max(cyc, key=lambda p: cyc[p]) == "map",
                       listing(cyc)))
    return out


def claims_layers(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Figure 2's two findings checked on the ``layers`` study's rows."""
    per_layer = {int(k.split()[1]): v[metric] for k, v in rows.items() if k.endswith(" module") and k[0] == "l"}
    best = max(per_layer, key=lambda layer: per_layer[layer])
    last = max(per_layer)
    mix = rows[method_row][metric]
    return [
        Verdict("alignment is most extractable in the middle layers", last // 4 <= best <= 3 * last // 4,
                f"best single-layer module: {listing({f'layer {best} of 0..{last},': per_layer[best]})}"),
        Verdict("the best single layer is at least as good as the learned mix, within 0.5 points",
                per_layer[best] >= mix - 0.5, versus(per_layer[best], mix)),
    ]


def claims_pairs(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 5's finding checked on the ``pairs`` study's rows."""
    by_n = {int(k.split()[0]): v[metric] for k, v in rows.items()}
    return [Verdict("more pivot pairs (same number of sentences) improve transfer a little (paper: +3 points "
                    "unsupervised from 1 to 8-16 pairs)", by_n[max(by_n)] > by_n[min(by_n)],
                    listing({f"{n} pair(s)": v for n, v in sorted(by_n.items())}))]


def with_selection_effect(claims: Claims) -> Claims:
    """``claims``, then each claim again on the last-step weights of the models where model selection kept an
    earlier step, saying whether selection changed its verdict."""
    def checked(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
        selected = {k: v for k, v in rows.items() if not k.endswith(LAST)}
        last = {k: rows.get(k + LAST, v) for k, v in selected.items()}
        verdicts = claims(selected, metric, method_row)
        if last == selected:
            return verdicts
        return verdicts + [
            Verdict(f"{w.claim}, on the last-step weights", w.held, f"{w.evidence}; model selection "
                    f"{'changed' if w.held != v.held else 'did not change'} this verdict", w.source)
            for v, w in zip(verdicts, claims(last, metric, method_row), strict=True)]

    return checked


STUDIES = {
    "main": Study(study_main, "unsupervised de-en", claims=with_selection_effect(claims_main)),
    "losses": Study(study_losses, "adv+cycle, mix+map", claims=with_selection_effect(claims_losses)),
    "layers": Study(study_layers, "mix of all layers module", claims=with_selection_effect(claims_layers)),
    "pairs": Study(study_pairs, "1 pair(s): de-en", claims=with_selection_effect(claims_pairs)),
}
"""Each study and the row it declares as its method (the paper's configuration): the study's summary score."""


def record(model_dirs: Sequence[str | Path], settings: Settings) -> None:
    """Score trained dual-pivot models like the study does (Tatoeba on ``settings.langs``, BUCC sets, from cached
    float16 layer states) and store the numbers in their ``xlsent.json`` and model cards."""
    backbone = _backbone(settings.backbone)
    scorer = _scorer(backbone, settings)
    for model_dir in model_dirs:
        enc = DualPivotEncoder(model_dir, backbone=backbone)
        embed, ident = scorer.embed(enc.project), enc.id
        results = [tatoeba.evaluate(embed, encoder_id=ident, langs=list(scorer.langs), root=settings.data)]
        if scorer.bucc_sets:
            results.append(bucc.evaluate(embed, encoder_id=ident, langs=list(scorer.bucc_sets), root=settings.data))
        for r in results:
            r.notes.append("scored from the backbone's cached float16 layer states, as in the dual-pivot study")
        record_metrics(model_dir, [asdict(r) for r in results])
        log.info("recorded %s in %s", ", ".join(f"{r.task} {r.main_score:.2f}" for r in results), model_dir)


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.modules[__name__]))
