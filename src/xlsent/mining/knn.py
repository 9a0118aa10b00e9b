"""Inner-product k-NN in both directions, for margin scoring.

:func:`bidirectional_knn` is exact and makes ONE pass over the tiles of ``X·Yᵀ``: each tile updates the
running top-k of its rows (sources) and of its columns (targets), so both directions cost one matrix
product instead of the two of LASER's ``mine_bitexts.py`` (reproduced by :func:`two_pass_faiss_knn`).
The top-k bookkeeping stays cheap next to the product: a tile's candidates are only the entries that
beat both the running k-th best of their row/column and a lower bound of the tile's own k-th best (the
k-th largest of ``2k`` group maxima), usually a handful per row, found with one comparison pass and
merged with one small sort, on all cores at once (each thread owns a span of rows or columns). Ties are
broken towards the smaller index, so results are deterministic.

:func:`approx_bidirectional_knn` uses FAISS indexes (IVF, IVF-PQ, IVF-SQ, IVF-PQ fast scan, HNSW) for corpora
too large for exact search; :func:`recall` measures what they miss, and :func:`sample_bidirectional_knn` gives
the exact lists that margin scoring needs for a sample of sources, to check approximate results at any size.
Memmapped ``.npy`` inputs are read with explicit file reads, so their pages do not add up in the RSS.
"""

from __future__ import annotations

import logging
import math
import mmap
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import faiss
import numpy as np
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from xlsent.mining.threads import cores

log = logging.getLogger(__name__)

DEFAULT_MAX_MEMORY = 1 << 30
# Tile shape measured fastest on CPU (numpy/OpenBLAS sgemm, 384-d): the 16 MiB similarity tile stays in L3.
TILE_ROWS, TILE_COLS = 4096, 1024
INDEX_KINDS = ("flat", "ivf", "ivfpq", "ivfsq", "ivfpqfs", "hnsw", "auto")
AUTO_FLAT_MAX_ROWS = 200_000
CHUNK_ROWS = 1 << 16
# IVF lists per sqrt(rows) and k-means training points per list, by index kind: the compressed kinds for
# corpora of millions of rows use fewer lists and points, so that training takes a minute rather than ten.
IVF_SHAPE = {"ivf": (4, 256), "ivfpq": (4, 256), "ivfsq": (2, 64), "ivfpqfs": (2, 64)}
REFINE_FACTOR = 8
FaissIndex = TypeVar("FaissIndex", bound=faiss.Index)


@dataclass(frozen=True)
class KnnResult:
    """k-NN lists, best first: ``fwd_*`` ``(n_x, k)`` targets of each source, ``bwd_*`` ``(n_y, k)`` sources of
    each target; ``*_idx`` int64 row numbers, ``*_sim`` float32 inner products."""

    fwd_idx: np.ndarray
    fwd_sim: np.ndarray
    bwd_idx: np.ndarray
    bwd_sim: np.ndarray


def check_inputs(x: np.ndarray, y: np.ndarray, k: int) -> tuple[int, int]:
    """Validate the shapes of sources ``x`` and targets ``y``; the neighbourhood sizes ``(k_fwd, k_bwd)``, clipped
    to the other side's size."""
    if x.ndim != 2 or y.ndim != 2:
        raise ValueError(f"expected 2-d embedding matrices, got shapes {x.shape} and {y.shape}")
    if len(x) == 0 or len(y) == 0:
        raise ValueError(f"cannot search with an empty side: {len(x)} sources, {len(y)} targets")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"dimension mismatch: sources have {x.shape[1]} dims, targets {y.shape[1]}")
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    k_fwd, k_bwd = min(k, len(y)), min(k, len(x))
    if (k_fwd, k_bwd) != (k, k):
        log.warning("k=%d exceeds the corpus size (%d sources, %d targets); using k=%d forward and k=%d backward",
                    k, len(x), len(y), k_fwd, k_bwd)
    return k_fwd, k_bwd


