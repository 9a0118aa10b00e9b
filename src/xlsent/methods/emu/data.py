"""EMU's training data: labelled xSID utterances of the training languages (minus the held-out ones) and the
sentences the language discriminator sees.

Labelled: xSID 0.7 *valid* of each training language (the test split stays for evaluation), minus ``valid_size``
ids held out for validation (stratified by intent, the same ids in every language). Adversarial sentences, per
adversarial language: ``random`` draws unrelated sentences from :data:`UNLABELLED_SOURCE` (without the Tatoeba v1
test pairs and without any xSID utterance), ``parallel`` takes the xSID valid translations of the training
utterances.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.data.parallel import load_tatoeba_challenge
from xlsent.data.xsid import load_xsid
from xlsent.encoders.cache import sentences_key
from xlsent.languages import TATOEBA_CHALLENGE
from xlsent.methods.emu.config import EmuConfig

UNLABELLED_SOURCE = "Tatoeba-Challenge test v2021-08-07, non-English side"


@dataclass(frozen=True)
class Sentences:
    """Sentences of one language with, where known, their xSID ids (shared by translations) and intent indices."""

    lang: str
    texts: list[str]
    ids: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, rows: Sequence[int]) -> Sentences:
        """The given rows, in that order."""
        return Sentences(self.lang, [self.texts[i] for i in rows], [self.ids[i] for i in rows] if self.ids else [],
                         [self.labels[i] for i in rows] if self.labels else [])


@dataclass(frozen=True)
class EmuData:
    """Labelled training and held-out utterances per training language, and adversarial sentences per language."""

    intents: list[str]
    train: dict[str, Sentences]
    valid: dict[str, Sentences]
    adversarial: dict[str, Sentences]
    summary: dict[str, Any] = field(default_factory=dict)

    def key(self) -> dict[str, Any]:
        """Checksums of every sentence list (a resumed run must see the same data)."""
        return {role: {lang: sentences_key(s.texts + s.ids + [str(x) for x in s.labels], lang)
                       for lang, s in sets.items()}
                for role, sets in (("train", self.train), ("valid", self.valid), ("adversarial", self.adversarial))}


def held_out_ids(ids: Sequence[str], intents: Sequence[str], size: int, seed: int) -> set[str]:
    """``size`` ids set aside for validation, stratified by intent (largest remainder), each intent keeping at
    least one training utterance (so fewer than ``size`` when that cannot be met).

    >>> sorted(held_out_ids([str(i) for i in range(10)], ["a"] * 6 + ["b"] * 3 + ["c"], 5, seed=0), key=int)
    ['2', '3', '5', '6', '7']
    """
    counts = Counter(intents)
    exact = {c: size * n / len(ids) for c, n in counts.items()}
    quota = {c: min(int(exact[c]), n - 1) for c, n in counts.items()}
    left = size - sum(quota.values())
    for c in sorted(counts, key=lambda c: (int(exact[c]) - exact[c], c)):
        if left > 0 and quota[c] < counts[c] - 1:
            quota[c] += 1
            left -= 1
    rng = np.random.default_rng(seed)
    chosen: set[str] = set()
    for c in sorted(counts):
        rows = [i for i, x in enumerate(intents) if x == c]
        chosen.update(ids[rows[j]] for j in rng.permutation(len(rows))[: quota[c]])
    return chosen


def unlabelled_sentences(lang: str, n: int, seed: int, root: str | Path | None = None) -> Sentences:
    """``n`` distinct sentences in ``lang`` drawn (seeded) from :data:`UNLABELLED_SOURCE`, excluding the Tatoeba
    v1 test pairs and every xSID utterance of ``lang`` (valid and test)."""
    texts, _ = load_tatoeba_challenge(TATOEBA_CHALLENGE[lang], root)
    xsid = {t.strip() for split in ("valid", "test") for t in load_xsid(lang, split, root).texts}
    pool = [t for t in dict.fromkeys(t.strip() for t in texts) if t and t not in xsid]
    rng = np.random.default_rng([seed, *lang.encode()])
    rows = np.sort(rng.choice(len(pool), size=min(n, len(pool)), replace=False))
    return Sentences(lang, [pool[i] for i in rows])


def build_data(config: EmuConfig, root: str | Path | None = None) -> EmuData:
    """Labelled xSID valid utterances of ``train_langs`` (minus ``valid_size`` held-out ids, the same ids in every
    language) and the adversarial sentences: unrelated ones (``random``) or xSID valid translations of the
    training utterances (``parallel``)."""
    english = load_xsid("en", "valid", root)
    held = held_out_ids(english.ids, english.intents, config.valid_size, config.seed)
    sets = {lang: load_xsid(lang, "valid", root) for lang in config.train_langs}
    intents = sorted({i for s in sets.values() for i in s.intents})
    index = {x: i for i, x in enumerate(intents)}
    train, valid = {}, {}
    for lang, s in sets.items():
        rows = Sentences(lang, s.texts, s.ids, [index[x] for x in s.intents])
        train[lang] = rows.subset([i for i, x in enumerate(s.ids) if x not in held])
        valid[lang] = rows.subset([i for i, x in enumerate(s.ids) if x in held])
    adversarial: dict[str, Sentences] = {}
    for lang in config.adversarial_langs if config.discriminator else []:
        if config.adversarial == "parallel":
            s = load_xsid(lang, "valid", root)
            adversarial[lang] = Sentences(lang, s.texts, s.ids).subset([i for i, x in enumerate(s.ids)
                                                                        if x not in held])
        else:
            adversarial[lang] = unlabelled_sentences(lang, config.unlabelled_per_lang, config.seed, root)
    source = "xSID 0.7 valid (translations of the training utterances)" if config.adversarial == "parallel" \
        else UNLABELLED_SOURCE
    summary = {"labelled": {lang: {"source": "xSID 0.7 valid", "train": len(train[lang]),
                                   "held_out": len(valid[lang])} for lang in train},
               "intents": len(intents),
               "adversarial": {"source": source, "sentences": {lang: len(s) for lang, s in adversarial.items()}}}
    return EmuData(intents, train, valid, adversarial, summary)
