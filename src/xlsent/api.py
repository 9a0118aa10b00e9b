"""The public surface: ``load``, ``encode``, ``embed``, ``embed_file``, ``index``, ``mine``, ``score``, ``filter``,
``calibrate``, ``calibrate_filter``, ``export``, ``train``, ``align``, ``split``.

>>> import xlsent
>>> enc = xlsent.load()                                   # doctest: +SKIP
>>> xlsent.encode(["Guten Morgen", "Good morning"]).shape  # doctest: +SKIP
(2, 384)
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from xlsent.align.config import AlignConfig
from xlsent.atomic import check_folder_output
from xlsent.cluster import check_engine
from xlsent.data.text_input import InputSpec
from xlsent.embed_job import EmbedOptions, EmbedSummary, embed_file
from xlsent.encoders.base import Encoder, sentence_list
from xlsent.encoders.registry import DEFAULT_MODEL, load_encoder
from xlsent.mining.config import MineConfig, MineSummary, ScoreSummary, SearchConfig

log = logging.getLogger(__name__)

__all__ = ["load", "encode", "embed", "embed_file", "index", "EmbedOptions", "EmbedSummary", "mine", "score", "filter",
           "calibrate", "calibrate_filter", "MineConfig", "SearchConfig", "MineSummary", "ScoreSummary",
           "export_sentence_transformers", "train", "align", "split"]


@lru_cache(maxsize=4)
def load(name_or_path: str | Path = DEFAULT_MODEL, backend: str = "auto") -> Encoder:
    """An encoder from a registered name (``me5-small``, ``muse``), a model directory, a sentence-transformers folder
    or Hugging Face model folder on disk (never downloaded; see ``xlsent.encoders.foreign``) or ``module:function``.

    ``backend`` runs transformer models on ``torch``, ``torch-bf16``, ``onnx``, ``onnx-int8``, ``openvino``,
    ``openvino-bf16``, ``openvino-int8`` or ``auto`` (the fastest that holds the accuracy guard on this CPU; see
    ``xlsent.encoders.backends``).
    """
    return load_encoder(name_or_path, backend)


def encode(sentences: Sequence[str], model: str | Path = DEFAULT_MODEL, lang: str | None = None,
           *, progress: bool = False) -> np.ndarray:
    """Embed ``sentences`` with ``model``: ``(n, dim)`` float32 unit rows, row i for sentence i (in iteration order:
    a pandas Series by position, not by its index). ``lang`` is a language code (``check_lang``).

    >>> encode("one sentence")
    Traceback (most recent call last):
    ...
    TypeError: encode takes a list of sentences, not one str (it would embed each character): give [text]
    """
    from xlsent.languages import check_lang

    texts, code = sentence_list(sentences), check_lang(lang)  # before the model loads
    return load(model).encode(texts, code, progress=progress)


if TYPE_CHECKING:
    from xlsent.align.job import AlignSummary
    from xlsent.cluster import RayConfig
    from xlsent.embed_job import ChunkEncoder
    from xlsent.mining.auto_threshold import AutoThreshold
    from xlsent.mining.engine import Engine
    from xlsent.mining.filter_config import FilterConfig
    from xlsent.mining.filter_scorer import Scorer
    from xlsent.mining.filtering import FilterSummary
    from xlsent.split_job import SplitSummary

Input = str | Path | InputSpec


Settings = TypeVar("Settings")


def _given(value: Settings | None, kind: type[Settings], name: str) -> Settings:
    """``value``, or ``kind()`` where it is None; a TypeError naming the argument ``name`` where it is another type,
    before any work (a wrong settings object would otherwise fail deep inside the run, or be read as the right one).

    >>> _given(None, EmbedOptions, "options") == EmbedOptions()
    True
    >>> _given(AlignConfig(), EmbedOptions, "options")
    Traceback (most recent call last):
    ...
    TypeError: options= takes an EmbedOptions, not an AlignConfig
    """
    if value is None:
        return kind()
    if not isinstance(value, kind):
        def article(name: str) -> str:
            return f"{'an' if name[0] in 'AEIOU' else 'a'} {name}"
        raise TypeError(f"{name}= takes {article(kind.__name__)}, not {article(type(value).__name__)}")
    return value


def _threshold(given: float | str | None) -> float | str | None:
    """A mining threshold as given: None, ``auto``, or a finite number (a number's string too); a ValueError naming
    the argument otherwise.

    >>> _threshold("1.05"), _threshold("auto"), _threshold(None)
    (1.05, 'auto', None)
    >>> _threshold("high")
    Traceback (most recent call last):
    ...
    ValueError: threshold='high': give a finite number or 'auto'
    """
    if given is None or given == "auto":
        return given
    try:
        value = float(given)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise ValueError(f"threshold={given!r}: give a finite number or 'auto'")
    return value


def _spec(given: Input) -> InputSpec:
    """``given`` as an :class:`~xlsent.data.text_input.InputSpec` (a path: read as its extension says)."""
    return given if isinstance(given, InputSpec) else InputSpec(Path(given))


@contextmanager
def _chunk_encoder(model: str | Path, backend: str, engine: str, ray: RayConfig | None, opts: EmbedOptions
                   ) -> Iterator[ChunkEncoder]:
    """What embeds the chunks of an ``embed`` or ``index`` job: the encoder in this process, or encoder actors on
    Ray (``ray``: its settings; the model loaded once per actor on ``backend``, batches of ``opts.batch_tokens``)."""
    from xlsent.embed_job import ChunkEncoder

    check_engine(engine)
    if engine == "local":
        yield ChunkEncoder.local(load(model, backend))
        return
    import ray as ray_module

    from xlsent.cluster import RayConfig, encoder_actors, ray_chunk_vectors, ray_session

    cfg = replace(_given(ray, RayConfig, "ray"), backend=backend, batch_tokens=opts.batch_tokens)
    with ray_session(cfg) as cpus:
        actors = encoder_actors(str(model), cfg, max(1, cpus // cfg.cpus_per_task))
        try:
            first = actors[0]
            name, dim = ray_module.get([first.encoder_id.remote(), first.dim.remote()])
            log.info("embedding on Ray: %d encoder actor(s), %d CPUs", len(actors), cpus)
            yield ChunkEncoder(name, dim, lambda chunks, o: ray_chunk_vectors(actors, chunks, o.lang))
        finally:
            for handle in actors:
                ray_module.kill(handle)


def embed(source: Input, output: str | Path, *, model: str | Path = DEFAULT_MODEL, backend: str = "auto",
          options: EmbedOptions | None = None, engine: str = "local", ray: RayConfig | None = None
          ) -> EmbedSummary:
    """Embed every row of ``source`` into ``output`` (``.npy`` + sidecar, or ``.parquet``), resumably, in this
    process or on Ray (``engine="ray"``: the same chunks embedded by encoder actors, so the same file); what
    ``xlsent embed`` runs. See :mod:`xlsent.embed_job`.

    >>> xlsent.embed("sentences.txt", "vecs.npy", engine="ray")  # doctest: +SKIP
    """
    from xlsent.data.text_input import check_options_apply
    from xlsent.embed_job import check_job

    spec, opts = _spec(source), _given(options, EmbedOptions, "options")
    check_options_apply([spec])
    check_job(spec, output)
    with _chunk_encoder(model, backend, engine, ray, opts) as chunks:
        return embed_file(spec, output, chunks, opts)


def index(source: Input, output: str | Path, *, model: str | Path = DEFAULT_MODEL, backend: str = "auto",
          kind: str = "auto", overwrite: bool = False, engine: str = "local", ray: RayConfig | None = None,
          progress: bool = True) -> Path:
    """Embed every row of ``source`` (resumably, in this process or on Ray, as :func:`embed`) and save a searchable
    index folder at ``output`` for ``xlsent search``; what ``xlsent index`` runs. See
    :mod:`xlsent.mining.search_index`."""
    from xlsent.data.text_input import check_options_apply, check_work_folder, iter_rows, readable
    from xlsent.mining.faiss_index import INDEX_KINDS, check_index_rows
    from xlsent.mining.job import prepare_work, work_path
    from xlsent.mining.search_index import build_sentence_index, check_index_output, check_indexable

    spec = _spec(source)
    spec.check()
    check_options_apply([spec])
    if kind not in INDEX_KINDS:
        raise ValueError(f"unknown index kind {kind!r}; expected one of {', '.join(INDEX_KINDS)}")
    if str(output) == "-":
        raise ValueError(f"-o {output}: an index is a folder; name a new or existing folder")
    out = Path(os.path.realpath(output))  # new/../idx is idx: writing it makes new/, then lands there
    if out.exists() and not out.is_dir():
        raise ValueError(f"-o {output}: an index is a folder; name a new or existing folder")
    check_index_output(out, overwrite=overwrite)
    opts = EmbedOptions(resume=True, progress=progress)
    work = work_path(out)  # the embedding, resumable: a killed run continues from its chunks
    check_work_folder(work, [spec.path])
    with readable(spec) as spec:
        check_indexable(spec)
        if kind != "auto":
            check_index_rows(kind, sum(1 for _ in iter_rows(spec)))
        prepare_work(work, {"job": "index"})
        with _chunk_encoder(model, backend, engine, ray, opts) as chunks:
            embed_file(spec, work / "vectors.npy", chunks, opts)
        built = build_sentence_index(spec, out, work / "vectors.npy", str(model), kind=kind)
    shutil.rmtree(work)
    return built


@contextmanager
def _engine(model: str | Path, backend: str, engine: str, ray: RayConfig | None, needs_encoder: bool
            ) -> Iterator[Engine]:
    """The engine a mining or scoring job runs on: this process (with the encoder loaded only where it embeds) or
    Ray (``ray``: its settings; the encoder is loaded on the workers)."""
    if engine == "ray":
        from xlsent.mining.distributed import RayConfig, RayEngine

        with RayEngine(str(model), replace(_given(ray, RayConfig, "ray"), backend=backend)) as ray_engine:
            yield ray_engine
        return
    check_engine(engine)
    from xlsent.mining.engine import LocalEngine

    yield LocalEngine(load(model, backend) if needs_encoder else None)


def _check_engine(engine: str, output: str | Path, embs: tuple[Path | None, Path | None]) -> None:
    """Refuse what the Ray engine cannot do, naming the option."""
    if engine == "ray" and str(output) == "-":
        raise ValueError("-o - (output to standard output) needs --engine local")
    if engine == "ray" and any(embs):
        raise ValueError("--src-emb/--tgt-emb need --engine local")


def _calibrated(model: str | Path, backend: str, cfg: SearchConfig, progress: bool) -> AutoThreshold:
    """The calibrated mining threshold of ``model`` for the margin and k of ``cfg`` (``--threshold auto``), said on
    standard error with ``progress``."""
    from xlsent.mining.auto_threshold import auto_threshold

    calibrated = auto_threshold(load(model, backend), margin=cfg.margin, k=cfg.k)
    log.info("%s", calibrated.describe())
    if progress:
        print(calibrated.describe(), file=sys.stderr)
    return calibrated


def _job_model(model: str | Path | None, embs: tuple[Path | None, Path | None], uses_model: bool) -> str | Path:
    """The model a mining job loads: ``model``, by default :data:`~xlsent.encoders.registry.DEFAULT_MODEL`. With the
    embeddings of both sides given, the files name their encoder and no model embeds: ``model`` is then an error
    (never silently ignored) unless ``uses_model`` (``--threshold auto`` takes its threshold), and then the files
    must have been made by it (the job checks their encoder id against it)."""
    if None not in embs and model is not None and not uses_model:
        raise ValueError(f"--model {model} with --src-emb and --tgt-emb: the vectors of both sides are given, so no "
                         "model is used (the files name the encoder that made them); leave out --model")
    return model if model is not None else DEFAULT_MODEL


def _paths(*given: str | Path | None) -> tuple[Path | None, Path | None]:
    """The embedding files of the two sides as paths (None: not given)."""
    src, tgt = (Path(p) if p else None for p in given)
    return src, tgt


def mine(src: Input, tgt: Input, output: str | Path, *, model: str | Path | None = None, backend: str = "auto",
         config: MineConfig | None = None, threshold: float | str | None = None, src_lang: str | None = None,
         tgt_lang: str | None = None, src_emb: str | Path | None = None, tgt_emb: str | Path | None = None,
         engine: str = "local", ray: RayConfig | None = None, progress: bool = True) -> MineSummary:
    """Mine translation pairs out of ``src`` x ``tgt`` into the TSV ``output`` (``score TAB src TAB tgt``, best
    first; ``-``: standard output), resumable: see :mod:`xlsent.mining.job`.

    ``config`` says how (default :class:`~xlsent.mining.config.MineConfig`: ratio margin, k=4, max retrieval);
    ``threshold`` overrides its threshold: a number, or ``auto`` for the encoder's calibrated one (see
    ``xlsent calibrate``). ``model`` defaults to me5-small. ``src_emb``/``tgt_emb`` are embeddings of the same files
    from ``xlsent embed``: with both, no model is loaded, and ``model`` is an error, but for ``threshold="auto"``
    (the files must then have been made by ``model``). Language codes and every input are checked before a model
    loads. ``engine`` is ``local`` or ``ray`` (``ray``: its settings).

    >>> xlsent.mine("de.txt", "en.txt", "pairs.tsv", threshold="auto")  # doctest: +SKIP
    """
    from xlsent.languages import check_lang
    from xlsent.mining.job import check_job, mine_files

    cfg = _given(config, MineConfig, "config")
    threshold = _threshold(threshold)
    src_lang, tgt_lang = check_lang(src_lang), check_lang(tgt_lang)
    embs = _paths(src_emb, tgt_emb)
    model = _job_model(model, embs, uses_model=threshold == "auto")
    _check_engine(engine, output, embs)
    check_job(_spec(src), _spec(tgt), output, embs, langs=(src_lang, tgt_lang))
    if isinstance(threshold, float):
        cfg = replace(cfg, threshold=threshold)
    if threshold == "auto":
        cfg = replace(cfg, threshold=_calibrated(model, backend, cfg, progress).threshold)
    with _engine(model, backend, engine, ray, needs_encoder=None in embs or threshold == "auto") as runner:
        return mine_files(_spec(src), _spec(tgt), output, runner, cfg, src_lang=src_lang, tgt_lang=tgt_lang,
                          src_emb=embs[0], tgt_emb=embs[1], progress=progress)


def score(src: Input, tgt: Input, output: str | Path, *, model: str | Path | None = None, backend: str = "auto",
          config: SearchConfig | None = None, src_lang: str | None = None, tgt_lang: str | None = None,
          src_emb: str | Path | None = None, tgt_emb: str | Path | None = None, engine: str = "local",
          ray: RayConfig | None = None, progress: bool = True) -> ScoreSummary:
    """Score given pairs, row i of ``src`` with row i of ``tgt``, into the TSV ``output`` (``score TAB src TAB
    tgt``, input order): the margin of each pair against the k nearest neighbours of each side in the other whole
    side, as LASER's ``mine_bitexts.py --mode score`` (see :func:`xlsent.mining.job.score_files`). For a TSV of
    pairs, give the same file as two :class:`~xlsent.data.text_input.InputSpec` of columns 0 and 1. ``model``
    (default me5-small) is an error with both ``src_emb`` and ``tgt_emb``, which name their encoder.

    >>> xlsent.score("de.txt", "en.txt", "scored.tsv").scored  # doctest: +SKIP
    """
    from xlsent.languages import check_lang
    from xlsent.mining.job import check_job, check_same_rows, score_files

    cfg = _given(config, SearchConfig, "config")
    src_lang, tgt_lang = check_lang(src_lang), check_lang(tgt_lang)
    embs = _paths(src_emb, tgt_emb)
    model = _job_model(model, embs, uses_model=False)
    _check_engine(engine, output, embs)
    check_job(_spec(src), _spec(tgt), output, embs, task="score", langs=(src_lang, tgt_lang))
    check_same_rows(_spec(src), _spec(tgt))

    with _engine(model, backend, engine, ray, needs_encoder=None in embs) as runner:
        return score_files(_spec(src), _spec(tgt), output, runner, cfg, src_lang=src_lang,
                           tgt_lang=tgt_lang, src_emb=embs[0], tgt_emb=embs[1], progress=progress)


def filter(src: Input, tgt: Input, output: str | Path, *, scores: str | Path | None = None,
           histogram: str | Path | None = None, model: str | Path | None = None, backend: str = "auto",
           config: FilterConfig | None = None, search: SearchConfig | None = None, src_lang: str | None = None,
           tgt_lang: str | None = None, src_emb: str | Path | None = None, tgt_emb: str | Path | None = None,
           engine: str = "local", ray: RayConfig | None = None, progress: bool = True) -> FilterSummary:
    """Clean a bitext: score the pairs (row i of ``src``, row i of ``tgt``) as :func:`score` does, run the filters
    of ``config`` (default :class:`~xlsent.mining.filter_config.FilterConfig`: language ID, length, copies, non-text
    lines, duplicates, the margin cut at the encoder's calibrated threshold) and write the kept pairs into the TSV
    ``output`` (``src TAB tgt``, input order); ``scores``: every pair with ``keep``, ``score``, ``reason`` and the
    per-filter values; ``histogram``: a PNG of the scores. The cut is one for the scores the run computes (a cosine
    cut where they are cosines; :meth:`~xlsent.mining.auto_threshold.AutoThreshold.cut_for`). ``model`` as in
    :func:`mine`. Resumable; see :func:`xlsent.mining.job.filter_files`.

    >>> xlsent.filter("pairs.tsv", "pairs.tsv", "kept.tsv", src_lang="de", tgt_lang="en")  # doctest: +SKIP
    """
    from xlsent.languages import check_lang
    from xlsent.mining.auto_threshold import given_cut
    from xlsent.mining.filter_config import FilterConfig
    from xlsent.mining.job import check_filter_cut, check_filter_outputs, check_job, check_same_rows, filter_files

    rules, cfg = _given(config, FilterConfig, "config"), _given(search, SearchConfig, "search")
    src_lang, tgt_lang = check_lang(src_lang), check_lang(tgt_lang)
    embs = _paths(src_emb, tgt_emb)
    auto = rules.score and rules.keep is None and rules.threshold == "auto"
    model = _job_model(model, embs, uses_model=auto)
    _check_engine(engine, output, embs)
    check_job(_spec(src), _spec(tgt), output, embs, task="filter", langs=(src_lang, tgt_lang))
    check_same_rows(_spec(src), _spec(tgt))
    check_filter_outputs(output, Path(scores) if scores else None, Path(histogram) if histogram else None,
                         [_spec(src).path, _spec(tgt).path, *embs])
    cut: AutoThreshold | None = None
    if rules.score and rules.keep is None and rules.threshold != "auto":
        cut = given_cut(float(rules.threshold), cfg.margin)
    check_filter_cut(_spec(src), _spec(tgt), cfg, cut)  # a given cut before any model loads
    scorer = _filter_scorer(rules, model, backend, cfg)
    if auto:
        from xlsent.mining.filter_calibration import auto_filter_threshold, filter_threshold

        found = filter_threshold(load(model, backend)) if scorer is not None else None
        if scorer is None or found is not None:  # with a scorer, the margin cut only serves files without margins
            cut = auto_filter_threshold(load(model, backend), margin=cfg.margin, k=cfg.k)
            check_filter_cut(_spec(src), _spec(tgt), cfg, cut)
    if progress:
        print(scorer.describe() if scorer is not None else cut.describe() if cut is not None else "no score cut",
              file=sys.stderr)
    with _engine(model, backend, engine, ray, needs_encoder=None in embs or auto) as runner:
        return filter_files(_spec(src), _spec(tgt), output, runner, cfg, rules, cut=cut, scorer=scorer,
                            scores_out=Path(scores) if scores else None,
                            histogram=Path(histogram) if histogram else None, src_lang=src_lang, tgt_lang=tgt_lang,
                            src_emb=embs[0], tgt_emb=embs[1], progress=progress)


def _filter_scorer(rules: FilterConfig, model: str | Path, backend: str, search: SearchConfig) -> Scorer | None:
    """The learned scorer ``xlsent filter`` runs with (:attr:`FilterConfig.scorer`): none unless the config wants
    one; ``auto``: the one shipped for the model's weights, if any (else the margin cut decides, logged); a path:
    that scorer, which must have been trained with the model. Either must have learned margins measured as
    ``search`` measures them (:func:`~xlsent.mining.filter_scorer.check_search`)."""
    from xlsent.encoders.cache import encoder_id
    from xlsent.mining.filter_scorer import check_encoder, check_search, load_scorer, shipped_scorer

    if not rules.wants_scorer():
        return None
    given = load_scorer(rules.scorer) if rules.scorer != "auto" else None  # checked before the model loads
    if given is not None:
        check_search(given, search)
    key = encoder_id(load(model, backend))
    if given is not None:
        check_encoder(given, key)
        return given
    scorer = shipped_scorer(key)
    if scorer is None:
        log.info("no learned filter scorer ships for %s: the margin cut decides", key)
    else:
        check_search(scorer, search)
    return scorer


def split(source: Input, output: str | Path, *, lang: str) -> SplitSummary:
    """Split a file of paragraphs (one a row) into sentences of ``lang`` (:mod:`xlsent.data.sentence_split`): a
    sentence a line into ``output`` (``.txt`` or ``-``), or with ``.tsv`` each sentence's input line and character
    span (:mod:`xlsent.split_job`).

    >>> from xlsent.api import split
    >>> split("article.de.txt", "sentences.de.tsv", lang="de")  # doctest: +SKIP
    """
    from xlsent.data.text_input import check_options_apply
    from xlsent.languages import check_lang
    from xlsent.split_job import split_file

    check_options_apply([_spec(source)])
    code = check_lang(lang)
    if code is None:
        raise ValueError("--lang is required: sentence ends depend on the language")
    return split_file(_spec(source), output, code)


def align(src: str | Path | None = None, tgt: str | Path | None = None, output: str | None = None, *,
          pairs: str | Path | None = None, model: str | Path = DEFAULT_MODEL, backend: str = "auto",
          config: AlignConfig | None = None, fmt: str = "beads", src_lang: str | None = None,
          tgt_lang: str | None = None, resume: bool = False, split: bool = False, engine: str = "local",
          ray: RayConfig | None = None, progress: bool = True, gold: str | Path | None = None) -> AlignSummary:
    """Sentence-align the document ``src`` with its translation ``tgt`` (``-``: standard input; a pipe too) into
    ``output`` (``-``: standard output), or every ``src TAB tgt TAB out`` row of the list ``pairs`` with one model:
    one bead a line, ``[i, j]:[k]:cost`` (``fmt="tsv"``: ``cost TAB source text TAB target text``), every line of
    both documents in exactly one bead; each pair's output is written as soon as its beads are found.
    See :mod:`xlsent.align`; every input and output is checked before the model is loaded. With
    ``resume``, pairs whose output exists (a killed run's finished pairs: outputs are written whole) are skipped,
    unchecked, and no model is loaded when none is left. With ``split``, the documents are paragraphs (one a line),
    aligned sentence by sentence: see :func:`xlsent.align.job.align_files`. With ``engine="ray"``, the pairs are
    aligned on Ray (``ray``: its settings), the model loaded once per worker, each output the same bytes as the local
    engine writes: see :mod:`xlsent.align.distributed`. With ``gold`` (a gold alignment of ``src`` and ``tgt``; with
    ``pairs``, a fourth column of the list), the beads written are scored against it (Bleualign's strict and lax
    precision, recall and F1, counts summed over the pairs, a resumed run's skipped pairs included): the summary's
    ``scores``, see :mod:`xlsent.evaluation.align_gold`.

    >>> xlsent.api.align("de.txt", "fr.txt", "de-fr.beads")  # doctest: +SKIP
    """
    from xlsent.align.job import (
        AlignSummary,
        DocPair,
        PairRoute,
        align_files,
        check_pairs,
        check_paths,
        check_split,
        local_outputs,
        read_pairs_list,
        readable_pairs,
        unwritten,
    )
    from xlsent.evaluation.align_gold import check_gold_route, check_golds, gold_scores
    from xlsent.languages import check_lang
    from xlsent.output_lock import exclusive_outputs

    one = src is not None and tgt is not None and output is not None
    if (pairs is not None) == one:
        raise ValueError("give SRC TGT -o OUTPUT, or --pairs LIST.tsv, not both" if one else
                         "give SRC TGT -o OUTPUT (all three), or --pairs LIST.tsv")
    if pairs is not None and gold is not None:
        raise ValueError("--gold goes with SRC TGT -o OUTPUT; a --pairs list names each pair's gold in a fourth column")
    check_engine(engine)
    if engine == "ray" and pairs is None:
        raise ValueError("--engine ray aligns the document pairs of --pairs LIST.tsv as tasks; one pair runs local")
    src_lang, tgt_lang = check_lang(src_lang), check_lang(tgt_lang)
    route = PairRoute(_given(config, AlignConfig, "config"), fmt, src_lang, tgt_lang, split)
    listed = (read_pairs_list(pairs) if pairs is not None
              else [DocPair.of(str(src), str(tgt), str(output), gold=gold)])
    check_paths(listed, pairs)
    check_gold_route(listed, fmt, split)
    if split:
        check_split(listed, src_lang, tgt_lang, pairs)
    todo = unwritten(listed) if resume else listed
    skipped = len(listed) - len(todo)
    check_golds(listed, written=[p for p in listed if p not in todo])  # skipped outputs are scored with the run's
    if skipped:
        log.info("--resume: %d of %d pair(s) already written, skipped", skipped, len(listed))
    scored = any(p.gold for p in listed)
    if not todo:
        return AlignSummary(0, 0, 0, 0.0, skipped, scores=gold_scores(listed) if scored else None)
    with readable_pairs(todo) as todo:
        check_pairs(todo)
        with exclusive_outputs(pair.out for pair in todo):  # one run per output at a time
            if engine == "ray":
                from xlsent.align.distributed import ray_outputs
                from xlsent.cluster import RayConfig

                outputs = ray_outputs(str(model), route, replace(_given(ray, RayConfig, "ray"), backend=backend))
            else:
                encoder = load(model, backend)
                bars = progress and len(todo) == 1  # a run of many pairs shows one bar, of the pairs
                outputs = local_outputs(lambda texts, lang: encoder.encode(texts, lang, progress=bars), route)
            done = align_files(todo, outputs, progress=progress)
    return replace(done, skipped=skipped, scores=gold_scores(listed) if scored else None)


def calibrate(model: str | Path = DEFAULT_MODEL, *, backend: str = "auto", langs: Sequence[str] | None = None,
              data: str | Path | None = None, ship: bool = False, progress: bool = True) -> dict[str, Any]:
    """Calibrate the mining threshold of ``model`` on the BUCC-style *dev* sets of ``langs`` and save it where
    ``mine(..., threshold="auto")`` finds it (the model directory's ``xlsent.json`` and ``$XLSENT_HOME``; with
    ``ship``, the thresholds shipped with xlsent): the record, with where it was saved under ``saved``."""
    from xlsent.mining.calibration import CALIBRATION_SETS, calibration_path, dev_sets, save_threshold, ship_threshold
    from xlsent.mining.calibration import calibrate as _calibrate
    from xlsent.output_lock import exclusive_outputs

    with exclusive_outputs([model] if Path(model).is_dir() else []):  # a busy model directory, named first
        sets = dev_sets(langs or CALIBRATION_SETS, data)  # the data checked before the model loads
        encoder = load(model, backend)
        with exclusive_outputs([calibration_path(encoder)]):
            record = _calibrate(encoder, sets=sets, progress=progress)
            saved = [str(save_threshold(encoder, record)),
                     *([str(Path(model) / "xlsent.json")] if Path(model).is_dir() else [])]
            if ship:
                saved.append(str(ship_threshold(encoder, record)))
    return {**record, "saved": saved}


def calibrate_filter(model: str | Path = DEFAULT_MODEL, *, backend: str = "auto", data: str | Path | None = None,
                     ship: bool = False, progress: bool = True) -> dict[str, Any]:
    """Calibrate the score cut of ``filter(..., threshold="auto")`` for ``model`` on the tune split of the noisy dev
    bitexts and save it in ``$XLSENT_HOME`` (with ``ship``, also in the cuts shipped with xlsent): the record, with
    where it was saved under ``saved`` (see :mod:`xlsent.mining.filter_calibration`)."""
    from xlsent.mining.filter_calibration import calibrate_filter as _calibrate_filter
    from xlsent.mining.filter_calibration import save_filter_threshold
    from xlsent.paths import data_root

    data_root(data)  # a data folder that is not there, named before the model loads
    record = _calibrate_filter(load(model, backend), root=data, progress=progress)
    saved = [save_filter_threshold(record), *([save_filter_threshold(record, ship=True)] if ship else [])]
    return {**record, "saved": [str(path) for path in saved]}


def export_sentence_transformers(model: str | Path, out: str | Path) -> Path:
    """Export a transformer-type model (LoRA adapters merged) as a sentence-transformers folder; the model is loaded
    on PyTorch, since the export copies weights, not a backend's graph."""
    from xlsent.encoders.export import export_sentence_transformers as _export
    from xlsent.encoders.transformer import TransformerEncoder

    check_folder_output(out, "--sentence-transformers")
    encoder = load(model, "torch")
    if not isinstance(encoder, TransformerEncoder):
        raise ValueError(f"{model}: only transformer models can be exported to sentence-transformers")
    return _export(encoder, out)


def train_filter(out: str | Path, *, model: str | Path = DEFAULT_MODEL, backend: str = "auto",
                 config_files: Sequence[str | Path] = (), sets: Sequence[str] = (), bitext: Sequence[str] = (),
                 bitext_only: bool = False, data: str | Path | None = None, ship: bool = False,
                 progress: bool = True) -> Path:
    """Train the learned filter scorer of ``model`` (:mod:`xlsent.mining.scorer_training`) into ``out/scorer.json``:
    on noisy bitexts made from the shipped pairs (:data:`~xlsent.mining.scorer_training.TRAIN_PAIRS`) and from each
    ``bitext`` (``LANG=FILE``, pairs with English, as for ``train``; ``bitext_only``: those alone), its cut chosen on
    the tune split of the dev pairs; ``config_files`` (a ``[scorer]`` table or top-level keys) and ``key=value``
    ``sets`` change :class:`~xlsent.mining.scorer_training.ScorerTraining`. With ``ship``, it also becomes the
    scorer shipped for the model's name. ``out`` follows ``train``'s rules for ``--out``
    (:func:`~xlsent.training.method.prepare_output`: new or empty, never a model or a folder of other files).
    Returns the scorer's file.

    >>> from xlsent.api import train_filter
    >>> train_filter("my-scorer", bitext=["kab=kab-en.tsv"])  # doctest: +SKIP
    """
    from xlsent.data.user_bitext import load_user_bitext, parse_bitext_option
    from xlsent.mining.filter_scorer import SCORER_FILE, SHIPPED
    from xlsent.mining.scorer_training import scorer_config, train_scorer
    from xlsent.training.method import prepare_output

    target = Path(out) / SCORER_FILE
    if target.exists():
        raise ValueError(f"{target} exists: train into a new --out, or remove it")
    prepare_output(out, resume=False)
    cfg = scorer_config(config_files, sets)
    user = load_user_bitext([parse_bitext_option(raw) for raw in bitext], hold_out=False, seed=cfg.seed)
    if bitext_only and not user.bitext:
        raise ValueError("--bitext-only needs at least one --bitext LANG=FILE")
    encoder = load(model, backend)
    scorer = train_scorer(encoder, cfg, root=data, user=[(f"{b.lang}-en", b.xx, b.en) for b in user.bitext],
                          bitext_only=bitext_only, progress=progress)
    path = scorer.save(target)
    if ship:
        scorer.save(SHIPPED / f"{scorer.encoder.partition('@')[0]}.json")
    return path


def train(method: str, out: str | Path, *, config_files: Sequence[str | Path] = (), sets: Sequence[str] = (),
          mode: str | None = None, resume: bool = False, data: str | Path | None = None,
          progress: bool = True, bitext: Sequence[str] = (), bitext_only: bool = False) -> Path:
    """Train ``method`` (a name from ``xlsent train --help``) into the model directory ``out``.

    The configuration is the method's packaged defaults, then ``config_files``, then ``key=value`` ``sets``; then
    ``bitext`` (``LANG=FILE`` or ``LANG=FILE_X,FILE_EN`` each, :mod:`xlsent.data.user_bitext`) joins the config's
    ``[[bitext]]`` tables, and ``bitext_only`` drops the shipped bitext.
    """
    from xlsent.training.method import get_method

    m = get_method(method)
    config = m.command_config(config_files, sets, mode, bitext, bitext_only)
    return m.train(config, Path(out), resume=resume, data=data, progress=progress)
