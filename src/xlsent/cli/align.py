"""``xlsent align``: sentence-align parallel documents. It parses its arguments and calls :func:`xlsent.api.align`."""

from __future__ import annotations

import argparse
import sys

from xlsent.arg_types import positive_int
from xlsent.cli.commands import Commands
from xlsent.cli.options import add_engine, add_model, path_arg, ray_config


def max_beads(text: str) -> int:
    """argparse type of ``--max-beads``: a whole number in the range every front end states
    (:data:`~xlsent.align.config.MAX_BEADS_RULE`)."""
    from xlsent.align.config import MAX_BEADS_RULE, check_max_beads

    try:
        check_max_beads(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {MAX_BEADS_RULE}, not {text!r}") from None
    return int(text)


def add_commands(sub: Commands) -> None:
    """Add ``align``."""
    sub.add_lazy(
        "align", _add_arguments,
        help="sentence-align a document with its translation (beads of consecutive lines, in document order)",
        description="Align SRC (one sentence a line, document order) with its translation TGT and write one bead a "
        "line, `[i, j]:[k]:cost` as Vecalign's output and Bleualign's gold (0-based line ids, either side may be "
        "empty, lower cost is better), or with --format tsv `cost TAB source text TAB target text`. Every line of "
        "both documents is in exactly one bead; an empty line (blank, or invisible characters only) is a "
        "null bead of its own (cost 0), never paired. "
        "Beads are scored with embeddings of runs of consecutive lines, normalised against each span's nearest "
        "lines near the path, searched in a band around a path found on halved documents (time and memory linear "
        "in the length). --pairs aligns many document pairs with one model load. Every input and output is checked "
        "before the model is loaded; each pair's output is written atomically (complete or absent) as soon as its "
        "beads are found, so a killed --pairs run continues with --resume.",
    )


def _add_arguments(p: argparse.ArgumentParser) -> None:
    from xlsent.align.brackets import REACH
    from xlsent.align.config import (
        MAX_BEADS_RULE,
        MAX_WEIGHT,
        NULL_COSTS,
        SIZE_WEIGHTS,
        AlignConfig,
        Cost,
        LengthRatio,
        Norm,
        Spans,
    )
    from xlsent.align.job import FORMATS

    d = AlignConfig()
    p.add_argument("src", nargs="?", type=path_arg,
                   help="source document, one sentence a line (UTF-8 text); - (or /dev/stdin, a "
                   "pipe) reads standard input")
    p.add_argument("tgt", nargs="?", type=path_arg,
                   help="target document, the translation of SRC, one sentence a line; - reads "
                   "standard input")
    p.add_argument("-o", "--output", type=path_arg,
                   help="bead file to write; - writes to standard output (default: none; required unless --pairs)")
    p.add_argument("--pairs", metavar="LIST.tsv", type=path_arg,
                   help="align many document pairs: a file of `src TAB tgt TAB out` rows, no header (paths relative "
                   "to the list's folder, - being standard input or output wherever it is; blank rows skipped), with "
                   "a fourth column `gold` in every row to score them (--gold), instead of SRC TGT -o OUTPUT "
                   "(default: none)")
    add_model(p)
    p.add_argument("--src-lang", help="source language code, for encoders that use it (default: none; never "
                   "detected online)")
    p.add_argument("--tgt-lang", help="target language code (default: none)")
    p.add_argument("--format", default="beads", choices=FORMATS,
                   help="beads: `[i, j]:[k]:cost`; tsv: `cost TAB source text TAB target text` (default beads)")
    p.add_argument("--max-beads", type=max_beads, default=d.max_beads,
                   help=f"most lines (both sides together) in one bead, as Vecalign's alignment_max_size: "
                   f"{MAX_BEADS_RULE} (default {d.max_beads})")
    p.add_argument("--cost", default=d.cost.value, choices=[c.value for c in Cost],
                   help="what a bead costs: margin (Bertalign's: its cosine less its sides' cosine with the lines "
                   "around the other side, times a length penalty) or distance (Vecalign's: 1 - cosine, divided as "
                   f"--norm says, times the product of its sizes) (default {d.cost.value})")
    p.add_argument("--norm", default=d.norm.value, choices=[n.value for n in Norm],
                   help="--cost distance: what a bead's distance is divided by: its spans' mean distance to their "
                   "nearest lines near the path (neighbours), to random lines (random, as Vecalign) or nothing (none) "
                   f"(default {d.norm.value})")
    p.add_argument("--null-cost", type=float, default=None,
                   help=f"cost of leaving a line unaligned, against a pair's cost, from 0 to {MAX_WEIGHT:.0f} "
                   f"(default: with --cost margin, --null-scale times the median gain of a first path's 1-1 beads; "
                   f"{NULL_COSTS[Cost.DISTANCE]:g} with --cost distance)")
    p.add_argument("--null-scale", type=float, default=d.null_scale,
                   help="with --cost margin and no --null-cost: a null bead costs this share of what a typical 1-1 "
                   "bead of the document pair gains (the median of a first path's), so a pair whose translations "
                   "stand out more pays more to leave a line out, as Vecalign's deletion cost follows the pair's own "
                   f"costs (default {d.null_scale:g}: a null bead costs 0; more lost strict F1 on our dev sets)")
    p.add_argument("--band", type=positive_int, default=d.band,
                   help=f"lines either side of the coarse path that the fine search visits (default {d.band})")
    p.add_argument("--full-dp", type=positive_int, default=d.full_dp,
                   help=f"search the whole grid when both documents have at most this many lines (default "
                   f"{d.full_dp})")
    p.add_argument("--size-weight", default=d.size_weight, choices=SIZE_WEIGHTS,
                   help="--cost distance: what a bead's normalised distance is multiplied by: product of its sizes "
                   f"(Vecalign) or their mean (default {d.size_weight})")
    p.add_argument("--length-weight", type=float, default=d.length_weight,
                   help="how much a bead's two lengths in characters count: the exponent of margin's length penalty "
                   "log2(1 + short/long), the weight of the absolute log ratio in distance, from 0 (lengths left "
                   f"out) to {MAX_WEIGHT:.0f} (default {d.length_weight:g})")
    p.add_argument("--length-ratio", default=d.length_ratio.value, choices=[r.value for r in LengthRatio],
                   help="what one document's lengths are scaled by to compare with the other's: the ratio of the "
                   "characters of the lines a first alignment pairs, then aligned again (paired: unpaired lines such "
                   "as page headers do not skew it), or of the two documents' totals (documents: one alignment) "
                   f"(default {d.length_ratio.value})")
    p.add_argument("--number-weight", type=float, default=d.number_weight,
                   help="what the agreement of a bead's two sides' numbers (those of --number-min or more found in "
                   "both documents: dates, heights, references), from -1 (none shared) to 1 (the same), takes off its "
                   f"cost, from 0 (numbers left out) to {MAX_WEIGHT:.0f} (default {d.number_weight:g})")
    p.add_argument("--number-min", type=int, default=d.number_min,
                   help="the smallest number that anchors: many languages write small numbers as words (six, a "
                   f"month's name) where others use digits (default {d.number_min})")
    p.add_argument("--word-weight", type=float, default=d.word_weight,
                   help="the same for the words both documents spell alike (4 letters or more, on few lines of each: "
                   f"names, places, terms), from 0 (words left out) to {MAX_WEIGHT:.0f} (default {d.word_weight:g})")
    p.add_argument("--bracket-cost", type=float, default=d.bracket_cost,
                   help="what a bead boundary costs between lines that one bracket holds together (a line with an "
                   f"open ( or [ and the lines up to the one closing it, within {REACH} lines: a sentence a splitter "
                   f"cut inside a parenthesis), from 0 (brackets left out) to {MAX_WEIGHT:.0f} (default "
                   f"{d.bracket_cost:g})")
    p.add_argument("--split", action="store_true",
                   help="the documents are paragraphs, one a line: split each into sentences (as `xlsent split`, "
                   "with --src-lang and --tgt-lang), cut each again after a colon or semicolon that more text "
                   "follows, and align those pieces; the beads number them, and OUTPUT.src-sentences.tsv and "
                   "OUTPUT.tgt-sentences.tsv map each to its line and character span (default: a sentence a line "
                   "already)")
    p.add_argument("--gold", metavar="GOLD", type=path_arg,
                   help="a gold alignment of SRC and TGT ([i, j]:[k] beads, one a line: Bleualign's and Vecalign's "
                   "format): the beads written are scored against it, Bleualign's strict and lax precision, recall "
                   "and F1 with the 95%% interval of the strict F1, on the last line; with --pairs, each row's "
                   "fourth column (SRC TAB TGT TAB OUT TAB GOLD), counts summed over the pairs, as the papers score "
                   "a test set of several documents (default: not scored)")
    p.add_argument("--resume", action="store_true",
                   help="skip the pairs whose output exists: a killed run's finished pairs (each output is written "
                   "whole); the options they were aligned with are not checked (default: every output rewritten)")
    p.add_argument("--unsure-share", type=float, default=d.unsure_share,
                   help="spans of several lines are embedded only where a first path, found with each span pooled "
                   "from its lines' vectors, is unsure: around every bead but a 1-1 one and around this share of "
                   f"the 1-1 beads, the weakest (default {d.unsure_share:g}; --spans all embeds every span)")
    p.add_argument("--unsure-radius", type=int, default=d.unsure_radius,
                   help="beads either side of an unsure one whose lines are unsure too (default "
                   f"{d.unsure_radius})")
    p.add_argument("--spans", default=d.spans.value, choices=[s.value for s in Spans],
                   help=f"which spans of several lines are embedded (default {d.spans.value}, see --unsure-share)")
    add_engine(p, "the document pairs of --pairs as tasks, the model loaded once per worker,")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=_align, writes=())  # xlsent.api.align locks every output, --pairs' too


