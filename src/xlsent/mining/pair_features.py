"""What the learned filter scorer (:mod:`xlsent.mining.filter_scorer`) sees of a pair: the features a single
margin or cosine cut misses, one row per pair, in the order of :data:`FEATURES`.

- ``margin``, ``cosine``: the pair's score and cosine; ``rival_gap``: its cosine minus the best cosine of either
  side with another sentence of the file (a neighbour pair's own translation, when the file holds it, wins);
- ``rel_length``, ``abs_rel_length``: the log length ratio of the two sides against the file's median ratio (the
  language pair's typical ratio, measured on the input itself), and ``log_min_length``;
- ``half_cos_min``, ``half_cos_max``: the cosines with the other side of the two halves of the side that is longer
  than the typical ratio says (:func:`half_plan`): a partial translation leaves one half uncovered;
- ``src_lang_prob``, ``tgt_lang_prob`` and ``src_half_lang``, ``tgt_half_lang``: the language identifier's
  probability of each side's expected language, of the whole side and of its weaker half (a half-translated line
  is half in the other language);
- ``similarity`` (character bigrams, :func:`xlsent.mining.pair_rules.similarity`) and ``copied_share`` (the share of
  one side's words found verbatim in the other);
- ``numbers``, ``number_agreement``; ``name_agreement``; ``question_gap``, ``exclaim_gap``, ``final_punct_match``,
  ``bracket_gap``: numbers, capitalised words and punctuation the two sides share or not.

NaN marks a feature that does not apply (no halves for a short side, no number on either side, no neighbours);
the scorer's model takes NaN as missing.

>>> split_halves("one two three four five six")
('one two three', 'four five six')
>>> split_halves("短い")
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from xlsent.data.tsv_field import clean_cell
from xlsent.mining.langid import identify

FEATURES = ("margin", "cosine", "rival_gap", "rel_length", "abs_rel_length", "log_min_length", "half_cos_min",
            "half_cos_max", "src_lang_prob", "tgt_lang_prob", "src_half_lang", "tgt_half_lang", "similarity",
            "copied_share", "numbers", "number_agreement", "name_agreement", "question_gap", "exclaim_gap",
            "final_punct_match", "bracket_gap")
"""The scorer's features, in column order."""

HALF_MIN_WORDS = 5
"""The least words (characters: :data:`HALF_MIN_CHARS` where a line has no spaces between words) a side needs to be
cut in halves."""
HALF_MIN_CHARS = 10

_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
_WORD = re.compile(r"\w+")
_QUESTION = "?？؟;"
_EXCLAIM = "!！"
_BRACKETS = "()（）[]«»\"“”„「」『』"
_FINAL = {".": ".", "。": ".", "।": ".", "۔": ".", "!": "!", "！": "!", "?": "?", "？": "?", "؟": "?"}


def _spaced(text: str) -> bool:
    """Whether ``text`` separates its words by spaces (not Chinese, Japanese or Thai-like runs)."""
    tokens = text.split()
    return len(tokens) > 1 and sum(map(len, tokens)) / len(tokens) <= 12


def split_halves(text: str) -> tuple[str, str] | None:
    """``text`` cut in two at the middle word (character, for a line without spaces between words); None when it
    is too short to cut (:data:`HALF_MIN_WORDS`, :data:`HALF_MIN_CHARS`). Tabs and line breaks become spaces
    (:func:`xlsent.data.tsv_field.clean_cell`): each half is one line of a text file."""
    text = clean_cell(text).strip()
    if _spaced(text):
        words = text.split()
        if len(words) < HALF_MIN_WORDS:
            return None
        mid = len(words) // 2
        return " ".join(words[:mid]), " ".join(words[mid:])
    if len(text) < HALF_MIN_CHARS:
        return None
    mid = len(text) // 2
    return text[:mid], text[mid:]


def relative_lengths(src_length: np.ndarray, tgt_length: np.ndarray) -> np.ndarray:
    """Each pair's log length ratio (source over target) minus the median over the pairs: positive where the source
    is longer than the pairs' typical ratio says.

    >>> relative_lengths(np.array([20, 40, 10]), np.array([10, 20, 10])).round(3).tolist()
    [0.0, 0.0, -0.693]
    """
    ratio = np.log(np.maximum(src_length, 1) / np.maximum(tgt_length, 1))
    live = (src_length > 0) & (tgt_length > 0)
    return ratio - (float(np.median(ratio[live])) if live.any() else 0.0)


