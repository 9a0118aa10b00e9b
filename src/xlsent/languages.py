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

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

CODE_PATTERN = r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$"
"""What :func:`check_lang` accepts, in any case: ISO 639-1/639-3, optionally with script/region subtags."""
_CODE = re.compile(CODE_PATTERN)

log = logging.getLogger(__name__)


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
    # the other languages of XLM-R's vocabulary (CC-100) and of Tatoeba v1 that have an ISO 639-1 code
    Language("af", "afr", "Latn"), Language("am", "amh", "Ethi"), Language("as", "asm", "Beng"),
    Language("az", "aze", "Latn", individual="azj", ntrex="aze-Latn"), Language("be", "bel", "Cyrl"),
    Language("bn", "ben", "Beng"),
    Language("br", "bre", "Latn"), Language("bs", "bos", "Latn"), Language("ca", "cat", "Latn"),
    Language("ch", "cha", "Latn"), Language("cy", "cym", "Latn"), Language("eo", "epo", "Latn"),
    Language("et", "est", "Latn"), Language("eu", "eus", "Latn"), Language("fo", "fao", "Latn"),
    Language("fy", "fry", "Latn"), Language("ga", "gle", "Latn"), Language("gd", "gla", "Latn"),
    Language("gl", "glg", "Latn"), Language("gu", "guj", "Gujr"), Language("ha", "hau", "Latn"),
    Language("hr", "hrv", "Latn"), Language("hy", "hye", "Armn"), Language("ia", "ina", "Latn"),
    Language("ie", "ile", "Latn"), Language("io", "ido", "Latn"), Language("is", "isl", "Latn"),
    Language("jv", "jav", "Latn"), Language("ka", "kat", "Geor"), Language("km", "khm", "Khmr"),
    Language("kn", "kan", "Knda"), Language("ku", "kur", "Latn", individual="kmr"), Language("kw", "cor", "Latn"),
    Language("ky", "kir", "Cyrl"), Language("la", "lat", "Latn"), Language("lo", "lao", "Laoo"),
    Language("lt", "lit", "Latn"), Language("lv", "lav", "Latn", individual="lvs"),
    Language("mg", "mlg", "Latn", individual="plt"), Language("mk", "mkd", "Cyrl"),
    Language("ml", "mal", "Mlym"), Language("mn", "mon", "Cyrl", individual="khk"), Language("mr", "mar", "Deva"),
    Language("my", "mya", "Mymr"), Language("ne", "nep", "Deva", individual="npi"), Language("nn", "nno", "Latn"),
    Language("no", "nor", "Latn", individual="nob"), Language("oc", "oci", "Latn"),
    Language("om", "orm", "Latn", individual="gaz"), Language("or", "ori", "Orya", individual="ory"),
    Language("pa", "pan", "Guru"), Language("ps", "pus", "Arab", individual="pbt"), Language("sa", "san", "Deva"),
    Language("sd", "snd", "Arab"), Language("si", "sin", "Sinh"), Language("sk", "slk", "Latn"),
    Language("sl", "slv", "Latn"), Language("so", "som", "Latn"), Language("sq", "sqi", "Latn", individual="als"),
    Language("sr", "srp", "Cyrl", ntrex="srp-Cyrl"), Language("su", "sun", "Latn"), Language("ta", "tam", "Taml"),
    Language("te", "tel", "Telu"), Language("tk", "tuk", "Latn"), Language("tl", "tgl", "Latn"),
    Language("tt", "tat", "Cyrl"), Language("ug", "uig", "Arab"), Language("uz", "uzb", "Latn", individual="uzn"),
    Language("xh", "xho", "Latn"), Language("yi", "yid", "Hebr", individual="ydd"),
)
"""Every language xlsent names: the 31 Tatoeba-Challenge languages of the training bitexts, English, Kazakh
(ABSent's low-resource NTREX pair), and the other languages with an ISO 639-1 code of XLM-R's vocabulary and of
Tatoeba v1, so that every command takes the same codes for them."""

