"""CPU threads of one process held to a budget: BLAS, OpenMP (FAISS), torch and the exact k-NN's own threads.

A Ray task that reserves ``n`` CPUs runs inside :func:`limit_threads` ``(n)``, so that a node running one task
per CPU starts one thread per CPU, not one per core for each task.

>>> with limit_threads(1):
...     thread_counts()["knn"]
1
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import faiss
from threadpoolctl import threadpool_info, threadpool_limits

_limit: int | None = None


def cpu_limit() -> int | None:
    """The thread budget set by the innermost :func:`limit_threads`, or ``None`` outside one."""
    return _limit


def cores() -> int:
    """CPU cores this process may use: its affinity where the OS tells it (e.g. under ``taskset``), capped by
    :func:`limit_threads`."""
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return available if _limit is None else max(1, min(available, _limit))


@contextmanager
def limit_threads(threads: int) -> Iterator[None]:
    """Run the body with at most ``threads`` threads in BLAS, OpenMP/FAISS, torch (if imported) and the exact k-NN;
    the previous settings are restored after."""
    global _limit
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    torch = sys.modules.get("torch")
    previous = _limit, faiss.omp_get_max_threads(), torch.get_num_threads() if torch else None
    _limit = threads
    try:
        with threadpool_limits(threads):
            faiss.omp_set_num_threads(threads)
            if torch is not None:
                torch.set_num_threads(threads)
            yield
    finally:
        _limit = previous[0]
        faiss.omp_set_num_threads(previous[1])
        if torch is not None and previous[2] is not None:
            torch.set_num_threads(previous[2])


def thread_counts() -> dict[str, int]:
    """Threads each library would start now: ``blas`` (the largest BLAS pool), ``openmp`` (FAISS), ``torch``
    (0 when torch is not imported) and ``knn`` (the exact k-NN's worker threads)."""
    torch = sys.modules.get("torch")
    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return {"blas": max(blas, default=0), "openmp": faiss.omp_get_max_threads(),
            "torch": torch.get_num_threads() if torch else 0, "knn": cores()}
