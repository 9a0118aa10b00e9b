"""The listening socket of ``xlsent serve``, bound by xlsent rather than uvicorn, so that an address that cannot be
bound (a port in use, a host this machine does not have) is one sentence naming the cause and the fix instead of
uvicorn's raw message and exit code."""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping

from xlsent.serve.settings import Given


def bind(host: str, port: int, given: Mapping[str, Given] | None = None) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` as uvicorn binds one (``SO_REUSEADDR``; IPv6 for an address holding
    ``:``), not yet listening; ValueError naming the cause and the fix when it cannot be bound, and the settings as
    ``given`` says the user gave them (by default as set in code: ``host``, ``port``)."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise ValueError(bind_failure(host, port, exc, given)) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:
        sock.close()
        raise ValueError(bind_failure(host, port, exc, given)) from None
    sock.set_inheritable(True)
    return sock


def bind_failure(host: str, port: int, exc: BaseException, given: Mapping[str, Given] | None = None) -> str:
    """One sentence: why ``host``:``port`` could not be bound (``exc``) and what to do, naming the settings as
    ``given`` says the user gave them (by default as set in code).

    >>> bind_failure("127.0.0.1", 8000, OSError(errno.EADDRINUSE, "Address already in use"), {"port": Given("--port")})
    '--port 8000: the port is in use on 127.0.0.1 (another server, or an xlsent serve still running?): stop that \
server, or choose another --port (0 picks a free one)'
    >>> from pathlib import Path
    >>> bind_failure("127.0.0.1", 70000, OverflowError("bind(): port must be 0-65535."),
    ...              {"port": Given("port", Path("serve.toml"))})
    'serve.toml: port = 70000: a port is a whole number from 0 to 65535; choose another port in serve.toml (0 picks \
a free one)'
    >>> bind_failure("10.99.99.99", 8000, OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address"))
    "host 10.99.99.99: this machine has no such address; use 127.0.0.1 (this machine only), 0.0.0.0 (every \
interface) or one of this machine's addresses"
    """
    given = given or {}
    host_as, port_as = given.get("host", Given("host")), given.get("port", Given("port"))
    named_host, named_port = host_as.value(host), port_as.value(port)
    fix_port = f"choose another {port_as.where} (0 picks a free one)"
    if isinstance(exc, OverflowError):
        return f"{named_port}: a port is a whole number from 0 to 65535; {fix_port}"
    if isinstance(exc, socket.gaierror):
        return (f"{named_host}: not an address or a host name this machine can resolve ({exc.strerror}); use "
                "127.0.0.1 (this machine only), 0.0.0.0 (every interface) or one of this machine's addresses")
    code = exc.errno if isinstance(exc, OSError) else None
    if code == errno.EADDRINUSE:
        return (f"{named_port}: the port is in use on {host} (another server, or an xlsent serve still running?): "
                f"stop that server, or {fix_port}")
    if code == errno.EADDRNOTAVAIL:
        return (f"{named_host}: this machine has no such address; use 127.0.0.1 (this machine only), 0.0.0.0 "
                "(every interface) or one of this machine's addresses")
    if code == errno.EACCES:
        return f"{named_port}: binding it needs privileges this user lacks (ports below 1024 need root); {fix_port}"
    if code == errno.EAFNOSUPPORT:
        return f"{named_host}: this machine does not support that address family (IPv6?); use 127.0.0.1 or 0.0.0.0"
    return f"{named_host}, {named_port}: cannot listen there ({exc}); {fix_port}, or another {host_as.where}"
