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
  the 3 x 3 language pairs (``emu-langs``); ``langs-acc``: the same models' absolute Acc@1 (``emu-langs-acc``).

A study's summary score is the row it declares as the paper's method, never the best row; each claim of the paper
gets a generated verdict in the result.

    python -m xlsent.methods.emu.study --studies main ablation langs langs-acc
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.data.tatoeba import PAPER14
from xlsent.data.xsid import XSID_LANGS, load_xsid
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation import intent, tatoeba
from xlsent.evaluation.intent import EncodedSet, pair_accuracy
from xlsent.evaluation.results import TaskResult, load_result
from xlsent.evaluation.task import encoder_embed
from xlsent.methods.emu import METHOD
from xlsent.methods.emu.config import EmuConfig
from xlsent.methods.emu.data import UNLABELLED_SOURCE, build_data
from xlsent.methods.emu.model import load_model, train_on
from xlsent.studies.command import main
from xlsent.studies.numbers import versus
from xlsent.studies.settings import StudySettings, option
from xlsent.studies.study import Rows, Study, StudyRun
from xlsent.studies.trained import ensure_trained
from xlsent.studies.verdict import Verdict
from xlsent.training.record import read_training

log = logging.getLogger(__name__)

TASK = "emu"
DATASET = "xSID 0.7 test (+ tatoeba_v1, the papers' 14)"
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
RESULT_VARIANT = "emu"


@dataclass(frozen=True)
class Settings(StudySettings):
    """What the study evaluates and the backbone every model starts from."""

    models_dir: Path = Path("models/emu")
    langs: tuple[str, ...] = option((), "xSID languages besides English (none given: all)", nargs="*",
                                    choices=XSID_LANGS)
    tatoeba: str = option("emu", "Tatoeba paper-14 for no model, the original and EMU, or every model",
                          choices=tuple(TATOEBA_ROWS))
    table3_langs: tuple[str, ...] = option(("en", "de", "it"), "the languages of Table 3's training subsets",
                                           choices=XSID_LANGS)
    tsne: bool = option(True, "draw the t-SNE maps of Figure 2")
    backbone: str = option("me5-small", "the encoder every model fine-tunes")


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


def subset_name(langs: Sequence[str]) -> str:
    return "+".join(langs)


def pair_table(sets: dict[str, EncodedSet]) -> dict[str, float]:
    """Acc@1 of every ordered language pair (query-pool) of ``sets``."""
    return {f"{a}-{b}": pair_accuracy(sets[a], sets[b])["acc@1"] for a in sets for b in sets}


# --- the lab -----------------------------------------------------------------------------------------------------


