"""ASGI middleware that guards the application before a route runs: the API key, the body's size and the time
a client takes to send it. Each answers in OpenAI's error envelope."""

from __future__ import annotations

import asyncio
import hmac
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from xlsent.serve.errors import ApiError, error_response

PROTECTED = ("/v1/", "/embeddings")
"""Paths that need the API key when one is set (``/``, ``/health``, ``/ready``, ``/metrics`` and the schema do
not)."""


def needs_key(path: str) -> bool:
    """Whether ``path`` is behind the API key.

    >>> needs_key("/v1/embeddings"), needs_key("/embeddings"), needs_key("/health")
    (True, True, False)
    """
    return path.startswith(PROTECTED)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value)
    return None


class ApiKeyGuard:
    """Refuses (401) a protected request whose ``Authorization: Bearer KEY`` is not ``key``, compared in constant
    time; with no key (empty), everything passes."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.key = key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.key or not needs_key(scope["path"]):
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"authorization") or b""
        scheme, _, token = given.partition(b" ")
        if scheme.lower() != b"bearer" or not token:
            error = ApiError(401, "missing API key: send the header 'Authorization: Bearer KEY'",
                             code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})
        elif not hmac.compare_digest(token.strip(), self.key):
            error = ApiError(401, "incorrect API key", code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})
        else:
            await self.app(scope, receive, send)
            return
        await error_response(error)(scope, receive, send)


DRAIN_FACTOR = 4
"""A body refused as too large is still read (and dropped) before the 413 is sent, where it holds at most this many
times the limit: a server that answers and closes while the client is still sending makes the client's kernel see a
reset, and most clients (httpx, the OpenAI client) then report a broken connection, and retry, instead of the 413.
A larger declared body is refused at once, unread."""


async def _drain(receive: Receive, most: int, deadline: float) -> None:
    """Read and drop the rest of a request's body: at most ``most`` bytes, until ``deadline``."""
    dropped = 0
    while dropped <= most:
        try:
            message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0))
        except TimeoutError:
            return
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            return
        dropped += len(message.get("body", b""))


class BodyGuard:
    """Reads a request's whole body before the application sees it: more than ``max_bytes`` (declared or sent)
    is refused with 413 (after the rest of a body up to :data:`DRAIN_FACTOR` times the limit is read and dropped),
    a body not complete within ``timeout_s`` with 408."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            body = await self._read(scope, receive)
        except ApiError as error:
            error.headers["Connection"] = "close"
            await error_response(error)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self, size: str) -> ApiError:
        return ApiError(413, f"the body ({size}) is over the limit of {self.max_bytes} bytes: send fewer or shorter "
                        "inputs per request", code="body_too_large")

    async def _read(self, scope: Scope, receive: Receive) -> bytes:
        deadline = time.monotonic() + self.timeout_s
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > self.max_bytes:
            if int(declared) <= DRAIN_FACTOR * self.max_bytes:
                await _drain(receive, DRAIN_FACTOR * self.max_bytes, deadline)
            raise self._too_large(f"{int(declared)} bytes")
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            try:
                message: dict[str, Any] = dict(await asyncio.wait_for(receive(), deadline - time.monotonic()))
            except TimeoutError:
                raise ApiError(408, f"the body was not received within {self.timeout_s:g} s",
                               code="request_timeout") from None
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                if message.get("more_body", False):
                    await _drain(receive, DRAIN_FACTOR * self.max_bytes, deadline)
                raise self._too_large(f"over {self.max_bytes} bytes so far")
            chunks.append(chunk)
            more = message.get("more_body", False)
        return b"".join(chunks)
