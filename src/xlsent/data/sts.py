"""Semantic textual similarity sets: SemEval-2017 STS, STS-B (English) and its machine translations.

Every reader returns :class:`StsPairs`: ``sent1[i]`` (in ``lang1``) and ``sent2[i]`` (in ``lang2``) with the
gold similarity ``scores[i]`` on the 0-5 scale.
"""

from __future__ import annotations

import csv
import io
import logging
from dataclasses import dataclass
from pathlib import Path

from xlsent.data._files import (
    check_choice,
    check_same_length,
    dataset_path,
    parse_float,
    read_lines,
    split_fields,
)

logger = logging.getLogger(__name__)

STS17_TRACKS: dict[str, tuple[str, str]] = {
    "1": ("ar", "ar"), "2": ("ar", "en"), "3": ("es", "es"), "4a": ("es", "en"), "4b": ("es", "en"),
    "5": ("en", "en"), "6": ("tr", "en"),
}
"""SemEval-2017 track -> (lang1, lang2)."""

# Tracks whose input file has the English sentence in the first column despite the file name (xx-en).
_ENGLISH_FIRST = frozenset({"2", "4b", "6"})

STSB_LANGS: tuple[str, ...] = ("de", "en", "es", "fr", "it", "ja", "nl", "pl", "pt", "ru", "zh")
"""Languages of ``stsb_multi_mt`` (English original and DeepL translations, row-aligned)."""

STSB_SPLITS: tuple[str, ...] = ("train", "dev", "test")


@dataclass(frozen=True)
class StsPairs:
    """Sentence pairs with gold similarity scores (0-5)."""

    name: str
    lang1: str
    lang2: str
    sent1: list[str]
    sent2: list[str]
    scores: list[float]


def parse_gold_score(value: str, path: Path, line_no: int, where: str = "") -> float:
    """``value`` as a gold similarity score; ``ValueError`` naming the file and line unless it is a finite number
    from 0 to 5 (``nan``, ``inf`` and scores off the scale would give a wrong or NaN correlation)."""
    expected = f"a finite similarity score from 0 to 5{where}"
    score = parse_float(value, path, line_no, expected)
    if not 0 <= score <= 5:  # also false for NaN
        raise ValueError(f"{path}:{line_no}: gold score {value!r} is out of range; expected {expected}")
    return score


def check_gold_varies(scores: list[float], path: Path) -> None:
    """``ValueError`` naming ``path`` unless its gold ``scores`` hold at least two different values (Spearman's
    correlation with one value is undefined)."""
    if len(set(scores)) < 2:
        held = f"all {len(scores)} gold scores are {scores[0]:g}" if scores else "no gold score"
        raise ValueError(f"{path}: {held}; a correlation needs at least two different gold scores: restore the file "
                         "from the release")


def load_sts17(track: str, root: str | Path | None = None) -> StsPairs:
    """SemEval-2017 Task 1 test pairs of ``track`` (see :data:`STS17_TRACKS`), named like ``sts17-4a-es-en``.

    ``sent1`` is always in ``lang1``: the columns of tracks 2, 4b and 6, whose files put English first, are
    swapped. Track 6 keeps the first 250 of its 500 input lines, the ones the 250 gold scores belong to (as MTEB
    and SBERT do). Track 4b's gold holds only the integers 2-5.
    """
    check_choice(track, STS17_TRACKS, "STS17 track")
    lang1, lang2 = STS17_TRACKS[track]
    input_path = dataset_path(root, "sts2017", "STS2017.eval.v1.1", f"STS.input.track{track}.{lang1}-{lang2}.txt")
    gold_path = dataset_path(root, "sts2017", "STS2017.gs", f"STS.gs.track{track}.{lang1}-{lang2}.txt")
    scores = [parse_gold_score(line, gold_path, n) for n, line in enumerate(read_lines(gold_path), 1)]
    rows = [split_fields(line, input_path, n, 2) for n, line in enumerate(read_lines(input_path), 1)]
    if track == "6" and len(rows) > len(scores):
        logger.info("%s: keeping the first %d of %d lines (one per gold score)", input_path, len(scores), len(rows))
        rows = rows[: len(scores)]
    check_same_length(input_path, rows, gold_path, scores)
    check_gold_varies(scores, gold_path)
    first, second = (1, 0) if track in _ENGLISH_FIRST else (0, 1)
    return StsPairs(
        name=f"sts17-{track}-{lang1}-{lang2}", lang1=lang1, lang2=lang2,
        sent1=[r[first] for r in rows], sent2=[r[second] for r in rows], scores=scores,
    )


