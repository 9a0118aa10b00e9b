"""``xlsent mine``, ``xlsent score`` and ``xlsent calibrate``: mine translation pairs, score given pairs, calibrate the
threshold that mining uses. Each parses its arguments and calls :mod:`xlsent.api`."""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from xlsent.arg_types import positive_float, positive_int
from xlsent.cli.commands import Commands
from xlsent.cli.options import (
    add_data,
    add_engine,
    add_input_options,
    add_model,
    add_output,
    input_spec,
    path_arg,
    ray_config,
)

if TYPE_CHECKING:
    from xlsent.data.text_input import InputSpec


def add_commands(sub: Commands) -> None:
    """Add ``mine``, ``score`` and ``calibrate``."""
    _add_mine(sub)
    _add_score(sub)
    sub.add_lazy(
        "calibrate", _add_calibrate_arguments,
        help="calibrate an encoder's mining threshold on BUCC-style dev sets (for mine --threshold auto)",
        description="Find the ratio-margin threshold (k=4, max retrieval) that maximises F1 on the BUCC-style dev "
        "sets built from WMT newstest (gold pairs of newstest2011, 2014 for ru, hidden among distractors; never the "
        "newstest2012 sets that `xlsent eval bucc` reports), average it over the sets and save it with "
        "how it was obtained: in $XLSENT_HOME/calibration/ and in the model directory's xlsent.json. `xlsent mine "
        "--threshold auto` reads it from there, else from the thresholds shipped with xlsent for the registered "
        "encoders. Encodings are cached, so a second run (or one after `xlsent eval bucc`) encodes nothing. "
        "Slow on CPU: about a quarter of an hour for me5-small.",
    )


