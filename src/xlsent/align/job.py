"""Files in, bead files out: one document pair (``xlsent align SRC TGT -o OUT``) or a list of pairs
(``--pairs LIST.tsv``) aligned with one encoder.

Everything that can be refused is refused before the encoder is loaded: a missing input, invalid UTF-8 or a
document without text (naming the file and line, and the row of the list), a malformed row of the list, two pairs
writing one output (under any spelling of its path), an output that is an input or a directory. Every path of a
list is read one way (:func:`listed_path`): ``-`` is standard input (a document) or standard output (an output)
wherever the list is, any other path is relative to the list's folder; two paths are one file when
:func:`file_key` says so. Standard input and pipes are read once into a temporary file (:func:`readable_pairs`, as
``mine`` and ``embed`` read them). Each pair's beads are written atomically as soon as they are found, so a killed run
of many pairs continues with ``resume`` (:func:`unwritten`: the pairs whose output exists are not aligned again).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tqdm.auto import tqdm

from xlsent.align.adaptive import SpanCount
from xlsent.align.aligner import Doc, align_documents, text_source
from xlsent.align.config import AlignConfig
from xlsent.align.overlaps import Embed
from xlsent.atomic import atomic_open, check_folders_above, write_lines
from xlsent.data.beads import Bead, format_bead
from xlsent.data.empty_text import is_empty
from xlsent.data.sentence_split import Sentence, sentence_lines, split_units
from xlsent.data.text_input import (
    HEADER_NAMES,
    STDIN,
    InputError,
    InputSpec,
    check_not_an_input,
    file_key,
    iter_rows,
    readable,
)
from xlsent.data.tsv_field import clean_cell

log = logging.getLogger(__name__)

STDOUT = "-"
FORMATS = ("beads", "tsv")
"""``beads``: ``[i, j]:[k]:cost`` lines (Vecalign's output, Bleualign's gold); ``tsv``: ``cost TAB source text TAB
target text``, the lines of a side joined by a space, each field as :func:`~xlsent.data.tsv_field.clean_cell` writes
it."""
STDOUT_KEY = ("standard output",)
"""The :func:`file_key` of standard output."""
LIST_HEADER_NAMES = HEADER_NAMES | {"out", "output", "beads", "doc", "document", "gold", "reference"}
"""Cells that mark row 1 of a ``--pairs`` list as a header (a list has none: :func:`read_pairs_list` refuses it)."""


@dataclass(frozen=True)
class DocPair:
    """A source document, its translation, where their beads go (``-``: standard output), and the row of the list
    that names them (``list.tsv:3``; None for a pair given as SRC TGT -o OUTPUT)."""

    src: InputSpec
    tgt: InputSpec
    out: str
    row: str | None = None
    gold: Path | None = None

    @classmethod
    def of(cls, src: str | Path, tgt: str | Path, out: str | Path, row: str | None = None,
           gold: str | Path | None = None) -> DocPair:
        """The pair of the paths ``src``, ``tgt`` (``-``: standard input) and ``out`` (``-``: standard output),
        read as text, with the gold alignment ``gold`` its beads are scored against (none: not scored)."""
        return cls(InputSpec(Path(src), format="txt"), InputSpec(Path(tgt), format="txt"), str(out), row,
                   Path(gold) if gold is not None else None)

    def where(self, message: str) -> str:
        """``message`` about this pair, after the row of the list that names it.

        >>> DocPair.of("a", "b", "c", "list.tsv:3").where("a: no such file")
        'list.tsv:3: a: no such file'
        """
        return f"{self.row}: {message}" if self.row else message


@dataclass(frozen=True)
class AlignSummary:
    """What a run did."""

    documents: int
    beads: int
    null_beads: int
    seconds: float
    skipped: int = 0
    spans: SpanCount = SpanCount()
    scores: Mapping[str, float] | None = None

    def describe(self) -> str:
        """One line: what was aligned, and the scores against the gold where there is one (percent).

        >>> line = AlignSummary(1, 3, 1, 0.5, scores={"pairs": 1, "strict_precision": 0.5, "strict_recall": 1.0,
        ...     "strict_f1": 2 / 3, "strict_f1_low": 0.4, "strict_f1_high": 0.9, "lax_f1": 1.0}).describe()
        >>> line.split("; ")[1].split(": ")[0]
        'against the gold of 1 pair(s)'
        >>> "strict precision 50.0, recall 100.0, F1 66.7 (95% interval 40.0-90.0), lax F1 100.0" in line
        True
        """
        kept = f"; {self.skipped} pair(s) skipped, their output already written (--resume)" if self.skipped else ""
        embedded = (f"; {self.spans.embedded} of {self.spans.possible} multi-line spans embedded"
                    if self.spans.possible else "")
        gold = ""
        if self.scores is not None:
            s = {k: 100 * v for k, v in self.scores.items() if k != "pairs"}
            gold = (f"; against the gold of {self.scores['pairs']:.0f} pair(s): strict precision "
                    f"{s['strict_precision']:.1f}, recall {s['strict_recall']:.1f}, F1 {s['strict_f1']:.1f} (95% "
                    f"interval {s['strict_f1_low']:.1f}-{s['strict_f1_high']:.1f}), lax F1 {s['lax_f1']:.1f}")
        return (f"aligned {self.documents} document pair(s): {self.beads} beads, {self.null_beads} of them null "
                f"(a line without counterpart) in {self.seconds:.1f}s{embedded}{kept}{gold}")


def listed_path(base: Path, cell: str) -> Path:
    """The path a cell of a list names: ``-`` as it is (standard input or output, wherever the list is), any other
    path relative to the list's folder ``base`` (an absolute one as it is).

    >>> listed_path(Path("lists"), "-"), listed_path(Path("lists"), "./de.txt"), listed_path(Path("lists"), "/x")
    (PosixPath('-'), PosixPath('lists/de.txt'), PosixPath('/x'))
    """
    cell = cell.strip()
    return Path(cell) if cell == STDIN else base / cell


def _header_like(cells: Sequence[str]) -> bool:
    """Whether every cell of a row is a column name (:data:`LIST_HEADER_NAMES`)."""
    return all(cell.strip().lower() in LIST_HEADER_NAMES for cell in cells)


def read_pairs_list(path: str | Path) -> list[DocPair]:
    """The pairs of a ``src TAB tgt TAB out`` list, each row with a fourth column ``gold`` (the gold alignment its
    beads are scored against) or none (paths as :func:`listed_path` reads them; the list's folder is the current one
    for a list on standard input; blank rows are skipped), naming the file and line of a malformed row, of a row
    whose columns differ from the first's, and of a header (a list has none)."""
    spec = InputSpec(Path(path), format="txt")
    spec.check()
    base = Path(".") if spec.is_stream() else spec.path.parent
    pairs: list[DocPair] = []
    with readable(spec) as copy:
        for line_no, row in enumerate(iter_rows(copy), start=1):
            where = f"{spec.name}:{line_no}"
            if is_empty(row):
                continue
            cells = row.split("\t")
            if len(cells) not in (3, 4):
                raise InputError(f"{where}: {len(cells)} column(s); each row of --pairs is SRC TAB TGT TAB OUT, or "
                                 "SRC TAB TGT TAB OUT TAB GOLD in every row")
            if blank := [str(i) for i, cell in enumerate(cells, start=1) if is_empty(cell)]:
                raise InputError(f"{where}: column(s) {', '.join(blank)} of {len(cells)} empty; each row of --pairs "
                                 "names SRC TAB TGT TAB OUT (TAB GOLD) files")
            if pairs and (len(cells) == 4) != (pairs[0].gold is not None):
                raise InputError(f"{where}: {len(cells)} columns, but {pairs[0].row} has {4 if pairs[0].gold else 3}: "
                                 "a gold alignment (a fourth column) is named in every row of --pairs or in none")
            src, tgt, out, *gold = (listed_path(base, c) for c in cells)
            if spec.is_stdin() and STDIN in (str(src), str(tgt)):
                raise InputError(f"{where}: - (standard input) is the list itself here, read already; name the "
                                 "document's file")
            if not pairs and _header_like(cells) and not src.exists():
                raise InputError(f"{where}: this row looks like a header ({', '.join(c.strip() for c in cells)}), but "
                                 "a --pairs list has none (every row is SRC TAB TGT TAB OUT): remove that line")
            pairs.append(DocPair.of(src, tgt, out, where, gold[0] if gold else None))
    if not pairs:
        raise InputError(f"{spec.name}: lists no document pair; each row is SRC TAB TGT TAB OUT")
    return pairs


