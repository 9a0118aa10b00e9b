"""Reproduce LASER's evaluations (paper 001) with the CPU-sized model; results go to ``results/``.

Every model is trained through ``xlsent train laser`` (:func:`xlsent.methods.laser.train`, reused when its folder
already holds one of the same configuration) and scored by the evaluation tasks' own code on its embeddings:
Tatoeba v1 (accuracy, both directions) on the trained languages and on related languages left out of training, the
BUCC-style mining sets (F1; de, fr, ru from newstest, zh the BUCC 2018 sample) and XNLI zero-shot transfer
(English-trained MLP on ``(p, h, p*h, |p-h|)``, 15 languages). Studies:

- ``main``: the model of ``configs/laser-small.toml`` (the shipped ``models/laser-small``, a student trained onto
  me5-small's vectors) beside the paper's numbers (Tables 1/3, 5 and the Tatoeba appendix) and its teacher's,
  with what separates the runs; its task results are saved one per task (``results/<task>-laser__laser-small.json``)
  and recorded in the model card.
- ``objective``: the same configuration trained with the paper's translation objective, with distillation onto
  the teacher, and with both, for the same wall time (``--study-minutes``); where the configuration adds ranking
  terms, also distillation without teacher ranking and without any ranking; an xlsent check, not a paper claim.
- ``depth`` (Table 6): the shipped objective with a 1-layer and a 3-layer BiLSTM trained for the same number of
  steps (``--depth-steps``); the paper compares 1, 3 and 5 layers at 17 epochs each. A row still learning at the
  end (its dev F1 still rising) makes the verdicts inconclusive.
- ``bitext``: ``xlsent train laser --bitext`` on a dev simulation of a new language (:mod:`xlsent.studies.new_language`,
  ``--bitext-run LANG:PAIRS``): the shipped configuration with the user's pairs, and without them, each trained for
  ``--study-minutes``, beside the shipped model and the teacher, on the language's test pairs (retrieval error and
  mining F1) and on the shipped languages' NTREX test lines.

A study's summary score is the row it declares as its method, never the best row.

    python -m xlsent.methods.laser.study --studies main objective depth bitext
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.arg_types import positive_float, positive_int
from xlsent.data.parallel import load_ntrex
from xlsent.data.user_bitext import BitextFile
from xlsent.data.xnli import XNLI_LANGS
from xlsent.encoders.base import Encoder
from xlsent.encoders.bilstm import LaserEncoder
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.registry import load_encoder
from xlsent.evaluation import bucc, tatoeba, xnli
from xlsent.evaluation.published import PUBLISHED
from xlsent.evaluation.results import TaskResult, load_result
from xlsent.evaluation.selection import retrieval_criterion
from xlsent.evaluation.task import encoder_embed
from xlsent.languages import TATOEBA_CHALLENGE, TATOEBA_CHALLENGE_TO_V1, ntrex_code
from xlsent.methods.laser import METHOD
from xlsent.methods.laser.config import OBJECTIVES, LaserConfig, loss_terms
from xlsent.studies.command import main
from xlsent.studies.new_language import (
    POOL_LINES,
    evaluation_error,
    evaluation_mining_f1,
    simulated_run,
    write_user_file,
)
from xlsent.studies.numbers import versus
from xlsent.studies.settings import StudySettings, option, parsed_by
from xlsent.studies.study import Rows, Study, StudyRun
from xlsent.studies.trained import ensure_trained, require_model
from xlsent.studies.verdict import Verdict
from xlsent.training.model_card import record_metrics
from xlsent.training.record import TrainingRecord

log = logging.getLogger(__name__)

TASK = "laser"
DATASET = "tatoeba_v1, BUCC-style sets, XNLI"
RELATED = {"da": "dan", "af": "afr", "gl": "glg", "ca": "cat", "uk": "ukr", "be": "bel", "sk": "slk", "bg": "bul"}
"""Untrained languages close to trained ones (Tatoeba v1 codes): Germanic, Romance and Slavic neighbours."""
BUCC_SETS = ("de", "fr", "ru", bucc.SAMPLE)
"""The paper's four BUCC pairs (into English): newstest-built de, fr, ru and the BUCC 2018 zh-en sample."""
PAPER = "Artetxe & Schwenk (2019)"
PAPER_BUCC = {"de": 96.19, "fr": 93.91, "ru": 93.30, "zh": 92.27}
"""LASER's BUCC test F1 (paper 001, Table 5, "Proposed method"; the real BUCC test sets, not ours)."""
PAPER_DEPTH = {"1 layer": {"tatoeba acc": 100 - 37.96, "bucc f1": 89.95, "xnli en": 70.94, "xnli xx": 64.54},
               "3 layers": {"tatoeba acc": 100 - 28.95, "bucc f1": 92.28, "xnli en": 72.83, "xnli xx": 68.43},
               "5 layers": {"tatoeba acc": 100 - 26.31, "bucc f1": 92.83, "xnli en": 73.67, "xnli xx": 69.92}}
