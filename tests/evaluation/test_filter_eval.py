"""``xlsent eval filter``: which dev pairs ``--langs`` names."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from xlsent.evaluation.filter import Filter


@pytest.mark.parametrize(("langs", "pairs"), [(["DE"], ["de-en", "de-fr"]), (["de-EN"], ["de-en"]),
                                              (["deu"], ["de-en", "de-fr"]), (["ZH-en", "hin"], ["zh-en", "hi-en"])])
def test_langs_name_dev_pairs_in_any_case_or_spelling(tmp_path: Path, langs: list[str], pairs: list[str]) -> None:
    rows = Filter(None, tmp_path, threshold=math.nan).select(langs)
    assert sorted({row.split(":")[0] for row in rows}) == sorted(pairs)


def test_an_unknown_pair_is_named_as_given(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown dev pair\(s\) \['XX-en'\]"):
        Filter(None, tmp_path, threshold=math.nan).select(["de", "XX-en"])


def test_an_unknown_pair_is_the_error_that_eval_explains_for_several_tasks(tmp_path: Path) -> None:
    from xlsent.evaluation.task import UnknownSubsetError

    with pytest.raises(UnknownSubsetError):
        Filter(None, tmp_path, threshold=math.nan).select(["XX-en"])
