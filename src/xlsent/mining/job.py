"""One mining job for every front end: ``xlsent mine`` (pairs out of two corpora), ``xlsent score`` (margins of
given pairs, LASER's ``--mode score``), ``xlsent filter`` (given pairs kept or dropped), the service's
``/v1/align`` (in memory) and the Ray engine. The filter's decisions are :mod:`xlsent.mining.filtering`'s.

A file job reads both sides, embeds them (or takes the given embeddings), searches and scores the *distinct*
sentences of each side (:mod:`xlsent.mining.unify`), and writes its output atomically. Every stage writes into a work
folder (``OUTPUT.work/`` by default) keyed by the job's inputs, so a killed run started again with the same
arguments skips what is finished: embedding chunks, k-NN shards, then the final selection; the result is identical.
Where the heavy stages run is the engine's business (:mod:`xlsent.mining.engine`): the same driver serves the local
and the Ray engine.

Options, paths and that each side has a sentence are checked before anything is computed. A run that fails
removes the work folder unless it holds finished stages that the same command would reuse (it keeps them and
says so); a bad input row is not such a case, since the input has to change. Output ``-`` writes to standard
output, with the work folder in a temporary directory (not resumable).
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from xlsent.atomic import atomic_open, atomic_path, check_folders_above, helper_path, write_json, write_lines
from xlsent.checksum import sha256_file
from xlsent.data.empty_text import is_empty
from xlsent.data.text_input import (
    InputError,
    InputSpec,
    WorkFolderError,
    check_not_an_input,
    check_options_apply,
    check_work_folder,
    describe_reading,
    file_key,
    iter_rows,
    readable,
    reading,
)
from xlsent.mining.config import MineConfig, MineSummary, ScoreSummary, SearchConfig
from xlsent.mining.engine import Engine, Side
from xlsent.mining.filter_config import FilterConfig
from xlsent.mining.filter_scorer import Scorer
from xlsent.mining.filtering import (
    FilterSummary,
    PairValues,
    decide,
    kept_rows,
    pair_values,
    rules_pass,
    save_histogram,
    score_rows,
)
from xlsent.mining.knn import KnnResult, take_rows
from xlsent.mining.margin import Margin, margin_scores
from xlsent.mining.pair_features import (
    HalfPlan,
    PairSignals,
    half_cosines,
    half_plan,
    pair_features,
    relative_lengths,
)
from xlsent.mining.stages import (
    STDOUT,
    candidates_from_knn,
    clean_cell,
    mine_arrays,
    neighbourhoods,
    resolve_index,
    say,
    select_pairs,
    write_pairs,
)
from xlsent.mining.unify import Unified, unify
from xlsent.store import EmbeddingFileError, load_embeddings, read_metadata

if TYPE_CHECKING:
    from xlsent.mining.auto_threshold import AutoThreshold

OUTPUT_SUFFIXES = (".tsv", ".txt")

log = logging.getLogger(__name__)


def work_path(output: Path) -> Path:
    """The folder of the finished stages of a job writing ``output``: ``OUTPUT.work`` (shortened where that name is
    too long: :func:`~xlsent.atomic.helper_path`)."""
    return helper_path(output, "", ".work")


def check_output(output: str | Path) -> None:
    """Raise ValueError for an output that a job cannot write: a folder, another suffix than ``.tsv``/``.txt``, or a
    work folder path taken by a file."""
    output = Path(output)
    if str(output) == STDOUT:
        return
    if output.is_dir():
        raise ValueError(f"{output}: is a directory; name the output file (e.g. {output / 'pairs.tsv'})")
    if output.suffix.lower() not in OUTPUT_SUFFIXES:
        raise ValueError(f"{output}: the output is TSV: name a .tsv (or .txt) file, or - for standard output")
    check_folders_above(output)
    work = work_path(output)
    if work.exists() and not work.is_dir():
        raise ValueError(f"{work}: exists and is not a folder; remove it (it would hold the run's finished stages)")


EMB_FLAGS = ("--src-emb", "--tgt-emb")
"""The options that give each side's embeddings, as messages name them."""


def check_mine_paths(src: InputSpec, tgt: InputSpec, output: str | Path, task: str = "mine") -> None:
    """Raise ValueError for inputs or an output that a job cannot use, before anything is computed (``task``: what
    the job does, as messages name it)."""
    src.check()
    tgt.check()
    check_options_apply([src, tgt])
    if src.is_stdin() and tgt.is_stdin():
        raise InputError("SRC and TGT cannot both be standard input (-): it can be read once")
    for side in (src, tgt):
        if not side.is_stream():  # a stream is checked once copied, by readable_sides
            check_has_text(side, task)
    check_output(output)
    check_not_an_input([output], [src.path, tgt.path])


def check_job(src: InputSpec, tgt: InputSpec, output: str | Path, embs: tuple[Path | None, Path | None] = (None, None),
              *, task: str = "mine", langs: tuple[str | None, str | None] = (None, None)) -> None:
    """Everything about a file job that can be refused before an encoder is loaded: the inputs, the output and the
    given embedding files (readable, with a header, made from what each side reads: :func:`check_made_from`)."""
    check_mine_paths(src, tgt, output, task)
    check_not_an_input([output], embs)
    for spec, given, flag, lang in zip((src, tgt), embs, EMB_FLAGS, langs, strict=True):
        if given is not None:
            if Path(given).is_dir():
                raise EmbeddingFileError(f"{flag} {given}: is a directory; give the .npy or .parquet file that "
                                         "`xlsent embed` wrote")
            meta = read_metadata(given)
            if not spec.is_stream():  # a stream is checked once copied
                check_made_from(given, meta, spec, flag, lang)


