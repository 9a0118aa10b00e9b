"""Bitext a user brings to ``xlsent train distill|laser --bitext LANG=FILE``: read, checked, split, recorded.

A file holds pairs of one language ``LANG`` with English, in one of three forms:

- ``LANG=pairs.tsv``: one pair a line, ``text TAB english`` (no header; a line with no tab, or more than one, is an
  error naming the file and line);
- ``LANG=pairs.jsonl``: one JSON object a line with the text under ``LANG`` or ``text`` and the English under
  ``en``, ``eng`` or ``english`` (an object with exactly two string fields, one of them English, also works);
- ``LANG=text.txt,english.txt``: two files, line i of the first translating line i of the second (their line
  counts must match).

Every line must be UTF-8 (an error names the file and line). Surrounding whitespace is stripped; a pair with an empty
side (:func:`xlsent.data.empty_text.is_empty`) is left out and counted, with its first line numbers in the log, as
is a repeated pair. A held-out part of each language (:func:`held_out_count` pairs, seeded, sharing no sentence with
the rest) is split off to choose the checkpoint. What is recorded (the model card, ``data.json``, the run folder's
``user_bitext.json``) is each file's path, SHA-256 and counts, never its text; ``--resume`` refuses a run whose
files changed (:func:`check_unchanged`).

>>> import tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / "kab.tsv"
>>> _ = path.write_text("".join(f"Tazwart {i}\\tSentence {i}\\n" for i in range(120)), encoding="utf-8")
>>> spec = parse_bitext_option(f"kab={path}")
>>> data = read_user_bitext(spec)
>>> len(data.xx), data.xx[0], data.en[0]
(120, 'Tazwart 0', 'Sentence 0')
>>> held_out_count(120), held_out_count(3000)
(50, 200)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.atomic import write_json
from xlsent.checksum import sha256_file
from xlsent.data.empty_text import is_empty
from xlsent.data.multilingual import EnglishBitext
from xlsent.data.text_input import InputError, InputSpec, iter_rows
from xlsent.languages import check_lang, language, same_language

log = logging.getLogger(__name__)

RECORD_FILE = "user_bitext.json"
"""In a training run's folder: the user's files, their checksums and counts (what ``--resume`` checks)."""
ENGLISH_FIELDS = ("en", "eng", "english")
MIN_HELD_OUT = 50
"""The least held-out pairs of a user language (retrieval among fewer says little about a checkpoint)."""
MAX_HELD_OUT = 200
HELD_OUT_FRACTION = 0.1
SHOWN_LINES = 5


class BitextError(ValueError):
    """A user bitext file cannot be used as given; the message names the file (and line) and a fix."""


@dataclass(frozen=True)
class BitextFile:
    """One ``--bitext`` entry: the language and its file (``english`` set: two aligned files, ``path`` the text's).

    In a TOML config: ``[[bitext]]`` tables with ``lang``, ``path`` and optionally ``english``.
    """

    lang: str
    path: str
    english: str = ""

    @property
    def files(self) -> list[Path]:
        return [Path(self.path), *([Path(self.english)] if self.english else [])]

    @property
    def label(self) -> str:
        return f"{self.lang}={','.join(str(p) for p in self.files)}"

    @classmethod
    def coerce(cls, value: Any) -> BitextFile:
        """From a config value: a ``LANG=FILE`` string or a ``{lang, path[, english]}`` table.

        >>> BitextFile.coerce({"lang": "kab", "path": "kab.tsv"}) == BitextFile.coerce("kab=kab.tsv")
        True
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return parse_bitext_option(value)
        if isinstance(value, dict) and {"lang", "path"} <= set(value) <= {"lang", "path", "english"} and all(
                isinstance(v, str) for v in value.values()):
            return cls(**value)
        raise BitextError(f"bitext entry {value!r}: expected a table with lang, path (and optionally english) as "
                          "strings, or a \"LANG=FILE\" string")


def parse_bitext_option(raw: str) -> BitextFile:
    """A ``--bitext`` value: ``LANG=FILE`` (TSV or JSONL) or ``LANG=FILE_X,FILE_EN``.

    >>> parse_bitext_option("kab=a.txt,b.txt")
    BitextFile(lang='kab', path='a.txt', english='b.txt')
    >>> parse_bitext_option("pairs.tsv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    xlsent.data.user_bitext.BitextError: --bitext 'pairs.tsv': expected LANG=FILE (e.g. kab=pairs.tsv) or ...
    """
    lang, sep, value = raw.partition("=")
    if not sep or not lang.strip() or not value.strip():
        raise BitextError(f"--bitext {raw!r}: expected LANG=FILE (e.g. kab=pairs.tsv) or LANG=FILE_X,FILE_EN")
    value = value.strip()
    if "," in value and not Path(value).exists():
        text, english = (v.strip() for v in value.rsplit(",", 1))
        return BitextFile(lang.strip(), text, english)
    return BitextFile(lang.strip(), value)


@dataclass
class UserPairs:
    """A user file's pairs as read, and what reading it left out."""

    spec: BitextFile
    xx: list[str]
    en: list[str]
    sha256: dict[str, str]
    empty_lines: list[int] = field(default_factory=list)
    repeated: int = 0


def _decoded_lines(path: Path) -> list[str]:
    if path.is_dir():
        raise BitextError(f"{path}: is a directory (given with --bitext); give the file of pairs")
    if not path.is_file():
        raise BitextError(f"{path}: no such file (given with --bitext); check the path")
    try:
        return list(iter_rows(InputSpec(path, format="txt")))
    except InputError as exc:
        raise BitextError(str(exc)) from exc


def _tsv_pair(line: str, path: Path, line_no: int) -> tuple[str, str]:
    cells = line.split("\t")
    if len(cells) != 2:
        raise BitextError(f"{path}:{line_no}: {len(cells) - 1} tab(s); a bitext TSV line is `text TAB english` "
                          "(one tab; no header)")
    return cells[0], cells[1]


def _jsonl_pair(line: str, path: Path, line_no: int, lang: str) -> tuple[str, str]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BitextError(f"{path}:{line_no}: not valid JSON ({exc.msg})") from exc
    if not isinstance(obj, dict):
        raise BitextError(f"{path}:{line_no}: expected a JSON object, got {type(obj).__name__}")
    english = next((k for k in ENGLISH_FIELDS if k in obj), None)
    text = next((k for k in (lang, "text") if k in obj and k != english), None)
    if text is None and english is not None and len(obj) == 2:
        text = next(k for k in obj if k != english)
    if english is None or text is None or not isinstance(obj[english], str) or not isinstance(obj[text], str):
        raise BitextError(f"{path}:{line_no}: expected the text under {lang!r} or 'text' and the English under "
                          f"{' or '.join(repr(k) for k in ENGLISH_FIELDS)}, as strings; found fields {sorted(obj)}")
    return obj[text], obj[english]


def _raw_pairs(spec: BitextFile) -> list[tuple[int, str, str]]:
    """(line number, text, English) for every line of the spec's file(s)."""
    if spec.english:
        a, b = (Path(p) for p in (spec.path, spec.english))
        xx, en = _decoded_lines(a), _decoded_lines(b)
        if len(xx) != len(en):
            raise BitextError(f"{a} has {len(xx)} lines but {b} has {len(en)}: two bitext files must be line-aligned "
                              "(line i of the first translating line i of the second)")
        return [(i + 1, x, e) for i, (x, e) in enumerate(zip(xx, en, strict=True))]
    path = Path(spec.path)
    lines = _decoded_lines(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return [(i + 1, *_jsonl_pair(line, path, i + 1, spec.lang)) for i, line in enumerate(lines)]
    return [(i + 1, *_tsv_pair(line, path, i + 1)) for i, line in enumerate(lines)]


def read_user_bitext(spec: BitextFile) -> UserPairs:
    """The pairs of ``spec``'s file(s), stripped, without pairs with an empty side or repeated ones (both counted)."""
    check_lang(spec.lang)
    sums = {str(p): sha256_file(p) for p in spec.files if p.is_file()}
    out = UserPairs(spec, [], [], sums)
    seen: set[tuple[str, str]] = set()
    for line_no, x, e in _raw_pairs(spec):
        x, e = x.strip(), e.strip()
        if is_empty(x) or is_empty(e):
            out.empty_lines.append(line_no)
        elif (x, e) in seen:
            out.repeated += 1
        else:
            seen.add((x, e))
            out.xx.append(x)
            out.en.append(e)
    if out.empty_lines:
        shown = ", ".join(map(str, out.empty_lines[:SHOWN_LINES])) + (", ..." if len(out.empty_lines) > SHOWN_LINES
                                                                       else "")
        log.warning("%s: %d pair(s) with an empty side left out (line %s)", spec.label, len(out.empty_lines), shown)
    if out.repeated:
        log.info("%s: %d repeated pair(s) left out", spec.label, out.repeated)
    return out


def held_out_count(pairs: int) -> int:
    """How many of a user language's ``pairs`` are held out: a tenth, at least 50 and at most 200."""
    return int(min(MAX_HELD_OUT, max(MIN_HELD_OUT, round(HELD_OUT_FRACTION * pairs))))


def split_user_pairs(data: UserPairs, *, hold_out: bool, seed: int, index: int) -> EnglishBitext:
    """``data`` as one language's bitext: with ``hold_out``, :func:`held_out_count` pairs (seeded) held out and every
    training pair sharing a sentence with them left out of training."""
    n = len(data.xx)
    held: list[int] = []
    if hold_out:
        need = held_out_count(n)
        if n < 2 * need:
            raise BitextError(f"{data.spec.label}: {n} usable pair(s); at least {2 * MIN_HELD_OUT} are needed "
                              f"({MIN_HELD_OUT} are held out to choose the checkpoint, as many to train)")
        order = np.random.default_rng([seed, 7919, index]).permutation(n)
        held = sorted(int(r) for r in order[:need])
    taken = {data.xx[r] for r in held} | {data.en[r] for r in held}
    held_set = set(held)
    train = [r for r in range(n) if r not in held_set and data.xx[r] not in taken and data.en[r] not in taken]
    sources = {f"user:{Path(data.spec.path).name}": {"pairs": len(train), "held_out": len(held),
                                                    "empty_left_out": len(data.empty_lines),
                                                    "repeated_left_out": data.repeated,
                                                    "sharing_a_held_out_sentence": n - len(held) - len(train)}}
    return EnglishBitext(data.spec.lang, [data.xx[r] for r in train], [data.en[r] for r in train],
                         [data.xx[r] for r in held], [data.en[r] for r in held], sources)


@dataclass(frozen=True)
class UserBitext:
    """Every user language's bitext (training and held-out pairs) and the record of its files."""

    bitext: list[EnglishBitext]
    records: list[dict[str, Any]]

    @property
    def languages(self) -> list[str]:
        return [b.lang for b in self.bitext]


def load_user_bitext(specs: Sequence[BitextFile], *, hold_out: bool, seed: int) -> UserBitext:
    """Read, check and split every ``--bitext`` file; its language code is taken in its one spelling, and one
    outside xlsent's table is warned about (:func:`xlsent.languages.check_lang`); a file or language given twice is
    an error."""
    specs = [replace(s, lang=str(check_lang(s.lang))) for s in specs]
    paths = [str(p.resolve()) for s in specs for p in s.files]
    twice = sorted({p for p in paths if paths.count(p) > 1})
    if twice:
        raise BitextError(f"--bitext: {', '.join(twice)} given more than once; give each file once")
    if english := [s.lang for s in specs if "en" in same_language(s.lang)]:
        raise BitextError(f"--bitext: {english[0]} is English, the other side of every pair; give the pairs of "
                          "another language with English")
    names = [min(same_language(s.lang)) for s in specs]  # de and deu: one language
    again = sorted({s.lang for s, name in zip(specs, names, strict=True) if names.count(name) > 1})
    if again:
        raise BitextError(f"--bitext: language(s) {', '.join(again)} given more than once (codes of one language "
                          "count as one); put each language's pairs in one file")
    bitext, records = [], []
    for i, spec in enumerate(specs):
        data = read_user_bitext(spec)
        b = split_user_pairs(data, hold_out=hold_out, seed=seed, index=i)
        bitext.append(b)
        records.append({**asdict(spec), "sha256": data.sha256, "pairs": len(b.xx), "held_out": len(b.valid_xx),
                        "read": len(data.xx) + len(data.empty_lines) + data.repeated,
                        "empty_left_out": len(data.empty_lines), "repeated_left_out": data.repeated,
                        "in_language_table": language(spec.lang) is not None})
    return UserBitext(bitext, records)


def shipped_without(shipped: Sequence[str], user: UserBitext) -> list[str]:
    """The shipped languages less the user's: a user language replaces the shipped pairs of the same code (logged).

    >>> shipped_without(["de", "fr"], UserBitext([], []))
    ['de', 'fr']
    """
    mine = {code: lang for lang in user.languages for code in same_language(lang)}
    for code in (x for x in shipped if x in mine):
        log.info("--bitext: the user's %s pairs replace the shipped %s-en bitext", mine[code], code)
    return [x for x in shipped if x not in mine]


def as_recorded(run_folder: Path, specs: Sequence[BitextFile]) -> list[BitextFile]:
    """``specs`` with each entry's files spelled as the run in ``run_folder`` recorded them where the entry gives the
    same language and the same bytes by another path (absolute, with ``./``, relative from another folder): resuming
    with them is resuming with the files the run started with. Other entries, and all without a readable record,
    are returned as given.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "kab.tsv").write_text("azul", encoding="utf-8")
    >>> sums = {"kab.tsv": sha256_file(folder / "kab.tsv")}
    >>> record = {"lang": "kab", "path": "kab.tsv", "english": "", "sha256": sums}
    >>> _ = (folder / RECORD_FILE).write_text(json.dumps([record]), encoding="utf-8")
    >>> as_recorded(folder, [BitextFile("kab", str(folder / "kab.tsv"))])
    [BitextFile(lang='kab', path='kab.tsv', english='')]
    """
    try:
        saved = json.loads((run_folder / RECORD_FILE).read_text(encoding="utf-8"))
        recorded = {(r["lang"].lower(), tuple(r["sha256"].values())): BitextFile(r["lang"], r["path"], r["english"])
                    for r in saved}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return list(specs)
    out = []
    for spec in specs:
        sums = tuple(sha256_file(p) for p in spec.files if p.is_file())
        match = recorded.get((spec.lang.lower(), sums))
        out.append(replace(spec, path=match.path, english=match.english) if match is not None else spec)
    return out


def check_unchanged(run_folder: Path, records: Sequence[dict[str, Any]], resume: bool) -> None:
    """On ``resume``, refuse user files whose checksums differ from those the run started with (naming each);
    record ``records`` in a run folder that has no record yet (a run started without ``resume`` over an earlier one
    leaves its record as it is: the training loop refuses to start it)."""
    path = run_folder / RECORD_FILE
    if path.is_file() and not resume:
        return
    if path.is_file():
        saved = {p: s for r in json.loads(path.read_text(encoding="utf-8")) for p, s in r["sha256"].items()}
        now = {p: s for r in records for p, s in r["sha256"].items()}
        changed = [p for p in sorted(saved.keys() | now.keys()) if saved.get(p) != now.get(p)]
        if changed:
            raise BitextError(f"{run_folder}: --resume with changed --bitext file(s): {', '.join(changed)} "
                              f"(not the bytes the run started with, {path}); restore them or train into a new "
                              "--out")
    if records:
        run_folder.mkdir(parents=True, exist_ok=True)
        write_json(path, list(records))

