"""``xlsent mine``: embed -> distinct sentences -> k-NN (sharded, resumable) -> margin scoring -> selection -> TSV.

Every stage writes its output atomically into a work folder (``OUTPUT.work/`` by default) keyed by the
job's inputs, so a killed run started again with the same arguments skips what is finished: embedding
chunks, k-NN shards (of the source side for exact search; of each side's queries for an approximate
``--index``), then the final selection. The result is identical. ``--index auto`` picks the search by corpus
size (:mod:`xlsent.mining.auto_index`) and prints its choice with the recall to expect.

Repeated sentences are searched and scored once (:mod:`xlsent.mining.unify`, on unless ``unify=False``): a
pair of distinct sentences is one output row, with every line number of both sentences under ``with_ids``.
After scoring, ``dedup`` keeps each distinct source and target text in one pair at most (the best).

Options, paths and that each side has a sentence are checked before anything is computed. A run that fails
removes the work folder unless it holds finished stages that the same command would reuse (it keeps them and
says so); a bad input row is not such a case, since the input has to change. Output ``-`` writes the pairs to
standard output, with the work folder in a temporary directory (not resumable).
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import faiss
import numpy as np
from tqdm.auto import tqdm

from xlsent.atomic import atomic_open, atomic_path, write_json
from xlsent.checksum import sha256_file
from xlsent.data.text_input import InputError, InputSpec, check_options_apply, iter_rows, readable
from xlsent.embed_job import EmbedOptions, embed_file
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.mining.auto_index import choose_index, describe_choice
from xlsent.mining.knn import (
    INDEX_KINDS,
    KnnResult,
    bidirectional_knn,
    check_inputs,
    complete_rows,
    fill_index,
    merge_source_spans,
    search_rows,
    set_search_effort,
    train_index,
)
from xlsent.mining.margin import Margin, Mode, greedy_one_to_one, select_candidates
from xlsent.mining.unify import Unified, unify
from xlsent.store import load_embeddings

STDOUT = "-"
OUTPUT_SUFFIXES = (".tsv", ".txt")
# A shard search: (ready index, all queries, shard bounds, shards to do, k) -> (shard, idx, sim) as each finishes.
ShardSearch = Callable[[faiss.Index, np.ndarray, list[tuple[int, int]], list[int], int],
                       Iterable[tuple[int, np.ndarray, np.ndarray]]]
# An index fill: (trained empty index, database rows) -> the index holding every row, numbered from 0.
IndexFill = Callable[[faiss.Index, np.ndarray], faiss.Index]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MineConfig:
    """How to mine. Defaults follow Artetxe & Schwenk (2019): ratio margin, k=4, max retrieval."""

    k: int = 4
    margin: str = "ratio"
    mode: str = "max"
    threshold: float | None = None
    unify: bool = True
    dedup: bool = True
    one_to_one: bool = False
    index: str = "exact"
    effort: int | None = None
    max_memory: int = 1 << 30
    shard_rows: int = 200_000
    with_ids: bool = False

    def __post_init__(self) -> None:
        checks = [(self.k >= 1, f"--k must be at least 1, not {self.k}"),
                  (self.margin in set(Margin), f"--margin must be one of {', '.join(Margin)}, not {self.margin!r}"),
                  (self.mode in set(Mode), f"--mode must be one of {', '.join(Mode)}, not {self.mode!r}"),
                  (self.index in ("exact", *INDEX_KINDS),
                   f"--index must be exact or one of {', '.join(INDEX_KINDS)}, not {self.index!r}"),
                  (self.effort is None or (self.effort >= 1 and self.index not in ("exact", "flat")),
                   f"--nprobe/--ef-search need an IVF or HNSW --index and a value of at least 1, not {self.effort} "
                   f"with --index {self.index}"),
                  (self.threshold is None or math.isfinite(self.threshold),
                   f"--threshold must be a finite number, not {self.threshold}"),
                  (self.max_memory > 0, f"--max-memory must be positive, not {self.max_memory} bytes"),
                  (self.shard_rows >= 1, f"shard_rows must be at least 1, not {self.shard_rows}")]
        problems = [message for ok, message in checks if not ok]
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class Candidates:
    """Candidate pairs: source row, target row, margin score (sorted by score, best first)."""

    src: np.ndarray
    tgt: np.ndarray
    score: np.ndarray


@dataclass
class MineSummary:
    """What a mining run produced: lines and distinct sentences per side, candidates, pairs written, threshold."""

    output: Path
    src_rows: int
    tgt_rows: int
    src_distinct: int
    tgt_distinct: int
    candidates: int
    written: int
    threshold: float | None
    seconds: float

    def describe(self) -> str:
        """One line: pairs written, out of how many candidates, at which threshold (or that there was none).

        >>> MineSummary(Path("p.tsv"), 5, 4, 5, 3, 3, 2, 1.05, 0.5).describe()
        'wrote p.tsv: 2 pairs out of 3 candidates at threshold 1.05 (5 x 4 lines, 5 x 3 distinct) in 0.5s'
        """
        kept = (f"at threshold {self.threshold:.6g}" if self.threshold is not None else
                "with no threshold: every candidate kept — this is a candidate list, not a mined bitext")
        distinct = ("" if (self.src_distinct, self.tgt_distinct) == (self.src_rows, self.tgt_rows) else
                    f", {self.src_distinct} x {self.tgt_distinct} distinct")
        return (f"wrote {self.output}: {self.written} pairs out of {self.candidates} candidates {kept} "
                f"({self.src_rows} x {self.tgt_rows} lines{distinct}) in {self.seconds:.1f}s")


def knn_shard(x_shard: np.ndarray, y: np.ndarray, offset: int, k: int, max_memory: int,
              progress: bool = False) -> KnnResult:
    """k-NN of one block of source rows: complete forward lists, and the target side's lists restricted
    to this block (indices shifted by ``offset``), to be merged over all blocks."""
    res = bidirectional_knn(np.asarray(x_shard), y, k, max_memory=max_memory, progress=progress)
    return KnnResult(res.fwd_idx, res.fwd_sim, res.bwd_idx + offset, res.bwd_sim)


def shard_bounds(rows: int, shard_rows: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` row ranges of the source shards."""
    return [(lo, min(rows, lo + shard_rows)) for lo in range(0, max(rows, 1), shard_rows)]


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


