"""The serving engine: micro-batching, the bounded queue (429 + Retry-After), the request timeout, loading, and a
shutdown that answers every accepted request."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from xlsent.serve import ServeSettings
from xlsent.serve.engine import Job, ModelWorker
from xlsent.serve.errors import ApiError
from xlsent.serve.metrics import Metrics


def wait_until(condition, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


@pytest.fixture()
def worker_of():
    workers: list[ModelWorker] = []

    def make(encoder, **settings) -> ModelWorker:  # one inference thread unless asked: batches in a known order
        settings = {"inference_threads": 1, **settings}
        worker = ModelWorker("toy", encoder, ServeSettings(warmup=False, **settings), Metrics())
        worker.start()
        wait_until(lambda: worker.ready)
        workers.append(worker)
        return worker

    yield make
    for worker in workers:
        worker.stop(10)


def test_queued_requests_are_encoded_together(worker_of, hash_encoder) -> None:
    encoder = hash_encoder(delay=0.3)
    worker = worker_of(encoder)
    first = worker.submit(["one"], None, 3)
    wait_until(lambda: worker.queued == (0, 0))  # the worker is busy with it
    rest = [worker.submit([f"a{i}", f"b{i}"], None, 6) for i in range(5)]
    assert worker.queued == (5, 30)
    np.testing.assert_array_equal(first.result(5), encoder.vector("one")[None])
    for i, future in enumerate(rest):
        np.testing.assert_array_equal(future.result(5), np.stack([encoder.vector(f"a{i}"), encoder.vector(f"b{i}")]))
    assert [len(call) for call in encoder.calls] == [1, 10]


def test_inference_threads_encode_that_many_micro_batches_at_once(worker_of, hash_encoder) -> None:
    encoder = hash_encoder(delay=0.3)
    running, most = [0], [0]
    lock = threading.Lock()
    real = encoder.encode

    def counted(sentences, lang=None, **kw):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return real(sentences, lang, **kw)
        finally:
            with lock:
                running[0] -= 1

    encoder.encode = counted
    worker = worker_of(encoder, inference_threads=2)
    first = worker.submit(["one"], None, 3)
    wait_until(lambda: worker.queued == (0, 0))  # the first thread is busy with it
    second = worker.submit(["two"], None, 3)  # the second thread takes it at once, not after the first
    np.testing.assert_array_equal(second.result(5), encoder.vector("two")[None])
    np.testing.assert_array_equal(first.result(5), encoder.vector("one")[None])
    assert most[0] == 2 and sorted(map(len, encoder.calls)) == [1, 1]
    wait_until(lambda: worker.rate is not None)
    assert worker.rate is not None and 10 < worker.rate <= 20  # 3 tokens in >= 0.3 s, two such batches at a time
    worker.stop(5)
    assert not any(t.is_alive() for t in threading.enumerate() if t.name.startswith("xlsent-serve-toy"))


def test_a_batch_takes_queued_jobs_up_to_the_collect_budget(worker_of, hash_encoder) -> None:
    encoder = hash_encoder(delay=0.2)
    worker = worker_of(encoder, batch_collect_tokens=10)
    worker.submit(["x"], None, 1)
    wait_until(lambda: worker.queued == (0, 0))
    futures = [worker.submit([f"t{i}"], None, 4) for i in range(5)]
    for f in futures:
        f.result(5)
    assert [len(call) for call in encoder.calls] == [1, 2, 2, 1]


def test_a_full_queue_answers_429_with_retry_after(worker_of, hash_encoder) -> None:
    worker = worker_of(hash_encoder(delay=0.5), max_queue_requests=2)
    running = worker.submit(["busy"], None, 1)
    wait_until(lambda: worker.queued == (0, 0))
    queued = [worker.submit(["q1"], None, 1), worker.submit(["q2"], None, 1)]
    with pytest.raises(ApiError) as refused:
        worker.submit(["q3"], None, 1)
    assert refused.value.status == 429 and refused.value.code == "queue_full"
    assert int(refused.value.headers["Retry-After"]) >= 1
    for f in [running, *queued]:
        f.result(5)  # the queued ones are served
    worker.submit(["later"], None, 1).result(5)  # and the queue takes work again


def test_the_parts_of_a_request_are_queued_together_or_not_at_all(worker_of, hash_encoder) -> None:
    """A pair request's two lists were queued one after the other: the second could find the first in the queue
    and be refused 429 (retrying never helped), leaving the first to be encoded for nobody."""
    encoder = hash_encoder(delay=0.3)
    worker = worker_of(encoder, max_queue_requests=1)
    running = worker.submit(["busy"], None, 1)
    wait_until(lambda: worker.queued == (0, 0))  # the worker is busy: the queue, empty, takes any request
    x, y = asyncio.run(worker.encode_jobs([Job(["src"], "de", 1), Job(["tgt 1", "tgt 2"], "en", 2)]))
    assert (x.shape, y.shape) == ((1, 8), (2, 8))
    running.result(5)
    worker.submit(["busy"], None, 1)
    wait_until(lambda: worker.queued == (0, 0))
    worker.submit(["queued"], None, 1)
    with pytest.raises(ApiError, match="1 requests queued"):
        worker.submit_jobs([Job(["src"], "de", 1), Job(["tgt"], "en", 1)])
    assert worker.queued == (1, 1)  # nothing of the refused request


def test_queue_bounded_by_tokens_and_by_the_wait_at_the_measured_rate(worker_of, hash_encoder) -> None:
    worker = worker_of(hash_encoder(delay=0.3), max_queue_tokens=100, max_request_tokens=100, request_timeout_s=5)
    worker.submit(["busy"], None, 10)
    wait_until(lambda: worker.queued == (0, 0))
    worker.submit(["a"], None, 60)
    with pytest.raises(ApiError, match="tokens queued"):
        worker.submit(["b"], None, 41)
    worker.rate = 10.0  # tokens per second: 60 queued + 10 more would take 7 s, over the 5 s timeout
    with pytest.raises(ApiError, match="more than 5 s of work") as refused:
        worker.submit(["c"], None, 10)
    assert refused.value.headers["Retry-After"] == "6"


def test_request_timeout_answers_503_and_drops_the_queued_job(worker_of, hash_encoder) -> None:
    encoder = hash_encoder(delay=0.5)
    worker = worker_of(encoder, request_timeout_s=0.2)
    worker.submit(["busy"], None, 1)
    wait_until(lambda: worker.queued == (0, 0))
    with pytest.raises(ApiError) as late:
        asyncio.run(worker.encode(["late"], None, 1))
    assert late.value.status == 503 and late.value.code == "timeout"
    wait_until(lambda: worker.queued == (0, 0))
    time.sleep(0.6)
    assert ["late"] not in encoder.calls  # cancelled before it ran: no work for nobody


def test_an_encoder_failure_answers_its_batch_and_the_worker_goes_on(worker_of, hash_encoder) -> None:
    encoder = hash_encoder()
    calls = {"n": 0}
    real = encoder.encode

    def flaky(sentences, lang=None, **kw):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("boom")
        return real(sentences, lang, **kw)

    encoder.encode = flaky
    worker = worker_of(encoder)
    with pytest.raises(RuntimeError, match="boom"):
        worker.submit(["a"], None, 1).result(5)
    assert worker.submit(["b"], None, 1).result(5).shape == (1, 8)


def test_loading_then_ready(serve, hash_encoder) -> None:
    release = threading.Event()

    def load():
        release.wait(10)
        return hash_encoder()

    with serve({"slow": load}, ServeSettings(), wait_ready=False) as live:
        assert httpx.get(live.url + "/health").status_code == 200
        r = httpx.get(live.url + "/ready")
        assert r.status_code == 503 and r.json() == {"status": "loading", "models": {"slow": "loading"}}
        r = httpx.post(live.url + "/v1/embeddings", json={"input": "a", "model": "slow"})
        assert r.status_code == 503 and r.json()["error"]["code"] == "model_loading" and r.headers["Retry-After"]
        assert httpx.get(live.url + "/v1/models").json()["data"][0]["ready"] is False
        release.set()
        wait_until(lambda: httpx.get(live.url + "/ready").status_code == 200)
        assert httpx.post(live.url + "/v1/embeddings", json={"input": "a", "model": "slow"}).status_code == 200


def test_a_model_that_fails_to_load_is_reported(serve) -> None:
    def load():
        raise FileNotFoundError("no weights in /nowhere")

    with serve({"broken": load}, ServeSettings(), wait_ready=False) as live:
        wait_until(lambda: httpx.get(live.url + "/ready").json()["status"] == "failed")
        assert "no weights in /nowhere" in httpx.get(live.url + "/ready").json()["models"]["broken"]
        r = httpx.post(live.url + "/v1/embeddings", json={"input": "a", "model": "broken"})
        assert r.status_code == 503 and "no weights in /nowhere" in r.json()["error"]["message"]


def test_shutdown_with_requests_in_flight_answers_every_one(serve, hash_encoder) -> None:
    n = 8
    # each encoding takes 1 s, so all n requests are accepted while the first one runs even on a loaded machine
    # (at 0.3 s the first could finish before the last was queued: the test timed out under load); the grace of
    # 1.5 s lets the first finish and not the second
    settings = ServeSettings(batch_collect_tokens=1, inference_threads=1, shutdown_grace_s=1.5, warmup=False)
    with serve({"toy": hash_encoder(delay=1.0)}, settings) as live:
        worker = live.server.config.app.state.engine.workers["toy"]

        def post(i: int) -> httpx.Response | Exception:
            try:
                return httpx.post(live.url + "/v1/embeddings", json={"input": f"text {i}", "model": "toy"}, timeout=30)
            except httpx.HTTPError as exc:
                return exc

        with ThreadPoolExecutor(n) as pool:
            futures = [pool.submit(post, i) for i in range(n)]
            wait_until(lambda: worker.queued[0] == n - 1)  # all accepted: one encoding, the rest queued
            live.server.should_exit = True
            answers = [f.result(30) for f in futures]
        live.thread.join(30)
        assert not live.thread.is_alive()
    statuses = sorted(a.status_code if isinstance(a, httpx.Response) else repr(a) for a in answers)
    assert set(statuses) == {200, 503}, statuses  # some finished in the grace period, the rest were told
    for a in answers:
        assert isinstance(a, httpx.Response)
        if a.status_code == 503:
            assert a.json()["error"]["code"] == "shutting_down" and a.headers["Retry-After"]
    with pytest.raises(httpx.ConnectError):
        httpx.get(live.url + "/health", timeout=2)
