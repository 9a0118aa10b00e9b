"""Hostile and malformed requests against a real server on 127.0.0.1: each gets a clear 4xx in OpenAI's envelope,
and the server answers normally right after."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

from xlsent.serve import ServeSettings

BIG = 1_000_000


def raw(**body: object) -> bytes:
    return json.dumps(body).encode()


CASES = {
    "malformed JSON": (b'{"input": ["a", "model": "tiny"', 400, "invalid_json"),
    "not UTF-8": (b'{"input": "\xff\xfe", "model": "tiny"}', 400, None),
    "not an object": (b'["a"]', 422, "invalid_type"),
    "no body": (b"", 422, "invalid_type"),
    "input of a wrong type": (raw(input=3, model="tiny"), 422, "invalid_type"),
    "inputs of a wrong type": (raw(input=["a", 3], model="tiny"), 422, "invalid_type"),
    "token ids instead of text": (raw(input=[[1, 2, 3]], model="tiny"), 422, "invalid_type"),
    "model of a wrong type": (raw(input="a", model=["tiny"]), 422, "invalid_type"),
    "unknown encoding format": (raw(input="a", model="tiny", encoding_format="int8"), 422, "invalid_value"),
    "dimensions 0": (raw(input="a", model="tiny", dimensions=0), 422, "invalid_value"),
    "missing model": (raw(input="a"), 422, "invalid_value"),
    "empty list": (raw(input=[], model="tiny"), 422, "invalid_value"),
    "empty string": (raw(input="", model="tiny"), 400, "empty_input"),
    "blank string in a list": (raw(input=["a", "  \n"], model="tiny"), 400, "empty_input"),
    "invisible characters only": (raw(input=["a", "\u200b\u200c\ufeff\u00ad\x01"], model="tiny"), 400, "empty_input"),
    "default-ignorable characters only": (raw(input=["a", "\ufe0f\u3164\u034f\u17b4"], model="tiny"), 400,
                                          "empty_input"),
    "2049 inputs": (raw(input=["a"] * 2049, model="tiny"), 422, "invalid_value"),
    "a 1 MB string": (raw(input="a" * BIG, model="tiny"), 413, "input_too_long"),
    "NUL byte": (raw(input="the dog\x00barks", model="tiny"), 400, "invalid_text"),
    "lone surrogate": (b'{"input": ["ok", "\\udc80 half a pair"], "model": "tiny"}', 400, "invalid_text"),
    "unknown model": (raw(input="a", model="gpt-4"), 404, "model_not_found"),
    "body over the size limit": (raw(input=["word " * 1000] * 500, model="tiny"), 413, "body_too_large"),
}


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (it does, after these errors)."""
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def assert_still_healthy(url: str) -> None:
    assert httpx.get(url + "/health", timeout=5).json() == {"status": "ok"}
    r = httpx.post(url + "/v1/embeddings", json={"input": "the dog barks", "model": "tiny"}, timeout=10)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("case", list(CASES))
def test_bad_request_gets_a_clear_4xx(toy_server, case: str) -> None:
    body, status, code = CASES[case]
    r = httpx.post(toy_server.url + "/v1/embeddings", content=body, headers={"Content-Type": "application/json"},
                   timeout=30)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    if code:
        assert error["code"] == code
    assert_still_healthy(toy_server.url)


@pytest.mark.parametrize("body", [{"src": [], "tgt": ["a"]}, {"src": ["a"], "tgt": ["b"], "k": 0},
                                  {"src": ["a"], "tgt": ["b"], "threshold": "nan"}, {"src": ["a"], "tgt": [""]},
                                  {"src": ["a"], "tgt": ["b"], "model": "nope"}, {"src": ["a"], "tgt": ["b"], "x": 1}])
@pytest.mark.parametrize("path", ["/v1/similarity", "/v1/align"])
def test_bad_pairs_request(toy_server, path: str, body: dict) -> None:
    r = httpx.post(toy_server.url + path, json=body)
    assert 400 <= r.status_code < 500 and r.json()["error"]["message"], r.text


def test_too_many_pairs(serve, tiny_encoder) -> None:
    with serve({"tiny": tiny_encoder}, ServeSettings(max_matrix_cells=6)) as live:
        r = httpx.post(live.url + "/v1/similarity", json={"src": ["a", "b", "c"], "tgt": ["a", "b", "c"]})
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_many_pairs"


