"""``xlsent index`` and ``xlsent search``: build a saved sentence index, query it."""

from __future__ import annotations

import argparse
from pathlib import Path

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


def add_commands(sub: Commands) -> None:
    """Add ``index`` and ``search``."""
    p = sub.add_parser("index", help="embed a text file into a saved FAISS index for `xlsent search`")
    p.add_argument("input", type=path_arg,
                   help="sentences (one a line; or TSV/JSONL/Parquet with --column/--field); - for "
                   "standard input")
    add_output(p, "index folder to write")
    add_model(p)
    p.add_argument("--kind", default="auto", choices=["flat", "ivf", "ivfpq", "ivfsq", "ivfpqfs", "hnsw", "auto"],
                   help="FAISS index type (default auto: exact below ~200k rows, IVF above)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the index already in -o (a folder holding other files is refused)")
    add_input_options(p)
    add_engine(p, "encoder actors embedding the input's chunks")
    p.set_defaults(func=_index, writes=("output",))

    p = sub.add_parser("search", help="nearest sentences of a saved index for each query")
    p.add_argument("index", type=path_arg, help="index folder from `xlsent index`")
    p.add_argument("query", nargs="*", help="query sentences")
    p.add_argument("--file", type=path_arg,
                   help="more queries, one a line (read as plain text whatever the file's extension); - "
                   "for standard input (default: none)")
    p.add_argument("-k", "--k", type=positive_int, default=5, help="results per query (default 5)")
    p.set_defaults(func=_search, writes=())


def _index(args: argparse.Namespace) -> int:
    from xlsent.api import index

    out = index(input_spec(args.input, args), args.output, model=args.model, backend=args.backend, kind=args.kind,
                overwrite=args.overwrite, engine=args.engine, ray=ray_config(args), progress=not args.quiet)
    print(f"wrote index {out}")
    return 0


def _search(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.data.text_input import InputSpec, iter_rows, readable
    from xlsent.mining.search_index import SentenceIndex, check_queries

    queries = list(args.query)
    if args.file:
        with readable(InputSpec(Path(args.file), format="txt")) as spec:
            queries += list(iter_rows(spec))
    check_queries(queries, args.file)
    index = SentenceIndex.open(args.index)
    for query, hits in zip(queries, index.search_sentences(queries, load(index.model), args.k), strict=True):
        print(f"query: {shortened(query)}")
        for hit in hits:
            print(f"  {hit.rank}. {hit.score:.4f}  [{hit.row + 1}] {hit.text}")
    return 0


def shortened(text: str, limit: int = 200) -> str:
    """``text``, cut to its first ``limit`` characters with a note of its length when it is longer.

    >>> shortened("abcdef", 3)
    'abc… (shortened: 6 characters)'
    """
    return text if len(text) <= limit else f"{text[:limit]}… (shortened: {len(text)} characters)"
