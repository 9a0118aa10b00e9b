"""The load benchmark (``make bench``) at toy size: a tiny model, one client then four, two seconds each; its
record is written and says what it measured."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType


def test_serve_bench_writes_its_record_at_toy_size(bench_script: Callable[[str], ModuleType], tiny_model_dir: Path,
                                                    tmp_path: Path) -> None:
    bench = bench_script("serve_bench")
    argv = ["--seconds", "2", "--clients", "1", "4", "--warmup-seconds", "0.5", "--model", str(tiny_model_dir),
            "--backend", "torch", "--out", str(tmp_path)]
    assert bench.main(argv) == 0
    record = json.loads((tmp_path / "serve.json").read_text(encoding="utf-8"))
    assert record["bench"] == "serve" and record["arguments"]["clients"] == [1, 4]
    one, row = record["rows"]
    assert one["case"].startswith("1 client x") and row["case"].startswith("4 clients x")
    assert "throughput >= 80% of encode" not in one["checks"]  # one client cannot keep the server busy
    assert "throughput >= 80% of encode" in row["checks"]
    assert "memory flat (end <= first row's end + 10%)" in row["checks"]
    assert row["unit"] == "sentences/s" and row["ours"] > 0 and row["baseline"] > 0
    assert row["encoder"].startswith("tiny@") and row["backend"] == "torch"  # the model it timed
    assert row["checks"]["answers"] > 0 and row["checks"]["5xx or lost"] == 0 and row["checks"]["errors"] == 0
    assert row["details"]["p50 ms"] <= row["details"]["p95 ms"] <= row["details"]["p99 ms"]
    assert row["details"]["RSS end MiB"] > 0 and row["details"]["RSS peak MiB"] >= row["details"]["RSS end MiB"]
    assert row["details"]["encode in server-sized calls sentences/s"] > 0  # the batch size's cost, timed beside
    assert row["details"]["ratio to encode in server-sized calls"] == (
        row["ours"] / row["details"]["encode in server-sized calls sentences/s"])
