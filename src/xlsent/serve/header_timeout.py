"""A time limit on request headers: uvicorn's h11 protocol, closing a connection whose headers are not complete in time.

uvicorn times out idle keep-alive connections (``timeout_keep_alive``) but not a client that opens a connection and
sends its request headers slowly, or never: each such connection would stay open for good (a denial of service once
served beyond loopback). Here every connection gets ``seconds`` to complete the headers of each request, counted
from the connection opening or from the previous response; the body has its own limit (``body_timeout_s``, 408).
"""

from __future__ import annotations

import asyncio
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)


class _HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol that closes a connection whose request headers take longer than ``header_timeout_s``."""

    header_timeout_s: float = 10.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the headers are complete: the body has its own limit
            self._cancel_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
            log.info("%s: closed a connection that sent no complete request headers in %gs", client,
                     self.header_timeout_s)
            self.transport.close()


def header_timeout_protocol(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol (for ``uvicorn.Config(http=...)``) with ``seconds`` to complete each request's headers."""
    return type("HeaderTimeoutProtocol", (_HeaderTimeoutProtocol,), {"header_timeout_s": seconds})
