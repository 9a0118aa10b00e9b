"""Character-level noise: one edit per chosen word, letters from the sentence, numbers and punctuation untouched."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.training.char_noise import noised, noised_all


def _distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


@pytest.mark.parametrize("sentence", ["Der Hund schläft im Garten.", "Собака спит в саду", "الكلب نائم في الحديقة",
                                      "a b c", "犬は庭で寝ています"])
def test_share_one_edits_every_word_once_with_the_sentences_own_letters(sentence: str) -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        out = noised(sentence, 1.0, rng)
        words, edited = sentence.split(), out.split()
        assert len(edited) == len(words)  # no word emptied, none split
        assert all(_distance(w, e) <= 1 for w, e in zip(words, edited, strict=True))  # at most one edit each
        assert set(out) <= set(sentence)  # inserted and substituted letters come from the sentence


def test_numbers_punctuation_and_letterless_sentences_stay() -> None:
    rng = np.random.default_rng(0)
    assert noised("2024 -- 3.5 %", 1.0, rng) == "2024 -- 3.5 %"
    assert noised("Der Hund schläft", 0.0, rng) == "Der Hund schläft"
    assert noised("", 1.0, rng) == ""
    assert all(noised("Zahl 2024 bleibt", 1.0, rng).split()[1] == "2024" for _ in range(10))


def test_the_share_of_words_edited_follows_the_setting() -> None:
    rng = np.random.default_rng(0)
    words = ["Haus", "Baum", "Katze", "Hund"] * 500
    out = noised(" ".join(words), 0.15, rng).split()
    assert 0.11 < np.mean([a != b for a, b in zip(words, out, strict=True)]) < 0.16  # a substitution may keep a word


def test_the_same_seed_gives_the_same_noise() -> None:
    sentences = ["Der Hund schläft im Garten.", "Die Katze auch."]
    a = noised_all(sentences, 0.5, np.random.default_rng([0, 3, 7]))
    assert a == noised_all(sentences, 0.5, np.random.default_rng([0, 3, 7]))
    assert len(a) == 2
