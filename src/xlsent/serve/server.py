"""Running the application under uvicorn, with a shutdown that answers every accepted request."""

from __future__ import annotations

import logging
import signal
import socket
from collections.abc import Mapping
from types import FrameType

import uvicorn
from fastapi import FastAPI

from xlsent.encoders.base import Encoder
from xlsent.serve.app import create_app
from xlsent.serve.binding import bind
from xlsent.serve.engine import Engine, ModelSource
from xlsent.serve.header_timeout import header_timeout_protocol
from xlsent.serve.settings import Given, ServeSettings, api_key

log = logging.getLogger(__name__)


class Server(uvicorn.Server):
    """uvicorn's server, which on shutdown first tells the engine: new requests get 503, queued ones get the grace
    period to finish (then 503), while uvicorn stops accepting connections and waits for the open ones.

    With ``stop_on_load_failure``, a model that fails to load stops the server and :attr:`failure` says why.
    """

    def __init__(self, app: FastAPI, settings: ServeSettings, *, log_level: str = "info", access_log: bool = False,
                 stop_on_load_failure: bool = False) -> None:
        config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=log_level, server_header=False,
                                http=header_timeout_protocol(settings.header_timeout_s),
                                timeout_graceful_shutdown=int(settings.shutdown_grace_s + settings.request_timeout_s)
                                + 1, lifespan="on", access_log=access_log)
        super().__init__(config)
        self.engine: Engine = app.state.engine
        self.stop_on_load_failure = stop_on_load_failure
        self.failure: str | None = None
        self.interrupted = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Remember a Ctrl-C, so that :func:`run` reports it even where uvicorn does not re-raise the signal."""
        self.interrupted = self.interrupted or sig == signal.SIGINT
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        if self.stop_on_load_failure and self.failure is None:
            failed = [f"model {w.name!r} failed to load: {w.failure}" for w in self.engine.workers.values()
                      if w.failure]
            if failed:
                self.failure = "; ".join(failed)
                return True
        return await super().on_tick(counter)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if sockets is not None and self.started:  # uvicorn says where it listens only on sockets it bound itself
            self._log_started_message(sockets)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.engine.begin_shutdown()
        await super().shutdown(sockets)


def load_models(models: Mapping[str, ModelSource]) -> dict[str, Encoder]:
    """Every model of ``models`` loaded: an encoder as it is, a function called; ValueError naming the model that
    fails to load, and why (without a traceback: the cause is the model, not the server)."""
    loaded = {}
    for name, source in models.items():
        if isinstance(source, Encoder):
            loaded[name] = source
            continue
        log.info("loading model %r", name)
        try:
            loaded[name] = source()
        except Exception as exc:  # whatever stops a model loading is reported as its failure
            raise ValueError(f"model {name!r} failed to load: {exc}") from None
    return loaded


def run(models: Mapping[str, ModelSource], settings: ServeSettings | None = None, *, log_level: str = "info",
        access_log: bool = False, given: Mapping[str, Given] | None = None) -> None:
    """Serve ``models`` (name -> encoder, or a function loading it) until interrupted (Ctrl-C, SIGTERM); with
    ``access_log``, log a line per request. Every model is loaded before the port is bound, so one that cannot load
    stops the start with its own error and no connection is ever accepted; one that fails its warm-up stops the
    server; an address that cannot be bound (a port in use, an unknown host) is one sentence with the fix
    (:func:`xlsent.serve.binding.bind`), naming ``host`` and ``port`` as ``given`` says the user gave them (a flag,
    a settings file's key; by default as set in code): ValueError says why."""
    settings = settings or ServeSettings()
    key = api_key(settings.api_key_env)
    models = load_models(models)
    server = Server(create_app(models, settings), settings, log_level=log_level, access_log=access_log,
                    stop_on_load_failure=True)
    with bind(settings.host, settings.port, given) as sock:
        if settings.host not in ("127.0.0.1", "localhost", "::1") and not key:
            log.warning("serving on %s, reachable from other machines, without an API key (set %s)", settings.host,
                        settings.api_key_env)
        server.run(sockets=[sock])
    if server.failure:
        raise ValueError(server.failure)
    if server.interrupted:
        raise KeyboardInterrupt
