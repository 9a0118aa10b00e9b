"""Tatoeba similarity-search test set (Artetxe & Schwenk 2019): up to 1000 xx-English pairs for 112 languages."""

from __future__ import annotations

from pathlib import Path

from xlsent.data._files import check_choice, check_readable, check_same_length, dataset_path, read_lines
from xlsent.data.empty_text import is_empty

FOLDER = "tatoeba_v1"
LANGUAGES = 112
"""The languages of the Tatoeba v1 release (each ``tatoeba.xx-eng.xx`` with its ``.eng``)."""

RELEASE_LANGUAGES: tuple[str, ...] = (
    "afr", "amh", "ang", "ara", "arq", "arz", "ast", "awa", "aze", "bel", "ben", "ber", "bos", "bre", "bul", "cat",
    "cbk", "ceb", "ces", "cha", "cmn", "cor", "csb", "cym", "dan", "deu", "dsb", "dtp", "ell", "epo", "est", "eus",
    "fao", "fin", "fra", "fry", "gla", "gle", "glg", "gsw", "heb", "hin", "hrv", "hsb", "hun", "hye", "ido", "ile",
    "ina", "ind", "isl", "ita", "jav", "jpn", "kab", "kat", "kaz", "khm", "kor", "kur", "kzj", "lat", "lfn", "lit",
    "lvs", "mal", "mar", "max", "mhr", "mkd", "mon", "nds", "nld", "nno", "nob", "nov", "oci", "orv", "pam", "pes",
    "pms", "pol", "por", "ron", "rus", "slk", "slv", "spa", "sqi", "srp", "swe", "swg", "swh", "tam", "tat", "tel",
    "tgl", "tha", "tuk", "tur", "tzl", "uig", "ukr", "urd", "uzb", "vie", "war", "wuu", "xho", "yid", "yue", "zsm",
)
"""The codes of the :data:`LANGUAGES` languages of the Tatoeba v1 release, sorted: those
``--langs`` may name, whether or not the data folder holds their files."""

XTREME36: tuple[str, ...] = (
    "ara", "heb", "vie", "ind", "jav", "tgl", "eus", "mal", "tel", "afr", "nld", "deu", "ell", "ben", "hin", "mar",
    "urd", "tam", "fra", "ita", "por", "spa", "bul", "rus", "jpn", "kat", "kor", "tha", "swh", "cmn", "kaz", "tur",
    "est", "fin", "hun", "pes",
)
"""The 36 Tatoeba languages averaged in XTREME."""

PAPER14: tuple[str, ...] = (
    "deu", "fra", "cmn", "rus", "hin", "ell", "bul", "spa", "tur", "tha", "urd", "vie", "ara", "kat",
)
"""The 14 languages reported in the paper's main table."""


def tatoeba_languages(root: str | Path | None = None) -> list[str]:
    """The 3-letter codes of the languages in ``tatoeba_v1``, sorted.

    A language is in the folder when either of its files (``tatoeba.xx-eng.xx``, ``tatoeba.xx-eng.eng``) is; a
    ``ValueError`` names the other when it is missing, a dangling link, a folder or unreadable, rather than leave the
    language out of the run (and out of its averages).
    """
    folder = dataset_path(root, FOLDER)
    langs = set()
    for path in folder.glob("tatoeba.*-eng.*"):
        lang, _, side = path.name.removeprefix("tatoeba.").partition("-eng.")
        if side in (lang, "eng"):
            langs.add(lang)
    for lang in sorted(langs):
        for side in (lang, "eng"):
            check_readable(folder / f"tatoeba.{lang}-eng.{side}",
                           f"Tatoeba language {lang!r} needs both tatoeba.{lang}-eng.{lang} and tatoeba.{lang}-eng.eng "
                           "as files: restore it from the release (or remove both)")
    return sorted(langs)


def load_tatoeba(lang: str, root: str | Path | None = None) -> tuple[list[str], list[str]]:
    """The sentences in ``lang`` and their English translations: line i of both lists is a pair.

    Lines are returned as in the files, without the newline (other whitespace is kept).
    """
    check_choice(lang, tatoeba_languages(root), "Tatoeba language")
    folder = dataset_path(root, FOLDER)
    xx_path, en_path = folder / f"tatoeba.{lang}-eng.{lang}", folder / f"tatoeba.{lang}-eng.eng"
    xx, en = read_lines(xx_path), read_lines(en_path)
    check_same_length(xx_path, xx, en_path, en)
    for path, lines in ((xx_path, xx), (en_path, en)):
        if (blank := next((i for i, line in enumerate(lines) if is_empty(line)), None)) is not None:
            raise ValueError(f"{path}:{blank + 1}: a line without text; every Tatoeba pair has a sentence on both "
                             "sides: restore the file from the release")
    return xx, en
