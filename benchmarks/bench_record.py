"""The JSON record each benchmark writes to ``results/bench/<bench>.json``; ``xlsent report`` renders it.

A record holds: ``bench`` (its name), ``title``, ``created`` (UTC), ``machine`` (CPU model, cores, RAM GiB,
Python, platform and package versions), ``command`` (as run) and ``arguments`` (every option, defaults
included), ``rows`` and ``notes`` (how the data was made, what a column means). A row is one measured
case: ``case``, ``unit`` (``s`` or ``sentences/s``), ``ours``, ``baseline`` (the baseline measured in the
same run, in the same unit; null when there is none), ``baseline_case`` (what the baseline is), ``ratio``
(ours / baseline), ``checks`` (correctness: identical pairs, minimum cosine, recall), ``details`` (the
other figures of the case: partial timings, memory), ``encoder`` (the id of the model it timed, ``name@checksum`` with
the suffix of a lossy backend; null for a case that times no model, such as synthetic vectors) and ``backend`` (the
backend that model ran on; null for an encoder without a choice of backend).

When a benchmark times a model whose weights changed (same name, another checksum), the rows of the other records
in its folder that timed the old weights are dropped (:func:`drop_stale_rows`): a part run such as
``embed-trained.json`` never leaves ``embed.json`` showing a model that no longer exists beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from xlsent.atomic import write_json
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.inference import fp32_id
from xlsent.version import __version__

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "results" / "bench"
OUT_HELP = "folder of the JSON record <bench>.json that `xlsent report` renders (default: results/bench/)"
Check = bool | int | float | str


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo``; else what :mod:`platform` knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return value.strip()
    return platform.processor() or platform.machine()


def ram_gib() -> float | None:
    """Physical memory in GiB (None where the OS does not say)."""
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (AttributeError, ValueError, OSError):
        return None


def machine_info(packages: tuple[str, ...]) -> dict[str, Any]:
    """CPU model, cores (all, and usable by this process), RAM, Python, platform and ``packages``' versions."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "usable_cores": usable, "ram_gib": ram_gib(),
            "python": platform.python_version(), "platform": platform.platform(), "xlsent": __version__,
            "packages": versions}


@dataclass
class BenchRow:
    """One measured case against the baseline measured in the same run; ``ratio`` is ours / baseline; ``encoder``
    and ``backend`` name the model timed (None: the case times no model)."""

    case: str
    unit: str
    ours: float
    baseline: float | None = None
    baseline_case: str = ""
    checks: dict[str, Check] = field(default_factory=dict)
    details: dict[str, float] = field(default_factory=dict)
    encoder: str | None = None
    backend: str | None = None
    ratio: float | None = field(init=False)

    def __post_init__(self) -> None:
        self.ratio = self.ours / self.baseline if self.baseline else None


@dataclass
class BenchRecord:
    """What one run of a benchmark measured, and on what; :meth:`write` saves it for ``xlsent report``."""

    bench: str
    title: str
    command: str
    arguments: dict[str, Any]
    machine: dict[str, Any]
    rows: list[BenchRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))

    def write(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write ``<out_dir>/<bench>.json`` atomically, then drop the rows of the folder's other records that timed
        an older version of a model this record timed (:func:`drop_stale_rows`); its path."""
        path = Path(out_dir) / f"{self.bench}.json"
        write_json(path, asdict(self))
        for message in drop_stale_rows(path):
            print(message)
        return path


def timed(encoder: Encoder) -> dict[str, str | None]:
    """The ``encoder`` and ``backend`` fields of a row that timed ``encoder`` (pass as ``**timed(encoder)``); the
    backend is None for an encoder that has no choice of backend (mUSE)."""
    backend = getattr(encoder, "backend", None)
    return {"encoder": encoder_id(encoder), "backend": None if backend is None else str(backend)}


def weights_by_name(rows: list[dict[str, Any]]) -> dict[str, str]:
    """The weights (``name@checksum``, any backend) that ``rows`` timed, by model name.

    >>> weights_by_name([{"encoder": "m@2+openvino-bf16"}, {"encoder": None}, {"case": "old, no model recorded"}])
    {'m': 'm@2'}
    """
    ids = [fp32_id(row["encoder"]) for row in rows if row.get("encoder")]
    return {weights.partition("@")[0]: weights for weights in ids}


def is_stale(row: dict[str, Any], current: dict[str, str]) -> bool:
    """Whether ``row`` timed other weights of a model named in ``current`` (see :func:`weights_by_name`).

    >>> is_stale({"encoder": "m@1"}, {"m": "m@2"}), is_stale({"encoder": "m@2+torch-bf16"}, {"m": "m@2"})
    (True, False)
    >>> is_stale({"encoder": "other@1"}, {"m": "m@2"}), is_stale({"case": "no model recorded"}, {"m": "m@2"})
    (False, False)
    """
    if not row.get("encoder"):
        return False
    weights = fp32_id(row["encoder"])
    return current.get(weights.partition("@")[0], weights) != weights


def drop_stale_rows(written: Path) -> list[str]:
    """In the other records of ``written``'s folder, drop the rows that timed a model of the same name as one
    ``written`` timed but other weights (rows that do not record their model are kept); a record left without rows
    is removed. What was dropped, one message per record changed."""
    current = weights_by_name(json.loads(written.read_text(encoding="utf-8"))["rows"])
    messages = []
    for path in sorted(written.parent.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if path == written or not isinstance(record, dict) or not isinstance(record.get("rows"), list):
            continue
        stale = [row for row in record["rows"] if is_stale(row, current)]
        if not stale:
            continue
        what = (f"{len(stale)} row(s) timing {', '.join(sorted({row['encoder'] for row in stale}))}, dropped when "
                f"{written.name} timed {', '.join(sorted(current.values()))}")
        record["rows"] = [row for row in record["rows"] if not is_stale(row, current)]
        if record["rows"]:
            record["notes"] = [*record.get("notes", []), what]
            write_json(path, record)
        else:
            path.unlink()
        messages.append(f"{path.name}: {what}" + ("" if record["rows"] else "; no row left: removed"))
    return messages


def start_record(bench: str, title: str, script: str, argv: list[str], args: argparse.Namespace,
                 packages: tuple[str, ...], hidden: tuple[str, ...] = ()) -> BenchRecord:
    """A record without rows for ``script`` run with ``argv`` (parsed into ``args``; options in ``hidden`` and
    ``out`` are left out of ``arguments``), on this machine with these ``packages``."""
    command = shlex.join([Path(sys.executable).name, os.path.relpath(script, ROOT), *argv])
    arguments = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in {*hidden, "out"}}
    return BenchRecord(bench, title, command, arguments, machine_info(packages))


def load_model(parser: argparse.ArgumentParser, model: str, backend: str) -> Encoder:
    """``model`` (``--model``) on ``backend``, loaded before anything is timed; one that does not load (no such name
    or folder, not a model, a backend it does not run on) is ``parser``'s usage error (exit 2), not a traceback."""
    from xlsent.encoders.registry import load_encoder

    try:
        return load_encoder(model, backend)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(f"--model {model}: {exc}")
