"""`xlsent embed` end to end on a tiny model: formats, empty rows, bad input, resume, metadata checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xlsent.cli import main
from xlsent.data.text_input import InputSpec
from xlsent.embed_job import EmbedOptions, embed_file
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.store import EmbeddingFileError, load_embeddings

LINES = ["the dog barks", "", "der hund bellt", "a cat runs", "the cat", "b"]


def write_txt(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_embed_txt_keeps_rows_and_records_metadata(tmp_path: Path, tiny_model_dir: Path,
                                                   tiny_encoder: TransformerEncoder,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    src = write_txt(tmp_path / "in.txt", LINES)
    out = tmp_path / "out.npy"
    assert main(["embed", str(src), "-o", str(out), "--model", str(tiny_model_dir), "-q"]) == 0
    assert "1 empty row(s)" in capsys.readouterr().out
    vecs, meta = load_embeddings(out)
    assert vecs.shape == (6, 32) and meta["rows"] == 6 and meta["empty_rows"] == 1
    assert not vecs[1].any()
    np.testing.assert_allclose(vecs, tiny_encoder.encode(LINES), atol=1e-6)
    with pytest.raises(EmbeddingFileError, match="another file"):
        load_embeddings(out, expect_sha256="0" * 64)
    with pytest.raises(EmbeddingFileError, match="encoder"):
        load_embeddings(out, expect_encoder="other")


def test_strict_and_bad_utf8_name_the_line(tmp_path: Path, tiny_model_dir: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    src = write_txt(tmp_path / "in.txt", LINES)
    assert main(["embed", str(src), "-o", str(tmp_path / "o.npy"), "--model", str(tiny_model_dir),
                 "--strict", "-q"]) == 2
    assert "in.txt:2: empty line" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nalso fine\nbroken \xff here\n")
    assert main(["embed", str(bad), "-o", str(tmp_path / "b.npy"), "--model", str(tiny_model_dir), "-q"]) == 2
    assert "bad.txt:3: invalid UTF-8" in capsys.readouterr().err
    assert not (tmp_path / "b.npy").exists()


@pytest.mark.parametrize("fmt", ["tsv", "jsonl", "parquet"])
def test_structured_inputs(tmp_path: Path, tiny_encoder: TransformerEncoder, fmt: str) -> None:
    if fmt == "tsv":
        src = write_txt(tmp_path / "in.tsv", ["id\ttext"] + [f"{i}\t{s}" for i, s in enumerate(LINES)])
        spec = InputSpec(src, column="text")
    elif fmt == "jsonl":
        src = write_txt(tmp_path / "in.jsonl", [json.dumps({"sent": s}) for s in LINES])
        spec = InputSpec(src, field="sent")
    else:
        src = tmp_path / "in.parquet"
        pq.write_table(pa.table({"text": LINES}), src)
        spec = InputSpec(src, column="text")
    out = tmp_path / "out.parquet"
    embed_file(spec, out, tiny_encoder, EmbedOptions(progress=False, chunk_rows=4))
    vecs, meta = load_embeddings(out)
    assert meta["source"]["format"] == fmt
    np.testing.assert_allclose(vecs, tiny_encoder.encode(LINES), atol=1e-6)


def test_resume_after_kill_gives_identical_output(tmp_path: Path, tiny_encoder: TransformerEncoder) -> None:
    lines = [f"the dog {'barks ' * (i % 7)}" for i in range(50)]
    src = write_txt(tmp_path / "in.txt", lines)
    opts = EmbedOptions(progress=False, chunk_rows=8, resume=True)
    fresh = tmp_path / "fresh.npy"
    embed_file(InputSpec(src), fresh, tiny_encoder, opts)

    calls = {"n": 0}

    class Dying:
        name, dim, id = tiny_encoder.name, tiny_encoder.dim, tiny_encoder.id

        def encode(self, sentences, lang=None, **kw):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            if calls["n"] == 4:
                raise KeyboardInterrupt
            return tiny_encoder.encode(sentences, lang, **kw)

    out = tmp_path / "out.npy"
    with pytest.raises(KeyboardInterrupt):
        embed_file(InputSpec(src), out, Dying(), opts)  # type: ignore[arg-type]
    assert not out.exists() and len(list((tmp_path / "out.npy.parts").glob("0*.npy"))) == 3
    summary = embed_file(InputSpec(src), out, tiny_encoder, opts)
    assert summary.resumed_chunks == 3
    assert np.load(out).tobytes() == np.load(fresh).tobytes()
    assert not (tmp_path / "out.npy.parts").exists()


def test_data_tatoeba_deu_eng_accuracy(tmp_path: Path, shared_data: Path,
                                       default_encoder: TransformerEncoder) -> None:
    """Issue acceptance: embed tatoeba deu/eng with the CLI; de->en nearest neighbour >= 94%."""
    outs = []
    for side in ("deu", "eng"):
        out = tmp_path / f"{side}.npy"
        assert main(["embed", str(shared_data / "tatoeba_v1" / f"tatoeba.deu-eng.{side}"), "-o", str(out),
                     "-q"]) == 0
        outs.append(load_embeddings(out)[0])
    de, en = outs
    assert de.shape == (1000, 384) and de.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(de, axis=1), 1.0, atol=1e-5)
    accuracy = float(np.mean((de @ en.T).argmax(1) == np.arange(1000)))
    assert accuracy >= 0.94


def test_bad_language_code_and_options_are_errors(tmp_path: Path, tiny_model_dir: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.txt"
    src.write_text("the dog\n", encoding="utf-8")
    assert main(["embed", str(src), "-o", str(tmp_path / "o.npy"), "--model", str(tiny_model_dir), "-q",
                 "--lang", "German"]) == 2
    assert "not a language code" in capsys.readouterr().err
    assert main(["embed", str(src), "-o", str(tmp_path / "o.npy"), "--model", str(tiny_model_dir), "-q",
                 "--chunk-rows", "0"]) == 2
    assert not (tmp_path / "o.npy").exists()
