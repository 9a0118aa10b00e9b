"""The stages of a mining or scoring job, on arrays and a work folder: k-NN by shards (exact or approximate, each
shard saved as it finishes and reused by a re-run), margin scoring of candidates, selection, writing.

The job (:mod:`xlsent.mining.job`) composes them; where a stage can run on several workers (embedding, exact shards,
filling and searching an index) it asks its engine (:mod:`xlsent.mining.engine`), so the local and the Ray engine
run the same stages and write the same files.
"""

from __future__ import annotations

import logging
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import faiss
import numpy as np
from tqdm.auto import tqdm

from xlsent.atomic import atomic_path, write_lines
from xlsent.data.tsv_field import clean_cell  # the one TSV field rule (re-exported: mining and filter use it)
from xlsent.mining.auto_index import choose_index, describe_choice
from xlsent.mining.config import IVF_BF16, Candidates, MineConfig, SearchConfig
from xlsent.mining.faiss_index import (
    check_index_rows,
    complete_rows,
    fill_index,
    search_rows,
    set_search_effort,
    train_index,
)
from xlsent.mining.ivf_bf16 import IvfShape, ivf_bf16_knn
from xlsent.mining.knn import KnnResult, check_inputs, merge_source_spans
from xlsent.mining.margin import Margin, Mode, greedy_one_to_one, select_candidates
from xlsent.mining.precision import exact_knn
from xlsent.mining.unify import Unified

STDOUT = "-"
# A shard search: (ready index, all queries, shard bounds, shards to do, k) -> (shard, idx, sim) as each finishes.
ShardSearch = Callable[[faiss.Index, np.ndarray, list[tuple[int, int]], list[int], int],
                       Iterable[tuple[int, np.ndarray, np.ndarray]]]
# An index fill: (trained empty index, database rows) -> the index holding every row, numbered from 0.
IndexFill = Callable[[faiss.Index, np.ndarray], faiss.Index]
# An exact shard search: (source rows of one shard, all targets, offset of the shard, config) -> its k-NN lists.
ExactSearch = Callable[[np.ndarray, np.ndarray, int, SearchConfig], KnnResult]

Config = TypeVar("Config", bound=SearchConfig)

log = logging.getLogger(__name__)


def say(progress: bool, message: str) -> None:
    """Print a stage's line on standard error when ``progress`` is on."""
    if progress:
        print(message, file=sys.stderr, flush=True)


