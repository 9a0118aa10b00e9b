"""The one language table: every code system it maps, checked against itself and against the data files' names."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from xlsent.data.parallel import ntrex_languages, tatoeba_challenge_languages
from xlsent.data.tatoeba import tatoeba_languages
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.languages import (
    BY_CODE,
    ISO3_TO_ISO1,
    LANGUAGES,
    TATOEBA_CHALLENGE,
    TATOEBA_CHALLENGE_TO_V1,
    XLMR_LANGS,
    TrainedLanguages,
    base_lang,
    flores_code,
    language,
    ntrex_code,
    same_language,
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


def test_every_command_takes_the_same_codes() -> None:
    assert same_language("de") == same_language("deu") == {"de", "deu"}
    assert same_language("kat") == same_language("ka") == {"ka", "kat"}  # Tatoeba's languages beyond the 33
    assert same_language("lvs") == {"lv", "lav", "lvs"} and same_language("tlh") == {"tlh"}
    assert all(code in BY_CODE for code in XLMR_LANGS) and len(XLMR_LANGS) == 93


def test_a_language_outside_the_training_ones_is_warned_about_once(caplog: pytest.LogCaptureFixture) -> None:
    trained = TrainedLanguages("me5-small", XLMR_LANGS)
    with caplog.at_level(logging.WARNING):
        for lang in ("de", "kat", "cmn", "zh-Hant", None, "tlh", "tlh", "kab"):
            trained.check(lang)
    assert [r.getMessage()[:38] for r in caplog.records] == ["me5-small was not trained on 'tlh' (it",
                                                             "me5-small was not trained on 'kab' (it"]


def test_a_transformer_built_with_its_languages_warns(tiny_model_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    quiet, told = TransformerEncoder(tiny_model_dir), TransformerEncoder(tiny_model_dir, languages=XLMR_LANGS)
    with caplog.at_level(logging.WARNING):
        quiet.encode(["qapla'"], "tlh")
        assert not caplog.records
        told.encode(["qapla'"], "tlh")
    assert "was not trained on 'tlh'" in caplog.text


@pytest.mark.integration
def test_the_default_encoder_warns_about_a_language_it_was_not_trained_on(caplog: pytest.LogCaptureFixture) -> None:
    from xlsent.api import load

    with caplog.at_level(logging.WARNING):
        load("me5-small").encode(["qapla'"], "tlh")
    assert "me5-small was not trained on 'tlh'" in caplog.text


@pytest.fixture(scope="module")
def root() -> Path:
    dataset_or_skip("tatoeba_v1")
    return dataset_or_skip("parallel")


@pytest.mark.data
def test_the_table_names_the_files_that_exist(root: Path) -> None:
    ntrex = set(ntrex_languages(root))
    assert {lang.ntrex_file for lang in LANGUAGES if lang.challenge or lang.iso1 in ("en", "kk")} <= ntrex
    assert {"aze-Latn", "srp-Cyrl", "kat", "afr"} <= {lang.ntrex_file for lang in LANGUAGES} & ntrex
    assert sorted(TATOEBA_CHALLENGE.values()) == tatoeba_challenge_languages(root)
    assert {v1 for codes in TATOEBA_CHALLENGE_TO_V1.values() for v1 in codes} <= set(tatoeba_languages(root))
