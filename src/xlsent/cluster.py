"""Ray for every long job: joining or starting a cluster (:func:`ray_session`), where and how to run
(:class:`RayConfig`), running tasks with a bounded number in flight (:func:`as_finished`), and encoder actors that
embed chunks of rows (:class:`EncoderActor`, :func:`ray_chunk_vectors`). Mining's engine
(:mod:`xlsent.mining.distributed`), alignment's (:mod:`xlsent.align.distributed`) and ``xlsent embed`` /
``xlsent index --engine ray`` (:mod:`xlsent.api`) share it.

Ray is imported only when a function here runs: the rest of xlsent works without a cluster.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from xlsent.encoders.cache import encoder_id
from xlsent.inference import DEFAULT_BATCH_TOKENS
from xlsent.threads import limit_threads, thread_counts

log = logging.getLogger(__name__)

ENGINES = ("local", "ray")
"""Where a long job runs: this process, or Ray."""
# Attempts after the first that Ray makes of a task whose worker process died.
TASK_RETRIES = 3
# Seconds to wait for a cluster at ``--address`` to accept a connection.
CONNECT_TIMEOUT = 5.0


@dataclass(frozen=True)
class RayConfig:
    """Where and how to run on Ray: ``address`` of a cluster (default: start Ray in this process with
    ``num_cpus``, default all cores), CPUs reserved by each task and actor (its thread budget), rows per
    embedding chunk (as ``xlsent embed --chunk-rows``), the encoder's batch size in tokens, and the inference
    backend each encoder actor loads the model on (``auto`` is resolved on the actor's own CPU)."""

    address: str | None = None
    num_cpus: int | None = None
    cpus_per_task: int = 1
    chunk_rows: int = 50_000
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    backend: str = "torch"

    def __post_init__(self) -> None:
        for name in ("num_cpus", "cpus_per_task", "chunk_rows", "batch_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, not {value}")
        if self.address is None:  # Ray started here: its CPUs are known now
            check_task_fits(self.cpus_per_task, self.num_cpus or os.cpu_count() or 1)


def check_task_fits(cpus_per_task: int, cpus: int) -> None:
    """ValueError where a task's reservation is more than the cluster's ``cpus``: no task or actor could ever be
    scheduled, and the run would wait for ever (Ray says so in a worker log the driver does not show).

    >>> check_task_fits(3, 2)
    Traceback (most recent call last):
    ...
    ValueError: --cpus-per-task 3 is more than the 2 CPUs of the Ray cluster, so no task could start: give at most 2
    """
    if cpus_per_task > cpus:
        raise ValueError(f"--cpus-per-task {cpus_per_task} is more than the {cpus} CPUs of the Ray cluster, so no "
                         f"task could start: give at most {cpus}")


def task_cpus() -> int:
    """CPUs reserved by the running Ray task or actor (1 outside Ray's workers)."""
    import ray

    return max(1, round(ray.get_runtime_context().get_assigned_resources().get("CPU", 1)))


def in_flight(cpus: int, cpus_per_task: int) -> int:
    """Tasks kept in flight: two per task slot of the ``cpus``, so that a slot never waits for its next task."""
    return 2 * max(1, cpus // cpus_per_task)


def as_finished(submit: Callable[[int], Any], todo: list[int], most: int, *, ordered: bool = False
                 ) -> Iterator[tuple[int, Any]]:
    """``(item, result)`` of a Ray task per item of ``todo`` (``submit(item)`` starts it), as each finishes (with
    ``ordered``, in the order of ``todo``, later results waiting in the object store), with at most ``most`` in
    flight."""
    import ray

    pending: dict[Any, int] = {}
    queue = list(todo)
    while queue or pending:
        while queue and len(pending) < most:
            item = queue.pop(0)
            pending[submit(item)] = item
        ready = next(iter(pending)) if ordered else ray.wait(list(pending), num_returns=1)[0][0]
        yield pending.pop(ready), ray.get(ready)


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise ValueError unless something accepts connections at the Ray ``address`` (``host:port`` or
    ``ray://host:port``; ``auto`` and ``local`` are Ray's to find) within ``timeout`` seconds: Ray itself would
    retry for minutes, logging each attempt."""
    if address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdecimal():
        raise ValueError(f"--address {address}: expected HOST:PORT (or ray://HOST:PORT, auto) of a Ray cluster")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as conn:
            speaks_grpc = _answers_http2(conn)
    except OSError as exc:
        raise ValueError(f"--address {address}: no Ray cluster answers there within {timeout:g}s ({exc}); start "
                         "one (`ray start --head`) or leave out --address to run Ray on this machine") from None
    if not speaks_grpc:
        raise ValueError(f"--address {address}: something answers there, but not a Ray cluster (Ray's GCS and client "
                         "server speak gRPC; a dashboard or another web server does not): give the head's address, "
                         "as `ray start --head` prints it (HOST:6379 by default)")


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _answers_http2(conn: socket.socket) -> bool:
    """Whether the server at ``conn`` answers an HTTP/2 client preface with a SETTINGS frame, as every gRPC server
    (Ray's GCS and client server) does at once: a web server answers HTTP/1 or nothing."""
    conn.sendall(HTTP2_PREFACE + EMPTY_SETTINGS)
    head = b""
    with contextlib.suppress(OSError):
        while len(head) < 9 and (chunk := conn.recv(9 - len(head))):
            head += chunk
    return len(head) == 9 and head[3] == 0x04  # a frame header: length (3 bytes), type 4 = SETTINGS


@contextmanager
def ray_session(cfg: RayConfig) -> Iterator[int]:
    """Ray, joined at ``cfg.address`` or started here (and shut down after) unless already running; yields its
    CPU count. Without an address Ray starts a new instance, also where another runs on the machine (Ray's own
    ``ray.init()`` would join the last one started there, or ``RAY_ADDRESS``, and refuse ``num_cpus``)."""
    import ray

    if cfg.address:
        check_reachable(cfg.address)
    started_here = not ray.is_initialized()
    if started_here:
        if cfg.address:
            ray.init(address=cfg.address, log_to_driver=False)
        else:
            ray.init(address="local", num_cpus=cfg.num_cpus or os.cpu_count(), include_dashboard=False,
                     log_to_driver=False)
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        check_task_fits(cfg.cpus_per_task, cpus)
        yield cpus
    finally:
        if started_here:
            ray.shutdown()


Warnings = list[tuple[str, str]]
"""Warnings logged in a Ray worker during one call: ``(logger name, message)``, to log again on the driver (whose
log shows none of a worker's)."""


@contextmanager
def captured_warnings() -> Iterator[Warnings]:
    """The warnings xlsent's loggers log in this process while the block runs (the block's own)."""
    caught: Warnings = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            caught.append((record.name, record.getMessage()))

    handler = Catch(logging.WARNING)
    root = logging.getLogger("xlsent")
    root.addHandler(handler)
    try:
        yield caught
    finally:
        root.removeHandler(handler)


def log_again(warnings: Warnings) -> None:
    """Log the warnings a Ray worker caught (:func:`captured_warnings`) on this process, under their loggers."""
    for name, message in warnings:
        logging.getLogger(name).warning("%s", message)


class EncoderActor:
    """Ray actor: loads the encoder once, embeds one chunk of rows per call within its CPU reservation."""

    def __init__(self, model: str, batch_tokens: int, backend: str) -> None:
        from xlsent.encoders.registry import load_encoder

        self.encoder = load_encoder(model, backend)
        self.batch_tokens = batch_tokens

    def encoder_id(self) -> str:
        return encoder_id(self.encoder)

    def dim(self) -> int:
        return int(self.encoder.dim)

    def embed(self, chunk: int, texts: list[str], lang: str | None
              ) -> tuple[int, np.ndarray, dict[str, int], Warnings]:
        """The chunk's vectors, the threads they were made with, and the warnings the encoder logged (an input split
        into windows: the driver logs them, as a local run does)."""
        with limit_threads(task_cpus()), captured_warnings() as warnings:
            vecs = self.encoder.encode(texts, lang, batch_tokens=self.batch_tokens)
            return chunk, np.asarray(vecs, dtype=np.float32), thread_counts(), warnings


def encoder_actors(model: str, cfg: RayConfig, count: int) -> list[Any]:
    """``count`` :class:`EncoderActor` of ``model`` on ``cfg.backend``, ``cfg.batch_tokens`` a batch, each reserving
    ``cfg.cpus_per_task`` CPUs."""
    import ray

    actor = ray.remote(num_cpus=cfg.cpus_per_task)(EncoderActor)
    return [actor.remote(model, cfg.batch_tokens, cfg.backend) for _ in range(count)]


def check_engine(engine: str) -> None:
    """Raise ValueError unless ``engine`` is one of :data:`ENGINES`.

    >>> check_engine("spark")
    Traceback (most recent call last):
    ...
    ValueError: engine must be local or ray, not 'spark'
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be {' or '.join(ENGINES)}, not {engine!r}")


def ray_chunk_vectors(actors: list[Any], chunks: Iterator[tuple[int, list[str]]], lang: str | None
                      ) -> Iterator[tuple[int, np.ndarray]]:
    """Each chunk ``(index, rows)`` of ``chunks`` embedded by ``actors``, yielded as it finishes (any order); the
    chunks are read as actors become free, two per actor in flight, so a long input is never held whole."""
    import ray

    idle = list(actors) * 2
    pending: dict[Any, Any] = {}
    chunks = iter(chunks)
    more = True
    while more or pending:
        while more and idle:
            item = next(chunks, None)
            if item is None:
                more = False
                break
            handle = idle.pop()
            pending[handle.embed.remote(item[0], item[1], lang)] = handle
        if not pending:
            break
        ready = ray.wait(list(pending), num_returns=1)[0][0]
        idle.append(pending.pop(ready))
        index, vecs, threads, warnings = ray.get(ready)
        log.debug("chunk %d embedded with threads %s", index, threads)
        log_again(warnings)
        yield index, vecs