def test_token_limits(serve, tiny_encoder) -> None:
    with serve({"tiny": tiny_encoder}, ServeSettings(max_input_tokens=20, max_request_tokens=30)) as live:
        r = httpx.post(live.url + "/v1/embeddings", json={"input": ["the dog"] * 3 + ["the dog barks " * 10],
                                                          "model": "tiny"})
        assert r.status_code == 413 and r.json()["error"]["param"] == "input[3]"
        r = httpx.post(live.url + "/v1/embeddings", json={"input": ["the dog barks"] * 6, "model": "tiny"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_long"


PAIR = {"src": ["a b c d e", "abcd"], "tgt": ["a b c d e", "abcd"]}  # 20 tokens a side for the tiny model


@pytest.mark.parametrize("path", ["/v1/similarity", "/v1/align"])
@pytest.mark.parametrize("queue_tokens", [30, 60])
def test_pair_limits_count_src_and_tgt_together(serve, tiny_encoder, path: str, queue_tokens: int) -> None:
    """max_request_tokens bounds src and tgt together, as /v1/embeddings bounds its inputs: a pair over it got a
    429 that no retry could ever clear (its sides queued apart: the second found the first in a queue of 30
    tokens), or was answered with more tokens than a request may hold."""
    settings = ServeSettings(max_request_tokens=30, max_queue_tokens=queue_tokens)
    with serve({"tiny": tiny_encoder}, settings) as live:
        r = httpx.post(live.url + "/v1/embeddings", json={"input": PAIR["src"] + PAIR["tgt"], "model": "tiny"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_long", r.text
        r = httpx.post(live.url + path, json=PAIR)
        assert r.status_code == 413, r.text
        assert r.json()["error"] == {"message": "src and tgt have 40 tokens in all (20 + 20); at most 30 per request",
                                     "type": "invalid_request_error", "param": "tgt", "code": "request_too_long"}
        r = httpx.post(live.url + path, json={"src": PAIR["src"], "tgt": PAIR["tgt"][1:]})
        assert r.status_code == 200, r.text
        assert 20 < r.json()["usage"]["total_tokens"] <= 30  # within the limit: one that fits is queued


def test_pair_character_limit_counts_src_and_tgt_together(serve, tiny_encoder) -> None:
    with serve({"tiny": tiny_encoder}, ServeSettings(max_request_chars=10)) as live:
        r = httpx.post(live.url + "/v1/similarity", json={"src": ["abcdef"], "tgt": ["ghijkl"]})
        assert r.status_code == 413 and r.json()["error"]["message"] == (
            "src and tgt have 12 characters in all (6 + 6); at most 10 per request"), r.text
        assert r.json()["error"]["param"] == "tgt" and r.json()["error"]["code"] == "request_too_long"
        assert httpx.post(live.url + "/v1/similarity", json={"src": ["abcdef"], "tgt": ["ghij"]}).status_code == 200


def test_api_key(serve, tiny_encoder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_TEST_KEY", "s3cret-key")
    with serve({"tiny": tiny_encoder}, ServeSettings(api_key_env="XLSENT_TEST_KEY")) as live:
        body = {"input": "the dog", "model": "tiny"}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-key"},
                        {"Authorization": "Bearer s3cret-ke"}, {"Authorization": "Basic s3cret-key"}):
            r = httpx.post(live.url + "/v1/embeddings", json=body, headers=headers)
            assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key", headers
            assert r.headers["WWW-Authenticate"] == "Bearer"
        assert httpx.get(live.url + "/v1/models").status_code == 401
        assert httpx.post(live.url + "/embeddings", json=body).status_code == 401
        ok = httpx.post(live.url + "/v1/embeddings", json=body, headers={"Authorization": "Bearer s3cret-key"})
        assert ok.status_code == 200
        for open_path in ("/health", "/ready", "/metrics", "/"):
            assert httpx.get(live.url + open_path).status_code == 200


def test_slow_client_gets_408_and_does_not_block_others(serve, tiny_encoder) -> None:
    with serve({"tiny": tiny_encoder}, ServeSettings(body_timeout_s=0.5)) as live:
        body = raw(input="the dog barks", model="tiny")
        start = time.monotonic()
        with socket.create_connection(("127.0.0.1", live.port), timeout=10) as sock:
            sock.sendall(b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])
            assert_still_healthy(live.url)  # the stalled client holds no one up
            answer = read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b'"code": "request_timeout"' in answer
        assert time.monotonic() - start < 5
        assert_still_healthy(live.url)


def test_connections_that_never_finish_their_headers_are_closed(serve, tiny_encoder) -> None:
    with serve({"tiny": tiny_encoder}, ServeSettings(header_timeout_s=0.5)) as live:
        start = time.monotonic()
        socks = [socket.create_connection(("127.0.0.1", live.port), timeout=10) for _ in range(3)]
        socks[0].sendall(b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\n")  # headers begun, never finished
        socks[1].sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")  # answered, then idle on keep-alive
        for sock in socks:  # socks[2] sends nothing at all
            read_until_closed(sock)
            sock.close()
        assert time.monotonic() - start < 5
        assert_still_healthy(live.url)


SEND_JSON = "send a JSON object with the header Content-Type: application/json"
BODY_CAUSES = {
    "wrong Content-Type": ({"Content-Type": "text/plain"}, raw(input="a", model="tiny"), 415,
                           f"the body has Content-Type text/plain, not application/json: {SEND_JSON}"),
    "no Content-Type": ({}, raw(input="a", model="tiny"), 415,
                        f"the body has no Content-Type, so it is not JSON: {SEND_JSON}"),
    "form body": ({"Content-Type": "application/x-www-form-urlencoded"}, b"input=a&model=tiny", 415,
                  "the body is a form (Content-Type application/x-www-form-urlencoded, as HTML forms and curl -d or -F "
                  f"send one), not JSON: {SEND_JSON}"),
    "token ids": ({"Content-Type": "application/json"}, raw(input=[[101, 2023, 102]], model="tiny"), 422,
                  "input: token ids are not accepted, as xlsent tokenizes the text itself: send the text as a string "
                  "or a list of strings"),
    "flat token ids": ({"Content-Type": "application/json"}, raw(input=[101, 2023], model="tiny"), 422,
                       "input: token ids are not accepted"),
    "latin-1 body": ({"Content-Type": "application/json"}, '{"input": "café", "model": "tiny"}'.encode("latin-1"),
                     400, "the body is not UTF-8 (byte 0xe9 at offset 14; latin-1 or cp1252 text?): encode the JSON "
                     "as UTF-8"),
}


@pytest.mark.parametrize("case", list(BODY_CAUSES))
def test_a_request_body_error_names_its_cause(toy_server, case: str) -> None:
    headers, body, status, message = BODY_CAUSES[case]
    r = httpx.post(toy_server.url + "/v1/embeddings", content=body, headers=headers, timeout=30)
    assert r.status_code == status, r.text
    assert r.json()["error"]["message"].startswith(message), r.text
    assert_still_healthy(toy_server.url)


def test_docs_load_nothing_from_another_host(toy_server) -> None:
    page = httpx.get(toy_server.url + "/docs", timeout=5)
    assert page.status_code == 200 and "/v1/embeddings" in page.text and 'href="/openapi.json"' in page.text
    assert "http://" not in page.text and "https://" not in page.text and "//cdn" not in page.text


def test_head_health_answers_200(toy_server) -> None:
    r = httpx.head(toy_server.url + "/health", timeout=5)
    assert r.status_code == 200 and r.content == b""


def test_oversized_declared_length_is_refused_before_reading(serve, tiny_encoder) -> None:
    with serve({"tiny": tiny_encoder}, ServeSettings(max_body_bytes=1000)) as live:
        with socket.create_connection(("127.0.0.1", live.port), timeout=10) as sock:
            sock.sendall(b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 50000000\r\n\r\n")
            answer = read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 413") and b"body_too_large" in answer
        assert_still_healthy(live.url)


@pytest.mark.parametrize(("inputs", "param"), [(["x", None], "input[1]"), (["x", "y", 1, True], "input[2]"),
                                               ([["x"]], "input[0]")])
def test_a_bad_item_of_the_input_list_is_named(toy_server, inputs: list, param: str) -> None:
    """A list with a bad item fits neither alternative of ``input`` (a string, a list of strings): the problem is the
    item, not that the list is no string."""
    r = httpx.post(toy_server.url + "/v1/embeddings", json={"input": inputs, "model": "tiny"}, timeout=10)
    error = r.json()["error"]
    assert r.status_code == 422 and error["param"] == param, error
    assert error["message"].startswith(f"{param}: Input should be a valid string"), error