def check_made_from(given: Path, meta: dict[str, Any], spec: InputSpec, flag: str, lang: str | None) -> None:
    """Raise :class:`~xlsent.store.EmbeddingFileError` unless the embeddings ``given`` (metadata ``meta``) were made
    from what ``spec`` reads of its file (format, header, column or field: :func:`~xlsent.data.text_input.reading`)
    and, where both say, in the language ``lang``: one column's vectors never score another's texts. (That the file
    is the same one, by checksum, is :func:`~xlsent.store.load_embeddings`'s check.)"""
    recorded = meta.get("source") or {}
    if "format" in recorded:
        made = reading(InputSpec(spec.path, str(recorded["format"]), recorded.get("column"), recorded.get("field"),
                                 recorded.get("header"), spec.label))
        wanted = reading(spec)
        if made != wanted:
            raise EmbeddingFileError(
                f"{given}: {flag} was made from {describe_reading(made)} of {recorded.get('path', 'its input')}, but "
                f"this run reads {describe_reading(wanted)} of {spec.name}: the vectors are of other text; embed "
                f"what this run reads (xlsent embed {spec.name} ...) or give the file of that side")
    made_lang = recorded.get("lang")
    if lang is not None and made_lang is not None and made_lang != lang:
        raise EmbeddingFileError(f"{given}: {flag} was embedded as language {made_lang!r}, but this run gives "
                                 f"{lang!r} for {spec.name}; embed it with --lang {lang}, or give the language it was "
                                 "embedded as")


def check_same_rows(src: InputSpec, tgt: InputSpec) -> None:
    """Raise :class:`InputError` unless the two sides of given pairs (files; a stream is checked once read) have as
    many rows."""
    if src.is_stream() or tgt.is_stream():
        return
    _check_row_counts(src, sum(1 for _ in iter_rows(src)), tgt, sum(1 for _ in iter_rows(tgt)))


def _check_row_counts(src: InputSpec, src_rows: int, tgt: InputSpec, tgt_rows: int) -> None:
    """Raise :class:`InputError` unless the two sides of given pairs have as many rows, naming both."""
    if src_rows != tgt_rows:
        raise InputError(f"{src.name} has {src_rows} rows and {tgt.name} {tgt_rows}: line i of one is paired with "
                         "line i of the other, so they must have as many")


def check_has_text(spec: InputSpec, task: str = "mine") -> None:
    """Raise :class:`InputError` unless ``spec`` (a file, or a stream copied by ``readable``) has a row with text:
    there is nothing to ``task`` (mine, score, filter) in an empty side."""
    rows = 0
    for row in iter_rows(spec):
        if not is_empty(row):
            return
        rows += 1
    what = "is empty" if rows == 0 else f"has no text ({rows} blank row(s))"
    raise InputError(f"{_with_column(spec)}: {what}, so there is nothing to {task}; give one sentence a line")


def _with_column(spec: InputSpec) -> str:
    """The input as messages name it, with its column where one is read."""
    return spec.name if spec.column is None else f"{spec.name} column {spec.column}"


def _has_progress(work: Path) -> bool:
    """Whether ``work`` holds a finished stage: embeddings, embedding chunks or k-NN shards."""
    return any(work.glob("*.npy")) or any(work.glob("*.parts/[0-9]*.npy")) or any(work.glob("knn-*.npz"))


def clean_up(work: Path, exc: BaseException, temporary: bool) -> None:
    """After a failure: keep finished stages that a re-run can use and say so; remove anything else (but a work
    folder the run refused to empty, :class:`WorkFolderError`, is left as it is)."""
    if isinstance(exc, WorkFolderError):
        return
    if not temporary and work.is_dir() and _has_progress(work) and not isinstance(exc, InputError):
        log.warning("kept the finished stages in %s: the same command continues from them", work)
    else:
        shutil.rmtree(work, ignore_errors=True)


@contextmanager
def readable_sides(src: InputSpec, tgt: InputSpec, task: str = "mine") -> Iterator[tuple[InputSpec, InputSpec]]:
    """Both sides as :func:`readable` gives them (streams copied), each checked to have text (:func:`check_has_text`)
    before any work."""
    with readable(src) as src_file, readable(tgt) as tgt_file:
        check_has_text(src_file, task)
        check_has_text(tgt_file, task)
        yield src_file, tgt_file


def job_key(src: InputSpec, tgt: InputSpec, src_sha: str, tgt_sha: str, encoder: str, cfg: SearchConfig,
            langs: tuple[str | None, str | None]) -> dict[str, Any]:
    """What a work folder's finished stages depend on: the inputs, how they are read, the encoder and the languages
    it was given, the search."""
    return {"src": src_sha, "tgt": tgt_sha, "encoder": encoder, "langs": list(langs), "k": cfg.k,
            "shard_rows": cfg.shard_rows,
            "index": cfg.index, "effort": cfg.effort, "unify": cfg.unify, "precision": cfg.precision,
            "read_as": [{k: v for k, v in spec.source().items() if k != "path"} for spec in (src, tgt)]}


