"""``xlsent split``: a file of paragraphs (one a row) into its sentences, each mapped back to its paragraph.

The output is a sentence a line (``.txt``, ``-``), or with ``.tsv`` the mapping: a header line, then ``line TAB
start TAB end TAB sentence``, where ``line`` is the paragraph's 1-based input line and ``start``/``end`` the
sentence's character span in it (0-based, end exclusive). An empty input line (a paragraph break) gives no
sentence; every other line gives at least one. Written atomically; nothing is written on error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xlsent.atomic import check_folders_above, write_lines
from xlsent.data.sentence_split import iter_sentences, sentence_lines
from xlsent.data.text_input import InputSpec, check_not_an_input, iter_rows, readable

SUFFIXES = (".txt", ".tsv")


@dataclass(frozen=True)
class SplitSummary:
    """What a split did: paragraphs read, sentences written, where."""

    output: str
    paragraphs: int
    sentences: int

    def describe(self) -> str:
        """One line.

        >>> SplitSummary("s.txt", 3, 7).describe()
        'wrote s.txt: 7 sentences from 3 paragraphs'
        """
        return f"wrote {self.output}: {self.sentences} sentences from {self.paragraphs} paragraphs"


def check_split_output(output: str | Path, source: InputSpec) -> None:
    """ValueError for an output ``xlsent split`` cannot write: another suffix than .txt/.tsv, a folder, the input."""
    if str(output) == "-":
        return
    path = Path(output)
    if path.is_dir():
        raise ValueError(f"{path}: is a directory; name the output file (e.g. {path / 'sentences.txt'})")
    if path.suffix.lower() not in SUFFIXES:
        raise ValueError(f"{path}: name a .txt file (a sentence a line) or a .tsv file (line, start, end, sentence), "
                         "or - for standard output")
    check_folders_above(path)
    check_not_an_input([path], [source.path])


def split_file(source: InputSpec, output: str | Path, lang: str) -> SplitSummary:
    """Split every row of ``source`` (a paragraph) into sentences of ``lang`` and write them to ``output``."""
    check_split_output(output, source)
    tsv = str(output) != "-" and Path(output).suffix.lower() == ".tsv"
    with readable(source) as spec:
        rows = list(iter_rows(spec))
        sentences = list(iter_sentences(rows, lang))
    lines = sentence_lines(sentences, tsv=tsv, first_line=source.first_line)
    write_lines(output, lines)
    return SplitSummary(str(output), len(rows), len(sentences))
