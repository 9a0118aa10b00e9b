"""``xlsent report``: render docs/results.md and its plots."""

from __future__ import annotations

import argparse
from pathlib import Path

from xlsent.cli.commands import Commands
from xlsent.cli.options import path_arg


def add_commands(sub: Commands) -> None:
    """Add ``report``."""
    p = sub.add_parser("report", help="render docs/results.md and plots from results, benchmarks and training logs")
    p.add_argument("--results", default="results", type=path_arg, help="folder of result JSON (default results/)")
    p.add_argument("--bench", type=path_arg,
                   help="folder of benchmark JSON written by `make bench` (default RESULTS/bench)")
    p.add_argument("--train-logs", default="models/*/train.jsonl", metavar="GLOB",
                   help="training logs to plot, ** matching any folders (default models/*/train.jsonl: the shipped "
                        "models; '' for none)")
    p.add_argument("--docs", default="docs/results.md", type=path_arg,
                   help="markdown to write (default docs/results.md)")
    p.add_argument("--plots", default="docs/plots", type=path_arg, help="folder for PNG plots (default docs/plots)")
    p.set_defaults(func=_report, writes=("docs", "plots"))


def _report(args: argparse.Namespace) -> int:
    from xlsent.report.page import write_report

    write_report(Path(args.results), Path(args.docs), Path(args.plots),
                 bench_dir=Path(args.bench) if args.bench else None, train_logs=args.train_logs or None)
    print(f"wrote {args.docs} and plots in {args.plots}")
    return 0