def load_knn_shard(path: Path) -> KnnResult:
    """One shard's k-NN lists, as written by :func:`save_knn_shard`."""
    with np.load(path, allow_pickle=False) as z:
        return KnnResult(z["fwd_idx"], z["fwd_sim"], z["bwd_idx"], z["bwd_sim"])


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


def sharded_knn(x: np.ndarray, y: np.ndarray, k: int, work: Path | None, *, shard_rows: int,
                max_memory: int, progress: bool = False) -> KnnResult:
    """Exact bidirectional k-NN computed shard by shard over ``x``; finished shards are reused from ``work``."""
    bounds = shard_bounds(len(x), shard_rows)

    def parts() -> Iterator[KnnResult]:
        for shard, (lo, hi) in enumerate(tqdm(bounds, disable=not progress or len(bounds) == 1, desc="k-NN shards")):
            path = knn_shard_path(work, shard) if work else None
            if path is not None and path.is_file():
                yield load_knn_shard(path)
                continue
            part = knn_shard(x[lo:hi], y, lo, k, max_memory, progress)
            if path is not None:
                save_knn_shard(path, part)
            yield part

    return merge_shards(parts(), k)


def candidates_from_knn(knn: KnnResult, cfg: MineConfig) -> Candidates:
    """Margin-scored candidates from bidirectional k-NN lists, best first."""
    src, tgt, score = select_candidates(knn.fwd_idx, knn.fwd_sim, knn.bwd_idx, knn.bwd_sim,
                                        margin=Margin(cfg.margin), mode=Mode(cfg.mode))
    order = np.argsort(-score, kind="stable")
    return Candidates(src[order], tgt[order], score[order])


def resolve_index(cfg: MineConfig, src_rows: int, tgt_rows: int, progress: bool = False) -> MineConfig:
    """``cfg`` with ``--index auto`` replaced by the search chosen for ``src_rows`` x ``tgt_rows`` distinct sentences
    (:mod:`xlsent.mining.auto_index`), the choice and its expected recall logged and, with ``progress``, printed."""
    if cfg.index != "auto":
        return cfg
    index = choose_index(src_rows, tgt_rows)
    message = describe_choice(index, src_rows, tgt_rows, cfg.effort)
    log.info("%s", message)
    _say(progress, message)
    return replace(cfg, index=index, effort=None if index == "exact" else cfg.effort)