"""Paper 001, Table 6 (Tatoeba as accuracy = 100 - error, averaged over its languages; BUCC mean F1)."""
_PAPER_COL = {"tatoeba trained": "tatoeba acc", "bucc mean": "bucc f1", "xnli xx": "xnli xx", "xnli en": "xnli en"}
VARIANT = "laser"
BITEXT_ROW = "with --bitext"
BITEXT_DATASET = "a language held back from the corpus (xlsent.studies.new_language), NTREX-128 test lines"
NO_BITEXT_ROW = "without --bitext"
TIMED_STEPS = 1_000_000
"""``steps`` of a row trained for a time budget (``minutes``): more than it can take, so the budget ends it."""
STILL_LEARNING = 1.0
"""Dev mining F1 points a row gained over its last validation interval above which it is still learning: its
numbers are an early snapshot, and a verdict comparing it is inconclusive."""
DEV_GAIN = "dev F1 gain, second half"
NEW_ERROR = "error new language"
NEW_F1 = "mining f1 new language"
SHIPPED_ERROR = "ntrex error shipped languages"
SMALL_CONFIG = "src/xlsent/configs/laser-small.toml"
"""The default config layer as the results record it: the package's own file (:func:`config_file`), read from the
installed package whatever the current folder."""


def config_file(layer: str) -> Path:
    """The file of a ``--config`` layer: the package's ``laser-small.toml`` for :data:`SMALL_CONFIG`, else the path
    as given."""
    if layer == SMALL_CONFIG:
        return Path(str(resources.files("xlsent") / "configs" / Path(SMALL_CONFIG).name))
    return Path(layer)


@dataclass(frozen=True)
class Settings(StudySettings):
    """Where the models live and the config layers every model uses."""

    models_dir: Path = Path("models/laser-study")
    main_dir: Path = option(Path("models/laser-small"), "the main model's folder (it must hold the model: `xlsent "
                            f"train laser --config {SMALL_CONFIG} --out DIR` trains one)", flag="--main-model",
                            metavar="DIR")
    configs: tuple[str, ...] = option((SMALL_CONFIG,), "config layers of every model", flag="--config",
                                      metavar="FILE", repeat=True)
    study_minutes: float = option(5.0, "training minutes of each model the objective and bitext studies compare",
                                  metavar="MIN", type=positive_float)
    depth_steps: int = option(300, "SCALED DOWN for CPU: training steps of both models the depth study compares "
                              "(equal steps, as the paper's equal epochs; validated halfway and at the end)",
                              metavar="N", type=positive_int)
    bitext_run: str = option("qaa:1000", "the bitext study's user file: LANG:PAIRS of a simulated language of "
                             "xlsent.studies.new_language", metavar="LANG:PAIRS", type=parsed_by(simulated_run))
    bitext_max_pairs: int = option(5000, "SCALED DOWN for CPU: the bitext study's students take at most this many "
                                   "pairs of each shipped language pair (the teacher encodes their English once)",
                                   metavar="N", type=positive_int)


