"""ABSent's P@k test sets as data: what each holds, and the sentences training must leave out."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.data import retrieval_pk
from xlsent.data.held_out import held_out_sentences, tatoeba_v1_sentences
from xlsent.testing import dataset_or_skip


@pytest.mark.data
def test_zero_shot_set_is_a_translation_triple_set_held_out_of_training() -> None:
    root = dataset_or_skip("parallel")
    dataset_or_skip("tatoeba_v1")
    test = retrieval_pk.load_set("deu-spa", root)
    assert (test.x_lang, test.y_lang, len(test.x)) == ("deu", "spa", 490)
    assert len(set(test.x)) == 490 and retrieval_pk.load_set("deu-spa", root).x == test.x  # seeded, distinct
    reserved = retrieval_pk.reserved_sentences(root)
    news = retrieval_pk.load_set("news-es", root)
    assert set(test.x) | set(test.y) | set(news.x) | set(news.y) <= reserved
    english = {e for d, _, e in retrieval_pk._challenge_triples(root) if d in set(test.x)}
    assert len(english) == 490 and english <= reserved
    with pytest.raises(ValueError, match="unknown retrieval_pk set"):
        retrieval_pk.load_set("xx-yy", root)
    assert held_out_sentences(root) == tatoeba_v1_sentences(root) | reserved


def test_a_newstest_set_says_how_many_lines_it_read_and_dropped(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    src = ["", *(f"de {i}" for i in range(1599)), "de 0", *(f"de more {i}" for i in range(10))]
    tgt = ["en blank", *(f"en {i}" for i in range(1599)), "en again", *(f"en more {i}" for i in range(10))]
    monkeypatch.setattr(retrieval_pk, "load_newstest", lambda year, a, b, root=None: (src, tgt))
    test = retrieval_pk.load_set("news-de", tmp_path)
    assert len(test.x) == 1600 and test.x[-1] == "de more 0"
    assert test.description == ("newstest2012 de-en, first 1602 lines: 1600 pairs (2 dropped: an empty side or a "
                                "repeated sentence)")
