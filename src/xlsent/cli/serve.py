"""``xlsent serve``: encoders over HTTP (OpenAI's embeddings API, similarity, alignment, a page at ``/``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from xlsent.cli.commands import Commands
from xlsent.cli.options import MODEL_HELP, add_backend, path_arg


def add_commands(sub: Commands) -> None:
    """Add ``serve``."""
    sub.add_lazy(
        "serve", _add_arguments, help="serve encoders over HTTP: OpenAI's embeddings API, alignment, a page at /",
        description="Serve one or more encoders until Ctrl-C: POST /v1/embeddings (OpenAI's embeddings API; the "
        "official clients work against it), POST /v1/similarity and /v1/align (margin-scored pairs, as `xlsent "
        "mine`), GET /v1/models, /health, /ready, /metrics (Prometheus) and a page at / to align sentences by "
        "hand. Listens on 127.0.0.1 unless --host says otherwise. Each model has one worker that encodes "
        "concurrent requests together; limits, queue and timeouts come from --config (a TOML file of "
        "xlsent.serve.ServeSettings fields). The schema is at /openapi.json, a list of the routes at /docs "
        "(nothing loaded from a CDN).",
    )


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", action="append", metavar="[NAME=]MODEL", type=path_arg,
                   help=f"{MODEL_HELP}; clients ask for it by NAME (default: MODEL as written); repeat to serve "
                   "several, each with its own worker")
    add_backend(p)
    p.add_argument("--host", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--config", type=path_arg, help="TOML file of serve settings: limits, batching, queue, timeouts "
                   "(default: the built-in ones, see xlsent.serve.ServeSettings)")
    p.add_argument("--api-key-env", help="environment variable holding the API key that /v1/* requires "
                   "(default XLSENT_API_KEY; no key set: no key needed)")
    p.add_argument("--access-log", action="store_true", help="log one line per request (default: off)")
    p.set_defaults(func=_serve, writes=())


def served_models(specs: list[str] | None) -> dict[str, str]:
    """``NAME=MODEL`` or ``MODEL`` arguments -> {name clients use: model to load}; a name given twice is an error.

    >>> served_models(["me5-small", "de-en=models/absent-de-en"])
    {'me5-small': 'me5-small', 'de-en': 'models/absent-de-en'}
    """
    out: dict[str, str] = {}
    for spec in specs or ["me5-small"]:
        name, sep, model = spec.partition("=")
        name, model = (name, model) if sep and name and not Path(spec).exists() else (spec, spec)
        if name in out:
            raise ValueError(f"--model: the name {name!r} is given twice; serve a model under another name with "
                             "NAME=MODEL")
        out[name] = model
    return out


def _serve(args: argparse.Namespace) -> int:
    from functools import partial

    from xlsent.api import load
    from xlsent.serve import ServeSettings, run

    models = served_models(args.model)
    config = Path(args.config) if args.config else None
    settings, given = ServeSettings.load(config, {"host": args.host, "port": args.port,
                                                  "api_key_env": args.api_key_env})
    run({name: partial(load, model, args.backend) for name, model in models.items()}, settings,
        access_log=args.access_log, log_level="info", given=given)
    return 0
