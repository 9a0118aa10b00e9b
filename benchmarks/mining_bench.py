"""Bitext mining on CPU: exact search against LASER's two-pass baseline, and approximate search at 1M x 1M.

Every (size, method) runs in a fresh subprocess; ``make bench`` runs both sections with their defaults (the
1M run takes several minutes and 3 GiB of disk under ``$TMPDIR``). Mining is LASER's default throughout
(k=4, ratio margin, ``max`` retrieval with the 1:1 filter).

EXACT SECTION (``--sizes``, default 10k and 50k; give none to skip). The inputs are RANDOM unit vectors
(float32, seeded), not sentence embeddings: timings and memory are what real embeddings of that size would
cost, the mined pairs only serve to check that both exact methods agree. Peak RSS is counted from the RSS
with the inputs loaded (``VmHWM``, reset through ``/proc/self/clear_refs``; ``ru_maxrss`` where there is no
``/proc``). Methods:

* ``faiss-2pass``: ``faiss.IndexFlatIP`` searched both ways, as ``mine_bitexts.py`` (the baseline);
* ``one-pass``: :func:`xlsent.mining.knn.bidirectional_knn`, one pass over ``X·Yᵀ`` for both directions;
* ``ivf-fixed``, ``ivf-tuned``: :func:`xlsent.mining.faiss_index.approx_bidirectional_knn` with an IVF index
  searched with ``--nprobe`` lists, or with ``nprobe`` tuned to 95% recall (random vectors have no
  cluster structure, so tuning ends in the fallback to exact search); scored by their recall of the
  exact pairs.

GFLOP/s counts the multiply-adds each method executes (two products for the baseline, one for ours)
against this machine's float32 matmul peak, measured first. Exact methods must mine the same set of
pairs (their order, by score, may differ where scores tie to float32 rounding), up to NEAR-TIES, which the
check names and counts: FAISS's sgemm and numpy's BLAS round the same inner products differently (by up to
a few float32 ulps, and differently again on another CPU), which can turn a choice between two candidates
whose margin scores agree to ~1e-7 either way, and the 1:1 selection carries such a flip on along a chain
of pairs. The pairs that one method mines and the other does not are grouped into such chains (pairs
linked by a shared source or target); a chain is a near-tie when one of its sentences, in either method,
has two competing margin scores within ``NEAR_TIE_RTOL`` (1e-5) of each other, relative (the best two of
its k-NN list, or two candidate pairs that claim it in the 1:1 selection), or k-NN lists that differ only
in neighbours within that tolerance of the other list's k-th similarity (see :func:`compare_pairs`). The
check reads "same pairs", "same pairs up to N near-tie(s) (...)", or "PAIRS DIFFER (...)"; the exit status
is 1 if any difference is not a near-tie.

APPROXIMATE SECTION (``--approx-sizes``, default 1M; give none to skip). Random vectors have no
neighbourhood structure, so no approximate index finds their exact neighbours cheaply, and there would be
nothing worth mining. The corpus is SYNTHETIC instead, with the structure of a mining task (seeded,
``--seed``): the N sources are random unit vectors; ``--planted`` (30%) of the N targets are noisy copies of
distinct sources at cosine ``--planted-cos`` (0.85): the planted translations; the other targets are
independent random unit vectors; which source goes to which target row is shuffled. The corpus is
generated in chunks into ``.npy`` files (``$TMPDIR``, 3 GiB at 1M x 384-d) outside the measured process.

The measured process opens them as memmaps (rows come in with explicit file reads, never whole) and runs
the k-NN search of ``xlsent mine --index KIND --nprobe NPROBE`` (without ``--nprobe`` the pipeline tunes
nprobe instead), with ``k`` and the defaults otherwise. ``--approx-index ivfbf16`` (the default):
:func:`xlsent.mining.ivf_bf16.ivf_bf16_knn`, one spherical k-means over a sample of both sides (4·sqrt(N)
lists), every row assigned to its list and its ``--approx-nprobe`` probes by bf16 products, then each
direction searched with bf16 products list by list and its neighbours re-scored in fp32, a pair found in
either direction offered to both; finished parts are saved in a work folder (made empty beside the corpus,
so nothing is reused; removed with it). A FAISS kind (``ivfpqfs``: IVF, 4-bit PQ codes scanned with FAISS's
fast-scan kernels, the best 8·k re-ranked by 8-bit scalar-quantised vectors; ``ivfsq``: the same lists
holding 8-bit scalar-quantised vectors): :func:`xlsent.mining.stages.approximate_knn`, one direction at a
time, an index over the database side trained by k-means on 64 points per list, filled, searched by query
shards of ``MineConfig.shard_rows`` rows saved in the work folder, and freed before the other direction,
with :func:`xlsent.mining.faiss_index.default_nlist` lists (2·sqrt(N)). Then the pairs are mined as above.
build s: ivfbf16: k-means and both sides' probes; FAISS: per direction, from its start to the end of its
index fill, summed over both directions; search s: the rest of the k-NN step; margin s: scoring and
selection; total s: their sum. Peak RSS is
that of the whole process (interpreter, libraries, the index of one direction at a time, k-NN lists).
The process runs with ``OMP_WAIT_POLICY=PASSIVE`` unless it is set: FAISS's OpenMP threads then sleep
instead of spinning while they wait, without which PQ training (thousands of tiny parallel steps) ran up
to 100 times slower on cores that another process was using.

Recall: ``--recall-sample`` sources (seeded) get their exact forward-mode margin-best target (their exact
k-NN among all targets and the exact k-NN means of those targets among all sources, from
:func:`xlsent.mining.knn.sample_bidirectional_knn`, without the N x N search); recall is the fraction of
them for which the approximate run's forward margin-best is the same target: over all sampled sources,
and over those with a planted translation. A source without one has as its best an arbitrary random
target at cosine ~0.25 (margin ~1, below any mining threshold), one of many near-ties no index can tell
apart, so "all" is low by construction; the planted pairs are the ones a threshold keeps, and the recall
target is judged on them. This evaluation runs after the peak RSS is taken and is timed apart.

Targets (issue 39, at N >= 1M): total <= 150 s, peak RSS <= 2 GiB, planted recall >= 0.98, printed as
PASS/FAIL (the exit status does not depend on them). "vs exact*" compares the total with the one-pass
exact time of the largest exact size of this run scaled by (N/n)^2: an estimate, exact 1M x 1M (about 85
minutes on 2 cores) is not run.

RECORD. The figures are printed and written to ``<--out>/mining.json`` for ``xlsent report``: one row per
method other than the baseline and size (total seconds against the baseline's, its pair check, the other
columns as details) and one per approximate size (total seconds against the estimate above, recalls and
targets as checks), with the machine, the arguments and notes on how the vectors were made.

SHIPPED RECALL. ``xlsent mine --index auto`` prints the recall to expect from ``src/xlsent/mining/
index_recall.json`` (package data, :mod:`xlsent.mining.auto_index`): per index kind, the planted and all-sources
recall of its largest approximate run, with N, nprobe, nlist, k, the corpus, the command, the date and the
machine. A run whose record goes to the default ``--out`` (the repository's ``results/bench/``) rewrites the
entries of the kinds it measured; ``--ship-recall-from RECORD`` writes them from an existing record, without
running anything. Runs with another ``--out`` leave the shipped file alone.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import (  # noqa: E402
    DEFAULT_OUT,
    OUT_HELP,
    BenchRecord,
    BenchRow,
    cpu_model,
    start_record,
)

from xlsent.arg_types import non_negative, positive_int  # noqa: E402

if TYPE_CHECKING:
    from xlsent.mining.knn import KnnResult, SampleKnn

METHODS = ("faiss-2pass", "one-pass", "one-pass-bf16", "ivf-fixed", "ivf-tuned")
SMALL_ONLY = ("faiss-2pass", "ivf-fixed", "ivf-tuned")  # run up to --baseline-max-size only
FP32_PATH = "one-pass"
SCORE_TOLERANCE = 1e-4  # xlsent score against LASER's score mode on identical embeddings
BOUND_TARGET = 0.75  # bf16 exact mining at most this share of one fp32 pass of X·Yᵀ at the fp32 peak
BASELINE = "faiss-2pass"
APPROX_KINDS = ("ivfbf16", "ivfpqfs", "ivfsq")
TARGET_N, TARGET_S, TARGET_RSS_MIB, TARGET_RECALL = 1_000_000, 150, 2048, 0.98  # issue 39
CORPUS_CHUNK = 1 << 14
PACKAGES = ("numpy", "faiss-cpu", "torch")
BASELINE_CASE = "faiss-2pass: LASER's two-pass FAISS IndexFlatIP search"
APPROX_CASE = "approx N={n} {index} nprobe={nprobe}"
APPROX_CASE_PATTERN = re.compile(r"approx N=(\d+) (\S+) nprobe=(\d+)")  # parses APPROX_CASE
NEAR_TIE_RTOL = 1e-5  # relative gap of two margin scores (or similarities) that float32 rounding may flip
KNN_FIELDS = ("fwd_idx", "fwd_sim", "bwd_idx", "bwd_sim")
T = TypeVar("T")


def _random_unit(rng: np.random.Generator, out: np.ndarray) -> np.ndarray:
    """Fill ``out`` with random float32 unit rows from ``rng``; ``out``."""
    rng.standard_normal(out.shape, dtype=np.float32, out=out)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    """``n`` random float32 unit vectors, made in chunks so that no temporary raises the peak RSS."""
    rng, v = np.random.default_rng(seed), np.empty((n, dim), np.float32)
    for lo in range(0, n, 4096):
        _random_unit(rng, v[lo : lo + 4096])
    return v


def _write_npy(path: Path, rows: int, dim: int, chunks: Iterator[np.ndarray]) -> None:
    """Write a ``(rows, dim)`` float32 ``.npy`` file from row chunks, with plain file writes (no mapping)."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (rows, dim)})
        for chunk in chunks:
            f.write(np.ascontiguousarray(chunk, dtype="<f4").tobytes())


