"""``--address``: what answers there is checked before Ray is asked to join it (Ray retries for minutes)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from xlsent.cluster import check_reachable

SETTINGS_FRAME = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


@contextmanager
def server_answering(reply: bytes) -> Iterator[int]:
    """A server on 127.0.0.1 that reads what a client sends first and answers ``reply``; yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(1024)
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


def test_a_web_server_at_the_address_is_named_not_joined() -> None:
    """A port that accepts connections but is no Ray cluster (a dashboard, a web server) passed the check, and Ray
    then retried for minutes."""
    with server_answering(b"HTTP/1.1 400 Bad Request\r\n\r\n") as port, pytest.raises(
            ValueError, match=f"--address 127.0.0.1:{port}: something answers there, but not a Ray cluster"):
        check_reachable(f"127.0.0.1:{port}")


def test_a_grpc_server_at_the_address_passes() -> None:
    """Ray's GCS speaks gRPC: it answers the HTTP/2 preface with a SETTINGS frame (checked by hand against a
    `ray start --head`)."""
    with server_answering(SETTINGS_FRAME) as port:
        check_reachable(f"127.0.0.1:{port}")
        check_reachable(f"ray://127.0.0.1:{port}")
