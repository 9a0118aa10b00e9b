"""Language codes: which forms xlsent accepts, and the one table of what each language is called in every code
system and data set xlsent reads.

:data:`LANGUAGES` holds, per language, its ISO 639-1 and ISO 639-3 codes, its Tatoeba-Challenge folder code, the
Tatoeba v1 test sets that Tatoeba-Challenge set covers, its NTREX-128 file code and its FLORES-200 code
(``xxx_Scrp``). Every other mapping in xlsent is read from it: :data:`ISO3_TO_ISO1`, :data:`TATOEBA_CHALLENGE`,
:data:`TATOEBA_CHALLENGE_TO_V1`, :func:`ntrex_code`, :func:`flores_code`.

>>> ntrex_code("ar"), ntrex_code("zh"), ntrex_code("en"), ntrex_code("de"), ntrex_code("srp-Latn")
('arb', 'zho_Hans', 'eng', 'deu', 'srp-Latn')
>>> TATOEBA_CHALLENGE["zh"], TATOEBA_CHALLENGE_TO_V1["zho"], flores_code("fa")
('zho', ('cmn', 'yue', 'wuu'), 'pes_Arab')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CODE_PATTERN = r"^[a-z]{2,3}([-_][A-Za-z0-9]{2,8})*$"
"""What :func:`check_lang` accepts: ISO 639-1/639-3, optionally with script/region subtags."""
_CODE = re.compile(CODE_PATTERN)


@dataclass(frozen=True)
class Language:
    """One language's codes: ``iso1`` and ``iso3`` (ISO 639-1, ISO 639-3 (macro)language), ``script`` (ISO 15924),
    ``challenge`` (the folder code of its Tatoeba-Challenge test pair with English; None: no such pair),
    ``individual`` (the individual language standing for a macrolanguage in other data sets: ``cmn`` for
    Chinese in Tatoeba v1, ``arb`` for Arabic in FLORES), ``v1`` (the Tatoeba v1 test languages its
    Tatoeba-Challenge pair covers, when more or other than ``challenge``), ``ntrex`` and ``flores`` (its NTREX-128
    file code and FLORES-200 code where they are not the defaults of :attr:`ntrex_file` and :attr:`flores_code`)."""

    iso1: str
    iso3: str
    script: str
    challenge: str | None = None
    individual: str | None = None
    v1: tuple[str, ...] = ()
    ntrex: str | None = None
    flores: str | None = None

    @property
    def tatoeba_v1(self) -> tuple[str, ...]:
        """The Tatoeba v1 test languages its Tatoeba-Challenge pair covers (none without one)."""
        if self.challenge is None:
            return ()
        return self.v1 or (self.challenge,)

    @property
    def ntrex_file(self) -> str:
        """Its NTREX-128 file code (default: ``iso3``)."""
        return self.ntrex or self.iso3

    @property
    def flores_code(self) -> str:
        """Its FLORES-200 code (default: ``<individual or iso3>_<script>``, e.g. ``deu_Latn``, ``arb_Arab``)."""
        return self.flores or f"{self.individual or self.iso3}_{self.script}"

    def codes(self) -> set[str]:
        """The codes that name the language itself (ISO 639-1/3, Tatoeba-Challenge, individual language)."""
        return {self.iso1, self.iso3, *filter(None, (self.challenge, self.individual))}


LANGUAGES: tuple[Language, ...] = (
    Language("ar", "ara", "Arab", "ara", individual="arb", v1=("ara", "arq", "arz"), ntrex="arb"),
    Language("bg", "bul", "Cyrl", "bul"),
    Language("cs", "ces", "Latn", "ces"),
    Language("da", "dan", "Latn", "dan"),
    Language("de", "deu", "Latn", "deu"),
    Language("el", "ell", "Grek", "ell"),
    Language("en", "eng", "Latn"),
    Language("es", "spa", "Latn", "spa"),
    Language("fa", "fas", "Arab", "fas", individual="pes", v1=("pes",)),
    Language("fi", "fin", "Latn", "fin"),
    Language("fr", "fra", "Latn", "fra"),
    Language("he", "heb", "Hebr", "heb"),
    Language("hi", "hin", "Deva", "hin"),
    Language("hu", "hun", "Latn", "hun"),
    Language("id", "ind", "Latn", "ind"),
    Language("it", "ita", "Latn", "ita"),
    Language("ja", "jpn", "Jpan", "jpn"),
    Language("kk", "kaz", "Cyrl"),
    Language("ko", "kor", "Hang", "kor"),
    Language("ms", "msa", "Latn", "msa", individual="zsm", v1=("ind", "zsm", "max")),
    Language("nl", "nld", "Latn", "nld"),
    Language("pl", "pol", "Latn", "pol"),
    Language("pt", "por", "Latn", "por"),
    Language("ro", "ron", "Latn", "ron"),
    Language("ru", "rus", "Cyrl", "rus"),
    Language("sv", "swe", "Latn", "swe"),
    Language("sw", "swa", "Latn", "swa", individual="swh", v1=("swh",)),
    Language("th", "tha", "Thai", "tha"),
    Language("tr", "tur", "Latn", "tur"),
    Language("uk", "ukr", "Cyrl", "ukr"),
    Language("ur", "urd", "Arab", "urd"),
    Language("vi", "vie", "Latn", "vie"),
    Language("zh", "zho", "Hans", "zho", individual="cmn", v1=("cmn", "yue", "wuu"), ntrex="zho_Hans",
             flores="zho_Hans"),
)
"""Every language xlsent names: the 31 Tatoeba-Challenge languages of the training bitexts, English, and Kazakh
(ABSent's low-resource NTREX pair)."""

BY_CODE: dict[str, Language] = {code: lang for lang in LANGUAGES for code in lang.codes()}
"""Each language under each of its :meth:`Language.codes`."""
ISO3_TO_ISO1: dict[str, str] = {code: lang.iso1 for code, lang in BY_CODE.items() if len(code) == 3}
"""Three-letter codes (ISO 639-3, Tatoeba file names) -> the two-letter code."""
TATOEBA_CHALLENGE: dict[str, str] = {lang.iso1: lang.challenge for lang in LANGUAGES if lang.challenge}
"""Two-letter code -> the code of its Tatoeba-Challenge eng-X test set."""
TATOEBA_CHALLENGE_TO_V1: dict[str, tuple[str, ...]] = {lang.challenge: lang.tatoeba_v1 for lang in LANGUAGES
                                                       if lang.challenge}
"""Tatoeba-Challenge code -> the Tatoeba v1 test languages it covers (``zho``: cmn, yue, wuu)."""


def language(code: str) -> Language | None:
    """The table's entry for ``code`` (any of its :meth:`Language.codes`), or None."""
    return BY_CODE.get(code)


def ntrex_code(code: str) -> str:
    """The NTREX-128 file code of ``code`` (``ar`` -> ``arb``, ``zh`` -> ``zho_Hans``); a code the table does not
    know is taken as an NTREX code already (``kaz``, ``srp-Latn``)."""
    lang = language(code)
    return lang.ntrex_file if lang is not None else code


def flores_code(code: str) -> str:
    """The FLORES-200 code of a language the table knows (``de`` -> ``deu_Latn``)."""
    lang = language(code)
    if lang is None:
        raise ValueError(f"{code!r} is not in xlsent's language table (xlsent.languages.LANGUAGES): add it there")
    return lang.flores_code


def check_lang(code: str | None) -> str | None:
    """``code`` if it is a language code (ISO 639-1/639-3, optionally with script/region subtags), else an error.

    >>> check_lang("de"), check_lang("deu"), check_lang("zh-Hant"), check_lang(None)
    ('de', 'deu', 'zh-Hant', None)
    >>> check_lang("German")
    Traceback (most recent call last):
    ...
    ValueError: 'German' is not a language code: use ISO 639-1 or 639-3, e.g. de or deu (subtags as zh-Hant)
    """
    if code is None or _CODE.match(code):
        return code
    raise ValueError(f"{code!r} is not a language code: use ISO 639-1 or 639-3, e.g. de or deu "
                     "(subtags as zh-Hant)")


def base_lang(code: str) -> str:
    """The two-letter primary language of ``code`` where xlsent knows it, else its primary subtag.

    >>> base_lang("deu"), base_lang("zh-Hant"), base_lang("cmn"), base_lang("yor")
    ('de', 'zh', 'zh', 'yor')
    """
    primary = re.split(r"[-_]", code)[0].lower()
    return ISO3_TO_ISO1.get(primary, primary)
