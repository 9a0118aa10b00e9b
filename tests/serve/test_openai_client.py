"""Acceptance: the official ``openai`` client, pointed at ``xlsent serve`` (a real uvicorn on a free port) with the
real default model, gets the vectors ``xlsent embed`` writes for the same lines, with its default base64 and with
float, long inputs included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xlsent.api import EmbedOptions, embed_file
from xlsent.data.text_input import InputSpec
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.serve import ServeSettings
from xlsent.store import load_embeddings

pytestmark = pytest.mark.integration

TEXTS = ["Der Hund bellt im Garten.", "The dog is barking in the garden.", "¿Dónde está la estación de tren?",
         "東京は日本の首都です。", "Ein sehr langer Absatz über Hunde, Katzen und das Wetter. " * 60]


def test_openai_client_gets_the_vectors_of_xlsent_embed(serve, default_encoder: TransformerEncoder, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    lines = tmp_path / "lines.txt"
    lines.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    embed_file(InputSpec(lines), tmp_path / "vecs.npy", default_encoder, EmbedOptions(progress=False))
    expected, _ = load_embeddings(tmp_path / "vecs.npy")
    monkeypatch.setenv("XLSENT_API_KEY", "test-key")
    with serve({"me5-small": default_encoder}, ServeSettings()) as live:
        client = openai.OpenAI(base_url=live.url + "/v1", api_key="test-key", max_retries=0, timeout=120)
        for encoding_format in (openai.NOT_GIVEN, "float"):  # the client's default asks for base64
            raw = client.embeddings.with_raw_response.create(model="me5-small", input=TEXTS,
                                                             encoding_format=encoding_format)
            response = raw.parse()
            assert raw.headers["x-xlsent-windowed"] == "1" and raw.headers["x-xlsent-windowed-inputs"] == "4"
            got = np.array([d.embedding for d in response.data], dtype=np.float32)
            assert got.shape == (len(TEXTS), 384) and [d.index for d in response.data] == list(range(len(TEXTS)))
            cosines = np.sum(got * np.asarray(expected), axis=1) / np.linalg.norm(got, axis=1)
            assert cosines.min() >= 0.9999, cosines
            ids = default_encoder.content_ids(TEXTS)
            windows = [-(-len(i) // (default_encoder.max_tokens - 2)) for i in ids]
            assert windows == [1, 1, 1, 1, 2]
            tokens = sum(len(i) for i in ids) + 2 * sum(windows)  # <s> and </s> in every window
            assert response.usage.prompt_tokens == response.usage.total_tokens == tokens
        short = client.embeddings.create(model="me5-small", input="Guten Morgen", dimensions=128)
        assert len(short.data[0].embedding) == 128
        assert np.linalg.norm(short.data[0].embedding) == pytest.approx(1.0, abs=1e-5)
        assert [m.id for m in client.models.list()] == ["me5-small"]
        with pytest.raises(openai.NotFoundError):
            client.embeddings.create(model="text-embedding-3-small", input="x")
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=live.url + "/v1", api_key="wrong", max_retries=0).embeddings.create(
                model="me5-small", input="x")
        with pytest.raises(openai.BadRequestError, match="empty"):
            client.embeddings.create(model="me5-small", input="")