def _align(args: argparse.Namespace) -> int:
    from xlsent.align.config import AlignConfig
    from xlsent.api import align

    if args.pairs is not None and (args.src or args.tgt or args.output):
        raise ValueError("give SRC TGT -o OUTPUT, or --pairs LIST.tsv, not both")
    if args.pairs is None and not (args.src and args.tgt and args.output):
        raise ValueError("give SRC TGT -o OUTPUT (one document pair), or --pairs LIST.tsv")
    cfg = AlignConfig(max_beads=args.max_beads, cost=args.cost, norm=args.norm, null_cost=args.null_cost,
                      band=args.band, full_dp=args.full_dp, size_weight=args.size_weight,
                      length_weight=args.length_weight, length_ratio=args.length_ratio,
                      number_weight=args.number_weight, number_min=args.number_min, word_weight=args.word_weight,
                      bracket_cost=args.bracket_cost,
                      null_scale=args.null_scale, spans=args.spans, unsure_share=args.unsure_share,
                      unsure_radius=args.unsure_radius)
    summary = align(args.src, args.tgt, args.output, pairs=args.pairs, model=args.model, backend=args.backend,
                    config=cfg, fmt=args.format, src_lang=args.src_lang, tgt_lang=args.tgt_lang,
                    resume=args.resume, split=args.split, engine=args.engine, ray=ray_config(args),
                    progress=not args.quiet, gold=args.gold)
    print(summary.describe(), file=sys.stderr)
    return 0
