"""Fixtures of the server tests: a real uvicorn on 127.0.0.1 (a free port) in a background thread, stopped after."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace

import httpx
import numpy as np
import pytest

from xlsent.encoders.transformer import TransformerEncoder
from xlsent.serve import Server, ServeSettings, create_app
from xlsent.serve.engine import ModelSource

START_TIMEOUT_S = 60


class Live:
    """A running server: its base URL, the uvicorn server and the application."""

    def __init__(self, server: Server, thread: threading.Thread) -> None:
        self.server = server
        self.thread = thread
        port = server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.port = port

    def stop(self, timeout_s: float = 30) -> None:
        self.server.should_exit = True
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), "the server did not stop"


class HashEncoder:
    """A deterministic toy encoder: each text's vector is drawn from a generator seeded by its hash; each call sleeps
    ``delay`` seconds first and is recorded in ``calls`` (the texts it got)."""

    def __init__(self, dim: int = 8, delay: float = 0.0, name: str = "hash") -> None:
        self.name = self.id = name
        self.dim = dim
        self.delay = delay
        self.calls: list[list[str]] = []

    def vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def encode(self, sentences: Sequence[str], lang: str | None = None, *, batch_tokens: int = 2048,
               progress: bool = False) -> np.ndarray:
        self.calls.append(list(sentences))
        time.sleep(self.delay)
        return np.stack([self.vector(s) for s in sentences]) if sentences else np.zeros((0, self.dim), np.float32)


@contextmanager
def serving(models: Mapping[str, ModelSource], settings: ServeSettings | None = None, *,
            wait_ready: bool = True) -> Iterator[Live]:
    """Serve ``models`` on 127.0.0.1 at a free port until the block ends; with ``wait_ready``, first wait until every
    model is ready."""
    settings = replace(settings or ServeSettings(), host="127.0.0.1", port=0)
    server = Server(create_app(models, settings), settings, log_level="warning")
    thread = threading.Thread(target=server.run, name="xlsent-serve-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    live = Live(server, thread)
    try:
        while wait_ready and httpx.get(f"{live.url}/ready", timeout=5).status_code != 200:
            assert time.monotonic() < deadline, "the models did not get ready"
            time.sleep(0.05)
        yield live
    finally:
        if thread.is_alive():
            live.stop()


@pytest.fixture(scope="module")
def toy_server(tiny_encoder: TransformerEncoder) -> Iterator[Live]:
    """The tiny random transformer (64-token window) served as ``tiny``, default settings."""
    with serving({"tiny": tiny_encoder}) as live:
        yield live


@pytest.fixture(scope="session")
def serve() -> Callable[..., AbstractContextManager[Live]]:
    """:func:`serving`: ``with serve(models, settings) as live: httpx.get(live.url + "/health")``."""
    return serving


@pytest.fixture(scope="session")
def hash_encoder() -> type[HashEncoder]:
    """:class:`HashEncoder`, to make one with a dimension and a delay."""
    return HashEncoder
