"""Reproduce EMU's tables (paper 002) on xSID with the default backbone; results go to ``results/``.

Every model is trained from the method's own modes (``configs/emu.toml``: English xSID valid, 3 epochs) and
scored by the evaluation tasks' own code: :func:`xlsent.evaluation.intent.evaluate` (xSID test, leave-one-out
nearest-neighbour Acc@1, the paper's protocol) and :func:`xlsent.evaluation.tatoeba.evaluate` (the general
retrieval check). Studies:

- ``main`` (Table 2, Figure 2): the original encoder, the softmax, contrastive and N-pair losses, EMU, EMU w/o LD,
  EMU w/o LD+CL and EMU-PARALLEL. One ``intent`` result per model (variant ``emu``: every language pair as a row,
  Table 2's shape; t-SNE maps of English and German for the original, softmax, EMU w/o LD and EMU, Figure 2),
  Tatoeba on the papers' 14 languages before and after (variant ``emu``), and a ``emu-main`` result with one row
  per model: en-en, the en->xx, xx->en and xx->xx means, the cross-lingual mean (the intent task's main score),
  the mean over Table 2's tasks (en-en, en->xx and xx->en pairs) and the Tatoeba paper-14 mean.
- ``ablation`` (Table 5, from the ``main`` models): each component's contribution, i.e. the mean percentage-point
  drop over Table 2's tasks when it is removed (language discriminator: EMU vs EMU w/o LD; center loss:
  EMU w/o LD vs EMU w/o LD+CL), with a Wilcoxon signed-rank test over the pairs.
- ``langs`` (Table 3): EMU w/o LD trained on the labelled utterances of each non-empty subset of three xSID
  languages (default en, de, it: xSID has no French), as relative Acc@1 change against the original encoder on
  the 3 x 3 language pairs (``emu-langs``; absolute Acc@1 in ``emu-langs-acc``).

A study's summary score is the row it declares as the paper's method (:data:`METHOD_ROWS`), never the best row;
each claim of the paper gets a generated verdict in the result's notes.

    python -m xlsent.methods.emu.study --studies main ablation langs
"""

from __future__ import annotations

import argparse
import itertools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xlsent.data.tatoeba import PAPER14
from xlsent.data.xsid import load_xsid
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.model_dir import read_manifest
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation import intent, tatoeba
from xlsent.evaluation.intent import EncodedSet, pair_accuracy
from xlsent.evaluation.results import TaskResult, load_result
from xlsent.evaluation.task import encoder_embed
from xlsent.methods.emu.model import METHOD, UNLABELLED_SOURCE, EmuConfig, build_data, load_model, train_on

log = logging.getLogger(__name__)

Rows = dict[str, dict[str, float]]

ORIGINAL = "original"
MAIN_MODES = {"softmax loss": "softmax", "contrastive loss": "contrastive", "N-pair loss": "npair", "EMU": "emu",
              "EMU w/o LD": "emu-no-ld", "EMU w/o LD+CL": "emu-no-ld-cl", "EMU-PARALLEL": "emu-parallel"}
"""Rows of Table 2 (as the paper names them) -> the ``xlsent train emu`` mode that trains them."""
BASELINES = ("softmax loss", "contrastive loss", "N-pair loss")
FIGURE2 = (ORIGINAL, "softmax loss", "EMU w/o LD", "EMU")
FIGURE2_LANGS = ("en", "de")
TATOEBA_ROWS = {"none": (), "emu": (ORIGINAL, "EMU"), "all": (ORIGINAL, *MAIN_MODES)}
CROSS, TABLE2, TATOEBA = "cross-lingual", "table-2 mean", "tatoeba paper-14"
COMPONENTS = {"language discriminator": ("EMU", "EMU w/o LD"), "center loss": ("EMU w/o LD", "EMU w/o LD+CL")}
METHOD_ROWS = {"main": "EMU", "ablation": "language discriminator", "langs": "en"}
"""The row each study declares as the paper's method (its summary score): EMU; Table 5's first component; and
English-only training, the set-up of the paper's main experiments."""
RESULT_VARIANT = "emu"


@dataclass(frozen=True)
class StudySettings:
    """What the study evaluates and where it keeps models; ``sets`` override the config of every trained model."""

    langs: tuple[str, ...] = ()
    tatoeba: str = "emu"
    table3_langs: tuple[str, ...] = ("en", "de", "it")
    tsne: bool = True
    models_dir: Path = Path("models/emu")
    data: str | None = None
    sets: tuple[str, ...] = ()
    backbone: str = "me5-small"