def threshold_type(text: str) -> float | str:
    """argparse type of ``--threshold``: ``auto`` or a finite number."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number or 'auto', not {text!r}")
    return value


def _langs_list(text: str) -> list[str]:
    """argparse type of a comma-separated list of language codes."""
    codes = [code.strip() for code in text.split(",") if code.strip()]
    if not codes:
        raise argparse.ArgumentTypeError(f"must name at least one language code, e.g. de,fr, not {text!r}")
    return codes


def add_search_options(p: argparse.ArgumentParser) -> None:
    """The options of the neighbourhoods that ``mine``, ``score`` and ``filter`` share: embeddings given, margin, k,
    search."""
    add_model(p, "encoder: a registered name (me5-small, muse), a model directory, or module:function (default "
                 "me5-small; with both --src-emb and --tgt-emb none: the files name their encoder, and --model is an "
                 "error unless --threshold auto reads its threshold, the files then checked to be made by it)",
              default=None)
    p.add_argument("--src-lang", help="source language code (default: none)")
    p.add_argument("--tgt-lang", help="target language code (default: none)")
    p.add_argument("--src-emb", type=path_arg,
                   help="embeddings of SRC from `xlsent embed`, checked against SRC: the same file, "
                   "column (or field) and language (default: embed SRC)")
    p.add_argument("--tgt-emb", type=path_arg,
                   help="embeddings of TGT from `xlsent embed`, checked against TGT as --src-emb is "
                   "(default: embed TGT); with both --src-emb and --tgt-emb the encoder is not loaded (but for "
                   "--threshold auto)")
    p.add_argument("--margin", default="ratio", choices=["ratio", "distance", "absolute"],
                   help="how a pair's cosine is compared with its neighbourhoods' mean: ratio (cos / mean), distance "
                   "(cos - mean) or absolute (cos alone) (default ratio)")
    p.add_argument("-k", "--k", type=positive_int, default=4, help="neighbours in the margin (default 4)")
    p.add_argument("--unify", action=argparse.BooleanOptionalAction, default=True,
                   help="search and score each distinct sentence once, lines equal after stripping surrounding "
                   "whitespace being one sentence (LASER's --unify): a sentence repeated k times would otherwise fill "
                   "a neighbourhood of k and lose its pairs (default: on; --no-unify takes every line on its own)")
    p.add_argument("--index", default="exact",
                   choices=["exact", "ivfbf16", "flat", "ivf", "ivfpq", "ivfsq", "ivfpqfs", "hnsw", "auto"],
                   help="k-NN search: exact blocked (default); ivfbf16, xlsent's inverted file over both sides "
                   "scanned with bf16 products, neighbours re-scored in fp32 (for millions of sentences on CPUs with "
                   "bf16 matrix units; resumable by direction; in this process on every engine); or a FAISS "
                   "approximate index, trained once and searched by shards (resumable; on the workers with --engine "
                   "ray); auto: exact while both sides have under 200k distinct sentences, else ivfpqfs, printing "
                   "the choice and its expected recall")
    p.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16"],
                   help="exact search's products: fp32, or bf16 to find candidates whose similarities are then "
                   "recomputed in fp32 (the same neighbours but for near-ties, 2-3x faster where the CPU has bf16 "
                   "matrix units); auto: bf16 where the shipped measurement of this CPU class shows it faster and "
                   "both sides have 20k sentences or more, else fp32 (default auto)")
    p.add_argument("--nprobe", type=positive_int,
                   help="with an IVF --index: lists searched per query (default: for FAISS kinds the smallest power of "
                   "two that finds 95%% of a sample's exact nearest neighbours; for ivfbf16 the smallest that reaches "
                   "98%% of them from either side)")
    p.add_argument("--ef-search", type=positive_int,
                   help="with --index hnsw: efSearch, the search's candidate list (default: tuned as --nprobe)")
    p.add_argument("--max-memory", type=positive_float, default=1.0,
                   help="GiB for the similarity blocks (default 1)")
    add_engine(p, "encoder actors and one k-NN task per shard")


def _add_mine(sub: Commands) -> None:
    p = sub.add_parser(
        "mine", help="mine translation pairs out of two monolingual files (margin-based, resumable)",
        description="Embed SRC and TGT (or reuse --src-emb/--tgt-emb made by `xlsent embed` from the same "
        "files), find the k nearest neighbours in both directions, score with the margin of Artetxe & Schwenk "
        "(2019) and write `score TAB src TAB tgt` lines, best first. A sentence on several lines is searched and "
        "scored once (see --unify). The last line, on standard error, says how many pairs were written, out of "
        "how many candidates, at which threshold. Re-running after a kill resumes. Paths "
        "and options are checked before anything is computed; a failed run leaves nothing behind but the "
        "finished stages that a re-run reuses (OUTPUT.work/, and it says so).",
    )
    p.add_argument("src", type=path_arg,
                   help="source sentences (one a line; or TSV/JSONL/Parquet with --column/--field); - for "
                   "standard input")
    p.add_argument("tgt", type=path_arg, help="target sentences (as SRC; at most one of them can be -)")
    add_output(p, "output TSV (.tsv or .txt); - writes the pairs to standard output (not resumable)")
    add_search_options(p)
    p.add_argument("--mode", default="max", choices=["forward", "backward", "max", "intersect"],
                   help="candidate generation (default max: best of both directions, greedy 1:1)")
    p.add_argument("--threshold", type=threshold_type,
                   help="keep pairs scoring at least this; 'auto' = the encoder's calibrated threshold: its model "
                   "directory's, your `xlsent calibrate` run's, or the one shipped for a registered encoder "
                   "(default: keep every candidate, which makes a candidate list, not a mined bitext)")
    p.add_argument("--no-dedup", action="store_true",
                   help="let one source or target text be in several pairs (default: each in the best-scoring pair "
                   "only)")
    p.add_argument("--one-to-one", action="store_true", help="each sentence used at most once (default: off)")
    p.add_argument("--with-ids", action="store_true",
                   help="append the 1-based line numbers of both sides (a TSV header is line 1); a repeated sentence "
                   "lists all its lines, comma-separated, e.g. 3,17")
    add_input_options(p)
    p.set_defaults(func=_mine, writes=("output",))


def _add_score(sub: Commands) -> None:
    p = sub.add_parser(
        "score", help="score given translation pairs with the margin (LASER's score mode)",
        description="Line i of SRC and line i of TGT are a pair (or, with --tsv PAIRS.tsv, the two columns of line "
        "i). Write `score TAB src TAB tgt` for every pair, in input order: the margin of the pair's cosine against "
        "the mean cosine of the k nearest neighbours of each side among the distinct sentences of the other whole "
        "side, as LASER's `mine_bitexts.py --mode score`. A pair with an empty or blank side gets an empty score "
        "and takes no part in any neighbourhood. A side with fewer than k distinct sentences cannot have k "
        "neighbours: the scores are then cosines, with a warning saying so. Resumable like mine; nothing is "
        "written on error.",
    )
    p.add_argument("src", nargs="?", type=path_arg,
                   help="source sentences, one a line (or TSV/JSONL/Parquet with --column/--field)")
    p.add_argument("tgt", nargs="?", type=path_arg, help="target sentences, as many rows as SRC")
    p.add_argument("--tsv", metavar="PAIRS.tsv", type=path_arg,
                   help="the pairs as a TSV file of exactly two columns, source TAB target (instead of SRC TGT); "
                   "say whether line 1 is a header with --header or --no-header (default: none, the pairs are SRC TGT)")
    add_output(p, "output TSV (.tsv or .txt); - writes the scores to standard output (not resumable)")
    add_search_options(p)
    add_input_options(p)
    p.set_defaults(func=_score, writes=("output",))


def _add_calibrate_arguments(p: argparse.ArgumentParser) -> None:
    """``xlsent calibrate``'s arguments (the calibration module is imported only for this command)."""
    from xlsent.mining.calibration import CALIBRATION_SETS

    add_model(p)
    add_data(p)
    p.add_argument("--langs", type=_langs_list, default=list(CALIBRATION_SETS), metavar="CODES",
                   help=f"the LANG-en newstest sets to calibrate on, comma-separated (default "
                   f"{','.join(CALIBRATION_SETS)})")
    p.add_argument("--ship", action="store_true",
                   help="also write the record into the thresholds shipped with xlsent (the package's "
                   "mining/thresholds.json; registered encoders only, for maintainers) (default: off)")
    p.add_argument("--for", dest="purpose", choices=["mine", "filter"], default="mine",
                   help="mine: the mining threshold (mine and score --threshold auto); filter: the margin cut of "
                   "`xlsent filter --threshold auto` where the encoder has no learned scorer, on the tune split of "
                   "the noisy dev bitexts (xlsent.data.noisy_bitext.DEV_PAIRS; --langs is then ignored; --ship "
                   "writes mining/filter_thresholds.json, for any encoder) (default mine)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_calibrate, writes=())


def search_config(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~xlsent.mining.config.SearchConfig` fields given by the options of :func:`add_search_options`,
    refusing combinations that do not go together, naming the options."""
    if args.nprobe and args.ef_search:
        raise ValueError("--nprobe is for IVF indexes, --ef-search for HNSW: give one of them")
    if (args.index == "hnsw" and args.nprobe) or (args.index != "hnsw" and args.ef_search):
        raise ValueError(f"--index {args.index} takes {'--ef-search' if args.index == 'hnsw' else '--nprobe'}")
    return {"k": args.k, "margin": args.margin, "unify": args.unify, "index": args.index,
            "effort": args.nprobe or args.ef_search, "precision": args.precision,
            "max_memory": int(args.max_memory * 2**30)}


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """``xlsent.api``'s keyword arguments for the model, languages, given embeddings and engine."""
    ray = ray_config(args)
    return {"model": args.model, "backend": args.backend, "src_lang": args.src_lang, "tgt_lang": args.tgt_lang,
            "src_emb": args.src_emb, "tgt_emb": args.tgt_emb, "engine": args.engine, "ray": ray,
            "progress": not args.quiet}


def _mine(args: argparse.Namespace) -> int:
    from xlsent.api import mine
    from xlsent.mining.config import MineConfig

    cfg = MineConfig(**search_config(args), mode=args.mode, dedup=not args.no_dedup, one_to_one=args.one_to_one,
                     with_ids=args.with_ids)
    summary = mine(input_spec(args.src, args), input_spec(args.tgt, args), args.output, config=cfg,
                   threshold=args.threshold, **engine_options(args))
    print(summary.describe(), file=sys.stderr)
    return 0


def pair_inputs(args: argparse.Namespace, tsv: str | None, src: str | None, tgt: str | None, *,
                flag: str = "--tsv", tsv_header: bool | None = None) -> tuple[InputSpec, InputSpec]:
    """The two sides of given pairs: columns 0 and 1 of the TSV file ``tsv`` (checked to have exactly two; its header
    as ``--header`` says, else ``tsv_header``) or the files ``src`` and ``tgt``, read as the input options say.
    Messages name the TSV as the command takes it (``flag``: ``--tsv``, or ``PAIRS.tsv`` for a positional)."""
    spelled = "--tsv PAIRS.tsv" if flag == "--tsv" else "one PAIRS.tsv"
    from xlsent.data.text_input import check_tsv_columns

    if tsv is not None:
        if src or tgt:
            raise ValueError(f"give the pairs either as SRC TGT or as {spelled}, not both")
        if args.column is not None or args.format not in ("auto", "tsv"):
            raise ValueError(f"{flag} reads columns 0 and 1 of a TSV file: leave out --column and --format")
        pairs = input_spec(tsv, args)
        if pairs.is_stream():
            raise ValueError(f"{tsv}: {flag} needs a file (its two columns are read one after the other), not "
                             "standard input, a device or a pipe; save it to a file first")
        pairs = replace(pairs, format="tsv", header=pairs.header if pairs.header is not None else tsv_header)
        pairs.check()
        check_tsv_columns(pairs, 2)
        return replace(pairs, column="0"), replace(pairs, column="1")
    if src and tgt:
        return input_spec(src, args), input_spec(tgt, args)
    raise ValueError(f"give the pairs as SRC TGT (two files, line i of each a pair) or as {spelled}")


def _score(args: argparse.Namespace) -> int:
    from xlsent.api import score
    from xlsent.mining.config import SearchConfig

    src, tgt = pair_inputs(args, args.tsv, args.src, args.tgt)
    summary = score(src, tgt, args.output, config=SearchConfig(**search_config(args)), **engine_options(args))
    print(summary.describe(), file=sys.stderr)
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from xlsent.api import calibrate

    if args.purpose == "filter":
        from xlsent.api import calibrate_filter

        record = calibrate_filter(args.model, backend=args.backend, data=args.data, ship=args.ship,
                                  progress=not args.quiet)
    else:
        record = calibrate(args.model, backend=args.backend, langs=args.langs, data=args.data, ship=args.ship,
                           progress=not args.quiet)
    cosine = f" (cosine cut {record['cosine_threshold']:.4f})" if "cosine_threshold" in record else ""
    print(f"{args.model}: {args.purpose} ratio-margin threshold {record['threshold']:.4f}{cosine}, calibrated on the "
          f"dev sets {', '.join(record['sets'])} (saved in {', '.join(record['saved'])})")
    return 0
