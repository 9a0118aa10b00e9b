"""What ``xlsent filter`` is asked to do: which filters run, their limits, and the score cut.

Every filter is on by default; the defaults were chosen on the noisy dev bitext of
:mod:`xlsent.data.noisy_bitext` only (``docs/filter.md`` has the measurements). A TOML file can set any field
(``xlsent filter --config filter.toml``), top level or under ``[filter]``; every value is checked against the
field's type (:mod:`xlsent.settings_file`: ``"false"`` is no boolean, ``1.5`` no whole number):

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "filter.toml"
>>> _ = path.write_text("[filter]\\nmax_ratio = 2.5\\nlangid = false\\n")
>>> cfg = FilterConfig.from_toml(path)
>>> cfg.max_ratio, cfg.langid, cfg.copies
(2.5, False, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsent.settings_file import read_settings

REASONS = ("empty", "nontext", "length", "copy", "language", "duplicate", "score", "scorer")
"""The filters in the order they are applied: a dropped pair's reason is the first that drops it."""


@dataclass(frozen=True)
class FilterConfig:
    """The filters and their limits.

    - ``nontext``: drop a pair with a side that is not a sentence (:func:`xlsent.mining.pair_rules.nontext`: under
      ``min_letter_share`` letters, over ``max_digit_share`` digits, mostly a URL, a menu).
    - ``length``: drop a pair with a side longer than ``max_length`` characters (a CJK character counting 3, see
      :func:`xlsent.mining.pair_rules.length`), or whose longer side is over ``max_ratio`` times the shorter
      while the longer has at least ``ratio_min_length`` characters (short lines vary too much to judge).
    - ``copies``: drop a pair whose sides are identical or nearly (:func:`xlsent.mining.pair_rules.similarity` at
      least ``max_similarity``): an untranslated copy.
    - ``langid``: drop a pair with a side whose expected language has a probability under ``langid_min_prob``
      (:mod:`xlsent.mining.langid`); the expected languages are ``--src-lang``/``--tgt-lang``, else each side's
      most frequent language.
    - ``duplicates``: drop a pair equal to an earlier pair of the file, exactly or once normalised
      (:func:`xlsent.mining.pair_rules.normalise`: case, punctuation, spacing).
    - ``score``: drop a pair the score filter rejects. With ``threshold = "auto"`` and a learned scorer
      (``scorer``: ``auto``, the one shipped for the encoder; or a scorer file or folder; ``none``: never), a pair
      whose ``p_clean`` (:mod:`xlsent.mining.filter_scorer`) is under ``min_p_clean`` (``auto``: the scorer's own
      cut) is dropped with reason ``scorer``; else (no scorer for the encoder, ``scorer = "none"`` or a number for
      ``threshold``) a pair whose margin score is under the cut (``auto``: the encoder's calibrated filter cut) is
      dropped with reason ``score``. ``keep`` (0 to 1) instead keeps that fraction of the pairs that pass the other
      filters, the best by ``p_clean`` (by score without a scorer).
    """

    nontext: bool = True
    min_letter_share: float = 0.5
    max_digit_share: float = 0.25
    length: bool = True
    max_length: int = 1000
    max_ratio: float = 3.0
    ratio_min_length: int = 15
    copies: bool = True
    max_similarity: float = 0.75
    langid: bool = True
    langid_min_prob: float = 0.05
    duplicates: bool = True
    score: bool = True
    threshold: float | str = "auto"
    keep: float | None = None
    scorer: str = "auto"
    min_p_clean: float | str = "auto"

    def problems(self) -> list[str]:
        """What is wrong with the settings, one message each (empty when they are fine)."""
        share = (("min_letter_share", self.min_letter_share), ("max_digit_share", self.max_digit_share),
                 ("max_similarity", self.max_similarity), ("langid_min_prob", self.langid_min_prob))
        checks = [(0 <= value <= 1, f"{name} must be between 0 and 1, not {value}") for name, value in share]
        checks += [(self.max_length >= 1, f"max_length must be at least 1, not {self.max_length}"),
                   (self.max_ratio >= 1, f"max_ratio must be at least 1, not {self.max_ratio}"),
                   (self.ratio_min_length >= 0, f"ratio_min_length must be 0 or more, not {self.ratio_min_length}"),
                   (self.threshold == "auto" or (isinstance(self.threshold, int | float) and
                                                 math.isfinite(self.threshold)),
                    f"threshold must be a finite number or 'auto', not {self.threshold!r}"),
                   (self.keep is None or 0 < self.keep <= 1, f"keep must be above 0 and at most 1, not {self.keep}"),
                   (self.min_p_clean == "auto" or (isinstance(self.min_p_clean, int | float) and
                                                   0 <= self.min_p_clean <= 1),
                    f"min_p_clean must be 'auto' or a probability between 0 and 1, not {self.min_p_clean!r}"),
                   (bool(self.scorer.strip()), "scorer must be 'auto', 'none' or the path of a scorer"),
                   (self.keep is None or self.threshold == "auto",
                    f"keep ({self.keep}) and threshold ({self.threshold!r}) both set the score cut: give one"),
                   (self.min_p_clean == "auto" or (self.scorer != "none" and self.threshold == "auto"),
                    f"min_p_clean ({self.min_p_clean}) is the learned scorer's cut, which "
                    + ("scorer = 'none' turns off" if self.scorer == "none" else
                       f"threshold ({self.threshold!r}) sets aside") + ": give one"),
                   (self.score or not self.cuts_given(),
                    f"score is off (--no-score), so no score cut applies: drop {', '.join(self.cuts_given())} or "
                    "turn score on")]
        return [message for ok, message in checks if not ok]

    def cuts_given(self) -> list[str]:
        """The settings of the score cut given a value (``keep``, ``threshold``, ``min_p_clean``), by name."""
        return [name for name, given in (("keep", self.keep is not None), ("threshold", self.threshold != "auto"),
                                         ("min_p_clean", self.min_p_clean != "auto")) if given]

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(problems))

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> FilterConfig:
        """The configuration in the TOML file ``path`` (its ``[filter]`` table, else its top level), then
        ``overrides``; ``ValueError`` naming the file for a key that is no field, a value of the wrong type
        (:func:`xlsent.settings_file.read_settings`) or out of range."""
        values = read_settings(cls, path, table="filter", what="filter setting")
        try:
            return cls(**{**values, **overrides})
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    def active(self) -> list[str]:
        """The filters that run, as :data:`REASONS` names them (``empty`` always runs).

        >>> FilterConfig(langid=False, score=False).active()
        ['empty', 'nontext', 'length', 'copy', 'duplicate']
        >>> FilterConfig(scorer="none").active()[-2:]
        ['duplicate', 'score']
        """
        on = {"empty": True, "nontext": self.nontext, "length": self.length, "copy": self.copies,
              "language": self.langid, "duplicate": self.duplicates, "score": self.score,
              "scorer": self.wants_scorer()}
        return [reason for reason in REASONS if on[reason]]

    def wants_scorer(self) -> bool:
        """Whether the score filter looks for a learned scorer (it runs with ``threshold = "auto"``, ``scorer`` not
        ``none``).

        >>> FilterConfig().wants_scorer(), FilterConfig(threshold=1.1).wants_scorer()
        (True, False)
        """
        return self.score and self.threshold == "auto" and self.scorer != "none"
