"""The listening socket of ``xlsent serve``, bound by xlsent rather than uvicorn, so that an address that cannot be
bound (a port in use, a host this machine does not have) is one sentence naming the cause and the fix instead of
uvicorn's raw message and exit code."""

from __future__ import annotations

import errno
import socket

FIX_PORT = "choose another --port (0 picks a free one)"


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` as uvicorn binds one (``SO_REUSEADDR``; IPv6 for an address holding
    ``:``), not yet listening; ValueError naming the cause and the fix when it cannot be bound."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise ValueError(bind_failure(host, port, exc)) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:
        sock.close()
        raise ValueError(bind_failure(host, port, exc)) from None
    sock.set_inheritable(True)
    return sock


def bind_failure(host: str, port: int, exc: BaseException) -> str:
    """One sentence: why ``host``:``port`` could not be bound (``exc``) and what to do.

    >>> bind_failure("127.0.0.1", 8000, OSError(errno.EADDRINUSE, "Address already in use"))
    '--port 8000: the port is in use on 127.0.0.1 (another server, or an xlsent serve still running?): stop that \
server, or choose another --port (0 picks a free one)'
    >>> bind_failure("127.0.0.1", 70000, OverflowError("bind(): port must be 0-65535."))
    '--port 70000: a port is a whole number from 0 to 65535; choose another --port (0 picks a free one)'
    """
    if isinstance(exc, OverflowError):
        return f"--port {port}: a port is a whole number from 0 to 65535; {FIX_PORT}"
    if isinstance(exc, socket.gaierror):
        return (f"--host {host}: not an address or a host name this machine can resolve ({exc.strerror}); use "
                "127.0.0.1 (this machine only), 0.0.0.0 (every interface) or one of this machine's addresses")
    code = exc.errno if isinstance(exc, OSError) else None
    if code == errno.EADDRINUSE:
        return (f"--port {port}: the port is in use on {host} (another server, or an xlsent serve still running?): "
                f"stop that server, or {FIX_PORT}")
    if code == errno.EADDRNOTAVAIL:
        return (f"--host {host}: this machine has no such address; use 127.0.0.1 (this machine only), 0.0.0.0 "
                "(every interface) or one of this machine's addresses")
    if code == errno.EACCES:
        return f"--port {port}: binding it needs privileges this user lacks (ports below 1024 need root); {FIX_PORT}"
    if code == errno.EAFNOSUPPORT:
        return f"--host {host}: this machine does not support that address family (IPv6?); use 127.0.0.1 or 0.0.0.0"
    return f"--host {host} --port {port}: cannot listen there ({exc}); {FIX_PORT}, or another --host"