def read_document(spec: InputSpec) -> list[str]:
    """Every line of the text document ``spec`` (a stream already copied by :func:`readable_pairs`);
    :class:`InputError` naming the file (and line) for a missing file, invalid UTF-8 or a document without text
    (:func:`~xlsent.data.empty_text.is_empty` lines only)."""
    lines = list(iter_rows(spec))
    if all(is_empty(line) for line in lines):
        what = "is empty" if not lines else f"has no text ({len(lines)} blank line(s))"
        raise InputError(f"{spec.name}: {what}; there is nothing to align")
    return lines


def check_output(out: str) -> None:
    """Raise ValueError for an output that cannot be written: a directory, or a path below a file."""
    if out == STDOUT:
        return
    path = Path(out)
    if path.is_dir():
        raise ValueError(f"{out}: is a directory; name the output file (e.g. {path / 'beads.txt'})")
    check_folders_above(path)


def unwritten(pairs: Sequence[DocPair]) -> list[DocPair]:
    """The pairs whose output is no file yet (standard output always counts as unwritten; a folder where an output
    goes is no output, and is refused when the pair is checked). Outputs are written atomically, so an existing file
    is a finished pair of an earlier run, never a partial one.

    >>> import tempfile
    >>> written = tempfile.NamedTemporaryFile(delete=False).name
    >>> [p.out for p in unwritten([DocPair.of("de.txt", "fr.txt", "-"), DocPair.of("a", "b", written),
    ...                            DocPair.of("a", "b", "/")])]
    ['-', '/']
    """
    return [p for p in pairs if p.out == STDOUT or not Path(p.out).is_file()]


