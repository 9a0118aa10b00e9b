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

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsent.inference import DEFAULT_BATCH_TOKENS
from xlsent.settings_file import read_settings

API_KEY_ENV = "XLSENT_API_KEY"
OPENAI_MAX_INPUTS = 2048
"""The OpenAI embeddings API's most inputs in one request (its schema's ``maxItems``)."""
MAX_DURATION_S = 86_400
"""The longest any time setting may be: a day (far below ``threading.TIMEOUT_MAX``, the longest wait a thread
takes)."""
DURATIONS_S = ("request_timeout_s", "body_timeout_s", "header_timeout_s", "shutdown_grace_s")


@dataclass(frozen=True)
class Given:
    """How the user gave a setting, for the messages about it: a command-line flag (``Given("--port")``), a key of
    a settings file (``Given("port", Path("serve.toml"))``) or a field set in code (``Given("port")``).

    >>> Given("--port").value(8000), Given("port", Path("serve.toml")).value(8000)
    ('--port 8000', 'serve.toml: port = 8000')
    >>> Given("--port").where, Given("port", Path("serve.toml")).where
    ('--port', 'port in serve.toml')
    """

    key: str
    file: Path | None = None

    def value(self, value: object) -> str:
        """The setting holding ``value``, as the user wrote it."""
        return f"{self.file}: {self.key} = {value!r}" if self.file else f"{self.key} {shlex.quote(str(value))}"

    @property
    def where(self) -> str:
        """Where the user changes the setting."""
        return f"{self.key} in {self.file}" if self.file else self.key


def names_variable(name: str) -> bool:
    """Whether ``name`` can name an environment variable (not blank, no ``=``).

    >>> names_variable("XLSENT_API_KEY"), names_variable(""), names_variable("A=B")
    (True, False, False)
    """
    return bool(name.strip()) and "=" not in name and "\0" not in name


def check_api_key_env(name: str, given: Given) -> None:
    """ValueError when ``name``, given (:class:`Given`) as the environment variable holding the API key, names no
    variable, or one that is unset or empty: the server would then need no key, which is not what whoever named it
    meant; or when the key it holds is refused by :func:`api_key`."""
    if not names_variable(name):
        raise ValueError(f"{given.value(name)}: names no environment variable; give the name of the one holding "
                         f"the API key (e.g. {API_KEY_ENV}), or leave out {given.where}")
    if not os.environ.get(name):
        raise ValueError(f"{given.value(name)}: that environment variable is not set (or empty), so /v1/* would "
                         f"need no key; export {name}=YOUR-KEY first, or leave out {given.where}")
    api_key(name)


def api_key(name: str) -> str:
    """The API key that the environment variable ``name`` holds ("" where it is unset: no key needed).

    ValueError naming the variable (never the key) where the value is blank, or has whitespace around it: clients'
    tokens arrive stripped (HTTP drops the spaces around a header's value), so such a key would refuse every
    request, and a blank one would silently need none. Refused rather than stripped: a stray space or newline
    pasted with a secret may as well be a key pasted wrong, and the server must not guess which key it enforces.
    """
    key = os.environ.get(name)
    if key is None:
        return ""
    if not key.strip():
        raise ValueError(f"{name}: the API key is set but blank, so /v1/* would need no key; export "
                         f"{name}=YOUR-KEY, or unset {name} to serve without a key")
    if key != key.strip():
        raise ValueError(f"{name}: the API key has whitespace around it, which no client can send (HTTP strips a "
                         f"header's value), so every request would be refused; export {name}=YOUR-KEY without "
                         "the spaces or newline")
    return key


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
    queued work gets ``shutdown_grace_s`` to finish before what is left is answered 503. Each of these is at most a
    day (``MAX_DURATION_S``); ``max_wait_ms`` is less than ``request_timeout_s`` (a request arriving alone waits
    that long for others).
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
        problems += [f"{name} must be at most {MAX_DURATION_S} (a day; got {getattr(self, name)})"
                     for name in DURATIONS_S if getattr(self, name) > MAX_DURATION_S]
        if self.request_timeout_s > 0 and self.max_wait_ms >= 1000 * self.request_timeout_s:
            problems.append(f"max_wait_ms ({self.max_wait_ms:g}) must be less than request_timeout_s "
                            f"({self.request_timeout_s:g} s), or a request arriving alone would time out waiting "
                            "for others")
        if not names_variable(self.api_key_env):
            problems.append(f"api_key_env must name an environment variable, not blank and without '=' "
                            f"(got {self.api_key_env!r})")
        if not self.host.strip():
            problems.append(f"host must be an address or a host name: 127.0.0.1 (this machine only), 0.0.0.0 "
                            f"(every interface) or one of this machine's addresses (got {self.host!r})")
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
        return cls._from_file(path, read_settings(cls, path, what="serve setting"), overrides)

    @classmethod
    def _from_file(cls, path: str | Path, values: Mapping[str, Any], overrides: Mapping[str, Any]) -> ServeSettings:
        """Settings of ``values`` read from the file ``path``, then ``overrides``; ValueError naming the file."""
        try:
            return cls(**{**values, **overrides})
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    @classmethod
    def load(cls, config: Path | None, flags: Mapping[str, Any]) -> tuple[ServeSettings, dict[str, Given]]:
        """The settings of ``xlsent serve``: the built-in ones, then the TOML file ``config``'s, then the command
        line's ``flags`` (setting -> value, None where the flag is not given; ``api_key_env`` is ``--api-key-env``),
        and how messages name those settings and the file's (:class:`Given`): the flag, unless the file gives the
        setting and the command line does not. An API key variable given that is unset is an error
        (:func:`check_api_key_env`); so is a flag out of range, named without the file."""
        overrides = {name: value for name, value in flags.items() if value is not None}
        values = read_settings(cls, config, what="serve setting") if config else {}
        given = {name: Given(name, config) if name in values and name not in overrides else
                 Given("--" + name.replace("_", "-")) for name in [*flags, *values]}
        chosen = {**values, **overrides}
        if "api_key_env" in chosen:
            check_api_key_env(chosen["api_key_env"], given["api_key_env"])
        from_flags = cls(**overrides)
        return (cls._from_file(config, values, overrides) if config else from_flags), given