def mine_arrays(x: np.ndarray, y: np.ndarray, cfg: MineConfig, work: Path | None = None,
                progress: bool = False) -> Candidates:
    """Candidate pairs between two embedding matrices (rows L2-normalised; memmaps are read in blocks, not copied
    into memory), ``--index auto`` resolved for their sizes (:func:`resolve_index`). Both the exact and the
    approximate search are resumable by shard from ``work``."""
    return _mine_resolved(x, y, resolve_index(cfg, len(x), len(y), progress), work, progress)


def _mine_resolved(x: np.ndarray, y: np.ndarray, cfg: MineConfig, work: Path | None, progress: bool) -> Candidates:
    """Candidate pairs between ``x`` and ``y`` as :func:`mine_arrays` finds them, with ``cfg.index`` already
    resolved (never ``auto``)."""
    knn = None
    if cfg.index != "exact":
        with _folder(work) as folder:
            knn = approximate_knn(x, y, cfg, folder, progress=progress)
    if knn is None:
        knn = sharded_knn(x, y, cfg.k, work, shard_rows=cfg.shard_rows, max_memory=cfg.max_memory,
                          progress=progress)
    return candidates_from_knn(knn, cfg)


@contextmanager
def _folder(work: Path | None) -> Iterator[Path]:
    """``work``, or a temporary folder (removed after) without one."""
    if work is not None:
        yield work
        return
    with tempfile.TemporaryDirectory(prefix="xlsent-knn-") as tmp:
        yield Path(tmp)


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


