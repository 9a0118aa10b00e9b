"""``/v1/embeddings`` (OpenAI's API) on the tiny random transformer: vectors, formats, token counts, windows."""

from __future__ import annotations

import base64

import httpx
import numpy as np
import pytest

from xlsent.encoders.transformer import TransformerEncoder

TEXTS = ["the dog barks", "der hund bellt", "a cat runs"]


def vectors(body: dict) -> np.ndarray:
    out = []
    for item in body["data"]:
        e = item["embedding"]
        out.append(np.frombuffer(base64.b64decode(e), dtype="<f4") if isinstance(e, str) else np.asarray(e))
    return np.stack(out)


@pytest.mark.parametrize("encoding_format", ["float", "base64"])
@pytest.mark.parametrize("path", ["/v1/embeddings", "/embeddings"])
def test_vectors_are_the_library_encoders(toy_server, tiny_encoder: TransformerEncoder, encoding_format: str,
                                          path: str) -> None:
    r = httpx.post(toy_server.url + path, json={"input": TEXTS, "model": "tiny", "encoding_format": encoding_format,
                                                "user": "someone"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "list" and body["model"] == "tiny"
    assert [(d["object"], d["index"]) for d in body["data"]] == [("embedding", i) for i in range(3)]
    assert isinstance(body["data"][0]["embedding"], str if encoding_format == "base64" else list)
    np.testing.assert_allclose(vectors(body), tiny_encoder.encode(TEXTS), atol=1e-6)
    tokens = sum(len(ids) + 2 for ids in tiny_encoder.content_ids(TEXTS))
    assert body["usage"] == {"prompt_tokens": tokens, "total_tokens": tokens}
    assert r.headers["X-Xlsent-Windowed"] == "0" and "X-Xlsent-Windowed-Inputs" not in r.headers


def test_a_single_string_and_dimensions(toy_server, tiny_encoder: TransformerEncoder) -> None:
    r = httpx.post(toy_server.url + "/v1/embeddings", json={"input": "the dog barks", "model": "tiny",
                                                             "dimensions": 8})
    assert r.status_code == 200, r.text
    got = vectors(r.json())
    full = tiny_encoder.encode(["the dog barks"])[0]
    assert got.shape == (1, 8)
    np.testing.assert_allclose(got[0], full[:8] / np.linalg.norm(full[:8]), atol=1e-6)
    r = httpx.post(toy_server.url + "/v1/embeddings", json={"input": "x", "model": "tiny", "dimensions": 33})
    assert r.status_code == 400 and r.json()["error"]["param"] == "dimensions"


def test_long_inputs_are_windowed_never_cut_and_reported(toy_server, tiny_encoder: TransformerEncoder) -> None:
    long = "the dog barks and the cat runs " * 30  # far over the tiny model's 64-token window
    texts = ["a cat", long, "the dog", long + "again"]
    r = httpx.post(toy_server.url + "/v1/embeddings", json={"input": texts, "model": "tiny"})
    assert r.status_code == 200, r.text
    assert r.headers["X-Xlsent-Windowed"] == "2" and r.headers["X-Xlsent-Windowed-Inputs"] == "1,3"
    np.testing.assert_allclose(vectors(r.json()), tiny_encoder.encode(texts), atol=1e-6)
    content = len(tiny_encoder.content_ids([long])[0])
    windows = -(-content // (tiny_encoder.max_tokens - 2))
    assert windows > 1
    one = httpx.post(toy_server.url + "/v1/embeddings", json={"input": long, "model": "tiny"}).json()
    assert one["usage"]["prompt_tokens"] == content + 2 * windows


def test_models_list_and_card(toy_server) -> None:
    listed = httpx.get(toy_server.url + "/v1/models").json()
    assert listed["object"] == "list"
    assert [(m["id"], m["object"], m["owned_by"], m["dim"], m["ready"]) for m in listed["data"]] == [
        ("tiny", "model", "xlsent", 32, True)]
    assert httpx.get(toy_server.url + "/v1/models/tiny").json()["id"] == "tiny"
    missing = httpx.get(toy_server.url + "/v1/models/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "model_not_found"


def test_a_model_whose_id_is_a_path_has_its_card(serve, tiny_encoder) -> None:
    with serve({"/work/models/tiny": tiny_encoder}) as live:
        card = httpx.get(live.url + "/v1/models//work/models/tiny")
        assert card.status_code == 200 and card.json()["id"] == "/work/models/tiny"
        assert httpx.get(live.url + "/v1/models/%2Fwork%2Fmodels%2Ftiny").json()["id"] == "/work/models/tiny"


def test_health_ready_and_metrics(toy_server) -> None:
    assert httpx.get(toy_server.url + "/health").json() == {"status": "ok"}
    assert httpx.get(toy_server.url + "/ready").json() == {"status": "ready", "models": {"tiny": "ready"}}
    httpx.post(toy_server.url + "/v1/embeddings", json={"input": "x", "model": "nope"})
    # a model's series appear once it has encoded: encode here, the test may run alone or first on its worker
    assert httpx.post(toy_server.url + "/v1/embeddings", json={"input": "x", "model": "tiny"}).status_code == 200
    text = httpx.get(toy_server.url + "/metrics").text
    for name in ("xlsent_queue_requests", "xlsent_batch_inputs_bucket", "xlsent_batch_tokens_bucket",
                 "xlsent_tokenize_seconds_bucket", "xlsent_queue_seconds_bucket", "xlsent_inference_seconds_bucket"):
        assert f'{name}{{' in text, name
    assert 'xlsent_requests_total{path="/v1/embeddings",status="404"}' in text


def test_a_request_is_tokenized_once(tiny_model_dir, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.serve.conftest import serving

    encoder = TransformerEncoder(tiny_model_dir)
    expected = encoder.encode(TEXTS)
    calls: list[int] = []
    tokenize = encoder.content_ids
    monkeypatch.setattr(encoder, "content_ids", lambda texts: calls.append(len(texts)) or tokenize(texts))
    with serving({"tiny": encoder}) as live:
        calls.clear()  # the warm-up's
        r = httpx.post(live.url + "/v1/embeddings", json={"input": TEXTS, "model": "tiny"})
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(vectors(r.json()), expected, atol=1e-6)
    assert calls == [3]  # the handler's, to count the tokens; the worker encodes those ids


def test_a_large_answer_is_made_off_the_event_loop(serve, tiny_encoder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Turning a large answer into JSON (a 1024 x 1024 matrix: 20 MB, about a second) held every other request while
    it ran on the event loop. Here the JSON of a matrix waits until ``/health`` has answered: on the event loop, the
    two would wait for each other."""
    import json
    import threading

    entered, answered = threading.Event(), threading.Event()
    dumps = json.dumps

    def slow_dumps(obj: object, **kwargs: object) -> str:
        if isinstance(obj, dict) and "matrix" in obj:
            entered.set()
            answered.wait(10)
        return dumps(obj, **kwargs)

    monkeypatch.setattr(json, "dumps", slow_dumps)
    with serve({"tiny": tiny_encoder}) as live:
        results: list[int] = []
        request = threading.Thread(target=lambda: results.append(httpx.post(
            live.url + "/v1/similarity", json={"src": ["a"], "tgt": ["b"], "model": "tiny"}, timeout=30).status_code))
        request.start()
        assert entered.wait(10)
        assert httpx.get(live.url + "/health", timeout=5).status_code == 200
        answered.set()
        request.join(30)
        assert results == [200]
