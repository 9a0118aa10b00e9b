"""Training the learned filter scorer (:mod:`xlsent.mining.filter_scorer`) of an encoder: labelled noisy bitexts
made from clean ones (:mod:`xlsent.data.noisy_bitext`: misaligned, neighbour, wrong-language, untranslated,
half-translated, partial, boilerplate and duplicate pairs), measured as ``xlsent filter`` measures them, the pairs
that the rule filters pass used to fit the model, and the keep cut chosen on the *tune* split of the dev pairs
(:data:`xlsent.data.noisy_bitext.DEV_PAIRS`), none of whose languages but English is among the training pairs.

The default training pairs (:data:`TRAIN_PAIRS`) are 23 X-English pairs in 13 scripts and 4 pairs without English,
from NTREX-128 and the Tatoeba-Challenge test pairs; a user's own bitext (``xlsent train filter --bitext L=FILE``)
is made noisy the same way and joins them (or replaces them, ``bitext_only``).

>>> ScorerTraining().lightgbm()["num_leaves"], len(TRAIN_PAIRS)
(15, 27)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.data.noisy_bitext import DEV_PAIRS, NoisyBitext, build_noisy_bitext, noisy_from_rows
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import cached_encode, encoder_id
from xlsent.mining.filter_config import FilterConfig
from xlsent.mining.filter_scorer import SCORER_SEARCH, Scorer, fit_scorer
from xlsent.mining.job import MeasuredPairs, measure_texts
from xlsent.training.config import SEED_LIMIT

log = logging.getLogger(__name__)

TRAIN_PAIRS = ("es-en", "it-en", "nl-en", "pl-en", "cs-en", "tr-en", "fi-en", "hu-en", "id-en", "vi-en", "sw-en",
               "uk-en", "bg-en", "el-en", "he-en", "fa-en", "ur-en", "bn-en", "ta-en", "th-en", "ja-en", "ko-en",
               "ka-en", "es-it", "uk-pl", "ja-ko", "fa-tr")
"""The pairs the shipped scorers are trained on: no language of :data:`~xlsent.data.noisy_bitext.DEV_PAIRS` but
English, so every dev pair measures languages the scorer never saw."""
CUT_GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))
"""The keep cuts the dev tune split chooses among."""


@dataclass(frozen=True)
class ScorerTraining:
    """How a scorer is trained: the noisy bitexts (``pairs`` of NTREX-128 languages, ``clean`` clean pairs and
    ``per_kind`` pairs of each noise kind each, both splits), the tree model (LightGBM: ``trees`` rounds of
    ``leaves`` leaves, ``learning_rate``, ``min_leaf`` pairs a leaf, ``feature_fraction``, ``seed``) and the dev
    pairs whose tune split chooses the cut (``dev_pairs``; none: the cut stays 0.5)."""

    pairs: tuple[str, ...] = TRAIN_PAIRS
    clean: int = 200
    per_kind: int = 25
    trees: int = 300
    leaves: int = 15
    learning_rate: float = 0.05
    min_leaf: int = 20
    feature_fraction: float = 0.8
    seed: int = 0
    dev_pairs: tuple[str, ...] = DEV_PAIRS

    def __post_init__(self) -> None:
        checks = [(self.clean >= 20, f"clean must be at least 20, not {self.clean}"),
                  (self.per_kind >= 1, f"per_kind must be at least 1, not {self.per_kind}"),
                  (self.trees >= 1, f"trees must be at least 1, not {self.trees}"),
                  (self.leaves >= 2, f"leaves must be at least 2, not {self.leaves}"),
                  (self.min_leaf >= 1, f"min_leaf must be at least 1, not {self.min_leaf}"),
                  (0 < self.learning_rate <= 1, f"learning_rate must be above 0 and at most 1, not "
                                                f"{self.learning_rate}"),
                  (0 < self.feature_fraction <= 1, f"feature_fraction must be above 0 and at most 1, not "
                                                   f"{self.feature_fraction}"),
                  (0 <= self.seed < SEED_LIMIT, f"seed must be a whole number >= 0 and < 2**32 (--seed, or the key "
                                                 f"seed), not {self.seed}"),
                  (all(p.count("-") == 1 for p in (*self.pairs, *self.dev_pairs)),
                   "pairs and dev_pairs are language pairs such as de-en")]
        problems = [message for ok, message in checks if not ok]
        if problems:
            raise ValueError("invalid scorer training: " + "; ".join(problems))

    def lightgbm(self) -> dict[str, Any]:
        """The LightGBM parameters: binary log-loss, deterministic, one thread, quiet."""
        return {"objective": "binary", "num_leaves": self.leaves, "learning_rate": self.learning_rate,
                "min_data_in_leaf": self.min_leaf, "feature_fraction": self.feature_fraction, "seed": self.seed,
                "deterministic": True, "force_row_wise": True, "num_threads": 1, "verbosity": -1}


def scorer_defaults_text() -> str:
    """The scorer's training settings with their defaults, as TOML (``xlsent train filter --help``).

    >>> print(scorer_defaults_text().splitlines()[-2])
    seed = 0
    """
    doc = " ".join((ScorerTraining.__doc__ or "").split())
    lines = [f"# {doc}", "# in a --config file at the top level or under [scorer]; or --set key=value"]
    for key, value in asdict(ScorerTraining()).items():
        lines.append(f"{key} = " + json.dumps(list(value) if isinstance(value, tuple) else value))
    return "\n".join(lines) + "\n"


Embed = Callable[[list[str], str | None], np.ndarray]


def scorer_config(files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> ScorerTraining:
    """:class:`ScorerTraining` from TOML ``files`` (a ``[scorer]`` table, else the top level; later files win),
    then ``key=value`` ``sets``; every value checked against its field's type, an unknown key an error naming it.

    >>> scorer_config(sets=["trees=50", "pairs=es-en,it-en"]).pairs
    ('es-en', 'it-en')
    """
    from xlsent.settings_file import field_types, read_settings
    from xlsent.training.config import ConfigError, parse_assignment

    values: dict[str, Any] = {}
    for path in files:
        values.update(read_settings(ScorerTraining, path, table="scorer", what="scorer setting"))
    kinds = field_types(ScorerTraining)
    for item in sets:
        key, sep, raw = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in kinds:
            raise ConfigError(f"--set {item!r}: expected key=value with a key of {', '.join(sorted(kinds))}")
        values[key] = parse_assignment(raw, kinds[key], key)
    return ScorerTraining(**values)


def encoder_embed(encoder: Encoder, progress: bool = False) -> Embed:
    """``embed(texts, lang)`` by ``encoder``, through the on-disk encoding cache."""
    return lambda texts, lang: cached_encode(encoder, texts, lang, progress=progress)


def measure(bitext: NoisyBitext, embed: Embed, rules: FilterConfig | None = None) -> MeasuredPairs:
    """The pairs of ``bitext`` as ``xlsent filter`` measures them with the scorers' search (:data:`SCORER_SEARCH`) and
    ``rules``."""
    src_lang, tgt_lang = bitext.pair.split("-")
    return measure_texts(bitext.src, bitext.tgt, (src_lang, tgt_lang), embed, rules or FilterConfig(),
                         SCORER_SEARCH)


def training_bitexts(cfg: ScorerTraining, root: str | Path | None = None,
                     user: Sequence[tuple[str, list[str], list[str]]] = (), bitext_only: bool = False
                     ) -> list[NoisyBitext]:
    """The noisy bitexts a scorer trains on: both splits of each of ``cfg.pairs`` (unless ``bitext_only``) and of
    each ``user`` bitext (``(pair, src, tgt)``: clean pairs in file order)."""
    out = [] if bitext_only else [build_noisy_bitext(pair, root, split=split, clean=cfg.clean,
                                                     per_kind=cfg.per_kind, seed=cfg.seed)
                                  for pair in cfg.pairs for split in ("tune", "test")]
    for pair, src, tgt in user:
        out += [noisy_from_rows(pair, (src, tgt), ([], []), {}, split=split, clean=cfg.clean, per_kind=cfg.per_kind,
                                seed=cfg.seed) for split in ("tune", "test")]
    return out


def training_rows(bitexts: Sequence[NoisyBitext], embed: Embed) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The features and labels (1 clean) of the pairs of ``bitexts`` that the rule filters pass, and how many of
    each kind there are."""
    xs, ys, kinds = [], [], []
    for bitext in bitexts:
        m = measure(bitext, embed)
        kind = np.array(bitext.kind)[m.live]
        xs.append(m.features[m.live])
        ys.append((kind == "clean").astype(np.int64))
        kinds += kind.tolist()
    return np.concatenate(xs), np.concatenate(ys), {k: kinds.count(k) for k in sorted(set(kinds))}