def check_paths(pairs: Sequence[DocPair], pairs_list: str | Path | None = None) -> None:
    """Raise :class:`InputError`, naming the row, for paths of ``pairs`` that cannot go together (whether or not a
    ``resume`` would skip the pair): two outputs that are one file (:func:`file_key`), standard output twice, a stream
    (standard input, a pipe: read once) as two documents, an output that is a document of any pair or the list
    ``pairs_list`` they came from."""
    outputs: dict[object, DocPair] = {}
    streams: dict[object, DocPair] = {}
    for pair in pairs:
        for doc in (pair.src, pair.tgt):
            if doc.is_stream():
                key = file_key(doc.path)
                if key in streams:
                    other = streams[key].row or "this pair"
                    raise InputError(pair.where(f"{doc.name}: is also a document of {other}; standard input and "
                                                "pipes are read once, so they can be one document of a run only"))
                streams[key] = pair
        key = STDOUT_KEY if pair.out == STDOUT else file_key(pair.out)
        if key in outputs:
            first = outputs[key]
            what = ("only one document pair can be written to standard output (-)" if pair.out == STDOUT else
                    f"{pair.out}: is also the output of {first.row} ({first.out}); each pair needs its own output")
            raise InputError(pair.where(what))
        outputs[key] = pair
    check_not_an_input([p.out for p in pairs], [pairs_list, *pair_inputs(pairs)], [p.row for p in pairs])


def pair_inputs(pairs: Sequence[DocPair]) -> list[Path]:
    """Every file ``pairs`` read: both documents of each, and its gold alignment where it has one.

    >>> [str(p) for p in pair_inputs([DocPair.of("de.txt", "fr.txt", "out", gold="gold.txt")])]
    ['de.txt', 'fr.txt', 'gold.txt']
    """
    return [path for p in pairs for path in (p.src.path, p.tgt.path, p.gold) if path is not None]


@contextlib.contextmanager
def readable_pairs(pairs: Sequence[DocPair]) -> Iterator[list[DocPair]]:
    """``pairs`` with every document that is standard input or a pipe read once into a temporary file
    (:func:`~xlsent.data.text_input.readable`, named as given in messages), removed when the block ends."""
    with contextlib.ExitStack() as stack:
        def copied(spec: InputSpec) -> InputSpec:
            return stack.enter_context(readable(spec)) if spec.is_stream() else spec

        yield [replace(p, src=copied(p.src), tgt=copied(p.tgt)) for p in pairs]


