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
paper's configuration, :data:`METHOD_ROWS`), never the best row; trained models pick their checkpoint on held-out
pairs of the training pair (csls / retrieval, see ``configs/dual_pivot.toml``), and where that kept an earlier
step the final step's weights are scored too, with each claim's verdict on them.

    python -m xlsent.methods.dual_pivot.study --studies main losses layers pairs
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xlsent.data.tatoeba import XTREME36
from xlsent.encoders.base import HiddenStateEncoder, l2_normalize
from xlsent.encoders.cache import encoder_id, sentences_key
from xlsent.encoders.layer_cache import LayerStates, cached_layer_means
from xlsent.evaluation import bucc, tatoeba
from xlsent.evaluation.results import TaskResult
from xlsent.evaluation.task import EmbedFn
from xlsent.methods.dual_pivot.model import METHOD, DualPivotConfig, DualPivotEncoder, train_on
from xlsent.data.bitext import PAPER_MULTI_PAIRS, build_training_data

log = logging.getLogger(__name__)

Projector = Callable[[np.ndarray], np.ndarray]
Rows = dict[str, dict[str, float]]
PIVOT_TATOEBA = {"de-en": "deu", "ar-en": "ara", "de-fr": None}
LAST = " (last step, no selection)"


@dataclass(frozen=True)
class StudySettings:
    """What the study evaluates on and how long each model trains (CPU-sized, see the defaults)."""

    langs: tuple[str, ...]
    bucc_sets: tuple[str, ...] = ("zh",)
    max_pairs: int = 10_000
    steps: int = 3000
    ablation_steps: int = 1000
    models_dir: Path = Path("models/dual-pivot")
    data: str | None = None


@dataclass
class StateScorer:
    """Scores projections of the backbone's cached layer states with the evaluation tasks' own scorers.

    Layer states are read once per sentence list and kept in memory (float16), so scoring another model only
    costs its projection and the tasks' scoring.
    """

    backbone: HiddenStateEncoder
    settings: StudySettings
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
        s, embed, ident = self.settings, self.embed(project), encoder_id(self.backbone)
        tat = tatoeba.evaluate(embed, encoder_id=ident, langs=list(s.langs), root=s.data)
        per_lang = {lang: v["mean"] for lang, v in tat.scores.items()}
        out = {f"tatoeba {len(per_lang)} langs": float(np.mean(list(per_lang.values())))}
        if len(per_lang) > len(XTREME36) and set(XTREME36) <= set(per_lang):
            out["tatoeba xtreme-36"] = float(np.mean([per_lang[lang] for lang in XTREME36]))
        if pivot_lang in per_lang:
            out[f"tatoeba {pivot_lang}"] = per_lang[pivot_lang]
            out["tatoeba transfer"] = float(np.mean([v for k, v in per_lang.items() if k != pivot_lang]))
        if s.bucc_sets:
            mined = bucc.evaluate(embed, encoder_id=ident, langs=list(s.bucc_sets), root=s.data)
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


def _train(backbone: HiddenStateEncoder, cfg: DualPivotConfig, name: str, settings: StudySettings
           ) -> DualPivotEncoder:
    out = settings.models_dir / name
    if not (out / "xlsent.json").is_file():
        valid = cfg.valid_pairs if cfg.selection != "none" else 0
        data = build_training_data(cfg.mode, cfg.pairs, root=settings.data, max_pairs=cfg.max_pairs, seed=cfg.seed,
                                   valid_pairs=valid)
        train_on(cfg, data, backbone, out, resume=True, progress=False)
    return DualPivotEncoder(out, backbone=backbone)


def _config(mode: str, settings: StudySettings, steps: int, *sets: str) -> DualPivotConfig:
    cfg = METHOD.config(mode=mode, sets=[f"max_pairs={settings.max_pairs}", f"steps={steps}", *sets])
    assert isinstance(cfg, DualPivotConfig)
    return cfg


