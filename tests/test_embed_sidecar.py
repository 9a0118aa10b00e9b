"""An embedding file's metadata describes the rows actually written: their count, and the input they came from."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from xlsent import store
from xlsent.checksum import sha256_file
from xlsent.data.text_input import InputError, InputSpec
from xlsent.embed_job import EmbedOptions, embed_file, parts_path
from xlsent.store import EmbeddingFileError, base_metadata, load_embeddings, save_embeddings
from xlsent.testing import LookupEncoder

LINES = [f"sentence {i}" for i in range(7)]


def encoder() -> LookupEncoder:
    return LookupEncoder({s: np.eye(8)[i] for i, s in enumerate(LINES)}, name="lookup")


class Interrupted(LookupEncoder):
    """Encodes two chunks, then is interrupted (as by Ctrl-C)."""

    calls = 0

    def encode(self, sentences: list[str], lang: str | None = None, **kw: object) -> np.ndarray:  # type: ignore[override]
        self.calls += 1
        if self.calls == 3:
            raise KeyboardInterrupt
        return super().encode(sentences, lang)


@pytest.mark.parametrize("suffix", [".npy", ".parquet"])
def test_a_stray_part_file_is_not_taken_in(suffix: str, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("".join(s + "\n" for s in LINES), encoding="utf-8")
    out = tmp_path / f"o{suffix}"
    opts = EmbedOptions(chunk_rows=3, progress=False)
    with pytest.raises(KeyboardInterrupt):
        embed_file(InputSpec(source), out, Interrupted(encoder().table, name="lookup"), opts)  # type: ignore[arg-type]
    parts = parts_path(out)
    shutil.copy(parts / "000000.npy", parts / "000005.npy")  # say, left by another run writing the same output
    summary = embed_file(InputSpec(source), out, encoder(), EmbedOptions(chunk_rows=3, progress=False, resume=True))
    vectors, meta = load_embeddings(out, expect_sha256=sha256_file(source))
    assert summary.rows == meta["rows"] == len(vectors) == len(LINES)
    np.testing.assert_array_equal(vectors, encoder().encode(LINES))


class Appending(LookupEncoder):
    """Appends a line to the input file while its first chunk is being embedded."""

    def __init__(self, source: Path) -> None:
        super().__init__(encoder().table, name="lookup")
        self.source = source

    def encode(self, sentences: list[str], lang: str | None = None, **kw: object) -> np.ndarray:  # type: ignore[override]
        if self.source.read_text(encoding="utf-8").count("\n") == len(LINES):
            with open(self.source, "a", encoding="utf-8") as fh:
                fh.write("one more line\n")
        return super().encode(sentences, lang)


def test_an_input_that_changes_during_the_run_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("".join(s + "\n" for s in LINES), encoding="utf-8")
    with pytest.raises(InputError, match="in.txt: changed while it was being embedded"):
        embed_file(InputSpec(source), tmp_path / "o.npy", Appending(source),  # type: ignore[arg-type]
                   EmbedOptions(chunk_rows=3, progress=False))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_a_run_killed_between_the_vectors_and_their_sidecar_leaves_no_mismatched_pair(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "e.npy"
    first = base_metadata(2, 3, "lookup", {"sha256": "a" * 64})
    save_embeddings(out, np.eye(3, dtype=np.float32)[:2], first)

    def killed(path: Path, obj: object) -> None:
        raise KeyboardInterrupt  # the kill, after the new vectors are in place, before their sidecar

    monkeypatch.setattr(store, "write_json", killed)
    with pytest.raises(KeyboardInterrupt):
        save_embeddings(out, np.ones((2, 3), np.float32), {**first, "source": {"sha256": "b" * 64}})
    with pytest.raises(EmbeddingFileError, match=r"e.npy: missing sidecar e.npy.json; re-create it"):
        load_embeddings(out, expect_sha256="a" * 64)
