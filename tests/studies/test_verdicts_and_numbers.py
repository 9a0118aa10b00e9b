"""Verdicts as structured fields, and the evidence's number formatter."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.evaluation.results import TaskResult
from xlsent.report.formatting import verdict_text
from xlsent.report.page import task_section
from xlsent.studies.numbers import apart, decimals, listing, versus
from xlsent.studies.verdict import Verdict


def test_verdicts_round_trip_as_json_fields_and_render_as_before() -> None:
    v = Verdict("A beats B", np.float64(2.0) > np.float64(1.0), "2.0 vs 1.0")
    assert v.held is True and type(v.held) is bool  # numpy booleans are not JSON
    assert v.to_json() == {"claim": "A beats B", "held": True, "evidence": "2.0 vs 1.0", "source": "paper"}
    assert Verdict.from_json(v.to_json()) == v
    assert verdict_text(v.to_json()) == "HELD here: A beats B (2.0 vs 1.0)"
    undecided = Verdict("C keeps D", None, "no rows", "xlsent")
    assert verdict_text(undecided.to_json()) == ("INCONCLUSIVE here (xlsent check, not a paper claim): C keeps D "
                                                 "(no rows)")
    with pytest.raises(ValueError, match="source"):
        Verdict("x", True, "y", "blog")


def test_numbers_get_the_decimals_that_tell_them_apart() -> None:
    assert versus(73.04, 73.03) == "73.04 vs 73.03" and versus(70.0, 60.0) == "70.0 vs 60.0"
    assert versus(1.000012, 1.000011) == "1.0000 vs 1.0000"  # at most four decimals
    assert listing({"a": 73.06, "b": 73.14, "c": 72.96}) == "a 73.06, b 73.14, c 72.96"
    assert decimals([5.0, 5.0, 5.05]) == 2 and apart(0.21, 0.24)(1 / 3) == "0.33"


def test_the_report_lists_a_results_verdicts_after_its_notes() -> None:
    verdicts = [Verdict("A beats B", False, "1.0 vs 2.0").to_json(),
                Verdict("A keeps C", True, "3", "xlsent").to_json()]
    result = TaskResult("toy", "m@1", "d", 1.0, "score, row 'A'", {"A": {"score": 1.0}}, notes=["a note"],
                        verdicts=verdicts)
    lines = task_section("toy", "x", [result], {})
    at = lines.index("  - a note")
    assert lines[at + 1:at + 3] == ["  - DID NOT HOLD here: A beats B (1.0 vs 2.0)",
                                    "  - HELD here (xlsent check, not a paper claim): A keeps C (3)"]