def _verdict(held: bool, claim: str, evidence: str) -> str:
    return f"{'HELD' if held else 'DID NOT HOLD'} here: {claim} ({evidence})"


# --- scores from the tasks' results ------------------------------------------------------------------------------


def table2_pairs(scores: dict[str, dict[str, float]]) -> list[str]:
    """Table 2's tasks among an intent result's pairs: en-en, en-xx and xx-en.

    >>> table2_pairs({"en-en": {}, "en-de": {}, "de-en": {}, "de-de": {}})
    ['en-en', 'en-de', 'de-en']
    """
    return [p for p in scores if p.startswith("en-") or p.endswith("-en")]


def intent_row(result: TaskResult) -> dict[str, float]:
    """The ``emu-main`` columns of one model's intent result."""
    acc = {pair: v["acc@1"] for pair, v in result.scores.items()}
    row: dict[str, float] = {"en-en": acc["en-en"]}
    row.update({d: result.averages[d] for d in ("en->xx", "xx->en", "xx->xx") if d in result.averages})
    row[CROSS] = result.main_score
    row[TABLE2] = float(np.mean([acc[p] for p in table2_pairs(result.scores)]))
    return row


def contribution(with_part: dict[str, float], without: dict[str, float], pairs: Sequence[str]) -> dict[str, float]:
    """Table 5: the mean percentage-point drop over ``pairs`` when a component is removed, by direction, and a
    Wilcoxon signed-rank test over the pairs (p = 1 when nothing changed).

    >>> c = contribution({"en-en": 80.0, "en-de": 70.0, "de-en": 60.0}, {"en-en": 78.0, "en-de": 71.0,
    ...                  "de-en": 57.0}, ["en-en", "en-de", "de-en"])
    >>> c["mean pp drop"], c["en->xx"], c["pairs better"]
    (1.3333333333333333, -1.0, 2.0)
    """
    from scipy.stats import wilcoxon

    diffs = {p: with_part[p] - without[p] for p in pairs}
    values = np.array(list(diffs.values()))
    out = {"mean pp drop": float(values.mean())}
    for name, keep in (("en-en", lambda p: p == "en-en"), ("en->xx", lambda p: p.startswith("en-") and p != "en-en"),
                       ("xx->en", lambda p: p.endswith("-en") and p != "en-en")):
        chosen = [v for p, v in diffs.items() if keep(p)]
        if chosen:
            out[name] = float(np.mean(chosen))
    out["pairs better"] = float((values > 0).sum())
    out["pairs worse"] = float((values < 0).sum())
    out["wilcoxon p"] = float(wilcoxon(values).pvalue) if np.any(values != 0) and len(values) > 1 else 1.0
    return out


# --- claims ------------------------------------------------------------------------------------------------------


def claims_main(rows: Rows) -> list[str]:
    """Table 2's claims and the general-retrieval check, on the ``emu-main`` rows."""
    emu, orig = rows["EMU"], rows[ORIGINAL]
    out = [_verdict(emu[CROSS] > rows[b][CROSS], f"EMU beats the {b} on cross-lingual intent Acc@1 (mean of "
                    "en->xx and xx->en)", f"{emu[CROSS]:.1f} vs {rows[b][CROSS]:.1f}") for b in BASELINES]
    out.append(_verdict(emu[CROSS] > orig[CROSS], "EMU beats the original encoder on cross-lingual intent Acc@1",
                        f"{emu[CROSS]:.1f} vs {orig[CROSS]:.1f}"))
    out += [_verdict(rows[b][CROSS] < orig[CROSS], f"fine-tuning with the {b} lowers cross-lingual Acc@1 below the "
                     "original encoder", f"{rows[b][CROSS]:.1f} vs {orig[CROSS]:.1f}") for b in BASELINES]
    no_ld = rows["EMU w/o LD"]
    out.append(_verdict(emu[CROSS] > no_ld[CROSS], "the language discriminator helps cross-lingual pairs: EMU beats "
                        "EMU w/o LD on cross-lingual Acc@1", f"{emu[CROSS]:.1f} vs {no_ld[CROSS]:.1f}"))
    par = rows["EMU-PARALLEL"]
    out.append(_verdict(par[CROSS] <= emu[CROSS], "parallel sentences are not needed: EMU-PARALLEL (adversarial "
                        "sentences are translations of the batch) does not beat EMU (unrelated sentences)",
                        f"{par[CROSS]:.1f} vs {emu[CROSS]:.1f}"))
    if TATOEBA in emu and TATOEBA in orig:
        out.append(_verdict(emu[TATOEBA] >= orig[TATOEBA] - 2, "specialization keeps general retrieval: EMU's Tatoeba "
                            "accuracy on the papers' 14 languages is within 2 points of the original encoder's "
                            "(xlsent check, not a claim of the paper)", f"{emu[TATOEBA]:.1f} vs {orig[TATOEBA]:.1f}"))
    return out


