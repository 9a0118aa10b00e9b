"""The dev sets of ``xlsent eval align``: Bleualign's Text+Berg German-French dev document with its gold beads, and
documents built from NTREX-128 and WMT newstest (:mod:`xlsent.data.doc_perturb`), including pairs without English
and in other scripts. The Text+Berg *test* half is held back and never read here; newstest2012, a test set of the
similarity search (LASER's), is not used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xlsent.data._files import check_readable, dataset_path, read_lines
from xlsent.data.beads import read_beads
from xlsent.data.doc_perturb import Perturbation, perturb
from xlsent.data.parallel import newstest_files, ntrex_files, read_pair
from xlsent.paths import data_root

TEXTBERG = "de-fr textberg"
NTREX = "ntrex"
BUILT_SETS: dict[str, tuple[str, str, str, str, str, int]] = {
    "eng-deu ntrex": (NTREX, "eng", "deu", "en", "de", 0),
    "rus-fra ntrex": (NTREX, "rus", "fra", "ru", "fr", 500),
    "zho-deu ntrex": (NTREX, "zho_Hans", "deu", "zh", "de", 1000),
    "arb-jpn ntrex": (NTREX, "arb", "jpn", "ar", "ja", 250),
    "tha-kor ntrex": (NTREX, "tha", "kor", "th", "ko", 750),
    "rus-spa newstest2013": ("2013", "ru", "es", "ru", "es", 0),
    "hun-ita newstest2009": ("2009", "hu", "it", "hu", "it", 1000),
}
"""Set name -> corpus (``ntrex`` or a WMT newstest year), the corpus's codes of both sides, their language codes,
and the first of the set's parallel lines."""
NEWSTEST_YEARS = tuple(sorted({corpus for corpus, *_ in BUILT_SETS.values() if corpus != NTREX}))
"""The WMT newstest years the built sets come from."""
SET_LINES = 500
FOREIGN_FROM = 1600
"""Inserted lines come from the corpus's lines from here on, outside every set's document (NTREX has 1997 lines,
newstest2009 2525, newstest2013 3000)."""


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
    for path in files:
        check_readable(path, f"the data folder (--data) must hold {folder.name}/dev.de, dev.fr and dev.defr, "
                             "Bleualign's Text+Berg dev document and its gold beads")
    src, tgt = read_lines(files[0]), read_lines(files[1])
    gold = [(b.src, b.tgt) for b in read_beads(
        files[2], within=((str(files[0]), len(src)), (str(files[1]), len(tgt))), each_line_once=True)]
    return AlignSet(TEXTBERG, src, tgt, gold, "de", "fr", files,
                    f"Text+Berg dev (Bleualign): {len(src)} de and {len(tgt)} fr lines, {len(gold)} gold beads")


def load_built_set(name: str, root: str | Path | None = None, p: Perturbation | None = None) -> AlignSet:
    """The set ``name`` built from a parallel corpus (a key of :data:`BUILT_SETS`): 500 parallel lines per side,
    perturbed."""
    corpus, src_code, tgt_code, src_lang, tgt_lang, start = BUILT_SETS[name]
    files = built_set_files(name, root)
    src, tgt = read_pair(*files)
    title = "NTREX-128" if corpus == NTREX else f"WMT newstest{corpus}"
    p = p or Perturbation()
    s, t, gold = perturb(src[start:start + SET_LINES], tgt[start:start + SET_LINES], src[FOREIGN_FROM:],
                         tgt[FOREIGN_FROM:], p, seed=start + 1)
    return AlignSet(name, s, t, gold, src_lang, tgt_lang, list(files),
                    f"{title} lines {start}-{start + SET_LINES - 1}, {src_code}-{tgt_code}, each side's lines "
                    f"merged ({p.merge:.0%}), split ({p.split:.0%}), dropped ({p.drop:.0%}) and foreign lines "
                    f"inserted ({p.insert:.0%}): {len(s)} x {len(t)} lines, {len(gold)} gold beads")


def set_corpus(name: str) -> str:
    """The corpus a dev set comes from: ``textberg``, ``ntrex`` or a newstest year.

    >>> set_corpus(TEXTBERG), set_corpus("eng-deu ntrex"), set_corpus("rus-spa newstest2013")
    ('textberg', 'ntrex', '2013')
    """
    return "textberg" if name == TEXTBERG else BUILT_SETS[name][0]


def _folder(corpus: str) -> tuple[str, ...]:
    """The folder of a built set's ``corpus`` under the data root."""
    return ("parallel", "ntrex128", "NTREX-128") if corpus == NTREX else ("parallel", "wmt_newstest", corpus)


def set_available(name: str, root: str | Path | None = None) -> bool:
    """Whether the data of the dev set ``name`` is under ``root``."""
    base = data_root(root)
    if name == TEXTBERG:
        return (base / "align_textberg" / "dev.defr").is_file()
    return base.joinpath(*_folder(set_corpus(name))).is_dir()


def built_set_files(name: str, root: str | Path | None = None) -> tuple[Path, Path]:
    """The corpus files of the built set ``name`` (a key of :data:`BUILT_SETS`), source side first."""
    corpus, src_code, tgt_code, *_ = BUILT_SETS[name]
    return ntrex_files(src_code, tgt_code, root) if corpus == NTREX else newstest_files(corpus, src_code, tgt_code,
                                                                                        root)


def align_set_names() -> list[str]:
    return [TEXTBERG, *BUILT_SETS]


def align_set_langs(name: str) -> tuple[str, str]:
    """The language codes of the dev set ``name``'s two documents, without reading it.

    >>> align_set_langs(TEXTBERG), align_set_langs("tha-kor ntrex")
    (('de', 'fr'), ('th', 'ko'))
    """
    return ("de", "fr") if name == TEXTBERG else (BUILT_SETS[name][3], BUILT_SETS[name][4])


def load_align_set(name: str, root: str | Path | None = None) -> AlignSet:
    """The dev set ``name`` (one of :func:`align_set_names`)."""
    return load_textberg(root) if name == TEXTBERG else load_built_set(name, root)
