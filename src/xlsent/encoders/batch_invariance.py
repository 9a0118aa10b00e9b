"""How much a sentence's vector depends on the other sentences in its batch, and how much each backend may let it.

On fp32 backends padding is masked out exactly, so a vector moves only by float rounding (at most
:data:`FP32_TOLERANCE`). bf16 and int8 backends round the matrix work to 8-bit mantissas or integer steps, and
which rows and padded lengths share a matrix product changes that rounding; ``onnx-int8`` (dynamic int8) also
quantizes each activation tensor with one scale for the whole batch, so a sentence's neighbours set its steps. Their
bounds (:data:`LOSSY_TOLERANCE`) are what ``benchmarks/invariance_bench.py`` measured on this project's CPUs, with
room to spare; the test suite checks the shipped ``auto`` backend against its bound.

>>> tolerance("openvino"), tolerance("openvino-bf16")
(1e-05, 0.002)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xlsent.encoders.base import Encoder

FP32_TOLERANCE = 1e-5
"""Largest absolute difference of one vector's components between two batchings, fp32 backends."""
LOSSY_TOLERANCE = {"torch-bf16": 2e-3, "openvino-bf16": 2e-3, "openvino-int8": 3e-2, "onnx-int8": 5e-2}
"""The same for the lossy backends (measured: docs/results.md, Benchmarks: invariance)."""


def tolerance(backend: str) -> float:
    """The largest difference a vector may show between two batchings on ``backend`` (a name of
    :data:`xlsent.inference.BACKENDS`)."""
    return LOSSY_TOLERANCE.get(backend, FP32_TOLERANCE)


def batch_difference(encoder: Encoder, texts: Sequence[str], chunk_rows: int, lang: str | None = None) -> float:
    """Largest absolute difference between ``texts``' vectors encoded in one call and encoded ``chunk_rows`` at a time
    (other batch neighbours and padded lengths; ``chunk_rows=1``: each sentence alone, unpadded).

    >>> from xlsent.testing import LookupEncoder
    >>> batch_difference(LookupEncoder({"a": [1.0, 0.0], "b": [0.0, 2.0]}), ["a", "b", "a"], 2)
    0.0
    """
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1, not {chunk_rows}")
    whole = encoder.encode(list(texts), lang)
    parts = np.concatenate([encoder.encode(list(texts[i:i + chunk_rows]), lang)
                            for i in range(0, len(texts), chunk_rows)])
    return float(np.abs(whole.astype(np.float64) - parts.astype(np.float64)).max(initial=0.0))
