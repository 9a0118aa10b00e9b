"""The serving engine: one worker per model owns it and encodes queued requests together, ``inference_threads``
micro-batches at a time.

A request's texts are checked and counted before they are queued (:mod:`xlsent.serve.inputs`). The worker takes
queued requests together, up to ``batch_collect_tokens`` tokens or until the oldest has waited ``max_wait_ms``
(micro-batching), and encodes them with the encoder's own token-budget batching and long-input windowing, the
same as ``xlsent embed``. The queue is bounded (requests, tokens, and the wait it would take at the measured rate):
beyond that a request is refused at once with 429 and a ``Retry-After``, never queued. On shutdown, new requests
get 503, queued ones get ``shutdown_grace_s`` to finish and then 503; none is dropped unanswered.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from itertools import groupby

import numpy as np

from xlsent.encoders.base import Encoder, Windowed
from xlsent.serve.errors import ApiError
from xlsent.serve.metrics import Metrics
from xlsent.serve.settings import ServeSettings

log = logging.getLogger(__name__)

ModelSource = Encoder | Callable[[], Encoder]
"""A served model: an encoder, or a function that loads it (called on the model's worker thread)."""

WARMUP_TEXT = "The quick brown fox jumps over the lazy dog, and the dog barks back at it."
WARMUP_INPUTS = 32
RATE_SMOOTHING = 0.2


@dataclass
class Job:
    """One request's texts waiting for the worker; ``future`` gets their vectors (row i for text i). ``content``:
    their token ids when the request's handler tokenized them already (the worker then does not again)."""

    texts: list[str]
    lang: str | None
    tokens: int
    content: list[list[int]] | None = None
    future: Future[np.ndarray] = field(default_factory=Future)
    enqueued: float = field(default_factory=time.perf_counter)


def shutting_down() -> ApiError:
    return ApiError(503, "the server is shutting down; retry on another instance or later", code="shutting_down",
                    headers={"Retry-After": "1"})


def _fail(job: Job, error: BaseException) -> None:
    """Answer ``job`` with ``error`` unless it is answered or cancelled already."""
    try:
        if not job.future.done():
            job.future.set_exception(error)
    except InvalidStateError:  # cancelled by its request (timeout) in the meantime: nobody waits for it
        pass


class ModelWorker:
    """The threads that own one model: the first loads and warms it up, then each of ``inference_threads`` encodes
    queued jobs in micro-batches (the encoders' runners take overlapping calls)."""

    def __init__(self, name: str, source: ModelSource, settings: ServeSettings, metrics: Metrics) -> None:
        self.name = name
        self.settings = settings
        self.metrics = metrics
        self._source = source
        self._encoder: Encoder | None = None
        self._queue: deque[Job] = deque()
        self._queued_tokens = 0
        self._cond = threading.Condition()
        self._closing = False
        self._stopping = False
        self._ready = threading.Event()
        self.failure: str | None = None
        self.rate: float | None = None  # tokens per second, smoothed over batches
        self._thread = threading.Thread(target=self._main, name=f"xlsent-serve-{name}", daemon=True)
        self._helpers = [threading.Thread(target=self._serve, name=f"xlsent-serve-{name}-{i}", daemon=True)
                         for i in range(1, settings.inference_threads)]

    # --- state, for the request handlers -------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Loaded and warmed up."""
        return self._ready.is_set()

    def encoder(self) -> Encoder:
        """The loaded encoder; 503 while it loads, or if it failed to."""
        if self.failure:
            raise ApiError(503, f"model {self.name!r} failed to load: {self.failure}", code="model_failed")
        if not self.ready or self._encoder is None:
            raise ApiError(503, f"model {self.name!r} is loading; retry shortly", code="model_loading",
                           headers={"Retry-After": "2"})
        return self._encoder

    @property
    def queued(self) -> tuple[int, int]:
        """Requests and tokens waiting in the queue now."""
        with self._cond:
            return len(self._queue), self._queued_tokens

    def retry_after(self) -> int:
        """Seconds after which the queue as it is now should have drained (at least 1)."""
        rate = self.rate or 0.0
        return max(1, math.ceil(self._queued_tokens / rate)) if rate > 0 else 1

    # --- submitting ----------------------------------------------------------------------------------------------

    def submit(self, texts: list[str], lang: str | None, tokens: int,
               content: list[list[int]] | None = None) -> Future[np.ndarray]:
        """Queue ``texts`` (``tokens`` in all, token ids ``content`` where known); their vectors come in the future.
        429 when the queue is full, 503 when the server is shutting down."""
        job = Job(texts, lang, tokens, content)
        self.submit_jobs([job])
        return job.future

    def submit_jobs(self, jobs: Sequence[Job]) -> None:
        """Queue ``jobs``, the parts of one request (e.g. its two languages), all of them or none: 429 when the queue
        is full, 503 when the server is shutting down."""
        tokens = sum(job.tokens for job in jobs)
        with self._cond:
            if self._closing:
                raise shutting_down()
            full = self._full(len(jobs), tokens)
            if full:
                raise ApiError(429, f"model {self.name!r} is busy ({full}); retry after the time in Retry-After",
                               code="queue_full", headers={"Retry-After": str(self.retry_after())})
            self._queue.extend(jobs)
            self._queued_tokens += tokens
            self._gauges()
            self._cond.notify(len(jobs))

    def _full(self, jobs: int, tokens: int) -> str | None:
        """Why ``jobs`` jobs of ``tokens`` in all cannot be queued now (None when they can); an empty queue takes
        any request."""
        s = self.settings
        if not self._queue:
            return None
        if len(self._queue) + jobs > s.max_queue_requests:
            return f"{len(self._queue)} requests queued"
        if self._queued_tokens + tokens > s.max_queue_tokens:
            return f"{self._queued_tokens} tokens queued"
        if self.rate and (self._queued_tokens + tokens) / self.rate > s.request_timeout_s:
            return f"{self._queued_tokens} tokens queued, more than {s.request_timeout_s:g} s of work"
        return None

    async def encode(self, texts: list[str], lang: str | None, tokens: int,
                     content: list[list[int]] | None = None) -> np.ndarray:
        """The vectors of ``texts``, waiting at most ``request_timeout_s`` (then 503; a job not yet started is
        dropped from the queue)."""
        (vectors,) = await self.encode_jobs([Job(texts, lang, tokens, content)])
        return vectors

    async def encode_jobs(self, jobs: Sequence[Job]) -> list[np.ndarray]:
        """The vectors of each of ``jobs``, the parts of one request queued together (:meth:`submit_jobs`), waiting
        at most ``request_timeout_s`` for all (then 503; the jobs not yet started are dropped from the queue)."""
        self.submit_jobs(jobs)
        try:
            return list(await asyncio.wait_for(asyncio.gather(*(asyncio.wrap_future(job.future) for job in jobs)),
                                               self.settings.request_timeout_s))
        except TimeoutError:
            raise ApiError(503, f"no answer from model {self.name!r} within {self.settings.request_timeout_s:g} s; "
                           "the server is overloaded, retry later", code="timeout",
                           headers={"Retry-After": str(self.retry_after())}) from None

    # --- lifecycle -----------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def begin_shutdown(self, grace_s: float) -> None:
        """Refuse new jobs (503); jobs still queued after ``grace_s`` seconds are answered 503."""
        with self._cond:
            if self._closing:
                return
            self._closing = True
        timer = threading.Timer(grace_s, self._fail_queued)
        timer.daemon = True
        timer.start()

    def stop(self, timeout_s: float) -> None:
        """Answer every queued job 503, let the batch in progress finish (waiting at most ``timeout_s``)."""
        with self._cond:
            self._closing = self._stopping = True
            self._cond.notify_all()
        self._fail_queued()
        deadline = time.monotonic() + timeout_s
        for thread in (self._thread, *self._helpers):
            if thread.is_alive():
                thread.join(max(deadline - time.monotonic(), 0))

    def _fail_queued(self) -> None:
        with self._cond:
            jobs = list(self._queue)
            self._queue.clear()
            self._queued_tokens = 0
            self._gauges()
        if jobs:
            log.warning("model %s: %d queued request(s) answered 503 (shutting down)", self.name, len(jobs))
        for job in jobs:
            _fail(job, shutting_down())

    def _gauges(self) -> None:
        self.metrics.queue_requests.labels(self.name).set(len(self._queue))
        self.metrics.queue_tokens.labels(self.name).set(self._queued_tokens)

    # --- the worker thread ---------------------------------------------------------------------------------------

    def _main(self) -> None:
        try:
            encoder = self._source if isinstance(self._source, Encoder) else self._source()
            self._encoder = encoder
            if self.settings.warmup:
                start = time.perf_counter()
                encoder.encode([WARMUP_TEXT] * WARMUP_INPUTS, batch_tokens=self.settings.batch_tokens)
                log.info("model %s warmed up in %.2fs", self.name, time.perf_counter() - start)
        except Exception as exc:  # any loader's failure: the model is unusable, the server says why
            log.exception("model %s failed to load", self.name)
            self.failure = f"{type(exc).__name__}: {exc}"
            return
        self._ready.set()
        for helper in self._helpers:
            helper.start()
        self._serve()

    def _serve(self) -> None:
        """Encode micro-batches until stopped (one of ``inference_threads`` such loops)."""
        assert self._encoder is not None
        while (jobs := self._collect()) is not None:
            self._run(self._encoder, jobs)

    def _collect(self) -> list[Job] | None:
        """The next micro-batch: wait for a job, then for more until ``batch_collect_tokens`` are queued or
        the oldest has waited ``max_wait_ms``; take queued jobs up to that many tokens (at least one). None: stop."""
        s = self.settings
        with self._cond:
            while not self._queue:
                if self._stopping:
                    return None
                self._cond.wait()
            deadline = self._queue[0].enqueued + s.max_wait_ms / 1000  # a job that waited already waits no more
            while self._queued_tokens < s.batch_collect_tokens and not self._stopping:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            jobs: list[Job] = []
            tokens = 0
            while self._queue and (not jobs or tokens + self._queue[0].tokens <= s.batch_collect_tokens):
                job = self._queue.popleft()
                jobs.append(job)
                tokens += job.tokens
            self._queued_tokens -= tokens
            self._gauges()
        return jobs

    def _run(self, encoder: Encoder, jobs: list[Job]) -> None:
        """Encode ``jobs`` (those not cancelled meanwhile) together, grouped by language; answer each."""
        live = [job for job in jobs if job.future.set_running_or_notify_cancel()]
        if not live:
            return
        start = time.perf_counter()
        for job in live:
            self.metrics.queue_seconds.labels(self.name).observe(start - job.enqueued)
        try:
            for lang, group in groupby(sorted(live, key=lambda j: j.lang or ""), key=lambda j: j.lang):
                batch = list(group)
                vectors = self._encode(encoder, batch, lang)
                row = 0
                for job in batch:
                    job.future.set_result(vectors[row : row + len(job.texts)])
                    row += len(job.texts)
        except Exception as exc:  # the encoder failed on this batch: its requests get 500, the worker goes on
            log.exception("model %s failed on a batch of %d request(s)", self.name, len(live))
            for job in live:
                _fail(job, exc)
        elapsed = time.perf_counter() - start
        tokens = sum(job.tokens for job in live)
        m, name = self.metrics, self.name
        m.inference_seconds.labels(name).observe(elapsed)
        m.batch_requests.labels(name).observe(len(live))
        m.batch_inputs.labels(name).observe(sum(len(job.texts) for job in live))
        m.batch_tokens.labels(name).observe(tokens)
        if elapsed > 0:  # the model's rate when its inference threads are all busy, as they are under load
            rate = tokens / elapsed * self.settings.inference_threads
            self.rate = rate if self.rate is None else (1 - RATE_SMOOTHING) * self.rate + RATE_SMOOTHING * rate


    def _encode(self, encoder: Encoder, batch: list[Job], lang: str | None) -> np.ndarray:
        """The vectors of ``batch``'s texts in order: from their token ids when the encoder takes them and every job
        has them, else from the texts."""
        if isinstance(encoder, Windowed) and all(job.content is not None for job in batch):
            return encoder.encode_content([ids for job in batch for ids in job.content or []], lang,
                                  batch_tokens=self.settings.batch_tokens)
        return encoder.encode([t for job in batch for t in job.texts], lang, batch_tokens=self.settings.batch_tokens)


class Engine:
    """The workers of every served model, by the name clients ask for."""

    def __init__(self, models: Mapping[str, ModelSource], settings: ServeSettings, metrics: Metrics) -> None:
        if not models:
            raise ValueError("serve needs at least one model")
        self.workers = {name: ModelWorker(name, source, settings, metrics) for name, source in models.items()}
        self.settings = settings

    def start(self) -> None:
        for worker in self.workers.values():
            worker.start()

    @property
    def ready(self) -> bool:
        return all(worker.ready for worker in self.workers.values())

    def worker(self, name: str | None, param: str = "model") -> ModelWorker:
        """The worker of model ``name`` (the first served model when None); 404 for a model not served."""
        if name is None:
            return next(iter(self.workers.values()))
        if name not in self.workers:
            raise ApiError(404, f"the model {name!r} is not served here; served: {', '.join(self.workers)} "
                           "(GET /v1/models)", code="model_not_found", param=param)
        return self.workers[name]

    def begin_shutdown(self) -> None:
        for worker in self.workers.values():
            worker.begin_shutdown(self.settings.shutdown_grace_s)

    def stop(self) -> None:
        for worker in self.workers.values():
            worker.stop(self.settings.shutdown_grace_s)
