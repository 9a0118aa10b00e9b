"""Argument types and the options several commands share: the model, the output, how input text is read."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from xlsent.arg_types import positive_int
from xlsent.inference import CHOICES

if TYPE_CHECKING:
    from xlsent.cluster import RayConfig
    from xlsent.data.text_input import InputSpec

MODEL_HELP = "encoder: a registered name (me5-small, muse), a model directory, or module:function (default me5-small)"


def path_arg(text: str) -> str:
    """argparse type of an argument naming a file, a folder or a model: any text but the empty one (which the
    operating system would take for the current folder).

    >>> path_arg("out.tsv")
    'out.tsv'
    """
    if not text:
        raise argparse.ArgumentTypeError("empty value: give a file or folder (. for the current folder)")
    return text


def add_model(p: argparse.ArgumentParser, help: str = MODEL_HELP, default: str | None = "me5-small") -> None:
    """``--model``, the encoder a command uses (``default`` None: the command decides, and knows whether it was
    given), and ``--backend``, what runs it."""
    p.add_argument("--model", type=path_arg, default=default, help=help)
    add_backend(p)


def add_backend(p: argparse.ArgumentParser) -> None:
    """``--backend``, what runs transformer models."""
    p.add_argument("--backend", default="auto", choices=CHOICES,
                   help="inference backend of transformer models (default auto: the fastest that holds the accuracy "
                   "guard on this CPU, from the shipped table or, on a CPU class it lacks, measured once on first "
                   "use and kept under $XLSENT_HOME/auto; XLSENT_AUTO_MEASURE=0 skips that; LASER models: torch or "
                   "torch-bf16; bf16 and int8 backends give other vectors and so another encoder id)")


def add_engine(p: argparse.ArgumentParser, ray_does: str) -> None:
    """``--engine``, ``--address``, ``--num-cpus`` and ``--cpus-per-task``; ``ray_does``: what the Ray engine runs
    (``encoder actors and one k-NN task per shard``) and what one task reserves CPUs for."""
    p.add_argument("--engine", default="local", choices=["local", "ray"],
                   help=f"local: one process (default); ray: {ray_does} on a Ray cluster (see --address); both "
                   "resumable")
    p.add_argument("--address", help="with --engine ray: join this Ray cluster (default: start Ray locally, also "
                   "where another Ray runs on this machine or RAY_ADDRESS is set)")
    p.add_argument("--num-cpus", type=positive_int,
                   help="with --engine ray and no --address: CPUs for local Ray (default: all cores)")
    p.add_argument("--cpus-per-task", type=positive_int,
                   help="with --engine ray: CPUs each actor and task reserves, and the BLAS, OpenMP and torch threads "
                   "it runs with (default 1)")


def ray_config(args: argparse.Namespace) -> RayConfig | None:
    """The :class:`~xlsent.cluster.RayConfig` of :func:`add_engine`'s flags (None with ``--engine local``)."""
    from xlsent.cluster import RayConfig

    if args.engine != "ray":
        given = [flag for flag, value in (("--address", args.address), ("--num-cpus", args.num_cpus),
                                          ("--cpus-per-task", args.cpus_per_task)) if value is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: options of --engine ray, which this run does not use; add "
                             "--engine ray or leave them out")
        return None
    return RayConfig(address=args.address, num_cpus=args.num_cpus, cpus_per_task=args.cpus_per_task or 1)


def add_data(p: argparse.ArgumentParser) -> None:
    """``--data``, the benchmark data folder."""
    p.add_argument("--data", type=path_arg, help="benchmark data folder (default $XLSENT_DATA or ../shared/data)")


def add_output(p: argparse.ArgumentParser, help: str, default: str | None = None) -> None:
    """``-o/--output``, the one spelling of every command's output (``--out`` still accepted where it was)."""
    p.add_argument("-o", "--output", type=path_arg, required=default is None, default=default, help=help)
    if default is not None:
        p.add_argument("--out", dest="output", type=path_arg, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_input_options(p: argparse.ArgumentParser) -> None:
    """How input text files are read (``--format``, ``--column``, ``--header``, ``--field``), and ``--quiet``."""
    p.add_argument("--format", default="auto", choices=["auto", "txt", "tsv", "jsonl", "parquet"],
                   help="input format (default auto: from the extension; - and names without one are txt)")
    p.add_argument("--column", help="TSV: 0-based column index or header name (default 0); Parquet: column name "
                   "(default text)")
    p.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                   help="TSV: line 1 is a header and is skipped (--header) or is data (--no-header); required for "
                   "TSV input unless --column names a header column (default: none, so TSV input must say)")
    p.add_argument("--field", help="JSONL: field holding the text, a string or null (an empty row) in every line "
                   "(default text)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")


def input_spec(path: str, args: argparse.Namespace) -> InputSpec:
    """The input file ``path`` read as the options of :func:`add_input_options` say."""
    from xlsent.data.text_input import InputSpec

    return InputSpec(Path(path), args.format, args.column, args.field, args.header)