def tatoeba_code(lang: str) -> str:
    """The Tatoeba v1 code of a two-letter training language (``zh`` -> ``cmn``, ``de`` -> ``deu``)."""
    code = TATOEBA_CHALLENGE.get(lang, lang)
    return TATOEBA_CHALLENGE_TO_V1.get(code, (code,))[0]


def trained_tatoeba(config: LaserConfig) -> list[str]:
    """Tatoeba v1 codes of the languages a config trains (English is the other side of every pair)."""
    return [tatoeba_code(x) for x in dict.fromkeys([*config.languages, *config.targets]) if x != "en"]


def paper_row(trained: Sequence[str]) -> dict[str, float]:
    """The paper's numbers on the columns of :meth:`Lab.score` that it reports (Tatoeba over our trained
    languages)."""
    tat = PUBLISHED["tatoeba"]["LASER"].values
    nli = PUBLISHED["xnli"]["LASER"].values
    have = [x for x in trained if x in tat]
    return {"tatoeba trained": float(np.mean([tat[x] for x in have])),
            **{f"bucc {x}-en": PAPER_BUCC[x] for x in BUCC_SETS},
            "bucc mean": float(np.mean(list(PAPER_BUCC.values()))),
            "xnli en": nli["en"], "xnli xx": float(np.mean([v for k, v in nli.items() if k != "en"]))}


@dataclass
class Scored:
    """A model's task results and the summary columns of a study row."""

    results: list[TaskResult]
    row: dict[str, float]