def study_main(backbone: HiddenStateEncoder, ev: StateScorer, s: StudySettings) -> Rows:
    """Backbone output, best single layer, and both modes for each pivot pair (plus de-en with the mix
    starting at the last layer, an xlsent extension for backbones already trained on multilingual pairs)."""
    rows = {f"{backbone.name} (own output)": ev.scores(backbone_projector(), "deu")}
    layer_rows = {layer: ev.scores(layer_projector(layer), None) for layer in range(backbone.num_layers + 1)}
    first = next(iter(layer_rows[0]))
    best = max(layer_rows, key=lambda layer: layer_rows[layer][first])
    rows[f"layer {best} boe (best single layer)"] = layer_rows[best]
    for pair in PIVOT_TATOEBA:
        for mode in ("unsupervised", "supervised"):
            enc = _train(backbone, _config(mode, s, s.steps, f"pairs={pair}"), f"{mode[:5]}-{pair}", s)
            rows.update(ev.model_rows(enc, f"{mode} {pair}", PIVOT_TATOEBA[pair]))
    for mode in ("unsupervised", "supervised"):
        enc = _train(backbone, _config(mode, s, s.steps, "mix_init=last"), f"{mode[:5]}-de-en-last", s)
        rows.update(ev.model_rows(enc, f"{mode} de-en, mix starts at last layer (extension)", "deu"))
    return rows


def study_losses(backbone: HiddenStateEncoder, ev: StateScorer, s: StudySettings) -> Rows:
    """Table 4: adversarial only / cycle only / both, each training the mix only / the map only / both."""
    rows: Rows = {}
    for losses, adv, cyc in (("adv", True, False), ("cycle", False, True), ("adv+cycle", True, True)):
        for parts, mix, lin in (("mix", True, False), ("map", False, True), ("mix+map", True, True)):
            cfg = _config("unsupervised", s, s.ablation_steps, f"adversarial={str(adv).lower()}",
                          f"cycle={str(cyc).lower()}", f"train_mix={str(mix).lower()}", f"train_map={str(lin).lower()}")
            enc = _train(backbone, cfg, f"abl-{losses}-{parts}", s)
            rows.update(ev.model_rows(enc, f"{losses}, {parts}", "deu"))
    return rows


def study_layers(backbone: HiddenStateEncoder, ev: StateScorer, s: StudySettings) -> Rows:
    """Figure 2: a supervised de-en module fixed on one layer (map trained), per layer, next to that layer's boe,
    and the same module on the learned mix of all layers (all without model selection, as single runs)."""
    enc = _train(backbone, _config("supervised", s, s.ablation_steps, "selection=none"), "layer-mix", s)
    rows = {"mix of all layers module": ev.scores(enc.project, "deu")}
    for layer in range(backbone.num_layers + 1):
        enc = _train(backbone, _config("supervised", s, s.ablation_steps, f"layer={layer}", "train_mix=false",
                                       "selection=none"), f"layer-{layer}", s)
        rows[f"layer {layer} module"] = ev.scores(enc.project, "deu")
        rows[f"layer {layer} boe"] = ev.scores(layer_projector(layer), None)
    return rows


def study_pairs(backbone: HiddenStateEncoder, ev: StateScorer, s: StudySettings) -> Rows:
    """Table 5: unsupervised modules on 1, 2, 4, 8 X-en pairs with the total number of sentences fixed."""
    rows: Rows = {}
    for n in (1, 2, 4, 8):
        pairs = ["de-en", *[p for p in PAPER_MULTI_PAIRS if p != "de-en"]][:n]
        enc = _train(backbone, _config("unsupervised", s, s.ablation_steps, "pairs=" + ",".join(pairs)),
                     f"pairs-{n}", s)
        rows.update(ev.model_rows(enc, f"{n} pair(s): {' '.join(pairs)}", None))
    return rows


STUDIES = {"main": study_main, "losses": study_losses, "layers": study_layers, "pairs": study_pairs}
# the row each study declares as its method (the paper's configuration): the study's summary score
METHOD_ROWS = {"main": "unsupervised de-en", "losses": "adv+cycle, mix+map", "layers": "mix of all layers module",
               "pairs": "1 pair(s): de-en"}


def _verdict(held: bool, claim: str, evidence: str) -> str:
    return f"{'HELD' if held else 'DID NOT HOLD'} here: {claim} ({evidence})"


def claims_main(rows: dict[str, dict[str, float]], metric: str) -> list[str]:
    """The paper's main claims (its Tables 2-3) checked on the ``main`` study's rows."""
    own = next(v for k, v in rows.items() if k.endswith("(own output)"))
    boe = next(v for k, v in rows.items() if k.endswith("(best single layer)"))
    out = []
    for mode in ("unsupervised", "supervised"):
        mod = rows[f"{mode} de-en"]
        out.append(_verdict(mod[metric] > boe[metric], f"the {mode} de-en module beats the best single-layer "
                            "bag of embeddings", f"{mod[metric]:.1f} vs {boe[metric]:.1f} {metric}"))
        out.append(_verdict(mod["tatoeba transfer"] > own["tatoeba transfer"],
                            f"the {mode} de-en module improves languages outside its training pair over the "
                            "backbone's own output (paper: over XLM-R, which has no sentence objective)",
                            f"{mod['tatoeba transfer']:.1f} vs {own['tatoeba transfer']:.1f} mean Tatoeba accuracy "
                            "without German"))
    return out


