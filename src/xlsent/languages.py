"""Language codes: which forms xlsent accepts, and the ISO 639-3 spellings of two-letter codes it knows."""

from __future__ import annotations

import re

_CODE = re.compile(r"^[a-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")

ISO3_TO_ISO1 = {
    "ara": "ar", "zho": "zh", "cmn": "zh", "nld": "nl", "eng": "en", "fra": "fr", "deu": "de", "ita": "it",
    "jpn": "ja", "kor": "ko", "pol": "pl", "por": "pt", "spa": "es", "tha": "th", "tur": "tr", "rus": "ru",
}
"""Three-letter codes (as in Tatoeba file names) of the languages whose two-letter codes encoders list."""


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

    >>> base_lang("deu"), base_lang("zh-Hant"), base_lang("swh")
    ('de', 'zh', 'swh')
    """
    primary = re.split(r"[-_]", code)[0].lower()
    return ISO3_TO_ISO1.get(primary, primary)
