"""``xlsent filter``: clean a bitext you already have. Parses its arguments and calls :func:`xlsent.api.filter`."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING

from xlsent.arg_types import positive_float
from xlsent.cli.commands import Commands
from xlsent.cli.mine import add_search_options, engine_options, pair_inputs, search_config, threshold_type
from xlsent.cli.options import add_input_options, add_output, path_arg

if TYPE_CHECKING:
    from xlsent.mining.filter_config import FilterConfig

log = logging.getLogger(__name__)

SWITCHES = (("nontext", "non-text lines: URLs, e-mail addresses, numbers, dates, menus"),
            ("length", "length and length-ratio limits"),
            ("copies", "identical or near-identical sides (an untranslated copy)"),
            ("langid", "language identification of both sides"),
            ("duplicates", "exact and normalised duplicates of an earlier pair"),
            ("score", "the margin-score cut (the score column is written either way)"))
"""The filters ``--no-NAME`` switches off, and what each drops."""


def add_commands(sub: Commands) -> None:
    """Add ``filter``."""
    p = sub.add_parser(
        "filter", help="clean a bitext: language ID, length, copies, non-text, duplicates, then a learned scorer "
        "(or a calibrated margin cut)",
        description="Keep the pairs of PAIRS.tsv (source TAB target; line 1 is data unless --header) or of SRC TGT "
        "(line i of each a pair) that pass every filter, in input order, into -o; --scores writes every pair with "
        "keep (1/0), score (its margin, as `xlsent score` gives it), p_clean (the learned scorer's probability that "
        "the pair is clean), reason (empty for kept pairs, else the first filter that dropped it: empty, nontext, "
        "length, copy, language, duplicate, score, scorer) and each filter's value. The filters are on by default "
        "(docs/filter.md gives their defaults and how they were chosen). The last one is the learned scorer shipped "
        "for the encoder (me5-small, models/me5-distill; --scorer DIR for one of `xlsent train filter`): it keeps a "
        "pair whose p_clean reaches its cut; an encoder without one, --scorer none or a --threshold cut the margin "
        "instead. A summary (pairs dropped per reason, the cut) ends the run. Resumable like mine; nothing is "
        "written on error.",
    )
    p.add_argument("pairs", metavar="PAIRS.tsv|SRC", type=path_arg,
                   help="the pairs: one TSV file of exactly two columns, or the first of two files of as many rows")
    p.add_argument("tgt_file", nargs="?", metavar="TGT", type=path_arg,
                   help="the second file, with SRC (default: none, PAIRS.tsv)")
    add_output(p, "kept pairs, TSV (.tsv or .txt), src TAB tgt; - writes them to standard output")
    p.add_argument("--scores", metavar="ALL.tsv", type=path_arg,
                   help="also write every input pair, in input order after a header line, with keep, score, p_clean, "
                   "reason and the per-filter values (default: not written)")
    p.add_argument("--histogram", metavar="SCORES.png", type=path_arg,
                   help="also draw a histogram of the scores (default: none)")
    p.add_argument("--threshold", type=threshold_type, default="auto",
                   help="the score cut: a score of the --margin (a cosine with --margin absolute; a number sets the "
                   "learned scorer aside), or auto for the encoder's learned scorer, else its calibrated filter cut "
                   "(a cosine cut where the scores are cosines: a side with fewer than k sentences); a cut never "
                   "applies to scores of another scale (default auto)")
    p.add_argument("--keep", type=positive_float,
                   help="instead of a cut, keep this fraction (0 to 1) of the pairs the other filters pass, the best "
                   "by p_clean (by score without a scorer); not with --threshold (default: none, the cut decides)")
    p.add_argument("--scorer", metavar="auto|none|SCORER", type=path_arg,
                   help="the learned scorer: auto (the one shipped for the encoder; the margin cut where none is), "
                   "none (the margin cut), or a scorer file or folder of `xlsent train filter`, trained with --model "
                   "(default auto)")
    p.add_argument("--min-p-clean", type=float, metavar="P",
                   help="keep a pair when the scorer's p_clean is at least P (default: the scorer's own cut, chosen "
                   "on the dev tune split)")
    p.add_argument("--config", metavar="FILTER.toml", type=path_arg,
                   help="filter settings from a TOML file (fields of xlsent.mining.filter_config.FilterConfig, at the "
                   "top level or under [filter]); the options here override it (default: none, the built-in defaults)")
    for name, what in SWITCHES:
        p.add_argument(f"--{name}", action=argparse.BooleanOptionalAction, default=None,
                       help=f"{what} (default: on; --no-{name} switches it off)")
    add_search_options(p)
    add_input_options(p)
    p.set_defaults(func=_filter, writes=("output", "scores", "histogram"))


def _rules(args: argparse.Namespace) -> FilterConfig:
    """The :class:`~xlsent.mining.filter_config.FilterConfig` of the options (over ``--config``'s file)."""
    from xlsent.mining.filter_config import FilterConfig

    if args.keep is not None and args.keep > 1:
        raise ValueError(f"--keep is a fraction of the pairs, above 0 and at most 1, not {args.keep}")
    if args.keep is not None and args.threshold != "auto":
        raise ValueError(f"--keep {args.keep:g} and --threshold {args.threshold:g} both set the score cut: give one "
                         "(--keep keeps that fraction of the pairs, the best by score; --threshold cuts at a score)")
    if args.min_p_clean is not None and (args.keep is not None or args.threshold != "auto"):
        other = f"--keep {args.keep:g}" if args.keep is not None else f"--threshold {args.threshold:g}"
        raise ValueError(f"--min-p-clean {args.min_p_clean:g} and {other} both set the cut: give one "
                         "(--min-p-clean cuts the scorer's p_clean, --keep keeps a fraction of the pairs, --threshold "
                         "cuts the margin)")
    given = {name: getattr(args, name) for name, _ in SWITCHES if getattr(args, name) is not None}
    if args.keep is not None:  # the options' cut replaces the settings file's, whichever it is
        given.update(keep=args.keep, threshold="auto")
    if args.threshold != "auto":
        given.update(threshold=args.threshold, keep=None)
    given.update({key: value for key in ("scorer", "min_p_clean") if (value := getattr(args, key)) is not None})
    return FilterConfig.from_toml(args.config, **given)


def _filter(args: argparse.Namespace) -> int:
    from xlsent.api import filter as filter_pairs
    from xlsent.data.text_input import header_like
    from xlsent.mining.config import SearchConfig

    tsv = args.pairs if args.tgt_file is None else None
    src_file, tgt_file = (None, None) if tsv is not None else (args.pairs, args.tgt_file)
    src, tgt = pair_inputs(args, tsv, src_file, tgt_file, flag="PAIRS.tsv", tsv_header=False)
    line = header_like(src) if tsv is not None and args.header is None else None
    if line is not None:
        log.warning("%s:1 looks like a header (%r) but is read as a pair, as every line is without --header; it is "
                    "filtered like the others (pass --header to skip it)", src.name, line)
    summary = filter_pairs(src, tgt, args.output, scores=args.scores, histogram=args.histogram, config=_rules(args),
                           search=SearchConfig(**search_config(args)), **engine_options(args))
    print(summary.describe(), file=sys.stderr)
    return 0
