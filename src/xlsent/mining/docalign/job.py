"""Files in, bead files out: one document pair (``xlsent align SRC TGT -o OUT``) or a list of pairs
(``--pairs LIST.tsv``) aligned with one encoder, several documents embedded in one call.

Everything that can be refused is refused before the encoder is loaded: a missing input, invalid UTF-8 or a
document without text (naming the file and line), a malformed row of the list, two pairs writing one output, an
output that is a directory. Each output is written atomically, so it is complete or absent: a killed run of many
pairs continues with ``resume`` (:func:`unwritten`: the pairs whose output exists are not aligned again).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from xlsent.atomic import atomic_open
from xlsent.data.beads import Bead, format_bead
from xlsent.data.text_input import InputError, InputSpec, check_not_an_input, iter_rows
from xlsent.mining.docalign.aligner import Doc, align_spans
from xlsent.mining.docalign.config import AlignConfig
from xlsent.mining.docalign.overlaps import Embed, embed_spans

log = logging.getLogger(__name__)

STDOUT = "-"
FORMATS = ("beads", "tsv")
"""``beads``: ``[i, j]:[k]:cost`` lines (Vecalign's output, Bleualign's gold); ``tsv``: ``cost TAB source text TAB
target text``, the lines of a side joined by a space."""


@dataclass(frozen=True)
class DocPair:
    """A source document, its translation, and where their beads go (``-``: standard output)."""

    src: Path
    tgt: Path
    out: str


@dataclass(frozen=True)
class AlignSummary:
    """What a run did."""

    documents: int
    beads: int
    null_beads: int
    seconds: float
    skipped: int = 0

    def describe(self) -> str:
        kept = f"; {self.skipped} pair(s) skipped, their output already written (--resume)" if self.skipped else ""
        return (f"aligned {self.documents} document pair(s): {self.beads} beads, {self.null_beads} of them null "
                f"(a line without counterpart) in {self.seconds:.1f}s{kept}")


def read_pairs_list(path: str | Path) -> list[DocPair]:
    """The pairs of a ``src TAB tgt TAB out`` list (relative paths are relative to the list's folder; blank lines
    are skipped), naming the file and line of a malformed row."""
    spec = InputSpec(Path(path), format="txt")
    spec.check()
    base = Path(path).parent
    pairs: list[DocPair] = []
    seen: dict[str, int] = {}
    for line_no, row in enumerate(iter_rows(spec), start=1):
        if not row.strip():
            continue
        cells = row.split("\t")
        if len(cells) != 3 or not all(c.strip() for c in cells):
            raise InputError(f"{path}:{line_no}: {len(cells)} column(s); each row of --pairs is SRC TAB TGT TAB OUT")
        src, tgt, out = (base / c.strip() for c in cells)
        if str(out) in seen:
            raise InputError(f"{path}:{line_no}: the output {out} is also the output of line {seen[str(out)]}")
        seen[str(out)] = line_no
        pairs.append(DocPair(src, tgt, str(out)))
    if not pairs:
        raise InputError(f"{path}: lists no document pair; each row is SRC TAB TGT TAB OUT")
    return pairs


def read_document(path: Path) -> list[str]:
    """Every line of the text file ``path``; :class:`InputError` naming the file (and line) for a missing file,
    invalid UTF-8 or a document without text."""
    lines = list(iter_rows(InputSpec(path, format="txt")))
    if not any(line.strip() for line in lines):
        what = "is empty" if not lines else f"has no text ({len(lines)} blank line(s))"
        raise InputError(f"{path}: {what}; there is nothing to align")
    return lines


def check_output(out: str) -> None:
    """Raise ValueError for an output that cannot be written: a directory, or a path below a file."""
    if out == STDOUT:
        return
    path = Path(out)
    if path.is_dir():
        raise ValueError(f"{out}: is a directory; name the output file (e.g. {path / 'beads.txt'})")
    above = next((p for p in path.absolute().parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise ValueError(f"{out}: {above} is a file, not a folder")


def unwritten(pairs: Sequence[DocPair]) -> list[DocPair]:
    """The pairs whose output does not exist yet (standard output always counts as unwritten). Outputs are written
    atomically, so an existing one is a finished pair of an earlier run, never a partial file.

    >>> unwritten([DocPair(Path("de.txt"), Path("fr.txt"), "-"), DocPair(Path("a"), Path("b"), "/")])
    [DocPair(src=PosixPath('de.txt'), tgt=PosixPath('fr.txt'), out='-')]
    """
    return [p for p in pairs if p.out == STDOUT or not Path(p.out).exists()]


def check_not_overwritten(pairs: Sequence[DocPair], pairs_list: str | Path | None = None) -> None:
    """Raise :class:`InputError` for an output of ``pairs`` that is a document of any of them, or the list
    ``pairs_list`` they came from (whether or not a ``resume`` would skip it)."""
    check_not_an_input([p.out for p in pairs], [pairs_list, *(path for p in pairs for path in (p.src, p.tgt))])


def check_pairs(pairs: Sequence[DocPair]) -> None:
    """Read every document once and check every output, so a bad pair fails the run before any work."""
    if sum(p.out == STDOUT for p in pairs) > 1:
        raise ValueError("only one document pair can be written to standard output (-)")
    for pair in pairs:
        read_document(pair.src)
        read_document(pair.tgt)
        check_output(pair.out)


def bead_lines(beads: Sequence[Bead], src: Sequence[str], tgt: Sequence[str], fmt: str) -> list[str]:
    """The lines an output holds, in the format ``fmt`` (one of :data:`FORMATS`).

    >>> b = [Bead((0, 1), (0,), 0.125), Bead((), (1,), 1.0)]
    >>> bead_lines(b, ["Ja.", "Gut."], ["Yes, good.", "Hm."], "tsv")
    ['0.125000\\tJa. Gut.\\tYes, good.', '1.000000\\t\\tHm.']
    """
    if fmt == "beads":
        return [format_bead(b) for b in beads]
    return [f"{b.cost:.6f}\t{' '.join(src[i].strip() for i in b.src)}\t{' '.join(tgt[j].strip() for j in b.tgt)}"
            for b in beads]


def write_beads(out: str, lines: Sequence[str]) -> None:
    """Write ``lines`` to ``out`` atomically (``-``: standard output)."""
    text = "".join(line + "\n" for line in lines)
    if out == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with atomic_open(out) as fh:
        fh.write(text)


def _batches(pairs: Sequence[DocPair], sizes: dict[Path, int], batch_lines: int) -> list[list[DocPair]]:
    """Consecutive pairs grouped so that each group's documents hold about ``batch_lines`` lines or fewer."""
    groups: list[list[DocPair]] = [[]]
    size = 0
    for pair in pairs:
        lines = sizes[pair.src] + sizes[pair.tgt]
        if groups[-1] and size + lines > batch_lines:
            groups.append([])
            size = 0
        groups[-1].append(pair)
        size += lines
    return groups