def claims_ablation(rows: Rows) -> list[str]:
    """Table 5's reading of the components, on the ``emu-ablation`` rows."""
    paper = {"language discriminator": "1.45 / 2.81 / 1.05 pp on HotelQA / ATIS / Quora",
             "center loss": "-0.44 / 0.04 / 6.00 pp"}
    return [_verdict(rows[name]["mean pp drop"] > 0, f"the {name} helps: removing it lowers mean Acc@1 over "
                     f"Table 2's tasks (paper: {paper[name]})",
                     f"{rows[name]['mean pp drop']:+.2f} pp, better on {rows[name]['pairs better']:.0f} and worse on "
                     f"{rows[name]['pairs worse']:.0f} pairs, Wilcoxon p = {rows[name]['wilcoxon p']:.3g}"
                     + ("; not significant at p < 0.05, one seed" if rows[name]["wilcoxon p"] >= 0.05 else ""))
            for name in COMPONENTS]


def subset_name(langs: Sequence[str]) -> str:
    return "+".join(langs)


def claims_langs(rows: Rows, langs: Sequence[str]) -> list[str]:
    """Table 3's findings on the ``emu-langs`` rows (relative change per pair, rows named by training languages)."""
    singles = list(langs)
    mono = [x for x in singles if max(singles, key=lambda t: rows[t][f"{x}-{x}"]) == x]
    cross = [(a, b) for a in singles for b in singles if a != b]
    pairs_two = [subset_name(c) for c in itertools.combinations(singles, 2)]
    best_two = [f"{a}-{b}" for a, b in cross
                if set(max(pairs_two, key=lambda s: rows[s][f"{a}-{b}"]).split("+")) == {a, b}]
    every = subset_name(singles)
    pairs = [f"{a}-{b}" for a in singles for b in singles]
    best_all = [p for p in pairs if max(rows, key=lambda s: rows[s][p]) == every]
    return [
        _verdict(len(mono) == len(singles), "for a monolingual pair x-x, training on x alone beats training on any "
                 "other single language", f"{len(mono)} of {len(singles)}: {' '.join(mono) or 'none'}"),
        _verdict(len(best_two) == len(cross), "for a cross-lingual pair, the best two-language training set is the "
                 "pair's own two languages", f"{len(best_two)} of {len(cross)}: {' '.join(best_two) or 'none'}"),
        _verdict(len(best_all) > len(pairs) / 2, "training on all the languages is best on most pairs (paper: 7 of 9)",
                 f"{len(best_all)} of {len(pairs)}"),
    ]


# --- running -----------------------------------------------------------------------------------------------------


@dataclass
class Study:
    """Trains (or reuses) the models under ``settings.models_dir`` and scores them with the tasks' own code."""

    backbone: TransformerEncoder
    settings: StudySettings
    out_dir: Path
    intent_results: dict[str, TaskResult] = field(default_factory=dict)

    def config(self, mode: str, train_langs: Sequence[str] = ("en",)) -> EmuConfig:
        sets = [f"backbone={self.settings.backbone}", f"train_langs={','.join(train_langs)}", *self.settings.sets]
        cfg = METHOD.config(mode=mode, sets=sets)
        assert isinstance(cfg, EmuConfig)
        return cfg

    def model(self, mode: str, train_langs: Sequence[str] = ("en",)) -> TransformerEncoder:
        """The trained model of ``mode`` on ``train_langs`` (trained first when its directory has no model)."""
        name = mode if list(train_langs) == ["en"] else f"{mode}-{subset_name(train_langs)}"
        out = self.settings.models_dir / name
        if not (out / "xlsent.json").is_file():
            cfg = self.config(mode, train_langs)
            train_on(cfg, build_data(cfg, self.settings.data), self.backbone, out, resume=True, progress=False)
        return load_model(out)

    def score(self, row: str, enc: TransformerEncoder) -> dict[str, float]:
        """The intent result of ``enc`` (saved), its ``emu-main`` columns, and Tatoeba where the settings ask."""
        s = self.settings
        result = intent.evaluate(encoder_embed(enc), encoder_id=encoder_id(enc), langs=list(s.langs) or None,
                                 root=s.data, tsne=s.tsne and row in FIGURE2, tsne_langs=FIGURE2_LANGS)
        result.variant = RESULT_VARIANT
        result.notes.append(f"row '{row}' of the EMU study (xlsent.methods.emu.study)")
        result.save(self.out_dir, overwrite=True)
        self.intent_results[row] = result
        out = intent_row(result)
        if row in TATOEBA_ROWS[s.tatoeba]:
            tat = tatoeba.evaluate(encoder_embed(enc), encoder_id=encoder_id(enc), langs=list(PAPER14), root=s.data)
            tat.variant = RESULT_VARIANT
            tat.save(self.out_dir)
            out[TATOEBA] = tat.averages["paper-14"]
        return out


