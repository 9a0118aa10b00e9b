"""`make bench`: every benchmark with its defaults, each printing ratios against a baseline measured in the same
run and writing its figures to ``<--out>/<bench>.json`` (backends.json, backends-laser.json, embed.json,
mining.json, serve.json, filter.json, align.json, invariance.json), which ``xlsent report`` renders into the
Benchmarks section of docs/results.md; backend_bench.py also writes the table ``auto`` reads
(src/xlsent/encoders/backend_table.json). ``benchmarks/<bench>.py --help`` says what each measures.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_record import DEFAULT_OUT, OUT_HELP  # noqa: E402

BENCHES = [
    ("backend_bench", []),  # first: it writes the table that auto (in the benches after it) reads
    ("backend_bench", ["--model", "models/laser-small"]),  # the LASER models' row of the same table
    ("embed_bench", []),
    ("mining_bench", []),
    ("serve_bench", []),
    ("filter_bench", []),
    ("bitext_bench", []),
    ("align_bench", []),
    ("invariance_bench", []),
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    args = parser.parse_args(argv)
    status = 0
    for name, bench_argv in BENCHES:
        print(f"\n=== {name} ===", flush=True)
        start = time.perf_counter()
        status |= importlib.import_module(name).main([*bench_argv, "--out", str(args.out)])
        print(f"({name} took {time.perf_counter() - start:.0f}s)", flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
