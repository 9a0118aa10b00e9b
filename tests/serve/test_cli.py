"""``xlsent serve`` as a user runs it: a process on 127.0.0.1 that serves until interrupted, and a model that cannot
be loaded stopping it with a message."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from xlsent.cli import main


def xlsent(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "xlsent.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def ready_url(proc: subprocess.Popen[str]) -> str:
    """The address the ``xlsent serve`` process ``proc`` says it runs on, once its models are ready."""
    url = None
    deadline = time.monotonic() + 120
    assert proc.stdout is not None
    while url is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        assert line, f"xlsent serve ended early (exit {proc.poll()})"
        if found := re.search(r"running on (http://127\.0\.0\.1:\d+)", line):
            url = found.group(1)
    assert url, "no 'running on' line"
    while httpx.get(url + "/ready", timeout=5).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    return url


def test_serve_runs_until_interrupted(tiny_model_dir: Path) -> None:
    proc = xlsent("serve", "--model", f"tiny={tiny_model_dir}", "--backend", "torch", "--port", "0")
    try:
        url = ready_url(proc)
        r = httpx.post(url + "/v1/embeddings", json={"input": "the dog barks", "model": "tiny"}, timeout=30)
        assert r.status_code == 200 and len(r.json()["data"][0]["embedding"]) == 32
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=30)
        assert proc.returncode == 130  # stopped by Ctrl-C, after a graceful shutdown
        assert "Application shutdown complete" in rest and "xlsent: interrupted" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)



def test_an_oversized_body_gets_its_413_not_a_reset(tiny_model_dir: Path) -> None:
    """A body over the limit (sent whole, as clients send it before reading the answer) is read and dropped before
    the 413: a server answering and closing while it was still arriving made the client's kernel reset the
    connection, and httpx (the OpenAI client's transport) reported a broken connection in most tries (a server in
    its own process, as users run it; one in the test's process did not show it)."""
    proc = xlsent("serve", "--model", f"tiny={tiny_model_dir}", "--backend", "torch", "--port", "0")
    try:
        url = ready_url(proc)
        body = json.dumps({"input": ["a" * 49_000] * 100, "model": "tiny"}).encode()  # 4.9 MB: over 2 MiB
        for _ in range(6):
            with httpx.Client(timeout=30) as client:
                assert client.get(url + "/health").status_code == 200
                r = client.post(url + "/v1/embeddings", content=body, headers={"Content-Type": "application/json"})
                assert r.status_code == 413 and r.json()["error"]["code"] == "body_too_large"
    finally:
        proc.kill()
        proc.wait(10)

def output_of(proc: subprocess.Popen[str]) -> str:
    """All that ``proc``, which should end by itself, says (killed if it does not end within 120 s)."""
    try:
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    return output


def test_a_model_that_cannot_load_stops_serve_with_a_message() -> None:
    proc = xlsent("serve", "--model", "no-such-model", "--port", "0")
    output = output_of(proc)
    assert proc.returncode == 2
    assert "xlsent: error: model 'no-such-model' failed to load" in output and "unknown model" in output
    assert "Uvicorn running" not in output and "Traceback" not in output, output  # refused before the port is bound


def test_an_unset_api_key_variable_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XLSENT_TEST_UNSET_KEY", raising=False)
    proc = xlsent("serve", "--model", "no-such-model", "--api-key-env", "XLSENT_TEST_UNSET_KEY", "--port", "0")
    output = output_of(proc)
    assert proc.returncode == 2, output
    assert ("xlsent: error: --api-key-env XLSENT_TEST_UNSET_KEY: that environment variable is not set (or empty), "
            "so /v1/* would need no key") in output


@pytest.mark.parametrize("case", ["port in use", "address not on this machine"])
def test_an_address_that_cannot_be_bound_is_one_sentence(case: str, tiny_model_dir: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Bound by xlsent after the models load: the cause and the fix in one line, not uvicorn's raw message."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        host = "127.0.0.1" if case == "port in use" else "203.0.113.7"  # TEST-NET-3: no machine's own address
        assert main(["serve", "--model", f"tiny={tiny_model_dir}", "--backend", "torch", "--host", host, "--port",
                     str(port)]) == 2
    err = capsys.readouterr().err
    expected = (f"xlsent: error: --port {port}: the port is in use on 127.0.0.1 (another server, or an xlsent serve "
                "still running?): stop that server, or choose another --port (0 picks a free one)"
                if case == "port in use" else
                "xlsent: error: --host 203.0.113.7: this machine has no such address; use 127.0.0.1")
    assert expected in err, err
    assert "Traceback" not in err and "Errno" not in err and "Uvicorn running" not in err


@pytest.mark.parametrize("case", ["port in use", "address not on this machine"])
def test_an_address_from_the_config_file_is_named_as_its_key(case: str, tiny_model_dir: Path,
                                                             tmp_path: Path) -> None:
    """The messages named --port and --host, options the user had not given; and the warning of a host reachable
    from other machines came before the host was refused."""
    config = tmp_path / "serve.toml"
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        host = "127.0.0.1" if case == "port in use" else "203.0.113.7"  # TEST-NET-3: no machine's own address
        config.write_text(f'host = "{host}"\nport = {port}\n', encoding="utf-8")
        proc = xlsent("serve", "--model", f"tiny={tiny_model_dir}", "--backend", "torch", "--config", str(config))
        output = output_of(proc)
    assert proc.returncode == 2, output
    expected = (f"xlsent: error: {config}: port = {port}: the port is in use on 127.0.0.1 (another server, or an "
                f"xlsent serve still running?): stop that server, or choose another port in {config} (0 picks a "
                "free one)" if case == "port in use" else
                f"xlsent: error: {config}: host = '203.0.113.7': this machine has no such address; use 127.0.0.1")
    assert expected in output, output
    assert "--port" not in output and "--host" not in output and "serving on" not in output, output


def test_an_empty_host_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """It bound every interface and said it served on ``http://:PORT``."""
    assert main(["serve", "--model", "no-such-model", "--host", "", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "xlsent: error: invalid serve settings: host must be an address or a host name" in err, err


def test_an_unset_api_key_variable_in_the_config_file_is_refused_at_start(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As --api-key-env: the server started with no API key at all, silently."""
    monkeypatch.delenv("XLSENT_TEST_UNSET_KEY", raising=False)
    config = tmp_path / "serve.toml"
    config.write_text('api_key_env = "XLSENT_TEST_UNSET_KEY"\n', encoding="utf-8")
    assert main(["serve", "--model", "no-such-model", "--config", str(config), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert (f"xlsent: error: {config}: api_key_env = 'XLSENT_TEST_UNSET_KEY': that environment variable is not set "
            f"(or empty), so /v1/* would need no key; export XLSENT_TEST_UNSET_KEY=YOUR-KEY first, or leave out "
            f"api_key_env in {config}") in err, err
