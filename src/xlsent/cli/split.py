"""``xlsent split``: paragraphs into sentences. Parses its arguments and calls :func:`xlsent.api.split`."""

from __future__ import annotations

import argparse
import sys

from xlsent.cli.commands import Commands
from xlsent.cli.options import add_input_options, add_output, input_spec, path_arg


def add_commands(sub: Commands) -> None:
    """Add ``split``."""
    p = sub.add_parser(
        "split", help="split paragraphs (one a line) into sentences, each mapped back to its paragraph",
        description="Split every row of INPUT (a paragraph) into sentences with Wikimedia's sentencex (about 300 "
        "languages; xlsent.data.sentence_split says how it was chosen). A .txt output (or -) gets a sentence a "
        "line; a .tsv output gets a header, then line TAB start TAB end TAB sentence: the paragraph's input line "
        "and the sentence's character span in it (0-based, end exclusive). An empty line gives no sentence. "
        "Thai, Khmer, Lao and Myanmar mark no sentence end: each paragraph stays one sentence, with a warning. "
        "Nothing is written on error.",
    )
    p.add_argument("input", type=path_arg,
                   help="paragraphs, one a row: .txt, .tsv, .jsonl or .parquet; - for standard input")
    add_output(p, "sentences: .txt (one a line), .tsv (line, start, end, sentence) or - (standard output)")
    p.add_argument("--lang", required=True, help="the language of the text (sentence ends depend on it), e.g. de")
    add_input_options(p)
    p.set_defaults(func=_split, writes=("output",))


def _split(args: argparse.Namespace) -> int:
    from xlsent.api import split

    summary = split(input_spec(args.input, args), args.output, lang=args.lang)
    if not args.quiet:
        print(summary.describe(), file=sys.stderr)
    return 0