def _last_validation(enc: TransformerEncoder) -> dict[str, float]:
    last = read_manifest(enc.model_dir, verify="none")["training"]["validation"].get("last") or {}
    return {"held-out en loo": last["loo/en"]} if "loo/en" in last else {}


def study_main(study: Study) -> Rows:
    """Table 2 (and Figure 2): the original encoder, the baselines, EMU and its variants."""
    rows = {ORIGINAL: study.score(ORIGINAL, study.backbone)}
    for row, mode in MAIN_MODES.items():
        enc = study.model(mode)
        rows[row] = {**study.score(row, enc), **_last_validation(enc)}
    return rows


def saved_intent_results(study: Study) -> dict[str, TaskResult]:
    """The ``main`` study's saved intent results in ``out_dir``, when they are the ones its saved ``emu-main``
    result was made from (each row's cross-lingual score equals the intent result's main score); else none.

    So Table 5 is read from exactly Table 2's models, even when those models are no longer on this machine
    (they are not shipped), and a half-rewritten set of results is never mixed with an older table.
    """
    main_path = study.out_dir / _result_name("main", study)
    main = load_result(main_path) if main_path.is_file() else None
    if main is None:
        return {}
    found = {}
    for row, mode in MAIN_MODES.items():
        path = study.out_dir / f"intent-{RESULT_VARIANT}__{mode}.json"
        result = load_result(path) if path.is_file() else None
        if result is None or main.scores.get(row, {}).get(CROSS) != result.main_score:
            return {}
        found[row] = result
    return found


def study_ablation(study: Study) -> Rows:
    """Table 5 from the ``main`` models' intent results (reused from ``out_dir``, else trained and scored)."""
    wanted = {row for c in COMPONENTS.values() for row in c}
    if not wanted <= study.intent_results.keys():
        study.intent_results.update(saved_intent_results(study))
    if not wanted <= study.intent_results.keys():
        study_main(study)
    rows = {}
    for name, (with_part, without) in COMPONENTS.items():
        a, b = study.intent_results[with_part], study.intent_results[without]
        rows[name] = contribution({p: v["acc@1"] for p, v in a.scores.items()},
                                  {p: v["acc@1"] for p, v in b.scores.items()}, table2_pairs(a.scores))
    return rows


def _encoded(enc: TransformerEncoder, langs: Sequence[str], root: str | None) -> dict[str, EncodedSet]:
    embed = encoder_embed(enc)
    sets = {}
    for lang in langs:
        data = load_xsid(lang, "test", root)
        sets[lang] = EncodedSet(np.asarray(data.ids, dtype=str), np.asarray(data.intents, dtype=str),
                                embed(data.texts, lang))
    return sets


def pair_table(sets: dict[str, EncodedSet]) -> dict[str, float]:
    """Acc@1 of every ordered language pair (query-pool) of ``sets``."""
    return {f"{a}-{b}": pair_accuracy(sets[a], sets[b])["acc@1"] for a in sets for b in sets}


def study_langs(study: Study) -> tuple[Rows, Rows]:
    """Table 3: EMU w/o LD on every non-empty subset of the training languages; relative and absolute Acc@1."""
    langs = study.settings.table3_langs
    base = pair_table(_encoded(study.backbone, langs, study.settings.data))
    absolute = {ORIGINAL: base}
    relative: Rows = {}
    for size in range(1, len(langs) + 1):
        for subset in itertools.combinations(langs, size):
            acc = pair_table(_encoded(study.model("emu-no-ld", subset), langs, study.settings.data))
            absolute[subset_name(subset)] = acc
            relative[subset_name(subset)] = {p: 100 * (v - base[p]) / base[p] if base[p] else float("nan")
                                             for p, v in acc.items()}
    return relative, absolute


def _result_name(variant: str, study: Study) -> str:
    """The file name of the study result ``variant`` (as :meth:`TaskResult.file_name` writes it)."""
    return TaskResult("emu", encoder_id(study.backbone), "", 0.0, "", {}, variant=variant).file_name()


