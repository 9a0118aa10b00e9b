"""Exact bitext mining on CPU: xlsent's one-pass bidirectional k-NN against LASER's two-pass FAISS search.

The inputs are RANDOM unit vectors (float32, seeded), not sentence embeddings: timings and memory are
what real embeddings of that size would cost, the mined pairs only serve to check that both exact
methods agree. Mining is LASER's default (k=4, ratio margin, ``max`` retrieval with the 1:1 filter).
Each (size, method) runs in a fresh subprocess; its peak RSS is counted from the RSS with the inputs
loaded (``VmHWM``, reset through ``/proc/self/clear_refs``; ``ru_maxrss`` where there is no ``/proc``). Methods:

* ``faiss-2pass``: ``faiss.IndexFlatIP`` searched both ways, as ``mine_bitexts.py`` (the baseline);
* ``one-pass``: :func:`xlsent.mining.knn.bidirectional_knn`, one pass over ``X·Yᵀ`` for both directions;
* ``ivf-fixed``, ``ivf-tuned``: :func:`xlsent.mining.knn.approx_bidirectional_knn` with an IVF index
  searched with ``--nprobe`` lists, or with ``nprobe`` tuned to 95% recall (random vectors have no
  cluster structure, so tuning ends in the fallback to exact search); scored by their recall of the
  exact pairs.

GFLOP/s counts the multiply-adds each method executes (two products for the baseline, one for ours)
against this machine's float32 matmul peak, measured first. Exact methods must mine the same set of
pairs (their order, by score, may differ where scores tie to float32 rounding).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

import numpy as np

METHODS = ("faiss-2pass", "one-pass", "ivf-fixed", "ivf-tuned")
BASELINE = "faiss-2pass"
T = TypeVar("T")


def unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    """``n`` random float32 unit vectors, made in chunks so that no temporary raises the peak RSS."""
    rng, v = np.random.default_rng(seed), np.empty((n, dim), np.float32)
    for lo in range(0, n, 4096):
        chunk = v[lo : lo + 4096]
        rng.standard_normal(chunk.shape, dtype=np.float32, out=chunk)
        chunk /= np.linalg.norm(chunk, axis=1, keepdims=True)
    return v


def peak_gflops(size: int, repeats: int = 3) -> float:
    """float32 GFLOP/s of the best of ``repeats`` ``size``-square matrix products (numpy's BLAS)."""
    a, b = unit_vectors(size, size, 0), unit_vectors(size, size, 1)
    a @ b
    best = min(_timed(lambda: a @ b)[0] for _ in range(repeats))
    return 2 * size**3 / best / 1e9


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _reset_peak_rss() -> float:
    """Restart the peak-RSS count from the current RSS (Linux); the RSS to count the peak from, in MiB."""
    clear_refs = Path("/proc/self/clear_refs")
    if clear_refs.exists():
        clear_refs.write_text("5")
    return _peak_rss_mib()


def _peak_rss_mib() -> float:
    """Peak RSS in MiB: ``VmHWM`` where ``/proc`` has it (resettable), else ``ru_maxrss`` (KiB on Linux)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_method(method: str, n: int, dim: int, k: int, repeats: int, nprobe: int) -> tuple[dict[str, float], np.ndarray]:
    """Mine ``n x n`` random vectors with ``method``; timings (best of ``repeats``), peak RSS, and the pairs."""
    from xlsent.mining.knn import KnnResult, approx_bidirectional_knn, bidirectional_knn, two_pass_faiss_knn
    from xlsent.mining.margin import Margin, Mode, select_candidates

    def mine(knn: KnnResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim, margin=Margin.RATIO,
                                 mode=Mode.MAX)

    x, y = unit_vectors(n, dim, 1), unit_vectors(n, dim, 2)
    search: Callable[[], KnnResult] = {
        "faiss-2pass": lambda: two_pass_faiss_knn(x, y, k), "one-pass": lambda: bidirectional_knn(x, y, k),
        "ivf-fixed": lambda: approx_bidirectional_knn(x, y, k, "ivf", effort=nprobe),
        "ivf-tuned": lambda: approx_bidirectional_knn(x, y, k, "ivf")}[method]
    rss_inputs = _reset_peak_rss()
    knn_s, score_s = float("inf"), float("inf")
    for _ in range(repeats):
        t_knn, knn = _timed(search)
        t_score, (src, tgt, _) = _timed(partial(mine, knn))
        knn_s, score_s = min(knn_s, t_knn), min(score_s, t_score)
    stats = {"knn_s": knn_s, "score_s": score_s, "total_s": knn_s + score_s, "rss_mib": _peak_rss_mib() - rss_inputs}
    return stats, np.stack([src, tgt], axis=1)


def _in_subprocess(method: str, n: int, args: argparse.Namespace, tmp: Path) -> tuple[dict[str, float], np.ndarray]:
    pairs_file = tmp / f"{method}-{n}.npy"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", method, "--sizes", str(n), "--dim", str(args.dim),
           "--k", str(args.k), "--repeats", str(args.repeats), "--nprobe", str(args.nprobe), "--pairs-out",
           str(pairs_file)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1]), np.load(pairs_file)


def _pair_set(pairs: np.ndarray) -> set[tuple[int, int]]:
    return set(map(tuple, pairs.tolist()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000], help="N (sources = targets)")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per method (best is reported)")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--nprobe", type=int, default=16, help="IVF lists searched by ivf-fixed")
    parser.add_argument("--peak-size", type=int, default=4096, help="side of the matmul measuring the peak")
    parser.add_argument("--worker", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--pairs-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        stats, pairs = run_method(args.worker, args.sizes[0], args.dim, args.k, args.repeats, args.nprobe)
        np.save(args.pairs_out, pairs)
        print(json.dumps(stats))
        return 0

    peak = peak_gflops(args.peak_size)
    print(f"RANDOM unit vectors ({args.dim}-d float32), k={args.k}, ratio margin, max retrieval (1:1); "
          f"ivf-fixed: nprobe={args.nprobe}")
    print(f"float32 matmul peak ({args.peak_size}^2 x {args.peak_size}): {peak:.0f} GFLOP/s\n")
    header = (f"{'N':>7} {'method':<12} {'k-NN s':>8} {'margin s':>8} {'total s':>8} {'RSS MiB':>8} "
              f"{'GFLOP/s':>8} {'% peak':>6} {'vs 2-pass':>9} {'pairs':>7}  check")
    print(header)
    print("-" * len(header))
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            results = {m: _in_subprocess(m, n, args, Path(tmp)) for m in args.methods}
            base = results.get(BASELINE)
            for method, (stats, pairs) in results.items():
                products = {"faiss-2pass": 2, "one-pass": 1}.get(method)
                gflops = products * 2 * n * n * args.dim / stats["knn_s"] / 1e9 if products else None
                ratio = f"{stats['total_s'] / base[0]['total_s']:.2f}x" if base else "-"
                if method == BASELINE or base is None:
                    check = "baseline" if method == BASELINE else "-"
                elif method.startswith("ivf"):
                    found = len(_pair_set(pairs) & _pair_set(base[1])) / max(len(base[1]), 1)
                    check = f"recall of exact pairs {found:.3f}"
                else:
                    differ = len(_pair_set(pairs) ^ _pair_set(base[1]))
                    status |= int(differ > 0)
                    check = "same pairs" if not differ else f"PAIRS DIFFER ({differ} not shared)"
                rate = f"{gflops:>8.0f} {100 * gflops / peak:>5.0f}%" if gflops else f"{'-':>8} {'-':>6}"
                print(f"{n:>7} {method:<12} {stats['knn_s']:>8.2f} {stats['score_s']:>8.2f} {stats['total_s']:>8.2f} "
                      f"{stats['rss_mib']:>8.0f} {rate} {ratio:>9} {len(pairs):>7}  {check}", flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
