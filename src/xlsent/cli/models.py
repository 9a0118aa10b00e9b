"""``xlsent models``: list the available encoders, or prepare the default one."""

from __future__ import annotations

import argparse

from xlsent.cli.commands import Commands


def add_commands(sub: Commands) -> None:
    """Add ``models``."""
    p = sub.add_parser("models", help="list the available encoders, or prepare the default one")
    p.add_argument("--prepare", action="store_true", help="convert the default model into the cache now")
    p.add_argument("--force", action="store_true", help="with --prepare: convert again even if cached")
    p.set_defaults(func=_models, writes=())


def _models(args: argparse.Namespace) -> int:
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