def claims_losses(rows: dict[str, dict[str, float]], metric: str) -> list[str]:
    """Table 4's three trends checked on the ``losses`` study's rows."""
    adv_best = max(rows[f"adv, {p}"][metric] for p in ("mix", "map", "mix+map"))
    full = rows["adv+cycle, mix+map"][metric]
    out = [_verdict(adv_best < full - 5, "the cycle loss is essential: the adversarial loss alone scores more than "
                    "5 points below adversarial + cycle",
                    f"best adv-only {adv_best:.1f} vs adv+cycle {full:.1f}")]
    for losses in ("cycle", "adv+cycle"):
        mix, lin = rows[f"{losses}, mix"][metric], rows[f"{losses}, map"][metric]
        out.append(_verdict(lin > mix, f"with {losses}, the linear map alone beats the layer mix alone",
                            f"{lin:.1f} vs {mix:.1f}"))
    cyc = {p: rows[f"cycle, {p}"][metric] for p in ("mix", "map", "mix+map")}
    out.append(_verdict(max(cyc, key=lambda p: cyc[p]) == "map", "with the cycle loss only, the map alone does best",
                        ", ".join(f"{p} {v:.1f}" for p, v in cyc.items())))
    return out


def claims_layers(rows: dict[str, dict[str, float]], metric: str) -> list[str]:
    """Figure 2's two findings checked on the ``layers`` study's rows."""
    per_layer = {int(k.split()[1]): v[metric] for k, v in rows.items() if k.endswith(" module") and k[0] == "l"}
    best = max(per_layer, key=lambda layer: per_layer[layer])
    last = max(per_layer)
    mix = rows["mix of all layers module"][metric]
    return [
        _verdict(last // 4 <= best <= 3 * last // 4, "alignment is most extractable in the middle layers",
                 f"best single-layer module: layer {best} of 0..{last}, {per_layer[best]:.1f}"),
        _verdict(per_layer[best] >= mix - 0.5, "the best single layer is at least as good as the learned mix, "
                 "within 0.5 points", f"{per_layer[best]:.1f} vs {mix:.1f}"),
    ]


def claims_pairs(rows: dict[str, dict[str, float]], metric: str) -> list[str]:
    """Table 5's finding checked on the ``pairs`` study's rows."""
    by_n = {int(k.split()[0]): v[metric] for k, v in rows.items()}
    one, most = by_n[min(by_n)], by_n[max(by_n)]
    return [_verdict(most > one, "more pivot pairs (same number of sentences) improve transfer a little "
                     "(paper: +3 points unsupervised from 1 to 8-16 pairs)",
                     ", ".join(f"{n} pair(s) {v:.1f}" for n, v in sorted(by_n.items())))]


CLAIMS = {"main": claims_main, "losses": claims_losses, "layers": claims_layers, "pairs": claims_pairs}


def selection_effect(name: str, rows: Rows, metric: str) -> list[str]:
    """Each claim's verdict again on the last-step weights of the models where selection kept an earlier step,
    saying whether model selection changed it."""
    last = {k: rows.get(k + LAST, v) for k, v in rows.items() if not k.endswith(LAST)}
    if last == {k: v for k, v in rows.items() if not k.endswith(LAST)}:
        return []
    method = [v.split(" here: ")[0] for v in CLAIMS[name](rows, metric)]
    without = CLAIMS[name](last, metric)
    return [f"model selection {'changed' if m != w.split(' here: ')[0] else 'did not change'} this verdict; "
            f"with the last-step weights: {w}" for m, w in zip(method, without, strict=True)]


