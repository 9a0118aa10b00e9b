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
from collections.abc import Mapping
from dataclasses import asdict, dataclass
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
        return [message for _, message in setting_problems(asdict(self))]

    def cuts_given(self) -> list[str]:
        """The settings of the score cut given a value (``keep``, ``threshold``, ``min_p_clean``), by name."""
        return cuts_given(asdict(self))

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(problems))

    @classmethod
    def from_toml(cls, path: str | Path | None, **overrides: Any) -> FilterConfig:
        """The configuration in the TOML file ``path`` (its ``[filter]`` table, else its top level; None: the
        defaults), then ``overrides`` (the command line's options); ``ValueError`` for a key that is no field, a
        value of the wrong type (:func:`xlsent.settings_file.read_settings`, naming the file) or out of range,
        naming where each value at fault came from: the file's key, or the option as typed (:func:`_given_as`)."""
        values = read_settings(cls, path, table="filter", what="filter setting") if path else {}
        merged = {**asdict(cls()), **values, **overrides}
        problems = [_sourced(message, [_given_as(name, merged[name], path, overrides, values) for name in names])
                    for names, message in setting_problems(merged)]
        if problems:
            raise ValueError("; ".join(problems))
        return cls(**merged)

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


def cuts_given(values: Mapping[str, Any]) -> list[str]:
    """The settings of the score cut that ``values`` (every field of :class:`FilterConfig`) give a value, by name."""
    return [name for name, given in (("keep", values["keep"] is not None), ("threshold", values["threshold"] != "auto"),
                                     ("min_p_clean", values["min_p_clean"] != "auto")) if given]


def setting_problems(values: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """What is wrong with ``values`` (every field of :class:`FilterConfig`): the settings at fault and the message,
    one pair each (empty when they are fine)."""
    share = ("min_letter_share", "max_digit_share", "max_similarity", "langid_min_prob")
    threshold, keep, min_p_clean, scorer = (values[k] for k in ("threshold", "keep", "min_p_clean", "scorer"))
    cuts = cuts_given(values)
    checks: list[tuple[tuple[str, ...], bool, str]] = [
        ((name,), 0 <= values[name] <= 1, f"{name} must be between 0 and 1, not {values[name]}") for name in share]
    checks += [
        (("max_length",), values["max_length"] >= 1, f"max_length must be at least 1, not {values['max_length']}"),
        (("max_ratio",), values["max_ratio"] >= 1, f"max_ratio must be at least 1, not {values['max_ratio']}"),
        (("ratio_min_length",), values["ratio_min_length"] >= 0,
         f"ratio_min_length must be 0 or more, not {values['ratio_min_length']}"),
        (("threshold",), threshold == "auto" or (isinstance(threshold, int | float) and math.isfinite(threshold)),
         f"threshold must be a finite number or 'auto', not {threshold!r}"),
        (("keep",), keep is None or 0 < keep <= 1, f"keep must be above 0 and at most 1, not {keep}"),
        (("min_p_clean",), min_p_clean == "auto" or (isinstance(min_p_clean, int | float) and 0 <= min_p_clean <= 1),
         f"min_p_clean must be 'auto' or a probability between 0 and 1, not {min_p_clean!r}"),
        (("scorer",), bool(scorer.strip()), "scorer must be 'auto', 'none' or the path of a scorer"),
        (("keep", "threshold"), keep is None or threshold == "auto",
         f"keep ({keep}) and threshold ({threshold!r}) both set the score cut: give one"),
        (("min_p_clean", "scorer" if scorer == "none" else "threshold"),
         min_p_clean == "auto" or (scorer != "none" and threshold == "auto"),
         f"min_p_clean ({min_p_clean}) is the learned scorer's cut, which "
         + ("scorer = 'none' turns off" if scorer == "none" else f"threshold ({threshold!r}) sets aside")
         + ": give one"),
        (("score", *cuts), values["score"] or not cuts,
         f"score is off, so no score cut applies: drop {', '.join(cuts)} or turn score on")]
    return [(names, message) for names, ok, message in checks if not ok]


def _given_as(name: str, value: Any, path: str | Path | None, options: Mapping[str, Any],
              read: Mapping[str, Any]) -> str:
    """Where the setting ``name`` holding ``value`` came from: the option as typed where ``options`` (the command
    line's) give it, else the key of the file ``path`` where its values ``read`` give it; else "" (the default).

    >>> _given_as("score", False, None, {"score": False}, {})
    '--no-score'
    >>> _given_as("min_p_clean", 2.0, None, {"min_p_clean": 2.0}, {})
    '--min-p-clean 2'
    >>> _given_as("score", False, "c.toml", {}, {"score": False}), _given_as("keep", None, "c.toml", {}, {})
    ('c.toml: score = false', '')
    """
    flag = "--" + name.replace("_", "-")
    if name in options and isinstance(value, bool):
        return flag if value else f"--no-{name}"
    if name in options:
        return f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}"
    if name in read:
        return f"{path}: {name} = " + (str(value).lower() if isinstance(value, bool) else repr(value))
    return ""


def _sourced(message: str, sources: list[str]) -> str:
    """``message`` after the ``sources`` of its values that the user gave (empty ones: defaults).

    >>> _sourced("bad", ["--keep 2", ""]), _sourced("bad", [""])
    ('--keep 2: bad', 'bad')
    """
    given = " and ".join(filter(None, sources))
    return f"{given}: {message}" if given else message