def _rows(a: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Rows ``[lo, hi)`` as an in-memory C-contiguous float32 array (read from disk for a memmap)."""
    raw = _file_rows(a, lo, hi)
    if raw is None:
        block = np.array(a[lo:hi], dtype=np.float32, order="C", copy=isinstance(a, np.memmap) or None)
    else:
        block = raw.astype(np.float32, copy=False)
    if not np.isfinite(block).all():
        raise ValueError(f"embeddings contain NaN or inf in rows {lo}..{hi - 1}")
    return block


def _file_rows(a: np.ndarray, lo: int, hi: int) -> np.ndarray | None:
    """Rows ``[lo, hi)`` of a C-order memmap over a file (as ``np.load(..., mmap_mode="r")`` gives), read from
    the file: pages read through the mapping would stay mapped, counted in the RSS until the map is closed.
    ``None`` for other arrays (in memory, views of a memmap, copy-on-write maps)."""
    if not (isinstance(a, np.memmap) and isinstance(a.base, mmap.mmap) and a.mode in ("r", "r+", "w+")
            and a.flags.c_contiguous and a.filename):
        return None
    block = np.empty((hi - lo, *a.shape[1:]), a.dtype)
    with open(a.filename, "rb") as f:
        f.seek(a.offset + lo * a.strides[0])
        if f.readinto(block.reshape(-1).view(np.uint8)) != block.nbytes:
            raise OSError(f"{a.filename} ends before row {hi - 1} of its array")
    return block


def take_rows(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` (any order) of ``a`` as an in-memory C-contiguous float32 array, read chunk by chunk."""
    order = np.argsort(rows, kind="stable")
    wanted = np.asarray(rows)[order]
    out = np.empty((len(wanted), a.shape[1]), np.float32)
    bounds = np.searchsorted(wanted, np.arange(0, len(a) + CHUNK_ROWS, CHUNK_ROWS))
    for chunk in np.flatnonzero(np.diff(bounds)):
        lo, first, last = int(chunk) * CHUNK_ROWS, bounds[chunk], bounds[chunk + 1]
        out[order[first:last]] = _rows(a, lo, min(len(a), lo + CHUNK_ROWS))[wanted[first:last] - lo]
    return out


def _max_hits(tile_size: int) -> int:
    """Candidates handled at once in a tile (about 64 bytes each while merged); more are taken in row chunks."""
    return max(1, tile_size // 16)


def _tile_bytes(rows: int, cols: int, dim: int) -> int:
    """Working memory of one tile: embedding blocks, similarities, the comparison mask (shared by both
    directions, which are folded one after the other) and candidate arrays."""
    return 4 * dim * (rows + cols) + 5 * rows * cols + 2 * 64 * _max_hits(rows * cols)


def tile_shape(n_x: int, n_y: int, dim: int, max_memory: int = DEFAULT_MAX_MEMORY,
               block_rows: int | None = None) -> tuple[int, int]:
    """Rows and columns of the similarity tiles: ``block_rows`` both ways if given, else the measured best
    shape shrunk until a tile's working memory fits ``max_memory``.

    >>> tile_shape(100_000, 100_000, 384)
    (4096, 1024)
    >>> tile_shape(100_000, 100_000, 384, max_memory=4 << 20)
    (512, 256)
    """
    if block_rows is not None:
        if block_rows < 1:
            raise ValueError(f"block_rows must be positive, got {block_rows}")
        return min(block_rows, n_x), min(block_rows, n_y)
    rows, cols = min(TILE_ROWS, n_x), min(TILE_COLS, n_y)
    while _tile_bytes(rows, cols, dim) > max_memory and rows * cols > 1:
        rows, cols = (max(1, rows // 2), cols) if rows >= 4 * cols or cols == 1 else (rows, max(1, cols // 2))
    if _tile_bytes(rows, cols, dim) > max_memory:
        raise ValueError(f"max_memory={max_memory} bytes cannot hold even one {dim}-d row pair")
    return rows, cols


def _descending_key(owner: np.ndarray, sim: np.ndarray) -> np.ndarray:
    """uint64 keys ordering by owner, then by float32 similarity descending."""
    bits = sim.astype(np.float32).view(np.uint32).astype(np.uint64)
    ascending = np.where(bits >> 31 == 1, bits ^ 0xFFFFFFFF, bits | 0x80000000)  # float order as unsigned order
    return (owner.astype(np.uint64) << 32) | (0xFFFFFFFF - ascending)


def _merge(top_sim: np.ndarray, top_idx: np.ndarray, owner: np.ndarray, nbr: np.ndarray, sim: np.ndarray) -> None:
    """Merge new candidates ``(owner row, neighbour index, similarity)`` into running top-k lists in place.

    Candidates must have larger neighbour indices than the lists' entries and come in increasing neighbour
    order per owner, so that the stable sort breaks ties towards the smaller index.
    """
    k = top_sim.shape[1]
    touched = np.flatnonzero(np.bincount(owner, minlength=len(top_sim)))
    all_owner = np.concatenate([np.repeat(touched, k), owner])
    all_sim = np.concatenate([top_sim[touched].ravel(), sim])
    all_idx = np.concatenate([top_idx[touched].ravel(), nbr])
    order = np.argsort(_descending_key(all_owner, all_sim), kind="stable")
    all_owner, all_sim, all_idx = all_owner[order], all_sim[order], all_idx[order]
    rank = np.arange(len(order)) - np.searchsorted(all_owner, all_owner)
    keep = rank < k
    top_sim[all_owner[keep], rank[keep]] = all_sim[keep]
    top_idx[all_owner[keep], rank[keep]] = all_idx[keep]


def _update(sims: np.ndarray, top_sim: np.ndarray, top_idx: np.ndarray, axis: int, offset: int,
            mask: np.ndarray) -> None:
    """Fold a similarity tile into the running top-k of its rows (``axis=1``) or columns (``axis=0``).

    ``offset`` is the global index of the tile's first neighbour (column for rows, row for columns), and
    neighbours must arrive in increasing index order over the tiles. ``mask`` is a scratch buffer.
    """
    k = top_sim.shape[1]
    n_own, n_nbr = sims.shape if axis == 1 else sims.shape[::-1]
    # Entries not above the running k-th best lose against it (equal ones on the index tie-break).
    threshold = np.nextafter(top_sim[:, k - 1], np.float32(np.inf))
    groups = 2 * k
    if n_nbr >= groups and np.isneginf(top_sim[:, k - 1]).any():
        # Lists not yet full (first tiles): the k-th largest of 2k disjoint group maxima bounds the tile's k-th best.
        size = n_nbr // groups
        if axis == 1:
            maxima = sims[:, : groups * size].reshape(n_own, groups, size).max(axis=2)
        else:
            maxima = sims[: groups * size].reshape(groups, size, n_own).max(axis=1).T
        np.maximum(threshold, np.partition(maxima, groups - k, axis=1)[:, groups - k], out=threshold)
    np.greater_equal(sims, threshold[:, None] if axis == 1 else threshold[None, :], out=mask)
    cap = _max_hits(sims.size)
    step = len(sims) if np.count_nonzero(mask) <= cap else max(1, cap // sims.shape[1])  # many ties: bound memory
    for lo in range(0, len(sims), step):
        row, col = np.divmod(np.flatnonzero(mask[lo : lo + step]), sims.shape[1])
        row += lo
        own, nbr = (row, col) if axis == 1 else (col, row)
        _merge(top_sim, top_idx, own, nbr + offset, sims[row, col])


def bidirectional_knn(x: np.ndarray, y: np.ndarray, k: int, *, max_memory: int | None = None,
                      block_rows: int | None = None, progress: bool = False) -> KnnResult:
    """Exact inner-product k-NN of ``x`` in ``y`` and of ``y`` in ``x`` from one pass over ``X·Yᵀ``.

    ``x`` and ``y`` (rows L2-normalised for cosine) may be memmaps: they are read tile by tile, so the
    working memory stays within ``max_memory`` bytes (default 1 GiB; the results take another
    ``12·k·(n_x + n_y)`` bytes, up to four times that while the cores' lists are merged). ``block_rows``
    forces square tiles of that many rows (for tests). On
    several cores, each core takes a contiguous span of the sources with single-threaded BLAS, so that one
    core's top-k bookkeeping overlaps another's matrix product; the spans' target lists are merged at the end.

    >>> x = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    >>> y = np.array([[0.0, 1.0], [1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
    >>> res = bidirectional_knn(x, y, 2)
    >>> res.fwd_idx.tolist(), res.fwd_sim.astype(float).round(2).tolist()
    ([[1, 2], [2, 0]], [[1.0, 0.8], [0.96, 0.8]])
    >>> res.bwd_idx.tolist()
    [[1, 0], [0, 1], [1, 0]]
    """
    k_fwd, k_bwd = check_inputs(x, y, k)
    budget = DEFAULT_MAX_MEMORY if max_memory is None else max_memory
    rows, _ = tile_shape(len(x), len(y), x.shape[1], budget, block_rows)
    spans = _spans(len(x), min(cores(), math.ceil(len(x) / rows)))
    rows, cols = tile_shape(max(s.stop - s.start for s in spans), len(y), x.shape[1], budget // len(spans),
                            block_rows)
    log.debug("exact k-NN %d x %d (k=%d) in %d x %d tiles on %d core(s)", len(x), len(y), k, rows, cols, len(spans))
    with tqdm(total=len(x), unit="rows", desc="exact k-NN", disable=not progress) as bar:
        def one_pass(span: slice) -> KnnResult:
            return _one_pass(x, y, span, (k_fwd, k_bwd), (rows, cols), bar)

        if len(spans) == 1:
            return one_pass(spans[0])
        with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(len(spans)) as pool:
            parts = list(pool.map(one_pass, spans))
    return merge_source_spans(parts, k_bwd)


def _one_pass(x: np.ndarray, y: np.ndarray, span: slice, ks: tuple[int, int], tile: tuple[int, int],
              bar: tqdm) -> KnnResult:
    """Exact k-NN of the sources ``x[span]`` in ``y`` and of ``y`` among those sources (global row numbers),
    one tile of ``tile`` rows x columns at a time."""
    (k_fwd, k_bwd), (rows, cols), n_x = ks, tile, span.stop - span.start
    fwd_sim, fwd_idx = np.full((n_x, k_fwd), -np.inf, np.float32), np.full((n_x, k_fwd), -1, np.int64)
    bwd_sim, bwd_idx = np.full((len(y), k_bwd), -np.inf, np.float32), np.full((len(y), k_bwd), -1, np.int64)
    buffers = np.empty(rows * cols, np.float32), np.empty(rows * cols, bool)
    for x_lo in range(span.start, span.stop, rows):
        x_hi = min(span.stop, x_lo + rows)
        xb, own = _rows(x, x_lo, x_hi), slice(x_lo - span.start, x_hi - span.start)
        for y_lo in range(0, len(y), cols):
            y_hi = min(len(y), y_lo + cols)
            sims, mask = (b[: (x_hi - x_lo) * (y_hi - y_lo)].reshape(x_hi - x_lo, y_hi - y_lo) for b in buffers)
            np.matmul(xb, _rows(y, y_lo, y_hi).T, out=sims)
            _update(sims, fwd_sim[own], fwd_idx[own], 1, y_lo, mask)
            _update(sims, bwd_sim[y_lo:y_hi], bwd_idx[y_lo:y_hi], 0, x_lo, mask)
        bar.update(x_hi - x_lo)
    return KnnResult(fwd_idx, fwd_sim, bwd_idx, bwd_sim)


def merge_source_spans(parts: Sequence[KnnResult], k: int) -> KnnResult:
    """Join k-NN results of consecutive source spans: forward lists are concatenated, each target's lists are
    re-ranked to the best ``k`` (ties to the smaller source index, as within one span)."""
    bwd_sim = np.concatenate([p.bwd_sim for p in parts], axis=1)
    bwd_idx = np.concatenate([p.bwd_idx for p in parts], axis=1)
    order = np.argsort(-bwd_sim, axis=1, kind="stable")[:, : min(k, bwd_sim.shape[1])]
    return KnnResult(np.concatenate([p.fwd_idx for p in parts]), np.concatenate([p.fwd_sim for p in parts]),
                     np.take_along_axis(bwd_idx, order, axis=1), np.take_along_axis(bwd_sim, order, axis=1))


def _spans(n: int, parts: int) -> list[slice]:
    """``[0, n)`` cut into at most ``parts`` contiguous non-empty slices of near-equal length."""
    bounds = np.linspace(0, n, min(parts, n) + 1).round().astype(int).tolist()
    return [slice(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def _use_all_cores() -> None:
    """FAISS (OpenMP) searches and trains with one thread per core."""
    faiss.omp_set_num_threads(cores())


def default_nlist(rows: int, kind: str = "ivf") -> int:
    """IVF lists for ``rows`` vectors: about ``4·sqrt(rows)`` (``2·sqrt(rows)`` for ``ivfsq`` and ``ivfpqfs``),
    with at least 39 training points per list.

    >>> default_nlist(1_000_000), default_nlist(1_000_000, "ivfsq")
    (4000, 2000)
    """
    return max(1, min(int(IVF_SHAPE[kind][0] * math.sqrt(rows)), rows // 39))


def _pq_subquantizers(dim: int) -> int:
    """The largest divisor of ``dim`` up to 64: PQ codes of at most 64 bytes."""
    return max(m for m in range(1, min(dim, 64) + 1) if dim % m == 0)


def auto_index_kind(rows: int, above: str = "ivf") -> str:
    """The index kind that ``auto`` stands for over ``rows`` rows: ``flat`` (exact) below
    ``AUTO_FLAT_MAX_ROWS``, ``above`` (an IVF kind) from there on.

    >>> auto_index_kind(1_000), auto_index_kind(1_000_000), auto_index_kind(1_000_000, "ivfpqfs")
    ('flat', 'ivf', 'ivfpqfs')
    """
    return "flat" if rows < AUTO_FLAT_MAX_ROWS else above


def build_index(y: np.ndarray, kind: str = "auto", *, nlist: int | None = None, pq_bits: int = 8,
                hnsw_m: int = 32, seed: int = 0) -> faiss.Index:
    """A FAISS inner-product index over the rows of ``y`` (an array or memmap, added in chunks): the index of
    :func:`train_index` filled by :func:`fill_index`.

    >>> build_index(np.eye(3, dtype=np.float32), "flat").ntotal
    3
    """
    index = fill_index(train_index(y, kind, nlist=nlist, pq_bits=pq_bits, hnsw_m=hnsw_m, seed=seed), y)
    log.debug("built a %s over %d rows", type(index).__name__, len(y))
    return index


def train_index(y: np.ndarray, kind: str = "auto", *, nlist: int | None = None, pq_bits: int = 8,
                hnsw_m: int = 32, seed: int = 0) -> faiss.Index:
    """An empty FAISS inner-product index for the rows of ``y`` (an array or memmap), trained where its kind needs
    training; :func:`fill_index` adds the rows.

    ``flat`` is exact; ``ivf`` clusters into ``nlist`` lists (default :func:`default_nlist`), ``ivfpq``
    also compresses the vectors to product-quantised codes (``pq_bits`` per sub-vector), ``ivfsq`` to 8-bit
    scalar-quantised ones (a quarter of the float32 size), ``ivfpqfs`` scans 4-bit PQ codes with FAISS's
    fast-scan kernels (an order of magnitude faster per vector than ``ivfsq``) and re-ranks the
    best ``8·k`` by their 8-bit scalar-quantised vectors; ``hnsw`` is a graph with ``hnsw_m`` links
    per node; ``auto`` is flat below 200k rows and IVF above. IVF k-means trains on a seeded sample: 256
    points per list (64 for ``ivfsq`` and ``ivfpqfs``, meant for millions of rows). Search effort
    (``nprobe``/``efSearch``) is left to the caller, see :func:`approx_bidirectional_knn`.
    """
    if kind not in INDEX_KINDS:
        raise ValueError(f"unknown index kind {kind!r}; expected one of {', '.join(INDEX_KINDS)}")
    rows, dim = y.shape
    if kind == "auto":
        kind = auto_index_kind(rows)
    _use_all_cores()
    if kind == "flat":
        return faiss.IndexFlatIP(dim)
    if kind == "hnsw":
        graph = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efConstruction = max(80, 2 * hnsw_m)
        return graph
    index: faiss.Index
    lists = nlist or default_nlist(rows, kind)
    quantizer = faiss.IndexFlatIP(dim)
    if kind == "ivf":
        index = faiss.IndexIVFFlat(quantizer, dim, lists, faiss.METRIC_INNER_PRODUCT)
    elif kind == "ivfsq":
        index = faiss.IndexIVFScalarQuantizer(quantizer, dim, lists, faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
    elif kind == "ivfpqfs":
        scan = faiss.IndexIVFPQFastScan(quantizer, dim, lists, _pq_subquantizers(dim), 4, faiss.METRIC_INNER_PRODUCT)
        scan.by_residual = True
        index = faiss.IndexRefine(scan, faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit,
                                                                   faiss.METRIC_INNER_PRODUCT))
        index.k_factor = REFINE_FACTOR
    else:
        index = faiss.IndexIVFPQ(quantizer, dim, lists, _pq_subquantizers(dim), pq_bits, faiss.METRIC_INNER_PRODUCT)
    centroids = max(lists, 1 << pq_bits) if kind == "ivfpq" else lists
    sample = np.random.default_rng(seed).permutation(rows)[: IVF_SHAPE[kind][1] * centroids]
    index.train(take_rows(y, np.sort(sample)))  # FAISS uses <= 256 points per centroid
    return index


def fill_index(index: faiss.Index, y: np.ndarray) -> faiss.Index:
    """``index`` (trained) with the rows of ``y`` (an array or memmap) added, ``CHUNK_ROWS`` at a time."""
    _use_all_cores()
    for lo in range(0, len(y), CHUNK_ROWS):
        index.add(_rows(y, lo, min(len(y), lo + CHUNK_ROWS)))
    return index


def mergeable(index: faiss.Index) -> bool:
    """Whether the trained ``index`` can be filled in consecutive parts, each a fill of
    :func:`serialized_shard_form` merged in order by :func:`merge_index` and turned back by :func:`from_shard_form`,
    into the index that one :func:`fill_index` makes, byte for byte: every kind but ``hnsw`` (FAISS cannot merge
    graphs). ``ivfpqfs`` is filled as a plain IVF-PQ: FAISS's merge of fast-scan lists (``BlockInvertedLists``,
    faiss 1.15) overruns its buffer when a list already holds a non-zero multiple of ``block_size`` entries."""
    if isinstance(index, faiss.IndexRefine):
        return (isinstance(faiss.downcast_index(index.base_index), faiss.IndexIVFPQFastScan)
                and isinstance(faiss.downcast_index(index.refine_index), faiss.IndexFlatCodes))
    return isinstance(index, faiss.IndexFlat | faiss.IndexIVFFlat | faiss.IndexIVFPQ | faiss.IndexIVFScalarQuantizer)


def _downcast(index: faiss.Index, cls: type[FaissIndex]) -> FaissIndex:
    """``index`` (a generic FAISS proxy) as the ``cls`` it is; a ``TypeError`` if it is not one."""
    index = faiss.downcast_index(index)
    if not isinstance(index, cls):
        raise TypeError(f"expected a FAISS {cls.__name__}, got a {type(index).__name__}")
    return index


def _plain_ivfpq(fast: faiss.IndexIVFPQFastScan) -> faiss.IndexIVFPQ:
    """An empty ``IndexIVFPQ`` that encodes as the trained fast-scan ``fast`` (its coarse quantizer, borrowed, its
    4-bit PQ codebook and residual encoding), with the codes in plain inverted lists."""
    plain = faiss.IndexIVFPQ(fast.quantizer, fast.d, fast.nlist, fast.pq.M, fast.pq.nbits, fast.metric_type)
    plain.pq, plain.by_residual, plain.is_trained = fast.pq, fast.by_residual, True
    return plain


def serialized_shard_form(index: faiss.Index) -> np.ndarray:
    """The trained, empty, :func:`mergeable` ``index`` in the form its shards are filled in and merged, serialized
    (``faiss.serialize_index``, no pickle): ``index`` itself, or for ``ivfpqfs`` an ``IndexRefine`` (same
    ``k_factor``) over the plain IVF-PQ that encodes as its fast-scan index and a copy of its refine index."""
    if not isinstance(index, faiss.IndexRefine):
        return faiss.serialize_index(index)
    form = faiss.IndexRefine(_plain_ivfpq(_downcast(index.base_index, faiss.IndexIVFPQFastScan)), index.refine_index)
    form.k_factor = index.k_factor
    return faiss.serialize_index(form)


def merge_index(into: faiss.Index, part: faiss.Index) -> None:
    """Move the rows of ``part`` into ``into`` (both filled from one :func:`serialized_shard_form`), numbered on
    from ``into.ntotal``: ``part`` holds the rows that follow those of ``into``, numbered from 0."""
    if isinstance(into, faiss.IndexRefine):
        other = _downcast(part, faiss.IndexRefine)
        for mine, theirs in ((into.base_index, other.base_index), (into.refine_index, other.refine_index)):
            merge_index(faiss.downcast_index(mine), faiss.downcast_index(theirs))
        into.ntotal = into.refine_index.ntotal
        return
    into.merge_from(part, into.ntotal if isinstance(into, faiss.IndexIVF) else 0)


def from_shard_form(trained: faiss.Index, merged: faiss.Index) -> faiss.Index:
    """The index that :func:`fill_index` would make of ``trained``, byte for byte, from ``merged``: the
    :func:`serialized_shard_form` of ``trained`` with all its rows, filled and merged in parts. ``merged`` itself,
    or for ``ivfpqfs`` a new index with its PQ codes packed into fast-scan lists, which takes over its coarse
    quantizer and refine index (``merged`` keeps only its plain lists, freed with it, and is not to be used)."""
    if not isinstance(trained, faiss.IndexRefine):
        return merged
    form = _downcast(merged, faiss.IndexRefine)
    plain = _downcast(form.base_index, faiss.IndexIVFPQ)
    fast = faiss.IndexIVFPQFastScan(plain, _downcast(trained.base_index, faiss.IndexIVFPQFastScan).bbs)
    index = faiss.IndexRefine(fast, form.refine_index)
    index.k_factor = trained.k_factor
    plain.own_fields, fast.own_fields = False, True  # the coarse quantizer changes hands
    form.own_refine_index, index.own_fields, index.own_refine_index = False, True, True  # and so do both parts
    fast.this.disown()  # type: ignore[attr-defined]  # SWIG's proxy: deleted by ``index``, not by Python
    return index


def search_rows(index: faiss.Index, queries: np.ndarray, lo: int, hi: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(idx int64, sim float32)`` of the ``k`` best rows of ``index`` for each of the queries ``[lo, hi)``, read
    ``CHUNK_ROWS`` at a time (a memmap with file reads); ``-1`` where the index found fewer than ``k``."""
    idx, sim = np.empty((hi - lo, k), np.int64), np.empty((hi - lo, k), np.float32)
    for start in range(lo, hi, CHUNK_ROWS):
        stop = min(hi, start + CHUNK_ROWS)
        sim[start - lo : stop - lo], idx[start - lo : stop - lo] = index.search(_rows(queries, start, stop), k)
    return idx, sim


def two_pass_faiss_knn(x: np.ndarray, y: np.ndarray, k: int) -> KnnResult:
    """Exact k-NN both ways with two ``faiss.IndexFlatIP`` searches, as LASER's ``mine_bitexts.py`` (baseline).

    >>> x = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    >>> two_pass_faiss_knn(x, x, 1).fwd_idx.tolist()
    [[0], [1]]
    """
    k_fwd, k_bwd = check_inputs(x, y, k)
    fwd_idx, fwd_sim = search_rows(build_index(y, "flat"), x, 0, len(x), k_fwd)
    bwd_idx, bwd_sim = search_rows(build_index(x, "flat"), y, 0, len(y), k_bwd)
    return KnnResult(fwd_idx, fwd_sim, bwd_idx, bwd_sim)


def _top1_recall(found: np.ndarray, truth: np.ndarray) -> float:
    """Fraction of rows whose true nearest neighbour ``truth`` is among the ``found`` ones."""
    return float(np.mean(np.any(found == truth[:, None], axis=1))) if len(truth) else 1.0


def recall(exact: KnnResult, approx: KnnResult) -> float:
    """Fraction of exact nearest neighbours (both directions) found among the approximate k neighbours.

    >>> exact = KnnResult(np.array([[0], [1]]), np.ones((2, 1)), np.array([[0], [1]]), np.ones((2, 1)))
    >>> approx = KnnResult(np.array([[0], [0]]), np.ones((2, 1)), np.array([[0], [1]]), np.ones((2, 1)))
    >>> recall(exact, approx)
    0.75
    """
    found = np.concatenate([np.any(approx.fwd_idx == exact.fwd_idx[:, :1], axis=1),
                            np.any(approx.bwd_idx == exact.bwd_idx[:, :1], axis=1)])
    return float(found.mean())


@dataclass(frozen=True)
class SampleKnn:
    """Exact k-NN lists of some sources and of the targets they reach, best first: ``fwd_*``
    ``(len(rows), k)`` targets of the sources ``rows``, ``bwd_*`` ``(len(targets), k)`` sources of each of
    ``targets`` (the distinct targets in ``fwd_idx``, ascending); row numbers are those of the full corpora."""

    rows: np.ndarray
    fwd_idx: np.ndarray
    fwd_sim: np.ndarray
    targets: np.ndarray
    bwd_idx: np.ndarray
    bwd_sim: np.ndarray


def sample_bidirectional_knn(x: np.ndarray, y: np.ndarray, k: int, rows: np.ndarray, *,
                             max_memory: int | None = None) -> SampleKnn:
    """Exact k-NN of the sources ``x[rows]`` among ``y``, and of each target in their lists among ``x``: what
    margin scoring needs to score every candidate pair of those sources exactly, as the full
    :func:`bidirectional_knn` would, for ``(len(rows) + len(targets))·len(y)`` products instead of
    ``len(x)·len(y)``. Reference results for checking approximate search on corpora too large to search
    exactly. ``x`` and ``y`` may be memmaps (see :func:`bidirectional_knn` for ``max_memory``).

    >>> x = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    >>> y = np.array([[0.0, 1.0], [1.0, 0.0], [0.8, 0.6]], dtype=np.float32)
    >>> s = sample_bidirectional_knn(x, y, 2, np.array([2, 0]))
    >>> s.fwd_idx.tolist(), s.targets.tolist(), s.bwd_idx.tolist()
    ([[0, 2], [1, 2]], [0, 1, 2], [[2, 1], [0, 1], [1, 0]])
    """
    k_fwd, k_bwd = check_inputs(x, y, k)
    rows = np.asarray(rows, dtype=np.int64)
    if rows.ndim != 1 or len(rows) == 0 or rows.min() < 0 or rows.max() >= len(x):
        raise ValueError(f"rows must be a non-empty list of source row numbers below {len(x)}")
    fwd = bidirectional_knn(take_rows(x, rows), y, k_fwd, max_memory=max_memory)
    targets = np.unique(fwd.fwd_idx)
    bwd = bidirectional_knn(take_rows(y, targets), x, k_bwd, max_memory=max_memory)
    return SampleKnn(rows, fwd.fwd_idx, fwd.fwd_sim, targets, bwd.fwd_idx, bwd.fwd_sim)


def _effort_parameter(index: faiss.Index, k: int) -> tuple[str, int, int]:
    """Name, smallest and largest useful value of the search-effort parameter of an IVF or HNSW index."""
    if isinstance(index, faiss.IndexHNSW):
        return "efSearch", max(16, k), 4096
    return "nprobe", 1, faiss.extract_index_ivf(index).nlist


def _tune_effort(index: faiss.Index, db: np.ndarray, queries: np.ndarray, k: int, target: float, sample: int,
                 seed: int) -> int:
    """The smallest power-of-two effort at which a ``sample`` of ``queries`` finds its exact nearest neighbour
    in ``db`` at rate ``target`` (else the largest useful effort)."""
    probe = take_rows(queries, np.sort(np.random.default_rng(seed).permutation(len(queries))[:sample]))
    truth = bidirectional_knn(probe, db, 1).fwd_idx[:, 0]
    name, value, limit = _effort_parameter(index, k)
    while True:
        faiss.ParameterSpace().set_index_parameter(index, name, value)
        rate = _top1_recall(index.search(probe, k)[1], truth)
        if rate >= target or value >= limit:
            break
        value = min(limit, 2 * value)
    log.info("%s=%d finds %.1f%% of the nearest neighbours of %d sample queries", name, value, 100 * rate, len(probe))
    return value


def complete_rows(idx: np.ndarray, sim: np.ndarray, queries: np.ndarray, offset: int, db: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The lists ``(idx, sim)`` of the queries from row ``offset`` on, as an index search left them, with the rows
    it left short of ``k`` results (``-1``) searched exactly in ``db`` (new arrays then; the given ones as they are
    otherwise)."""
    short = np.flatnonzero((idx < 0).any(axis=1))
    if not len(short):
        return idx, sim
    log.info("%d queries found fewer than %d neighbours in the index; searching them exactly", len(short),
             idx.shape[1])
    exact = bidirectional_knn(take_rows(queries, short + offset), db, idx.shape[1])
    idx, sim = idx.copy(), sim.copy()
    idx[short], sim[short] = exact.fwd_idx, exact.fwd_sim
    return idx, sim


def set_search_effort(index: faiss.Index, db: np.ndarray, queries: np.ndarray, k: int, effort: int | None = None, *,
                      target_recall: float = 0.95, sample: int = 500, seed: int = 0) -> bool:
    """Set the search effort of ``index`` (over ``db``; ``nprobe`` for IVF, ``efSearch`` for HNSW, nothing for flat)
    to ``effort``, or by default raise it until a ``sample`` of ``queries`` finds its exact nearest neighbour at
    rate ``target_recall``. False (and the effort left unset) when IVF would need to scan more than 1/8 of its
    lists for that (data without cluster structure, e.g. random vectors): exact search is then faster."""
    if isinstance(index, faiss.IndexFlat):
        return True
    name, _, limit = _effort_parameter(index, k)
    value = effort
    if value is None:
        value = _tune_effort(index, db, queries, k, target_recall, sample, seed)
        if name == "nprobe" and value > limit // 8:
            log.warning("IVF needs nprobe=%d of %d lists for %.0f%% recall; searching exactly instead", value, limit,
                        100 * target_recall)
            return False
    faiss.ParameterSpace().set_index_parameter(index, name, value)
    return True


def approx_bidirectional_knn(x: np.ndarray, y: np.ndarray, k: int, kind: str = "auto", *, nlist: int | None = None,
                             pq_bits: int = 8, hnsw_m: int = 32, effort: int | None = None,
                             target_recall: float = 0.95, sample: int = 500, seed: int = 0,
                             indexes: tuple[faiss.Index, faiss.Index] | None = None) -> KnnResult:
    """k-NN both ways with FAISS indexes (``kind``, ``nlist``, ``pq_bits``, ``hnsw_m``: see :func:`build_index`):
    ``x`` searched in an index over ``y`` and ``y`` in one over ``x``; ``indexes`` are these two, built
    beforehand by :func:`build_index` (by default they are built here).

    ``effort`` is ``nprobe`` for IVF indexes and ``efSearch`` for HNSW. By default it is raised until a
    ``sample`` of the queries finds its exact nearest neighbour at rate ``target_recall``; when IVF would
    need to scan more than 1/8 of its lists for that (data without cluster structure, e.g. random
    vectors), the exact :func:`bidirectional_knn` is faster and is used instead.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(50, 8)).astype(np.float32)
    >>> x /= np.linalg.norm(x, axis=1, keepdims=True)
    >>> res = approx_bidirectional_knn(x, x, 2, "hnsw")
    >>> bool((res.fwd_idx[:, 0] == np.arange(50)).all())
    True
    """
    k_fwd, k_bwd = check_inputs(x, y, k)
    if indexes and (indexes[0].ntotal, indexes[1].ntotal) != (len(y), len(x)):
        raise ValueError(f"the indexes hold {indexes[0].ntotal} and {indexes[1].ntotal} rows, expected {len(y)} "
                         f"(targets) and {len(x)} (sources)")
    sides = ((y, x, k_fwd), (x, y, k_bwd))  # (indexed, queries, k) per direction
    ready = []
    for side, (db, queries, side_k) in enumerate(sides):
        index = (indexes[side] if indexes else
                 build_index(db, kind, nlist=nlist, pq_bits=pq_bits, hnsw_m=hnsw_m, seed=seed))
        if not set_search_effort(index, db, queries, side_k, effort, target_recall=target_recall, sample=sample,
                                 seed=seed):
            return bidirectional_knn(x, y, k)
        ready.append(index)
    (fwd_idx, fwd_sim), (bwd_idx, bwd_sim) = (
        complete_rows(*search_rows(index, queries, 0, len(queries), side_k), queries, 0, db)
        for index, (db, queries, side_k) in zip(ready, sides, strict=True))
    return KnnResult(fwd_idx, fwd_sim, bwd_idx, bwd_sim)
