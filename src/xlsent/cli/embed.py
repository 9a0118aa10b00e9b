"""``xlsent embed``: embed a text file into an embedding file."""

from __future__ import annotations

import argparse

from xlsent.arg_types import positive_int
from xlsent.cli.commands import Commands
from xlsent.cli.options import (
    add_engine,
    add_input_options,
    add_model,
    add_output,
    input_spec,
    path_arg,
    ray_config,
)
from xlsent.inference import DEFAULT_BATCH_TOKENS


def add_commands(sub: Commands) -> None:
    """Add ``embed``."""
    p = sub.add_parser(
        "embed", help="embed a text file (one sentence a row) into .npy + .json sidecar or .parquet",
        description="Embed every row of INPUT. Row i of OUTPUT is the vector of row i of INPUT; empty rows "
        "become zero vectors (counted in the summary) unless --strict. A killed run continues with --resume. "
        "Paths and options are checked before anything is computed; a failed run leaves nothing behind but "
        "finished chunks that --resume can reuse (OUTPUT.parts/, and it says so).",
    )
    p.add_argument("input", type=path_arg,
                   help="input file: .txt (a sentence a line), .tsv, .jsonl or .parquet; - for standard "
                   "input (also /dev/stdin and other pipes)")
    add_output(p, "output file: .npy (with a .npy.json sidecar) or .parquet, chosen by the extension")
    add_model(p)
    add_input_options(p)
    p.add_argument("--lang", help="language code of the input, for encoders that use it (default: none)")
    p.add_argument("--batch-tokens", type=positive_int, default=DEFAULT_BATCH_TOKENS,
                   help=f"padded tokens per batch (default {DEFAULT_BATCH_TOKENS})")
    p.add_argument("--chunk-rows", type=positive_int, default=50_000,
                   help="rows per resumable chunk (default 50000; resuming needs the same value)")
    p.add_argument("--resume", action="store_true", help="reuse the chunks a killed run already finished "
                   "(without it, finished chunks of an earlier run are discarded, with a warning)")
    p.add_argument("--strict", action="store_true", help="make empty rows an error (default: zero vectors)")
    add_engine(p, "encoder actors embedding the chunks (the same chunks, so the same file)")
    p.set_defaults(func=_embed, writes=("output",))


def _embed(args: argparse.Namespace) -> int:
    from xlsent.api import EmbedOptions, embed

    spec = input_spec(args.input, args)
    opts = EmbedOptions(chunk_rows=args.chunk_rows, batch_tokens=args.batch_tokens, strict=args.strict,
                        resume=args.resume, progress=not args.quiet, lang=args.lang)
    summary = embed(spec, args.output, model=args.model, backend=args.backend, options=opts, engine=args.engine,
                    ray=ray_config(args))
    print(summary.describe())
    return 0