def load_stsb_multi_mt(lang: str, split: str = "test", root: str | Path | None = None) -> StsPairs:
    """STS-B ``split`` in ``lang`` from ``stsb_multi_mt`` (rows in the same order in every language)."""
    check_choice(lang, STSB_LANGS, "stsb_multi_mt language")
    check_choice(split, STSB_SPLITS, "STS-B split")
    path = _stsb_path(lang, split, root)
    text = "\n".join(read_lines(path))
    reader = csv.reader(io.StringIO(text, newline=""), dialect="excel")
    sent1, sent2, scores = [], [], []
    for row in reader:
        if len(row) != 3:
            raise ValueError(f"{path}:{reader.line_num}: {len(row)} CSV field(s), expected 3 (s1, s2, score)")
        sent1.append(row[0])
        sent2.append(row[1])
        scores.append(parse_gold_score(row[2], path, reader.line_num))
    check_gold_varies(scores, path)
    return StsPairs(name=f"stsb-{lang}-{split}", lang1=lang, lang2=lang, sent1=sent1, sent2=sent2, scores=scores)


def _stsb_path(lang: str, split: str, root: str | Path | None) -> Path:
    """The ``stsb_multi_mt`` file of ``lang`` and ``split``."""
    return dataset_path(root, "stsb_multi_mt", "data", f"stsb-{lang}-{split}.csv")


def load_stsb_crosslingual(lang1: str, lang2: str, split: str = "test", root: str | Path | None = None) -> StsPairs:
    """Cross-lingual STS-B: ``sent1`` from ``lang1``'s file and ``sent2`` from ``lang2``'s, row by row.

    The translations keep the English scores, so both files must hold the same scores (within 1e-6).
    """
    a = load_stsb_multi_mt(lang1, split, root)
    b = load_stsb_multi_mt(lang2, split, root)
    path_a, path_b = _stsb_path(lang1, split, root), _stsb_path(lang2, split, root)
    check_same_length(path_a, a.scores, path_b, b.scores)
    for i, (x, y) in enumerate(zip(a.scores, b.scores, strict=True)):
        if abs(x - y) > 1e-6:
            raise ValueError(f"row {i + 1} has score {x} in {path_a} but {y} in {path_b}; the files are not "
                             "row-aligned (translations keep the English scores)")
    return StsPairs(name=f"stsb-{lang1}-{lang2}-{split}", lang1=lang1, lang2=lang2,
                    sent1=a.sent1, sent2=b.sent2, scores=a.scores)


def load_stsbenchmark(split: str = "test", root: str | Path | None = None) -> StsPairs:
    """The English STS benchmark ``split`` from ``stsbenchmark/sts-{split}.csv``.

    The files are tab-separated (genre, file, year, id, score, s1, s2, optional licence fields), not CSV.
    """
    check_choice(split, STSB_SPLITS, "STS-B split")
    path = dataset_path(root, "stsbenchmark", f"sts-{split}.csv")
    sent1, sent2, scores = [], [], []
    for n, line in enumerate(read_lines(path), 1):
        fields = split_fields(line, path, n, 7, at_least=True)
        scores.append(parse_gold_score(fields[4], path, n, " in field 5"))
        sent1.append(fields[5])
        sent2.append(fields[6])
    check_gold_varies(scores, path)
    return StsPairs(name=f"stsbenchmark-{split}", lang1="en", lang2="en", sent1=sent1, sent2=sent2, scores=scores)
