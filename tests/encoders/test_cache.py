from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xlsent.encoders.cache import cache_dir, cached_encode, sentences_key
from xlsent.testing import LookupEncoder


class Counting(LookupEncoder):
    def __init__(self) -> None:
        super().__init__({"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0]}, name="counting")
        self.seen: list[list[str]] = []

    def encode(self, sentences: Sequence[str], lang: str | None = None, **kw: object) -> np.ndarray:
        self.seen.append(list(sentences))
        return super().encode(sentences, lang)


def test_cache_roundtrip_dedup_and_corruption(tmp_path: Path) -> None:
    enc = Counting()
    first = cached_encode(enc, ["b", "a", "b", "c"], "xx", root=tmp_path)
    assert enc.seen == [["a", "b", "c"]]
    np.testing.assert_allclose(first, LookupEncoder(enc.table).encode(["b", "a", "b", "c"]))
    again = cached_encode(enc, ["b", "a", "b", "c"], "xx", root=tmp_path)
    assert len(enc.seen) == 1 and np.array_equal(first, again)
    cached_encode(enc, ["b", "a", "b", "c"], "yy", root=tmp_path)
    assert len(enc.seen) == 2
    for f in cache_dir(enc, tmp_path).glob("*.npy"):
        f.write_bytes(b"garbage")
    np.testing.assert_allclose(cached_encode(enc, ["b", "a", "b", "c"], "xx", root=tmp_path), first)
    assert len(enc.seen) == 3


def test_key_is_unambiguous() -> None:
    assert sentences_key(["ab", "c"]) != sentences_key(["a", "bc"])
    assert sentences_key(["a"], "de") != sentences_key(["a"], "en")
