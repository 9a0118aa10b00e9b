"""The learned pair scorer of ``xlsent filter``: the probability that a pair is a clean translation (``p_clean``),
from the features of :mod:`xlsent.mining.pair_features`, by a gradient-boosted tree model (LightGBM) trained on
synthetic noise made from clean bitext (:mod:`xlsent.mining.scorer_training`), as bicleaner-ai does.

A scorer is one JSON file: the model in LightGBM's own text format (never a pickle), the feature names, the encoder
whose vectors the features were measured with (a scorer is only used with that encoder's weights), its cut (a pair
is kept when ``p_clean >= cut``) and how it was trained. Shipped scorers live in ``scorers/`` beside this module,
one per encoder name; ``xlsent train filter --out DIR`` writes ``DIR/scorer.json``.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> x = rng.normal(size=(400, len(FEATURES)))
>>> y = (x[:, 1] > 0).astype(int)
>>> scorer = fit_scorer(x, y, {"objective": "binary", "verbosity": -1, "num_threads": 1}, 20, encoder="toy@0",
...                     about={})
>>> p = scorer.p_clean(np.array([[0.0] * len(FEATURES)] * 2) + np.eye(2, len(FEATURES), 1) * 3)
>>> bool(p[0] > 0.5), bool(p[1] < 0.9)
(True, True)
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.atomic import write_json
from xlsent.inference import fp32_id
from xlsent.mining.config import SearchConfig
from xlsent.mining.pair_features import FEATURES
from xlsent.version import __version__

log = logging.getLogger(__name__)

FORMAT = "xlsent-filter-scorer/1"
SCORER_SEARCH = SearchConfig()
"""The search every scorer's margin features are measured with, in training and in use: ratio margin, k=4, unified
sentences (the margin's scale and spread depend on all three)."""
SHIPPED = Path(__file__).with_name("scorers")
"""The scorers shipped with xlsent (package data): ``NAME.json`` for the encoder named NAME."""
SCORER_FILE = "scorer.json"


class Scorer:
    """A trained scorer: :meth:`p_clean` of feature rows, the keep ``cut`` and what it was trained on."""

    def __init__(self, record: dict[str, Any], source: str) -> None:
        import lightgbm

        if record.get("format") != FORMAT:
            raise ValueError(f"{source}: not an xlsent filter scorer (format {record.get('format')!r}, expected "
                             f"{FORMAT!r})")
        if list(record.get("features", [])) != list(FEATURES):
            raise ValueError(f"{source}: its features {record.get('features')} are not this xlsent's "
                             f"{list(FEATURES)}; train it again (xlsent train filter)")
        cut = record.get("cut")
        if not isinstance(cut, int | float) or not 0 <= cut <= 1:
            raise ValueError(f"{source}: cut must be a probability between 0 and 1, not {cut!r}")
        self.record, self.source = record, source
        self.encoder: str = str(record["encoder"])
        self.cut = float(cut)
        self._booster = lightgbm.Booster(model_str=str(record["model"]))

    def p_clean(self, features: np.ndarray) -> np.ndarray:
        """The probability that each pair (a row of ``features``, :data:`FEATURES` in order) is clean; NaN for a
        row that is all NaN (a pair a rule dropped)."""
        out = np.full(len(features), np.nan)
        rows = ~np.isnan(features).all(axis=1)
        if rows.any():
            out[rows] = self._booster.predict(features[rows], num_threads=1)
        return out

    def describe(self) -> str:
        """One line: the scorer, its cut and where it came from."""
        return f"learned scorer p_clean >= {self.cut:g} ({self.source})"

    def save(self, path: str | Path) -> Path:
        """Write the scorer to ``path`` (a ``.json`` file, or a folder that gets ``scorer.json``), atomically."""
        path = Path(path)
        target = path if path.suffix == ".json" else path / SCORER_FILE
        target.parent.mkdir(parents=True, exist_ok=True)
        write_json(target, self.record)
        return target

    def with_cut(self, cut: float, how: str) -> Scorer:
        """The same scorer with the keep cut ``cut``, chosen as ``how`` says."""
        return Scorer({**self.record, "cut": cut, "cut_source": how}, self.source)


def fit_scorer(features: np.ndarray, labels: np.ndarray, params: dict[str, Any], rounds: int, *, encoder: str,
               about: dict[str, Any], cut: float = 0.5) -> Scorer:
    """Train a scorer of ``rounds`` trees with the LightGBM ``params`` on ``features`` (rows of :data:`FEATURES`)
    with ``labels`` (1 clean, 0 noise) for vectors of ``encoder`` (an encoder id); ``about`` records what it was
    trained on."""
    import lightgbm

    data = lightgbm.Dataset(features, label=labels, feature_name=list(FEATURES), free_raw_data=True)
    booster = lightgbm.train(params, data, num_boost_round=rounds)
    record = {"format": FORMAT, "encoder": fp32_id(encoder), "features": list(FEATURES), "cut": cut,
              "cut_source": "default 0.5", "params": {**params, "rounds": rounds}, "trained_on": about,
              "model": booster.model_to_string(), "created": datetime.now(UTC).isoformat(timespec="seconds"),
              "xlsent_version": __version__}
    return Scorer(record, "trained in this run")


def load_scorer(path: str | Path) -> Scorer:
    """The scorer at ``path`` (its JSON file, or a folder holding ``scorer.json``); ValueError naming the file when
    it is missing or not a scorer."""
    path = Path(path)
    target = path / SCORER_FILE if path.is_dir() else path
    if not target.is_file():
        raise ValueError(f"{target}: no filter scorer there (train one with `xlsent train filter --out DIR`)")
    try:
        record = json.loads(target.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{target}: not a filter scorer ({exc})") from None
    if not isinstance(record, dict):
        raise ValueError(f"{target}: not a filter scorer (a JSON object is expected)")
    return Scorer(record, str(target))


def shipped_scorer(encoder_key: str, folder: Path | None = None) -> Scorer | None:
    """The scorer shipped for the encoder id ``encoder_key`` (same weights: its id without the backend suffix), or
    None."""
    name = encoder_key.partition("@")[0]
    path = (folder or SHIPPED) / f"{name}.json"
    if not path.is_file():
        return None
    scorer = load_scorer(path)
    if scorer.encoder != fp32_id(encoder_key):
        log.warning("the shipped filter scorer of %s was trained with %s, not %s: not used", name, scorer.encoder,
                    fp32_id(encoder_key))
        return None
    scorer.source = f"the scorer shipped with xlsent {__version__} for {name}"
    return scorer


def check_encoder(scorer: Scorer, encoder_key: str | None) -> None:
    """ValueError when ``scorer`` was trained on another encoder's vectors than ``encoder_key``'s."""
    if encoder_key is not None and scorer.encoder != fp32_id(encoder_key):
        raise ValueError(f"{scorer.source}: this scorer was trained with the vectors of {scorer.encoder}, but the run "
                         f"embeds with {encoder_key}; give the --model it was trained with, or train one for this "
                         "model (xlsent train filter --model MODEL)")


def check_search(scorer: Scorer, search: SearchConfig) -> None:
    """ValueError when ``search`` measures margins otherwise than :data:`SCORER_SEARCH`: the scorer's margin features
    would be off the scale it learned, and its ``p_clean`` silently wrong."""
    trained, given = _margin_options(SCORER_SEARCH), _margin_options(search)
    differ = [(option, given[i]) for i, option in enumerate(trained) if option != given[i]]
    if differ:
        raise ValueError(f"the learned scorer {scorer.source} was trained on margins measured with "
                         f"{' '.join(trained for trained, _ in differ)} (this run: "
                         f"{' '.join(given for _, given in differ)}); drop the option{'s' * (len(differ) > 1)}, or "
                         "pass --scorer none to filter by the margin cut")


def _margin_options(search: SearchConfig) -> list[str]:
    """The options that give ``search``'s margin, k and unification, as a command line names them."""
    return [f"--margin {search.margin}", f"-k {search.k}", "--unify" if search.unify else "--no-unify"]
