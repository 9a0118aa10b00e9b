"""Streaming readers for the inputs of ``xlsent embed`` / ``xlsent mine``: txt, TSV, JSONL, Parquet.

Each reader yields one string per input row, in order, so row i of any output matches row i of the
input. Invalid UTF-8 and malformed rows raise :class:`InputError` naming the file and line. A byte-order mark at the
start of a file (Windows editors write one) is the encoding's signature and is dropped, not read as text. A UTF-16
file is an error saying so (not a UTF-8 error at its first byte); a carriage return inside a line (a file whose lines
end in CR alone reads as one line) is kept as text, with a warning.

A TSV's first line is a header only when the caller says so: ``header=True`` (``--header``) skips it,
``header=False`` (``--no-header``) reads it as data, and a column given by name implies a header. A TSV
with neither is an error rather than a guess. Line numbers (``--with-ids``, error messages) count every
line of the file, the header included.

Standard input (``-``) and pipes (``/dev/stdin``, named pipes) are read once into a temporary file by
:func:`readable`, so that the checksum pass and the reading pass see the same bytes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from xlsent.atomic import is_special
from xlsent.data._files import UTF8_BOM, utf16_reason
from xlsent.output_lock import STDOUT, lock_path

FORMATS = ("txt", "tsv", "jsonl", "parquet")
STDIN = "-"

log = logging.getLogger(__name__)


class InputError(ValueError):
    """An input file cannot be read as asked; the message names the file, the line and a fix."""


class WorkFolderError(InputError):
    """A folder where a run keeps its finished work is not the run's to empty (:func:`check_work_folder`): the run
    leaves it as it is."""


@dataclass(frozen=True)
class InputSpec:
    """What to read: a path (``-`` for standard input), its format, the column (TSV index or name, Parquet name)
    or JSON field, whether a TSV has a header line, and the name to show in messages (default: the path)."""

    path: Path
    format: str = "auto"
    column: str | None = None
    field: str | None = None
    header: bool | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        """A path given as a str is a Path and a column given as an int (a TSV index) its str, as the command line
        gives them; another type is a TypeError naming the field.

        >>> InputSpec("in.tsv", column=1)
        InputSpec(path=PosixPath('in.tsv'), format='auto', column='1', field=None, header=None, label=None)
        """
        if isinstance(self.path, str):
            object.__setattr__(self, "path", Path(self.path))
        if isinstance(self.column, int) and not isinstance(self.column, bool):
            object.__setattr__(self, "column", str(self.column))
        for name, kinds in (("path", (Path,)), ("column", (str, type(None))), ("field", (str, type(None))),
                            ("format", (str,))):
            if not isinstance(getattr(self, name), kinds):
                raise TypeError(f"InputSpec {name} takes {' or '.join(k.__name__ for k in kinds)}, not "
                                f"{type(getattr(self, name)).__name__}")

    @property
    def name(self) -> str:
        """The input as messages and metadata name it.

        >>> InputSpec(Path("-")).name, InputSpec(Path("a.txt")).name
        ('<stdin>', 'a.txt')
        """
        if self.label is not None:
            return self.label
        return "<stdin>" if self.is_stdin() else str(self.path)

    def is_stdin(self) -> bool:
        return str(self.path) == STDIN

    def is_stream(self) -> bool:
        """Standard input, or a path that is neither a regular file nor a directory (a pipe, a device)."""
        return self.is_stdin() or is_special(self.path)

    def resolved_format(self) -> str:
        """The format: ``format`` unless ``auto``, else from the extension (``txt`` when there is none).

        >>> InputSpec(Path("a.json")).resolved_format(), InputSpec(Path("-")).resolved_format()
        ('jsonl', 'txt')
        """
        if self.format != "auto":
            if self.format not in FORMATS:
                raise InputError(f"unknown input format {self.format!r}; use one of {', '.join(FORMATS)}")
            return self.format
        suffix = self.path.suffix.lower().lstrip(".")
        return {"tsv": "tsv", "jsonl": "jsonl", "json": "jsonl", "parquet": "parquet"}.get(suffix, "txt")

    def tsv_header(self) -> bool:
        """Whether the TSV's first line is a header: as ``header`` says, or implied by a column name.

        >>> InputSpec(Path("a.tsv"), column="text").tsv_header(), InputSpec(Path("a.tsv"), header=False).tsv_header()
        (True, False)
        """
        named = self.column is not None and not self.column.isdecimal()
        if named and self.header is False:
            raise InputError(f"{self.name}: --column {self.column!r} is a header name, but --no-header says the "
                             "file has none; give a 0-based column index instead")
        if self.header is None and not named:
            raise InputError(f"{self.name}: say whether line 1 of this TSV is a header: --header (skip it) or "
                             "--no-header (it is data), or pick the column by name with --column NAME")
        return named or bool(self.header)

    @property
    def first_line(self) -> int:
        """The 1-based line (Parquet: row) number of data row 0: 2 for a TSV with a header, else 1."""
        return 2 if self.resolved_format() == "tsv" and self.tsv_header() else 1

    def check(self) -> None:
        """Raise :class:`InputError` unless the path is a readable file or stream and the options fit its format."""
        if not self.is_stream():
            if self.path.is_dir():
                raise InputError(f"{self.name}: is a directory; give a file (or - for standard input)")
            if not self.path.is_file():
                raise InputError(f"{self.name}: no such file")
        if self.resolved_format() == "tsv":
            self.tsv_header()

    def source(self) -> dict[str, object]:
        """What an output records about this input (its checksum is added by the caller)."""
        fmt = self.resolved_format()
        return {"path": printable_name(self.name), "format": fmt, "column": self.column, "field": self.field,
                "header": self.tsv_header() if fmt == "tsv" else None}


def printable_name(name: str) -> str:
    """The file name ``name`` as UTF-8 text (JSON metadata) can hold it: the bytes of a name that are not UTF-8, which
    Python keeps as lone surrogates, written as ``\\xff`` escapes.

    >>> printable_name("bad\\udcff.txt")
    'bad\\\\xff.txt'
    """
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def reading(spec: InputSpec) -> dict[str, object]:
    """What ``spec`` reads of its file, the same however it is spelled: the format, and for a TSV whether line 1 is
    a header and the column (by 0-based index where the header names it), for Parquet the column, for JSONL the
    field (defaults filled in).

    >>> reading(InputSpec(Path("a.txt"))), reading(InputSpec(Path("a.tsv"), header=False))
    ({'format': 'txt'}, {'format': 'tsv', 'header': False, 'column': '0'})
    """
    fmt = spec.resolved_format()
    if fmt == "tsv":
        column, header = spec.column if spec.column is not None else "0", spec.tsv_header()
        if header and not column.isdecimal() and spec.path.is_file():
            names = next(_lines(spec), (0, ""))[1].split("\t")
            column = str(names.index(column)) if column in names else column
        return {"format": fmt, "header": header, "column": column}
    if fmt == "parquet":
        return {"format": fmt, "column": spec.column or "text"}
    return {"format": fmt, "field": spec.field or "text"} if fmt == "jsonl" else {"format": fmt}


def describe_reading(read: dict[str, object]) -> str:
    """A :func:`reading` in words, with the options that read it so.

    >>> describe_reading({"format": "tsv", "header": False, "column": "1"})
    'column 1 of a TSV read without header (--column 1 --no-header)'
    """
    if read["format"] == "tsv":
        header = "--header" if read["header"] else "--no-header"
        return (f"column {read['column']} of a TSV read {'with' if read['header'] else 'without'} header (--column "
                f"{read['column']} {header})")
    if read["format"] == "parquet":
        return f"Parquet column {read['column']!r} (--column {read['column']})"
    if read["format"] == "jsonl":
        return f"JSONL field {read['field']!r} (--field {read['field']})"
    return f"the lines of a {read['format']} file"


def file_key(path: str | Path) -> object:
    """What every spelling of one file shares: for an existing file (or stream), its device and inode, also when the
    path goes through a folder not there yet (``new/../de.txt``: writing it makes the folder, then lands on
    ``de.txt``); for a file not there yet, its absolute path with links, ``.`` and ``..`` resolved; for standard
    input (``-``), the stream's.

    >>> file_key("a/../b.txt") == file_key("./b.txt")
    True
    >>> import tempfile
    >>> doc = Path(tempfile.mkdtemp()) / "de.txt"
    >>> _ = doc.write_text("Hallo.\\n")
    >>> file_key(doc.parent / "new" / ".." / "de.txt") == file_key(doc)
    True
    """
    if str(path) == STDIN:
        try:
            stat = os.fstat(sys.stdin.fileno())
        except (OSError, ValueError):  # no file descriptor (an in-memory stream)
            return STDIN
        return stat.st_dev, stat.st_ino
    for spelling in (path, os.path.realpath(path)):
        try:
            stat = os.stat(spelling)
        except OSError:  # not there (yet), or only once the folders on the way are made
            continue
        return stat.st_dev, stat.st_ino
    return os.path.realpath(path)


def check_not_an_input(outputs: Iterable[str | Path | None], inputs: Iterable[str | Path | None],
                       rows: Iterable[str | None] | None = None) -> None:
    """Raise :class:`InputError` for an output that is one of the inputs, the same file by any path (a link, ``./``):
    writing it would destroy that input. Standard input and output (``-``) and ``None`` are skipped. ``rows``, one per
    output, name where each output was given (``list.tsv:3``), put before the message.

    >>> import tempfile
    >>> doc = Path(tempfile.mkdtemp()) / "de.txt"
    >>> _ = doc.write_text("Hallo.\\n")
    >>> check_not_an_input([doc.parent / "." / "de.txt"], [doc])
    Traceback (most recent call last):
    ...
    xlsent.data.text_input.InputError: .../de.txt: is also an input (.../de.txt); writing it would destroy that ...
    """
    def identity(path: str | Path | None) -> object:
        """The file ``path`` names where it exists (:func:`file_key`); None for none, a stream or no file yet."""
        if path is None or str(path) == STDIN:
            return None
        key = file_key(path)
        return key if isinstance(key, tuple) else None

    files = {key: path for path in inputs if (key := identity(path)) is not None}
    outs = list(outputs)
    for out, row in zip(outs, [None] * len(outs) if rows is None else rows, strict=True):
        if out is None or str(out) == STDOUT:
            continue
        lock = lock_path(out)
        for written, what in ((out, "is also an input"), (lock, f"its lock file {lock} is an input")):
            key = identity(written)
            if key is not None and key in files:
                raise InputError(f"{f'{row}: ' if row else ''}{out}: {what} ({files[key]}); writing it would "
                                 "destroy that input: name another output file")


def check_work_folder(folder: Path, inputs: Iterable[str | Path | None], job_file: str = "job.json") -> None:
    """Raise :class:`WorkFolderError` for a folder of a run's finished work (``OUTPUT.parts/``, ``OUTPUT.work/``) that
    the run would empty: one holding one of the ``inputs``, or files without the ``job_file`` every run writes first
    into a folder it makes (so not made by xlsent; the temporary file a killed write of ``job_file`` left is not
    counted).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "v.npy.parts"
    >>> (folder / "notes").mkdir(parents=True)
    >>> check_work_folder(folder, [])
    Traceback (most recent call last):
    ...
    xlsent.data.text_input.WorkFolderError: .../v.npy.parts: holds files but no job.json, so no xlsent run made it; ...
    """
    if not folder.is_dir():
        return
    inside = next((p for p in inputs if p is not None and str(p) != STDIN
                   and Path(p).resolve().is_relative_to(folder.resolve())), None)
    if inside is not None:
        raise WorkFolderError(f"{inside}: is an input inside {folder}, the folder of this run's work, which the run "
                              "empties; move the input or name another output")
    # a run killed while it wrote job.json leaves the temporary file of that atomic write (.job.json.*.tmp): its own
    left = [p for p in folder.iterdir() if not (p.name.startswith(".") and p.name.endswith(".tmp"))]
    if not (folder / job_file).is_file() and left:
        raise WorkFolderError(f"{folder}: holds files but no {job_file}, so no xlsent run made it; this run would "
                              "empty it: move its files or name another output")


def check_options_apply(specs: Sequence[InputSpec]) -> None:
    """Raise :class:`InputError` for an option (column, field, header) that fits none of the inputs' formats.

    >>> check_options_apply([InputSpec(Path("a.txt"), field="text")])
    Traceback (most recent call last):
    ...
    xlsent.data.text_input.InputError: --field applies to JSONL input only; a.txt is txt
    """
    formats = {spec.resolved_format() for spec in specs}
    for option, given, fits in (("--column", [s.column for s in specs], ("TSV", "Parquet")),
                                ("--field", [s.field for s in specs], ("JSONL",)),
                                ("--header/--no-header", [s.header for s in specs], ("TSV",))):
        if any(v is not None for v in given) and not formats & {f.lower() for f in fits}:
            names = ", ".join(f"{spec.name} is {spec.resolved_format()}" for spec in specs)
            raise InputError(f"{option} applies to {' and '.join(fits)} input only; {names}")


@contextlib.contextmanager
def readable(spec: InputSpec) -> Iterator[InputSpec]:
    """``spec`` itself for a regular file; for standard input or a pipe, a temporary copy of its bytes.

    The copy (in ``$TMPDIR``) keeps the input's extension and name, and is removed when the block ends.
    """
    if not spec.is_stream():
        yield spec
        return
    fd, tmp = tempfile.mkstemp(prefix="xlsent-input-", suffix="" if spec.is_stdin() else spec.path.suffix)
    try:
        with os.fdopen(fd, "wb") as out:
            if spec.is_stdin():
                shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
            else:
                with open(spec.path, "rb") as source:
                    shutil.copyfileobj(source, out, 1 << 20)
        yield replace(spec, path=Path(tmp), label=spec.name)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _decode(raw: bytes, name: str, line_no: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}:{line_no}: invalid UTF-8 at byte {exc.start} of the line; convert the file "
            f"(e.g. `iconv -f latin1 -t utf-8`) or clean that line"
        ) from exc


_CR_WARNED: set[str] = set()
"""The inputs :func:`_lines` has warned about for a carriage return inside a line (once each per process)."""


def _check_not_utf16(first: bytes, name: str) -> None:
    """Raise :class:`InputError` when the first line ``first`` of the file ``name`` is UTF-16 (:func:`utf16_reason`)."""
    why = utf16_reason(first)
    if why is not None:
        raise InputError(f"{name}: is UTF-16 ({why}), not UTF-8; convert it, e.g. `iconv -f UTF-16 -t UTF-8 "
                         f"{name} > {Path(name).stem}.utf8{Path(name).suffix}`")


def _warn_inner_cr(raw: bytes, name: str, line_no: int) -> None:
    """Warn, once per input, about a carriage return inside line ``line_no``: a file whose lines end in CR alone
    (classic Mac OS) is read as one line."""
    if b"\r" in raw and name not in _CR_WARNED:
        _CR_WARNED.add(name)
        log.warning("%s:%d: holds %d carriage return(s) (CR) inside the line: a line ends at \\n or \\r\\n only, so a "
                    "file whose lines end in CR alone is read as one line; convert it, e.g. `tr '\\r' '\\n'`",
                    name, line_no, raw.count(b"\r"))


def _lines(spec: InputSpec) -> Iterator[tuple[int, str]]:
    with open(spec.path, "rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if line_no == 1:
                _check_not_utf16(raw, spec.name)
                raw = raw.removeprefix(UTF8_BOM)
                if not raw:  # the file is a BOM alone: no line
                    return
            raw = raw.removesuffix(b"\n").removesuffix(b"\r")
            _warn_inner_cr(raw, spec.name, line_no)
            yield line_no, _decode(raw, spec.name, line_no)


def _tsv_rows(spec: InputSpec) -> Iterator[str]:
    column = spec.column if spec.column is not None else "0"
    lines = _lines(spec)
    names: list[str] = []
    if spec.tsv_header():
        try:
            names = next(lines)[1].split("\t")
        except StopIteration:
            return
        if not column.isdecimal() and column not in names:
            raise InputError(f"{spec.name}:1: no column named {column!r} in header {names}")
    index = int(column) if column.isdecimal() else names.index(column)
    for line_no, line in lines:
        cells = line.split("\t")
        if index >= len(cells):
            raise InputError(f"{spec.name}:{line_no}: {len(cells)} column(s), need column {index} (0-based)")
        yield cells[index]


def lone_surrogate(text: str) -> str | None:
    """What makes ``text`` no Unicode text: a lone surrogate (as a JSON escape ``\\ud800`` or undecodable bytes on a
    command line leave one), described with its position; None when it has none.

    >>> lone_surrogate("ok"), lone_surrogate("ab\\ud800")
    (None, 'a lone surrogate (U+D800) at position 2: not valid Unicode text')
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate (U+{ord(text[exc.start]):04X}) at position {exc.start}: not valid Unicode text"
    return None


