from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from xlsent.encoders.cache import sentences_key
from xlsent.encoders.layer_cache import (
    LayerCacheError,
    cached_layer_pooled,
    layer_cache_path,
    load_layer_cache,
)
from xlsent.encoders.transformer import TransformerEncoder

SENTS = ["the dog barks", "", "der hund bellt", "a cat runs fast", "the dog barks"]
OTHER = ["the cat", "b"]


def test_round_trip_matches_layer_pooled_and_reads_from_disk(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    sums, counts = cached_layer_pooled(tiny_encoder, SENTS, "en", root=tmp_path)
    ref_sums, ref_counts = tiny_encoder.layer_pooled(SENTS)
    assert sums.shape == (len(SENTS), tiny_encoder.num_layers + 1, tiny_encoder.dim) and sums.dtype == np.float32
    np.testing.assert_array_equal(counts, ref_counts)
    scale = np.abs(ref_sums).max(axis=2, keepdims=True) + 1e-6
    assert np.abs(sums - ref_sums).max(initial=0) <= 1e-3 * scale.max()  # float16 means
    assert not sums[1].any() and counts[1] == 0
    path = layer_cache_path(tiny_encoder, sentences_key(SENTS, "en"), tmp_path)
    assert path.is_file()
    with np.load(path, allow_pickle=False) as npz:
        assert npz["means"].dtype == np.float16

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("recomputed although cached")

    monkeypatch.setattr(tiny_encoder, "layer_pooled", fail)
    again, again_counts = cached_layer_pooled(tiny_encoder, SENTS, "en", root=tmp_path)
    np.testing.assert_array_equal(again, sums)
    np.testing.assert_array_equal(again_counts, counts)


def test_key_mismatch_is_detected_and_recomputed(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    cached_layer_pooled(tiny_encoder, SENTS, root=tmp_path)
    wrong = layer_cache_path(tiny_encoder, sentences_key(SENTS), tmp_path)
    other = layer_cache_path(tiny_encoder, sentences_key(OTHER), tmp_path)
    shutil.copy(wrong, other)  # a file at OTHER's place that holds SENTS
    dims = {"rows": len(OTHER), "layers": tiny_encoder.num_layers + 1, "dim": tiny_encoder.dim}
    with pytest.raises(LayerCacheError, match="other sentences"):
        load_layer_cache(other, key=sentences_key(OTHER), encoder=tiny_encoder.id, **dims)
    with pytest.raises(LayerCacheError, match="made by"):
        load_layer_cache(wrong, key=sentences_key(SENTS), encoder="another@123",
                         **{**dims, "rows": len(SENTS)})
    with caplog.at_level(logging.WARNING, logger="xlsent.encoders.layer_cache"):
        sums, counts = cached_layer_pooled(tiny_encoder, OTHER, root=tmp_path)
    assert "unusable layer cache" in caplog.text
    assert sums.shape[0] == len(OTHER)
    np.testing.assert_array_equal(counts, tiny_encoder.layer_pooled(OTHER)[1])
    load_layer_cache(other, key=sentences_key(OTHER), encoder=tiny_encoder.id, **dims)  # rewritten correctly


def test_language_is_part_of_the_key(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    cached_layer_pooled(tiny_encoder, OTHER, "de", root=tmp_path)
    assert not layer_cache_path(tiny_encoder, sentences_key(OTHER, "en"), tmp_path).exists()
    assert layer_cache_path(tiny_encoder, sentences_key(OTHER, "de"), tmp_path).is_file()