XLMR_LANGS: frozenset[str] = frozenset((
    "af", "am", "ar", "as", "az", "be", "bg", "bn", "br", "bs", "ca", "cs", "cy", "da", "de", "el", "en", "eo", "es",
    "et", "eu", "fa", "fi", "fr", "fy", "ga", "gd", "gl", "gu", "ha", "he", "hi", "hr", "hu", "hy", "id", "is", "it",
    "ja", "jv", "ka", "kk", "km", "kn", "ko", "ku", "ky", "la", "lo", "lt", "lv", "mg", "mk", "ml", "mn", "mr", "ms",
    "my", "ne", "nl", "no", "om", "or", "pa", "pl", "ps", "pt", "ro", "ru", "sa", "sd", "si", "sk", "sl", "so", "sq",
    "sr", "su", "sv", "sw", "ta", "te", "th", "tl", "tr", "ug", "uk", "ur", "uz", "vi", "xh", "yi", "zh"))
"""The languages of XLM-R's training data (CC-100, Conneau et al. 2020: its 100 less six romanised variants, and
Chinese once), on which the default encoder me5-small was built, as :func:`base_lang` names them."""

BY_CODE: dict[str, Language] = {code: lang for lang in LANGUAGES for code in lang.codes()}
"""Each language under each of its :meth:`Language.codes`."""
KNOWN_CODES: frozenset[str] = frozenset({*BY_CODE, *(code for lang in LANGUAGES for code in lang.tatoeba_v1)})
"""Every code of a language xlsent knows: the table's, and the Tatoeba v1 test languages (``yue``, ``arq``, ...)."""
ISO3_TO_ISO1: dict[str, str] = {code: lang.iso1 for code, lang in BY_CODE.items() if len(code) == 3}
"""Three-letter codes (ISO 639-3, Tatoeba file names) -> the two-letter code."""
TATOEBA_CHALLENGE: dict[str, str] = {lang.iso1: lang.challenge for lang in LANGUAGES if lang.challenge}
"""Two-letter code -> the code of its Tatoeba-Challenge eng-X test set."""
TATOEBA_CHALLENGE_TO_V1: dict[str, tuple[str, ...]] = {lang.challenge: lang.tatoeba_v1 for lang in LANGUAGES
                                                       if lang.challenge}
"""Tatoeba-Challenge code -> the Tatoeba v1 test languages it covers (``zho``: cmn, yue, wuu)."""


_BY_NTREX: dict[str, str] = {lang.ntrex_file: lang.iso1 for lang in LANGUAGES}


def language(code: str) -> Language | None:
    """The table's entry for ``code`` (any of its :meth:`Language.codes`), or None."""
    return BY_CODE.get(code)


def ntrex_code(code: str) -> str:
    """The NTREX-128 file code of ``code`` (``ar`` -> ``arb``, ``zh`` -> ``zho_Hans``); a code the table does not
    know is taken as an NTREX code already (``kaz``, ``srp-Latn``)."""
    lang = language(code)
    return lang.ntrex_file if lang is not None else code


def from_ntrex(code: str) -> str:
    """The code xlsent names an NTREX-128 language by: the table's two-letter code where it knows the file code
    (``arb`` -> ``ar``, ``zho_Hans`` -> ``zh``), else the file code itself (``kaz``, ``srp-Latn``).

    >>> from_ntrex("arb"), from_ntrex("deu"), from_ntrex("srp-Latn")
    ('ar', 'de', 'srp-Latn')
    """
    return _BY_NTREX.get(code, code)


def flores_code(code: str) -> str:
    """The FLORES-200 code of a language the table knows (``de`` -> ``deu_Latn``)."""
    lang = language(code)
    if lang is None:
        raise ValueError(f"{code!r} is not in xlsent's language table (xlsent.languages.LANGUAGES): add it there")
    return lang.flores_code


def same_language(code: str) -> set[str]:
    """Every code that names the language of ``code``: its table entry's :meth:`Language.codes` (``de`` -> de,
    deu; ``zh`` -> zh, zho, cmn), or ``code`` alone when the table does not know it.

    >>> sorted(same_language("kat")), sorted(same_language("tlh"))
    (['ka', 'kat'], ['tlh'])
    """
    lang = language(code)
    return lang.codes() if lang is not None else {code}


@dataclass
class TrainedLanguages:
    """The languages ``model`` was trained on (as :func:`base_lang` names them); :meth:`check` warns, once per
    code, about any other."""

    model: str
    codes: frozenset[str]
    warned: set[str] = field(default_factory=set)

    def check(self, lang: str | None) -> None:
        """Log a warning (once per code) when ``lang`` is none of :attr:`codes`: its vectors may be poor."""
        if lang is None or base_lang(lang) in self.codes or lang in self.warned:
            return
        self.warned.add(lang)
        shown = " ".join(sorted(self.codes)) if len(self.codes) <= 20 else f"{len(self.codes)} languages"
        log.warning("%s was not trained on %r (its languages: %s); its vectors for it may be poor", self.model, lang,
                    shown)


