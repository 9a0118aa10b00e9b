"""``xlsent train``: train or adapt an encoder with one of the registered methods."""

from __future__ import annotations

import argparse
import shlex

from xlsent.cli.commands import Commands
from xlsent.cli.options import add_data, path_arg


def add_commands(sub: Commands) -> None:
    """Add ``train`` (its options, which list the registered methods, are built only when it is used)."""
    sub.add_lazy("train", _add_arguments, help="train or adapt an encoder with one of the papers' methods",
                 add_help=False,
                 description="Train METHOD into the model directory --out. The configuration is the method's "
                 "packaged defaults, overridden by each --config TOML file, then by each --set key=value (any "
                 "config key; values are typed and checked; steps must be >= 1 unless the method derives them, "
                 "and a TOML table must name a mode). --out must be new, empty or a killed run's folder. A killed "
                 "run continues with --resume; resuming with another configuration is an error, for a finished "
                 "model too: steps cannot grow on resume (a finished run is not extended), train into a new --out. "
                 "The result loads with `xlsent.load(OUT)` and works with every --model option. Mining with it at "
                 "`--threshold auto` needs its threshold calibrated: that takes about a quarter of an hour on CPU, "
                 "so it is not run here; the `xlsent calibrate` command is printed at the end.")


class _TrainHelp(argparse.Action):
    """``xlsent train --help``: the options, then every registered method (with METHOD: its config keys)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show this help (with METHOD: its config keys)")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from xlsent.mining.scorer_training import scorer_defaults_text
        from xlsent.training.method import available_methods, get_method

        parser.print_help()
        method = getattr(namespace, "method", None)
        if method:
            print(f"\nconfig keys of {method} (packaged defaults; override with --config FILE or --set key=value):\n")
            print(scorer_defaults_text() if method == "filter" else get_method(method).defaults_text())
        else:
            print("\nmethods:")
            for name, m in available_methods().items():
                modes = f" (modes: {', '.join(m.modes)})" if m.modes else ""
                print(f"  {name:<12} {m.summary}{modes}")
            print("\n`xlsent train METHOD --help` lists a method's config keys with their defaults and meaning.")
        parser.exit()


def _add_arguments(p: argparse.ArgumentParser) -> None:
    """``xlsent train``'s arguments (the registered methods are looked up only for this command)."""
    from xlsent.training.method import method_names

    p.add_argument("-h", "--help", action=_TrainHelp)
    p.add_argument("method", choices=[*method_names(), "filter"], metavar="METHOD",
                   help=" | ".join(method_names()) + " | filter (the learned scorer of `xlsent filter` for --model: "
                   "noisy bitexts made from the shipped pairs and your --bitext, see docs/filter.md)")
    p.add_argument("--out", "-o", required=True, type=path_arg, help="model directory to write")
    p.add_argument("--config", action="append", metavar="FILE", type=path_arg,
                   help="TOML file overriding the defaults (repeatable); the relative paths of its [[bitext]] tables "
                   "are read from its folder")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override one config key, e.g. --set steps=2000 --set pairs=de-en,ar-en (repeatable)")
    p.add_argument("--mode", help="the method's mode (picks the [MODE] table of the config), e.g. supervised")
    p.add_argument("--resume", action="store_true",
                   help="continue a killed run from its last checkpoint, with the same configuration (steps included)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], help="where to train (default: config, auto)")
    p.add_argument("--seed", type=_seed, help="random seed (default: config, 0)")
    p.add_argument("--bitext", action="append", default=[], metavar="LANG=FILE",
                   help="your own pairs of LANG with English (distill, laser; repeatable): FILE a TSV `text TAB "
                        "english`, a JSONL with the text under LANG or text and the English under en, or "
                        "FILE_X,FILE_EN two line-aligned files; a seeded part is held out to choose the checkpoint")
    p.add_argument("--bitext-only", action="store_true",
                   help="train on the --bitext pairs alone (default: they join the shipped bitext, replayed)")
    p.add_argument("--model", default=None, type=path_arg,
                   help="filter only: the encoder whose vectors the scorer's features use (default me5-small)")
    p.add_argument("--backend", default="auto", help="filter only: the encoder's backend (default auto)")
    p.add_argument("--ship", action="store_true",
                   help="filter only: also make it the scorer shipped for the model's name (maintainers)")
    add_data(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_train, writes=("out",))


def _seed(text: str) -> int:
    """argparse type of ``--seed``: a whole number from 0 to below 2**32 (what NumPy's generator takes)."""
    from xlsent.training.config import SEED_LIMIT

    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0 and < 2**32, not {text}")
    return value


def _train(args: argparse.Namespace) -> int:
    from xlsent.api import train

    if args.method == "filter":
        return _train_filter(args)
    if args.model is not None or args.ship:
        raise ValueError(f"--model and --ship are options of `xlsent train filter`, not of {args.method}")
    sets = list(args.set or [])
    sets += [f"{key}={value}" for key in ("seed", "device") if (value := getattr(args, key)) is not None]
    out = train(args.method, args.out, config_files=args.config or (), sets=sets, mode=args.mode,
                resume=args.resume, data=args.data, progress=not args.quiet, bitext=args.bitext,
                bitext_only=args.bitext_only)
    print(f"wrote model directory {out}")
    print(f"to mine with it at a calibrated threshold (`xlsent mine --threshold auto`), calibrate it (slow on CPU, so "
          f"not run here):\n  xlsent calibrate --model {shlex.quote(str(out))}")
    return 0


def _train_filter(args: argparse.Namespace) -> int:
    from xlsent.api import DEFAULT_MODEL, train_filter

    if args.resume or args.mode or args.device:
        raise ValueError("--resume, --mode and --device are options of the encoder methods, not of "
                         "`xlsent train filter` (it trains in a minute once the pairs are embedded; embeddings are "
                         "cached, so a second run starts where the first stopped)")
    sets = [*(args.set or []), *([f"seed={args.seed}"] if args.seed is not None else [])]
    path = train_filter(args.out, model=args.model or DEFAULT_MODEL, backend=args.backend,
                        config_files=args.config or (), sets=sets, bitext=args.bitext, bitext_only=args.bitext_only,
                        data=args.data, ship=args.ship, progress=not args.quiet)
    print(f"wrote filter scorer {path}")
    model, scorer = shlex.quote(args.model or DEFAULT_MODEL), shlex.quote(str(path))
    print(f"to filter with it:\n  xlsent filter PAIRS.tsv -o KEPT.tsv --model {model} --scorer {scorer}")
    return 0
