"""Settings of ``xlsent serve``: address, API key, request limits, batching, queue and timeouts.

Every field has a default fit for one CPU machine; a TOML file (``xlsent serve --config serve.toml``) overrides
any of them by name, e.g. ``max_inputs = 512``.

>>> ServeSettings(port=9000).port
9000
>>> ServeSettings(max_wait_ms=-1)
Traceback (most recent call last):
...
ValueError: invalid serve settings: max_wait_ms must be >= 0 (got -1)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsent.inference import DEFAULT_BATCH_TOKENS
from xlsent.settings_file import read_settings

API_KEY_ENV = "XLSENT_API_KEY"
OPENAI_MAX_INPUTS = 2048
"""The OpenAI embeddings API's most inputs in one request (its schema's ``maxItems``)."""


@dataclass(frozen=True)
class ServeSettings:
    """How the server listens, what it accepts, and how it batches.

    Limits are checked before any work: ``max_body_bytes`` on the raw body, then per request the number of
    inputs, characters (``max_input_chars`` each, ``max_request_chars`` together) and tokens (``max_input_tokens``
    each, ``max_request_tokens`` together). ``max_matrix_cells`` bounds ``len(src) * len(tgt)`` of
    ``/v1/similarity`` and ``/v1/align``'s pair mode (document mode aligns in a band, linear in the lengths; its
    token limits bound the lines, or sentences, sent, not the multi-line spans the alignment adds).

    Batching: a model's worker takes queued requests together until they hold ``batch_collect_tokens`` tokens or
    the oldest of them has waited ``max_wait_ms``, and encodes them in token-budget batches of
    ``batch_tokens`` padded tokens (as ``xlsent embed``); ``inference_threads`` such micro-batches are encoded at
    once (two: while one call finishes its last batches on one core, the next keeps the other busy). The queue
    holds at most ``max_queue_requests`` requests and ``max_queue_tokens`` tokens per model; beyond that, 429 with
    ``Retry-After``.

    Time: a request waits at most ``request_timeout_s`` for its vectors (then 503); a client has
    ``header_timeout_s`` to send the headers of a request (counted from the connection opening or the previous
    response; then the connection is closed) and ``body_timeout_s`` to send its body (then 408); on shutdown,
    queued work gets ``shutdown_grace_s`` to finish before what is left is answered 503.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    api_key_env: str = API_KEY_ENV
    max_body_bytes: int = 2 * 2**20
    max_inputs: int = OPENAI_MAX_INPUTS
    max_input_chars: int = 50_000
    max_request_chars: int = 1_000_000
    max_input_tokens: int = 8192
    max_request_tokens: int = 262_144
    max_matrix_cells: int = 1_048_576
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    batch_collect_tokens: int = 16384
    inference_threads: int = 2
    max_wait_ms: float = 5.0
    max_queue_requests: int = 1024
    max_queue_tokens: int = 524_288
    request_timeout_s: float = 60.0
    body_timeout_s: float = 10.0
    header_timeout_s: float = 10.0
    shutdown_grace_s: float = 10.0
    warmup: bool = True

    def __post_init__(self) -> None:
        positive = ("max_body_bytes", "max_inputs", "max_input_chars", "max_request_chars",
                    "max_input_tokens", "max_request_tokens", "max_matrix_cells", "batch_tokens",
                    "batch_collect_tokens", "inference_threads", "max_queue_requests", "max_queue_tokens",
                    "request_timeout_s",
                    "body_timeout_s", "header_timeout_s")
        problems = [f"{name} must be > 0 (got {getattr(self, name)})" for name in positive
                    if not getattr(self, name) > 0]
        problems += [f"{name} must be >= 0 (got {getattr(self, name)})" for name in ("max_wait_ms", "shutdown_grace_s")
                     if not getattr(self, name) >= 0]
        if not 0 <= self.port <= 65535:
            problems.append(f"port must be in 0..65535, 0 picking a free one (got {self.port})")
        if self.max_queue_tokens < self.max_request_tokens:
            problems.append(f"max_queue_tokens ({self.max_queue_tokens}) must be at least max_request_tokens "
                            f"({self.max_request_tokens}), or a largest request could never be queued")
        if self.max_inputs > OPENAI_MAX_INPUTS:
            problems.append(f"max_inputs must be at most {OPENAI_MAX_INPUTS}, the OpenAI API's limit "
                            f"(got {self.max_inputs})")
        if problems:
            raise ValueError("invalid serve settings: " + "; ".join(problems))

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> ServeSettings:
        """Settings from the TOML file ``path``, then ``overrides``: a key that is no setting, a value of the wrong
        type (:func:`xlsent.settings_file.read_settings`) or out of range is an error naming the file."""
        values = read_settings(cls, path, what="serve setting")
        try:
            return cls(**{**values, **overrides})
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
