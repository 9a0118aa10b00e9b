"""Load on ``xlsent serve``: concurrent clients posting mixed short and long inputs to ``/v1/embeddings``.

The server runs as ``xlsent serve`` in its own process on 127.0.0.1 (a free port); for each count in ``--clients``
(1, 16 and 64 by default, one after the other against the same server), that many clients in this process (asyncio,
one keep-alive HTTP/1.1 connection each) post requests of 1 to ``--max-inputs`` Tatoeba sentences (base64, as the
``openai`` client asks), a ``--long-fraction`` of them with one input of about 600 tokens (over me5-small's
512-token window: encoded as averaged windows). After ``--warmup-seconds``, the clients run ``--seconds`` in
``--rounds`` rounds; a request counts when its answer comes within its round. After each round, with the server
idle, this process encodes the inputs that the round answered, in the same order, with one ``encode`` call on the
same model and backend: the baseline, alternating with the load so that both see the machine in the same state.
ours = sentences answered per second; ratio = ours / baseline (target >= 0.8 under full load, the largest client
count; fewer clients cannot keep the server busy and are there for their latency). Reported per client count:
latency p50/p95/p99, answers by status (and connection errors), the server's RSS after the warm-up, at the end and
at its peak. Written to ``<--out>/serve.json`` for ``xlsent report``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import (  # noqa: E402
    DEFAULT_OUT,
    OUT_HELP,
    BenchRecord,
    BenchRow,
    load_model,
    start_record,
    timed,
)
from embed_bench import bench_sentences  # noqa: E402

from xlsent.arg_types import non_negative, positive_float, positive_int  # noqa: E402
from xlsent.inference import CHOICES  # noqa: E402

if TYPE_CHECKING:
    from xlsent.encoders.base import Encoder

PACKAGES = ("numpy", "torch", "fastapi", "uvicorn", "httpx", "onnxruntime", "openvino")
LONG_SENTENCES = 40
"""Sentences joined into one long input (about 600 me5-small tokens)."""
START_TIMEOUT_S = 300
REQUEST_TIMEOUT_S = 120.0


@dataclass
class Load:
    """What the clients of one count saw in their measured windows, and the baselines' encode calls between them:
    one call over a round's answered sentences (``baseline_s``), and calls of the server's mean batch size
    (``batched_s``)."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    answered: list[list[str]] = field(default_factory=list)
    long_inputs: int = 0
    metrics: Counter[str] = field(default_factory=Counter)
    clients_cpu_s: float = 0.0
    baseline_sentences: int = 0
    baseline_s: float = 0.0
    batched_s: float = 0.0

    def metric(self, name: str) -> float:
        """How much the server's total ``name`` grew over the measured windows (batches counted when they end)."""
        return self.metrics[name]

    @property
    def sentences(self) -> int:
        return sum(len(inputs) for inputs in self.answered)


WORKER_METRICS = ("xlsent_inference_seconds_sum", "xlsent_inference_seconds_count", "xlsent_batch_inputs_sum",
                  "xlsent_tokenize_seconds_sum")


def worker_metrics(url: str) -> dict[str, float]:
    """The server's running totals of batch time, batches, batched inputs and tokenizing time (from /metrics)."""
    import httpx

    totals = dict.fromkeys(WORKER_METRICS, 0.0)
    for line in httpx.get(url + "/metrics", timeout=30).text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in totals:
            totals[name] += float(line.rsplit(" ", 1)[1])
    return totals


def rss_mib(pid: int) -> tuple[float, float]:
    """Resident memory of process ``pid`` now and at its peak, in MiB (from /proc)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)


class ServeProcess:
    """``xlsent serve`` in a subprocess on a free port, its output in ``log``."""

    def __init__(self, model: str, backend: str, log: Path) -> None:
        self.log_path = log
        self._log = open(log, "w")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen([sys.executable, "-m", "xlsent.cli", "serve", "--model", f"bench={model}",
                                      "--backend", backend, "--port", "0"], stdout=self._log, stderr=subprocess.STDOUT,
                                     text=True)
        self.url = self._wait_url()

    def _wait_url(self) -> str:
        import httpx

        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"xlsent serve exited ({self.proc.returncode}): {self.log_path.read_text()[-2000:]}")
            found = re.search(r"running on (http://127\.0\.0\.1:\d+)", self.log_path.read_text())
            if found and httpx.get(found.group(1) + "/ready", timeout=10).status_code == 200:
                return found.group(1)
            time.sleep(0.2)
        raise RuntimeError(f"xlsent serve not ready in {START_TIMEOUT_S}s; see {self.log_path}")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self._log.close()


class Connection:
    """One keep-alive HTTP/1.1 connection posting JSON: the lightest client asyncio allows, so that the clients,
    which share the server's cores, take as little of them as they can (an httpx client took a quarter of a core
    at 64 clients). Answers must carry a Content-Length (the server's do); a broken connection is reopened."""

    def __init__(self, url: str) -> None:
        found = re.fullmatch(r"http://([^:/]+):(\d+)", url)
        if not found:
            raise ValueError(f"expected http://HOST:PORT, not {url!r}")
        self.host, self.port = found.group(1), int(found.group(2))
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, payload: dict[str, Any], timeout: float) -> tuple[int, dict[str, str], bytes]:
        """Status, headers (lower-case names) and body of POST ``path`` with ``payload`` as JSON."""
        try:
            return await asyncio.wait_for(self._exchange(path, json.dumps(payload).encode()), timeout)
        except BaseException:
            self.close()
            raise

    async def _exchange(self, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._streams
        writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode("latin-1") + body)
        await writer.drain()
        status_line = await reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection")
        headers = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        answer = await reader.readexactly(int(headers.get("content-length", 0)))
        if headers.get("connection", "").lower() == "close":
            self.close()
        return int(status_line.split()[1]), headers, answer

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


