"""``xlsent export``: a model in the format of another library."""

from __future__ import annotations

import argparse

from xlsent.cli.commands import Commands
from xlsent.cli.options import path_arg


def add_commands(sub: Commands) -> None:
    """Add ``export``."""
    p = sub.add_parser("export", help="export a model for other libraries")
    p.add_argument("model", type=path_arg, help="encoder: a registered name (me5-small, muse) or a model directory")
    p.add_argument("--sentence-transformers", required=True, metavar="OUT", type=path_arg,
                   help="write a folder that SentenceTransformer(OUT) loads with the same vectors, but for inputs "
                   "longer than the model's window (512 tokens for me5-small): xlsent splits them into windows and "
                   "averages, sentence-transformers cuts them to the window")
    p.set_defaults(func=_export, writes=("sentence_transformers",))


def _export(args: argparse.Namespace) -> int:
    from xlsent.api import export_sentence_transformers

    out = export_sentence_transformers(args.model, args.sentence_transformers)
    print(f"wrote sentence-transformers folder {out}")
    return 0
