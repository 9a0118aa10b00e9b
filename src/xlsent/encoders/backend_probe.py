"""``auto`` on a CPU class the shipped backend table has no row for: measure once, on the model being loaded.

The shipped table (``backend_table.json``) was measured on the CPU classes we own, with a guard on Tatoeba and
STS17 that takes an hour. Where it has no row for this CPU class (or its guard never checked the model's
architecture), ``auto`` measures on first use instead, in a minute at most, and keeps the result for the next run
(:mod:`xlsent.machine_measures`: ``$XLSENT_HOME/auto/``, keyed by the CPU and the package versions):

- **Candidates**: PyTorch fp32 (the reference), then every backend the model runs on whose runtime is installed:
  the lossless exports, the bf16 ones only where the CPU has native bf16 (elsewhere ``openvino-bf16`` is OpenVINO's
  fp32 graph and ``torch-bf16`` is emulated), then dynamic int8 (``onnx-int8``). Static int8 (``openvino-int8``) is
  left out and recorded so: building it alone took 48 s of the minute on a 2-core AVX2 EPYC;
  ``--backend openvino-int8`` still runs it. A candidate not started within ``ProbeConfig.budget_s`` (exports
  included; they are kept for later use), or that would likely end after it (it may take as long as the slowest
  so far), is recorded as not measured.
- **Speed**: the median sentences/s of ``ProbeConfig.rounds`` encodes of ``probe.txt`` after one warm-up encode.
  ``probe.txt`` is 64 news sentences, four in each of 16 languages in a dozen scripts (NTREX-128, CC BY-SA 4.0: lines
  141, 641, 1141 and 1641 of newstest2019 in arb, ben, deu, ell, fas, heb, hin, jpn, kat, kor, rus, tam, tha, tur,
  zho_Hans and English), none of them in ``calibration.txt``, on which static int8 is calibrated.
- **Guard**: every probe sentence's vector within cosine ``ProbeConfig.min_cosine`` (0.998) of PyTorch fp32's.
  0.998 is the floor the tests hold the bf16 backends to, which lost nothing on the table's guard on AMX, where the
  int8 backends lost 0.8-1.3 points (docs/results.md); on ``probe.txt`` the int8 backends' smallest cosines were
  0.993 (``onnx-int8``) and 0.987 (``openvino-int8``) on a 2-core AVX2 EPYC, the lossless ones 1.0. Where no
  candidate but the reference holds the guard, ``auto`` runs PyTorch fp32.

>>> probe_candidates(("torch", "torch-bf16", "onnx", "onnx-int8"), frozenset({"avx2"}), installed=lambda b: True)
['torch', 'onnx', 'onnx-int8']
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from xlsent.encoders.backends import BackendError, Measurement, auto_backend, available, native_bf16
from xlsent.inference import BACKENDS

log = logging.getLogger(__name__)

PROBE = Path(__file__).with_name("probe.txt")
REFERENCE = "torch"
LEFT_OUT = {"openvino-int8": "static int8's calibration takes longer than the probe (choose it with --backend)"}
"""Backends the probe never times, with the reason its row records."""
WARM_UP = 8
"""Sentences of the untimed first encode on each backend (compiles and allocates what the timed ones reuse)."""


@dataclass(frozen=True)
class ProbeConfig:
    """How ``auto`` measures the backends on a CPU class without a table row (see the module's notes)."""

    rounds: int = 2
    budget_s: float = 60.0
    min_cosine: float = 0.998
    clock: Callable[[], float] = time.perf_counter


class Probed(Protocol):
    """An encoder that switches backends and encodes: what the probe times."""

    def use_backend(self, backend: str) -> None: ...

    def encode(self, sentences: Sequence[str], lang: str | None = None) -> np.ndarray: ...


def probe_sentences() -> list[str]:
    """The shipped probe text (one sentence a line)."""
    return [s for s in PROBE.read_text(encoding="utf-8").splitlines() if s.strip()]


def probe_candidates(runs_on: Sequence[str], flags: frozenset[str] | None = None,
                     installed: Callable[[str], bool] = available) -> list[str]:
    """The backends the probe times, in order: the reference, lossless, bf16 (native bf16 only), int8."""
    bf16 = native_bf16(flags)
    ordered = sorted(runs_on, key=lambda b: (b != REFERENCE, "-int8" in b, "-bf16" in b))
    return [b for b in ordered if b not in LEFT_OUT and installed(b) and (bf16 or not b.endswith("-bf16"))]


def probe_backends(encoder: Probed, runs_on: Sequence[str], config: ProbeConfig = ProbeConfig()
                   ) -> list[dict[str, Any]]:
    """The backend-table rows of ``encoder`` on this machine: measured backends fastest first, each with its
    sentences/s, its smallest cosine to the reference and whether it held the guard; then those not measured (the
    budget spent, or the backend failed here), with the reason. The encoder is left on the reference backend."""
    sentences = probe_sentences()
    clock = config.clock
    deadline = clock() + config.budget_s
    reference: np.ndarray | None = None
    measured: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    longest = 0.0  # seconds of the slowest candidate so far: one that would likely end past the deadline is not begun
    for backend in probe_candidates(runs_on):
        began = clock()
        if began + longest > deadline:
            skipped.append({"backend": backend, "guard": False,
                            "not measured": f"it would have ended past the probe's {config.budget_s:g} s"})
            continue
        try:
            encoder.use_backend(backend)
            encoder.encode(sentences[:WARM_UP])
            rates, vectors = [], np.zeros(0)
            for _ in range(config.rounds):
                start = clock()
                vectors = encoder.encode(sentences)
                rates.append(len(sentences) / max(clock() - start, 1e-9))
        except (BackendError, RuntimeError, OSError, ValueError) as exc:
            log.warning("backend %s could not be measured here: %s", backend, exc)
            skipped.append({"backend": backend, "guard": False, "not measured": str(exc).splitlines()[0]})
            continue
        longest = max(longest, clock() - began)
        reference = vectors if reference is None else reference
        cosine = float(np.min(np.sum(vectors * reference, axis=1)))
        measured.append({"backend": backend, "sentences/s": round(statistics.median(rates), 1),
                         "min cosine": round(cosine, 6), "guard": cosine >= config.min_cosine})
        log.info("auto's probe: %s %.1f sentences/s, min cosine %.6f", backend, measured[-1]["sentences/s"], cosine)
    encoder.use_backend(REFERENCE)
    left_out = [{"backend": b, "guard": False, "not measured": LEFT_OUT[b]} for b in runs_on if b in LEFT_OUT]
    return sorted(measured, key=lambda r: -r["sentences/s"]) + skipped + left_out


def auto_backend_of(encoder: Probed, shape: str, family: str = "", runs_on: Sequence[str] = BACKENDS,
                    *, use_table: bool = True, config: ProbeConfig = ProbeConfig()) -> str:
    """``auto``'s backend for ``encoder`` (a model of ``family``, "" for transformers, and ``shape``, e.g.
    ``xlm-roberta-384x12``, which keys the measurement): the shipped table's row for this CPU class where there is
    one and ``use_table``; else this machine's measurement (made now on first use, see the module's notes)."""
    entry = f"backends {family or 'transformer'} {shape}"
    measure = None if probe_candidates(runs_on) == [REFERENCE] else Measurement(  # nothing to choose between
        entry, lambda: {"rows": probe_backends(encoder, runs_on, config)})
    return auto_backend(family, measure, use_table=use_table)