def keep_f1(keep: np.ndarray, clean: np.ndarray) -> float:
    """F1 of keeping the clean pairs.

    >>> keep_f1(np.array([True, True, False]), np.array([True, False, False]))
    0.6666666666666666
    """
    hits = int((keep & clean).sum())
    return 2 * hits / (int(keep.sum()) + int(clean.sum())) if hits else 0.0


def choose_cut(scorer: Scorer, dev: dict[str, tuple[NoisyBitext, MeasuredPairs]]) -> tuple[float, dict[str, Any]]:
    """The cut of :data:`CUT_GRID` with the best mean keep-F1 over the ``dev`` bitexts (every pair counted: those
    a rule drops are dropped), and a leave-one-out check: for each dev pair, the cut the others choose and its F1."""
    f1 = {pair: [keep_f1(np.nan_to_num(scorer.p_clean(m.features)) >= cut, np.array(b.kind) == "clean")
                 for cut in CUT_GRID] for pair, (b, m) in dev.items()}
    table = np.array(list(f1.values()))
    best = int(table.mean(axis=0).argmax())
    left_out = {}
    for i, pair in enumerate(f1):
        others = np.delete(table, i, axis=0).mean(axis=0).argmax() if len(f1) > 1 else best
        left_out[pair] = {"cut": CUT_GRID[int(others)], "f1": float(table[i, int(others)]),
                          "f1_at_chosen": float(table[i, best])}
    return CUT_GRID[best], {"mean_f1": float(table[:, best].mean()), "leave_one_out": left_out}


