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


def test_long_lists_resume_from_their_finished_parts(tmp_path: Path, monkeypatch) -> None:
    import pytest

    import xlsent.encoders.cache as cache

    monkeypatch.setattr(cache, "PART_ROWS", 2)
    words = [f"w{i}" for i in range(7)]
    table = {w: [float(i), 1.0] for i, w in enumerate(words)}

    class Failing(LookupEncoder):
        def __init__(self, fail_at: int) -> None:
            super().__init__(table, name="parts")
            self.calls: list[list[str]] = []
            self.fail_at = fail_at

        def encode(self, sentences: Sequence[str], lang: str | None = None, **kw: object) -> np.ndarray:
            if len(self.calls) == self.fail_at:
                raise KeyboardInterrupt
            self.calls.append(list(sentences))
            return super().encode(sentences, lang)

    sentences = [*words, "w0"]
    with pytest.raises(KeyboardInterrupt):
        cached_encode(Failing(fail_at=2), sentences, root=tmp_path)
    resumed = Failing(fail_at=-1)
    vecs = cached_encode(resumed, sentences, root=tmp_path)
    assert resumed.calls == [["w4", "w5"], ["w6"]]  # the first two parts were kept
    np.testing.assert_allclose(vecs, LookupEncoder(table).encode(sentences))
    assert not list(cache_dir(resumed, tmp_path).glob("*.parts"))


def test_vectors_of_an_older_reading_of_the_text_are_not_read(tmp_path: Path) -> None:
    """A cache folder of before surrounding whitespace was stripped (named by the encoder id alone) holds other
    vectors for padded sentences: never read, the sentences are encoded again."""
    enc = Counting()
    cached_encode(enc, ["a", "b"], "xx", root=tmp_path)
    folder = cache_dir(enc, tmp_path)
    older = tmp_path / "counting"
    folder.rename(older)  # as an older xlsent named it
    cached_encode(enc, ["a", "b"], "xx", root=tmp_path)
    assert len(enc.seen) == 2 and folder.name != older.name
