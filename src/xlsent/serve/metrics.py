"""Prometheus metrics of one server (its own registry, so that several apps in one process do not mix): queue
depth, batch sizes, tokens per batch, tokenize/queue/inference times, and requests by path and status."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
TOKENS = (16, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144)


class Metrics:
    """The server's metrics, rendered by :meth:`render` for ``GET /metrics``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.queue_requests = Gauge("xlsent_queue_requests", "Requests waiting for a model's worker", ["model"],
                                    registry=r)
        self.queue_tokens = Gauge("xlsent_queue_tokens", "Tokens waiting for a model's worker", ["model"], registry=r)
        self.batch_inputs = Histogram("xlsent_batch_inputs", "Inputs encoded together in one worker batch", ["model"],
                                      buckets=COUNTS, registry=r)
        self.batch_requests = Histogram("xlsent_batch_requests", "Requests encoded together in one worker batch",
                                        ["model"], buckets=COUNTS, registry=r)
        self.batch_tokens = Histogram("xlsent_batch_tokens", "Tokens in one worker batch", ["model"], buckets=TOKENS,
                                      registry=r)
        self.tokenize_seconds = Histogram("xlsent_tokenize_seconds", "Time to tokenize and check a request's inputs",
                                          ["model"], buckets=SECONDS, registry=r)
        self.queue_seconds = Histogram("xlsent_queue_seconds", "Time a request waited in the queue", ["model"],
                                       buckets=SECONDS, registry=r)
        self.inference_seconds = Histogram("xlsent_inference_seconds", "Time to encode one worker batch", ["model"],
                                           buckets=SECONDS, registry=r)
        self.requests = Counter("xlsent_requests", "HTTP requests answered, by path and status", ["path", "status"],
                                registry=r)
        self.request_seconds = Histogram("xlsent_request_seconds", "Time to answer an HTTP request, by path",
                                         ["path"], buckets=SECONDS, registry=r)

    def render(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return bytes(generate_latest(self.registry))


class RequestCounter:
    """ASGI middleware counting every answered request by path (one of ``paths``, else ``other``) and status."""

    def __init__(self, app: ASGIApp, metrics: Metrics, paths: frozenset[str]) -> None:
        self.app = app
        self.metrics = metrics
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"] if scope["path"] in self.paths else "other"
        start = time.perf_counter()
        status = 500

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            self.metrics.requests.labels(path, str(status)).inc()
            self.metrics.request_seconds.labels(path).observe(time.perf_counter() - start)
