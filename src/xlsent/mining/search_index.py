"""Saved sentence indexes for similarity search: ``xlsent index`` builds one, ``xlsent search`` queries it.

An index is a folder: ``index.faiss`` (a FAISS inner-product index over L2-normalised vectors),
``texts.txt`` (row i = vector i) and ``xlsent.json`` (encoder, rows, index kind, checksums).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.atomic import atomic_folder, check_folders_above, write_json, write_lines
from xlsent.checksum import sha256_file
from xlsent.data.empty_text import is_empty
from xlsent.data.text_input import InputSpec, iter_rows, lone_surrogate, printable_name
from xlsent.encoders.base import Encoder
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.model_dir import INDEX_TYPE

INDEX_FILE, TEXTS_FILE, MANIFEST = "index.faiss", "texts.txt", "xlsent.json"
INDEX_FILES = (INDEX_FILE, TEXTS_FILE, MANIFEST)
"""The files of an index folder, which it is built with and replaced with as a whole."""


@dataclass(frozen=True)
class Hit:
    """One search result."""

    rank: int
    score: float
    row: int
    text: str


def check_indexable(spec: InputSpec) -> None:
    """``ValueError`` naming the input when it holds no text to index (no rows, or only blank ones)."""
    if all(is_empty(row) for row in iter_rows(spec)):
        raise ValueError(f"{spec.name}: no text to index (the input is empty or blank); give a file with sentences")


def check_queries(queries: Sequence[str], file: str | None = None) -> None:
    """ValueError unless there is a query and each has text that is valid Unicode, naming the query by its 1-based
    number (those of ``xlsent search --file``, ``file``, counted after those of the command line).

    >>> check_queries(["Wo ist der Bahnhof?", " "])
    Traceback (most recent call last):
    ...
    ValueError: query 2 of 2 is empty: give text to search for (queries from --file count after those on the ...
    """
    if not queries and file is not None:
        raise ValueError(f"--file {file}: holds no query, and none is on the command line; give one query a line")
    if not queries:
        raise ValueError("give at least one QUERY or --file")
    order = "queries from --file count after those on the command line"
    if blank := [i + 1 for i, query in enumerate(queries) if is_empty(query)]:
        raise ValueError(f"query {', '.join(map(str, blank[:5]))} of {len(queries)} is empty: give text to search "
                         f"for ({order})")
    if bad := next(((i + 1, why) for i, query in enumerate(queries) if (why := lone_surrogate(query))), None):
        raise ValueError(f"query {bad[0]} of {len(queries)} holds {bad[1]} (bytes that are not UTF-8 on the command "
                         f"line?); give it as UTF-8 text ({order})")


def check_index_output(out: Path, *, overwrite: bool) -> None:
    """``FileExistsError`` when ``out`` is a folder holding files (an earlier index?) and ``overwrite`` is false, or
    holding more than an index's files (the new index replaces the whole folder); ``ValueError`` when a file stands
    where a folder above it must be."""
    check_folders_above(out, "-o")
    held = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if held and not overwrite:
        what = "an index" if (out / MANIFEST).is_file() else "files"
        raise FileExistsError(f"-o {out}: the folder already holds {what}; replace it with --overwrite, or name a "
                              "new folder")
    if others := [name for name in held if name not in INDEX_FILES]:
        raise FileExistsError(f"-o {out}: the folder holds more than an index ({', '.join(others[:3])}), and a new "
                              "index replaces the whole folder; name a new folder, or move those files out")


def build_sentence_index(spec: InputSpec, out_dir: str | Path, vectors_file: str | Path, model: str, *,
                         kind: str = "auto") -> Path:
    """Save a searchable index folder at ``out_dir`` of the rows of ``spec`` and their embedding file
    ``vectors_file`` (as ``xlsent embed`` writes it: its sidecar names the encoder, its checksum the input), in place
    of the index there, if any, as a whole: a failed or killed build leaves ``out_dir`` as it was; ``ValueError`` for
    an input without text (:func:`check_indexable`), ``FileExistsError`` for an ``out_dir`` holding other files
    (:func:`check_index_output`)."""
    import faiss

    from xlsent.mining.faiss_index import build_index
    from xlsent.store import load_embeddings

    check_indexable(spec)
    sha = sha256_file(spec.path)
    texts = list(iter_rows(spec))
    vecs, meta = load_embeddings(vectors_file, expect_sha256=sha, expect_rows=len(texts))
    out = Path(out_dir)
    check_index_output(out, overwrite=True)
    index = build_index(np.ascontiguousarray(vecs, dtype=np.float32), kind)
    with atomic_folder(out) as tmp:
        faiss.write_index(index, str(tmp / INDEX_FILE))
        write_lines(tmp / TEXTS_FILE, (t.replace("\n", " ") + "\n" for t in texts))
        write_json(tmp / MANIFEST, {"type": INDEX_TYPE, "model": model, "encoder": meta["encoder"],
                                    "rows": len(texts), "dim": int(vecs.shape[1]), "kind": kind,
                                    "source": {"path": printable_name(spec.name), "sha256": sha},
                                    "files": {n: sha256_file(tmp / n) for n in (INDEX_FILE, TEXTS_FILE)}})
    return out


def _read_manifest(path: Path) -> dict[str, Any]:
    """An index's ``xlsent.json``; ``ValueError`` naming it when it is not JSON or lacks a field."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not readable JSON ({exc}); rebuild the index with `xlsent index`") from exc
    if isinstance(meta, dict) and isinstance(meta.get("type"), str) and meta["type"] != INDEX_TYPE:
        raise ValueError(f"{path.parent}: is a model directory (type {meta['type']!r}), not a sentence index; build an "
                         f"index of your sentences with `xlsent index FILE -o INDEX --model {path.parent}` and "
                         "search that")
    fields = {"model": str, "encoder": str, "rows": int, "files": dict}
    bad = [name for name, kind in fields.items() if not isinstance(meta, dict) or not isinstance(meta.get(name), kind)]
    if bad:
        raise ValueError(f"{path}: field(s) {', '.join(bad)} missing or of the wrong type; rebuild the index with "
                         "`xlsent index`")
    return meta


@dataclass
class SentenceIndex:
    """A loaded index folder."""

    directory: Path
    model: str
    encoder: str
    texts: list[str]
    index: object

    @classmethod
    def open(cls, directory: str | Path) -> SentenceIndex:
        import faiss

        d = Path(directory)
        if not (d / MANIFEST).is_file():
            raise FileNotFoundError(f"{d}: not a sentence index (no {MANIFEST}); build one with `xlsent index`")
        meta = _read_manifest(d / MANIFEST)
        for name, sha in meta["files"].items():
            if not (d / name).is_file() or sha256_file(d / name) != sha:
                raise ValueError(f"{d / name}: missing or corrupt (checksum differs from {MANIFEST}); rebuild it")
        # bytes, not read_text: universal newlines would read a carriage return inside a row as a row's end
        texts = (d / TEXTS_FILE).read_bytes().decode("utf-8").split("\n")[: meta["rows"]]
        if not texts:
            raise ValueError(f"{d}: the index holds no rows; rebuild it from a file with sentences")
        return cls(d, meta["model"], meta["encoder"], texts, faiss.read_index(str(d / INDEX_FILE)))

    def search_sentences(self, sentences: Sequence[str], encoder: Encoder, k: int = 5) -> list[list[Hit]]:
        """The ``k`` best rows for each of ``sentences``, embedded by ``encoder``, which must be the encoder the
        index was built with (``ValueError`` otherwise: its vectors would not be comparable)."""
        if encoder_id(encoder) != self.encoder:
            raise ValueError(f"{self.directory} was built with {self.encoder}, but {self.model} is now "
                             f"{encoder_id(encoder)}; rebuild the index")
        return self.search(encoder.encode(sentences), k)

    def search(self, queries: np.ndarray, k: int = 5) -> list[list[Hit]]:
        """The ``k`` best rows with text for each query vector (a blank row of the input keeps its place in the index,
        as a zero vector, but is never a hit: fewer than ``k`` hits where fewer rows have text)."""
        blank = sum(1 for text in self.texts if is_empty(text))
        asked = min(k + blank, len(self.texts))  # enough that the blank rows found leave k with text
        scores, rows = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), asked)  # type: ignore[attr-defined]
        out = []
        for srow, irow in zip(scores, rows, strict=True):
            found = [(float(s), int(i)) for s, i in zip(srow, irow, strict=True)
                     if i >= 0 and not is_empty(self.texts[i])]
            out.append([Hit(r + 1, s, i, self.texts[i]) for r, (s, i) in enumerate(found[:k])])
        return out
