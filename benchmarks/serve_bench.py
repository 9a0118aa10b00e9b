"""Load on ``xlsent serve``: concurrent clients posting mixed short and long inputs to ``/v1/embeddings``.

The server runs as ``xlsent serve`` in its own process on 127.0.0.1 (a free port); ``--clients`` clients in this
process (asyncio, one connection each) post requests of 1 to ``--max-inputs`` Tatoeba sentences (base64, as the
``openai`` client asks), a ``--long-fraction`` of them with one input of about 600 tokens (over me5-small's
512-token window: encoded as averaged windows). After ``--warmup-seconds``, the clients run ``--seconds``; a
request counts when its answer comes within that time. Then the server stops and this process encodes the inputs
that were answered, in the same order, with one ``encode`` call on the same model and backend: the baseline.
ours = sentences answered per second; ratio = ours / baseline (target >= 0.8). Reported: latency p50/p95/p99,
answers by status (and connection errors), the server's RSS when ready, after the warm-up, at the end and at its
peak. Written to ``<--out>/serve.json`` for ``xlsent report``.
"""

from __future__ import annotations

import argparse
import asyncio
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import DEFAULT_OUT, OUT_HELP, BenchRecord, BenchRow, start_record, timed  # noqa: E402
from embed_bench import bench_sentences  # noqa: E402

PACKAGES = ("numpy", "torch", "fastapi", "uvicorn", "httpx", "onnxruntime", "openvino")
LONG_SENTENCES = 40
"""Sentences joined into one long input (about 600 me5-small tokens)."""
START_TIMEOUT_S = 300


@dataclass
class Load:
    """What the clients saw in the measured window."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    answered: list[list[str]] = field(default_factory=list)
    long_inputs: int = 0
    metrics_start: dict[str, float] = field(default_factory=dict)
    metrics_end: dict[str, float] = field(default_factory=dict)
    clients_cpu_s: float = 0.0

    def metric(self, name: str) -> float:
        """How much the server's total ``name`` grew over the measured window (batches counted when they end)."""
        return self.metrics_end.get(name, 0.0) - self.metrics_start.get(name, 0.0)

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


async def _client(client, url: str, rng: np.random.Generator, pool: list[str], longs: list[str], args,
                  window: tuple[float, float], load: Load) -> None:
    import httpx

    start, end = window
    while (now := time.perf_counter()) < end:
        inputs = [pool[i] for i in rng.integers(0, len(pool), int(rng.integers(1, args.max_inputs + 1)))]
        has_long = rng.random() < args.long_fraction
        if has_long:
            inputs[int(rng.integers(len(inputs)))] = longs[int(rng.integers(len(longs)))]
        retry_after = 0.0
        try:
            r = await client.post(url, json={"model": "bench", "input": inputs, "encoding_format": "base64"})
            status = str(r.status_code)
            if r.status_code == 200 and len(r.json()["data"]) != len(inputs):
                status = "200 with a wrong number of vectors"
            retry_after = float(r.headers.get("Retry-After", 0)) if r.status_code in (429, 503) else 0.0
        except httpx.HTTPError as exc:
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


async def run_load(url: str, pool: list[str], longs: list[str], args, sample_rss) -> Load:
    """``args.clients`` clients for ``args.warmup_seconds`` + ``args.seconds``; what they saw in the second part."""
    import httpx

    load = Load()
    start = time.perf_counter() + args.warmup_seconds
    window = (start, start + args.seconds)
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(120.0)) as client:
        async def at_start_and_end() -> None:
            await asyncio.sleep(window[0] - time.perf_counter())
            sample_rss("warm")
            load.metrics_start = await asyncio.to_thread(worker_metrics, url)
            clients_cpu = time.process_time()
            await asyncio.sleep(window[1] - time.perf_counter())
            load.clients_cpu_s = time.process_time() - clients_cpu
            load.metrics_end = await asyncio.to_thread(worker_metrics, url)

        await asyncio.gather(at_start_and_end(), *(
            _client(client, url + "/v1/embeddings", np.random.default_rng(seed), pool, longs, args, window, load)
            for seed in range(args.clients)))
    return load


def baseline_rate(model: str, backend: str, answered: list[list[str]]) -> tuple[float, int, dict[str, str | None]]:
    """Sentences per second of one ``encode`` call over the answered inputs (in order), how many there were, and the
    model timed (its id and the backend ``backend`` resolved to; the server loads the same)."""
    import xlsent

    encoder = xlsent.load(model, backend)
    texts = [t for inputs in answered for t in inputs]
    encoder.encode(texts[:64])
    start = time.perf_counter()
    encoder.encode(texts)
    return len(texts) / (time.perf_counter() - start), len(texts), timed(encoder)


