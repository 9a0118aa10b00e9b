"""BUCC bitext mining sets: the BUCC 2018 zh-en sample, and BUCC-style sets built from parallel text.

A BUCC set is two monolingual sentence collections with ids and the gold list of (source id, target id)
translation pairs hidden among them.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from xlsent.data._files import check_choice, dataset_path, read_lines, split_fields
from xlsent.data.empty_text import is_empty
from xlsent.data.parallel import load_newstest

logger = logging.getLogger(__name__)

BUCC_SAMPLE_PAIRS: tuple[str, ...] = ("zh-en",)
"""Pairs of ``bucc2018_sample`` with both sides and gold present."""

_INCOMPLETE_SAMPLE = {
    "fr-en": "bucc2018_sample has the French side and the gold pairs of fr-en but not the English side",
    "de-en": "bucc2018_sample has only the gold pairs of de-en, neither sentence file",
    "ru-en": "bucc2018_sample has only the gold pairs of ru-en, neither sentence file",
}

NEWSTEST_BUCC_LANGS: tuple[str, ...] = ("cs", "de", "es", "fr", "ru")

# lang -> (newstest years for the lang-side distractors, years for the English-side distractors). The two
# sides use different years, so no distractor has its translation in the set.
_DISTRACTOR_YEARS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "cs": ((2008, 2009, 2010), (2011, 2013)),
    "de": ((2008, 2009, 2010), (2011, 2013)),
    "es": ((2008, 2009, 2010), (2011, 2013)),
    "fr": ((2008, 2009, 2010), (2011, 2013)),
    "ru": ((2013, 2014), (2008, 2009, 2010, 2011)),
}
_GOLD_YEAR = 2012

DEV_YEARS: dict[str, tuple[int, tuple[int, ...], tuple[int, ...]]] = {
    "cs": (2011, (2013,), (2009, 2010)),
    "de": (2011, (2013,), (2009, 2010)),
    "es": (2011, (2013,), (2009, 2010)),
    "fr": (2011, (2013,), (2009, 2010)),
    "ru": (2014, (2013,), (2009, 2010)),
}
"""lang -> (gold year, lang-side distractor years, English-side distractor years) of the BUCC-style *dev* sets
(:func:`newstest_bucc_dev`): a method that validates on them leaves their gold pairs out of training
(:func:`newstest_dev_sentences`). Their gold years differ from the test sets' (2012)."""


@dataclass(frozen=True)
class BuccSet:
    """Sentences of both sides with their ids, and the gold (src id, tgt id) translation pairs."""

    pair: str
    src_ids: list[str]
    src: list[str]
    tgt_ids: list[str]
    tgt: list[str]
    gold: list[tuple[str, str]]
    description: str


def load_bucc_sample(pair: str = "zh-en", root: str | Path | None = None) -> BuccSet:
    """The BUCC 2018 *sample* split of ``pair`` (XTREME's ``*.dev.*`` files): only zh-en is complete here."""
    if pair in _INCOMPLETE_SAMPLE:
        raise ValueError(f"cannot load the BUCC sample for {pair}: {_INCOMPLETE_SAMPLE[pair]}; complete pairs: "
                         f"{' '.join(BUCC_SAMPLE_PAIRS)} (build a BUCC-style set with newstest_bucc instead)")
    check_choice(pair, BUCC_SAMPLE_PAIRS, "BUCC sample pair")
    src_lang, tgt_lang = pair.split("-")
    src_ids, src = _read_id_sentences(dataset_path(root, "bucc2018_sample", f"{pair}.dev.{src_lang}"))
    tgt_ids, tgt = _read_id_sentences(dataset_path(root, "bucc2018_sample", f"{pair}.dev.{tgt_lang}"))
    gold_path = dataset_path(root, "bucc2018_sample", f"{pair}.dev.gold")
    gold, gold_notes = _read_gold(gold_path, set(src_ids), set(tgt_ids))
    description = (f"BUCC 2018 shared task, sample split, {pair}: {len(src)} {src_lang} and {len(tgt)} {tgt_lang} "
                   f"sentences, {len(gold)} gold pairs" + "".join(f"; {note}" for note in gold_notes))
    return BuccSet(pair=pair, src_ids=src_ids, src=src, tgt_ids=tgt_ids, tgt=tgt, gold=gold, description=description)


