"""``xlsent models``: list the available encoders (the registered ones and the folders of ``$XLSENT_MODELS``), or
prepare the default one."""

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

    if args.force and not args.prepare:
        raise ValueError("--force converts the default model again, with --prepare: `xlsent models --prepare --force`")
    if args.prepare:
        from xlsent.encoders.me5_convert import prepare_default_model

        print(f"default model ready in {prepare_default_model(force=args.force)}")
        return 0
    print(f"{'name':<11} {'dim':>4}  {'languages':<24} description")
    for info in REGISTERED.values():
        print(f"{info.name:<11} {info.dim:>4}  {info.languages:<24} {info.description}")
    _print_local_models()
    print("\nAny directory written by `xlsent train` or `xlsent export`, any sentence-transformers folder and any "
          "Hugging Face model folder (BERT, RoBERTa, XLM-RoBERTa) works wherever a name does.")
    return 0


def _print_local_models() -> None:
    """The folders of ``$XLSENT_MODELS``, where it is set."""
    from xlsent.encoders.local_models import MODELS_ENV, local_models

    found = local_models()
    if not found:
        return
    print(f"\nfolders in ${MODELS_ENV}:")
    print(f"{'name':<32} {'dim':>4}  {'kind':<22} path")
    for m in found:
        dim = str(m.dim) if m.dim is not None else "-"
        print(f"{m.name:<32} {dim:>4}  {m.kind:<22} {m.path}" + (f"  ({m.problem})" if m.problem else ""))