async def _client(url: str, rng: np.random.Generator, pool: list[str], longs: list[str], args,
                  window: tuple[float, float], load: Load) -> None:
    start, end = window
    connection = Connection(url)
    while (now := time.perf_counter()) < end:
        inputs = [pool[i] for i in rng.integers(0, len(pool), int(rng.integers(1, args.max_inputs + 1)))]
        has_long = rng.random() < args.long_fraction
        if has_long:
            inputs[int(rng.integers(len(inputs)))] = longs[int(rng.integers(len(longs)))]
        retry_after = 0.0
        try:
            code, headers, body = await connection.post(
                "/v1/embeddings", {"model": "bench", "input": inputs, "encoding_format": "base64"}, REQUEST_TIMEOUT_S)
            status = str(code)
            if code == 200 and len(json.loads(body)["data"]) != len(inputs):
                status = "200 with a wrong number of vectors"
            retry_after = float(headers.get("retry-after", 0)) if code in (429, 503) else 0.0
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as exc:
            status = type(exc).__name__
        done = time.perf_counter()
        if start <= done <= end:
            load.statuses[status] += 1
            load.latencies.append(done - now)
            if status == "200":
                load.answered.append(inputs)
                load.long_inputs += has_long
        if retry_after:
            await asyncio.sleep(min(retry_after, max(end - time.perf_counter(), 0)))
    connection.close()


async def run_load(url: str, pool: list[str], longs: list[str], args, clients: int, seconds: float, warmup: float,
                   load: Load, seed: int, sample_rss) -> None:
    """``clients`` clients for ``warmup`` + ``seconds``; what they saw in the second part, added to ``load``."""
    start = time.perf_counter() + warmup
    window = (start, start + seconds)

    async def at_start_and_end() -> None:
        await asyncio.sleep(window[0] - time.perf_counter())
        sample_rss("warm")
        metrics_start = await asyncio.to_thread(worker_metrics, url)
        clients_cpu = time.process_time()
        await asyncio.sleep(window[1] - time.perf_counter())
        load.clients_cpu_s += time.process_time() - clients_cpu
        metrics_end = await asyncio.to_thread(worker_metrics, url)
        load.metrics.update({k: metrics_end[k] - metrics_start[k] for k in metrics_end})

    await asyncio.gather(at_start_and_end(), *(
        _client(url, np.random.default_rng([seed, c]), pool, longs, args, window, load) for c in range(clients)))


def encode_baseline(encoder: Encoder, answered: list[list[str]], load: Load, batch_inputs: float, first: bool) -> None:
    """Time ``encode`` over the texts of ``answered`` (in order) in one call, and in consecutive calls of
    ``batch_inputs`` texts (the round's mean server batch), the one-call timing first when ``first``; times and
    sentences added to ``load``."""
    texts = [t for inputs in answered for t in inputs]
    size = max(1, round(batch_inputs))

    def one_call() -> None:
        start = time.perf_counter()
        encoder.encode(texts)
        load.baseline_s += time.perf_counter() - start

    def server_sized() -> None:
        start = time.perf_counter()
        for i in range(0, len(texts), size):
            encoder.encode(texts[i:i + size])
        load.batched_s += time.perf_counter() - start

    for timing in ((one_call, server_sized) if first else (server_sized, one_call)):
        timing()
    load.baseline_sentences += len(texts)


