"""The JSON record each benchmark writes to ``results/bench/<bench>.json``; ``xlsent report`` renders it.

A record holds: ``bench`` (its name), ``title``, ``created`` (UTC), ``machine`` (CPU model, cores, RAM GiB,
Python, platform and package versions), ``command`` (as run) and ``arguments`` (every option, defaults
included), ``rows`` and ``notes`` (how the data was made, what a column means). A row is one measured
case: ``case``, ``unit`` (``s`` or ``sentences/s``), ``ours``, ``baseline`` (the baseline measured in the
same run, in the same unit; null when there is none), ``baseline_case`` (what the baseline is), ``ratio``
(ours / baseline), ``checks`` (correctness: identical pairs, minimum cosine, recall) and ``details`` (the
other figures of the case: partial timings, memory).
"""

from __future__ import annotations

import argparse
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
    """One measured case against the baseline measured in the same run; ``ratio`` is ours / baseline."""

    case: str
    unit: str
    ours: float
    baseline: float | None = None
    baseline_case: str = ""
    checks: dict[str, Check] = field(default_factory=dict)
    details: dict[str, float] = field(default_factory=dict)
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
        """Write ``<out_dir>/<bench>.json`` atomically; its path."""
        path = Path(out_dir) / f"{self.bench}.json"
        write_json(path, asdict(self))
        return path


def start_record(bench: str, title: str, script: str, argv: list[str], args: argparse.Namespace,
                 packages: tuple[str, ...], hidden: tuple[str, ...] = ()) -> BenchRecord:
    """A record without rows for ``script`` run with ``argv`` (parsed into ``args``; options in ``hidden`` and
    ``out`` are left out of ``arguments``), on this machine with these ``packages``."""
    command = shlex.join([Path(sys.executable).name, os.path.relpath(script, ROOT), *argv])
    arguments = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in {*hidden, "out"}}
    return BenchRecord(bench, title, command, arguments, machine_info(packages))
