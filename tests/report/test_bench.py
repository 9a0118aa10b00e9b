"""The Benchmarks section of the report: benchmark records read from disk and rendered against their baselines."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from xlsent.report.bench import bench_section, load_bench_records

BENCH_RECORD = {
    "bench": "mining", "title": "Bitext mining on CPU", "command": "python benchmarks/mining_bench.py --sizes 50000",
    "arguments": {"sizes": [50000]}, "created": "2026-11-23T10:00:00Z",
    "machine": {"cpu": "Test CPU", "cores": 2, "usable_cores": 2, "ram_gib": 7.8, "python": "3.11.7",
                "packages": {"numpy": "2.0.1", "faiss-cpu": None}},
    "rows": [{"case": "exact N=50000 one-pass", "encoder": None, "backend": None, "unit": "s", "ours": 8.5,
              "baseline": 15.0,
              "baseline_case": "faiss-2pass: two-pass search", "ratio": 8.5 / 15.0,
              "checks": {"same pairs as baseline": True}, "details": {"k-NN s": 7.1, "RSS MiB": 312.4, "pairs": 40000}},
             {"case": "approx N=1000000 ivfpqfs", "unit": "s", "ours": 229.4, "baseline": None, "baseline_case": "",
              "ratio": None, "checks": {"recall planted": 0.998, "targets": "PASS"}, "details": {}}],
    "notes": ["Exact rows: RANDOM unit vectors."],
}


def test_bench_section_renders_each_case_against_its_baseline() -> None:
    encode = {"bench": "encode", "created": "2026-11-24T09:00:00Z", "machine": {}, "notes": [],
              "rows": [{"case": "batch 64", "unit": "sentences/s", "ours": 1234.5, "baseline": 99.0, "ratio": 12.47,
                        "checks": {"same vectors": False}, "encoder": "me5-small@8fdd+openvino-bf16",
                        "backend": "openvino-bf16"}]}
    text = "\n".join(bench_section([BENCH_RECORD, encode]))

    assert text.startswith("## Benchmarks\n")
    mining = text[text.index("### mining"):text.index("### encode")]
    assert "### mining: Bitext mining on CPU" in mining
    assert "| case | model | ours | baseline | ratio | checks | details |" in mining
    assert ("| exact N=50000 one-pass | no model | 8.50 s | 15.0 s | 0.567x | same pairs as baseline: yes | "
            "k-NN s: 7.10; RSS MiB: 312; pairs: 40000 |") in mining
    assert ("| approx N=1000000 ivfpqfs | model not recorded | 229 s |  |  | recall planted: 0.998; targets: PASS "
            "|  |") in mining  # an older row: its model is not guessed
    assert ("- Measured 2026-11-23T10:00:00Z on Test CPU, 2 cores (2 usable), 7.8 GiB RAM; Python 3.11.7, "
            "numpy 2.0.1.") in mining
    assert "- Command: `python benchmarks/mining_bench.py --sizes 50000`." in mining
    assert "- Baseline: faiss-2pass: two-pass search." in mining and "- Exact rows: RANDOM unit vectors." in mining

    encode_text = text[text.index("### encode"):]
    assert "### encode\n" in encode_text  # no title: the bare benchmark name
    assert ("| batch 64 | `me5-small@8fdd+openvino-bf16` | 1234 sentences/s | 99.0 sentences/s | 12.5x | "
            "same vectors: **no** |  |") in encode_text
    assert ("- Measured 2026-11-24T09:00:00Z on ?, ? cores (? usable), ? GiB RAM; Python ?." in encode_text
            and "Command" not in encode_text and "Baseline:" not in encode_text)


def test_bench_records_are_read_in_file_name_order_and_others_skipped(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    second = dict(BENCH_RECORD, bench="second")
    (tmp_path / "b.json").write_text(json.dumps(second), encoding="utf-8")
    (tmp_path / "a.json").write_text(json.dumps(BENCH_RECORD), encoding="utf-8")
    (tmp_path / "broken.json").write_text('{"bench": "x"}', encoding="utf-8")
    (tmp_path / "c.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "notes.txt").write_text(json.dumps(BENCH_RECORD), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="xlsent.report.bench"):
        records = load_bench_records(tmp_path)

    assert records == [BENCH_RECORD, second]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2
    assert warnings[0].endswith("broken.json: skipped, not a benchmark record")
    assert "c.json: skipped, not JSON" in warnings[1]
    assert load_bench_records(tmp_path / "missing") == []


@pytest.mark.parametrize(("edit", "problem"), [
    ({"rows": [{"unit": "s", "ours": 1.0}]}, "rows[0] lacks case"),
    ({"rows": [{"case": "a", "unit": "s"}]}, "rows[0] lacks ours"),
    ({"machine": "box"}, 'machine is "box", not an object'),
    ({"machine": {"packages": ["numpy"]}}, 'machine.packages is ["numpy"], not an object'),
    ({"rows": [{"case": "a", "unit": "s", "ours": 1.0, "checks": [1]}]}, "rows[0].checks is [1], not an object"),
    ({"rows": [{"case": "a", "unit": "s", "ours": 1.0, "encoder": 5}]}, "rows[0].encoder is 5, not a string or null"),
    ({"rows": [{"case": "a", "unit": "s", "ours": "fast"}]}, 'rows[0].ours is "fast", not a number'),
    ({"rows": [{"case": "a", "unit": "s", "ours": 1.0, "ratio": "2"}]}, 'rows[0].ratio is "2", not a number'),
    ({"notes": "n"}, 'notes is "n", not a list'),
])
def test_malformed_bench_records_are_skipped_naming_the_file_and_field(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, edit: dict[str, object], problem: str) -> None:
    """A record of the right keys but a field of the wrong type crashed the report (KeyError, AttributeError,
    "Unknown format code") instead of being skipped like a file that is not JSON."""
    (tmp_path / "a.json").write_text(json.dumps(BENCH_RECORD), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps({**BENCH_RECORD, **edit}), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="xlsent.report.bench"):
        records = load_bench_records(tmp_path)
    assert records == [BENCH_RECORD]
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith(f"{tmp_path / 'b.json'}: skipped, a malformed benchmark record: {problem}")
