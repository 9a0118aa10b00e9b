"""``xlsent filter``'s decisions: the per-filter values of every pair, the score cut, and keep or drop with the
first reason (:data:`xlsent.mining.filter_config.REASONS`), plus the rows of the ``--scores`` file and the summary.

The same functions serve a file job (:func:`xlsent.mining.job.filter_files`) and text in memory (the dev-set
evaluation, :mod:`xlsent.evaluation.filter`), so both decide alike.

>>> import numpy as np
>>> src, tgt = ["Das Haus ist rot.", "www.example.de", "Das Haus ist rot."], ["The house is red.", "www.example.com",
...                                                                          "The house is red."]
>>> values = pair_values(src, tgt, ("de", "en"), FilterConfig(langid=False))
>>> d = decide(values, np.array([1.2, 1.3, 1.2]), FilterConfig(langid=False), threshold=1.05)
>>> d.keep.tolist(), d.reason
([True, False, False], ['', 'nontext', 'duplicate'])
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.data.empty_text import is_empty
from xlsent.mining.filter_config import REASONS, FilterConfig
from xlsent.mining.langid import identifier_code, identify
from xlsent.mining.pair_rules import length, length_ratio, nontext, normalise, similarity
from xlsent.mining.stages import clean_cell

log = logging.getLogger(__name__)

SCORE_COLUMNS = ("keep", "score", "p_clean", "reason", "cosine", "src_lang", "src_lang_prob", "tgt_lang",
                 "tgt_lang_prob", "src_length", "tgt_length", "length_ratio", "similarity", "src_nontext",
                 "tgt_nontext", "duplicate_of", "src", "tgt")
"""The columns of the ``--scores`` file, after its header line."""


@dataclass(frozen=True)
class PairValues:
    """The value every rule filter measures on each pair (row i: pair i).

    ``langs`` are the expected languages (identifier codes; None: that side is not checked), ``*_top`` each line's
    most likely language and ``*_prob`` the probability of the expected one (1 where unchecked); ``duplicate_of`` is
    the row of the first pair with the same normalised sides (-1 for a first occurrence)."""

    langs: tuple[str | None, str | None]
    blank: np.ndarray
    src_top: list[str]
    tgt_top: list[str]
    src_prob: np.ndarray
    tgt_prob: np.ndarray
    src_length: np.ndarray
    tgt_length: np.ndarray
    ratio: np.ndarray
    similarity: np.ndarray
    src_nontext: list[str]
    tgt_nontext: list[str]
    duplicate_of: np.ndarray


def expected_language(given: str | None, top: list[str], side: str) -> str | None:
    """The language a side's lines should be in, as the identifier names it: ``given`` (None when the identifier
    does not know it, with a warning), else the most frequent language of ``top`` (logged).

    >>> expected_language("deu", [], "SRC"), expected_language(None, ["en", "en", "fr"], "TGT")
    ('de', 'en')
    """
    if given is not None:
        code = identifier_code(given)
        if code is None:
            log.warning("language ID does not know %s's language %r: that side is not checked", side, given)
        return code
    counts = Counter(lang for lang in top if lang != "und")
    if not counts:
        return None
    code, count = counts.most_common(1)[0]
    log.warning("%s: no language given; language ID checks it against its most frequent language, %s (%d of %d "
                "lines); give --%s-lang to say", side, code, count, len(top), side.lower())
    return code


def _duplicates(src: list[str], tgt: list[str]) -> np.ndarray:
    """For each pair, the row of the first pair with the same normalised sides (-1 for a first occurrence)."""
    first: dict[tuple[str, str], int] = {}
    out = np.full(len(src), -1, np.int64)
    for row, key in enumerate(zip(map(normalise, src), map(normalise, tgt), strict=True)):
        out[row] = first.setdefault(key, row)
    out[out == np.arange(len(src))] = -1
    return out


def pair_values(src: list[str], tgt: list[str], langs: tuple[str | None, str | None], cfg: FilterConfig
                ) -> PairValues:
    """Measure every pair for the rule filters of ``cfg`` (language ID only when ``cfg.langid``); ``langs`` are the
    languages given for the two sides (None: each side's most frequent)."""
    n = len(src)
    blank = np.array([is_empty(s) or is_empty(t) for s, t in zip(src, tgt, strict=True)], dtype=bool)
    if cfg.langid:
        guesses = identify(src), identify(tgt)
        expected = tuple(expected_language(given, guess.top, side)
                         for given, guess, side in zip(langs, guesses, ("SRC", "TGT"), strict=True))
        tops = (guesses[0].top, guesses[1].top)
        probs = tuple(guess.prob_of(code) if code else np.ones(n, np.float32)
                      for guess, code in zip(guesses, expected, strict=True))
    else:
        expected, tops, probs = (None, None), ([""] * n, [""] * n), (np.ones(n, np.float32), np.ones(n, np.float32))
    lengths = np.array([length(s) for s in src], np.int64), np.array([length(t) for t in tgt], np.int64)
    nontexts = tuple([nontext(line, min_letter_share=cfg.min_letter_share, max_digit_share=cfg.max_digit_share)
                      for line in side] for side in (src, tgt))
    return PairValues(
        langs=(expected[0], expected[1]), blank=blank, src_top=tops[0], tgt_top=tops[1], src_prob=probs[0],
        tgt_prob=probs[1], src_length=lengths[0], tgt_length=lengths[1],
        ratio=np.array([length_ratio(a, b) for a, b in zip(*lengths, strict=True)]),
        similarity=np.array([similarity(s, t) for s, t in zip(src, tgt, strict=True)]),
        src_nontext=nontexts[0], tgt_nontext=nontexts[1], duplicate_of=_duplicates(src, tgt))


@dataclass(frozen=True)
class Decisions:
    """Keep or drop for each pair, the reason of each dropped one (empty for a kept pair), the score cut used
    (None without the score filter) and how it was chosen."""

    keep: np.ndarray
    reason: list[str]
    threshold: float | None
    threshold_source: str

    def counts(self) -> dict[str, int]:
        """Pairs dropped per reason, in filter order (reasons that dropped none left out), and ``kept``."""
        dropped = Counter(self.reason)
        return {**{r: dropped[r] for r in REASONS if dropped[r]}, "kept": int(self.keep.sum())}


def rule_failures(values: PairValues, cfg: FilterConfig) -> dict[str, np.ndarray]:
    """For each rule filter of ``cfg`` that runs, which pairs it drops (score and duplicates aside)."""
    checks = {
        "empty": values.blank,
        "nontext": np.array([bool(a or b) for a, b in zip(values.src_nontext, values.tgt_nontext, strict=True)],
                            dtype=bool),
        "length": ((np.maximum(values.src_length, values.tgt_length) > cfg.max_length)
                   | ((values.ratio > cfg.max_ratio)
                      & (np.maximum(values.src_length, values.tgt_length) >= cfg.ratio_min_length))),
        "copy": values.similarity >= cfg.max_similarity,
        "language": (values.src_prob < cfg.langid_min_prob) | (values.tgt_prob < cfg.langid_min_prob),
    }
    return {reason: checks[reason] for reason in cfg.active() if reason in checks}


def rules_pass(values: PairValues, cfg: FilterConfig) -> np.ndarray:
    """The pairs that every rule filter of ``cfg`` and the duplicate check pass: those the score filter judges."""
    failed = np.zeros(len(values.blank), dtype=bool)
    for rule in rule_failures(values, cfg).values():
        failed |= rule
    if cfg.duplicates:
        failed |= values.duplicate_of >= 0
    return ~failed


def decide(values: PairValues, scores: np.ndarray, cfg: FilterConfig, *, threshold: float | None,
           threshold_source: str = "given", p_clean: np.ndarray | None = None) -> Decisions:
    """Keep or drop every pair: the rule filters in the order of :data:`~xlsent.mining.filter_config.REASONS`,
    then duplicates of an earlier pair, then the score filter. With ``p_clean`` (a learned scorer's probabilities)
    it drops a pair under ``threshold`` (the scorer's cut) with reason ``scorer``; without, a pair whose score is
    under ``threshold`` with reason ``score``; with ``cfg.keep``, the cut is the one that keeps that fraction of the
    pairs the rules pass."""
    reason = np.full(len(scores), "", dtype=object)
    for name, failed in rule_failures(values, cfg).items():
        reason[(reason == "") & failed] = name
    if cfg.duplicates:
        reason[(reason == "") & (values.duplicate_of >= 0)] = "duplicate"
    if cfg.score:
        passed = reason == ""
        judged = scores if p_clean is None else p_clean
        if cfg.keep is not None:
            ranked = np.sort(judged[passed])[::-1]
            threshold = float(ranked[max(round(cfg.keep * len(ranked)), 1) - 1]) if len(ranked) else None
            threshold_source = f"--keep {cfg.keep:g} of the {len(ranked)} pairs the other filters pass"
        if threshold is not None:
            reason[passed & ~(judged >= threshold)] = "score" if p_clean is None else "scorer"
    else:
        threshold, threshold_source = None, "no score filter"
    return Decisions(reason == "", reason.tolist(), threshold, threshold_source)


def _num(value: float, digits: int = 4) -> str:
    return "" if not np.isfinite(value) else f"{value:.{digits}f}"


def score_rows(src: list[str], tgt: list[str], scores: np.ndarray, cosines: np.ndarray, values: PairValues,
               decisions: Decisions, first_line: int = 1, p_clean: np.ndarray | None = None) -> Iterator[str]:
    """The lines of the ``--scores`` file: a header (:data:`SCORE_COLUMNS`), then one line per pair in input order;
    ``duplicate_of`` is the input line number of the earlier pair (``first_line``: that of row 0); ``p_clean`` is
    empty without a learned scorer and for the pairs a rule dropped."""
    yield "\t".join(SCORE_COLUMNS) + "\n"
    probs = np.full(len(src), np.nan) if p_clean is None else p_clean
    for i, (s, t) in enumerate(zip(src, tgt, strict=True)):
        dup = int(values.duplicate_of[i])
        cells = [str(int(decisions.keep[i])), _num(scores[i], 6), _num(probs[i], 4), decisions.reason[i],
                 _num(cosines[i], 6),
                 values.src_top[i], _num(values.src_prob[i]), values.tgt_top[i], _num(values.tgt_prob[i]),
                 str(values.src_length[i]), str(values.tgt_length[i]), _num(values.ratio[i], 3),
                 _num(values.similarity[i], 3), values.src_nontext[i], values.tgt_nontext[i],
                 str(dup + first_line) if dup >= 0 else "", clean_cell(s), clean_cell(t)]
        yield "\t".join(cells) + "\n"


def kept_rows(src: list[str], tgt: list[str], decisions: Decisions) -> Iterator[str]:
    """The lines of the kept-pairs file: ``src TAB tgt`` for each kept pair, in input order."""
    for keep, s, t in zip(decisions.keep.tolist(), src, tgt, strict=True):
        if keep:
            yield f"{clean_cell(s)}\t{clean_cell(t)}\n"


@dataclass
class FilterSummary:
    """What a filter run did: pairs read, the counts of :meth:`Decisions.counts`, the cut, the languages checked,
    what the scores are, the files written, time taken."""

    output: Path
    pairs: int
    counts: dict[str, int]
    threshold: float | None
    threshold_source: str
    langs: tuple[str | None, str | None]
    measure: str
    scores: Path | None = None
    histogram: Path | None = None
    seconds: float = 0.0

    def describe(self) -> str:
        """The run's closing lines: pairs kept and dropped per reason, the cut, the languages, the files.

        >>> print(FilterSummary(Path("k.tsv"), 10, {"language": 2, "score": 1, "kept": 7}, 1.05, "given",
        ...                     ("de", "en"), "ratio margin (k=4)").describe())
        wrote k.tsv: kept 7 of 10 pairs (70.0%) in 0.0s
          dropped: language 2, score 1
          score cut: 1.05 (given; ratio margin (k=4)); languages checked: de, en
        """
        kept = self.counts.get("kept", 0)
        share = f" ({100 * kept / self.pairs:.1f}%)" if self.pairs else ""
        dropped = ", ".join(f"{reason} {n}" for reason, n in self.counts.items() if reason != "kept") or "none"
        cut = f"{self.threshold:.6g} ({self.threshold_source}; {self.measure})" if self.threshold is not None else (
            f"none ({self.threshold_source})")
        langs = ", ".join(code or "unchecked" for code in self.langs)
        lines = [f"wrote {self.output}: kept {kept} of {self.pairs} pairs{share} in {self.seconds:.1f}s",
                 f"  dropped: {dropped}", f"  score cut: {cut}; languages checked: {langs}"]
        lines += [f"  every pair with its values: {self.scores}"] if self.scores else []
        lines += [f"  score histogram: {self.histogram}"] if self.histogram else []
        return "\n".join(lines)


def save_histogram(path: Path, scores: np.ndarray, decisions: Decisions) -> None:
    """A PNG histogram of the scores at ``path``: kept pairs and pairs dropped by each reason stacked, the cut
    marked."""
    from matplotlib.figure import Figure

    from xlsent.atomic import atomic_path

    finite = np.isfinite(scores)
    reason = np.array(decisions.reason, dtype=object)
    groups = {"kept": decisions.keep & finite, **{r: (reason == r) & finite for r in REASONS if r != "empty"}}
    shown = {name: scores[rows] for name, rows in groups.items() if rows.any()}
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    if shown:
        ax.hist(list(shown.values()), bins=60, stacked=True, label=list(shown))
        ax.legend(fontsize=8)
    if decisions.threshold is not None:
        ax.axvline(decisions.threshold, color="k", linestyle="--", linewidth=1)
    ax.set_xlabel("margin score")
    ax.set_ylabel("pairs")
    ax.set_title(f"xlsent filter: {int(decisions.keep.sum())} of {len(scores)} pairs kept")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100, bbox_inches="tight")