def measure(url: str, pid: int, encoder: Encoder, pool: list[str], longs: list[str], args, clients: int
            ) -> tuple[Load, dict[str, float]]:
    """``args.rounds`` rounds of ``clients`` clients for ``args.seconds / args.rounds`` each (after a warm-up in the
    first), each followed by the baselines' encode calls over what that round answered; the server's RSS."""
    load, rss = Load(), {}

    def sample(label: str) -> None:
        rss.setdefault(label, rss_mib(pid)[0])  # after the first round's warm-up

    for r in range(args.rounds):
        answered = len(load.answered)
        batches, inputs = load.metric("xlsent_inference_seconds_count"), load.metric("xlsent_batch_inputs_sum")
        asyncio.run(run_load(url, pool, longs, args, clients, args.seconds / args.rounds,
                             args.warmup_seconds if r == 0 else 0.0, load, r, sample))
        batch_inputs = ((load.metric("xlsent_batch_inputs_sum") - inputs)
                        / max(load.metric("xlsent_inference_seconds_count") - batches, 1))
        encode_baseline(encoder, load.answered[answered:], load, batch_inputs, first=r % 2 == 0)
    rss["end"], rss["peak"] = rss_mib(pid)
    return load, rss


def add_row(record: BenchRecord, args, clients: int, load: Load, model: dict[str, str | None],
            rss: dict[str, float], settled: float | None) -> BenchRow:
    """The row of ``clients`` clients (of ``model``: its ``encoder`` id and ``backend``) in ``record``; the throughput
    check on the row of the most clients only (full load); the memory check against ``settled``, the server's RSS at
    the end of the first row (None: this is the first row, which fills OpenVINO's bounded shape cache)."""
    rate = load.sentences / args.seconds
    baseline = load.baseline_sentences / load.baseline_s if load.baseline_s else 0.0
    batched = load.baseline_sentences / load.batched_s if load.batched_s else 0.0
    lat = np.asarray(load.latencies) * 1000 if load.latencies else np.zeros(1)
    errors = {s: n for s, n in load.statuses.items() if s != "200"}
    server_errors = sum(n for s, n in errors.items() if not s.isdigit() or s.startswith("5"))
    row = BenchRow(
        f"{clients} client{'s' * (clients > 1)} x {args.seconds:g}s, {args.model} ({model['backend']}), mixed short "
        "and long",
        "sentences/s", rate, baseline, "one encode call over the sentences answered in each round, in order, same "
        "model and backend, in the bench process between the rounds (the server idle)",
        checks={"answers": sum(load.statuses.values()), "errors": sum(errors.values()),
                "5xx or lost": server_errors,
                **({"throughput >= 80% of encode": bool(rate >= 0.8 * baseline)} if clients == max(args.clients)
                   else {}),
                **({"memory flat (end <= first row's end + 10%)": bool(rss["end"] <= 1.1 * settled)}
                   if settled is not None else {}),
                **{f"status {s}": n for s, n in sorted(errors.items())}},
        details={"p50 ms": float(np.percentile(lat, 50)), "p95 ms": float(np.percentile(lat, 95)),
                 "p99 ms": float(np.percentile(lat, 99)), "requests/s": len(load.answered) / args.seconds,
                 "long inputs": load.long_inputs, "RSS warm MiB": rss["warm"],
                 "RSS end MiB": rss["end"], "RSS peak MiB": rss["peak"],
                 "worker seconds per second": load.metric("xlsent_inference_seconds_sum") / args.seconds,
                 "worker batches": load.metric("xlsent_inference_seconds_count"),
                 "inputs per batch": load.metric("xlsent_batch_inputs_sum")
                 / max(load.metric("xlsent_inference_seconds_count"), 1),
                 "tokenize seconds per second": load.metric("xlsent_tokenize_seconds_sum") / args.seconds,
                 "client CPU share": load.clients_cpu_s / args.seconds,
                 "encode in server-sized calls sentences/s": batched,
                 "ratio to encode in server-sized calls": rate / batched if batched else 0.0}, **model)
    record.rows.append(row)
    return row