def shard_bounds(rows: int, shard_rows: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` row ranges of the shards.

    >>> shard_bounds(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    return [(lo, min(rows, lo + shard_rows)) for lo in range(0, max(rows, 1), shard_rows)]


def knn_shard(x_shard: np.ndarray, y: np.ndarray, offset: int, cfg: SearchConfig, progress: bool = False
              ) -> KnnResult:
    """k-NN of one block of source rows at ``cfg.precision``: complete forward lists, and the target side's lists
    restricted to this block (indices shifted by ``offset``), to be merged over all blocks."""
    res = exact_knn(np.asarray(x_shard), y, cfg.k, precision=cfg.precision, max_memory=cfg.max_memory,
                    progress=progress, warn_k=False)  # sharded_knn warns for the whole corpus
    return KnnResult(res.fwd_idx, res.fwd_sim, res.bwd_idx + offset, res.bwd_sim)


def knn_shard_path(work: Path, shard: int) -> Path:
    """Where the k-NN lists of source shard ``shard`` are kept in the work folder."""
    return work / f"knn-{shard:05d}.npz"


def _save_npz(path: Path, arrays: dict[str, Any]) -> None:
    """Write ``arrays`` (names to numpy arrays) into the ``.npz`` file ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


def save_knn_shard(path: Path, part: KnnResult) -> None:
    """Write one shard's k-NN lists atomically (read back by :func:`load_knn_shard`)."""
    _save_npz(path, asdict(part))


@dataclass(frozen=True)
class FolderStore:
    """Finished parts of a k-NN stage kept as ``.npz`` files in a work folder (a
    :class:`~xlsent.mining.ivf_bf16.ListStore`)."""

    folder: Path

    def load(self, name: str) -> dict[str, np.ndarray] | None:
        """The arrays saved under ``name``, or ``None``."""
        path = self.folder / f"{name}.npz"
        if not path.is_file():
            return None
        with np.load(path, allow_pickle=False) as z:
            return {key: z[key] for key in z.files}

    def save(self, name: str, arrays: dict[str, np.ndarray]) -> None:
        """Keep ``arrays`` under ``name``, atomically."""
        _save_npz(self.folder / f"{name}.npz", arrays)


def load_knn_shard(path: Path) -> KnnResult:
    """One shard's k-NN lists, as written by :func:`save_knn_shard`."""
    with np.load(path, allow_pickle=False) as z:
        return KnnResult(z["fwd_idx"], z["fwd_sim"], z["bwd_idx"], z["bwd_sim"])


def _finished_shard(path: Path, rows: int, targets: int) -> bool:
    """Whether ``path`` holds the k-NN lists of a shard of ``rows`` source rows against ``targets`` target rows; a
    file that does not is named and recomputed. Only the arrays' headers are read (the merge reads the lists): a
    shard cut short has lost its zip directory, which is at the end."""
    if not path.is_file():
        return False
    try:
        rows_of = _shard_rows(path)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        problem = f"truncated or unreadable ({exc})"
    else:
        if rows_of == {"fwd_idx": rows, "fwd_sim": rows, "bwd_idx": targets, "bwd_sim": targets}:
            return True
        problem = f"holds lists of {rows_of.get('fwd_idx')} source and {rows_of.get('bwd_idx')} target rows, " \
                  f"expected {rows} and {targets}"
    log.warning("%s: %s; recomputing this shard", path, problem)
    return False


def _shard_rows(path: Path) -> dict[str, int]:
    """The rows of each array of the ``.npz`` shard ``path``, from the headers of its ``.npy`` members."""
    rows = {}
    with zipfile.ZipFile(path) as z:
        for field in ("fwd_idx", "fwd_sim", "bwd_idx", "bwd_sim"):
            with z.open(f"{field}.npy") as fh:
                version = np.lib.format.read_magic(fh)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape = read(fh)[0]
                rows[field] = shape[0] if shape else -1
    return rows


def merge_shards(parts: Iterable[KnnResult], k: int) -> KnnResult:
    """Join the k-NN lists of consecutive source shards one shard at a time (as :func:`merge_source_spans` does
    all at once, with the same result): the memory is the result plus one shard, whatever the number of shards."""
    merged: KnnResult | None = None
    fwd_idx: list[np.ndarray] = []
    fwd_sim: list[np.ndarray] = []
    for part in parts:
        fwd_idx.append(part.fwd_idx)
        fwd_sim.append(part.fwd_sim)
        bwd = merge_source_spans([part] if merged is None else [merged, part], k)
        merged = KnnResult(bwd.fwd_idx[:0], bwd.fwd_sim[:0], bwd.bwd_idx, bwd.bwd_sim)
    if merged is None:
        raise ValueError("no k-NN shards to merge")
    return KnnResult(np.concatenate(fwd_idx), np.concatenate(fwd_sim), merged.bwd_idx, merged.bwd_sim)


def local_shards(x: np.ndarray, y: np.ndarray, cfg: SearchConfig, bounds: list[tuple[int, int]], todo: list[int],
                 progress: bool = False) -> Iterator[tuple[int, KnnResult]]:
    """The single-process exact shard search: the shards ``todo`` of ``x`` (``bounds``) one after the other."""
    for shard in tqdm(todo, disable=not progress or len(todo) < 2, desc="k-NN shards"):
        lo, hi = bounds[shard]
        yield shard, knn_shard(x[lo:hi], y, lo, cfg, progress)


def sharded_knn(x: np.ndarray, y: np.ndarray, cfg: SearchConfig, work: Path | None, *,
                shards: Callable[[list[tuple[int, int]], list[int]], Iterable[tuple[int, KnnResult]]] | None = None,
                progress: bool = False, warn_k: bool = True) -> KnnResult:
    """Exact bidirectional k-NN by source shards of ``cfg.shard_rows`` rows, each saved in ``work`` as it finishes
    (shards found there are not recomputed), then merged one shard at a time. ``shards(bounds, todo)`` computes the
    missing ones, in any order (default: :func:`local_shards`, in this process); without ``work`` they are kept in
    memory; ``warn_k``: warn where ``k`` is clipped to a side (the shards' searches give no warning)."""
    check_inputs(x, y, cfg.k, warn=warn_k)
    bounds = shard_bounds(len(x), cfg.shard_rows)
    paths = [knn_shard_path(work, shard) for shard in range(len(bounds))] if work else []
    todo = [shard for shard in range(len(bounds))
            if not paths or not _finished_shard(paths[shard], bounds[shard][1] - bounds[shard][0], len(y))]
    if len(todo) < len(bounds):
        log.info("k-NN: reusing %d of %d finished shards in %s", len(bounds) - len(todo), len(bounds), work)
    search = shards or (lambda b, t: local_shards(x, y, cfg, b, t, progress))
    held: dict[int, KnnResult] = {}
    for shard, part in search(bounds, todo):
        if paths:
            save_knn_shard(paths[shard], part)
        else:
            held[shard] = part
    return merge_shards((held[s] if s in held else load_knn_shard(paths[s]) for s in range(len(bounds))), cfg.k)


def candidates_from_knn(knn: KnnResult, cfg: MineConfig) -> Candidates:
    """Margin-scored candidates from bidirectional k-NN lists, best first."""
    src, tgt, score = select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim,
                                        margin=Margin(cfg.margin), mode=Mode(cfg.mode))
    order = np.argsort(-score, kind="stable")
    return Candidates(src[order], tgt[order], score[order])


def resolve_index(cfg: Config, src_rows: int, tgt_rows: int, progress: bool = False) -> Config:
    """``cfg`` with ``--index auto`` replaced by the search chosen for ``src_rows`` x ``tgt_rows`` distinct sentences
    (:mod:`xlsent.mining.auto_index`), the choice and its expected recall logged and, with ``progress``, printed."""
    if cfg.index != "auto":
        check_index_rows(cfg.index, min(src_rows, tgt_rows))
        return cfg
    index = choose_index(src_rows, tgt_rows)
    message = describe_choice(index, src_rows, tgt_rows, cfg.effort)
    log.info("%s", message)
    say(progress, message)
    return replace(cfg, index=index, effort=None if index == "exact" else cfg.effort)


@contextmanager
def _folder(work: Path | None) -> Iterator[Path]:
    """``work``, or a temporary folder (removed after) without one."""
    if work is not None:
        yield work
        return
    with tempfile.TemporaryDirectory(prefix="xlsent-knn-") as tmp:
        yield Path(tmp)


def neighbourhoods(x: np.ndarray, y: np.ndarray, cfg: SearchConfig, work: Path | None = None, *,
                   exact: Callable[[list[tuple[int, int]], list[int]], Iterable[tuple[int, KnnResult]]] | None = None,
                   fill: IndexFill = fill_index, search: ShardSearch | None = None,
                   progress: bool = False, warn_k: bool = True) -> KnnResult:
    """The k-NN stage: the lists of ``x`` among ``y`` and of ``y`` among ``x`` (rows L2-normalised; memmaps are
    read in blocks), with ``cfg.index`` (``auto`` resolved here) and resumable by shard from ``work``. An engine
    passes where its shards run: ``exact`` (see :func:`sharded_knn`), ``fill`` and ``search`` (see
    :func:`approximate_knn`); by default all in this process. ``warn_k``: warn where the exact search clips ``k``
    to a side."""
    cfg = resolve_index(cfg, len(x), len(y), progress)
    if cfg.index == IVF_BF16:
        with _folder(work) as folder:
            found = ivf_bf16_knn(x, y, cfg.k, IvfShape(nprobe=cfg.effort), store=FolderStore(folder),
                                 progress=progress)
        if found is not None:
            return found
    elif cfg.index != "exact":
        with _folder(work) as folder:
            found = approximate_knn(x, y, cfg, folder, fill=fill, search=search or search_shards_locally,
                                    progress=progress)
        if found is not None:
            return found
    return sharded_knn(x, y, cfg, work, shards=exact, progress=progress, warn_k=warn_k)


def mine_arrays(x: np.ndarray, y: np.ndarray, cfg: MineConfig, work: Path | None = None,
                progress: bool = False, warn_k: bool = True) -> Candidates:
    """Candidate pairs between two embedding matrices (rows L2-normalised; memmaps are read in blocks, not copied
    into memory): :func:`neighbourhoods` in this process, then the margin candidates (``warn_k``: see
    :func:`neighbourhoods`)."""
    return candidates_from_knn(neighbourhoods(x, y, cfg, work, progress=progress, warn_k=warn_k), cfg)


def approx_shard_path(work: Path, index: str, direction: str, shard: int) -> Path:
    """Where the ``index`` k-NN lists of query shard ``shard`` are kept in the work folder: ``direction`` ``fwd``
    (sources searched among targets) or ``bwd`` (targets among sources)."""
    return work / f"knn-{index}-{direction}-{shard:05d}.npz"


def save_lists(path: Path, idx: np.ndarray, sim: np.ndarray) -> None:
    """Write one query shard's k-NN lists atomically (read back by :func:`load_lists`)."""
    _save_npz(path, {"idx": idx, "sim": sim})


def load_lists(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """One query shard's k-NN lists ``(idx, sim)``, as written by :func:`save_lists`."""
    with np.load(path, allow_pickle=False) as z:
        return z["idx"], z["sim"]


def search_shards_locally(index: faiss.Index, queries: np.ndarray, bounds: list[tuple[int, int]], todo: list[int],
                          k: int) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """The single-process :data:`ShardSearch`: the shards ``todo`` one after the other, in this process."""
    for shard in todo:
        lo, hi = bounds[shard]
        yield shard, *search_rows(index, queries, lo, hi, k)


def approximate_knn(x: np.ndarray, y: np.ndarray, cfg: SearchConfig, work: Path, *, fill: IndexFill = fill_index,
                    search: ShardSearch = search_shards_locally, progress: bool = False) -> KnnResult | None:
    """``cfg.index`` k-NN lists of ``x`` among ``y`` and of ``y`` among ``x`` (memmaps read in blocks), by query
    shards of ``cfg.shard_rows`` rows, each saved in ``work`` as it finishes; shards found there are reused (see
    :func:`_approximate_direction`). ``fill`` adds the rows to each trained index (by default in this process),
    ``search`` searches its shards. ``None`` when IVF would need to scan so many lists that exact search is
    faster."""
    k_fwd, k_bwd = check_inputs(x, y, cfg.k)
    fwd = _approximate_direction("fwd", y, x, k_fwd, cfg, work, fill, search, progress)
    bwd = None if fwd is None else _approximate_direction("bwd", x, y, k_bwd, cfg, work, fill, search, progress)
    return None if fwd is None or bwd is None else KnnResult(*fwd, *bwd)


def _approximate_direction(direction: str, db: np.ndarray, queries: np.ndarray, k: int, cfg: SearchConfig,
                           work: Path, fill: IndexFill, search: ShardSearch, progress: bool
                           ) -> tuple[np.ndarray, np.ndarray] | None:
    """``(idx, sim)``: the k-NN lists of ``queries`` among ``db`` in a ``cfg.index`` index, from the shard files of
    ``direction`` in ``work``. With shards left, the index is trained here on a seeded sample of ``db``, filled
    with ``db`` by ``fill``, its effort set to ``cfg.effort`` as ``nprobe`` or ``efSearch`` (default: tuned to 95%
    recall on a sample), and ``search`` searches the missing shards; ``None`` when IVF would need to scan so many
    lists that exact search is faster. The index is freed on return."""
    bounds = shard_bounds(len(queries), cfg.shard_rows)
    paths = [approx_shard_path(work, cfg.index, direction, shard) for shard in range(len(bounds))]
    todo = [shard for shard, path in enumerate(paths) if not path.is_file()]
    if len(todo) < len(bounds):
        log.info("k-NN %s %s: reusing %d of %d finished shards in %s", cfg.index, direction, len(bounds) - len(todo),
                 len(bounds), work)
    if todo:
        index = fill(train_index(db, cfg.index), db)
        if not set_search_effort(index, db, queries, k, cfg.effort):
            return None
        found = search(index, queries, bounds, todo, k)
        for shard, idx, sim in tqdm(found, total=len(todo), disable=not progress, desc=f"k-NN {direction} shards"):
            save_lists(paths[shard], *complete_rows(idx, sim, queries, bounds[shard][0], db))
    parts = [load_lists(path) for path in paths]
    return np.concatenate([idx for idx, _ in parts]), np.concatenate([sim for _, sim in parts])


class Selected(NamedTuple):
    """The pairs :func:`select_pairs` kept, and how many candidates each of its rules dropped (rules that dropped
    none left out), in the order they apply."""

    pairs: Candidates
    dropped: dict[str, int]


def select_pairs(cands: Candidates, src_text: list[str], tgt_text: list[str], cfg: MineConfig) -> Selected:
    """Apply the threshold, drop empty sentences, optional 1-to-1, and text deduplication (best pair kept).
    ``cands`` number the sentences of ``src_text`` and ``tgt_text``."""
    dropped: dict[str, int] = {}

    def keep_only(c: Candidates, mask: np.ndarray, reason: str) -> Candidates:
        if (gone := int((~mask).sum())) > 0:
            dropped[reason] = gone
        return Candidates(c.src[mask], c.tgt[mask], c.score[mask])

    c = cands
    if cfg.threshold is not None:
        c = keep_only(c, c.score >= cfg.threshold, "under the threshold")
    c = keep_only(c, np.array([bool(src_text[s].strip()) and bool(tgt_text[t].strip())
                               for s, t in zip(c.src, c.tgt, strict=True)], dtype=bool), "an empty side")
    if cfg.one_to_one:
        s, t, sc = greedy_one_to_one(c.src, c.tgt, c.score)
        if len(sc) < len(c.score):
            dropped["not 1:1"] = len(c.score) - len(sc)
        order = np.argsort(-sc, kind="stable")
        c = Candidates(s[order], t[order], sc[order])
    if cfg.dedup:
        seen_src: set[str] = set()
        seen_tgt: set[str] = set()
        mask = np.zeros(len(c.score), dtype=bool)
        for i, (s, t) in enumerate(zip(c.src, c.tgt, strict=True)):
            a, b = src_text[s].strip(), tgt_text[t].strip()
            if a not in seen_src and b not in seen_tgt:
                mask[i] = True
                seen_src.add(a)
                seen_tgt.add(b)
        c = keep_only(c, mask, "a sentence already paired")
    return Selected(c, dropped)


def write_pairs(output: Path, cands: Candidates, src: Unified, tgt: Unified, cfg: MineConfig, *,
                first_lines: tuple[int, int] = (1, 1)) -> Selected:
    """Select pairs from ``cands`` (numbering the sentences of ``src`` and ``tgt``; :func:`select_pairs`) and write
    ``score TAB src TAB tgt [TAB src_lines TAB tgt_lines]`` atomically (``-``: to standard output); the line
    numbers of a sentence are those of all its lines, comma-separated. ``first_lines`` are the line numbers of
    row 0 of each side (2 after a header)."""
    selected = select_pairs(cands, src.texts, tgt.texts, cfg)
    chosen = selected.pairs
    write_lines(output, (f"{sc:.6f}\t{clean_cell(src.texts[s])}\t{clean_cell(tgt.texts[t])}"
                         + (f"\t{_line_numbers(src, s, first_lines[0])}\t{_line_numbers(tgt, t, first_lines[1])}"
                            if cfg.with_ids else "") + "\n"
                         for s, t, sc in zip(chosen.src, chosen.tgt, chosen.score, strict=True)))
    return selected


def _line_numbers(side: Unified, sentence: int, first_line: int) -> str:
    return ",".join(str(row + first_line) for row in side.rows(sentence).tolist())