@dataclass(frozen=True)
class HalfPlan:
    """Which pairs have their relatively longer side cut in halves (``rows``), which side that is (``side``: 0
    source, 1 target) and the halves to embed (``texts``: the two halves of ``rows[i]`` at ``2i`` and ``2i + 1``)."""

    rows: np.ndarray
    side: np.ndarray
    texts: list[str]

    def texts_of(self, side: int) -> list[str]:
        """The halves cut from ``side`` (0: sources, 1: targets), in plan order: what is embedded in that side's
        language."""
        return [half for i, s in enumerate(self.side.tolist()) if s == side for half in self.texts[2 * i:2 * i + 2]]

    def assemble(self, src_halves: np.ndarray, tgt_halves: np.ndarray) -> np.ndarray:
        """The vectors of every half in plan order, from those of :meth:`texts_of` each side.

        >>> plan = HalfPlan(np.array([0, 1]), np.array([1, 0]), ["a", "b", "c", "d"])
        >>> plan.texts_of(0), plan.texts_of(1)
        (['c', 'd'], ['a', 'b'])
        >>> plan.assemble(np.array([[3.0], [4.0]]), np.array([[1.0], [2.0]])).ravel().tolist()
        [1.0, 2.0, 3.0, 4.0]
        """
        dim = src_halves.shape[1] if len(src_halves) else tgt_halves.shape[1]
        out = np.empty((len(self.texts), dim), np.float32)
        for side, vecs in ((0, src_halves), (1, tgt_halves)):
            rows = np.flatnonzero(self.side == side)
            out[np.stack([2 * rows, 2 * rows + 1], axis=1).ravel()] = vecs
        return out


def half_plan(src: Sequence[str], tgt: Sequence[str], rel_length: np.ndarray, live: np.ndarray) -> HalfPlan:
    """The halves to embed for the pairs marked ``live`` (those the rule filters pass): of the side that is longer
    than the typical ratio says (``rel_length`` > 0: the source), when it is long enough to cut."""
    rows: list[int] = []
    sides: list[int] = []
    texts: list[str] = []
    for i in np.flatnonzero(live).tolist():
        side = 0 if rel_length[i] > 0 else 1
        halves = split_halves((src[i], tgt[i])[side])
        if halves is not None:
            rows.append(i)
            sides.append(side)
            texts.extend(halves)
    return HalfPlan(np.array(rows, np.int64), np.array(sides, np.int64), texts)


def _numbers(text: str) -> set[str]:
    return {re.sub(r"\D", "", n) for n in _NUMBER.findall(text)}


def _names(text: str) -> set[str]:
    """Capitalised words after the first word (names, mostly), in scripts with case."""
    return {w for w in _WORD.findall(text)[1:] if w[:1].isupper() and len(w) > 1}