_UNKNOWN_WARNED: set[str] = set()
"""The codes outside the table that :func:`check_lang` has warned about (once each per process)."""


def normalise_lang(code: str) -> str:
    """``code`` in its one spelling: the language in lower case, a script subtag capitalised, a region in upper case
    (``EN`` -> ``en``, ``zh-hant`` -> ``zh-Hant``, ``pt_br`` -> ``pt_BR``).

    >>> normalise_lang("EN"), normalise_lang("ZH-hant"), normalise_lang("pt_br"), normalise_lang("srp-latn")
    ('en', 'zh-Hant', 'pt_BR', 'srp-Latn')
    """
    primary, *rest = re.split(r"([-_])", code)
    parts = [primary.lower()]
    for part in rest:
        if part in "-_":
            parts.append(part)
        elif len(part) == 4 and part.isalpha():
            parts.append(part.capitalize())
        elif len(part) == 2 and part.isalpha():
            parts.append(part.upper())
        else:
            parts.append(part.lower())
    return "".join(parts)


def check_lang(code: str | None) -> str | None:
    """``code`` in its one spelling (:func:`normalise_lang`: codes are case-insensitive) if it is a language code
    (ISO 639-1/639-3, optionally with script/region subtags), else an error. A code whose language is not in
    xlsent's table (:data:`LANGUAGES`, or a Tatoeba v1 test language) is taken as given, with a warning once per
    code: it may be a typo, and nothing language-specific (language ID, a map, a data set) knows it.

    >>> check_lang("de"), check_lang("DEU"), check_lang("zh-Hant"), check_lang(None)
    ('de', 'deu', 'zh-Hant', None)
    >>> check_lang("German")
    Traceback (most recent call last):
    ...
    ValueError: 'German' is not a language code: use ISO 639-1 or 639-3, e.g. de or deu (subtags as zh-Hant)
    """
    if code is None:
        return None
    if not isinstance(code, str):
        raise TypeError(f"a language code is a str (de, deu, zh-Hant), not {type(code).__name__} {code!r}")
    if not _CODE.match(code):
        raise ValueError(f"{code!r} is not a language code: use ISO 639-1 or 639-3, e.g. de or deu "
                         "(subtags as zh-Hant)")
    code = normalise_lang(code)
    primary = re.split(r"[-_]", code)[0]
    if primary not in KNOWN_CODES and code not in _UNKNOWN_WARNED:
        _UNKNOWN_WARNED.add(code)
        log.warning("%r is not in xlsent's language table (xlsent.languages): taken as given, a language nothing in "
                    "xlsent knows (check the code: ISO 639-1 or 639-3, e.g. de or deu)", code)
    return code


def base_lang(code: str) -> str:
    """The two-letter primary language of ``code`` where xlsent knows it, else its primary subtag.

    >>> base_lang("deu"), base_lang("zh-Hant"), base_lang("cmn"), base_lang("yor")
    ('de', 'zh', 'zh', 'yor')
    """
    primary = re.split(r"[-_]", code)[0].lower()
    return ISO3_TO_ISO1.get(primary, primary)


def named_among(code: str, known: Sequence[str]) -> str:
    """The code among ``known`` (a task's subsets, dev sets) that ``code`` names: itself in any case, or the one
    spelling its language another way, the code's region or script aside where only its language names one (``DE``,
    ``de-DE`` -> deu; ``code`` when there is none, or several).

    >>> [named_among(code, ["deu", "cmn", "de-en"]) for code in ("DEU", "de-DE", "zh", "DE-EN", "fr")]
    ['deu', 'deu', 'cmn', 'de-en', 'fr']
    """
    if code in known:
        return code
    folded = [subset for subset in known if subset.lower() == code.lower()]
    if len(folded) == 1:
        return folded[0]
    spelled = normalise_lang(code)
    for candidate in (spelled, re.split(r"[-_]", spelled)[0]):
        matches = [subset for subset in known if subset in same_language(candidate)]
        if len(matches) == 1:
            return matches[0]
    return code