def _result(variant: str, rows: Rows, main_row: str, metric: str, study: Study, seconds: float,
            notes: list[str]) -> TaskResult:
    s, cfg = study.settings, study.config("emu")
    return TaskResult(
        task="emu", encoder=encoder_id(study.backbone), dataset="xSID 0.7 test (+ tatoeba_v1, the papers' 14)",
        main_score=rows[main_row][metric], main_metric=f"{metric}, row '{main_row}'", subset_metric=metric,
        scores=rows, variant=variant, seconds=seconds,
        options={"method_row": main_row, "models": str(s.models_dir), "intent_langs": list(s.langs) or "all xSID",
                 "tatoeba": s.tatoeba, "table3_langs": list(s.table3_langs), "sets": list(s.sets)},
        notes=[*notes,
               f"training: configs/emu.toml's modes (xSID 0.7 English valid less {cfg.valid_size} held-out "
               f"utterances, {cfg.epochs:g} epochs at batch {cfg.batch_size}, model selection: {cfg.selection}) "
               f"with the overrides {list(s.sets) or 'none'}; unlabelled sentences for the discriminator: "
               f"{UNLABELLED_SOURCE} in {' '.join(cfg.adversarial_langs)}; EMU-PARALLEL: xSID valid translations",
               "the paper's HotelQA, ATIS and Quora are not available: evaluated on xSID 0.7 test (18 languages and "
               "dialects besides English, or those in intent_langs); single runs (seed 0)",
               f"backbone {study.backbone.name}, {'LoRA adapters' if cfg.lora else 'fully fine-tuned'} "
               "(the paper fine-tunes LASER's BiLSTM)"],
    )


STUDIES = ("main", "ablation", "langs")


def run_studies(studies: Sequence[str], settings: StudySettings, out_dir: Path) -> list[Path]:
    """Run the named studies and save their results (and the per-model task results) in ``out_dir``."""
    from xlsent.encoders.registry import load_encoder

    backbone = load_encoder(settings.backbone)
    if not isinstance(backbone, TransformerEncoder):
        raise ValueError(f"{settings.backbone} is not a transformer model")
    study = Study(backbone, settings, out_dir)
    paths = []
    for name in studies:
        t0 = time.perf_counter()
        if name == "main":
            rows = study_main(study)
            paths.append(_result("main", rows, METHOD_ROWS["main"], CROSS, study, time.perf_counter() - t0,
                                 [(study_main.__doc__ or "").strip(), *claims_main(rows)]).save(
                                     out_dir, overwrite=True))
        elif name == "ablation":
            rows = study_ablation(study)
            paths.append(_result("ablation", rows, METHOD_ROWS["ablation"], "mean pp drop", study,
                                 time.perf_counter() - t0, [(study_ablation.__doc__ or "").strip(),
                                                            *claims_ablation(rows)]).save(out_dir, overwrite=True))
        else:
            relative, absolute = study_langs(study)
            first = next(iter(relative[METHOD_ROWS["langs"]]))
            verdicts = claims_langs(relative, settings.table3_langs)
            note = (study_langs.__doc__ or "").strip() + "; cells: 100 * (Acc@1 - original) / original, rows: " \
                "training languages, columns: query-pool pairs"
            paths.append(_result("langs", relative, METHOD_ROWS["langs"], first, study, time.perf_counter() - t0,
                                 [note, *verdicts]).save(out_dir, overwrite=True))
            paths.append(_result("langs-acc", absolute, METHOD_ROWS["langs"], first, study, time.perf_counter() - t0,
                                 ["Acc@1 of the models of emu-langs (and the original encoder)"]).save(
                                     out_dir, overwrite=True))
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", nargs="+", default=list(STUDIES), choices=STUDIES)
    parser.add_argument("--langs", nargs="*", default=[], help="xSID languages besides English (default: all)")
    parser.add_argument("--tatoeba", choices=list(TATOEBA_ROWS), default="emu",
                        help="Tatoeba paper-14 for no model, the original and EMU (default), or every model")
    parser.add_argument("--table3-langs", nargs="+", default=["en", "de", "it"])
    parser.add_argument("--no-tsne", action="store_true", help="skip the t-SNE maps (Figure 2)")
    parser.add_argument("--models", default="models/emu", help="where trained models are kept (and reused)")
    parser.add_argument("--out", default="results")
    parser.add_argument("--data", help="benchmark data folder")
    parser.add_argument("--backbone", default="me5-small")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="config override for every trained model, e.g. --set device=cpu (repeatable)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    settings = StudySettings(tuple(args.langs), args.tatoeba, tuple(args.table3_langs), not args.no_tsne,
                             Path(args.models), args.data, tuple(args.set), args.backbone)
    for path in run_studies(args.studies, settings, Path(args.out)):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
