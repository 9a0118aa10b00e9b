from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from safetensors.torch import load_file, save_file

from xlsent.encoders.batching import Window
from xlsent.encoders.model_dir import ModelDirError, read_manifest, write_manifest
from xlsent.encoders.registry import load_encoder
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.testing import make_tiny_model_dir

SENTS = ["the dog barks", "der hund bellt", "a cat runs", "the cat", "b", "the dog runs fast and the cat barks"]


def test_rows_are_unit_and_in_input_order(tiny_encoder: TransformerEncoder) -> None:
    vecs = tiny_encoder.encode(SENTS)
    assert vecs.shape == (len(SENTS), 32) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    reversed_vecs = tiny_encoder.encode(SENTS[::-1])
    np.testing.assert_allclose(reversed_vecs[::-1], vecs, atol=1e-6)


def test_vector_does_not_depend_on_batch(tiny_encoder: TransformerEncoder) -> None:
    together = tiny_encoder.encode(SENTS, batch_tokens=10_000)
    for i, s in enumerate(SENTS):
        alone = tiny_encoder.encode([s], batch_tokens=1)
        assert np.abs(alone[0] - together[i]).max() <= 1e-5


def test_surrounding_whitespace_is_no_token(tiny_encoder: TransformerEncoder) -> None:
    """The tokenizer would read trailing spaces as word marks: "x" and "x  " would differ (sentence-transformers, and
    `mine --unify`, take them as one sentence)."""
    vecs = tiny_encoder.encode(["the dog barks", "  the dog barks \t ", "the dog barks  "])
    np.testing.assert_array_equal(vecs[1], vecs[0])
    np.testing.assert_array_equal(vecs[2], vecs[0])


def test_empty_rows_are_zero(tiny_encoder: TransformerEncoder) -> None:
    vecs = tiny_encoder.encode(["the dog", "", "   ", "the cat"])
    assert not vecs[1].any() and not vecs[2].any()
    assert np.linalg.norm(vecs[0]) == pytest.approx(1.0, abs=1e-5)
    assert tiny_encoder.encode([]).shape == (0, 32)


def test_long_input_is_windowed_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    enc = TransformerEncoder(make_tiny_model_dir(tmp_path / "m", max_positions=8))
    long_text = "the dog barks " * 10
    with caplog.at_level(logging.WARNING):
        vec = enc.encode([long_text])[0]
    assert "1 input(s) longer than 8 tokens" in caplog.text
    ids = enc.content_ids([long_text])[0]
    assert len(ids) > 6
    windows = [ids[i : i + 6] for i in range(0, len(ids), 6)]
    sums, counts = enc._run([Window(0, w) for w in windows], 100, False, False, 1)
    means = sums[:, 0] / counts[:, None]
    weights = np.array([len(w) for w in windows], dtype=np.float32)
    expected = (means * weights[:, None]).sum(0)
    np.testing.assert_allclose(vec, expected / np.linalg.norm(expected), atol=1e-5)


def test_layer_pooled_matches_encode(tiny_encoder: TransformerEncoder) -> None:
    sums, counts = tiny_encoder.layer_pooled(SENTS[:3])
    assert sums.shape == (3, 3, 32)
    last = sums[:, -1] / counts[:, None]
    last /= np.linalg.norm(last, axis=1, keepdims=True)
    np.testing.assert_allclose(last, tiny_encoder.encode(SENTS[:3]), atol=1e-5)


def test_encode_content_matches_encode(tiny_encoder: TransformerEncoder) -> None:
    texts = [*SENTS[:3], "the dog barks and the cat runs " * 30]  # the last over the 64-token window
    np.testing.assert_allclose(tiny_encoder.encode_content(tiny_encoder.content_ids(texts)),
                               tiny_encoder.encode(texts), atol=1e-6)


def test_corrupt_model_dir_errors(tmp_path: Path) -> None:
    d = make_tiny_model_dir(tmp_path / "m")
    weights = d / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(ModelDirError, match="corrupt or partial"):
        TransformerEncoder(d)
    with pytest.raises(ModelDirError, match="not an xlsent model directory"):
        load_encoder(tmp_path)
    with pytest.raises(ValueError, match="unknown model"):
        load_encoder("no-such-model")


def test_progress_counts_whole_texts_up_to_their_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inputs split into windows: the bar still counts texts, in whole numbers, and ends at their number (it showed
    fractions, as 0.43 of a text per window)."""
    import xlsent.encoders.transformer as transformer

    seen: list[float] = []

    class Bar:
        def __init__(self, total: int, **kw: object) -> None:
            self.total, self.n = total, 0.0

        def update(self, k: float) -> None:
            self.n += k
            seen.append(self.n)

        def close(self) -> None:
            pass

    monkeypatch.setattr(transformer, "tqdm", Bar)
    enc = TransformerEncoder(make_tiny_model_dir(tmp_path / "m", max_positions=8))
    enc.encode(["the dog barks " * 10, "a cat", "the dog barks " * 7], batch_tokens=9, progress=True)
    assert len(seen) > 3 and all(n == int(n) and 0 <= n <= 3 for n in seen) and seen[-1] == 3


def edited_copy(model_dir: Path, out: Path, edit: Callable[[Path], None]) -> Path:
    """A copy of ``model_dir`` at ``out`` with ``edit`` applied, its manifest written again (so its checksums pass)."""
    copy = Path(shutil.copytree(model_dir, out))
    edit(copy)
    manifest = read_manifest(copy, verify="none")
    write_manifest(copy, {k: v for k, v in manifest.items() if k not in ("files", "format_version")})
    return copy


def test_a_model_directory_with_nan_weights_is_an_error_naming_the_tensor(
        tiny_model_dir: Path, tmp_path: Path, nan_row: Callable[[Path, str], None]) -> None:
    """A NaN in a row the check sentence at load does not use: the weights are checked, not only its vector."""
    model = edited_copy(tiny_model_dir, tmp_path / "m", lambda d: nan_row(d / "model.safetensors",
                                                                          "embeddings.word_embeddings.weight"))
    with pytest.raises(ModelDirError, match=r"m/model.safetensors: tensor embeddings.word_embeddings.weight holds "
                                            "values that are not finite numbers"):
        load_encoder(model)


def test_a_model_directory_whose_tokenizer_passes_its_vocabulary_is_an_error(tiny_model_dir: Path,
                                                                             tmp_path: Path) -> None:
    def smaller_vocabulary(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        (folder / "config.json").write_text(json.dumps({**config, "vocab_size": 40}), encoding="utf-8")
        state = load_file(str(folder / "model.safetensors"))
        name = "embeddings.word_embeddings.weight"
        save_file({**state, name: state[name][:40].clone()}, str(folder / "model.safetensors"))

    model = edited_copy(tiny_model_dir, tmp_path / "m", smaller_vocabulary)
    with pytest.raises(ModelDirError, match=r"m/tokenizer.json: gives token ids up to 50, but .*m/config.json has "
                                            r"vocab_size 40 \(ids 0 to 39\)"):
        load_encoder(model)