def approximate_knn(x: np.ndarray, y: np.ndarray, cfg: MineConfig, work: Path, *, fill: IndexFill = fill_index,
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


def _approximate_direction(direction: str, db: np.ndarray, queries: np.ndarray, k: int, cfg: MineConfig, work: Path,
                           fill: IndexFill, search: ShardSearch, progress: bool
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


def select_pairs(cands: Candidates, src_text: list[str], tgt_text: list[str], cfg: MineConfig) -> Candidates:
    """Apply the threshold, drop empty sentences, optional 1-to-1, and text deduplication (best pair kept).
    ``cands`` number the sentences of ``src_text`` and ``tgt_text``."""
    keep = np.ones(len(cands.score), dtype=bool)
    if cfg.threshold is not None:
        keep &= cands.score >= cfg.threshold
    keep &= np.array([bool(src_text[s].strip()) and bool(tgt_text[t].strip())
                      for s, t in zip(cands.src, cands.tgt, strict=True)], dtype=bool)
    c = Candidates(cands.src[keep], cands.tgt[keep], cands.score[keep])
    if cfg.one_to_one:
        s, t, sc = greedy_one_to_one(c.src, c.tgt, c.score)
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
        c = Candidates(c.src[mask], c.tgt[mask], c.score[mask])
    return c


def _given_embeddings(given: Path | None, sha: str, expect_encoder: str | None) -> tuple[np.ndarray | None, str | None]:
    """The embeddings in ``given`` (checked against the input's checksum and the encoder id, where known) and the
    id of the encoder that made them; ``(None, expect_encoder)`` without ``given``."""
    if given is None:
        return None, expect_encoder
    array, meta = load_embeddings(given, expect_sha256=sha, expect_encoder=expect_encoder)
    return array, str(meta["encoder"])


def _embeddings(spec: InputSpec, work: Path, name: str, encoder: Encoder, lang: str | None,
                progress: bool) -> np.ndarray:
    sha = sha256_file(spec.path)
    out = work / f"{name}.npy"
    if out.is_file():
        try:
            return load_embeddings(out, expect_sha256=sha, expect_encoder=encoder_id(encoder))[0]
        except ValueError as exc:
            log.warning("re-embedding %s: %s", spec.name, exc)
    embed_file(spec, out, encoder, EmbedOptions(resume=True, progress=progress, lang=lang))
    return load_embeddings(out, expect_sha256=sha)[0]


def check_mine_paths(src: InputSpec, tgt: InputSpec, output: str | Path) -> None:
    """Raise ValueError for inputs or an output that ``mine_files`` cannot use, before anything is computed."""
    src.check()
    tgt.check()
    check_options_apply([src, tgt])
    if src.is_stdin() and tgt.is_stdin():
        raise InputError("SRC and TGT cannot both be standard input (-): it can be read once")
    for side in (src, tgt):
        if not side.is_stream():  # a stream is checked once copied, by readable_sides
            check_has_text(side)
    output = Path(output)
    if str(output) == STDOUT:
        return
    if output.is_dir():
        raise ValueError(f"{output}: is a directory; name the output file (e.g. {output / 'pairs.tsv'})")
    if output.suffix.lower() not in OUTPUT_SUFFIXES:
        raise ValueError(f"{output}: pairs are written as TSV: name a .tsv (or .txt) file, or - for standard output")
    work = output.with_name(output.name + ".work")
    if work.exists() and not work.is_dir():
        raise ValueError(f"{work}: exists and is not a folder; remove it (it would hold the run's finished stages)")


def check_has_text(spec: InputSpec) -> None:
    """Raise :class:`InputError` unless ``spec`` (a file, or a stream copied by ``readable``) has a row with text:
    there is nothing to mine in an empty side."""
    rows = 0
    for row in iter_rows(spec):
        if row.strip():
            return
        rows += 1
    what = "is empty" if rows == 0 else f"has no text ({rows} blank row(s))"
    raise InputError(f"{spec.name}: {what}, so there is nothing to mine; give one sentence a line")


def _has_progress(work: Path) -> bool:
    """Whether ``work`` holds a finished stage: embeddings, embedding chunks or k-NN shards."""
    return any(work.glob("*.npy")) or any(work.glob("*.parts/[0-9]*.npy")) or any(work.glob("knn-*.npz"))


def clean_up(work: Path, exc: BaseException, temporary: bool) -> None:
    """After a failure: keep finished stages that a re-run can use and say so; remove anything else."""
    if not temporary and work.is_dir() and _has_progress(work) and not isinstance(exc, InputError):
        log.warning("kept the finished stages in %s: the same command continues from them", work)
    else:
        shutil.rmtree(work, ignore_errors=True)


@contextmanager
def readable_sides(src: InputSpec, tgt: InputSpec) -> Iterator[tuple[InputSpec, InputSpec]]:
    """Both sides as :func:`readable` gives them (streams copied), each checked to have text (:func:`check_has_text`)
    before any work."""
    with readable(src) as src_file, readable(tgt) as tgt_file:
        check_has_text(src_file)
        check_has_text(tgt_file)
        yield src_file, tgt_file


def mine_files(src: InputSpec, tgt: InputSpec, output: str | Path, encoder: Encoder | None, cfg: MineConfig, *,
               src_lang: str | None = None, tgt_lang: str | None = None, src_emb: Path | None = None,
               tgt_emb: Path | None = None, work_dir: Path | None = None, keep_work: bool = False,
               progress: bool = True) -> MineSummary:
    """Mine ``src`` x ``tgt`` into ``output`` (``-``: standard output) as ``score TAB src TAB tgt`` (plus the
    line numbers of both sides with ``cfg.with_ids``). Either input may be standard input (``-``) or a pipe.
    With both ``src_emb`` and ``tgt_emb`` no encoder is needed (``encoder=None``): the two files must then have
    been made by the same one."""
    start = time.perf_counter()
    check_mine_paths(src, tgt, output)
    if encoder is None and (src_emb is None or tgt_emb is None):
        raise ValueError("mining without an encoder needs the embeddings of both sides (--src-emb and --tgt-emb)")
    output = Path(output)
    with readable_sides(src, tgt) as (src, tgt):
        src_sha, tgt_sha = sha256_file(src.path), sha256_file(tgt.path)
        x_given, made_by = _given_embeddings(src_emb, src_sha, encoder_id(encoder) if encoder else None)
        y_given, made_by = _given_embeddings(tgt_emb, tgt_sha, made_by)
        key = job_key(src, tgt, src_sha, tgt_sha, str(made_by), cfg)
        temporary = str(output) == STDOUT and work_dir is None
        work = Path(tempfile.mkdtemp(prefix="xlsent-mine-")) if temporary else (
            work_dir or output.with_name(output.name + ".work"))
        prepare_work(work, key)
        try:
            _say(progress, "[1/3] embedding")
            x = x_given if x_given is not None else _embeddings(src, work, "src", _needed(encoder), src_lang, progress)
            y = y_given if y_given is not None else _embeddings(tgt, work, "tgt", _needed(encoder), tgt_lang, progress)
            src_u, tgt_u = unify(list(iter_rows(src)), cfg.unify), unify(list(iter_rows(tgt)), cfg.unify)
            x, y = src_u.distinct(x, work / "src-distinct.npy"), tgt_u.distinct(y, work / "tgt-distinct.npy")
            cfg = resolve_index(cfg, len(x), len(y), progress)
            _say(progress, f"[2/3] k-NN search ({_sizes(src_u, tgt_u)}, index={cfg.index}, k={cfg.k})")
            cands = _mine_resolved(x, y, cfg, work, progress)
            _say(progress, f"[3/3] scoring and selecting {len(cands.score)} candidates")
            written = write_pairs(output, cands, src_u, tgt_u, cfg, first_lines=(src.first_line, tgt.first_line))
        except BaseException as exc:
            clean_up(work, exc, temporary)
            raise
    if temporary or not keep_work:
        shutil.rmtree(work)
    return summarise(output, src_u, tgt_u, len(cands.score), written, cfg, time.perf_counter() - start)


def summarise(output: Path, src: Unified, tgt: Unified, candidates: int, written: int, cfg: MineConfig,
              seconds: float) -> MineSummary:
    """The :class:`MineSummary` of a run over the sides ``src`` and ``tgt``."""
    return MineSummary(output, len(src.inverse), len(tgt.inverse), len(src.texts), len(tgt.texts), candidates,
                       written, cfg.threshold, seconds)


def _sizes(src: Unified, tgt: Unified) -> str:
    """``lines x lines``, and the distinct sentences where a side repeats some."""
    lines = f"{len(src.inverse)} x {len(tgt.inverse)} lines"
    return lines if not (src.repeated or tgt.repeated) else f"{lines}, {len(src.texts)} x {len(tgt.texts)} distinct"


def job_key(src: InputSpec, tgt: InputSpec, src_sha: str, tgt_sha: str, encoder: str, cfg: MineConfig
            ) -> dict[str, Any]:
    """What a work folder's finished stages depend on: the inputs, how they are read, the encoder, the search."""
    return {"src": src_sha, "tgt": tgt_sha, "encoder": encoder, "k": cfg.k, "shard_rows": cfg.shard_rows,
            "index": cfg.index, "effort": cfg.effort, "unify": cfg.unify,
            "read_as": [{k: v for k, v in spec.source().items() if k != "path"} for spec in (src, tgt)]}


def _needed(encoder: Encoder | None) -> Encoder:
    if encoder is None:
        raise ValueError("embedding a side needs an encoder")
    return encoder


def prepare_work(work: Path, key: dict[str, Any]) -> None:
    """Keep ``work`` for the job ``key`` was written for; otherwise start it empty."""
    state = work / "job.json"
    if work.exists():
        try:
            previous = json.loads(state.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = None
        if previous != key:
            log.warning("%s belongs to another job; starting over", work)
            shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    write_json(state, key)


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr, flush=True)


def write_pairs(output: Path, cands: Candidates, src: Unified, tgt: Unified, cfg: MineConfig, *,
                first_lines: tuple[int, int] = (1, 1)) -> int:
    """Select pairs from ``cands`` (numbering the sentences of ``src`` and ``tgt``) and write
    ``score TAB src TAB tgt [TAB src_lines TAB tgt_lines]`` atomically (``-``: to standard output); the line
    numbers of a sentence are those of all its lines, comma-separated. ``first_lines`` are the line numbers of
    row 0 of each side (2 after a header)."""
    chosen = select_pairs(cands, src.texts, tgt.texts, cfg)
    lines = (f"{sc:.6f}\t{_clean(src.texts[s])}\t{_clean(tgt.texts[t])}"
             + (f"\t{_line_numbers(src, s, first_lines[0])}\t{_line_numbers(tgt, t, first_lines[1])}"
                if cfg.with_ids else "") + "\n"
             for s, t, sc in zip(chosen.src, chosen.tgt, chosen.score, strict=True))
    if str(output) == STDOUT:
        sys.stdout.writelines(lines)
        sys.stdout.flush()
    else:
        with atomic_open(output) as fh:
            fh.writelines(lines)
    return len(chosen.score)


def _line_numbers(side: Unified, sentence: int, first_line: int) -> str:
    return ",".join(str(row + first_line) for row in side.rows(sentence).tolist())


def _clean(text: str) -> str:
    return text.replace("\t", " ").replace("\n", " ")
