"""Character-level noise on training sentences: spelling variation for transfer to closely related languages.

Aepli & Sennrich (2022, "Improving Zero-Shot Cross-lingual Transfer Between Closely Related Languages by Injecting
Character-Level Noise") augment the data of a high-resource language with random character insertions, deletions
and substitutions, so that a model trained on it reads its dialects and neighbours (spelled differently) as well.
Here each word (a run of non-space characters holding a letter) is noised with probability ``share`` by one such
edit; the characters inserted or substituted are drawn from the sentence's own letters (its script and alphabet).
A script written without spaces (Chinese, Japanese, Thai) is one word a run, so it gets fewer edits.

>>> rng = np.random.default_rng(0)
>>> noised("der Hund schläft", 0.0, rng)
'der Hund schläft'
>>> changed = noised("der Hund schläft im Garten", 1.0, np.random.default_rng(1))
>>> changed != "der Hund schläft im Garten", len(changed.split()) == 5
(True, True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

WORD = re.compile(r"\S+")
EDITS = ("insert", "delete", "substitute")


def noised(sentence: str, share: float, rng: np.random.Generator) -> str:
    """``sentence`` with each of its words edited once (a letter inserted, deleted or substituted) with probability
    ``share``; words without a letter (numbers, punctuation) and sentences without letters are left as they are."""
    letters = [c for c in sentence if c.isalpha()]
    if share <= 0 or not letters:
        return sentence
    return WORD.sub(lambda m: _edit(m.group(), letters, rng) if rng.random() < share else m.group(), sentence)


def noised_all(sentences: Sequence[str], share: float, rng: np.random.Generator) -> list[str]:
    """:func:`noised` of each sentence, in order."""
    return [noised(s, share, rng) for s in sentences]


def _edit(word: str, letters: list[str], rng: np.random.Generator) -> str:
    """``word`` with one random edit at one of its letters (a word of one letter is never emptied)."""
    at = [i for i, c in enumerate(word) if c.isalpha()]
    if not at:
        return word
    i = at[int(rng.integers(len(at)))]
    letter = letters[int(rng.integers(len(letters)))]
    kind = EDITS[int(rng.integers(len(EDITS)))]
    if kind == "delete" and len(at) > 1:
        return word[:i] + word[i + 1:]
    if kind == "insert":
        return word[:i] + letter + word[i:]
    return word[:i] + letter + word[i + 1:]
