"""`make bench`: every benchmark, each printing ratios against a baseline measured in the same run."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

BENCHES = [
    ("embed_bench", []),
    ("mining_bench", []),
]


def main() -> int:
    status = 0
    for name, argv in BENCHES:
        print(f"\n=== {name} ===", flush=True)
        start = time.perf_counter()
        status |= importlib.import_module(name).main(argv)
        print(f"({name} took {time.perf_counter() - start:.0f}s)", flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
