"""The dev simulations of a new language (``xlsent.studies.new_language``) and the verdicts of the bitext studies."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.methods.distill.study import BITEXT_METHOD_ROW, DEFAULT_ROW, bitext_run, claims_bitext
from xlsent.methods.laser.study import BITEXT_ROW, NEW_ERROR, NEW_F1, NO_BITEXT_ROW, SHIPPED_ERROR
from xlsent.methods.laser.study import claims_bitext as laser_claims
from xlsent.studies.new_language import SIMULATED, evaluation_pairs, main, user_pairs, vowel_cipher


def test_the_cipher_permutes_vowels_only_and_keeps_case() -> None:
    assert vowel_cipher("Ankara, 2024: Evet!") == "Inkiri, 2024: Avat!"
    assert vowel_cipher("xyz 123") == "xyz 123"


@pytest.mark.data
def test_user_pairs_never_share_a_sentence_with_the_test_pairs(parallel_data: Path) -> None:
    root = parallel_data
    lang = SIMULATED["qaa"]
    test_xx, test_en = evaluation_pairs(lang, root)
    assert len(test_xx) == 997 and test_xx[0] == vowel_cipher(test_xx[0].translate(str.maketrans("iaeuoIAEUO",
                                                                                                 "aeiouAEIOU")))
    for n in (300, 3000):
        xx, en = user_pairs(lang, n, root)
        assert len(xx) == n and not set(xx) & set(test_xx) and not set(en) & set(test_en)
    assert user_pairs(lang, 300, root) == user_pairs(lang, 300, root)
    with pytest.raises(ValueError, match="only 1000 pairs to simulate a user's 3000"):
        user_pairs(SIMULATED["ug"], 3000, root)


@pytest.mark.data
def test_the_command_writes_a_users_tsv(parallel_data: Path, tmp_path: Path) -> None:
    assert main(["qab", "--pairs", "120", "--out", str(tmp_path / "u.tsv"), "--data", str(parallel_data)]) == 0
    lines = (tmp_path / "u.tsv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 120 and all(line.count("\t") == 1 for line in lines)


def test_bitext_runs_parse_and_refuse_unknown_languages_and_variants() -> None:
    lang, n, variant = bitext_run("ug:1000")
    assert (lang.code, n, variant) == ("ug", 1000, "")
    assert bitext_run("qaa:300:teacher")[2] == "teacher"
    with pytest.raises(ValueError, match="expected LANG:PAIRS"):
        bitext_run("kab:300")
    with pytest.raises(ValueError, match="VARIANT one of share0, teacher, distill3"):
        bitext_run("qaa:300:teachers")


def rows(qaa_error: float, others: float) -> dict[str, dict[str, float]]:
    base = {"error qaa": 50.0, "error qab": 40.0, "error ug": 10.0}
    return {DEFAULT_ROW: base, "me5-distill (shipped)": {**base, "error qaa": 48.0},
            BITEXT_METHOD_ROW: {"error qaa": qaa_error, "error qab": 40.0 - 10 * others, "error ug": 10.0 + others,
                                "pairs given": 300.0}}


@pytest.mark.parametrize(("qaa_error", "others", "held"), [
    (36.0, 0.5, [True, True]),    # 36 <= 0.75 x 48 (the better baseline), ug +0.5
    (36.5, 0.5, [False, True]),   # not a quarter below 48
    (30.0, 1.5, [True, False]),   # ug loses 1.5 points (qab, enciphered like qaa, is not counted)
])
def test_the_distill_bitext_verdicts_compare_with_the_better_baseline(qaa_error: float, others: float,
                                                                     held: list[bool]) -> None:
    assert [v.held for v in claims_bitext(rows(qaa_error, others), "error qaa", BITEXT_METHOD_ROW)] == held


def test_more_pairs_help_is_checked_within_each_recipe_and_never_across() -> None:
    table = rows(30.0, 0.0)
    teacher = ", ranked against the teacher"
    for n, plain, ranked in ((1000, 25.0, 28.0), (3000, 27.0, 20.0)):
        table[f"qaa {n} pairs"] = {**table[BITEXT_METHOD_ROW], "error qaa": plain, "pairs given": float(n)}
        table[f"qaa {n} pairs{teacher}"] = {**table[f"qaa {n} pairs"], "error qaa": ranked}
    table[f"qaa 300 pairs{teacher}"] = {**table[BITEXT_METHOD_ROW], "error qaa": 31.0}
    table["qaa 300 pairs share 0"] = {**table[BITEXT_METHOD_ROW], "error qaa": 10.0}
    more = {v.claim: (v.held, v.evidence) for v in claims_bitext(table, "error qaa", BITEXT_METHOD_ROW)
            if "more pairs" in v.claim}
    assert more == {"qaa: the error falls as the user gives more pairs":
                    (False, "300 pairs 30.0, 1000 pairs 25.0, 3000 pairs 27.0"),
                    f"qaa{teacher}: the error falls as the user gives more pairs":
                    (True, "300 pairs 31.0, 1000 pairs 28.0, 3000 pairs 20.0")}


def test_the_laser_bitext_verdicts_compare_at_equal_minutes() -> None:
    mine = {NEW_ERROR: 40.0, NEW_F1: 50.0, SHIPPED_ERROR: 5.0}
    verdicts = laser_claims({BITEXT_ROW: mine, NO_BITEXT_ROW: {NEW_ERROR: 80.0, NEW_F1: 10.0, SHIPPED_ERROR: 4.5}},
                            NEW_ERROR, BITEXT_ROW)
    assert [v.held for v in verdicts] == [True, True, True]
    verdicts = laser_claims({BITEXT_ROW: {**mine, SHIPPED_ERROR: 6.0},
                             NO_BITEXT_ROW: {NEW_ERROR: 30.0, NEW_F1: 60.0, SHIPPED_ERROR: 4.5}}, NEW_ERROR, BITEXT_ROW)
    assert [v.held for v in verdicts] == [False, False, False]