def prepare_work(work: Path, key: dict[str, Any]) -> None:
    """Keep ``work`` for the job ``key`` was written for; otherwise start it empty."""
    state = work / "job.json"
    if work.exists() and any(work.iterdir()):
        try:
            previous = json.loads(state.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = None
        if previous != key:
            log.warning("%s belongs to another job; starting over", work)
            shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    write_json(state, key)


def _given_embeddings(given: Path | None, side: Side, flag: str, expect_encoder: str | None
                      ) -> tuple[np.ndarray | None, str | None]:
    """The embeddings in ``given`` for ``side`` (checked against its input's checksum, against what it reads of the
    file and its language (:func:`check_made_from`), and against the encoder id where known) and the id of the
    encoder that made them; ``(None, expect_encoder)`` without ``given``."""
    if given is None:
        return None, expect_encoder
    made_by = read_metadata(given).get("encoder")
    if expect_encoder is not None and made_by != expect_encoder:
        raise EmbeddingFileError(f"{given}: {flag} was made by encoder {made_by}, but this run's encoder is "
                                 f"{expect_encoder} (--model, or the other side's embeddings); give the --model that "
                                 "made it, or embed the side again")
    array, meta = load_embeddings(given, expect_sha256=side.sha256)
    check_made_from(given, meta, side.spec, flag, side.lang)
    return array, str(meta["encoder"])


@dataclass
class _Job:
    """A file job under way, its sides embedded: each side's input and texts, its distinct sentences and their
    vectors, where the job works, and when it started."""

    src: Side
    tgt: Side
    src_u: Unified
    tgt_u: Unified
    x: np.ndarray
    y: np.ndarray
    work: Path
    start: float
    extra: tuple[np.ndarray, np.ndarray] | None = None


# More lines a job embeds beside its sides (texts in each side's language), chosen from the read sides.
ExtraTexts = Callable[[Side, Side], tuple[list[str], list[str]]]


@contextmanager
def _file_job(kind: str, src: InputSpec, tgt: InputSpec, output: Path, cfg: SearchConfig, engine: Engine, *,
              langs: tuple[str | None, str | None], embs: tuple[Path | None, Path | None], work_dir: Path | None,
              keep_work: bool, progress: bool, check_texts: Callable[[Side, Side], None] | None = None,
              extra_texts: ExtraTexts | None = None) -> Iterator[_Job]:
    """The opening and the end every file job shares: check and read both sides (then ``check_texts`` them, before
    anything is embedded), check the given embeddings, key and prepare the work folder, embed (or take the given
    embeddings) and keep each side's distinct sentences, and embed the ``extra_texts`` of the sides (in the job's
    ``extra``; only with an encoder); after the body, remove the work folder (or on failure keep what a re-run
    reuses, :func:`clean_up`)."""
    start = time.perf_counter()
    check_mine_paths(src, tgt, output, kind)
    if engine.encoder_id() is None and None in embs:
        raise ValueError(f"{kind} without an encoder needs the embeddings of both sides (--src-emb and --tgt-emb)")
    with readable_sides(src, tgt, kind) as (src, tgt):
        src_sha, tgt_sha = sha256_file(src.path), sha256_file(tgt.path)
        sides = (Side(src, list(iter_rows(src)), src_sha, langs[0]), Side(tgt, list(iter_rows(tgt)), tgt_sha, langs[1]))
        x_given, made_by = _given_embeddings(embs[0], sides[0], EMB_FLAGS[0], engine.encoder_id())
        y_given, made_by = _given_embeddings(embs[1], sides[1], EMB_FLAGS[1], made_by)
        if kind != "mine":  # given pairs
            _check_row_counts(src, len(sides[0].texts), tgt, len(sides[1].texts))
        if check_texts is not None:
            check_texts(*sides)
        key = {"job": kind, **job_key(src, tgt, src_sha, tgt_sha, str(made_by), cfg, langs), **engine.job_key()}
        temporary = str(output) == STDOUT and work_dir is None
        work = Path(tempfile.mkdtemp(prefix=f"xlsent-{kind}-")) if temporary else (
            work_dir or work_path(output))
        check_work_folder(work, [src.path, tgt.path, *embs])
        prepare_work(work, key)
        try:
            say(progress, f"[1/{3 if kind == 'mine' else 2}] embedding")
            unified = unify(sides[0].texts, cfg.unify), unify(sides[1].texts, cfg.unify)
            x, y = (u.distinct(given if given is not None else engine.embed(side, work / f"{name}.npy", progress),
                               work / f"{name}-distinct.npy")
                    for side, name, given, u in zip(sides, ("src", "tgt"), (x_given, y_given), unified, strict=True))
            extra = None
            if extra_texts is not None and engine.encoder_id() is not None:
                extra = _embed_extra(engine, sides, extra_texts(*sides), work, progress)
            engine.embedded()
            yield _Job(*sides, *unified, x, y, work, start, extra)
        except BaseException as exc:
            clean_up(work, exc, temporary)
            raise
    if temporary or not keep_work:
        shutil.rmtree(work)


def _embed_extra(engine: Engine, sides: tuple[Side, Side], texts: tuple[list[str], list[str]], work: Path,
                 progress: bool) -> tuple[np.ndarray, np.ndarray]:
    """The vectors of ``texts`` (lines in the language of each side), written to the work folder as text files
    and embedded like the sides (resumable)."""
    out = []
    for side, lines, name in zip(sides, texts, ("src-extra", "tgt-extra"), strict=True):
        if not lines:
            out.append(np.zeros((0, 0), np.float32))
            continue
        path = work / f"{name}.txt"
        with atomic_open(path) as fh:
            fh.writelines(f"{line}\n" for line in lines)
        spec = InputSpec(path, format="txt")
        out.append(engine.embed(Side(spec, lines, sha256_file(path), side.lang), work / f"{name}.npy", progress))
    return out[0], out[1]


def mine_files(src: InputSpec, tgt: InputSpec, output: str | Path, engine: Engine, cfg: MineConfig, *,
               src_lang: str | None = None, tgt_lang: str | None = None, src_emb: Path | None = None,
               tgt_emb: Path | None = None, work_dir: Path | None = None, keep_work: bool = False,
               progress: bool = True) -> MineSummary:
    """Mine ``src`` x ``tgt`` into ``output`` (``-``: standard output) as ``score TAB src TAB tgt`` (plus the
    line numbers of both sides with ``cfg.with_ids``), best first, on ``engine``. Either input may be standard
    input (``-``) or a pipe. With both ``src_emb`` and ``tgt_emb`` the engine need not embed: the two files must
    then have been made by the same encoder."""
    output = Path(output)
    with _file_job("mine", src, tgt, output, cfg, engine, langs=(src_lang, tgt_lang), embs=(src_emb, tgt_emb),
                   work_dir=work_dir, keep_work=keep_work, progress=progress) as job:
        src_u, tgt_u, x, y = job.src_u, job.tgt_u, job.x, job.y
        cfg = resolve_index(cfg, len(x), len(y), progress)
        say(progress, f"[2/3] k-NN search ({_sizes(src_u, tgt_u)}, index={cfg.index}, k={cfg.k})")
        knn = _neighbourhoods(x, y, cfg, job.work, engine, progress)
        cands = candidates_from_knn(knn, cfg)
        say(progress, f"[3/3] scoring and selecting {len(cands.score)} candidates")
        selected = write_pairs(output, cands, src_u, tgt_u, cfg,
                               first_lines=(job.src.spec.first_line, job.tgt.spec.first_line))
    return MineSummary(output, len(src_u.inverse), len(tgt_u.inverse), len(src_u.texts), len(tgt_u.texts),
                       len(cands.score), len(selected.pairs.score), cfg.threshold, time.perf_counter() - job.start,
                       selected.dropped)


def score_files(src: InputSpec, tgt: InputSpec, output: str | Path, engine: Engine, cfg: SearchConfig, *,
                src_lang: str | None = None, tgt_lang: str | None = None, src_emb: Path | None = None,
                tgt_emb: Path | None = None, work_dir: Path | None = None, keep_work: bool = False,
                progress: bool = True) -> ScoreSummary:
    """Score the pairs (row i of ``src``, row i of ``tgt``) into ``output`` as ``score TAB src TAB tgt``, one line
    per pair in input order: the ``cfg.margin`` of each pair against the k nearest neighbours of each side among the
    distinct sentences of the other whole side, as LASER's ``mine_bitexts.py --mode score``. A pair with an empty
    (blank) side is written with an empty score and takes no part in any neighbourhood. A side with fewer than
    ``cfg.k`` distinct sentences has no k neighbours: the scores are then cosines, with a warning."""
    output = Path(output)
    with _file_job("score", src, tgt, output, cfg, engine, langs=(src_lang, tgt_lang), embs=(src_emb, tgt_emb),
                   work_dir=work_dir, keep_work=keep_work, progress=progress) as job:
        scored = job_margins(job, cfg, engine, progress)
        write_lines(output, (f"{'' if gap else f'{score:.6f}'}\t{clean_cell(s)}\t{clean_cell(t)}\n"
                             for score, gap, s, t in zip(scored.score.tolist(), scored.blank.tolist(), job.src.texts,
                                                         job.tgt.texts, strict=True)))
    return ScoreSummary(output, len(scored.blank), int((~scored.blank).sum()), int(scored.blank.sum()),
                        scored.measure, time.perf_counter() - job.start)


def check_filter_outputs(output: str | Path, scores: Path | None, histogram: Path | None,
                         inputs: Sequence[str | Path | None]) -> None:
    """Raise ValueError for outputs a filter job cannot write: the kept pairs and ``scores`` as :func:`check_output`
    says (``scores`` not ``-``), ``histogram`` not a ``.png`` file, two of them the same file, one of them one of
    ``inputs``."""
    check_output(output)
    if scores is not None:
        if str(scores) == STDOUT:
            raise ValueError("--scores needs a file (.tsv or .txt), not standard output")
        check_output(scores)
    if histogram is not None:
        if histogram.is_dir():
            raise ValueError(f"--histogram {histogram}: is a directory; name a .png file")
        if histogram.suffix.lower() != ".png":
            raise ValueError(f"{histogram}: the histogram is a PNG file: name a .png file")
        check_folders_above(histogram, "--histogram")
    given = [file_key(path) for path in (output, scores, histogram) if path is not None and str(path) != STDOUT]
    if len(set(given)) < len(given):
        raise ValueError("-o, --scores and --histogram must name different files")
    check_not_an_input([scores, histogram], inputs)


def filter_files(src: InputSpec, tgt: InputSpec, output: str | Path, engine: Engine, cfg: SearchConfig,
                 rules: FilterConfig, *, cut: AutoThreshold | None, scorer: Scorer | None = None,
                 scores_out: Path | None = None, histogram: Path | None = None, src_lang: str | None = None,
                 tgt_lang: str | None = None, src_emb: Path | None = None, tgt_emb: Path | None = None,
                 work_dir: Path | None = None, keep_work: bool = False, progress: bool = True) -> FilterSummary:
    """Filter the pairs (row i of ``src``, row i of ``tgt``): score them as :func:`score_files` does, measure them
    for the rule filters of ``rules`` and keep or drop each (:func:`xlsent.mining.filtering.decide`): with
    ``scorer``, by its ``p_clean`` of the pairs' features (:mod:`xlsent.mining.pair_features`: the halves of long
    sides are embedded too); else by the score cut ``cut`` for the scores the run computes (:func:`filter_cut`;
    None: no cut, or ``rules.keep``'s). Write the kept pairs (``src TAB tgt``, input order) into ``output``, every
    pair with its values into ``scores_out`` and a histogram of the scores into ``histogram`` (each optional but
    ``output``); resumable like :func:`score_files`, and nothing is written on error."""
    output = Path(output)
    check_filter_outputs(output, scores_out, histogram, [src.path, tgt.path, src_emb, tgt_emb])
    chosen: list[tuple[float | None, str]] = []
    measured: list[tuple[PairValues, np.ndarray, HalfPlan]] = []

    def choose_cut(src_side: Side, tgt_side: Side) -> None:
        texts = (src_side.texts, tgt_side.texts)
        chosen.append(filter_cut(cut, *score_scale(texts, side_names(src_side.spec, tgt_side.spec), cfg)))

    def halves(src_side: Side, tgt_side: Side) -> tuple[list[str], list[str]]:
        say(progress, "[filters] " + ", ".join(rules.active()))
        values = pair_values(src_side.texts, tgt_side.texts, (src_lang, tgt_lang), rules)
        live, plan = rules_pass(values, rules), HalfPlan(np.zeros(0, np.int64), np.zeros(0, np.int64), [])
        if scorer is not None:
            plan = half_plan(src_side.texts, tgt_side.texts, relative_lengths(values.src_length, values.tgt_length),
                             live)
        measured.append((values, live, plan))
        return plan.texts_of(0), plan.texts_of(1)

    with _file_job("filter", src, tgt, output, cfg, engine, langs=(src_lang, tgt_lang), embs=(src_emb, tgt_emb),
                   work_dir=work_dir, keep_work=keep_work, progress=progress, check_texts=choose_cut,
                   extra_texts=halves) as job:
        scored = job_margins(job, cfg, engine, progress)
        if not measured:  # no encoder to embed the halves: the given embeddings are all there is
            halves(job.src, job.tgt)
        values, live, plan = measured[0]
        threshold, source = chosen[0]
        p_clean = None
        if scorer is not None and scored.why:
            log.warning("the learned scorer measures margins, and these scores are cosines%s: the cosine cut decides "
                        "(%s)", scored.why, source)
        elif scorer is not None and job.extra is not None:
            vecs = plan.assemble(*job.extra) if plan.texts else np.zeros((0, job.x.shape[1]), np.float32)
            half_cos = half_cosines(plan, vecs, job.x, job.y, job.src_u.inverse, job.tgt_u.inverse)
            features = pair_features(job.src.texts, job.tgt.texts, scorer_signals(scored, values), live, plan,
                                     half_cos)
            p_clean = scorer.p_clean(features)
            threshold, source = scorer_cut(scorer, rules), f"p_clean of {scorer.source}"
        elif scorer is not None:
            log.warning("the learned scorer needs the encoder to embed halves of lines; with embeddings given and no "
                        "encoder, the score cut decides (%s)", source)
        decisions = decide(values, scored.score, rules, threshold=threshold, threshold_source=source, p_clean=p_clean)
        with ExitStack() as written:  # the outputs take their places together, once every one is written
            def staged(path: Path) -> Path:
                return path if str(path) == "-" else written.enter_context(atomic_path(path))

            if scores_out is not None:
                write_lines(staged(scores_out), score_rows(job.src.texts, job.tgt.texts, scored.score, scored.cosine,
                                                           values, decisions, first_line=job.src.spec.first_line,
                                                           p_clean=p_clean))
            if histogram is not None:
                save_histogram(staged(histogram), scored.score, decisions)
            write_lines(staged(Path(output)), kept_rows(job.src.texts, job.tgt.texts, decisions))
    return FilterSummary(output, len(decisions.keep), decisions.counts(), decisions.threshold,
                         decisions.threshold_source, values.langs, scored.measure if p_clean is None else "p_clean",
                         scores_out, histogram, time.perf_counter() - job.start)


def scorer_cut(scorer: Scorer, rules: FilterConfig) -> float:
    """The ``p_clean`` a pair needs to be kept: ``rules.min_p_clean``, or the scorer's own cut for ``auto``."""
    return scorer.cut if rules.min_p_clean == "auto" else float(rules.min_p_clean)


def scorer_signals(scored: PairScores, values: PairValues) -> PairSignals:
    """What the scorer's features are made of, from a run's scores and its rule filters' values."""
    rival = scored.rival if scored.rival is not None else np.full(len(scored.score), np.nan)
    return PairSignals(scored.score, scored.cosine, rival, values.src_length, values.tgt_length, values.src_prob,
                       values.tgt_prob, values.similarity, values.langs)


@dataclass(frozen=True)
class MeasuredPairs:
    """Pairs in memory as ``xlsent filter`` sees them: the rule filters' values, the scores, which pairs the rules
    pass (``live``) and the scorer's features of each pair (:data:`xlsent.mining.pair_features.FEATURES`)."""

    values: PairValues
    scored: PairScores
    live: np.ndarray
    features: np.ndarray


def measure_texts(src: list[str], tgt: list[str], langs: tuple[str | None, str | None],
                  embed: Callable[[list[str], str | None], np.ndarray], rules: FilterConfig,
                  search: SearchConfig) -> MeasuredPairs:
    """:class:`MeasuredPairs` of the pairs (``src[i]``, ``tgt[i]``) in memory, ``embed(texts, lang)`` giving unit
    vectors: what :func:`filter_files` measures of the same lines (the dev-set evaluation and the scorer's training
    use it)."""
    x, y = embed(src, langs[0]), embed(tgt, langs[1])
    scored = score_texts(src, tgt, x, y, search)
    values = pair_values(src, tgt, langs, rules)
    live = rules_pass(values, rules)
    plan = half_plan(src, tgt, relative_lengths(values.src_length, values.tgt_length), live)
    side_vecs = [embed(texts, lang) if texts else np.zeros((0, x.shape[1]), np.float32)
                 for texts, lang in ((plan.texts_of(0), langs[0]), (plan.texts_of(1), langs[1]))]
    vecs = plan.assemble(*side_vecs) if plan.texts else np.zeros((0, x.shape[1]), np.float32)
    rows = np.arange(len(src))
    half_cos = half_cosines(plan, vecs, x, y, rows, rows)
    return MeasuredPairs(values, scored, live,
                         pair_features(src, tgt, scorer_signals(scored, values), live, plan, half_cos))


def filter_cut(cut: AutoThreshold | None, margin: str, why: str) -> tuple[float | None, str]:
    """The score cut of ``cut`` for scores of ``margin`` (``why``: why they are cosines, where they are) and how the
    summary names it (:meth:`~xlsent.mining.auto_threshold.AutoThreshold.cut_for`: a cut of another scale is an
    error saying what to do); ``(None, "given")`` without a cut."""
    if cut is None:
        return None, "given"
    fix = ("lower --k for margins, or give a cosine cut with --margin absolute --threshold VALUE, keep the best pairs "
           "with --keep FRACTION, or switch the cut off with --no-score") if why else ""
    if why and cut.flag == "--threshold auto":
        fix += " (or record a cosine cut: xlsent calibrate --for filter)"
    return cut.cut_for(margin, why=why, fix=fix), cut.source(margin)


def check_filter_cut(src: InputSpec, tgt: InputSpec, cfg: SearchConfig, cut: AutoThreshold | None) -> None:
    """Raise ValueError, before anything is loaded, when ``cut`` does not fit the scores that the given pairs of the
    files ``src`` and ``tgt`` will have (:func:`filter_cut`; streams are checked once read)."""
    if cut is not None and not (src.is_stream() or tgt.is_stream()):
        filter_cut(cut, *score_scale((list(iter_rows(src)), list(iter_rows(tgt))), side_names(src, tgt), cfg))


@dataclass(frozen=True)
class PairScores:
    """The margin score (float64) and cosine of each given pair, both NaN where a side is blank (``blank``), and
    what the scores are (``measure``: the margin and k, or cosines where a side is too small for k neighbours;
    ``margin``: the margin the scores are of, ``absolute`` for cosines; ``why``: why they are cosines, or empty);
    ``rival``: the best cosine of either side of the pair with a k-NN neighbour that is not the other side (NaN
    without neighbours)."""

    score: np.ndarray
    cosine: np.ndarray
    blank: np.ndarray
    measure: str
    margin: str = "ratio"
    why: str = ""
    rival: np.ndarray | None = None


def too_small(sides: Sequence[Unified], names: Sequence[str], k: int) -> tuple[str, int]:
    """Why pairs of these sides cannot have margins: each side with fewer than ``k`` distinct non-blank sentences,
    named (``names``) with its count (empty when none), and the least count of a side.

    >>> too_small([unify(["a", "b"], True), unify(["a", "b", "c"], True)], ["de.txt", "en.txt"], 3)
    ('de.txt has 2 distinct sentence(s)', 2)
    """
    counts = [sum(not is_empty(text) for text in u.texts) for u in sides]
    small = [f"{name} has {n} distinct sentence(s)" for name, n in zip(names, counts, strict=True) if n < k]
    return " and ".join(small), min(counts)


def score_scale(texts: tuple[list[str], list[str]], names: tuple[str, str], cfg: SearchConfig) -> tuple[str, str]:
    """The margin the scores of the pairs (``texts[0][i]``, ``texts[1][i]``) are of, as :func:`margins` computes
    them (``absolute``, cosines, where a side has fewer than ``cfg.k`` sentences), and why they are cosines then
    (empty otherwise)."""
    small, _ = too_small([unify(side, cfg.unify) for side in texts], names, cfg.k)
    return (Margin.ABSOLUTE.value, f" ({small}, fewer than k={cfg.k})") if small else (cfg.margin, "")


def margins(texts: tuple[list[str], list[str]], sides: tuple[Unified, Unified], x: np.ndarray, y: np.ndarray,
            cfg: SearchConfig, search: Callable[[np.ndarray, np.ndarray], KnnResult], *,
            names: tuple[str, str] = ("SRC", "TGT"), progress: bool = False) -> PairScores:
    """The scores of the pairs (``texts[0][i]``, ``texts[1][i]``), their sides unified as ``sides`` with vectors
    ``x`` and ``y`` (one row per distinct sentence): the ``cfg.margin`` against the k nearest neighbours, found by
    ``search``, of each side among the distinct non-blank sentences of the other. A side with fewer than ``cfg.k``
    such sentences has no k neighbours: the scores are then cosines, with a warning naming it (``names``)."""
    src_u, tgt_u = sides
    live = [np.flatnonzero([not is_empty(text) for text in u.texts]) for u in sides]
    small, _ = too_small(sides, names, cfg.k)
    measure, why = f"{cfg.margin} margin (k={cfg.k})", ""
    if small:
        log.warning("%s, fewer than k=%d: the scores are cosines, not margins (lower --k for margins)", small, cfg.k)
        measure, why = "cosine: a side has fewer than k sentences", f" ({small}, fewer than k={cfg.k})"
        means = (np.ones(len(src_u.texts)), np.ones(len(tgt_u.texts)))
        margin = Margin.ABSOLUTE
    else:
        say(progress, f"[2/2] k-NN search ({len(live[0])} x {len(live[1])} distinct sentences, k={cfg.k})")
        knn = search(take_rows(x, live[0]), take_rows(y, live[1]))
        means = (_scatter(knn.fwd_sim.mean(axis=1, dtype=np.float64), live[0], len(src_u.texts)),
                 _scatter(knn.bwd_sim.mean(axis=1, dtype=np.float64), live[1], len(tgt_u.texts)))
        margin = Margin(cfg.margin)
    cosine = pair_cosines(x, y, src_u.inverse, tgt_u.inverse)
    score = margin_scores(cosine, means[0][src_u.inverse], means[1][tgt_u.inverse], margin)
    blank = np.array([is_empty(s) or is_empty(t) for s, t in zip(*texts, strict=True)], dtype=bool)
    cosine = cosine.astype(np.float64)
    rival = np.full(len(blank), np.nan) if small else best_rivals(knn, live, (src_u.inverse, tgt_u.inverse),
                                                                   (len(src_u.texts), len(tgt_u.texts)))
    score[blank] = cosine[blank] = rival[blank] = np.nan
    return PairScores(score, cosine, blank, measure, margin.value, why, rival)


def best_rivals(knn: KnnResult, live: Sequence[np.ndarray], pairs: tuple[np.ndarray, np.ndarray],
                sizes: tuple[int, int]) -> np.ndarray:
    """For each pair (source row ``pairs[0][i]``, target row ``pairs[1][i]`` of the distinct sentences), the best
    cosine of either side with one of its k-NN neighbours other than the pair's other side (``knn`` over the
    ``live`` rows of each side; NaN where every neighbour is the other side).

    >>> knn = KnnResult(np.array([[0, 1], [1, 0]]), np.array([[0.9, 0.5], [0.8, 0.4]], np.float32),
    ...                 np.array([[0, 1], [1, 0]]), np.array([[0.9, 0.3], [0.8, 0.5]], np.float32))
    >>> rows = np.arange(2)
    >>> best_rivals(knn, [rows, rows], (rows, rows), (2, 2)).round(2).tolist()
    [0.5, 0.5]
    """
    best = np.full(len(pairs[0]), -np.inf)
    for side, (idx, sim) in enumerate(((knn.fwd_idx, knn.fwd_sim), (knn.bwd_idx, knn.bwd_sim))):
        ids, sims = np.full((sizes[side], idx.shape[1]), -1, np.int64), np.full((sizes[side], idx.shape[1]), -np.inf)
        ids[live[side]] = live[1 - side][idx]
        sims[live[side]] = sim
        own, other = pairs[side], pairs[1 - side]
        best = np.maximum(best, np.where(ids[own] == other[:, None], -np.inf, sims[own]).max(axis=1))
    best[~np.isfinite(best)] = np.nan
    return best


def side_names(src: InputSpec, tgt: InputSpec) -> tuple[str, str]:
    """How messages name the two sides: their inputs, with the column where both are one file (``--tsv``), or the
    side where one file is both."""
    if src.name != tgt.name:
        return src.name, tgt.name
    if src.column is None or src.column == tgt.column:
        return f"{src.name} (source side)", f"{tgt.name} (target side)"
    return _with_column(src), _with_column(tgt)


def job_margins(job: _Job, cfg: SearchConfig, engine: Engine, progress: bool) -> PairScores:
    """:func:`margins` of the pairs of a file job, its k-NN stage resumable in the job's work folder and run where
    ``engine`` runs it."""
    return margins((job.src.texts, job.tgt.texts), (job.src_u, job.tgt_u), job.x, job.y, cfg,
                   lambda xs, ys: _neighbourhoods(xs, ys, cfg, job.work, engine, progress),
                   names=side_names(job.src.spec, job.tgt.spec), progress=progress)


def score_texts(src: list[str], tgt: list[str], x: np.ndarray, y: np.ndarray, cfg: SearchConfig) -> PairScores:
    """:func:`margins` of the pairs (``src[i]``, ``tgt[i]``) with vectors ``x`` and ``y`` (row i for line i), in
    memory: what ``score_files`` computes for the same lines and vectors.

    >>> v = np.eye(3, dtype=np.float32)
    >>> s = score_texts(["a", "b", "c"], ["A", "B", ""], v, v, SearchConfig(k=1))
    >>> s.score.round(2).tolist()[:2], bool(s.blank[2])
    ([1.0, 1.0], True)
    """
    src_u, tgt_u = unify(src, cfg.unify), unify(tgt, cfg.unify)
    return margins((src, tgt), (src_u, tgt_u), src_u.distinct(x), tgt_u.distinct(y), cfg,
                   lambda xs, ys: neighbourhoods(xs, ys, cfg))


def _neighbourhoods(x: np.ndarray, y: np.ndarray, cfg: SearchConfig, work: Path, engine: Engine, progress: bool
                    ) -> KnnResult:
    """The k-NN stage of a file job, its shards where ``engine`` runs them."""
    hooks = engine.hooks(x, y, cfg, progress)
    return neighbourhoods(x, y, cfg, work, exact=hooks.exact, fill=hooks.fill, search=hooks.search, progress=progress)


def _scatter(values: np.ndarray, rows: np.ndarray, size: int) -> np.ndarray:
    """``values`` placed at ``rows`` of an array of ``size`` (NaN elsewhere)."""
    out = np.full(size, np.nan)
    out[rows] = values
    return out


def pair_cosines(x: np.ndarray, y: np.ndarray, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    """The cosine (fp32) of each pair ``(x[src[i]], y[tgt[i]])`` of unit rows, in blocks.

    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> pair_cosines(x, x, np.array([0, 1]), np.array([0, 0])).tolist()
    [1.0, 0.0]
    """
    cos = np.empty(len(src), np.float32)
    for lo in range(0, len(src), 1 << 16):
        hi = min(len(src), lo + (1 << 16))
        cos[lo:hi] = np.einsum("ij,ij->i", take_rows(x, src[lo:hi]), take_rows(y, tgt[lo:hi]))
    return cos


def pair_scores(x: np.ndarray, y: np.ndarray, src: np.ndarray, tgt: np.ndarray,
                means: tuple[np.ndarray, np.ndarray], margin: Margin | str) -> np.ndarray:
    """The ``margin`` score (float64) of each pair ``(x[src[i]], y[tgt[i]])``, ``means`` being the neighbourhood
    means of the rows of ``x`` and of ``y``; cosines in fp32 from the vectors, in blocks.

    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> pair_scores(x, x, np.array([0, 1]), np.array([0, 0]), (np.full(2, 0.5), np.full(2, 0.5)), "ratio").tolist()
    [2.0, 0.0]
    """
    return margin_scores(pair_cosines(x, y, src, tgt), means[0][src], means[1][tgt], margin)


@dataclass(frozen=True)
class MinedPair:
    """A pair mined in memory: the rows of its source and target sentence (their first rows, when a sentence
    repeats), its margin score and cosine."""

    src: int
    tgt: int
    score: float
    cosine: float


def mine_texts(src: list[str], tgt: list[str], x: np.ndarray, y: np.ndarray, cfg: MineConfig) -> list[MinedPair]:
    """The pairs a file job writes for the lines ``src`` and ``tgt`` with vectors ``x`` and ``y``, best first, in
    memory (the service's ``/v1/align``). A side of fewer than ``cfg.k`` sentences clips ``k`` to its size, as a
    file job does, without its warning: a service's log would hold one for every short request."""
    src_u, tgt_u = unify(src, cfg.unify), unify(tgt, cfg.unify)
    xs, ys = src_u.distinct(x), tgt_u.distinct(y)
    chosen = select_pairs(mine_arrays(xs, ys, cfg, warn_k=False), src_u.texts, tgt_u.texts, cfg).pairs
    return [MinedPair(int(src_u.first[s]), int(tgt_u.first[t]), float(score), float(xs[s] @ ys[t]))
            for s, t, score in zip(chosen.src, chosen.tgt, chosen.score, strict=True)]


def _sizes(src: Unified, tgt: Unified) -> str:
    """``lines x lines``, and the distinct sentences where a side repeats some."""
    lines = f"{len(src.inverse)} x {len(tgt.inverse)} lines"
    return lines if not (src.repeated or tgt.repeated) else f"{lines}, {len(src.texts)} x {len(tgt.texts)} distinct"