def add_results(record: BenchRecord, args, load: Load, rate: float, baseline: float, model: dict[str, str | None],
                rss: dict[str, float], source: str) -> BenchRow:
    """The measured row (of ``model``: its ``encoder`` id and ``backend``), and how it was measured, in ``record``."""
    lat = np.asarray(load.latencies) * 1000 if load.latencies else np.zeros(1)
    errors = {s: n for s, n in load.statuses.items() if s != "200"}
    server_errors = sum(n for s, n in errors.items() if not s.isdigit() or s.startswith("5"))
    row = BenchRow(
        f"{args.clients} clients x {args.seconds:g}s, {args.model} ({model['backend']}), mixed short and long",
        "sentences/s", rate, baseline, f"one encode call over the same {load.sentences} sentences in order, same "
        "model and backend, in the bench process after the server stopped",
        checks={"answers": sum(load.statuses.values()), "errors": sum(errors.values()),
                "5xx or lost": server_errors, "throughput >= 80% of encode": bool(rate >= 0.8 * baseline),
                "memory flat (end <= warm + 10%)": bool(rss["end"] <= 1.1 * rss["warm"]),
                **{f"status {s}": n for s, n in sorted(errors.items())}},
        details={"p50 ms": float(np.percentile(lat, 50)), "p95 ms": float(np.percentile(lat, 95)),
                 "p99 ms": float(np.percentile(lat, 99)), "requests/s": len(load.answered) / args.seconds,
                 "long inputs": load.long_inputs, "RSS ready MiB": rss["ready"], "RSS warm MiB": rss["warm"],
                 "RSS end MiB": rss["end"], "RSS peak MiB": rss["peak"],
                 "worker busy share": load.metric("xlsent_inference_seconds_sum") / args.seconds,
                 "worker batches": load.metric("xlsent_inference_seconds_count"),
                 "inputs per batch": load.metric("xlsent_batch_inputs_sum")
                 / max(load.metric("xlsent_inference_seconds_count"), 1),
                 "tokenizing share": load.metric("xlsent_tokenize_seconds_sum") / args.seconds,
                 "client CPU share": load.clients_cpu_s / args.seconds}, **model)
    record.rows.append(row)
    record.notes += [
        f"Inputs: {source}; a request holds 1 to {args.max_inputs} of them (uniform), and with probability "
        f"{args.long_fraction:g} one input of {LONG_SENTENCES} sentences joined (about 600 tokens, over the 512-token "
        "window), as base64 (the openai client's default).",
        f"Server: `xlsent serve` with its default settings, in its own process; clients: {args.clients} asyncio "
        f"httpx clients in the bench process on the same {record.machine.get('usable_cores')} cores, after "
        f"{args.warmup_seconds:g}s of warm-up. A request counts when answered within the {args.seconds:g}s window.",
        "RSS of the server process from /proc: when ready, after the warm-up, at the end and at its peak (VmHWM).",
    ]
    return row


def build_parser() -> argparse.ArgumentParser:
    """The bench's options (README quotes their defaults; ``tests/test_readme.py`` reads them here)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=120.0, help="measured load time (default %(default)g)")
    parser.add_argument("--clients", type=int, default=64, help="concurrent clients (default %(default)s)")
    parser.add_argument("--warmup-seconds", type=float, default=5.0, help="load before measuring (default 5)")
    parser.add_argument("--max-inputs", type=int, default=16, help="most inputs in one request (default 16)")
    parser.add_argument("--long-fraction", type=float, default=0.1,
                        help="share of requests with one long input (default 0.1)")
    parser.add_argument("--model", default="me5-small", help="model to serve (default me5-small)")
    parser.add_argument("--backend", default="auto", help="backend of the server and the baseline (default auto)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    record = start_record("serve", "xlsent serve under load: throughput against plain encode", __file__, argv, args,
                          PACKAGES)
    pool, source = bench_sentences(2000)
    rng = np.random.default_rng(0)
    longs = [" ".join(pool[i] for i in rng.integers(0, len(pool), LONG_SENTENCES)) for _ in range(50)]
    rss: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = ServeProcess(args.model, args.backend, Path(tmp) / "serve.log")
        try:
            pid = server.proc.pid
            rss["ready"] = rss_mib(pid)[0]
            def sample(label: str) -> None:
                rss[label] = rss_mib(pid)[0]

            load = asyncio.run(run_load(server.url, pool, longs, args, sample))
            rss["end"], rss["peak"] = rss_mib(pid)
        finally:
            server.stop()
    rate = load.sentences / args.seconds
    baseline, n, model = baseline_rate(args.model, args.backend, load.answered)
    row = add_results(record, args, load, rate, baseline, model, rss, source)
    print(f"xlsent serve, {args.clients} clients for {args.seconds:g}s: {rate:.1f} sentences/s answered "
          f"({sum(load.statuses.values())} answers: {dict(load.statuses)})")
    print(f"  one encode call over the same {n} sentences: {baseline:.1f} sentences/s; ratio {row.ratio or 0:.2f}")
    d = row.details
    print(f"  latency p50/p95/p99 {d['p50 ms']:.0f}/{d['p95 ms']:.0f}/{d['p99 ms']:.0f} ms; server RSS "
          f"ready/warm/end/peak {rss['ready']:.0f}/{rss['warm']:.0f}/{rss['end']:.0f}/{rss['peak']:.0f} MiB")
    print(f"  worker busy {d['worker busy share']:.0%} of the window in {d['worker batches']:.0f} batches of "
          f"{d['inputs per batch']:.1f} inputs; tokenizing {d['tokenizing share']:.1%}; the clients used "
          f"{d['client CPU share']:.0%} of one core")
    print(f"wrote {record.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
