"""The ``xlsent`` command line: parse arguments, call the API, print. No logic lives here."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from xlsent.version import __version__

MODEL_HELP = "encoder: a registered name (me5-small, muse), a model directory, or module:function"
Handler = Callable[[argparse.Namespace], int]


def _cmd_models(args: argparse.Namespace) -> int:
    from xlsent.encoders.registry import REGISTERED

    if args.prepare:
        from xlsent.encoders.me5_convert import prepare_default_model

        print(f"default model ready in {prepare_default_model(force=args.force)}")
        return 0
    print(f"{'name':<11} {'dim':>4}  {'languages':<24} description")
    for info in REGISTERED.values():
        print(f"{info.name:<11} {info.dim:>4}  {info.languages:<24} {info.description}")
    print("\nAny directory written by `xlsent train` or `xlsent export` works wherever a name does.")
    return 0


def _cmd_embed(args: argparse.Namespace) -> int:
    from xlsent.api import EmbedOptions, embed_file, load
    from xlsent.data.text_input import InputSpec

    spec = InputSpec(Path(args.input), args.format, args.column, args.field)
    opts = EmbedOptions(chunk_rows=args.chunk_rows, batch_tokens=args.batch_tokens, strict=args.strict,
                        resume=args.resume, progress=not args.quiet, lang=args.lang)
    summary = embed_file(spec, args.output, load(args.model), opts)
    print(summary.describe())
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from xlsent.api import export_sentence_transformers

    out = export_sentence_transformers(args.model, args.sentence_transformers)
    print(f"wrote sentence-transformers folder {out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.demo import run_demo

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run_demo(load(args.model), out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every ``xlsent`` command."""
    parser = argparse.ArgumentParser(
        prog="xlsent",
        description="Cross-lingual sentence embeddings: embed text, mine translations, train and evaluate.",
    )
    parser.add_argument("--version", action="version", version=f"xlsent {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("models", help="list the available encoders, or prepare the default one")
    p.add_argument("--prepare", action="store_true", help="convert the default model into the cache now")
    p.add_argument("--force", action="store_true", help="with --prepare: convert again even if cached")
    p.set_defaults(func=_cmd_models)

    p = sub.add_parser(
        "embed", help="embed a text file (one sentence a row) into .npy + .json sidecar or .parquet",
        description="Embed every row of INPUT. Row i of OUTPUT is the vector of row i of INPUT; empty rows "
        "become zero vectors (counted in the summary) unless --strict. A killed run continues with --resume.",
    )
    p.add_argument("input", help="input file: .txt (a sentence a line), .tsv, .jsonl or .parquet")
    p.add_argument("-o", "--output", required=True, help="output .npy (with .npy.json sidecar) or .parquet")
    p.add_argument("--model", default="me5-small", help=MODEL_HELP)
    p.add_argument("--format", default="auto", choices=["auto", "txt", "tsv", "jsonl", "parquet"],
                   help="input format (default: from the file extension)")
    p.add_argument("--column", help="TSV: 0-based column index or header name; Parquet: column name")
    p.add_argument("--field", help="JSONL: field holding the text (default: text)")
    p.add_argument("--lang", help="language code of the input, for encoders that use it")
    p.add_argument("--batch-tokens", type=int, default=2048, help="padded tokens per batch (default 2048)")
    p.add_argument("--chunk-rows", type=int, default=50_000, help="rows per resumable chunk (default 50000)")
    p.add_argument("--resume", action="store_true", help="reuse the chunks a killed run already finished")
    p.add_argument("--strict", action="store_true", help="make empty rows an error")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_embed)

    p = sub.add_parser("export", help="export a model for other libraries")
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("--sentence-transformers", required=True, metavar="OUT",
                   help="write a folder that SentenceTransformer(OUT) loads with the same vectors")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("demo", help="embed the shipped German-English example and pair it up (make run)")
    p.add_argument("--model", default="me5-small", help=MODEL_HELP)
    p.add_argument("--out", default="out/demo", help="where the embeddings go (default out/demo)")
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``xlsent`` console script."""
    args = build_parser().parse_args(argv)
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        handler: Handler = args.func
        return handler(args)
    except (FileNotFoundError, ValueError, FileExistsError) as exc:
        print(f"xlsent: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
