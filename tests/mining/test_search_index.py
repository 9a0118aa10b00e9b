"""Saved sentence indexes: searched with sentences, only by the encoder that built them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from xlsent.data.text_input import InputSpec
from xlsent.mining.search_index import SentenceIndex, build_sentence_index
from xlsent.testing import LookupEncoder

TABLE: dict[str, Sequence[float]] = {"the dog barks": [1.0, 0.0, 0.0], "a cat runs": [0.0, 1.0, 0.0],
                                     "der hund bellt": [0.9, 0.1, 0.0]}


def test_search_sentences_needs_the_encoder_that_built_the_index(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(s + "\n" for s in TABLE), encoding="utf-8")
    build_sentence_index(InputSpec(corpus), tmp_path / "idx", LookupEncoder(TABLE, name="built"), "built",
                         kind="flat", progress=False)
    index = SentenceIndex.open(tmp_path / "idx")
    [hits] = index.search_sentences(["der hund bellt"], LookupEncoder(TABLE, name="built"), k=2)
    assert [hit.text for hit in hits] == ["der hund bellt", "the dog barks"]
    with pytest.raises(ValueError, match=r"idx was built with built, but built is now other; rebuild the index"):
        index.search_sentences(["x"], LookupEncoder(TABLE, name="other"))