def check_pair(pair: DocPair) -> None:
    """Read both documents of ``pair`` and check its output; a ValueError names the row of the list."""
    try:
        read_document(pair.src)
        read_document(pair.tgt)
        check_output(pair.out)
    except ValueError as exc:
        if pair.row is None:
            raise
        raise type(exc)(pair.where(str(exc))) from exc


def check_pairs(pairs: Sequence[DocPair]) -> None:
    """Check every pair (:func:`check_pair`), so a bad pair fails the run before any work."""
    for pair in pairs:
        check_pair(pair)


def bead_lines(beads: Sequence[Bead], src: Sequence[str], tgt: Sequence[str], fmt: str) -> list[str]:
    """The lines an output holds, in the format ``fmt`` (one of :data:`FORMATS`).

    >>> b = [Bead((0, 1), (0,), 0.125), Bead((), (1,), 1.0)]
    >>> bead_lines(b, ["Ja.", "Gut."], ["Yes,\\tgood.", "Hm."], "tsv")
    ['0.125000\\tJa. Gut.\\tYes, good.', '1.000000\\t\\tHm.']
    """
    if fmt == "beads":
        return [format_bead(b) for b in beads]
    return [f"{b.cost:.6f}\t{_side(src, b.src)}\t{_side(tgt, b.tgt)}" for b in beads]


def _side(lines: Sequence[str], ids: Sequence[int]) -> str:
    """The text of a bead's side as one TSV field: its lines joined by a space."""
    return clean_cell(" ".join(lines[i].strip() for i in ids))


def write_beads(out: str, lines: Sequence[str]) -> None:
    """Write ``lines`` to ``out`` atomically (``-``: standard output)."""
    write_lines(out, [line + "\n" for line in lines])


SENTENCE_MAPS = (".src-sentences.tsv", ".tgt-sentences.tsv")
"""With ``--split``: the suffixes added to an output's name for the maps of its two documents' sentences."""


def sentence_maps(out: str) -> tuple[Path, Path]:
    """Where ``align --split`` writes the sentence maps of the pair written to ``out``.

    >>> [p.name for p in sentence_maps("de-fr.beads")]
    ['de-fr.beads.src-sentences.tsv', 'de-fr.beads.tgt-sentences.tsv']
    """
    return Path(out + SENTENCE_MAPS[0]), Path(out + SENTENCE_MAPS[1])


def check_split(pairs: Sequence[DocPair], src_lang: str | None, tgt_lang: str | None,
                pairs_list: str | Path | None = None) -> None:
    """ValueError for an ``align --split`` that cannot run: a language not given (sentence ends depend on it), an
    output on standard output (its sentence maps are files beside it), a map that is one of the documents, the list
    ``pairs_list``, another pair's output or another map."""
    if src_lang is None or tgt_lang is None:
        raise ValueError("--split needs --src-lang and --tgt-lang: sentence ends depend on the language")
    for pair in pairs:
        if pair.out == STDOUT:
            raise ValueError(pair.where("--split writes each document's sentence map beside the output "
                                        f"(OUT{SENTENCE_MAPS[0]}, OUT{SENTENCE_MAPS[1]}): name an output file"))
    maps = [m for p in pairs for m in sentence_maps(p.out)]
    if folder := next((m for m in maps if m.is_dir()), None):
        raise ValueError(f"{folder}: is a directory, where --split writes a sentence map; remove it or name another "
                         "output")
    written = {file_key(p.out): f"the output of {p.row or 'the pair'}" for p in pairs}
    for pair in pairs:
        for path in sentence_maps(pair.out):
            if (key := file_key(path)) in written:
                raise InputError(pair.where(f"{path}: the sentence map --split writes beside {pair.out} is also "
                                            f"{written[key]}; name outputs whose maps are no other output"))
            written[key] = f"a sentence map of {pair.row or 'the pair'}"
    check_not_an_input(maps, [pairs_list, *pair_inputs(pairs)])


def _sentences(spec: InputSpec, lang: str | None, split: bool) -> tuple[list[str], list[Sentence]]:
    """A document's lines to align: its lines, or with ``split`` its sentences (and those, for the map)."""
    lines = read_document(spec)
    if not split or lang is None:
        return lines, []
    sentences = split_units(lines, lang)
    return [s.text for s in sentences], sentences