def align_files(pairs: Sequence[DocPair], embed: Embed, cfg: AlignConfig, *, fmt: str = "beads",
                src_lang: str | None = None, tgt_lang: str | None = None, batch_lines: int = 20000,
                progress: bool = False) -> AlignSummary:
    """Align every pair of ``pairs`` (already checked with :func:`check_pairs`) and write its beads; ``progress``
    shows a bar of the pairs written."""
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    start = time.perf_counter()
    beads = nulls = 0
    sizes = {p: len(read_document(p)) for pair in pairs for p in (pair.src, pair.tgt)}
    bar = tqdm(total=len(pairs), unit="pair", desc="align", disable=not progress or len(pairs) < 2)
    for group in _batches(pairs, sizes, batch_lines):
        srcs = [Doc.of(read_document(p.src), cfg.overlaps) for p in group]
        tgts = [Doc.of(read_document(p.tgt), cfg.overlaps) for p in group]
        xs = embed_spans(embed, [d.texts for d in srcs], [d.ok for d in srcs], src_lang)
        ys = embed_spans(embed, [d.texts for d in tgts], [d.ok for d in tgts], tgt_lang)
        for pair, src, tgt, x, y in zip(group, srcs, tgts, xs, ys, strict=True):
            aligned = align_spans(src, tgt, x, y, cfg)
            write_beads(pair.out, bead_lines(aligned, src.lines, tgt.lines, fmt))
            beads, nulls = beads + len(aligned), nulls + sum(b.is_null for b in aligned)
            log.info("%s + %s -> %s: %d beads", pair.src, pair.tgt, pair.out, len(aligned))
            bar.update()
    bar.close()
    return AlignSummary(len(pairs), beads, nulls, time.perf_counter() - start)