def study_result(name: str, rows: Rows, settings: StudySettings, backbone_id: str, seconds: float) -> TaskResult:
    """The result of one study: its declared method row is the summary; claims checked on the method rows."""
    first = next(iter(next(iter(rows.values()))))
    method_row = METHOD_ROWS[name]
    return TaskResult(
        task="dual-pivot", encoder=backbone_id, dataset="tatoeba_v1 + BUCC-style sets",
        main_score=rows[method_row][first], main_metric=f"{first}, row '{method_row}' (the paper's configuration)",
        subset_metric=first, scores=rows, variant=name,
        options={"languages": list(settings.langs), "bucc": list(settings.bucc_sets),
                 "max_pairs": settings.max_pairs, "steps": settings.steps, "ablation_steps": settings.ablation_steps,
                 "method_row": method_row},
        notes=[(STUDIES[name].__doc__ or "").strip(),
               f"summary row: '{method_row}'; the other rows are baselines, ablations or extensions, and rows "
               f"ending in '{LAST.strip()}' are the same runs' final weights where model selection on held-out "
               "pairs (csls for unsupervised, retrieval for supervised runs) kept an earlier step",
               *CLAIMS[name](rows, first), *selection_effect(name, rows, first),
               f"CPU-sized: at most {settings.max_pairs} training pairs, {settings.steps} steps for the main "
               f"models and {settings.ablation_steps} for ablations (the paper trains on 9M-sentence corpora)",
               "backbone me5-small was itself trained on multilingual pairs, unlike XLM-R in the paper"],
        seconds=seconds,
    )


def run_studies(studies: Sequence[str], settings: StudySettings, out_dir: Path, backbone_name: str = "me5-small"
                ) -> list[Path]:
    """Run the named studies and save one result JSON each."""
    from xlsent.encoders.registry import load_encoder

    backbone = load_encoder(backbone_name)
    if not isinstance(backbone, HiddenStateEncoder):
        raise ValueError(f"{backbone_name} does not expose layer states")
    ev = StateScorer(backbone, settings)
    paths = []
    for name in studies:
        t0 = time.perf_counter()
        rows = STUDIES[name](backbone, ev, settings)
        result = study_result(name, rows, settings, encoder_id(backbone), time.perf_counter() - t0)
        paths.append(result.save(out_dir, overwrite=True))  # a study re-run replaces its rows as a whole
    return paths


def record_models(model_dirs: Sequence[str | Path], settings: StudySettings, backbone_name: str = "me5-small"
                  ) -> None:
    """Score trained dual-pivot models like the study does (Tatoeba on ``settings.langs``, BUCC sets, from cached
    float16 layer states) and store the numbers in their ``xlsent.json`` and model cards."""
    from dataclasses import asdict

    from xlsent.encoders.model_card import record_metrics
    from xlsent.encoders.registry import load_encoder

    backbone = load_encoder(backbone_name)
    if not isinstance(backbone, HiddenStateEncoder):
        raise ValueError(f"{backbone_name} does not expose layer states")
    scorer = StateScorer(backbone, settings)
    for model_dir in model_dirs:
        enc = DualPivotEncoder(model_dir, backbone=backbone)
        embed, ident = scorer.embed(enc.project), enc.id
        results = [tatoeba.evaluate(embed, encoder_id=ident, langs=list(settings.langs), root=settings.data)]
        if settings.bucc_sets:
            results.append(bucc.evaluate(embed, encoder_id=ident, langs=list(settings.bucc_sets), root=settings.data))
        for r in results:
            r.notes.append("scored from the backbone's cached float16 layer states, as in the dual-pivot study")
        record_metrics(model_dir, [asdict(r) for r in results])
        log.info("recorded %s in %s", ", ".join(f"{r.task} {r.main_score:.2f}" for r in results), model_dir)


def main(argv: Sequence[str] | None = None) -> int:
    from xlsent.data.tatoeba import tatoeba_languages

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", nargs="+", default=list(STUDIES), choices=list(STUDIES))
    parser.add_argument("--langs", nargs="+", default=list(XTREME36),
                        help="Tatoeba languages (default XTREME-36; 'all' for all 112)")
    parser.add_argument("--bucc", nargs="*", default=["zh"], help="BUCC sets: zh (sample) and newstest langs")
    parser.add_argument("--max-pairs", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--ablation-steps", type=int, default=1000)
    parser.add_argument("--models", default="models/dual-pivot", help="where trained modules are kept")
    parser.add_argument("--out", default="results")
    parser.add_argument("--data", help="benchmark data folder")
    parser.add_argument("--record", nargs="+", metavar="MODEL_DIR",
                        help="instead of studies: score these trained models as the study does and store the "
                             "numbers in their xlsent.json and model card")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    langs = tatoeba_languages(args.data) if args.langs == ["all"] else args.langs
    settings = StudySettings(tuple(langs), tuple(args.bucc), args.max_pairs, args.steps, args.ablation_steps,
                             Path(args.models), args.data)
    if args.record:
        record_models(args.record, settings)
        return 0
    for path in run_studies(args.studies, settings, Path(args.out)):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