@dataclass(frozen=True)
class PairRoute:
    """How every pair of a run is aligned: the settings, the output format (one of :data:`FORMATS`), the
    documents' languages, and whether they are paragraphs to split (:func:`check_split`)."""

    cfg: AlignConfig
    fmt: str = "beads"
    src_lang: str | None = None
    tgt_lang: str | None = None
    split: bool = False

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise ValueError(f"--format must be one of {', '.join(FORMATS)}, not {self.fmt!r}")


@dataclass(frozen=True)
class PairOutput:
    """What one pair's alignment writes: its output lines and, with ``split``, each document's sentence map lines;
    with the counts of its beads, null beads and spans embedded."""

    lines: list[str]
    maps: tuple[list[str], list[str]] | None
    beads: int
    null_beads: int
    spans: SpanCount


def align_pair(pair: DocPair, embed: Embed, route: PairRoute) -> PairOutput:
    """Align one pair of documents (checked already) and return what is written for it (:func:`write_pair`)."""
    (src_lines, src_map), (tgt_lines, tgt_map) = (_sentences(pair.src, route.src_lang, route.split),
                                                  _sentences(pair.tgt, route.tgt_lang, route.split))
    src, tgt = Doc.of(src_lines, route.cfg.overlaps), Doc.of(tgt_lines, route.cfg.overlaps)
    aligned, count = align_documents(src, tgt, text_source(embed, src, route.src_lang),
                                     text_source(embed, tgt, route.tgt_lang), route.cfg)
    maps = None
    if route.split:
        src_rows, tgt_rows = (sentence_lines(sentences, tsv=True, first_line=spec.first_line)
                              for sentences, spec in ((src_map, pair.src), (tgt_map, pair.tgt)))
        maps = (list(src_rows), list(tgt_rows))
    return PairOutput(bead_lines(aligned, src.lines, tgt.lines, route.fmt), maps, len(aligned),
                      sum(b.is_null for b in aligned), count)


def write_pair(pair: DocPair, output: PairOutput) -> None:
    """Write one pair's output atomically: its sentence maps first (:func:`sentence_maps`), then its beads, whose
    existence marks the pair done for ``resume``."""
    if output.maps is not None:
        for path, rows in zip(sentence_maps(pair.out), output.maps, strict=True):
            with atomic_open(path) as fh:
                fh.writelines(rows)
    write_beads(pair.out, output.lines)
    log.info("%s + %s -> %s: %d beads", pair.src.name, pair.tgt.name, pair.out, output.beads)


PairOutputs = Callable[[Sequence[DocPair]], Iterator[tuple[DocPair, PairOutput]]]
"""Where a run's pairs are aligned: each pair with its output, in any order, as each is found (this process:
:func:`local_outputs`; Ray: :func:`xlsent.align.distributed.ray_outputs`)."""


def local_outputs(embed: Embed, route: PairRoute) -> PairOutputs:
    """The pairs aligned one after the other in this process with ``embed``."""
    return lambda pairs: ((pair, align_pair(pair, embed, route)) for pair in pairs)


def align_files(pairs: Sequence[DocPair], outputs: PairOutputs, *, progress: bool = False) -> AlignSummary:
    """Align every pair of ``pairs`` (already checked with :func:`check_pairs`; with ``split``,
    :func:`check_split` too) where ``outputs`` aligns them, and write each pair's output as soon as it is found
    (:func:`write_pair`: a killed run leaves the pairs it finished, for ``resume``); ``progress`` shows a bar of the
    pairs written. With ``split`` the documents are paragraphs, one a line: each is split into sentences
    (:mod:`xlsent.data.sentence_split`), the beads number sentences, and each document's sentence map (its line and
    character span, as ``xlsent split`` writes a ``.tsv``) is written beside the output."""
    start = time.perf_counter()
    beads = nulls = 0
    spans = SpanCount()
    with tqdm(total=len(pairs), unit="pair", desc="align", disable=not progress or len(pairs) < 2) as bar:
        for pair, output in outputs(pairs):
            write_pair(pair, output)
            beads, nulls, spans = beads + output.beads, nulls + output.null_beads, spans + output.spans
            bar.update()
    return AlignSummary(len(pairs), beads, nulls, time.perf_counter() - start, spans=spans)