class Lab:
    """Trains (or reuses) the models under ``models_dir`` and scores them with the tasks' own code, keeping the
    ``main`` models' intent results (Table 5 reads them) and Table 3's pair tables."""

    def __init__(self, settings: Settings, out_dir: Path) -> None:
        from xlsent.encoders.registry import load_encoder

        backbone = load_encoder(settings.backbone)
        if not isinstance(backbone, TransformerEncoder):
            raise ValueError(f"{settings.backbone} is not a transformer model")
        self.backbone, self.settings, self.out_dir = backbone, settings, out_dir
        self.encoder = encoder_id(backbone)
        self.intent_results: dict[str, TaskResult] = {}
        self.tables: dict[str, dict[str, float]] = {}

    def config(self, mode: str, train_langs: Sequence[str] = ("en",)) -> EmuConfig:
        """The ``mode``'s configuration with the settings' sets, backbone and ``train_langs``."""
        cfg = METHOD.config(mode=mode, sets=self.settings.sets, backbone=self.settings.backbone,
                            train_langs=list(train_langs))
        assert isinstance(cfg, EmuConfig)
        return cfg

    def model(self, mode: str, train_langs: Sequence[str] = ("en",)) -> TransformerEncoder:
        """The model of ``mode`` on ``train_langs`` (trained first unless its folder holds one of its config)."""
        name = mode if list(train_langs) == ["en"] else f"{mode}-{subset_name(train_langs)}"
        out = self.settings.models_dir / name
        cfg = self.config(mode, train_langs)
        ensure_trained(METHOD, cfg, out, retrain=self.settings.retrain, train=lambda: train_on(
            cfg, build_data(cfg, self.settings.data), self.backbone, out, resume=True, progress=False))
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
            tat.save(self.out_dir, overwrite=True)
            out[TATOEBA] = tat.averages["paper-14"]
        return out

    def saved_intent_results(self) -> dict[str, TaskResult]:
        """The ``main`` study's saved intent results in ``out_dir``, when they are the ones its saved ``emu-main``
        result was made from (each row's cross-lingual score equals the intent result's main score); else none.

        So Table 5 is read from exactly Table 2's models, even when those models are no longer on this machine
        (they are not shipped), and a half-rewritten set of results is never mixed with an older table.
        """
        main_path = self.out_dir / TaskResult(TASK, self.encoder, "", 0.0, "", {}, variant="main").file_name()
        saved = load_result(main_path) if main_path.is_file() else None
        if saved is None:
            return {}
        found = {}
        for row, mode in MAIN_MODES.items():
            path = self.out_dir / f"intent-{RESULT_VARIANT}__{mode}.json"
            result = load_result(path) if path.is_file() else None
            if result is None or saved.scores.get(row, {}).get(CROSS) != result.main_score:
                return {}
            found[row] = result
        return found

    def pair_tables(self) -> dict[str, dict[str, float]]:
        """Acc@1 per language pair of the original encoder and of EMU w/o LD trained on each non-empty subset of
        ``table3_langs`` (computed once)."""
        if not self.tables:
            langs = self.settings.table3_langs
            self.tables[ORIGINAL] = pair_table(self._encoded(self.backbone, langs))
            for size in range(1, len(langs) + 1):
                for subset in itertools.combinations(langs, size):
                    model = self.model("emu-no-ld", subset)
                    self.tables[subset_name(subset)] = pair_table(self._encoded(model, langs))
        return self.tables

    def _encoded(self, enc: TransformerEncoder, langs: Sequence[str]) -> dict[str, EncodedSet]:
        embed = encoder_embed(enc)
        sets = {}
        for lang in langs:
            data = load_xsid(lang, "test", self.settings.data)
            sets[lang] = EncodedSet(np.asarray(data.ids, dtype=str), np.asarray(data.intents, dtype=str),
                                    embed(data.texts, lang))
        return sets

    def notes(self, run: StudyRun[Settings]) -> list[str]:
        s, cfg = self.settings, self.config("emu")
        return [f"training: configs/emu.toml's modes (xSID 0.7 English valid less {cfg.valid_size} held-out "
                f"utterances, {cfg.epochs:g} epochs at batch {cfg.batch_size}, model selection: {cfg.selection}) "
                f"with the overrides {list(s.sets) or 'none'}; unlabelled sentences for the discriminator: "
                f"{UNLABELLED_SOURCE} in {' '.join(cfg.adversarial_langs)}; EMU-PARALLEL: xSID valid translations",
                "the paper's HotelQA, ATIS and Quora are not available: evaluated on xSID 0.7 test (18 languages and "
                "dialects besides English, or those in intent_langs); single runs (seed 0)",
                f"backbone {self.backbone.name}, {'LoRA adapters' if cfg.lora else 'fully fine-tuned'} "
                "(the paper fine-tunes LASER's BiLSTM)"]


def setup(settings: Settings, out_dir: Path) -> Lab:
    return Lab(settings, out_dir)


def _last_validation(enc: TransformerEncoder) -> dict[str, float]:
    valid = read_training(enc.model_dir).validation
    last = (valid.last if valid else None) or {}
    return {"held-out en loo": last["loo/en"]} if "loo/en" in last else {}


# --- studies -----------------------------------------------------------------------------------------------------


