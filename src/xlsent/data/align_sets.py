"""The dev sets of ``xlsent eval align``: Bleualign's Text+Berg German-French dev document with its gold beads, and
documents built from NTREX-128 (:mod:`xlsent.data.doc_perturb`), including pairs without English and in other
scripts. The Text+Berg *test* half is held back and never read here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xlsent.data._files import dataset_path, read_lines
from xlsent.data.beads import read_beads
from xlsent.data.doc_perturb import Perturbation, perturb
from xlsent.data.parallel import load_ntrex

TEXTBERG = "de-fr textberg"
NTREX_SETS: dict[str, tuple[str, str, str, str, int]] = {
    "eng-deu ntrex": ("eng", "deu", "en", "de", 0),
    "rus-fra ntrex": ("rus", "fra", "ru", "fr", 500),
    "zho-deu ntrex": ("zho_Hans", "deu", "zh", "de", 1000),
    "arb-jpn ntrex": ("arb", "jpn", "ar", "ja", 250),
    "tha-kor ntrex": ("tha", "kor", "th", "ko", 750),
}
"""Set name -> NTREX codes of both sides, their language codes, and the first of the set's parallel lines."""
NTREX_LINES = 500
FOREIGN_FROM = 1600
"""Inserted lines come from NTREX lines from here on, outside every set's document."""


@dataclass(frozen=True)
class AlignSet:
    """Two documents, the gold beads between them, their language codes, and the files read."""

    name: str
    src: list[str]
    tgt: list[str]
    gold: list[tuple[tuple[int, ...], tuple[int, ...]]]
    src_lang: str
    tgt_lang: str
    files: list[Path]
    description: str


def load_textberg(root: str | Path | None = None) -> AlignSet:
    """Bleualign's Text+Berg de-fr dev document (``align_textberg/dev.*``)."""
    folder = dataset_path(root, "align_textberg")
    files = [folder / "dev.de", folder / "dev.fr", folder / "dev.defr"]
    src, tgt = read_lines(files[0]), read_lines(files[1])
    gold = [(b.src, b.tgt) for b in read_beads(files[2], within=((str(files[0]), len(src)), (str(files[1]), len(tgt))))]
    return AlignSet(TEXTBERG, src, tgt, gold, "de", "fr", files,
                    f"Text+Berg dev (Bleualign): {len(src)} de and {len(tgt)} fr lines, {len(gold)} gold beads")


def load_ntrex_set(name: str, root: str | Path | None = None, p: Perturbation | None = None) -> AlignSet:
    """The NTREX-built set ``name`` (a key of :data:`NTREX_SETS`): 500 parallel lines per side, perturbed."""
    src_code, tgt_code, src_lang, tgt_lang, start = NTREX_SETS[name]
    src, tgt = load_ntrex(src_code, tgt_code, root)
    p = p or Perturbation()
    s, t, gold = perturb(src[start:start + NTREX_LINES], tgt[start:start + NTREX_LINES], src[FOREIGN_FROM:],
                         tgt[FOREIGN_FROM:], p, seed=start + 1)
    folder = dataset_path(root, "parallel", "ntrex128", "NTREX-128")
    files = [folder / f"newstest2019-{'src' if c == 'eng' else 'ref'}.{c}.txt" for c in (src_code, tgt_code)]
    return AlignSet(name, s, t, gold, src_lang, tgt_lang, files,
                    f"NTREX-128 lines {start}-{start + NTREX_LINES - 1}, {src_code}-{tgt_code}, each side's lines "
                    f"merged ({p.merge:.0%}), split ({p.split:.0%}), dropped ({p.drop:.0%}) and foreign lines "
                    f"inserted ({p.insert:.0%}): {len(s)} x {len(t)} lines, {len(gold)} gold beads")


def align_set_names() -> list[str]:
    return [TEXTBERG, *NTREX_SETS]


def align_set_langs(name: str) -> tuple[str, str]:
    """The language codes of the dev set ``name``'s two documents, without reading it.

    >>> align_set_langs(TEXTBERG), align_set_langs("tha-kor ntrex")
    (('de', 'fr'), ('th', 'ko'))
    """
    return ("de", "fr") if name == TEXTBERG else (NTREX_SETS[name][2], NTREX_SETS[name][3])


def load_align_set(name: str, root: str | Path | None = None) -> AlignSet:
    """The dev set ``name`` (one of :func:`align_set_names`)."""
    return load_textberg(root) if name == TEXTBERG else load_ntrex_set(name, root)
