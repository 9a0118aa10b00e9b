"""The ``xlsent`` command line: parse arguments, call the library, print. One module per command group.

A command group is a module of this package with ``add_commands(sub)``, which adds its commands to the parser;
listing the module in :data:`COMMAND_GROUPS` makes them part of ``xlsent``. Handlers import the library only
when they run, so that ``xlsent --help`` starts fast. Every command declares the arguments naming what it writes
(``set_defaults(writes=(DEST, ...))``, ``()`` for none): :func:`main` holds their output locks for the whole run
(:mod:`xlsent.output_lock`), so two runs never write one output at once.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import import_module
from types import FrameType
from typing import cast

from xlsent.cli.commands import Commands, Handler
from xlsent.output_lock import exclusive_outputs
from xlsent.version import __version__

COMMAND_GROUPS = ("models", "embed", "export", "evaluate", "mine", "filter", "split", "align", "search", "serve",
                  "train", "report", "demo")
"""The modules of this package that add commands, in the order ``xlsent --help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every ``xlsent`` command."""
    parser = argparse.ArgumentParser(
        prog="xlsent",
        description="Cross-lingual sentence embeddings: embed text, mine translations, train and evaluate.",
    )
    parser.add_argument("--version", action="version", version=f"xlsent {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging: -v info, -vv debug (default: warnings only)")
    parser.register("action", "parsers", Commands)
    sub = cast(Commands, parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    for group in COMMAND_GROUPS:
        import_module(f"{__name__}.{group}").add_commands(sub)
    return parser


def _stdout_closed() -> int:
    """Point standard output at /dev/null so the interpreter's final flush does not fail again; exit 1."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


class Terminated(KeyboardInterrupt):
    """The run was stopped by SIGTERM (sent by ``timeout``, Slurm, Kubernetes, systemd): a ``KeyboardInterrupt``, so
    that it unwinds the cleanup that Ctrl-C does."""


def _stop(signum: int, frame: FrameType | None) -> None:
    """Stop the run on SIGINT or SIGTERM, once: the cleanup it starts is not interrupted by a further Ctrl-C (ignored
    from now until the process ends, as it joins its threads) and a further SIGTERM ends the process at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


@contextmanager
def _signals_stop_the_run() -> Iterator[None]:
    """Within the block, SIGTERM stops the run as Ctrl-C does (:class:`Terminated`), and a second of either does not
    break into the cleanup of the first (:func:`_stop`). A signal whose default the process did not inherit (SIGINT
    ignored in a background job) is left alone; so is every signal outside the main thread. Where neither signal came,
    the handlers are as before after the block; where one came, the process is ending and they stay as
    :func:`_stop` left them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    before = {sig: signal.getsignal(sig) for sig in defaults}
    ours = [sig for sig, default in defaults.items() if before[sig] is default]
    for sig in ours:
        signal.signal(sig, _stop)
    try:
        yield
    finally:
        for sig in ours:
            if signal.getsignal(sig) is _stop:
                signal.signal(sig, before[sig])


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``xlsent`` console script."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse has printed (exit code 2)
        return exc.code if isinstance(exc.code, int) else 2
    except BrokenPipeError:  # help read by a pipe that closed early, e.g. `xlsent train dual-pivot --help | head`
        return _stdout_closed()
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        handler: Handler = args.func
        outputs = [getattr(args, dest) for dest in args.writes]  # an optional output not asked for is None
        with _signals_stop_the_run(), exclusive_outputs(o for o in outputs if o is not None):  # one run per output
            return handler(args)
    except BrokenPipeError:  # standard output closed early, e.g. `xlsent mine a b -o - | head`
        return _stdout_closed()
    except (FileNotFoundError, ValueError, FileExistsError) as exc:  # what was asked for cannot be done: usage
        print(f"xlsent: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine failed the run (permissions, a full disk)
        print(f"xlsent: error: {exc}", file=sys.stderr)
        return 1
    except Terminated:
        print("xlsent: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("xlsent: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
