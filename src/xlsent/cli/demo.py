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
    from xlsent.atomic import check_folder_output
    from xlsent.demo import run_demo

    if not args.output.strip():
        raise ValueError("-o '': name the folder the embeddings go to (default out/demo)")
    check_folder_output(args.output, "-o")
    encoder = load(args.model, args.backend)  # before the folder is made: a model that cannot load leaves none
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    run_demo(encoder, out)
    return 0
