"""What ``auto`` measured on this machine, kept for the next run: one JSON file per CPU and set of package versions.

The shipped tables (the backend table, the k-NN precision record) were measured on the CPU classes we own. On a
CPU class without a row, ``auto`` measures once on first use (a minute at most) and keeps the result in
``$XLSENT_HOME/auto/<class>-<key>.json``, ``<key>`` a digest of the CPU's model name and the versions of the packages
that ran the measurement (:data:`PACKAGES`): a new CPU or an upgrade measures again. Each file holds one object per
measured entry; processes that start together (Ray workers, servers) take a file lock, so one of them measures and
the others read its result. ``XLSENT_AUTO_MEASURE=0`` turns measuring off: ``auto`` then takes the lossless default,
as before there was a measurement.

>>> machine_key("avx2").startswith("avx2-")
True
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import Any

from filelock import FileLock

from xlsent.atomic import write_json
from xlsent.paths import xlsent_home

log = logging.getLogger(__name__)

MEASURE_ENV = "XLSENT_AUTO_MEASURE"
PACKAGES = ("xlsent", "numpy", "torch", "onnxruntime", "openvino", "nncf")
"""The packages whose versions key a measurement: the runtimes that were timed, and xlsent, whose code timed them."""
OFF = ("0", "off", "false", "no", "n", "f")
ON = ("1", "on", "true", "yes", "y", "t")
"""The values of ``$XLSENT_AUTO_MEASURE`` that turn measuring off and on (any case, spaces around ignored)."""


def measuring_enabled() -> bool:
    """Whether ``auto`` may measure on first use: ``$XLSENT_AUTO_MEASURE`` unset, empty or one of :data:`ON`, not
    one of :data:`OFF`; ValueError naming the variable and the accepted values for anything else."""
    value = os.environ.get(MEASURE_ENV, "")
    switch = value.strip().lower()
    if switch in OFF:
        return False
    if not switch or switch in ON:
        return True
    raise ValueError(f"{MEASURE_ENV}={value!r}: not a switch; set it to one of {', '.join(OFF)} (no measuring: "
                     f"auto takes the lossless default) or {', '.join(ON)} (measure on first use), or unset it")


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (``"unknown"`` where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return "unknown"


def package_versions() -> dict[str, str]:
    """The installed version of each of :data:`PACKAGES` (``"absent"`` where one is not installed)."""
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return versions


def machine_key(klass: str) -> str:
    """``<klass>-<digest>``: the CPU class and a digest of the CPU's model name and :func:`package_versions`."""
    described = json.dumps({"cpu": cpu_model(), "class": klass, "packages": package_versions()}, sort_keys=True)
    return f"{klass}-{hashlib.sha256(described.encode()).hexdigest()[:12]}"


def measures_path(klass: str) -> Path:
    """The file of this machine's measurements for CPU class ``klass``."""
    return xlsent_home() / "auto" / f"{machine_key(klass)}.json"


def _entries(path: Path) -> dict[str, Any]:
    """The measured entries kept in ``path``; none where it is absent, and none (logged) where it cannot be read."""
    if not path.is_file():
        return {}
    try:
        entries = json.loads(path.read_text(encoding="utf-8")).get("entries", {})
    except (OSError, ValueError, AttributeError) as exc:
        log.warning("%s: not a file of auto's measurements (%s); measuring again", path, exc)
        return {}
    return entries if isinstance(entries, dict) else {}


def remembered(klass: str, entry: str) -> dict[str, Any] | None:
    """The measurement ``entry`` kept for this machine, or ``None``; a file that cannot be read is logged and read
    as empty (the next measurement replaces it)."""
    found = _entries(measures_path(klass)).get(entry)
    return found if isinstance(found, dict) else None


def measure_once(klass: str, entry: str, measure: Callable[[], dict[str, Any]], notice: str
                 ) -> tuple[dict[str, Any], Path]:
    """The measurement ``entry`` of this machine: the kept one, else ``measure()``'s (``notice`` logged as a warning
    first, since it takes a while), kept for the next run (under a lock, so concurrent processes measure once); and
    the file that holds it."""
    path = measures_path(klass)
    found = remembered(klass, entry)
    if found is not None:
        return found, path
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path.with_name(f".{path.name}.lock")):
        entries = _entries(path)
        if isinstance(entries.get(entry), dict):
            return entries[entry], path
        log.warning("%s (kept under %s; %s=0 skips measuring)", notice, path.parent, MEASURE_ENV)
        record = measure() | {"date": date.today().isoformat()}
        write_json(path, {"cpu": cpu_model(), "class": klass, "packages": package_versions(),
                          "entries": {**entries, entry: record}})
        log.info("kept %s's measurement in %s", entry, path)
    return record, path
