"""The one language table: every code system it maps, checked against itself and against the data files' names."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.data.parallel import ntrex_languages, tatoeba_challenge_languages
from xlsent.data.tatoeba import tatoeba_languages
from xlsent.languages import (
    BY_CODE,
    ISO3_TO_ISO1,
    LANGUAGES,
    TATOEBA_CHALLENGE,
    TATOEBA_CHALLENGE_TO_V1,
    base_lang,
    flores_code,
    language,
    ntrex_code,
)
from xlsent.testing import dataset_or_skip


def test_every_code_names_one_language() -> None:
    assert len(BY_CODE) == sum(len(lang.codes()) for lang in LANGUAGES)  # no code shared by two languages
    for lang in LANGUAGES:
        assert len(lang.iso1) == 2 and len(lang.iso3) == 3
        assert all(language(code) is lang and base_lang(code) == lang.iso1 for code in lang.codes())
        assert base_lang(lang.flores_code) == lang.iso1 and base_lang(lang.ntrex_file) == lang.iso1


def test_the_codes_of_the_data_sets() -> None:
    assert (ntrex_code("ar"), ntrex_code("zh"), ntrex_code("en"), ntrex_code("fa")) == ("arb", "zho_Hans", "eng", "fas")
    assert ntrex_code("ara") == ntrex_code("arb") == "arb" and ntrex_code("zho_Hant") == "zho_Hant"  # unknown: as is
    assert (flores_code("zh"), flores_code("ar"), flores_code("de"), flores_code("sw")) == (
        "zho_Hans", "arb_Arab", "deu_Latn", "swh_Latn")
    with pytest.raises(ValueError, match="language table"):
        flores_code("yor")
    assert TATOEBA_CHALLENGE["zh"] == "zho" and "en" not in TATOEBA_CHALLENGE and len(TATOEBA_CHALLENGE) == 31
    assert TATOEBA_CHALLENGE_TO_V1["msa"] == ("ind", "zsm", "max") and TATOEBA_CHALLENGE_TO_V1["deu"] == ("deu",)
    assert ISO3_TO_ISO1["cmn"] == "zh" and base_lang("zho-Hant") == "zh" and base_lang("yor") == "yor"


@pytest.fixture(scope="module")
def root() -> Path:
    dataset_or_skip("tatoeba_v1")
    return dataset_or_skip("parallel")


@pytest.mark.data
def test_the_table_names_the_files_that_exist(root: Path) -> None:
    ntrex = set(ntrex_languages(root))
    assert {lang.ntrex_file for lang in LANGUAGES} <= ntrex
    assert sorted(TATOEBA_CHALLENGE.values()) == tatoeba_challenge_languages(root)
    assert {v1 for codes in TATOEBA_CHALLENGE_TO_V1.values() for v1 in codes} <= set(tatoeba_languages(root))
