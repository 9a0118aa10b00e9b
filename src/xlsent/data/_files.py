"""File helpers shared by the dataset readers: locating files, decoding lines, splitting fields."""

from __future__ import annotations

import os
from collections.abc import Collection, Sized
from pathlib import Path

from xlsent.paths import data_root


def dataset_path(root: str | Path | None, *parts: str) -> Path:
    """``parts`` joined under the benchmark data folder; ``FileNotFoundError`` naming the path if absent."""
    path = data_root(root).joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found (benchmark data folder incomplete)")
    return path


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a data file (missing, a dangling link, a folder, unreadable), or None.

    >>> file_problem(Path("/"))
    'is a folder, not a file'
    """
    if path.is_dir():
        return "is a folder, not a file"
    if path.is_symlink() and not path.exists():
        return "is a link to a missing file"
    if not path.exists():
        return "is missing"
    if not path.is_file() or not os.access(path, os.R_OK):
        return "is not a readable file"
    return None


def check_readable(path: Path, fix: str) -> None:
    """``ValueError`` naming ``path``, what is wrong with it and ``fix`` unless it is a readable file."""
    problem = file_problem(path)
    if problem is not None:
        raise ValueError(f"{path} {problem}; {fix}")


UTF8_BOM = b"\xef\xbb\xbf"
"""The byte-order mark some editors write at the start of a UTF-8 file: its encoding's signature, not text; every
reader drops it from the start of a file (as Python's ``utf-8-sig``) and keeps one found anywhere else."""


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
"""The byte-order marks that start a UTF-16 file (little- and big-endian)."""


def utf16_reason(first: bytes) -> str | None:
    """Why the first line ``first`` of a file is UTF-16, or None: it starts with a UTF-16 byte-order mark, or (at least
    one character) every other byte is NUL and no other byte is, which is what UTF-16 makes of ASCII text. A NUL
    elsewhere is a valid UTF-8 character and is read as one.

    >>> utf16_reason("ab".encode("utf-16-le")), utf16_reason("ab".encode("utf-16-be"))
    ('NUL bytes stand between its characters', 'NUL bytes stand between its characters')
    >>> utf16_reason(bytes([97, 0, 0, 98])) is None  # a NUL between two characters: UTF-8 text
    True
    """
    if first.startswith(UTF16_BOMS):
        return "it starts with a UTF-16 byte-order mark"
    body = first.removesuffix(b"\n").removesuffix(b"\r")
    if len(body) >= 2:
        for nuls, chars in ((body[1::2], body[0::2]), (body[0::2], body[1::2])):
            if not nuls.strip(b"\x00") and 0 not in chars:
                return "NUL bytes stand between its characters"
    return None


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 file without their ending (``\\n`` or ``\\r\\n``) or a leading :data:`UTF8_BOM`.

    Only ``\\n`` ends a line: other Unicode line separators found inside sentences are kept. Invalid UTF-8 raises
    ``ValueError`` naming the file and line; a UTF-16 file (:func:`utf16_reason`) one naming the file.
    """
    check_readable(path, "expected a UTF-8 text file of the benchmark data (fetch the data again)")
    raw = path.read_bytes()
    why = utf16_reason(raw.split(b"\n", 1)[0])
    if why is not None:
        raise ValueError(f"{path}: is UTF-16 ({why}), not UTF-8; convert it, e.g. `iconv -f UTF-16 -t UTF-8 {path}`")
    raw = raw.removeprefix(UTF8_BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_no = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}:{line_no}: invalid UTF-8 ({exc.reason}); expected a UTF-8 text file") from exc
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def read_legacy_lines(path: Path) -> list[str]:
    """The lines of a single-byte encoded file: each line decoded as cp1252, or latin-1 where cp1252 fails."""
    check_readable(path, "expected a text file of the benchmark data (fetch the data again)")
    lines = path.read_bytes().split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    decoded = []
    for raw in lines:
        raw = raw.removesuffix(b"\r")
        try:
            decoded.append(raw.decode("cp1252"))
        except UnicodeDecodeError:
            decoded.append(raw.decode("latin-1"))
    return decoded


def split_fields(line: str, path: Path, line_no: int, expected: int, *, at_least: bool = False) -> list[str]:
    """``line`` split on tabs; ``ValueError`` naming the file and line unless it has ``expected`` fields.

    With ``at_least``, more fields are allowed (and returned).
    """
    fields = line.split("\t")
    if len(fields) < expected or (len(fields) > expected and not at_least):
        wanted = f"at least {expected}" if at_least else str(expected)
        raise ValueError(f"{path}:{line_no}: {len(fields)} tab-separated field(s), expected {wanted}")
    return fields


def parse_float(value: str, path: Path, line_no: int, what: str) -> float:
    """``value`` as a float; ``ValueError`` naming the file, line and what was expected otherwise."""
    try:
        return float(value)
    except ValueError as exc:
        raise ValueError(f"{path}:{line_no}: {value!r} is not a number; expected {what}") from exc


def check_choice(value: str, choices: Collection[str], what: str) -> None:
    """``ValueError`` listing the valid ``choices`` unless ``value`` is one of them."""
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}; valid: {' '.join(choices)}")


def check_same_length(path_a: Path, a: Sized, path_b: Path, b: Sized) -> None:
    """``ValueError`` naming both files unless they have the same number of rows."""
    if len(a) != len(b):
        raise ValueError(f"row counts differ: {path_a} has {len(a)}, {path_b} has {len(b)}; expected row-aligned files")