def _read_npy_rows(path: Path, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` of a 2-d float32 ``.npy`` file, each with its own file read."""
    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        (_, dim), _, _ = np.lib.format.read_array_header_1_0(f)
        start, out = f.tell(), np.empty((len(rows), dim), "<f4")
        for i, row in enumerate(rows.tolist()):
            f.seek(start + row * out.strides[0])
            f.readinto(out[i])
    return out


def planted_corpus(folder: Path, n: int, dim: int, fraction: float, cos: float, seed: int) -> None:
    """Write a synthetic mining corpus into ``folder``: ``x.npy``, ``n`` random unit sources; ``y.npy``, ``n``
    unit targets of which ``round(fraction·n)``, at random rows, are noisy copies at cosine ``cos`` of distinct
    random sources (planted translations), the others independent random vectors; ``planted.npy``, the
    target row of each source's copy (-1 for none). Made in chunks of rows: memory stays ~16 bytes per row."""
    pair_rng, x_rng, y_rng = (np.random.default_rng([seed, stream]) for stream in range(3))
    n_planted = round(fraction * n)
    planted = np.full(n, -1, np.int64)
    planted[pair_rng.choice(n, n_planted, replace=False)] = pair_rng.choice(n, n_planted, replace=False)
    source_of = np.full(n, -1, np.int64)
    source_of[planted[planted >= 0]] = np.flatnonzero(planted >= 0)
    np.save(folder / "planted.npy", planted)
    spans = [(lo, min(n, lo + CORPUS_CHUNK)) for lo in range(0, n, CORPUS_CHUNK)]
    sources = (_random_unit(x_rng, np.empty((hi - lo, dim), np.float32)) for lo, hi in spans)
    _write_npy(folder / "x.npy", n, dim, sources)
    noise = math.sqrt(1 / cos**2 - 1) / math.sqrt(dim)  # noise of norm ~tan(arccos(cos)), nearly ⟂ its source

    def targets() -> Iterator[np.ndarray]:
        for lo, hi in spans:
            chunk = _random_unit(y_rng, np.empty((hi - lo, dim), np.float32))
            copies = np.flatnonzero(source_of[lo:hi] >= 0)
            noisy = _read_npy_rows(folder / "x.npy", source_of[lo + copies])
            noisy += noise * y_rng.standard_normal(noisy.shape, dtype=np.float32)
            chunk[copies] = noisy / np.linalg.norm(noisy, axis=1, keepdims=True)
            yield chunk

    _write_npy(folder / "y.npy", n, dim, targets())


def peak_gflops(size: int, repeats: int = 5) -> float:
    """float32 GFLOP/s of the best of ``repeats`` ``size``-square matrix products, by numpy's BLAS and by PyTorch
    (oneDNN), whichever is faster: the fp32 peak of this machine, which no fp32 mining path can beat."""
    import torch

    a, b = unit_vectors(size, size, 0), unit_vectors(size, size, 1)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    best = float("inf")
    for product in (lambda: a @ b, lambda: ta @ tb):
        product()
        best = min(best, *(_timed(product)[0] for _ in range(repeats)))
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


def run_method(method: str, n: int, dim: int, k: int, repeats: int,
               nprobe: int) -> tuple[dict[str, float], np.ndarray, KnnResult]:
    """Mine ``n x n`` random vectors with ``method``; timings (best of ``repeats``), peak RSS, the pairs
    ``(n_pairs, 2)`` and the k-NN lists they were mined from (of the last run)."""
    from xlsent.mining.faiss_index import approx_bidirectional_knn, two_pass_faiss_knn
    from xlsent.mining.knn import bidirectional_knn
    from xlsent.mining.knn_bf16 import bf16_bidirectional_knn
    from xlsent.mining.margin import Margin, Mode, select_candidates

    def mine(knn: KnnResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim, margin=Margin.RATIO,
                                 mode=Mode.MAX)

    x, y = unit_vectors(n, dim, 1), unit_vectors(n, dim, 2)
    search: Callable[[], KnnResult] = {
        "faiss-2pass": lambda: two_pass_faiss_knn(x, y, k), "one-pass": lambda: bidirectional_knn(x, y, k),
        "one-pass-bf16": lambda: bf16_bidirectional_knn(x, y, k),
        "ivf-fixed": lambda: approx_bidirectional_knn(x, y, k, "ivf", effort=nprobe),
        "ivf-tuned": lambda: approx_bidirectional_knn(x, y, k, "ivf")}[method]
    rss_inputs = _reset_peak_rss()
    knn_s, score_s = float("inf"), float("inf")
    for _ in range(repeats):
        t_knn, knn = _timed(search)
        t_score, (src, tgt, _) = _timed(partial(mine, knn))
        knn_s, score_s = min(knn_s, t_knn), min(score_s, t_score)
    stats = {"knn_s": knn_s, "score_s": score_s, "total_s": knn_s + score_s, "rss_mib": _peak_rss_mib() - rss_inputs}
    return stats, np.stack([src, tgt], axis=1), knn


def exact_forward_best(sample: SampleKnn) -> np.ndarray:
    """Each sampled source's target of highest ratio margin among its exact k nearest targets (forward mode)."""
    from xlsent.mining.margin import Margin, margin_scores

    bwd_mean = sample.bwd_sim.mean(axis=1, dtype=np.float64)[np.searchsorted(sample.targets, sample.fwd_idx)]
    scores = margin_scores(sample.fwd_sim, sample.fwd_sim.mean(axis=1, dtype=np.float64)[:, None], bwd_mean,
                           Margin.RATIO)
    return sample.fwd_idx[np.arange(len(scores)), scores.argmax(axis=1)]


def run_approx(folder: Path, kind: str, k: int, nprobe: int, sample: int, seed: int) -> dict[str, float]:
    """Mine the corpus of :func:`planted_corpus` in ``folder`` as ``xlsent mine --index kind --nprobe nprobe`` does:
    :func:`xlsent.mining.ivf_bf16.ivf_bf16_knn` (``ivfbf16``) or :func:`xlsent.mining.stages.approximate_knn`
    (FAISS kinds) over the memmapped sides, its finished parts saved in the work folder ``folder/work`` (made here,
    so it must not exist), then ratio margin with max retrieval. Timings (see
    the module's notes for build s and search s), this process's peak RSS from the start of mining, pairs, and
    recall of the exact forward margin-best targets of a seeded ``sample`` of sources (all and planted ones)."""
    import faiss

    from xlsent.mining import stages
    from xlsent.mining.config import IVF_BF16, SearchConfig
    from xlsent.mining.faiss_index import fill_index
    from xlsent.mining.ivf_bf16 import IvfShape, ivf_bf16_knn
    from xlsent.mining.knn import sample_bidirectional_knn
    from xlsent.mining.margin import Margin, Mode, select_candidates

    x, y = (np.load(folder / f"{side}.npy", mmap_mode="r") for side in ("x", "y"))
    cfg = SearchConfig(k=k, index=kind, effort=nprobe)
    work = folder / "work"
    work.mkdir()  # empty: no finished shard is reused
    marks: list[float] = []  # per direction: the end of its index fill, then the end of its shard search
    lists: list[int] = []

    def fill(index: faiss.Index, db: np.ndarray) -> faiss.Index:
        filled = fill_index(index, db)
        marks.append(time.perf_counter())
        lists.append(faiss.extract_index_ivf(filled).nlist)
        return filled

    def search(index: faiss.Index, queries: np.ndarray, bounds: list[tuple[int, int]], todo: list[int],
               nearest: int) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        yield from stages.search_shards_locally(index, queries, bounds, todo, nearest)
        marks.append(time.perf_counter())

    timings: dict[str, float] = {}
    _reset_peak_rss()
    start = time.perf_counter()
    if kind == IVF_BF16:
        knn = ivf_bf16_knn(x, y, k, IvfShape(nprobe=nprobe), store=stages.FolderStore(work), timings=timings)
    else:
        knn = stages.approximate_knn(x, y, cfg, work, fill=fill, search=search)
    searched = time.perf_counter()
    if knn is None:
        raise RuntimeError(f"no {kind} k-NN lists: IVF would need to scan so many lists that exact search is faster "
                           f"(xlsent mine would search exactly)")
    if kind == IVF_BF16:
        build_s, lists = timings["build_s"], [int(timings["nlist"])]
    else:
        fwd_filled, fwd_searched, bwd_filled, _ = marks
        build_s = (fwd_filled - start) + (bwd_filled - fwd_searched)
    pairs = select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim, margin=Margin.RATIO, mode=Mode.MAX)
    done = time.perf_counter()
    stats = {"nlist": lists[0], "build_s": build_s, "search_s": searched - start - build_s,
             "margin_s": done - searched, "total_s": done - start, "rss_mib": _peak_rss_mib(), "pairs": len(pairs[0])}
    rows = np.sort(np.random.default_rng(seed).choice(len(x), min(sample, len(x)), replace=False))
    approx_best = select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim, margin=Margin.RATIO,
                                    mode=Mode.FORWARD)[1][rows]
    eval_s, exact = _timed(lambda: sample_bidirectional_knn(x, y, k, rows))
    exact_best, planted = exact_forward_best(exact), np.load(folder / "planted.npy")[rows]
    hit, has_copy = approx_best == exact_best, planted >= 0
    return stats | {"eval_s": eval_s, "sampled": len(rows), "sampled_planted": int(has_copy.sum()),
                    "recall_all": float(hit.mean()), "recall_planted": float(hit[has_copy].mean()),
                    "exact_is_planted": float((exact_best == planted)[has_copy].mean())}


def _in_subprocess(method: str, n: int, args: argparse.Namespace,
                   tmp: Path) -> tuple[dict[str, float], np.ndarray, KnnResult]:
    """Stats, pairs and k-NN lists of :func:`run_method` run in a fresh process (the worker mode)."""
    from xlsent.mining.knn import KnnResult

    pairs_file = tmp / f"{method}-{n}.npz"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", method, "--sizes", str(n), "--dim", str(args.dim),
           "--k", str(args.k), "--repeats", str(args.repeats), "--nprobe", str(args.nprobe), "--pairs-out",
           str(pairs_file)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    with np.load(pairs_file) as saved:
        return json.loads(done.stdout.splitlines()[-1]), saved["pairs"], KnnResult(*(saved[f] for f in KNN_FIELDS))


def _approx_in_subprocess(n: int, args: argparse.Namespace, tmp: Path) -> tuple[float, dict[str, float]]:
    """Seconds to write the planted corpus of size ``n`` (here), and the stats of mining it (in a subprocess)."""
    folder = tmp / f"planted-{n}"
    folder.mkdir()
    gen_s, _ = _timed(lambda: planted_corpus(folder, n, args.dim, args.planted, args.planted_cos, args.seed))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--approx-worker", str(folder), "--approx-index",
           args.approx_index, "--approx-nprobe", str(args.approx_nprobe), "--k", str(args.k), "--recall-sample",
           str(args.recall_sample), "--seed", str(args.seed)]
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    finally:
        shutil.rmtree(folder)  # the corpus and the work folder: 3 GiB at 1M
    if done.returncode:
        raise RuntimeError(f"the approximate run at N={n} failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    return gen_s, json.loads(done.stdout.splitlines()[-1])


def _pair_set(pairs: np.ndarray) -> set[tuple[int, int]]:
    return set(map(tuple, pairs.tolist()))


class PairComparison(NamedTuple):  # not a dataclass: those need this file in sys.modules, tests load it by path
    """Pairs mined by a method against the baseline's: ``not_shared`` pairs are mined by one of them only;
    ``near_tie`` of these lie in the ``ties`` chains of differences that a near-tie explains (see
    :func:`compare_pairs`), the other ``differ`` do not."""

    not_shared: int
    near_tie: int
    ties: int
    rtol: float = NEAR_TIE_RTOL

    @property
    def differ(self) -> int:
        return self.not_shared - self.near_tie

    def text(self) -> str:
        """The check as printed: "same pairs", "same pairs up to ... near-tie(s) ..." or "PAIRS DIFFER ..."."""
        if self.differ:
            ties = f", {self.near_tie} more at near-ties" if self.near_tie else ""
            return f"PAIRS DIFFER ({self.differ} not shared{ties})"
        if self.near_tie:
            return (f"same pairs up to {self.ties} near-tie{'s' * (self.ties > 1)} ({self.near_tie} pair"
                    f"{'s' * (self.near_tie > 1)} not shared; competing scores within {self.rtol:g} relative)")
        return "same pairs"


def _close(a: np.ndarray, b: np.ndarray, rtol: float) -> np.ndarray:
    """``|a - b| <= rtol·max(|a|, |b|)``, elementwise."""
    return np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b))


def _list_ties(scores: np.ndarray, rtol: float) -> np.ndarray:
    """Rows of ``scores`` whose two best are within ``rtol`` (which is margin-best may flip)."""
    if scores.shape[1] < 2:
        return np.zeros(len(scores), bool)
    top = -np.partition(-scores, 1, axis=1)[:, :2]
    return _close(top[:, 0], top[:, 1], rtol)


def _claim_ties(owner: np.ndarray, score: np.ndarray, n: int, rtol: float) -> np.ndarray:
    """Owners (of ``n``) of which two candidate pairs have scores within ``rtol``: which one the 1:1 selection
    takes first may flip."""
    order = np.lexsort((-score, owner))
    owner, score = owner[order], score[order]
    same = (owner[1:] == owner[:-1]) & _close(score[1:], score[:-1], rtol)
    tied = np.zeros(n, bool)
    tied[owner[1:][same]] = True
    return tied


def near_tie_sentences(knn: KnnResult, rtol: float = NEAR_TIE_RTOL) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks of the sources and targets whose pair in ratio-margin ``max`` mining of ``knn`` turns on a
    near-tie: the best two margin scores of its k-NN list are within ``rtol`` relative, or two of the candidate
    pairs that claim it in the 1:1 selection (the margin-best target of each source, the margin-best source of
    each target) are."""
    from xlsent.mining.margin import Margin, neighbour_scores

    fwd, bwd = neighbour_scores(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim, Margin.RATIO)
    src_tied, tgt_tied = _list_ties(fwd, rtol), _list_ties(bwd, rtol)
    rows_x, rows_y = np.arange(len(fwd)), np.arange(len(bwd))
    best_f, best_b = fwd.argmax(axis=1), bwd.argmax(axis=1)
    src = np.concatenate([rows_x, knn.bwd_idx[rows_y, best_b]]).astype(np.int64)
    tgt = np.concatenate([knn.fwd_idx[rows_x, best_f], rows_y]).astype(np.int64)
    score = np.concatenate([fwd[rows_x, best_f], bwd[rows_y, best_b]])
    # a pair chosen from both sides is one candidate (its two scores may differ by rounding in two-pass search)
    key = src * len(bwd) + tgt
    order = np.lexsort((-score, key))
    first = order[np.r_[True, key[order][1:] != key[order][:-1]]]
    src_tied |= _claim_ties(src[first], score[first], len(fwd), rtol)
    tgt_tied |= _claim_ties(tgt[first], score[first], len(bwd), rtol)
    return src_tied, tgt_tied


def _boundary_ties(idx_a: np.ndarray, sim_a: np.ndarray, idx_b: np.ndarray, sim_b: np.ndarray,
                   rtol: float) -> np.ndarray:
    """Rows whose k-NN lists hold different neighbours, each missing from the other list within ``rtol`` of
    that list's k-th similarity (which neighbour comes k-th is a near-tie)."""
    in_b = (idx_a[:, :, None] == idx_b[:, None, :]).any(axis=2)
    in_a = (idx_b[:, :, None] == idx_a[:, None, :]).any(axis=2)
    near_a = in_b | (sim_a <= sim_b[:, -1:]) | _close(sim_a, sim_b[:, -1:], rtol)
    near_b = in_a | (sim_b <= sim_a[:, -1:]) | _close(sim_b, sim_a[:, -1:], rtol)
    return ~in_b.all(axis=1) & near_a.all(axis=1) & near_b.all(axis=1)


def compare_pairs(base_pairs: np.ndarray, base_knn: KnnResult, pairs: np.ndarray, knn: KnnResult,
                  rtol: float = NEAR_TIE_RTOL) -> PairComparison:
    """Compare the pairs ``(n, 2)`` mined (ratio margin, ``max``) from ``knn`` with those of the baseline, up to
    near-ties. The pairs mined by one method only are grouped into chains (connected by a shared source or
    target: a changed choice moves the 1:1 selection along such a chain); a chain is explained by a near-tie when
    one of its sentences is a near-tie in either method (:func:`near_tie_sentences`) or has k-NN lists that differ
    between the methods only at their k-th place, within ``rtol`` (a difference of float rounding). Any other
    chain is a real difference."""
    differ = _pair_set(base_pairs) ^ _pair_set(pairs)
    if not differ:
        return PairComparison(0, 0, 0, rtol)
    n_x = len(knn.fwd_idx)
    src_tied, tgt_tied = (a | b for a, b in zip(near_tie_sentences(base_knn, rtol), near_tie_sentences(knn, rtol),
                                                 strict=True))
    src_tied |= _boundary_ties(base_knn.fwd_idx, base_knn.fwd_sim, knn.fwd_idx, knn.fwd_sim, rtol)
    tgt_tied |= _boundary_ties(base_knn.bwd_idx, base_knn.bwd_sim, knn.bwd_idx, knn.bwd_sim, rtol)
    parent: dict[int, int] = {}

    def root(node: int) -> int:
        while parent.setdefault(node, node) != node:
            parent[node] = node = parent[parent[node]]
        return node

    for s, t in differ:
        parent[root(s)] = root(n_x + t)
    chains: dict[int, list[tuple[int, int]]] = {}
    for s, t in differ:
        chains.setdefault(root(s), []).append((s, t))
    tied = [chain for chain in chains.values() if any(src_tied[s] or tgt_tied[t] for s, t in chain)]
    return PairComparison(len(differ), sum(map(len, tied)), len(tied), rtol)


def _verdict(n: int, stats: dict[str, float]) -> str:
    """PASS/FAIL against the issue's targets for the 1M run (and larger)."""
    if n < TARGET_N:
        return "- (targets are for N >= 1M)"
    failed = [name for name, ok in (("time", stats["total_s"] <= TARGET_S), ("RSS", stats["rss_mib"] <= TARGET_RSS_MIB),
                                    ("recall", stats["recall_planted"] >= TARGET_RECALL)) if not ok]
    return "PASS" if not failed else f"FAIL ({', '.join(failed)})"


def _exact_section(args: argparse.Namespace, tmp: Path, record: BenchRecord) -> tuple[int, dict[int, float]]:
    """Run and print the exact table, adding its rows to ``record``; the exit status and the one-pass total
    seconds per size."""
    peak = peak_gflops(args.peak_size)
    print(f"float32 matmul peak ({args.peak_size}^2 x {args.peak_size}, numpy or PyTorch): {peak:.0f} GFLOP/s\n")
    print(f"EXACT: RANDOM unit vectors ({args.dim}-d float32), k={args.k}, ratio margin, max retrieval (1:1); "
          f"ivf-fixed: nprobe={args.nprobe}")
    record.notes += [
        f"Exact rows: the inputs are RANDOM unit vectors ({args.dim}-d float32, seeded), not sentence embeddings: "
        f"the pairs only check that the methods agree. k={args.k}, ratio margin, max retrieval with the 1:1 filter; "
        f"ivf-fixed searches nprobe={args.nprobe} lists, ivf-tuned tunes nprobe to 95% recall. Each method runs "
        f"in a fresh subprocess; best of {args.repeats} run(s).",
        f"Pair check of one-pass against faiss-2pass: the pair sets must be equal up to NEAR-TIES, which are counted: "
        f"FAISS's sgemm and numpy's BLAS round inner products differently (a few float32 ulps; differently again on "
        f"another CPU), which can flip a choice between candidates whose margin scores agree to ~1e-7, and the 1:1 "
        f"selection carries the flip along a chain of pairs. A chain of pairs not shared (linked by a shared source or "
        f"target) is a near-tie when one of its sentences has, in either method, two competing margin scores within "
        f"{NEAR_TIE_RTOL:g} relative (its k-NN list's best two, or two candidate pairs claiming it in the 1:1 "
        f"selection), or k-NN lists that differ only at the k-th place within that tolerance.",
        f"RSS MiB: peak RSS above the RSS with the inputs loaded. GFLOP/s counts the multiply-adds a method executes "
        f"(two products for faiss-2pass, one for one-pass and one-pass-bf16); float32 matmul peak of this machine "
        f"({args.peak_size}^2 x {args.peak_size}, the faster of numpy and PyTorch, best of 5, measured first): "
        f"{peak:.0f} GFLOP/s. The fp32 bound of a size is "
        f"the time one fp32 pass of X·Yᵀ (2·N²·dim flops) takes at that peak: no fp32 path can beat it.",
        f"one-pass-bf16 (`--precision bf16`): candidates found with bf16 products, re-scored in fp32 "
        f"(xlsent.mining.knn_bf16); its pairs are checked against one-pass (fp32) as one-pass's are against the "
        f"baseline, and its time against {BOUND_TARGET}x the fp32 bound. faiss-2pass (LASER's mine_bitexts.py "
        f"search: LASER's own script is not available to the bench, so its two FAISS IndexFlatIP searches are run "
        f"here) and the IVF rows run up to N={args.baseline_max_size} only: the baseline's time grows with N², so at "
        f"200k it would take 16 times its 50k time."]
    header = (f"{'N':>7} {'method':<13} {'k-NN s':>8} {'margin s':>8} {'total s':>8} {'RSS MiB':>8} "
              f"{'GFLOP/s':>8} {'% peak':>6} {'vs 2-pass':>9} {'pairs':>7}  check")
    print(header)
    print("-" * len(header))
    status, one_pass = 0, {}
    precisions: dict[int, dict[str, float]] = {}
    for n in args.sizes:
        results = {m: _in_subprocess(m, n, args, tmp) for m in args.methods
                   if m not in SMALL_ONLY or n <= args.baseline_max_size}
        base = results.get(BASELINE)
        bound_s = 2 * n * n * args.dim / (peak * 1e9)
        for method, (stats, pairs, knn) in results.items():
            products = {"faiss-2pass": 2, "one-pass": 1, "one-pass-bf16": 1}.get(method)
            gflops = products * 2 * n * n * args.dim / stats["knn_s"] / 1e9 if products else None
            ratio = f"{stats['total_s'] / base[0]['total_s']:.2f}x" if base else "-"
            checks: dict[str, bool | int | float | str] = {}
            if method == BASELINE or base is None:
                check = "baseline" if method == BASELINE else "-"
            elif method.startswith("ivf"):
                found = len(_pair_set(pairs) & _pair_set(base[1])) / max(len(base[1]), 1)
                check = f"recall of exact pairs {found:.3f}"
                checks["recall of exact pairs"] = found
            else:
                compared = compare_pairs(base[1], base[2], pairs, knn)
                status |= int(compared.differ > 0)
                check = compared.text()
                checks["same pairs as baseline"] = not compared.not_shared
                checks["same pairs up to near-ties"] = not compared.differ
                if compared.not_shared:
                    checks |= {"pairs not shared": compared.not_shared, "of them at near-ties": compared.near_tie,
                               "near-ties": compared.ties, "near-tie tolerance (relative)": compared.rtol}
            if method == "one-pass-bf16" and FP32_PATH in results:
                fp32 = results[FP32_PATH]
                against_fp32 = compare_pairs(fp32[1], fp32[2], pairs, knn)
                status |= int(against_fp32.differ > 0)
                check += f"; vs fp32 one-pass: {against_fp32.text()}"
                checks |= {"same pairs as fp32 up to near-ties": not against_fp32.differ,
                           "pairs not shared with fp32": against_fp32.not_shared,
                           "share of pairs not shared with fp32": against_fp32.not_shared / max(len(fp32[1]), 1),
                           f"at most {BOUND_TARGET}x one fp32 pass at peak": stats["total_s"] <= BOUND_TARGET * bound_s}
            rate = f"{gflops:>8.0f} {100 * gflops / peak:>5.0f}%" if gflops else f"{'-':>8} {'-':>6}"
            check += f"; {stats['total_s'] / bound_s:.2f}x the fp32 bound"
            print(f"{n:>7} {method:<13} {stats['knn_s']:>8.2f} {stats['score_s']:>8.2f} {stats['total_s']:>8.2f} "
                  f"{stats['rss_mib']:>8.0f} {rate} {ratio:>9} {len(pairs):>7}  {check}", flush=True)
            if method == FP32_PATH:
                one_pass[n] = stats["total_s"]
            if method in (FP32_PATH, "one-pass-bf16"):
                precisions.setdefault(n, {})[method] = stats["total_s"]
            if method == "one-pass-bf16" and FP32_PATH in results:
                precisions[n]["pairs not shared"] = against_fp32.not_shared
            if method != BASELINE:
                details = {"k-NN s": stats["knn_s"], "margin s": stats["score_s"], "RSS MiB": stats["rss_mib"],
                           "pairs": len(pairs), "fp32 bound s": bound_s, "x fp32 bound": stats["total_s"] / bound_s}
                if gflops:
                    details |= {"GFLOP/s": gflops, "% of peak": 100 * gflops / peak}
                if base:
                    details["baseline RSS MiB"] = base[0]["rss_mib"]
                record.rows.append(BenchRow(f"exact N={n} {method}", "s", stats["total_s"],
                                            base[0]["total_s"] if base else None, BASELINE_CASE if base else "",
                                            checks, details))
    scored = score_check(args.score_size, args.dim, args.k)
    agrees = scored["max_diff"] <= SCORE_TOLERANCE
    status |= int(not agrees)
    print(f"\nxlsent score vs LASER's --mode score, {args.score_size} random pairs: largest score difference "
          f"{scored['max_diff']:.2e} ({'within' if agrees else 'ABOVE'} {SCORE_TOLERANCE:g}); {scored['ours_s']:.1f}s "
          f"against {scored['laser_s']:.1f}s")
    record.rows.append(BenchRow(f"score N={args.score_size} vs LASER score mode", "s", scored["ours_s"],
                                scored["laser_s"], "LASER's mine_bitexts.py --mode score (its FAISS k-NN, run here)",
                                {f"largest score difference <= {SCORE_TOLERANCE:g}": agrees},
                                {"largest score difference": scored["max_diff"]}))
    measured = [n for n, times in precisions.items() if len(times) == 3]
    if measured and args.out.resolve() == DEFAULT_OUT.resolve():
        print(f"wrote {ship_precision_record(max(measured), precisions[max(measured)], args)}")
    return status, one_pass


def score_check(n: int, dim: int, k: int) -> dict[str, float]:
    """``xlsent score``'s margins of ``n`` given pairs (row i of random sources with row i of random targets) against
    LASER's ``mine_bitexts.py --mode score`` on the same embeddings (its FAISS k-NN both ways, then
    ``cos / ((x2y_mean + y2x_mean) / 2)`` per pair): seconds of each and the largest score difference."""
    from xlsent.mining.config import SearchConfig
    from xlsent.mining.faiss_index import two_pass_faiss_knn
    from xlsent.mining.job import pair_scores
    from xlsent.mining.stages import neighbourhoods

    x, y = unit_vectors(n, dim, 3), unit_vectors(n, dim, 4)
    laser_s, knn = _timed(lambda: two_pass_faiss_knn(x, y, k))
    x2y_mean, y2x_mean = knn.fwd_sim.mean(axis=1), knn.bwd_sim.mean(axis=1)
    laser = np.array([x[i].dot(y[i]) / ((x2y_mean[i] + y2x_mean[i]) / 2) for i in range(n)])
    rows = np.arange(n)

    def ours() -> np.ndarray:
        lists = neighbourhoods(x, y, SearchConfig(k=k))
        means = (lists.fwd_sim.mean(axis=1, dtype=np.float64), lists.bwd_sim.mean(axis=1, dtype=np.float64))
        return pair_scores(x, y, rows, rows, means, "ratio")

    ours_s, scores = _timed(ours)
    return {"laser_s": laser_s, "ours_s": ours_s, "max_diff": float(np.abs(scores - laser).max())}


def ship_precision_record(n: int, times: dict[str, float], args: argparse.Namespace) -> Path:
    """Write the exact k-NN times of fp32 and bf16 at size ``n`` into the measurement shipped with xlsent for
    ``--precision auto`` (``src/xlsent/mining/knn_precision.json``), under this machine's CPU class."""
    import datetime

    from xlsent.encoders.backends import cpu_class
    from xlsent.mining.precision import ship_precision

    return ship_precision(cpu_class(), {
        "fp32_s": times[FP32_PATH], "bf16_s": times["one-pass-bf16"],
        "pairs_not_shared": int(times["pairs not shared"]),
        "sentences": n, "dim": args.dim, "k": args.k, "corpus": "random unit vectors",
        "command": "python benchmarks/mining_bench.py", "date": datetime.date.today().isoformat(),
        "cpu": cpu_model()})


def approx_row(n: int, index: str, nprobe: int, stats: dict[str, float], gen_s: float,
               one_pass: dict[int, float]) -> BenchRow:
    """The record row of the approximate run at size ``n``; its baseline is the one-pass exact total of the
    largest exact size of the run scaled by (N/n)^2 (None without one)."""
    ref = max(one_pass, default=None)
    checks = {"recall planted": stats["recall_planted"], "recall all": stats["recall_all"],
              "targets": _verdict(n, stats)}
    details = {key: stats[name] for key, name in (
        ("build s", "build_s"), ("search s", "search_s"), ("margin s", "margin_s"), ("RSS MiB", "rss_mib"),
        ("nlist", "nlist"), ("pairs", "pairs"), ("sampled", "sampled"), ("sampled planted", "sampled_planted"),
        ("exact finds planted", "exact_is_planted"), ("exact reference s", "eval_s"))} | {"corpus written s": gen_s}
    baseline, baseline_case = None, ""
    if ref is not None:
        baseline = one_pass[ref] * (n / ref) ** 2
        baseline_case = f"estimate: one-pass exact at N={ref} x (N/{ref})^2 (exact {n} x {n} is not run)"
    return BenchRow(APPROX_CASE.format(n=n, index=index, nprobe=nprobe), "s", stats["total_s"], baseline,
                    baseline_case, checks, details)


def recall_records(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The recall of each index kind measured in a mining ``record`` (as read from ``mining.json``): that of its
    approximate row of the largest N, with how and on what it was measured, as
    :func:`xlsent.mining.auto_index.ship_recall` stores it."""
    args, machine = record["arguments"], record["machine"]
    corpus = (f"synthetic, seed {args['seed']}: N random unit {args['dim']}-d sources; {args['planted']:.0%} of the N "
              f"targets are noisy copies of distinct sources at cosine {args['planted_cos']}, the others random unit "
              f"vectors; rows shuffled")
    method = (f"share of {args['recall_sample']} sampled sources (seeded) whose exact forward margin-best target "
              f"(k={args['k']}, ratio margin) the index run picks too: over those with a planted copy (planted) and "
              f"over all sampled (all)")
    runs = sorted(((int(found[1]), found[2], int(found[3]), row) for row in record["rows"]
                   if (found := APPROX_CASE_PATTERN.fullmatch(row["case"]))), key=lambda run: run[0])
    return {kind: {"recall_planted": row["checks"]["recall planted"], "recall_all": row["checks"]["recall all"],
                   "sentences": n, "nprobe": nprobe, "nlist": row["details"]["nlist"], "k": args["k"],
                   "corpus": corpus, "method": method, "command": record["command"], "date": record["created"][:10],
                   "machine": {key: machine.get(key) for key in ("cpu", "cores", "ram_gib", "xlsent", "packages")}}
            for n, kind, nprobe, row in runs}  # sorted by N: the largest run of a kind comes last and stays


def ship_recall_from(path: Path) -> Path | None:
    """Write the recall of the index kinds measured in the mining record ``path`` into the recall shipped with
    xlsent; its path, or None (and a message) when the record has no approximate run."""
    from xlsent.mining.auto_index import ship_recall

    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read a mining benchmark record ({exc})") from exc
    if not isinstance(record, dict) or record.get("bench") not in ("mining", "mining-approx"):
        raise ValueError(f"{path}: not a mining benchmark record")
    records = recall_records(record)
    if not records:
        print(f"{path}: no approximate run; the shipped recall is unchanged")
        return None
    return ship_recall(records)


def _approx_section(args: argparse.Namespace, one_pass: dict[int, float], tmp: Path, record: BenchRecord) -> None:
    """Run and print the approximate table on planted corpora, adding its rows to ``record``."""
    from xlsent.mining.config import MineConfig

    shard_rows = MineConfig().shard_rows
    print(f"APPROXIMATE: SYNTHETIC corpus with planted translations ({args.dim}-d, seed {args.seed}): random unit "
          f"sources;\n{args.planted:.0%} of the targets are noisy copies of a source at cosine {args.planted_cos}, "
          f"the others random unit vectors; rows shuffled.\nk-NN as `xlsent mine --index {args.approx_index} --nprobe "
          f"{args.approx_nprobe}` over memmapped inputs, finished parts saved to a work folder;\nk={args.k}, ratio "
          f"margin, max retrieval (1:1).\nRecall: share of "
          f"{args.recall_sample} sampled sources whose exact forward margin-best target the index run picks too\n"
          f"(all sampled / planted only).\nTargets at N >= 1M: total <= {TARGET_S} s, peak RSS of the whole "
          f"process <= {TARGET_RSS_MIB} MiB, planted recall >= {TARGET_RECALL}.")
    record.notes += [
        f"Approximate rows: a SYNTHETIC corpus with planted translations ({args.dim}-d float32, seed {args.seed}): "
        f"N random unit sources; {args.planted:.0%} of the N targets are noisy copies of distinct sources at cosine "
        f"{args.planted_cos}, the others independent random unit vectors; rows shuffled. Written to disk and read "
        f"as memmaps by a fresh process.",
        f"k-NN measured on the path of `xlsent mine --index {args.approx_index} --nprobe {args.approx_nprobe}` over "
        f"the memmapped inputs: " + (
            "xlsent.mining.ivf_bf16.ivf_bf16_knn (one spherical k-means over a sample of both sides, 4·sqrt(N) lists; "
            "both sides assigned by bf16 products; each direction searched list by list with bf16 products, its "
            "neighbours re-scored in fp32; a pair found in either direction offered to both; finished parts saved to "
            "a work folder on disk). build s: k-means and both sides' probes; search s: both directions, re-scoring "
            "included. " if args.approx_index == "ivfbf16" else
            f"xlsent.mining.stages.approximate_knn, one direction at a time (an index over one side with the "
            f"pipeline's default nlist, xlsent.mining.faiss_index.default_nlist, trained by k-means on a sample, "
            f"filled, searched by query shards of {shard_rows} rows, each saved to a work folder on disk, and freed "
            f"before the other direction). build s: per direction, its start to the end of its index fill (training "
            f"and filling), summed; search s: the rest of the k-NN step (nprobe set, shards searched, written and "
            f"read back). ") +
        f"k={args.k}, ratio margin, max retrieval (1:1). RSS MiB: peak RSS of the whole mining process. Recall: "
        f"share of {args.recall_sample} sampled sources whose exact forward margin-best target the index run picks "
        f"too (all sampled / those with a planted copy). Targets at N >= 1M: total <= {TARGET_S} s, peak "
        f"RSS <= {TARGET_RSS_MIB} MiB, planted recall >= {TARGET_RECALL}."]
    header = (f"{'N':>7} {'index':<8} {'nlist':>5} {'nprobe':>6} {'build s':>8} {'search s':>8} {'margin s':>8} "
              f"{'total s':>8} {'RSS MiB':>8} {'vs exact*':>9} {'recall':>6} {'planted':>7}  targets")
    print(header)
    print("-" * len(header))
    for n in args.approx_sizes:
        gen_s, stats = _approx_in_subprocess(n, args, tmp)
        row = approx_row(n, args.approx_index, args.approx_nprobe, stats, gen_s, one_pass)
        record.rows.append(row)
        ratio = "-" if row.ratio is None else f"{row.ratio:.3f}x"
        print(f"{n:>7} {args.approx_index:<8} {stats['nlist']:>5} {args.approx_nprobe:>6} {stats['build_s']:>8.1f} "
              f"{stats['search_s']:>8.1f} {stats['margin_s']:>8.1f} {stats['total_s']:>8.1f} {stats['rss_mib']:>8.0f} "
              f"{ratio:>9} {stats['recall_all']:>6.3f} {stats['recall_planted']:>7.3f}  {_verdict(n, stats)}")
        print(f"{'':>7} corpus written in {gen_s:.0f}s; {stats['pairs']} pairs mined; recall over {stats['sampled']} "
              f"sampled sources, {stats['sampled_planted']} planted\n{'':>7} (exact search finds the planted copy "
              f"of {stats['exact_is_planted']:.1%}; exact reference in {stats['eval_s']:.0f}s)", flush=True)
    if one_pass:
        print(f"* total / (one-pass exact total at N={max(one_pass)} x (N/{max(one_pass)})^2): an estimate")