def _read_gold(path: Path, known_src: set[str], known_tgt: set[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The distinct (src id, tgt id) pairs of a gold file, and notes on what was dropped or is kept unusual.

    ``ValueError`` naming the file when it holds no pair, or the line of a pair naming an unknown id. A repeated pair
    is dropped, and a source or target id in several pairs (one-to-many gold) kept; both are logged and noted.
    """
    gold: dict[tuple[str, str], None] = {}
    repeated = 0
    for n, line in enumerate(read_lines(path), 1):
        a, b = split_fields(line, path, n, 2)
        if a not in known_src or b not in known_tgt:
            raise ValueError(f"{path}:{n}: gold pair ({a}, {b}) names an id missing from the sentence files")
        repeated += (a, b) in gold
        gold[(a, b)] = None
    if not gold:
        raise ValueError(f"{path}: holds no gold pair (an empty file); expected lines `src_id TAB tgt_id`: fetch the "
                         "data again")
    notes = []
    if repeated:
        notes.append(f"{repeated} repeated gold line(s) of {path.name} dropped")
    shared = sum(len(ids) - len(set(ids)) for ids in ([a for a, _ in gold], [b for _, b in gold]))
    if shared:
        notes.append(f"{shared} gold pair(s) of {path.name} repeat a source or target id of another (one-to-many "
                     "gold, kept: the 1:1 candidate filter finds at most one pair per id)")
    for note in notes:
        logger.warning("%s", note)
    return list(gold), notes


def _read_id_sentences(path: Path) -> tuple[list[str], list[str]]:
    """Ids and sentences of an ``id TAB sentence`` file; ids must be unique and sentences not empty."""
    ids, sentences = [], []
    for n, line in enumerate(read_lines(path), 1):
        sent_id, sentence = split_fields(line, path, n, 2)
        if is_empty(sentence):
            raise ValueError(f"{path}:{n}: a line without text after its id; every BUCC sentence has text: restore "
                             "the file from the release")
        ids.append(sent_id)
        sentences.append(sentence)
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: {len(ids) - len(set(ids))} repeated id(s); expected unique ids")
    return ids, sentences


def build_bucc_style(src_lines: Sequence[str], tgt_lines: Sequence[str], distractors_src: Sequence[str],
                     distractors_tgt: Sequence[str], *, pair: str, n_gold: int | None = None, seed: int = 0,
                     description: str) -> BuccSet:
    """Hide the translation pairs ``src_lines[i]`` <-> ``tgt_lines[i]`` among distractor sentences on both sides.

    Sentences are stripped of surrounding whitespace. Gold pairs with an empty side, or with a side repeating an
    earlier gold pair's sentence, are dropped (so every sentence has one id and the gold is one-to-one); with
    ``n_gold``, that many of the remaining pairs are drawn at random and the others left out entirely.
    Distractors that are empty, identical to a gold sentence on their side, or repeated are dropped. Each side
    is shuffled with ``seed`` and numbered in its new order (``src-000000``, ``tgt-000000``, ...); the result
    depends only on the inputs and ``seed``.
    """
    if len(src_lines) != len(tgt_lines):
        raise ValueError(f"{pair}: {len(src_lines)} source and {len(tgt_lines)} target lines; expected parallel lines")
    rng = random.Random(seed)
    pairs: list[tuple[str, str]] = []
    seen_src: set[str] = set()
    seen_tgt: set[str] = set()
    for s, t in zip(src_lines, tgt_lines, strict=True):
        s, t = s.strip(), t.strip()
        if s and t and s not in seen_src and t not in seen_tgt:
            pairs.append((s, t))
            seen_src.add(s)
            seen_tgt.add(t)
    if len(pairs) < len(src_lines):
        logger.info("%s: dropped %d of %d gold pairs (empty side or repeated sentence)", pair,
                    len(src_lines) - len(pairs), len(src_lines))
    if n_gold is not None:
        if not 0 <= n_gold <= len(pairs):
            raise ValueError(f"{pair}: n_gold={n_gold}, but only {len(pairs)} usable gold pairs")
        pairs = rng.sample(pairs, n_gold)
    src = _with_distractors([s for s, _ in pairs], distractors_src, rng)
    tgt = _with_distractors([t for _, t in pairs], distractors_tgt, rng)
    src_id = {s: f"src-{i:06d}" for i, s in enumerate(src)}
    tgt_id = {t: f"tgt-{i:06d}" for i, t in enumerate(tgt)}
    gold = sorted((src_id[s], tgt_id[t]) for s, t in pairs)
    return BuccSet(pair=pair, src_ids=list(src_id.values()), src=src, tgt_ids=list(tgt_id.values()), tgt=tgt,
                   gold=gold, description=description)


def _with_distractors(gold: list[str], distractors: Sequence[str], rng: random.Random) -> list[str]:
    """``gold`` plus the distinct non-empty ``distractors`` not among them, shuffled."""
    sentences = list(gold)
    seen = set(gold)
    for d in distractors:
        d = d.strip()
        if d and d not in seen:
            sentences.append(d)
            seen.add(d)
    rng.shuffle(sentences)
    return sentences


def _newstest_side(year: int, lang: str, root: str | Path | None) -> list[str]:
    """The ``lang`` lines of newstest ``year``: its multi-way file, else (2014) the one of its ``lang``-en set."""
    folder = dataset_path(root, "parallel", "wmt_newstest", str(year))
    path = folder / f"newstest{year}.{lang}"
    if not path.is_file():
        path = folder / f"{lang}-en" / f"newstest{year}.{lang}"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found (newstest{year} has no {lang} side)")
    return read_lines(path)


def newstest_bucc(lang: str, root: str | Path | None = None, seed: int = 0) -> BuccSet:
    """A BUCC-style ``lang``-en set: the newstest2012 ``lang``/English pairs hidden among other newstest years.

    Gold: the 3003 row-aligned newstest2012 pairs. Distractors: the ``lang`` side of some other newstest years
    and the English side of yet other years (see ``description``), so no distractor has its translation in the
    set. Built with :func:`build_bucc_style`.
    """
    check_choice(lang, NEWSTEST_BUCC_LANGS, "newstest BUCC language")
    return _newstest_set(lang, _GOLD_YEAR, *_DISTRACTOR_YEARS[lang], root, seed)


def newstest_bucc_dev(lang: str, root: str | Path | None = None, seed: int = 0) -> BuccSet:
    """A BUCC-style ``lang``-en *dev* set, built like :func:`newstest_bucc` from the years of :data:`DEV_YEARS`
    (gold: newstest2011, or newstest2014 for ru), for validation and recipe choices; never a reported score."""
    check_choice(lang, tuple(DEV_YEARS), "newstest BUCC dev language")
    return _newstest_set(lang, *DEV_YEARS[lang], root, seed)


def newstest_dev_sentences(langs: Sequence[str], root: str | Path | None = None) -> set[str]:
    """Both sides (stripped) of the gold pairs of the dev sets of ``langs`` (those in :data:`DEV_YEARS`; the
    others are ignored): what training must leave out so the dev sets stay unseen."""
    out: set[str] = set()
    for lang in dict.fromkeys(langs):
        if lang in DEV_YEARS:
            src, tgt = load_newstest(DEV_YEARS[lang][0], lang, "en", root)
            out |= {x.strip() for x in (*src, *tgt)} - {""}
    return out


def _newstest_set(lang: str, gold_year: int, src_years: Sequence[int], tgt_years: Sequence[int],
                  root: str | Path | None, seed: int) -> BuccSet:
    """The ``gold_year`` ``lang``/English pairs hidden among the ``lang`` side of ``src_years`` and the English
    side of ``tgt_years``."""
    src_lines, tgt_lines = load_newstest(gold_year, lang, "en", root)
    distractors_src = [s for year in src_years for s in _newstest_side(year, lang, root)]
    distractors_tgt = [t for year in tgt_years for t in _newstest_side(year, "en", root)]
    built = build_bucc_style(src_lines, tgt_lines, distractors_src, distractors_tgt, pair=f"{lang}-en", seed=seed,
                             description="")
    n_gold = len(built.gold)
    description = (
        f"BUCC-style {lang}-en set from WMT newstest: {n_gold} gold pairs = the row-aligned newstest{gold_year} "
        f"{lang}/en lines ({len(src_lines) - n_gold} of {len(src_lines)} dropped: empty side or repeated sentence), "
        f"hidden among {len(built.src) - n_gold} {lang} distractors from newstest "
        f"{', '.join(map(str, src_years))} ({lang} side only) and {len(built.tgt) - n_gold} English distractors "
        f"from newstest {', '.join(map(str, tgt_years))} (English side only); the two sides use different years, "
        "so no distractor has its translation in the set; distractors identical to a gold sentence on their side "
        f"and repeated sentences removed; sentences stripped, both sides shuffled with seed {seed}"
    )
    return replace(built, description=description)