def study_main(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 2 (and Figure 2): the original encoder, the baselines, EMU and its variants."""
    run.rows[ORIGINAL] = lab.score(ORIGINAL, lab.backbone)
    for row, mode in MAIN_MODES.items():
        enc = lab.model(mode)
        run.rows[row] = {**lab.score(row, enc), **_last_validation(enc)}


def study_ablation(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 5 from the ``main`` models' intent results (reused from ``out_dir``, else trained and scored)."""
    wanted = {row for c in COMPONENTS.values() for row in c}
    if not wanted <= lab.intent_results.keys():
        lab.intent_results.update(lab.saved_intent_results())
    if not wanted <= lab.intent_results.keys():
        study_main(lab, StudyRun("main", run.settings, run.out_dir))
    for name, (with_part, without) in COMPONENTS.items():
        a, b = lab.intent_results[with_part], lab.intent_results[without]
        run.rows[name] = contribution({p: v["acc@1"] for p, v in a.scores.items()},
                                      {p: v["acc@1"] for p, v in b.scores.items()}, table2_pairs(a.scores))


def study_langs(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 3: EMU w/o LD on every non-empty subset of the training languages, relative to the original encoder;
    cells: 100 * (Acc@1 - original) / original, rows: training languages, columns: query-pool pairs."""
    tables = lab.pair_tables()
    base = tables[ORIGINAL]
    for subset, acc in tables.items():
        if subset != ORIGINAL:
            run.rows[subset] = {p: 100 * (v - base[p]) / base[p] if base[p] else float("nan") for p, v in acc.items()}


def study_langs_acc(lab: Lab, run: StudyRun[Settings]) -> None:
    """Acc@1 of the models of emu-langs (and the original encoder)."""
    run.rows.update(lab.pair_tables())


# --- claims ------------------------------------------------------------------------------------------------------


def claims_main(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 2's claims and the general-retrieval check, on the ``emu-main`` rows."""
    emu, orig = rows[method_row], rows[ORIGINAL]
    out = [Verdict(f"EMU beats the {b} on cross-lingual intent Acc@1 (mean of en->xx and xx->en)",
                   emu[CROSS] > rows[b][CROSS], versus(emu[CROSS], rows[b][CROSS])) for b in BASELINES]
    out.append(Verdict("EMU beats the original encoder on cross-lingual intent Acc@1", emu[CROSS] > orig[CROSS],
                       versus(emu[CROSS], orig[CROSS])))
    out += [Verdict(f"fine-tuning with the {b} lowers cross-lingual Acc@1 below the original encoder",
                    rows[b][CROSS] < orig[CROSS], versus(rows[b][CROSS], orig[CROSS])) for b in BASELINES]
    no_ld = rows["EMU w/o LD"]
    out.append(Verdict("the language discriminator helps cross-lingual pairs: EMU beats EMU w/o LD on cross-lingual "
                       "Acc@1", emu[CROSS] > no_ld[CROSS], versus(emu[CROSS], no_ld[CROSS])))
    par = rows["EMU-PARALLEL"]
    out.append(Verdict("parallel sentences are not needed: EMU-PARALLEL (adversarial sentences are translations of "
                       "the batch) does not beat EMU (unrelated sentences)", par[CROSS] <= emu[CROSS],
                       versus(par[CROSS], emu[CROSS])))
    if TATOEBA in emu and TATOEBA in orig:
        out.append(Verdict("specialization keeps general retrieval: EMU's Tatoeba accuracy on the papers' 14 "
                           "languages is within 2 points of the original encoder's", emu[TATOEBA] >= orig[TATOEBA] - 2,
                           versus(emu[TATOEBA], orig[TATOEBA]), "xlsent"))
    return out


def claims_ablation(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 5's reading of the components, on the ``emu-ablation`` rows."""
    paper = {"language discriminator": "1.45 / 2.81 / 1.05 pp on HotelQA / ATIS / Quora",
             "center loss": "-0.44 / 0.04 / 6.00 pp"}
    return [Verdict(f"the {name} helps: removing it lowers mean Acc@1 over Table 2's tasks (paper: {paper[name]})",
                    rows[name]["mean pp drop"] > 0,
                    f"{rows[name]['mean pp drop']:+.2f} pp, better on {rows[name]['pairs better']:.0f} and worse on "
                    f"{rows[name]['pairs worse']:.0f} pairs, Wilcoxon p = {rows[name]['wilcoxon p']:.3g}"
                    + ("; not significant at p < 0.05, one seed" if rows[name]["wilcoxon p"] >= 0.05 else ""))
            for name in COMPONENTS]


def claims_langs(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 3's findings on the ``emu-langs`` rows (relative change per pair, rows named by training languages:
    the single languages first)."""
    singles = [row for row in rows if "+" not in row]
    mono = [x for x in singles if max(singles, key=lambda t: rows[t][f"{x}-{x}"]) == x]
    cross = [(a, b) for a in singles for b in singles if a != b]
    pairs_two = [subset_name(c) for c in itertools.combinations(singles, 2)]
    best_two = [f"{a}-{b}" for a, b in cross
                if set(max(pairs_two, key=lambda s: rows[s][f"{a}-{b}"]).split("+")) == {a, b}]
    every = subset_name(singles)
    pairs = [f"{a}-{b}" for a in singles for b in singles]
    best_all = [p for p in pairs if max(rows, key=lambda s: rows[s][p]) == every]
    return [
        Verdict("for a monolingual pair x-x, training on x alone beats training on any other single language",
                len(mono) == len(singles), f"{len(mono)} of {len(singles)}: {' '.join(mono) or 'none'}"),
        Verdict("for a cross-lingual pair, the best two-language training set is the pair's own two languages",
                len(best_two) == len(cross), f"{len(best_two)} of {len(cross)}: {' '.join(best_two) or 'none'}"),
        Verdict("training on all the languages is best on most pairs (paper: 7 of 9)", len(best_all) > len(pairs) / 2,
                f"{len(best_all)} of {len(pairs)}"),
    ]


STUDIES = {
    "main": Study(study_main, "EMU", CROSS, claims=claims_main),
    "ablation": Study(study_ablation, "language discriminator", "mean pp drop", claims=claims_ablation),
    "langs": Study(study_langs, "en", claims=claims_langs),
    "langs-acc": Study(study_langs_acc, "en"),
}
"""Each study and the row it declares as the paper's method (its summary score): EMU; Table 5's first component;
and English-only training, the set-up of the paper's main experiments."""


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.modules[__name__]))