class Lab:
    """Trains (or reuses) the study's models and scores each once (a model two studies share is scored once)."""

    def __init__(self, settings: Settings, out_dir: Path) -> None:
        self.settings = settings
        self.out_dir = out_dir
        self.scored: dict[str, Scored] = {}

    def config(self, **overrides: Any) -> LaserConfig:
        """The settings' configuration with a row's typed ``overrides``."""
        cfg = METHOD.config([config_file(layer) for layer in self.settings.configs], self.settings.sets, **overrides)
        assert isinstance(cfg, LaserConfig)
        return cfg

    def model(self, out: Path, **overrides: Any) -> tuple[LaserEncoder, LaserConfig]:
        """The model in ``out`` of the settings' config with ``overrides`` (trained unless it is there)."""
        cfg = self.config(**overrides)
        ensure_trained(METHOD, cfg, out, data=self.settings.data, retrain=self.settings.retrain)
        return LaserEncoder(out), cfg

    def timed(self, objective: str, layers: int, *, drop: str = "") -> tuple[LaserEncoder, LaserConfig]:
        """The settings' config with ``objective`` and ``layers``, trained for ``study_minutes`` (one folder per
        variant). ``drop`` removes terms of the configuration: ``"teacher ranking"`` its teacher ranking
        (``teacher_ranking_weight = 0``), ``"ranking"`` both ranking terms, as does the translation objective (they
        rank English pairs and teacher vectors)."""
        unranked = {"ranking_weight": 0.0, "teacher_ranking_weight": 0.0}
        dropped, tag = {"": ({}, ""), "ranking": (unranked, "-no-ranking"),
                        "teacher ranking": ({"teacher_ranking_weight": 0.0}, "-no-teacher-ranking")}[drop]
        minutes = self.settings.study_minutes
        return self.model(self.settings.models_dir / f"{objective}-{layers}layer{tag}-{minutes:g}min",
                          objective=objective, layers=layers, minutes=minutes, steps=TIMED_STEPS,
                          **(unranked if objective == "translate" else dropped))

    def stepped(self, objective: str, layers: int, steps: int) -> tuple[LaserEncoder, LaserConfig]:
        """The settings' config with ``objective`` and ``layers``, trained for ``steps`` steps (no time budget) and
        validated halfway and at the end."""
        return self.model(self.settings.models_dir / f"{objective}-{layers}layer-{steps}steps", objective=objective,
                          layers=layers, steps=steps, minutes=0.0, eval_every=max(1, steps // 2))

    @property
    def encoder(self) -> str:
        """The main model's id, which both studies' results are filed under."""
        return self.model(self.settings.main_dir)[0].id

    def score(self, encoder: Encoder, config: LaserConfig) -> Scored:
        """Tatoeba (trained and related languages), BUCC and XNLI of ``encoder``, with a study row of their means
        (and its training steps and minutes where it is a trained LASER model)."""
        key = encoder_id(encoder)
        if key in self.scored:
            return self.scored[key]
        root, embed = self.settings.data, encoder_embed(encoder)
        trained = trained_tatoeba(config)
        related = [code for lang, code in RELATED.items() if lang not in config.languages]
        saved = None if isinstance(encoder, LaserEncoder) else self.saved(encoder)
        if saved is not None:
            tat, mining, nli = saved
        else:
            tat = tatoeba.evaluate(embed, encoder_id=key, langs=[*trained, *related], root=root)
            mining = bucc.evaluate(embed, encoder_id=key, langs=list(BUCC_SETS), root=root)
            nli = xnli.evaluate(embed, encoder_id=key, root=root)
            for result in (tat, mining, nli):
                result.variant = VARIANT
        acc = {lang: tat.scores[lang]["mean"] for lang in tat.scores}
        f1 = {x: mining.scores[bucc.SETS[x]]["f1"] for x in BUCC_SETS}
        row = {"tatoeba trained": float(np.mean([acc[x] for x in trained])),
               "tatoeba related (untrained)": float(np.mean([acc[x] for x in related])),
               **{f"bucc {x}-en": v for x, v in f1.items()}, "bucc mean": float(np.mean(list(f1.values()))),
               "xnli en": nli.scores["en"]["accuracy"],
               "xnli xx": float(np.mean([nli.scores[x]["accuracy"] for x in XNLI_LANGS if x != "en"]))}
        if isinstance(encoder, LaserEncoder):
            training = TrainingRecord.from_json(encoder.manifest["training"])
            row["steps"] = float(training.steps_done or 0)
            row["train minutes"] = (training.train_seconds or 0) / 60
            gain = training.validation.last_gain() if training.validation else None
            if gain is not None:
                row[DEV_GAIN] = gain
        self.scored[key] = Scored([tat, mining, nli], row)
        return self.scored[key]

    def saved(self, encoder: Encoder) -> tuple[TaskResult, TaskResult, TaskResult] | None:
        """``encoder``'s own Tatoeba, BUCC and XNLI results in the results folder (``xlsent eval --record``, the same
        tasks and protocol), when all three are there for its current id; None otherwise."""
        found = [load_result(self.out_dir / f"{task}__{encoder.name}.json") for task in ("tatoeba", "bucc", "xnli")]
        if any(r is None or r.encoder != encoder_id(encoder) for r in found):
            return None
        tat, mining, nli = found
        assert tat is not None and mining is not None and nli is not None
        return tat, mining, nli

    def notes(self, run: StudyRun[Settings]) -> list[str]:
        return []


def setup(settings: Settings, out_dir: Path) -> Lab:
    require_model(settings.main_dir, "--main-model")  # never trained anew into a folder named by mistake
    return Lab(settings, out_dir)


def _gap_notes(encoder: LaserEncoder, config: LaserConfig) -> list[str]:
    training = TrainingRecord.from_json(encoder.manifest["training"])
    projected = f", projected to {encoder.dim}" if encoder.dim != 2 * config.hidden else ""
    pairs, terms = training.data.details["pairs"], loss_terms(config.objective, asdict(config))
    return [
        f"what separates xlsent's row from the paper's: the paper trains 93 languages on 223M sentence pairs for 17 "
        f"epochs (about 5 days on 16 V100 GPUs) with a 5 x 512 BiLSTM (1024-d), 50k BPE and a 2048 decoder; "
        f"xlsent's small model trains {len(trained_tatoeba(config)) + 1} languages on {pairs:,} pairs "
        f"(Tatoeba-Challenge test minus Tatoeba v1, Multi30k, newstest, NTREX) for "
        f"{(training.train_seconds or 0) / 60:.0f} minutes on a CPU ({training.steps_done} steps of at most "
        f"{config.max_tokens} tokens) with a {config.layers} x "
        f"{config.hidden} BiLSTM ({2 * config.hidden}-d{projected}) and {config.vocab_size} SentencePiece pieces, "
        + (f"and the objective {config.objective}: onto {config.teacher}'s vectors of the English sides"
           + (f" ({terms})" if terms else "")
           + (f" beside a {config.decoder_hidden} decoder" if config.translates else "")
           if config.distills else f"and a {config.decoder_hidden} decoder (the paper's objective)"),
        "the paper's BUCC numbers are on the real BUCC test sets; ours on the BUCC 2018 zh-en sample and "
        "BUCC-style sets built from newstest2012 (xlsent.data.bucc), so the BUCC columns compare protocols only",
        "the paper's XNLI classifier is trained on MultiNLI; ours on 90% of English XNLI dev (XNLI-MT and MultiNLI "
        "training data are not available here)",
        f"the paper's Tatoeba number is the mean over the trained languages it reports "
        f"({PUBLISHED['tatoeba']['LASER'].source})",
    ]


# --- studies -------------------------------------------------------------------------------------------------


def study_main(lab: Lab, run: StudyRun[Settings]) -> None:
    """The small model's scores beside the paper's and its teacher's, with the task results saved and recorded in
    the card."""
    encoder, cfg = lab.model(run.settings.main_dir)
    scored = lab.score(encoder, cfg)
    run.results += scored.results
    record_metrics(encoder.model_dir, [asdict(r) for r in scored.results])
    run.rows[STUDIES["main"].method_row] = scored.row
    if cfg.distills:
        teacher = load_encoder(cfg.teacher)
        run.rows[f"teacher ({cfg.teacher})"] = lab.score(teacher, cfg).row
        run.notes.append(f"teacher row: {teacher.name}'s own results in {lab.out_dir} (`xlsent eval tatoeba bucc xnli "
                         "--record`), the same tasks and protocol" if lab.saved(teacher) is not None else
                         f"teacher row: {teacher.name} scored here with the same tasks")
    run.rows[f"LASER ({PAPER})"] = paper_row(trained_tatoeba(cfg))
    related = [c for lang, c in RELATED.items() if lang not in cfg.languages]
    run.notes += [f"Tatoeba trained: {' '.join(trained_tatoeba(cfg))}; related, untrained: {' '.join(related)}",
                  *_gap_notes(encoder, cfg)]


def _equal_time_note(run: StudyRun[Settings], rows: Sequence[str]) -> str:
    steps = ", ".join(f"{row} {run.rows[row]['steps']:.0f}" for row in rows)
    return (f"every row trained for {run.settings.study_minutes:g} minutes of wall time on this machine, one at a "
            f"time (steps: {steps}; `train minutes` also counts the validation after the last step, which mines the "
            "dev sets where the configuration has dev_mining, slower for a deeper model); the paper trains for 17 "
            "epochs (about 5 days on 16 GPUs), so these rows compare "
            "early-training snapshots, not converged models: XNLI's chance level is 33.3% and Tatoeba's about 0.1%")


NO_RANKING = "distill, MSE alone"
"""The objective study's row of distillation alone (MSE), where the shipped configuration adds ranking terms."""
NO_TEACHER_RANKING = "distill, no teacher ranking"
"""The objective study's row without teacher ranking, where the shipped configuration has it."""


def study_objective(lab: Lab, run: StudyRun[Settings]) -> None:
    """The paper's translation objective, distillation onto the teacher, and both, at equal training time (and
    distillation without each ranking term the configuration adds)."""
    config = lab.config()
    for objective in OBJECTIVES:
        encoder, cfg = lab.timed(objective, config.layers)
        run.rows[objective] = lab.score(encoder, cfg).row
    ablations = {NO_TEACHER_RANKING: ("teacher ranking", config.teacher_ranking_weight > 0),
                 NO_RANKING: ("ranking", config.ranking_weight > 0)}
    for row, (drop, has) in ablations.items():
        if has:
            encoder, cfg = lab.timed("distill", config.layers, drop=drop)
            run.rows[row] = lab.score(encoder, cfg).row
    if config.ranking_weight > 0:
        run.notes.append(f"distill and both add translation ranking (weight {config.ranking_weight:g}, scale "
                         f"{config.ranking_scale:g}, in-batch negatives) between student(x) and student(English)")
    if config.teacher_ranking_weight > 0:
        run.notes.append(f"distill and both add teacher ranking (weight {config.teacher_ranking_weight:g}): "
                         "student(x) and student(English) ranked against the teacher's vector of the English side "
                         f"among the batch's and {config.teacher_negatives} other teacher vectors of the corpus")
    dropped = [row for row in ablations if row in run.rows]
    if dropped:
        run.notes.append(f"{', '.join(repr(row) for row in dropped)}: distill without the terms named; translate "
                         "trains without any ranking term")
    run.notes += [_equal_time_note(run, [*OBJECTIVES, *dropped]),
                  f"the same configuration ({' + '.join(run.settings.configs)}) in every row but `objective`: "
                  f"{config.layers} BiLSTM layer(s), the same vocabulary, corpus and subword initialisation; distill "
                  "and both regress onto the teacher's vectors of the English side of each pair"]


def study_depth(lab: Lab, run: StudyRun[Settings]) -> None:
    """Table 6 at equal training steps: the shipped objective with 1 and with 3 BiLSTM layers."""
    config = lab.config()
    objective, steps = config.objective, run.settings.depth_steps
    one, one_cfg = lab.stepped(objective, 1, steps)
    three, three_cfg = lab.stepped(objective, 3, steps)
    run.rows.update({"1 layer": lab.score(one, one_cfg).row, "3 layers": lab.score(three, three_cfg).row})
    run.rows.update({f"paper, {k}": v for k, v in PAPER_DEPTH.items()})
    terms = loss_terms(objective, asdict(config))
    minutes = ", ".join(f"{row} {run.rows[row]['train minutes']:.1f}" for row in ("1 layer", "3 layers"))
    run.notes += [f"both rows trained for {steps} steps (SCALED DOWN for CPU: the paper trains 17 epochs, about 5 "
                  f"days on 16 GPUs), one at a time (minutes: {minutes}); objective {objective}"
                  + (f" ({terms})" if terms else ""),
                  f"`{DEV_GAIN}`: how much the row's dev mining F1 rose over its second half of steps; a row that "
                  f"rose more than {STILL_LEARNING:g} points is still learning, and a verdict comparing it is "
                  "inconclusive (an early snapshot says nothing about depth)",
                  "paper rows: Table 6 (Tatoeba as 100 - error over its languages; BUCC mean F1 on the real test "
                  "sets)"]


# --- claims --------------------------------------------------------------------------------------------------


def claims_objective(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """LASER3's premise (teacher-student training learns an encoder far faster than translation), whether the
    translation term helps beside it, and (where the study has the rows) whether teacher ranking and in-batch
    ranking do, on Tatoeba and mean BUCC F1 at equal training time."""
    out = []
    for col, what in (("tatoeba trained", "Tatoeba accuracy on the trained languages"),
                      ("bucc mean", "mean BUCC F1")):
        out.append(Verdict(f"distillation beats the translation objective on {what} at equal CPU time",
                           rows["distill"][col] > rows["translate"][col],
                           versus(rows["distill"][col], rows["translate"][col]), source="xlsent"))
        out.append(Verdict(f"adding the translation term to distillation (both) beats distillation alone on {what} "
                           "at equal CPU time", rows["both"][col] > rows["distill"][col],
                           versus(rows["both"][col], rows["distill"][col]), source="xlsent"))
        if NO_TEACHER_RANKING in rows:
            out.append(Verdict(f"adding teacher ranking to distillation beats distillation without it on {what} at "
                               "equal CPU time", rows["distill"][col] > rows[NO_TEACHER_RANKING][col],
                               versus(rows["distill"][col], rows[NO_TEACHER_RANKING][col]), source="xlsent"))
        if NO_RANKING in rows:
            ranked = rows.get(NO_TEACHER_RANKING, rows["distill"])
            out.append(Verdict(f"adding the in-batch ranking term to distillation beats distillation (MSE) alone on "
                               f"{what} at equal CPU time", ranked[col] > rows[NO_RANKING][col],
                               versus(ranked[col], rows[NO_RANKING][col]), source="xlsent"))
    return out


def claims_depth(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Table 6's reading (deeper is better) on each column, for 3 vs 1 layers at equal training steps;
    inconclusive where a row is still learning (its dev F1 rose more than :data:`STILL_LEARNING` over its second
    half of steps)."""
    deep, shallow = rows["3 layers"], rows["1 layer"]
    learning = [f"{name} gained {rows[name][DEV_GAIN]:.1f} dev F1 points over its second half"
                for name in ("1 layer", "3 layers") if rows[name].get(DEV_GAIN, 0.0) > STILL_LEARNING]
    out = []
    for col, what in (("tatoeba trained", "Tatoeba accuracy on the trained languages"),
                      ("bucc mean", "mean BUCC F1"), ("xnli xx", "XNLI accuracy, mean of the 14 transfer languages"),
                      ("xnli en", "XNLI English accuracy")):
        paper = versus(PAPER_DEPTH["3 layers"][_PAPER_COL[col]], PAPER_DEPTH["1 layer"][_PAPER_COL[col]])
        evidence = versus(deep[col], shallow[col])
        out.append(Verdict(f"3 BiLSTM layers beat 1 on {what} at equal training steps (paper Table 6 at equal "
                           f"epochs: {paper})", None if learning else deep[col] > shallow[col],
                           f"{evidence}; inconclusive: {', '.join(learning)}" if learning else evidence))
    return out


def shipped_ntrex_error(encoder: Encoder, languages: Sequence[str], root: Path | str | None) -> float:
    """Mean retrieval error (%) of ``languages`` against English on NTREX lines 1000 on (the simulations' test
    lines; NTREX pairs are training data of the shipped languages, so this is a check that they are kept, not a
    held-out score)."""
    errors = []
    for lang in languages:
        xx, en = load_ntrex(ntrex_code(lang), "eng", root)
        a, b = (np.asarray(encoder.encode(s[POOL_LINES:], lang=x)) for s, x in ((xx, lang), (en, "en")))
        errors.append(100.0 - retrieval_criterion(a, b))
    return float(np.mean(errors))


def study_bitext(lab: Lab, run: StudyRun[Settings]) -> None:
    """The shipped configuration with and without a simulated user's bitext, for the same minutes."""
    settings = run.settings
    lang, n, _ = simulated_run(settings.bitext_run)
    code, root = lang.code, settings.data
    path = write_user_file(lang, n, settings.models_dir / "bitext-files", root, seed=lab.config().seed)
    shipped = [x for x in lab.config().languages if x != "en"]
    minutes = settings.study_minutes
    timed = {"minutes": minutes, "steps": TIMED_STEPS, "max_pairs": settings.bitext_max_pairs}

    def row(encoder: Encoder) -> dict[str, float]:
        return {NEW_ERROR: evaluation_error(encoder, lang, root), NEW_F1: evaluation_mining_f1(encoder, lang, root),
                SHIPPED_ERROR: shipped_ntrex_error(encoder, shipped, root)}

    run.rows["teacher (me5-small)"] = row(load_encoder(lab.config().teacher))
    shipped_model = LaserEncoder(settings.main_dir)
    run.rows["laser-small (shipped)"] = row(shipped_model)
    tag = f"{settings.bitext_max_pairs}pairs-{minutes:g}min"
    with_bitext, _ = lab.model(settings.models_dir / f"bitext-{code}-{n}-{tag}", **timed,
                               bitext=[BitextFile(code, str(path))])
    without, _ = lab.model(settings.models_dir / f"no-bitext-{tag}", **timed)
    run.rows[BITEXT_ROW] = {**row(with_bitext), "train minutes": minutes}
    run.rows[NO_BITEXT_ROW] = {**row(without), "train minutes": minutes}
    unknown = TrainingRecord.from_json(with_bitext.manifest["training"]).details["user_unknown_pieces_percent"]
    run.notes += [f"the new language: {code}, {lang.what} (xlsent.studies.new_language), {n} pairs given through "
                  "--bitext less a held-out tenth; its error and mining F1 on the 997 NTREX test lines never given",
                  f"{SHIPPED_ERROR}: the shipped languages {' '.join(shipped)} against English on the same NTREX "
                  "lines (training data of theirs: a check that they are kept, not a held-out score)",
                  f"the two students: {SMALL_CONFIG} with at most {settings.bitext_max_pairs} pairs per shipped pair "
                  f"(SCALED DOWN for CPU), stopped after {minutes:g} minutes (the shipped model: all pairs, "
                  f"{shipped_model.manifest['training']['train_seconds'] / 60:.0f} minutes), so compare them with "
                  "each other; the shipped row shows what the full schedule reaches",
                  f"pieces of the user's text the vocabulary does not know: {unknown}",
                  "mining f1: the test lines mined against all their English lines (ratio margin, k = 4) at the "
                  "threshold best on the gold pairs"]


def claims_bitext(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    """Whether the user's bitext teaches the new language (against the same minutes without it) and what the other
    languages pay."""
    mine, base = rows[BITEXT_ROW], rows[NO_BITEXT_ROW]
    return [Verdict("--bitext cuts the new language's error against the same configuration and minutes without it",
                    mine[NEW_ERROR] < base[NEW_ERROR], versus(mine[NEW_ERROR], base[NEW_ERROR]), source="xlsent"),
            Verdict("the model trained with --bitext mines the new language better than the model without it",
                    mine[NEW_F1] > base[NEW_F1], versus(mine[NEW_F1], base[NEW_F1]), source="xlsent"),
            Verdict("the shipped languages lose at most 1 point of NTREX error against the same minutes without "
                    "--bitext", mine[SHIPPED_ERROR] - base[SHIPPED_ERROR] <= 1.0,
                    versus(mine[SHIPPED_ERROR], base[SHIPPED_ERROR]), source="xlsent")]


STUDIES = {
    "main": Study(study_main, "LASER small (xlsent)", "tatoeba trained"),
    "objective": Study(study_objective, "distill", "tatoeba trained", claims=claims_objective),
    "depth": Study(study_depth, "1 layer", "tatoeba trained", claims=claims_depth),
    "bitext": Study(study_bitext, BITEXT_ROW, NEW_ERROR, claims=claims_bitext, dataset=BITEXT_DATASET),
}
"""Each study, the row it declares as its method and the column that scores it."""


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.modules[__name__]))