def train_scorer(encoder: Encoder, cfg: ScorerTraining | None = None, *, root: str | Path | None = None,
                 user: Sequence[tuple[str, list[str], list[str]]] = (), bitext_only: bool = False,
                 progress: bool = False) -> Scorer:
    """A scorer for ``encoder``'s vectors, trained as :class:`ScorerTraining` says, its cut chosen on the tune split
    of the dev pairs (:func:`choose_cut`)."""
    cfg = cfg or ScorerTraining()
    embed = encoder_embed(encoder, progress)
    bitexts = training_bitexts(cfg, root, user, bitext_only)
    features, labels, kinds = training_rows(bitexts, embed)
    log.info("training the filter scorer on %d pairs the rules pass (%s)", len(labels), kinds)
    about = {"pairs": [b.pair for b in bitexts[::2]], "rows": int(len(labels)), "kinds": kinds,
             "config": asdict(replace(cfg, pairs=tuple(cfg.pairs), dev_pairs=tuple(cfg.dev_pairs)))}
    scorer = fit_scorer(features, labels, cfg.lightgbm(), cfg.trees, encoder=encoder_id(encoder), about=about)
    if not cfg.dev_pairs:
        return scorer
    dev = {pair: (b, measure(b, embed)) for pair in cfg.dev_pairs
           for b in [build_noisy_bitext(pair, root, split="tune")]}
    cut, check = choose_cut(scorer, dev)
    scorer = scorer.with_cut(cut, f"the best mean keep-F1 over the tune split of the dev pairs {' '.join(dev)}")
    scorer.record["cut_check"] = check
    return scorer