def _agreement(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else math.nan


def _copied_share(a: str, b: str) -> float:
    """The larger of the shares of either side's words (of 4 characters or more) found in the other."""
    wa, wb = ({w.lower() for w in _WORD.findall(t) if len(w) >= 4} for t in (a, b))
    shares = [len(x & y) / len(x) for x, y in ((wa, wb), (wb, wa)) if x]
    return max(shares) if shares else math.nan


def _final(text: str) -> str:
    end = text.rstrip(" \"'”“»)」』")
    return _FINAL.get(end[-1:], "") if end else ""


def text_features(src: str, tgt: str) -> list[float]:
    """The string features of one pair: ``copied_share`` to ``bracket_gap`` of :data:`FEATURES`.

    >>> text_features("Er kam 2019 nach Berlin.", "He came to Berlin in 2019.")[1:4]
    [2.0, 1.0, 1.0]
    """
    ns, nt = _numbers(src), _numbers(tgt)
    names = _names(src), _names(tgt)
    return [_copied_share(src, tgt), float(len(ns) + len(nt)), _agreement(ns, nt),
            _agreement(*names) if all(names) else math.nan,
            float(abs(sum(src.count(c) for c in _QUESTION) - sum(tgt.count(c) for c in _QUESTION))),
            float(abs(sum(src.count(c) for c in _EXCLAIM) - sum(tgt.count(c) for c in _EXCLAIM))),
            float(_final(src) == _final(tgt)),
            float(abs(sum(src.count(c) for c in _BRACKETS) - sum(tgt.count(c) for c in _BRACKETS)))]


def _half_lang(texts: Sequence[str], expected: str | None) -> np.ndarray:
    """The probability of ``expected`` of the weaker half of each text (NaN: too short to cut, or unchecked)."""
    out = np.full(len(texts), np.nan, np.float64)
    if expected is None:
        return out
    rows = [(i, h) for i, text in enumerate(texts) if (h := split_halves(text)) is not None]
    if rows:
        probs = identify([half for _, h in rows for half in h]).prob_of(expected).reshape(-1, 2).min(axis=1)
        out[[i for i, _ in rows]] = probs
    return out


@dataclass(frozen=True)
class PairSignals:
    """The measurements the features are made of, besides the texts: each pair's margin score, cosine and best
    rival cosine (:class:`xlsent.mining.job.PairScores`), the rule filters' lengths and language probabilities
    (:class:`xlsent.mining.filtering.PairValues`), the expected languages and the character-bigram similarity."""

    score: np.ndarray
    cosine: np.ndarray
    rival: np.ndarray
    src_length: np.ndarray
    tgt_length: np.ndarray
    src_prob: np.ndarray
    tgt_prob: np.ndarray
    similarity: np.ndarray
    langs: tuple[str | None, str | None]


def pair_features(src: Sequence[str], tgt: Sequence[str], signals: PairSignals, live: np.ndarray,
                  plan: HalfPlan, half_cos: np.ndarray) -> np.ndarray:
    """The feature matrix (``len(src)`` x ``len(FEATURES)``, float64) of the pairs; rows not ``live`` (dropped by a
    rule) are NaN. ``half_cos`` holds, for each pair of ``plan.rows``, the cosines of its two halves with the other
    side (``(len(plan.rows), 2)``)."""
    n = len(src)
    out = np.full((n, len(FEATURES)), np.nan, np.float64)
    rows = np.flatnonzero(live)
    rel = relative_lengths(signals.src_length, signals.tgt_length)
    col = {name: j for j, name in enumerate(FEATURES)}
    out[:, col["margin"]] = signals.score
    out[:, col["cosine"]] = signals.cosine
    out[:, col["rival_gap"]] = signals.cosine - signals.rival
    out[:, col["rel_length"]] = rel
    out[:, col["abs_rel_length"]] = np.abs(rel)
    out[:, col["log_min_length"]] = np.log1p(np.minimum(signals.src_length, signals.tgt_length))
    if len(plan.rows):
        out[plan.rows, col["half_cos_min"]] = half_cos.min(axis=1)
        out[plan.rows, col["half_cos_max"]] = half_cos.max(axis=1)
    out[:, col["src_lang_prob"]] = signals.src_prob
    out[:, col["tgt_lang_prob"]] = signals.tgt_prob
    out[rows, col["src_half_lang"]] = _half_lang([src[i] for i in rows.tolist()], signals.langs[0])
    out[rows, col["tgt_half_lang"]] = _half_lang([tgt[i] for i in rows.tolist()], signals.langs[1])
    out[:, col["similarity"]] = signals.similarity
    if len(rows):
        out[rows, col["copied_share"]:] = np.array([text_features(src[i], tgt[i]) for i in rows.tolist()])
    out[~live] = np.nan
    return out


def half_cosines(plan: HalfPlan, halves: np.ndarray, x: np.ndarray, y: np.ndarray, src_rows: np.ndarray,
                 tgt_rows: np.ndarray) -> np.ndarray:
    """The cosine of each half (``halves``: unit vectors of ``plan.texts``) with the other side of its pair:
    ``(len(plan.rows), 2)``. ``x`` and ``y`` are unit vectors of the sources and targets, pair i's at rows
    ``src_rows[i]`` and ``tgt_rows[i]``."""
    if not len(plan.rows):
        return np.zeros((0, 2))
    other = np.where(plan.side[:, None] == 0, y[tgt_rows[plan.rows]], x[src_rows[plan.rows]])
    pairs = halves.reshape(len(plan.rows), 2, -1)
    return np.einsum("ijd,id->ij", pairs.astype(np.float64), other.astype(np.float64))