def build_parser() -> argparse.ArgumentParser:
    """The bench's options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=positive_int, nargs="*", default=[50_000, 200_000],
                        help="N of the exact section (sources = targets; none: skip it)")
    parser.add_argument("--score-size", type=positive_int, default=20_000,
                        help="pairs of the check of xlsent score against LASER's score mode")
    parser.add_argument("--baseline-max-size", type=non_negative(int), default=50_000,
                        help="the largest N at which faiss-2pass (LASER's search) and the IVF methods run (0: never)")
    parser.add_argument("--dim", type=positive_int, default=384, help="embedding dimension (both sections)")
    parser.add_argument("--k", type=positive_int, default=4, help="neighbours in the margin (both sections)")
    parser.add_argument("--repeats", type=positive_int, default=1,
                        help="timed runs per exact method (best is reported)")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS), help="exact-section methods")
    parser.add_argument("--nprobe", type=positive_int, default=16, help="IVF lists searched by ivf-fixed")
    parser.add_argument("--peak-size", type=positive_int, default=4096, help="side of the matmul measuring the peak")
    parser.add_argument("--approx-sizes", type=positive_int, nargs="*", default=[TARGET_N],
                        help="N of the approximate section (none: skip it)")
    parser.add_argument("--approx-index", choices=APPROX_KINDS, default=APPROX_KINDS[0],
                        help="index kind of the approximate section: ivfbf16 (xlsent.mining.ivf_bf16) or a FAISS kind "
                             "(see xlsent.mining.faiss_index.train_index)")
    parser.add_argument("--approx-nprobe", type=positive_int, default=40,
                        help="IVF lists searched in the approximate section (40 of the 4000 of ivfbf16 at 1M; the "
                             "lists are the pipeline's default: xlsent.mining.ivf_bf16.IvfShape.lists_for, "
                             "xlsent.mining.faiss_index.default_nlist for FAISS kinds)")
    parser.add_argument("--planted", type=float, default=0.3, help="fraction of targets that copy a source")
    parser.add_argument("--planted-cos", type=float, default=0.85, help="cosine of a planted copy to its source")
    parser.add_argument("--recall-sample", type=positive_int, default=2000,
                        help="sources whose exact pairs measure recall")
    parser.add_argument("--seed", type=non_negative(int), default=0,
                        help="seed of the planted corpus and the recall sample (the index's k-means sample is the "
                             "pipeline's, seed 0)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP + "; there, the approximate runs' "
                        "recall is also written into the recall shipped with xlsent")
    parser.add_argument("--ship-recall-from", type=Path, metavar="RECORD",
                        help="only write the recall of the approximate runs of the mining record RECORD (e.g. "
                             "results/bench/mining.json) into src/xlsent/mining/index_recall.json, and exit")
    parser.add_argument("--worker", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--pairs-out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--approx-worker", type=Path, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.worker:
        stats, pairs, knn = run_method(args.worker, args.sizes[0], args.dim, args.k, args.repeats, args.nprobe)
        np.savez(args.pairs_out, pairs=pairs, **{field: getattr(knn, field) for field in KNN_FIELDS})
        print(json.dumps(stats))
        return 0
    if args.approx_worker:
        print(json.dumps(run_approx(args.approx_worker, args.approx_index, args.k, args.approx_nprobe,
                                    args.recall_sample, args.seed)))
        return 0
    if args.ship_recall_from:
        shipped = ship_recall_from(args.ship_recall_from)
        if shipped:
            print(f"wrote {shipped}")
        return 0
    if not args.sizes and not args.approx_sizes:
        parser.error("--sizes and --approx-sizes are both empty: nothing to measure; give either section a size")

    name, title = (("mining", "Bitext mining on CPU: exact and approximate k-NN with the ratio margin") if args.sizes
                   else ("mining-approx", "Bitext mining on CPU: approximate k-NN at scale with the ratio margin"))
    record = start_record(name, title, __file__, argv, args, PACKAGES,
                          hidden=("worker", "pairs_out", "approx_worker", "ship_recall_from"))
    status, one_pass = 0, {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.sizes:
            status, one_pass = _exact_section(args, Path(tmp), record)
            print()
        if args.approx_sizes:
            _approx_section(args, one_pass, Path(tmp), record)
    written = record.write(args.out)
    print(f"wrote {written}")
    shipped = ship_recall_from(written) if args.approx_sizes and args.out.resolve() == DEFAULT_OUT.resolve() else None
    if shipped:
        print(f"wrote {shipped}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