def _jsonl_rows(spec: InputSpec) -> Iterator[str]:
    field = spec.field or "text"
    for line_no, line in _lines(spec):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{spec.name}:{line_no}: not valid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or field not in obj:
            raise InputError(f"{spec.name}:{line_no}: no field {field!r}; choose it with --field")
        value = obj[field]
        if value is not None and not isinstance(value, str):
            raise InputError(f"{spec.name}:{line_no}: field {field!r} holds {_json_kind(value)}, not text; give a "
                             "string (null for an empty row), or choose the text's field with --field")
        text = value or ""
        if bad := lone_surrogate(text):
            raise InputError(f"{spec.name}:{line_no}: field {field!r} holds {bad}; fix its \\u escape")
        yield text


def _json_kind(value: object) -> str:
    """What a JSON value that is not a string is, in words: ``a list``, ``an object``, ``a number`` or ``true``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else "a number"


def _parquet_rows(spec: InputSpec) -> Iterator[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    column = spec.column or "text"
    unreadable = f"{spec.name}: not a readable Parquet file"
    try:
        pf = pq.ParquetFile(spec.path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{unreadable} ({exc}); give a Parquet file, or --format for another format") from exc
    if column not in pf.schema_arrow.names:
        raise InputError(f"{spec.name}: no column {column!r} (columns: {pf.schema_arrow.names})")
    kind = pf.schema_arrow.field(column).type
    text = pa.types.is_dictionary(kind) and kind.value_type or kind
    if not (pa.types.is_string(text) or pa.types.is_large_string(text) or pa.types.is_null(text)):
        raise InputError(f"{spec.name}: column {column!r} holds {kind}, not text; choose a string column with "
                         "--column")
    row = 0
    try:
        for batch in pf.iter_batches(columns=[column], batch_size=65536):
            for value in batch.column(0).to_pylist():
                row += 1
                yield "" if value is None else str(value)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{unreadable} after row {row} ({exc}); the file is damaged: write it again") from exc


def iter_rows(spec: InputSpec) -> Iterator[str]:
    """Yield the text of every input row, in order (a stream must first go through :func:`readable`)."""
    spec.check()
    if spec.is_stream():
        raise InputError(f"{spec.name}: standard input and pipes can be read once only; copy them with readable()")
    fmt = spec.resolved_format()
    if fmt == "txt":
        return (line for _, line in _lines(spec))
    if fmt == "tsv":
        return _tsv_rows(spec)
    if fmt == "jsonl":
        return _jsonl_rows(spec)
    return _parquet_rows(spec)


def check_tsv_columns(spec: InputSpec, count: int) -> None:
    """Raise :class:`InputError` naming the file and line of the first data line of the TSV ``spec`` that has not
    exactly ``count`` tab-separated columns (a pair file has two: a third column is a tab inside a text, or another
    format, never to be guessed at)."""
    lines = _lines(spec)
    if spec.tsv_header():
        next(lines, None)
    for line_no, line in lines:
        cells = line.count("\t") + 1
        if cells != count:
            raise InputError(f"{spec.name}:{line_no}: {cells} column(s), expected {count} (source TAB target); "
                             "a tab inside a text must be replaced, e.g. by a space (the pairs `xlsent mine` writes "
                             "have the margin first: `cut -f2,3` them)")


HEADER_NAMES = frozenset({"src", "tgt", "source", "target", "text", "sentence", "translation", "src_text",
                          "tgt_text", "source_text", "target_text", "original"})
"""Column names that mark line 1 of a TSV as a header (:func:`header_like`), besides language codes."""


def header_like(spec: InputSpec) -> str | None:
    """Line 1 of the TSV ``spec`` when it looks like a header: every cell a column name of :data:`HEADER_NAMES` or a
    language code (``src TAB tgt``, ``de TAB en``); else None.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "pairs.tsv"
    >>> _ = path.write_text("de\\ten\\nHallo\\tHello\\n")
    >>> header_like(InputSpec(path, header=False))
    'de\\ten'
    """
    line = next(_lines(spec), (0, ""))[1]
    cells = [cell.strip().lower() for cell in line.split("\t")]
    named = all(cell in HEADER_NAMES or re.fullmatch(r"[a-z]{2,3}([-_][a-z0-9]{2,8})?", cell) for cell in cells)
    return line if line.strip() and named else None
