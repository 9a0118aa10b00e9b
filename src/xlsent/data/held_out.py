"""The sentences training data must leave out, because xlsent's evaluations test on them.

- :func:`tatoeba_v1_sentences`: every sentence of every Tatoeba v1 test file (both sides). The training bitexts
  (Tatoeba-Challenge above all) overlap Tatoeba v1, on which every method is scored.
- :func:`held_out_sentences`: those, and every sentence of the ``retrieval_pk`` test sets (ABSent's P@k protocol:
  newstest2012 lines and Tatoeba-Challenge de-es pairs joined through English). The mapping methods and LASER
  leave all of them out; dual-pivot's bitext (:mod:`xlsent.data.bitext`) leaves out the Tatoeba v1 sentences
  (its other evaluation, BUCC-style mining, is built from newstest2012, which no training source reads).
"""

from __future__ import annotations

from pathlib import Path

from xlsent.data.retrieval_pk import reserved_sentences
from xlsent.paths import data_root


def tatoeba_v1_sentences(root: Path) -> set[str]:
    """Every sentence (stripped) of every Tatoeba v1 test file under the data root ``root``, both sides."""
    files = sorted((root / "tatoeba_v1").glob("tatoeba.*-eng.*"))
    if not files:
        raise FileNotFoundError(f"{root / 'tatoeba_v1'}: Tatoeba v1 test files not found (needed to filter them out)")
    return {line.strip() for f in files for line in f.read_text(encoding="utf-8").splitlines()}


def held_out_sentences(root: str | Path | None = None) -> set[str]:
    """Sentences no mapping method or LASER trains on: every Tatoeba v1 test sentence and the ``retrieval_pk``
    test sets."""
    base = data_root(root)
    return tatoeba_v1_sentences(base) | reserved_sentences(base)