def add_notes(record: BenchRecord, args, source: str, rss_ready: float) -> None:
    """How the rows were measured."""
    record.notes += [
        f"Inputs: {source}; a request holds 1 to {args.max_inputs} of them (uniform), and with probability "
        f"{args.long_fraction:g} one input of {LONG_SENTENCES} sentences joined (about 600 tokens, over the 512-token "
        "window), as base64 (the openai client's default).",
        f"Server: `xlsent serve` with its default settings, in its own process, one server for every row; clients: "
        f"{', '.join(map(str, args.clients))} asyncio clients of one keep-alive HTTP/1.1 connection each (one row "
        "each, in that order) in the bench process "
        f"on the same {record.machine.get('usable_cores')} cores, each for {args.rounds} rounds of "
        f"{args.seconds / args.rounds:g}s ({args.seconds:g}s in all), the first after {args.warmup_seconds:g}s of "
        "warm-up. A request counts when answered within its round. The throughput check is made under full load (the "
        "most clients); fewer clients leave the server idle between requests and measure latency.",
        f"RSS of the server process from /proc: {rss_ready:.0f} MiB when ready; each row's after its warm-up, at its "
        "end and the peak so far (VmHWM). The first row fills OpenVINO's cache of compiled input shapes (bounded: "
        "xlsent.encoders.backends.OPENVINO_SHAPE_CACHE), so memory is checked flat from the end of the first row on: "
        "each later row must end within 10% of it.",
        "Worker and tokenize seconds per second: the server's xlsent_inference_seconds and xlsent_tokenize_seconds "
        "over the window, summed over every worker and every request being tokenized at once, waits for a thread "
        "and for the CPU included: above 1 when work overlaps, and not a share of the CPU.",
        "Encode in server-sized calls: the sentences of each round encoded in consecutive calls of as many inputs as "
        "the server's batches held on average in that round, timed beside the one-call baseline (alternating which "
        "runs first): what the server's batch size alone costs against one call over every sentence, which sorts "
        "them all by length. The ratio to it is what is left to the server (HTTP, queueing, overlapping batches).",
    ]


def build_parser() -> argparse.ArgumentParser:
    """The bench's options (README quotes their defaults; ``tests/test_readme.py`` reads them here)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=positive_float, default=60.0,
                        help="measured load time per client count (default %(default)g)")
    parser.add_argument("--clients", type=positive_int, nargs="+", default=[1, 16, 64],
                        help="concurrent clients, one row each (default 1 16 64)")
    parser.add_argument("--rounds", type=positive_int, default=3, help="rounds per client count, each followed by the "
                        "baseline's encode call over what it answered (default %(default)s)")
    parser.add_argument("--warmup-seconds", type=non_negative(float), default=5.0,
                        help="load before measuring (default 5)")
    parser.add_argument("--max-inputs", type=positive_int, default=16, help="most inputs in one request (default 16)")
    parser.add_argument("--long-fraction", type=float, default=0.1,
                        help="share of requests with one long input (default 0.1)")
    parser.add_argument("--model", default="me5-small", help="model to serve (default me5-small)")
    parser.add_argument("--backend", default="auto", choices=CHOICES,
                        help="backend of the server and the baseline (default auto)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    encoder = load_model(parser, args.model, args.backend)  # the baseline's, loaded before the server and any round
    record = start_record("serve", "xlsent serve under load: throughput against plain encode", __file__, argv, args,
                          PACKAGES)
    pool, source = bench_sentences(2000)
    rng = np.random.default_rng(0)
    longs = [" ".join(pool[i] for i in rng.integers(0, len(pool), LONG_SENTENCES)) for _ in range(50)]
    encoder.encode(pool[:64])
    with tempfile.TemporaryDirectory() as tmp:
        server = ServeProcess(args.model, args.backend, Path(tmp) / "serve.log")
        try:
            pid = server.proc.pid
            ready = rss_mib(pid)[0]
            loads = [(clients, *measure(server.url, pid, encoder, pool, longs, args, clients))
                     for clients in args.clients]
        finally:
            server.stop()
    for i, (clients, load, rss) in enumerate(loads):
        row = add_row(record, args, clients, load, timed(encoder), rss, loads[0][2]["end"] if i else None)
        d = row.details
        print(f"xlsent serve, {clients} client(s) for {args.seconds:g}s: {row.ours:.1f} sentences/s answered "
              f"({sum(load.statuses.values())} answers: {dict(load.statuses)})")
        print(f"  encode calls over the same {load.baseline_sentences} sentences, between the rounds: "
              f"{row.baseline or 0:.1f} sentences/s; ratio {row.ratio or 0:.2f}; in server-sized calls "
              f"{d['encode in server-sized calls sentences/s']:.1f} sentences/s; ratio "
              f"{d['ratio to encode in server-sized calls']:.2f}")
        print(f"  latency p50/p95/p99 {d['p50 ms']:.0f}/{d['p95 ms']:.0f}/{d['p99 ms']:.0f} ms; server RSS "
              f"warm/end/peak {rss['warm']:.0f}/{rss['end']:.0f}/{rss['peak']:.0f} MiB")
        print(f"  workers encoding {d['worker seconds per second']:.2f} s a second in {d['worker batches']:.0f} "
              f"batches of {d['inputs per batch']:.1f} inputs; tokenizing {d['tokenize seconds per second']:.2f} s a "
              f"second; the clients used {d['client CPU share']:.0%} of one core")
    add_notes(record, args, source, ready)
    print(f"wrote {record.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
