"""``xlsent demo``: the job behind ``make run``."""

from __future__ import annotations

import argparse
from pathlib import Path

from xlsent.cli.commands import Commands
from xlsent.cli.options import add_model, add_output


def add_commands(sub: Commands) -> None:
    """Add ``demo``."""
    p = sub.add_parser("demo", help="embed the shipped German-English example and pair it up (make run)")
    add_model(p)
    add_output(p, "where the embeddings go (default out/demo)", default="out/demo")
    p.set_defaults(func=_demo, writes=("output",))


def _demo(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.demo import run_demo

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    run_demo(load(args.model, args.backend), out)
    return 0
