"""Approximate k-NN with FAISS indexes, for corpora too large to search exactly: build (train, fill), shard, merge,
tune the search effort, search.

:func:`approx_bidirectional_knn` uses FAISS indexes (IVF, IVF-PQ, IVF-SQ, IVF-PQ fast scan, HNSW); the mining job
(:mod:`xlsent.mining.stages`) trains, fills and searches them by shards, on this process or on Ray workers
(:func:`mergeable`, :func:`serialized_shard_form`, :func:`merge_index`, :func:`from_shard_form`).
:func:`two_pass_faiss_knn` is LASER's exact two-pass search, the baseline of the benchmarks.
"""

from __future__ import annotations

import logging
import math
from typing import TypeVar

import faiss
import numpy as np

from xlsent.mining.knn import CHUNK_ROWS, KnnResult, bidirectional_knn, check_inputs, read_rows, take_rows
from xlsent.threads import cores

log = logging.getLogger(__name__)

INDEX_KINDS = ("flat", "ivf", "ivfpq", "ivfsq", "ivfpqfs", "hnsw", "auto")
AUTO_FLAT_MAX_ROWS = 200_000
# IVF lists per sqrt(rows) and k-means training points per list, by index kind: the compressed kinds for
# corpora of millions of rows use fewer lists and points, so that training takes a minute rather than ten.
IVF_SHAPE = {"ivf": (4, 256), "ivfpq": (4, 256), "ivfsq": (2, 64), "ivfpqfs": (2, 64)}
REFINE_FACTOR = 8
FaissIndex = TypeVar("FaissIndex", bound=faiss.Index)


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


def check_index_rows(kind: str, rows: int, pq_bits: int = 8) -> None:
    """ValueError where ``rows`` vectors are too few to train an index of ``kind``: a product quantiser needs a
    training point per centroid of its codebooks (``2 ** pq_bits`` for ``ivfpq``, 16 for ``ivfpqfs``'s 4-bit codes).

    >>> check_index_rows("ivfpqfs", 5)
    Traceback (most recent call last):
    ...
    ValueError: a ivfpqfs index trains its product quantiser on at least 16 vectors, but there are 5: use flat ...
    """
    need = {"ivfpq": 1 << pq_bits, "ivfpqfs": 1 << 4}.get(kind, 1)
    if rows < need:
        raise ValueError(f"a {kind} index trains its product quantiser on at least {need} vectors, but there are "
                         f"{rows}: use flat (exact, and fast at this size) or auto")


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
    check_index_rows(kind, rows, pq_bits)
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
        index.add(read_rows(y, lo, min(len(y), lo + CHUNK_ROWS)))
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


def search_rows(index: faiss.Index, queries: np.ndarray, lo: int, hi: int, k: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(idx int64, sim float32)`` of the ``k`` best rows of ``index`` for each of the queries ``[lo, hi)``, read
    ``CHUNK_ROWS`` at a time (a memmap with file reads); ``-1`` where the index found fewer than ``k``."""
    idx, sim = np.empty((hi - lo, k), np.int64), np.empty((hi - lo, k), np.float32)
    for start in range(lo, hi, CHUNK_ROWS):
        stop = min(hi, start + CHUNK_ROWS)
        sim[start - lo : stop - lo], idx[start - lo : stop - lo] = index.search(read_rows(queries, start, stop), k)
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
