"""``xlsent align --gold``: the beads a run wrote, scored against a gold alignment of the same documents.

Bleualign's strict and lax precision, recall and F1 (:mod:`.bead_scores`, as Vecalign's ``score.py`` computes them),
the counts summed over the document pairs (as the papers score the 7 documents of Text+Berg's test half), and the
95% interval of the strict F1 (:func:`~.bead_scores.strict_f1_interval`, the pairs' beads taken as one document).
The gold is read as the output is (``[i, j]:[k]``, a cost optional, Bleualign's and Vecalign's format); every check
runs before the encoder loads (:func:`check_golds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xlsent.align.job import STDOUT, DocPair, read_document
from xlsent.data.beads import Bead, read_beads
from xlsent.evaluation.bead_scores import bead_scores, strict_f1_interval


def check_gold_route(pairs: Sequence[DocPair], fmt: str, split: bool) -> None:
    """Raise ValueError where the pairs' gold cannot be scored: outputs in another format than ``beads``, sentences
    (``split``) numbered instead of lines, an output to standard output or a document from standard input or a pipe
    (read again after the run)."""
    if not any(p.gold for p in pairs):
        return
    if fmt != "beads":
        raise ValueError(f"--gold scores the beads an output holds: write them as beads (--format beads, not {fmt})")
    if split:
        raise ValueError("--gold scores beads of the documents' lines, and --split numbers sentences: align the "
                         "sentences as lines (xlsent split first) to score them")
    for pair in pairs:
        if pair.out == STDOUT:
            raise ValueError(pair.where("--gold reads the output again to score it: name an output file, not -"))
        for doc in (pair.src, pair.tgt):
            if doc.is_stream():
                raise ValueError(pair.where(f"{doc.name}: --gold reads the documents again to score the output: "
                                            "name a file, not standard input or a pipe"))


def _sizes(pair: DocPair) -> tuple[tuple[str, int], tuple[str, int]]:
    return (pair.src.name, len(read_document(pair.src))), (pair.tgt.name, len(read_document(pair.tgt)))


def check_golds(pairs: Sequence[DocPair], written: Sequence[DocPair] = ()) -> None:
    """Read every gold of ``pairs`` (:func:`~xlsent.data.beads.read_beads`), and the output of each of them in
    ``written`` (pairs a resumed run skips as written, scored with the run's), each pair's documents read once: an
    :class:`~xlsent.data.text_input.InputError` names the file, the line and the row of the list for a missing file,
    a malformed bead or one citing a line past the end of its document (a written output of other documents: an
    input changed since it was written)."""
    for pair in pairs:
        if pair.gold is None:
            continue
        gold = check_file(pair.gold)
        try:
            sizes = _sizes(pair)
            read_beads(gold, within=sizes)
        except ValueError as exc:
            raise type(exc)(pair.where(str(exc))) from exc
        if pair in written:
            try:
                read_beads(pair.out, within=sizes)
            except ValueError as exc:
                raise type(exc)(pair.where(f"{exc}; --resume skips this output as written: remove it to align the "
                                           "pair again")) from exc


def check_file(path: Path) -> Path:
    """``path``, or a FileNotFoundError naming it and what it was meant to be (a folder: named as one)."""
    if path.is_dir():
        raise FileNotFoundError(f"{path}: is a folder, not a gold alignment (a file of [i, j]:[k] beads, one a line)")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such gold alignment (a file of [i, j]:[k] beads, one a line)")
    return path


Linked = list[tuple[tuple[int, ...], tuple[int, ...]]]


def _linked(beads: Sequence[Bead], shift: tuple[int, int] = (0, 0)) -> Linked:
    """The beads as id pairs, every source id plus ``shift[0]`` and target id plus ``shift[1]``."""
    return [(tuple(i + shift[0] for i in b.src), tuple(j + shift[1] for j in b.tgt)) for b in beads]


def gold_scores(pairs: Sequence[DocPair]) -> dict[str, float]:
    """Strict and lax precision, recall and F1 (fractions) of the outputs of the ``pairs`` that name a gold against
    it, counts summed over them; ``strict_f1_low``/``strict_f1_high``: its 95% interval (the pairs' beads one after
    the other, as one document); ``pairs``: how many were scored. The golds were checked against their documents
    (:func:`check_golds`) and an output holds every line of both documents, so neither document is read again."""
    golds: list[Linked] = []
    tests: list[Linked] = []
    joined: tuple[Linked, Linked] = ([], [])
    shift = (0, 0)
    for pair, gold_file in ((p, p.gold) for p in pairs if p.gold is not None):
        gold, test = read_beads(gold_file), read_beads(pair.out)
        golds.append(_linked(gold))
        tests.append(_linked(test))
        joined[0].extend(_linked(gold, shift))
        joined[1].extend(_linked(test, shift))
        shift = (shift[0] + 1 + max((i for b in test for i in b.src), default=-1),
                 shift[1] + 1 + max((j for b in test for j in b.tgt), default=-1))
    low, high = strict_f1_interval(*joined)
    return {**bead_scores(golds, tests), "strict_f1_low": low, "strict_f1_high": high, "pairs": float(len(golds))}
