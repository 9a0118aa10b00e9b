"""Parallel text under ``parallel/``: Multi30k, WMT newstest, NTREX-128 and Tatoeba-Challenge test pairs.

Every reader returns two row-aligned lists of sentences: line i of the first translates line i of the second.
"""

from __future__ import annotations

import logging
from pathlib import Path

from xlsent.data._files import check_choice, check_same_length, dataset_path, read_lines
from xlsent.data.tatoeba import load_tatoeba
from xlsent.languages import TATOEBA_CHALLENGE_TO_V1

logger = logging.getLogger(__name__)

TATOEBA_CHALLENGE_VERSION = "v2021-08-07"


def read_pair(path1: Path, path2: Path) -> tuple[list[str], list[str]]:
    """The lines of two line-aligned files; an error naming both where their lengths differ."""
    a, b = read_lines(path1), read_lines(path2)
    check_same_length(path1, a, path2, b)
    return a, b


def load_multi30k(lang1: str, lang2: str, split: str = "train",
                  root: str | Path | None = None) -> tuple[list[str], list[str]]:
    """Multi30k task 1 captions of ``split`` (train, val, test_2016_flickr, test_2017_flickr, test_2017_mscoco,
    test_2018_flickr) in ``lang1`` and ``lang2`` (en de fr cs; the 2017 tests have no cs)."""
    folder = dataset_path(root, "parallel", "multi30k")
    available: dict[str, list[str]] = {}
    for p in sorted(folder.iterdir()):
        available.setdefault(p.stem, []).append(p.suffix.removeprefix("."))
    check_choice(split, available, "Multi30k split")
    for lang in (lang1, lang2):
        check_choice(lang, available[split], f"Multi30k {split} language")
    return read_pair(folder / f"{split}.{lang1}", folder / f"{split}.{lang2}")


def newstest_files(year: int | str, lang1: str, lang2: str, root: str | Path | None = None) -> tuple[Path, Path]:
    """The files of WMT newstest ``year`` in ``lang1`` and ``lang2``.

    2008-2013 are multi-way parallel (any two of the year's languages); 2014 has separate X-en sets, so one
    side must be ``en`` (and its English side differs between pairs). newssyscomb2009 is not read.
    """
    base = dataset_path(root, "parallel", "wmt_newstest")
    years = sorted(p.name for p in base.iterdir() if p.is_dir())
    check_choice(str(year), years, "newstest year")
    folder = base / str(year)
    for sub in (folder, folder / f"{lang1}-{lang2}", folder / f"{lang2}-{lang1}"):
        a, b = sub / f"newstest{year}.{lang1}", sub / f"newstest{year}.{lang2}"
        if a.is_file() and b.is_file():
            return a, b
    multiway = sorted(p.suffix.removeprefix(".") for p in folder.glob(f"newstest{year}.*"))
    pairs = sorted(p.name for p in folder.iterdir() if p.is_dir())
    have = f"languages {' '.join(multiway)} (multi-way)" if multiway else f"pairs {' '.join(pairs)}"
    raise ValueError(f"newstest{year} has no {lang1}-{lang2} set; it has {have}")


def load_newstest(year: int | str, lang1: str, lang2: str,
                  root: str | Path | None = None) -> tuple[list[str], list[str]]:
    """WMT newstest ``year`` in ``lang1`` and ``lang2`` (:func:`newstest_files`)."""
    return read_pair(*newstest_files(year, lang1, lang2, root))


def ntrex_languages(root: str | Path | None = None) -> list[str]:
    """NTREX-128 language codes present (ISO 639-3 with optional script, e.g. ``deu``, ``srp-Latn``,
    ``zho_Hans``; ``eng`` is the English source)."""
    folder = dataset_path(root, "parallel", "ntrex128", "NTREX-128")
    refs = folder.glob("newstest2019-ref.*.txt")
    codes = [p.name.removeprefix("newstest2019-ref.").removesuffix(".txt") for p in refs]
    return sorted([*codes, "eng"])


def ntrex_files(lang1: str, lang2: str, root: str | Path | None = None) -> tuple[Path, Path]:
    """The NTREX-128 files of ``lang1`` and ``lang2``, in the codes of the file names (see :func:`ntrex_languages`):
    ``eng`` (the English source), ``deu``, ``fra``, ..."""
    langs = ntrex_languages(root)
    for lang in (lang1, lang2):
        check_choice(lang, langs, "NTREX-128 language")
    folder = dataset_path(root, "parallel", "ntrex128", "NTREX-128")

    def path(lang: str) -> Path:
        return folder / ("newstest2019-src.eng.txt" if lang == "eng" else f"newstest2019-ref.{lang}.txt")

    return path(lang1), path(lang2)


def load_ntrex(lang1: str, lang2: str, root: str | Path | None = None) -> tuple[list[str], list[str]]:
    """NTREX-128 (newstest2019 English source and its human translations, 1997 lines, multi-way parallel) in
    ``lang1`` and ``lang2`` (:func:`ntrex_files`)."""
    return read_pair(*ntrex_files(lang1, lang2, root))


def tatoeba_challenge_languages(root: str | Path | None = None) -> list[str]:
    """Languages with a Tatoeba-Challenge eng pair here, as in the folder names (``deu``, ``fas``, ``zho``, ...)."""
    folder = dataset_path(root, "parallel", "tatoeba_challenge_test")
    return sorted(next(code for code in p.name.split("-") if code != "eng") for p in folder.iterdir() if p.is_dir())


def load_tatoeba_challenge(lang: str, root: str | Path | None = None,
                           exclude_tatoeba_v1: bool = True) -> tuple[list[str], list[str]]:
    """Tatoeba-Challenge test pairs (v2021-08-07) of ``lang`` and English: (``lang`` side, English side).

    ``lang`` is the folder's code; macro-languages mix several Tatoeba languages (``zho``: cmn, yue, wuu, ...).
    With ``exclude_tatoeba_v1``, every pair whose ``lang`` side occurs in the Tatoeba v1 test of the matching
    languages (:data:`xlsent.languages.TATOEBA_CHALLENGE_TO_V1`), or whose English side occurs in their English
    side, is dropped, so the rest can train a model evaluated on Tatoeba v1.
    """
    check_choice(lang, tatoeba_challenge_languages(root), "Tatoeba-Challenge language")
    base = dataset_path(root, "parallel", "tatoeba_challenge_test")
    folder = base / f"{lang}-eng" if (base / f"{lang}-eng").is_dir() else base / f"eng-{lang}"
    stem = f"tatoeba-test-{TATOEBA_CHALLENGE_VERSION}"
    xx, en = read_pair(folder / f"{stem}.{lang}", folder / f"{stem}.eng")
    if not exclude_tatoeba_v1:
        return xx, en
    v1_xx: set[str] = set()
    v1_en: set[str] = set()
    for code in TATOEBA_CHALLENGE_TO_V1.get(lang, (lang,)):
        a, b = load_tatoeba(code, root)
        v1_xx.update(a)
        v1_en.update(b)
    kept = [(x, e) for x, e in zip(xx, en, strict=True) if x not in v1_xx and e not in v1_en]
    logger.info("Tatoeba-Challenge %s: removed %d of %d pairs overlapping the Tatoeba v1 test (%s)", lang,
                len(xx) - len(kept), len(xx), " ".join(TATOEBA_CHALLENGE_TO_V1.get(lang, (lang,))))
    return [x for x, _ in kept], [e for _, e in kept]
