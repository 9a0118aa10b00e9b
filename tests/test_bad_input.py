"""Awkward and hostile input to the CLI: a table of cases (input, exit code, message, files left behind) that
docs/bad-input.md mirrors row for row, so the list can only grow; then what does not fit a table row.

Each table case runs ``xlsent`` in-process in a fresh folder ``{w}`` holding the files of :func:`standard_files`,
with ``$XLSENT_HOME`` and the temporary directory elsewhere; ``{model}`` is the tiny random model. Cases that
must fail before any work use the encoder ``toy:unloadable``, which raises if it is ever loaded.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from xlsent.checksum import sha256_file
from xlsent.cli import build_parser, main
from xlsent.data.text_input import InputError, InputSpec
from xlsent.embed_job import EmbedOptions, embed_file
from xlsent.encoders import model_dir
from xlsent.encoders.model_dir import ModelDirError, read_manifest, write_manifest
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.results import ResultExistsError, TaskResult
from xlsent.mining.config import MineConfig
from xlsent.mining.engine import LocalEngine
from xlsent.mining.job import mine_files
from xlsent.store import load_embeddings
from xlsent.testing import LookupEncoder, smallest_models, toy_training_record
from xlsent.training.method import get_method, model_manifest

DOCS = Path(__file__).resolve().parents[1] / "docs" / "bad-input.md"

TOY_MODULE = '''"""Toy encoders for tests/test_bad_input.py."""
import zlib

import numpy as np

from xlsent.testing import LookupEncoder
from xlsent.testing import toy_training_record

LANGS = ("deu", "fra", "kat")


def onehot():
    eye = np.eye(4)
    return LookupEncoder({s: eye[i] for lang in LANGS for i in range(4)
                          for s in (f"{lang} sentence {i}", f"english {lang} {i}")}, name="toy")


def unloadable():
    raise RuntimeError("the encoder was loaded: the input should have been refused before any work")


class Dying(LookupEncoder):
    """Encodes one chunk, then is interrupted (as by Ctrl-C) on the second."""

    calls = 0

    def encode(self, sentences, lang=None, **kw):
        Dying.calls += 1
        if Dying.calls == 2:
            raise KeyboardInterrupt
        return super().encode(sentences, lang, **kw)


def dying():
    Dying.calls = 0
    return Dying({"the dog": [1.0, 0.0]}, name="dying")


class Planted:
    """Each sentence's vector drawn from its words after the first: "de gold 3" and "en gold 3" alike."""

    name = id = "planted"
    dim = 8

    def encode(self, sentences, lang=None, **kw):
        rows = [np.random.default_rng(zlib.crc32(s.partition(" ")[2].encode())).normal(size=8) for s in sentences]
        return np.array([r / np.linalg.norm(r) for r in rows], dtype=np.float32).reshape(len(sentences), 8)


def planted():
    return Planted()
'''


def standard_files(w: Path) -> None:
    """The files every case starts from."""
    (w / "in.txt").write_text("the dog barks\n\nder hund bellt\n", encoding="utf-8")
    (w / "in.tsv").write_text("id\ttext\n1\tthe dog\n2\t\n3\ta cat\n", encoding="utf-8")
    (w / "de.txt").write_text("der hund bellt\nder hund\nb\n", encoding="utf-8")
    (w / "en.txt").write_text("the dog barks\na cat runs\nthe cat\n", encoding="utf-8")
    (w / "long.txt").write_text("".join(f"the dog {'barks ' * i}\n" for i in range(7)), encoding="utf-8")
    (w / "bad.txt").write_bytes(b"fine\nalso fine\nbroken \xff here\n")
    (w / "folder").mkdir()
    (w / "toy.py").write_text(TOY_MODULE, encoding="utf-8")
    for lang in ("deu", "fra", "kat"):
        (w / "data" / "tatoeba_v1").mkdir(parents=True, exist_ok=True)
        for side, prefix in ((lang, f"{lang} sentence "), ("eng", f"english {lang} ")):
            (w / "data" / "tatoeba_v1" / f"tatoeba.{lang}-eng.{side}").write_text(
                "".join(f"{prefix}{i}\n" for i in range(4)), encoding="utf-8")


def model_copy(w: Path, model: Path) -> Path:
    return Path(shutil.copytree(model, w / "model"))


def edit_same_size(path: Path, old: bytes, new: bytes) -> None:
    assert len(old) == len(new)
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))


def edited_model(name: str, old: bytes, new: bytes) -> Callable[[Path, Path], None]:
    def setup(w: Path, model: Path) -> None:
        edit_same_size(model_copy(w, model) / name, old, new)
    return setup


def with_tokenizer_config_edited(w: Path, model: Path) -> None:
    copy = model_copy(w, model)
    (copy / "tokenizer_config.json").write_text('{"model_max_length": 64}\n', encoding="utf-8")
    manifest = json.loads((copy / "xlsent.json").read_text(encoding="utf-8"))
    write_manifest(copy, {k: v for k, v in manifest.items() if k not in ("files", "format_version")})
    edit_same_size(copy / "tokenizer_config.json", b"64", b"99")


def with_weights_flipped(w: Path, model: Path) -> None:
    weights = model_copy(w, model) / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01
    weights.write_bytes(bytes(data))


def with_backend_table(text: str) -> Callable[[Path, Path], None]:
    """A setup writing ``{w}/table.json`` and a copy of the model in ``{w}/model`` (never loaded before, so ``auto``
    reads the table: ``xlsent.load`` remembers the encoders it built)."""
    def setup(w: Path, model: Path) -> None:
        model_copy(w, model)
        (w / "table.json").write_text(text, encoding="utf-8")
    return setup


def with_manifest_field(key: str, value: object) -> Callable[[Path, Path], None]:
    """A setup copying the model into ``{w}/model`` and setting the field ``key`` of its ``xlsent.json``."""
    def setup(w: Path, model: Path) -> None:
        manifest = model_copy(w, model) / "xlsent.json"
        manifest.write_text(json.dumps({**json.loads(manifest.read_text(encoding="utf-8")), key: value}),
                            encoding="utf-8")
    return setup


def trained_with_a_byte_flipped(kind: str, name: str) -> Callable[[Path, Path], None]:
    """A setup training the smallest ``kind`` model into ``{w}/<kind>`` and flipping one byte of its file ``name``."""
    def setup(w: Path, model: Path) -> None:
        weights = smallest_models()[kind](w / kind, TransformerEncoder(model)) / name
        data = bytearray(weights.read_bytes())
        data[len(data) // 2] ^= 0x01
        weights.write_bytes(bytes(data))
    return setup


def with_training_log_deleted(w: Path, model: Path) -> None:
    """A model whose manifest lists its ``train.jsonl`` (as written before logs were left out), then deleted."""
    copy = model_copy(w, model)
    (copy / "train.jsonl").write_text('{"step": 1}\n', encoding="utf-8")
    manifest = json.loads((copy / "xlsent.json").read_text(encoding="utf-8"))
    manifest["files"]["train.jsonl"] = {"bytes": 12, "sha256": sha256_file(copy / "train.jsonl")}
    (copy / "xlsent.json").write_text(json.dumps(manifest), encoding="utf-8")
    (copy / "train.jsonl").unlink()


def finished_dual_pivot(w: Path, model: Path) -> None:
    """``{w}/done``: a finished dual-pivot model's manifest (trained for 200 steps)."""
    (w / "done").mkdir()
    config = get_method("dual-pivot").config(sets=["steps=200"])
    write_manifest(w / "done", model_manifest("dual-pivot", config, toy_training_record()))


def with_config_unlisted(w: Path, model: Path) -> None:
    copy = model_copy(w, model)
    manifest = json.loads((copy / "xlsent.json").read_text(encoding="utf-8"))
    del manifest["files"]["config.json"]
    (copy / "xlsent.json").write_text(json.dumps(manifest), encoding="utf-8")


def interrupted(chunk_rows: int, truncate: str | None = None, poison: str | None = None, folder: str | None = None
                ) -> Callable[[Path, Path], None]:
    """A run of ``embed long.txt -o o.npy --chunk-rows N`` killed after two chunks (optionally one truncated, one
    overwritten by NaN of its shape, or one replaced by a folder)."""
    def setup(w: Path, model: Path) -> None:
        encoder = TransformerEncoder(model)

        class Killed:
            name, dim, id, calls = encoder.name, encoder.dim, encoder.id, 0

            def encode(self, sentences: list[str], lang: str | None = None, **kw: object) -> np.ndarray:
                Killed.calls += 1
                if Killed.calls == 3:
                    raise KeyboardInterrupt
                return encoder.encode(sentences, lang)

        with pytest.raises(KeyboardInterrupt):
            embed_file(InputSpec(w / "long.txt"), w / "o.npy", Killed(),  # type: ignore[arg-type]
                       EmbedOptions(chunk_rows=chunk_rows, progress=False))
        if truncate:
            part = w / "o.npy.parts" / truncate
            part.write_bytes(part.read_bytes()[:100])
        if poison:
            part = w / "o.npy.parts" / poison
            np.save(part, np.full_like(np.load(part), np.nan))
        if folder:
            (w / "o.npy.parts" / folder).unlink()
            (w / "o.npy.parts" / folder).mkdir()
    return setup


def full_tatoeba_result(w: Path, model: Path) -> None:
    assert main(["eval", "tatoeba", "--model", "toy:onehot", "--data", f"{w}/data", "-o", f"{w}/results", "-q"]) == 0


def result_edited(**fields: object) -> Callable[[Path, Path], None]:
    """A setup writing the full Tatoeba result (:func:`full_tatoeba_result`) with ``fields`` set to other values."""
    def setup(w: Path, model: Path) -> None:
        full_tatoeba_result(w, model)
        path = w / "results" / "tatoeba__toy.json"
        path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")), **fields}), encoding="utf-8")
    return setup


def result_copied(w: Path, model: Path) -> None:
    """The full Tatoeba result and an exact copy of it under another file name."""
    full_tatoeba_result(w, model)
    shutil.copy(w / "results" / "tatoeba__toy.json", w / "results" / "copy.json")


def other_tiny_result(w: Path, model: Path) -> None:
    """``{w}/results`` holds the Tatoeba result of other weights named like the test model (tiny)."""
    TaskResult(task="tatoeba", encoder="tiny@0000000000000000", dataset="d", main_score=50.0, main_metric="mean",
               scores={"kat": {"mean": 50.0}}).save(w / "results")


def full_tatoeba_recorded(w: Path, model: Path) -> None:
    """``{w}/model``: a copy of the model with a Tatoeba score of all three languages recorded in its card."""
    model_copy(w, model)
    assert main(["eval", "tatoeba", "--model", f"{w}/model", "--data", f"{w}/data", "-o", f"{w}/full", "--record",
                 "-q"]) == 0


def embedded_in_txt(w: Path, model: Path) -> None:
    assert main(["embed", f"{w}/in.txt", "-o", f"{w}/in.npy", "--model", str(model), "-q"]) == 0


def with_files(files: dict[str, str]) -> Callable[[Path, Path], None]:
    """A setup writing ``files`` (path relative to the case's folder: text)."""
    def setup(w: Path, model: Path) -> None:
        for name, text in files.items():
            (w / name).parent.mkdir(parents=True, exist_ok=True)
            (w / name).write_text(text, encoding="utf-8")
    return setup


def with_folder(name: str, files: dict[str, str] | None = None) -> Callable[[Path, Path], None]:
    """A setup making the folder ``name`` (relative to the case's folder) with ``files`` in it (name: text)."""
    def setup(w: Path, model: Path) -> None:
        (w / name).mkdir(parents=True)
        for file, text in (files or {}).items():
            (w / name / file).write_text(text, encoding="utf-8")
    return setup


def parquet_with(values: list[object]) -> Callable[[Path, Path], None]:
    """A setup writing ``{w}/in.parquet``: a Parquet file of one ``text`` column holding ``values``."""
    def setup(w: Path, model: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"text": values}), w / "in.parquet")
    return setup


parquet_input = parquet_with(["the dog barks", "der hund bellt"])


def tatoeba_files_emptied(w: Path, model: Path) -> None:
    for path in (w / "data" / "tatoeba_v1").iterdir():
        path.write_text("", encoding="utf-8")


def report_of_full_result(w: Path, model: Path) -> None:
    full_tatoeba_result(w, model)
    assert main(["report", "--results", f"{w}/results", "--docs", f"{w}/results.md", "--plots", f"{w}/plots"]) == 0


def embedded_in_txt_poisoned(w: Path, model: Path) -> None:
    """``{w}/in.npy``: the embeddings of ``in.txt`` with row 2 turned to NaN in place."""
    embedded_in_txt(w, model)
    vectors = np.load(w / "in.npy")
    vectors[2] = np.nan
    np.save(w / "in.npy", vectors)


def embedded_in_txt_truncated(w: Path, model: Path) -> None:
    embedded_in_txt(w, model)
    (w / "in.npy").write_bytes((w / "in.npy").read_bytes()[:150])


def foreign_folder(edit: Callable[[Path], None]) -> Callable[[Path, Path], None]:
    """A setup writing ``{w}/hf``, a Hugging Face model folder (the tiny model's transformer files), then ``edit``."""
    def setup(w: Path, model: Path) -> None:
        (w / "hf").mkdir()
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            shutil.copyfile(model / name, w / "hf" / name)
        edit(w / "hf")
    return setup


def with_weights_named_on_the_hub(folder: Path) -> None:
    (folder / "model.safetensors").unlink()
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "_name_or_path": "sentence-transformers/LaBSE"}),
                                        encoding="utf-8")


def with_architecture_mpnet(folder: Path) -> None:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "mpnet", "architectures": ["MPNetModel"]}),
                                        encoding="utf-8")


def with_modules(text: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        (folder / "modules.json").write_text(text, encoding="utf-8")
    return edit


def with_config_field(key: str, value: object) -> Callable[[Path], None]:
    """An edit setting ``key`` of the folder's ``config.json`` to ``value``."""
    def edit(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        (folder / "config.json").write_text(json.dumps({**config, key: value}), encoding="utf-8")
    return edit


def with_nan_weights(folder: Path) -> None:
    """Every floating-point weight of the folder's transformer NaN (its vectors would all be zero rows)."""
    import torch
    from safetensors.torch import load_file, save_file

    state = load_file(str(folder / "model.safetensors"))
    save_file({k: torch.full_like(v, float("nan")) if v.is_floating_point() else v for k, v in state.items()},
              str(folder / "model.safetensors"))


def with_nan_in_one_row(folder: Path) -> None:
    """One NaN in the last row of the word embeddings: a token the load check's sentence does not use."""
    from safetensors.torch import load_file, save_file

    state = load_file(str(folder / "model.safetensors"))
    state["embeddings.word_embeddings.weight"][-1, 0] = float("nan")
    save_file(state, str(folder / "model.safetensors"))


def with_a_piece_past_the_vocabulary(folder: Path) -> None:
    """One piece appended to the tokenizer's vocabulary: its id is past the embedding matrix."""
    tokenizer = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer["model"]["vocab"].append(["\u2581zebra", -1.0])
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")


def embedded_columns(w: Path, model: Path) -> None:
    """``{w}/pairs.tsv`` (two columns, no header) and the embeddings of its column 0 in ``{w}/col0.npy``."""
    (w / "pairs.tsv").write_text("der hund bellt\tthe dog barks\nder hund\ta cat runs\nb\tthe cat\n",
                                 encoding="utf-8")
    assert main(["embed", f"{w}/pairs.tsv", "--column", "0", "--no-header", "-o", f"{w}/col0.npy", "--model",
                 str(model), "-q"]) == 0


def embedded_sides(w: Path, model: Path) -> None:
    """The embeddings of ``de.txt`` (as German) and ``en.txt`` in ``{w}/de.npy`` and ``{w}/en.npy``."""
    for side, lang in (("de", "de"), ("en", "en")):
        assert main(["embed", f"{w}/{side}.txt", "-o", f"{w}/{side}.npy", "--lang", lang, "--model", str(model),
                     "-q"]) == 0


def exportable_copy(w: Path, model: Path) -> Path:
    """``{w}/model``: a copy of the model with the tokenizer_config.json that a sentence-transformers export copies."""
    copy = model_copy(w, model)
    (copy / "tokenizer_config.json").write_text('{"tokenizer_class": "XLMRobertaTokenizer"}', encoding="utf-8")
    manifest = json.loads((copy / "xlsent.json").read_text(encoding="utf-8"))
    write_manifest(copy, {k: v for k, v in manifest.items() if k not in ("files", "format_version")})
    return copy


def lora_over(backbone: Callable[[Path, Path], Path]) -> Callable[[Path, Path], None]:
    """A setup writing ``{w}/lora``, a LoRA model directory (rank 2) over the backbone that ``backbone`` gives."""
    def setup(w: Path, model: Path) -> None:
        from xlsent.encoders.trainable import TrainableTransformer

        trainable = TrainableTransformer(TransformerEncoder(backbone(w, model)))
        trainable.apply_lora(r=2, alpha=4)
        trainable.save(w / "lora", name="lora")
    return setup


def lora_without_backbone(w: Path, model: Path) -> None:
    """``{w}/lora`` over ``{w}/model``, which is then removed (the backbone's folder moved away or deleted)."""
    lora_over(model_copy)(w, model)
    shutil.rmtree(w / "model")


def cached_graph(backend: str, damage: Callable[[Path], None]) -> Callable[[Path, Path], None]:
    """A setup exporting the model's ``backend`` graph into ``$XLSENT_HOME``, then ``damage`` to its graph file."""
    def setup(w: Path, model: Path) -> None:
        TransformerEncoder(model).use_backend(backend)
        [graph] = (w.parent / "home" / "backends").glob(f"*/{backend}/model.{'onnx' if backend == 'onnx' else 'bin'}")
        damage(graph)
    return setup


def flip_middle_bytes(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(b ^ 0xFF for b in data[len(data) // 2 : len(data) // 2 + 64])
    path.write_bytes(bytes(data))


def cut_in_half(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def thresholds_in_model_and_cache(w: Path, model: Path) -> None:
    """``{w}/model`` records threshold 0.5 for its fp32 id; the cache holds 2.0 for the same weights on
    openvino-bf16 (calibrated for another copy of the model)."""
    from xlsent.mining.calibration import save_threshold

    copy = model_copy(w, model)
    fp32 = TransformerEncoder(copy).id
    how = {"margin": "ratio", "k": 4, "sets": ["de-en"]}
    manifest = json.loads((copy / "xlsent.json").read_text(encoding="utf-8"))
    manifest["mining"] = {"threshold": 0.5, "encoder": fp32, "date": "2025-01-01", **how}
    (copy / "xlsent.json").write_text(json.dumps(manifest), encoding="utf-8")
    bf16 = f"{fp32}+openvino-bf16"
    other_copy = LookupEncoder({"a": [1.0]}, name=bf16)
    save_threshold(other_copy, {"threshold": 2.0, "encoder": bf16, "date": "2025-02-02", **how})


def small_newstest(gold: int) -> Callable[[Path, Path], None]:
    """``{w}/data``: the newstest files of a de-en BUCC-style dev set of ``gold`` gold pairs (for ``toy:planted``)."""
    def setup(w: Path, model: Path) -> None:
        files = {(2011, "de"): [f"de gold {i}" for i in range(gold)],
                 (2011, "en"): [f"en gold {i}" for i in range(gold)],
                 **{(year, lang): [f"{lang} distractor {year} {i}" for i in range(8)]
                    for year, lang in ((2013, "de"), (2009, "en"), (2010, "en"))}}
        for (year, lang), lines in files.items():
            path = w / "data" / "parallel" / "wmt_newstest" / str(year) / f"newstest{year}.{lang}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return setup


@dataclass(frozen=True)
class Case:
    """One awkward input: the command, its exit code, a fragment of what it says, the new files it leaves."""

    id: str
    argv: tuple[str, ...]
    code: int
    message: str
    left: tuple[str, ...] = ()
    setup: Callable[[Path, Path], None] | None = None
    stdin: bytes | None = None
    env: dict[str, str] | None = None


def case(id: str, command: str, code: int, message: str, left: tuple[str, ...] = (), **kw: object) -> Case:
    """A :class:`Case` from one command line; ``{nothing}`` stands for an encoder that must never be loaded."""
    argv = tuple(command.replace("{nothing}", NOTHING_LOADED).split())
    return Case(id, argv, code, message, left, **kw)  # type: ignore[arg-type]


LOCK_HOLDERS: list[subprocess.Popen[bytes]] = []
HOLD = ("import sys\nfrom xlsent.output_lock import exclusive_output\nwith exclusive_output(sys.argv[1]):\n"
        "    print('held', flush=True)\n    sys.stdin.read()")


def held_by_another_run(output: str) -> Callable[[Path, Path], None]:
    """Another process holds the lock of the output ``output`` (as a run writing it would) until the tests end."""
    def setup(w: Path, model: Path) -> None:
        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(w / output)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        LOCK_HOLDERS.append(holder)  # its standard input stays open, so it holds the lock while the tests run
    return setup


INVISIBLE_SIDES = {"zw-de.txt": "der hund bellt\n\u200b\nder hund\n",
                   "zw-en.txt": "the dog barks\n\ufeff\na cat runs\n"}
"""Two sides, each with a line of one invisible character (never to be paired, though the two embed alike)."""

NOTHING_LOADED = "--model toy:unloadable -q"
EMBEDDED = ("o.npy", "o.npy.json")
ST_FOLDER = ("st", "st/1_Pooling", "st/1_Pooling/config.json", "st/2_Normalize", "st/config.json",
             "st/config_sentence_transformers.json", "st/model.safetensors", "st/modules.json",
             "st/sentence_bert_config.json", "st/tokenizer.json", "st/tokenizer_config.json")
CASES = [
    # paths: checked before anything is loaded or computed
    case("embed-output-is-a-directory", "embed {w}/in.txt -o {w}/folder {nothing}", 2,
         "folder: is a directory"),
    case("embed-input-is-a-directory", "embed {w}/folder -o {w}/o.npy {nothing}", 2,
         "folder: is a directory"),
    case("embed-input-missing", "embed {w}/nope.txt -o {w}/o.npy {nothing}", 2, "nope.txt: no such file"),
    case("embed-output-csv", "embed {w}/in.txt -o {w}/o.csv {nothing}", 2,
         "the output format comes from the extension: .npy (vectors + .npy.json sidecar) or .parquet"),
    case("embed-output-without-extension", "embed {w}/in.txt -o {w}/vectors {nothing}", 2,
         "the output format comes from the extension"),
    case("embed-output-stdout", "embed {w}/in.txt -o - {nothing}", 2, "cannot go to standard output"),
    case("embed-output-below-a-file", "embed {w}/in.txt -o {w}/in.txt/o.npy {nothing}", 2,
         "in.txt is a file, not a folder"),
    case("embed-output-empty", "embed {w}/in.txt -o {empty} {nothing}", 2,
         "argument -o/--output: empty value: give a file or folder (. for the current folder)"),
    case("embed-output-name-leaves-no-room-for-its-sidecar",
         f"embed {{w}}/in.txt -o {{w}}/{'e' * 247}.npy {{nothing}}", 2, ": the name leaves no room for"),
    case("index-input-is-a-directory", "index {w}/folder -o {w}/idx {nothing}", 2, "folder: is a directory"),
    case("index-output-is-a-file", "index {w}/in.txt -o {w}/de.txt {nothing}", 2, "an index is a folder"),
    case("mine-output-is-a-directory", "mine {w}/de.txt {w}/en.txt -o {w}/folder {nothing}", 2,
         "folder: is a directory"),
    case("mine-output-csv", "mine {w}/de.txt {w}/en.txt -o {w}/pairs.csv {nothing}", 2,
         "name a .tsv (or .txt) file, or - for standard output"),
    case("mine-output-is-an-input", "mine {w}/de.txt {w}/en.txt -o {w}/./en.txt {nothing}", 2,
         "en.txt: is also an input"),
    case("mine-both-sides-stdin", "mine - - -o {w}/p.tsv {nothing}", 2, "cannot both be standard input"),
    case("mine-stdout-with-ray", "mine {w}/de.txt {w}/en.txt -o - --engine ray {nothing}", 2,
         "needs --engine local"),
    case("mine-src-emb-missing", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --src-emb {w}/x.npy "
         "{nothing}", 2, "x.npy: no such embedding file"),
    case("embed-sidecar-is-a-directory", "embed {w}/in.txt -o {w}/z.npy {nothing}", 2,
         "z.npy.json: is a directory, where the vectors' sidecar of", setup=with_folder("z.npy.json")),
    case("embed-input-is-the-sidecar", "embed {w}/x.npy.json -o {w}/x.npy {nothing}", 2,
         "x.npy.json: is also an input", setup=with_files({"x.npy.json": '{"text": "the dog"}\n'})),
    case("embed-input-is-the-lock", "embed {w}/.y.npy.lock --format txt -o {w}/y.npy {nothing}", 2,
         "y.npy: its lock file", setup=with_files({".y.npy.lock": "the dog\nthe cat\n"})),
    case("embed-parts-folder-not-made-by-xlsent", "embed {w}/in.txt -o {w}/v.npy {nothing}", 2,
         "v.npy.parts: holds files but no job.json, so no xlsent run made it",
         setup=with_folder("v.npy.parts", {"notes.txt": "keep\n"})),
    case("embed-parts-folder-of-a-killed-job-json-write", "embed {w}/in.txt -o {w}/o.npy --model {model} -q", 0,
         "wrote ", left=EMBEDDED, setup=with_folder("o.npy.parts", {".job.json.abcd1234.tmp": "{}"})),
    case("mine-input-inside-the-work-folder", "mine {w}/p.tsv.work/de.txt {w}/en.txt -o {w}/p.tsv --model {model} -q",
         2, "p.tsv.work/de.txt: is an input inside", setup=with_folder("p.tsv.work", {"de.txt": "der hund\n"})),
    case("split-output-through-a-new-folder-is-the-input", "split {w}/de.txt -o {w}/new/../de.txt --lang de", 2,
         "de.txt: is also an input"),
    case("split-output-below-a-file", "split {w}/de.txt -o {w}/in.txt/s.tsv --lang de", 2,
         "in.txt is a file, not a folder"),
    case("split-output-name-too-long", f"split {{w}}/de.txt --lang de -o {{w}}/{'e' * 252}.txt", 2,
         ": the name is 256 bytes long, more than the 255 the file system takes; name a shorter file"),
    case("mine-output-through-a-new-folder-is-an-input", "mine {w}/de.txt {w}/en.txt -o {w}/new/../en.txt {nothing}",
         2, "en.txt: is also an input"),
    case("filter-scores-through-a-new-folder-is-the-output", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv "
         "--scores {w}/new/../k.tsv {nothing}", 2, "-o, --scores and --histogram must name different files"),
    case("index-output-through-a-new-folder-is-a-file", "index {w}/in.txt -o {w}/new/../de.txt {nothing}", 2,
         "an index is a folder"),
    case("index-ivfpq-too-few-rows", "index {w}/de.txt -o {w}/idx --kind ivfpq {nothing}", 2,
         "a ivfpq index trains its product quantiser on at least 256 vectors, but there are 3"),
    # options: named by their flag, checked before anything is loaded
    case("embed-chunk-rows-zero", "embed {w}/in.txt -o {w}/o.npy --chunk-rows 0 {nothing}", 2,
         "argument --chunk-rows: must be a whole number of at least 1, not '0'"),
    case("embed-batch-tokens-not-a-number", "embed {w}/in.txt -o {w}/o.npy --batch-tokens many {nothing}",
         2, "argument --batch-tokens"),
    case("embed-output-is-the-input", "embed {w}/in.parquet --column text -o {w}/in.parquet {nothing}", 2,
         "in.parquet: is also an input", setup=parquet_input),
    case("embed-bad-language-code", "embed {w}/in.txt -o {w}/o.npy --lang German {nothing}", 2,
         "not a language code"),
    case("split-column-on-txt", "split {w}/in.txt -o {w}/s.txt --lang en --column 1 --no-header", 2,
         "--column applies to TSV and Parquet input only; "),
    case("split-field-on-txt", "split {w}/in.txt -o {w}/s.txt --lang en --field text", 2,
         "--field applies to JSONL input only"),
    case("embed-field-on-txt", "embed {w}/in.txt -o {w}/o.npy --field text {nothing}", 2,
         "--field applies to JSONL input only; "),
    case("mine-k-zero", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --k 0 {nothing}", 2,
         "argument -k/--k: must be a whole number of at least 1, not '0'"),
    case("mine-threshold-not-a-number", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --threshold abc "
         "{nothing}", 2, "argument --threshold: must be a finite number or 'auto', not 'abc'"),
    case("mine-threshold-nan", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --threshold nan {nothing}", 2,
         "argument --threshold: must be a finite number or 'auto', not 'nan'"),
    case("mine-threshold-inf", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --threshold inf {nothing}", 2,
         "argument --threshold: must be a finite number or 'auto', not 'inf'"),
    case("mine-max-memory-zero", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --max-memory 0 {nothing}", 2,
         "argument --max-memory: must be a finite number above 0"),
    case("mine-max-memory-under-a-mib", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --max-memory 0.0000001 {nothing}", 2,
         "--max-memory must be at least 1048576 bytes (1 MiB), not 107 bytes"),
    case("mine-column-on-txt", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --column 1 {nothing}", 2,
         "--column applies to TSV and Parquet input only"),
    case("search-k-zero", "search {w}/folder query -k 0", 2, "argument -k/--k"),
    case("eval-no-task", "eval --langs kat {nothing}", 2, "name at least one TASK; tasks: tatoeba"),
    case("eval-unknown-task", "eval tatoeba tatoebaa {nothing}", 2, "unknown task(s) tatoebaa"),
    case("eval-empty-langs", "eval tatoeba --langs , {nothing}", 2, "argument --langs: needs at least one code"),
    case("eval-margin-k-zero", "eval tatoeba --margin-k 0 {nothing}", 2, "argument --margin-k"),
    case("eval-output-stdout", "eval tatoeba -o - {nothing}", 2,
         "-o -: this output is a folder, which standard output cannot take"),
    # TSV: whether line 1 is a header is said, never guessed; line numbers count every line
    case("embed-tsv-header-unstated", "embed {w}/in.tsv -o {w}/o.npy {nothing}", 2,
         "say whether line 1 of this TSV is a header: --header (skip it) or --no-header"),
    case("embed-tsv-column-0-unstated", "embed {w}/in.tsv -o {w}/o.npy --column 0 {nothing}", 2,
         "--header (skip it) or --no-header"),
    case("embed-tsv-name-with-no-header", "embed {w}/in.tsv -o {w}/o.npy --column text --no-header "
         "{nothing}", 2, "is a header name, but --no-header says the file has none"),
    case("embed-tsv-column-superscript-digit", "embed {w}/in.tsv -o {w}/o.npy --column ² --no-header {nothing}", 2,
         "is a header name, but --no-header says the file has none"),
    case("embed-header-on-txt", "embed {w}/in.txt -o {w}/o.npy --header {nothing}", 2,
         "--header/--no-header applies to TSV input only"),
    case("mine-tsv-header-unstated", "mine {w}/in.tsv {w}/en.txt -o {w}/p.tsv {nothing}", 2,
         "--header (skip it) or --no-header"),
    case("embed-tsv-strict-line-number", "embed {w}/in.tsv -o {w}/o.npy --column text --strict --model {model} -q", 2,
         "in.tsv:3: empty line"),
    # bad rows: the run stops, names file and line, and leaves nothing (the input has to change)
    case("embed-bad-utf8", "embed {w}/bad.txt -o {w}/o.npy --model {model} -q", 2, "bad.txt:3: invalid UTF-8"),
    case("embed-bad-utf8-after-finished-chunks", "embed {w}/bad.txt -o {w}/o.npy --chunk-rows 1 --model {model} -q",
         2, "bad.txt:3: invalid UTF-8"),
    case("embed-jsonl-lone-surrogate", "embed {w}/sur.jsonl -o {w}/o.npy --model {model} -q", 2,
         "sur.jsonl:2: field 'text' holds a lone surrogate (U+D800) at position 2: not valid Unicode text",
         setup=with_files({"sur.jsonl": '{"text": "ok"}\n{"text": "a \\ud800"}\n'})),
    case("embed-jsonl-field-not-text", "embed {w}/tok.jsonl -o {w}/o.npy --field tokens --model {model} -q", 2,
         "tok.jsonl:2: field 'tokens' holds a list, not text; give a string (null for an empty row)",
         setup=with_files({"tok.jsonl": '{"tokens": "ok"}\n{"tokens": ["Hallo", "Welt"]}\n'})),
    case("embed-parquet-column-not-text", "embed {w}/in.parquet -o {w}/o.npy --model {model} -q", 2,
         "in.parquet: column 'text' holds list<element: string>, not text; choose a string column with --column",
         setup=parquet_with([["Hallo", "Welt"], ["Guten", "Tag"]])),
    case("embed-not-parquet", "embed {w}/f.parquet -o {w}/o.npy --model {model} -q", 2,
         "f.parquet: not a readable Parquet file", setup=with_files({"f.parquet": "hello\n"})),
    case("embed-strict-empty-line", "embed {w}/in.txt -o {w}/o.npy --strict --model {model} -q", 2,
         "in.txt:2: empty line"),
    case("mine-bad-utf8-target", "mine {w}/de.txt {w}/bad.txt -o {w}/p.tsv --model {model} -q", 2,
         "bad.txt:3: invalid UTF-8"),
    case("mine-src-emb-of-another-file", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --src-emb {w}/in.npy "
         "--model {model} -q", 2, "embeddings were made from another file", setup=embedded_in_txt),
    # corrupted model directories: every file is checked against the manifest's checksum at load
    case("model-config-edited-same-size", "embed {w}/in.txt -o {w}/o.npy --model {w}/model -q", 2,
         "config.json: checksum differs from xlsent.json (corrupt or edited)",
         setup=edited_model("config.json", b"1e-12", b"1e-01")),
    case("model-tokenizer-edited-same-size", "embed {w}/in.txt -o {w}/o.npy --model {w}/model -q", 2,
         "tokenizer.json: checksum differs", setup=edited_model("tokenizer.json", b"-3.0", b"-9.0")),
    case("model-tokenizer-config-edited-same-size", "embed {w}/in.txt -o {w}/o.npy --model {w}/model -q", 2,
         "tokenizer_config.json: checksum differs", setup=with_tokenizer_config_edited),
    case("model-weights-edited-same-size", "embed {w}/in.txt -o {w}/o.npy --model {w}/model -q", 2,
         "model.safetensors: checksum differs", setup=with_weights_flipped),
    case("model-file-not-in-manifest", "embed {w}/in.txt -o {w}/o.npy --model {w}/model -q", 2,
         "does not list config.json, so it cannot be verified", setup=with_config_unlisted),
    case("model-linear-map-weights-flipped", "embed {w}/in.txt -o {w}/o.npy --lang de --model {w}/linear-map -q",
         2, "map.safetensors: checksum differs", setup=trained_with_a_byte_flipped("linear-map", "map.safetensors")),
    case("model-absent-weights-flipped", "embed {w}/in.txt -o {w}/o.npy --lang de --model {w}/absent -q", 2,
         "generators.safetensors: checksum differs",
         setup=trained_with_a_byte_flipped("absent", "generators.safetensors")),
    case("model-training-log-deleted", "embed {w}/in.txt -o {w}/o.npy --model {w}/model -q", 0, "wrote ",
         left=EMBEDDED, setup=with_training_log_deleted),
    case("model-folder-weights-named-on-the-hub", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "config.json names 'sentence-transformers/LaBSE', not on this disk: xlsent never downloads",
         setup=foreign_folder(with_weights_named_on_the_hub)),
    case("model-folder-weights-missing", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "hf/model.safetensors: is missing (nor is there model.safetensors.index.json or pytorch_model.bin)",
         setup=foreign_folder(lambda folder: (folder / "model.safetensors").unlink())),
    case("model-folder-unsupported-architecture", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "hf/config.json: architecture 'mpnet' (MPNetModel) is not supported; xlsent runs bert, roberta, xlm-roberta",
         setup=foreign_folder(with_architecture_mpnet)),
    case("model-folder-modules-not-json", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "hf/modules.json: not readable JSON", setup=foreign_folder(with_modules("[{"))),
    case("model-folder-module-not-supported", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "module 0 has type 'sentence_transformers.models.LSTM', which xlsent does not run",
         setup=foreign_folder(with_modules('[{"idx": 0, "path": "", "type": "sentence_transformers.models.LSTM"}]'))),
    case("model-factory-not-an-encoder", "embed {w}/in.txt -o {w}/o.npy --model os:getcwd -q", 2,
         "--model os:getcwd returned a str"),
    case("model-factory-needs-arguments", "embed {w}/in.txt -o {w}/o.npy --model os:makedirs -q", 2,
         "--model os:makedirs needs argument(s) name, but --model calls it with none"),
    case("model-factory-exits", "embed {w}/in.txt -o {w}/o.npy --model builtins:exit -q", 2,
         "--model builtins:exit ended the program (exit code None) instead of returning an encoder",
         stdin=b""),  # exit() closes standard input: the case's own
    case("backend-table-of-another-shape", "embed {w}/in.txt -o {w}/o.npy --backend auto --model {w}/model -q", 2,
         "table.json: not a backend table: the file holds a JSON list, not an object; write it again with "
         "benchmarks/backend_bench.py", setup=with_backend_table('["openvino"]'),
         env={"XLSENT_BACKEND_TABLE": "{w}/table.json"}),
    case("backend-table-row-without-guard", "embed {w}/in.txt -o {w}/o.npy --backend auto --model {w}/model -q", 2,
         "avx2[0].guard is missing, not true or false", setup=with_backend_table('{"avx2": [{"backend": "onnx"}]}'),
         env={"XLSENT_BACKEND_TABLE": "{w}/table.json"}),
    # serve: refused before the port is bound
    case("serve-model-fails-to-load", "serve --model toy:unloadable --port 0", 2,
         "model 'toy:unloadable' failed to load: the encoder was loaded"),
    case("serve-api-key-env-unset", "serve --model toy:unloadable --api-key-env XLSENT_TEST_UNSET_KEY --port 0", 2,
         "--api-key-env XLSENT_TEST_UNSET_KEY: that environment variable is not set (or empty), so /v1/* would need "
         "no key"),
    case("model-mining-record-malformed", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --threshold auto "
         "--model {w}/model -q", 2,
         "xlsent.json: field 'mining' is not a calibration record (a str, not an object); remove the field, "
         "then `xlsent calibrate", setup=with_manifest_field("mining", "calibrated")),
    case("model-mining-threshold-not-a-number", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --threshold auto "
         "--model {w}/model -q", 2,
         "field 'mining' is not a calibration record ('threshold' is 'high', not a finite number)",
         setup=with_manifest_field("mining", {"threshold": "high"})),
    # training: a run that would train nothing, adopt the user's files or ignore a config table is refused
    case("train-steps-zero", "train dual-pivot --out {w}/m --set steps=0 -q", 2, "steps must be >= 1, not 0"),
    case("train-config-unknown-table", "train dual-pivot --out {w}/m --config {w}/typo.toml -q", 2,
         "typo.toml: unknown table(s) [supervsied]", setup=with_files({"typo.toml": "[supervsied]\nsteps = 3\n"})),
    case("train-config-malformed", "train dual-pivot --out {w}/m --config {w}/broken.toml -q", 2,
         "broken.toml: not valid TOML (Invalid value (at line 1, column 9))",
         setup=with_files({"broken.toml": "steps = = 3\n"})),
    case("train-config-other-mode-table-wrong-type", "train dual-pivot --out {w}/m --config {w}/t.toml -q", 2,
         "t.toml [supervised]: alpha expects float, got 'x'",
         setup=with_files({"t.toml": '[supervised]\nalpha = "x"\n'})),
    case("train-config-other-mode-table-out-of-range", "train dual-pivot --out {w}/m --config {w}/t.toml -q", 2,
         "t.toml [supervised]: invalid dual-pivot settings for mode supervised: steps must be >= 1, not 0",
         setup=with_files({"t.toml": "[supervised]\nsteps = 0\n"})),
    case("train-config-range-error-names-the-file", "train linear-map --out {w}/m --config {w}/r.toml -q", 2,
         "invalid linear-map settings: ridge must be >= 0 (", setup=with_files({"r.toml": "ridge = -1\n"})),
    case("train-set-wrong-type-names-the-pair", "train linear-map --out {w}/m --set seed=abc -q", 2,
         "--set seed=abc: seed expects int, got 'abc'"),
    case("train-config-mode-written-as-a-key", "train dual-pivot --out {w}/m --config {w}/k.toml -q", 2,
         "k.toml: unknown dual-pivot key(s) ['supervised'] (supervised is a mode: its keys go under a table "
         "[supervised])", setup=with_files({"k.toml": "supervised = 3\n"})),
    case("train-config-not-a-regular-file", "train dual-pivot --out {w}/m --config /dev/null -q", 2,
         "config file /dev/null is not a regular file"),
    case("train-seed-out-of-range", "train linear-map --out {w}/m --seed -1 -q", 2,
         "argument --seed: must be a whole number >= 0 and < 2**32, not -1"),
    case("train-out-holds-other-files", "train dual-pivot --out {w} -q", 2,
         "holds files that are neither an xlsent model nor a training run"),
    case("train-resume-finished-with-more-steps", "train dual-pivot --out {w}/done --resume --set steps=300 -q", 2,
         "is a finished model trained with another configuration (steps 200 -> 300)", setup=finished_dual_pivot),
    case("train-lr-inf", "train distill --out {w}/m --set lr=inf -q", 2, "lr must be a finite number, not inf"),
    case("train-config-weight-nan", "train dual-pivot --out {w}/m --config {w}/nan.toml -q", 2,
         "lambda_cycle must be a finite number, not nan", setup=with_files({"nan.toml": "lambda_cycle = nan\n"})),
    case("train-config-wrong-type-names-the-file", "train dual-pivot --out {w}/m --config {w}/typed.toml -q", 2,
         "typed.toml: steps expects int, got '5'", setup=with_files({"typed.toml": 'steps = "5"\n'})),
    # a user's bitext (--bitext): refused before any model is loaded, naming the file and line
    case("train-bitext-missing-file", "train distill --out {w}/m --bitext-only --bitext kab={w}/nope.tsv -q", 2,
         "nope.tsv: no such file (given with --bitext); check the path"),
    case("train-bitext-line-without-tab", "train distill --out {w}/m --bitext-only --bitext kab={w}/kab.tsv -q", 2,
         "kab.tsv:2: 0 tab(s); a bitext TSV line is",
         setup=with_files({"kab.tsv": "azul\thello\nno tab here\n"})),
    case("train-bitext-invalid-utf8", "train distill --out {w}/m --bitext-only --bitext kab={w}/bad.txt,{w}/en.txt "
         "-q", 2, "bad.txt:3: invalid UTF-8 at byte 7 of the line"),
    case("train-bitext-files-of-other-lengths", "train distill --out {w}/m --bitext-only "
         "--bitext kab={w}/de.txt,{w}/long.txt -q", 2, "de.txt has 3 lines but"),
    case("train-bitext-same-file-twice", "train distill --out {w}/m --bitext kab={w}/de.txt,{w}/en.txt "
         "--bitext qu={w}/de.txt,{w}/in.txt -q", 2, "de.txt given more than once; give each file once"),
    case("train-bitext-too-few-pairs", "train distill --out {w}/m --bitext-only --bitext kab={w}/de.txt,{w}/en.txt "
         "-q", 2, "3 usable pair(s); at least 100 are needed (50 are held out to choose the checkpoint"),
    case("train-bitext-not-a-language-code", "train distill --out {w}/m --bitext-only "
         "--bitext Kabyle={w}/de.txt,{w}/en.txt -q", 2, "'Kabyle' is not a language code"),
    case("train-bitext-without-language", "train distill --out {w}/m --bitext {w}/de.txt -q", 2,
         "expected LANG=FILE (e.g. kab=pairs.tsv) or LANG=FILE_X,FILE_EN"),
    case("train-bitext-start-missing", "train distill --out {w}/m --bitext kab={w}/kab.tsv --set "
         "bitext_start={w}/none -q", 2, "none': no such model directory (run from the folder that holds it, give "
         "its path with --set bitext_start=PATH", setup=with_files({"kab.tsv": "".join(
             f"azul {i}\thello {i}\n" for i in range(120))})),
    case("train-bitext-english", "train distill --out {w}/m --bitext-only --bitext en={w}/de.txt,{w}/en.txt -q", 2,
         "en is English, the other side of every pair"),
    case("train-bitext-one-language-two-codes", "train distill --out {w}/m --bitext de={w}/de.txt,{w}/en.txt "
         "--bitext deu={w}/in.txt,{w}/long.txt -q", 2, "language(s) de, deu given more than once"),
    case("train-out-below-a-file", "train dual-pivot --out {w}/in.txt/m -q", 2, "in.txt is a file, not a folder"),
    case("train-out-stdout", "train dual-pivot --out - -q", 2,
         "--out -: this output is a folder, which standard output cannot take"),
    case("train-bitext-method-without-bitext", "train dual-pivot --out {w}/m --bitext kab={w}/de.txt,{w}/en.txt -q",
         2, "--bitext: dual-pivot takes no user bitext"),
    # interrupted and resumed runs: only resumable progress is kept, and every decision is said
    case("embed-interrupted-keeps-finished-chunks", "embed {w}/in.txt -o {w}/o.npy --chunk-rows 1 "
         "--model toy:dying -q", 130, "kept 1 finished chunk(s)",
         left=("o.npy.parts", "o.npy.parts/000000.npy", "o.npy.parts/job.json")),
    case("embed-resume-truncated-part", "embed {w}/long.txt -o {w}/o.npy --chunk-rows 3 --resume --model {model} -q",
         0, "o.npy.parts/000001.npy: truncated or unreadable", left=EMBEDDED,
         setup=interrupted(3, truncate="000001.npy")),
    case("embed-resume-nan-part", "embed {w}/long.txt -o {w}/o.npy --chunk-rows 3 --resume --model {model} -q",
         0, "o.npy.parts/000001.npy: row 0 holds NaN or inf; recomputing this chunk", left=EMBEDDED,
         setup=interrupted(3, poison="000001.npy")),
    case("embed-resume-folder-as-part", "embed {w}/long.txt -o {w}/o.npy --chunk-rows 3 --resume --model {model} -q",
         0, "o.npy.parts/000001.npy: a folder where a finished chunk goes; removed, the chunk is recomputed",
         left=EMBEDDED, setup=interrupted(3, folder="000001.npy")),
    case("embed-resume-other-chunk-rows", "embed {w}/long.txt -o {w}/o.npy --chunk-rows 2 --resume --model {model} -q",
         0, "cannot be reused: they were made with --chunk-rows 3 (this run: 2)", left=EMBEDDED,
         setup=interrupted(3)),
    case("embed-rerun-without-resume", "embed {w}/long.txt -o {w}/o.npy --chunk-rows 3 --model {model} -q", 0,
         "discarding 2 finished chunk(s) of an earlier run (they match this job: --resume would reuse them)",
         left=EMBEDDED, setup=interrupted(3)),
    # standard input and output
    case("embed-stdin", "embed - -o {w}/o.npy --model {model} -q", 0, "wrote ", left=EMBEDDED, stdin=b"the dog\n"),
    case("mine-stdout", "mine {w}/de.txt {w}/en.txt -o - --model {model} -q", 0, "wrote -: "),
    case("mine-stdin-source", "mine - {w}/en.txt -o {w}/p.tsv --model {model} -q", 0, "wrote ", left=("p.tsv",),
         stdin=b"der hund bellt\nder hund\n"),
    # results never silently wrong: no data, no results folder, unreadable results and indexes are errors
    case("eval-empty-data-folder", "eval tatoeba --model toy:onehot --data {w}/empty -o {w}/results -q", 2,
         "tatoeba: no data under", setup=with_files({"empty/tatoeba_v1/README": "emptied\n"})),
    case("eval-empty-data-files", "eval tatoeba --model toy:onehot --data {w}/data -o {w}/results -q", 2,
         "hold no sentences (empty files?", setup=tatoeba_files_emptied),
    case("eval-output-is-a-file", "eval tatoeba -o {w}/in.txt {nothing}", 2,
         "is a file, but this output is a folder; name a new or existing folder"),
    case("eval-langs-iso-639-1", "eval tatoeba --langs de,fr --model toy:onehot --data {w}/data -o {w}/results -q",
         0, "tatoeba: mean 100.00", left=("results", "results/tatoeba__toy.json")),
    case("eval-tatoeba-blank-pair", "eval tatoeba --model toy:onehot --data {w}/blank -o {w}/results -q", 2,
         "tatoeba.deu-eng.deu:1: a line without text", setup=with_files({
             "blank/tatoeba_v1/tatoeba.deu-eng.deu": "\n\n", "blank/tatoeba_v1/tatoeba.deu-eng.eng": "\n\n"})),
    case("report-results-folder-missing", "report --results {w}/resluts --docs {w}/results.md --plots {w}/plots", 2,
         "no such results folder (--results)"),
    case("report-results-is-a-file", "report --results {w}/in.txt --docs {w}/results.md --plots {w}/plots", 2,
         "in.txt: is not a folder (--results)"),
    case("report-result-field-of-the-wrong-type", "report --results {w}/results --docs {w}/r.md --plots {w}/plots", 2,
         "tatoeba__toy.json: averages is [1, 2], not an object", setup=result_edited(averages=[1, 2])),
    case("report-result-score-too-large", "report --results {w}/results --docs {w}/r.md --plots {w}/plots", 2,
         "tatoeba__toy.json: main_score is 1e+308, not a number", setup=result_edited(main_score=1e308)),
    case("report-two-results-of-one-model-name", "report --results {w}/results --docs {w}/r.md --plots {w}/plots", 2,
         "both hold the tatoeba result of a model named toy", setup=result_copied),
    case("report-drops-sections", "report --results {w}/folder --docs {w}/results.md --plots {w}/plots", 0,
         "the new page drops 2 section(s) of the existing one: Summary, tatoeba", setup=report_of_full_result),
    case("report-result-fields-missing", "report --results {w}/results --docs {w}/results.md --plots {w}/plots", 2,
         "bare.json: result JSON lacks field(s) encoder, dataset, main_metric, scores",
         setup=with_files({"results/bare.json": '{"task": "tatoeba", "main_score": 90.0}'})),
    case("report-result-not-json", "report --results {w}/results --docs {w}/results.md --plots {w}/plots", 2,
         "broken.json: not a readable result JSON", setup=with_files({"results/broken.json": '{"task": '})),
    case("report-other-json-skipped", "report --results {w}/results --docs {w}/results.md --plots {w}/plots", 0,
         "notes.json: skipped, not a result JSON", left=("results.md",),
         setup=with_files({"results/notes.json": '{"note": "not a result"}'})),
    case("report-docs-is-a-result", "report --results {w}/results --docs {w}/results/tatoeba__toy.json "
         "--plots {w}/plots", 2, "tatoeba__toy.json: is a file the report reads", setup=full_tatoeba_result),
    case("report-docs-is-a-folder", "report --results {w}/results --docs {w}/folder --plots {w}/plots", 2,
         "folder: is a folder; name the markdown file to write", setup=full_tatoeba_result),
    case("report-plots-is-a-file", "report --results {w}/results --docs {w}/r.md --plots {w}/in.txt", 2,
         "in.txt: is a file; name a folder for the plots", setup=full_tatoeba_result),
    case("report-plots-stdout", "report --results {w}/results --docs {w}/r.md --plots -", 2,
         "--plots -: this output is a folder, which standard output cannot take", setup=full_tatoeba_result),
    case("index-empty-input", "index {w}/empty.txt -o {w}/idx {nothing}", 2,
         "no text to index (the input is empty or blank)", setup=with_files({"empty.txt": "\n\n"})),
    case("index-empty-stdin", "index - -o {w}/idx {nothing}", 2, "<stdin>: no text to index", stdin=b""),
    case("index-dev-null", "index /dev/null -o {w}/idx {nothing}", 2, "/dev/null: no text to index"),
    case("index-output-below-a-file", "index {w}/de.txt -o {w}/de.txt/idx {nothing}", 2,
         "de.txt is a file, not a folder"),
    case("index-output-holds-an-index", "index {w}/in.txt -o {w}/idx {nothing}", 2,
         "the folder already holds an index; replace it with --overwrite, or name a new folder",
         setup=with_files({"idx/xlsent.json": "{}"})),
    case("index-overwrite-folder-holding-other-files", "index {w}/in.txt -o {w}/idx --overwrite {nothing}", 2,
         "the folder holds more than an index (notes.txt), and a new index replaces the whole folder",
         setup=with_files({"idx/xlsent.json": "{}", "idx/notes.txt": "mine"})),
    case("search-index-manifest-not-json", "search {w}/idx hallo", 2, "xlsent.json: not readable JSON",
         setup=with_files({"idx/xlsent.json": "{oops"})),
    case("search-model-folder-as-index", "search {model} hallo", 2,
         "is a model directory (type 'transformer'), not a sentence index; build an index of your sentences"),
    case("embed-index-as-model", "embed {w}/in.txt -o {w}/o.npy --model {w}/idx -q", 2,
         "idx: is a sentence index (made by",
         setup=with_files({"idx/xlsent.json": '{"type": "sentence-index", "model": "me5-small", "files": {}}'})),
    case("search-empty-query", "search {w}/idx hallo {empty}", 2, "query 2 of 2 is empty: give text to search for",
         setup=with_files({"idx/xlsent.json": "{}"})),
    case("mine-src-emb-truncated", "mine {w}/in.txt {w}/en.txt -o {w}/p.tsv --src-emb {w}/in.npy --model {model} -q",
         2, "in.npy: truncated or unreadable", setup=embedded_in_txt_truncated),
    case("mine-src-emb-nan", "mine {w}/in.txt {w}/en.txt -o {w}/p.tsv --src-emb {w}/in.npy --model {model} -q",
         2, "in.npy: row 2 (0-based) holds NaN or inf", setup=embedded_in_txt_poisoned),
    # concurrent runs: one run per output at a time; inputs checked before any work
    case("embed-output-where-no-file-can-be-made", "embed {w}/in.txt -o /proc/xlsent-case.npy {nothing}", 1,
         "/proc/.xlsent-case.npy.lock: cannot create the lock file of the output beside it"),
    case("embed-output-busy", "embed {w}/in.txt -o {w}/o.npy {nothing}", 2,
         "o.npy: busy: another xlsent run", setup=held_by_another_run("o.npy")),
    case("mine-output-busy", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv {nothing}", 2,
         "p.tsv: busy: another xlsent run", setup=held_by_another_run("p.tsv")),
    case("mine-empty-source", "mine {w}/empty.txt {w}/en.txt -o {w}/p.tsv {nothing}", 2,
         "empty.txt: is empty, so there is nothing to mine", setup=with_files({"empty.txt": ""})),
    case("mine-blank-target", "mine {w}/de.txt {w}/blank.txt -o {w}/p.tsv {nothing}", 2,
         "blank.txt: has no text (2 blank row(s))", setup=with_files({"blank.txt": "\n \n"})),
    case("mine-empty-stdin", "mine - {w}/en.txt -o {w}/p.tsv --model {model} -q", 2,
         "<stdin>: is empty, so there is nothing to mine", stdin=b""),
    case("embed-ray-task-over-the-cpus", "embed {w}/in.txt -o {w}/o.npy --engine ray --num-cpus 1 --cpus-per-task 2 "
         "{nothing}", 2, "--cpus-per-task 2 is more than the 1 CPUs of the Ray cluster, so no task could start"),
    case("embed-ray-options-without-ray", "embed {w}/in.txt -o {w}/o.npy --address 127.0.0.1:1 --num-cpus 1 {nothing}",
         2, "--address, --num-cpus: options of --engine ray, which this run does not use"),
    case("mine-ray-address-unreachable", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --engine ray --address 127.0.0.1:1 "
         "{nothing}", 2, "--address 127.0.0.1:1: no Ray cluster answers there"),
    # invisible text: a line of only whitespace, format (Cf) and control (Cc) characters is empty, for every reader
    case("embed-invisible-line-is-empty", "embed {w}/inv.txt -o {w}/o.npy --model {model} -q", 0,
         "inv.txt: 1 empty row(s) kept as zero vectors (first at line 2)", left=EMBEDDED,
         setup=with_files({"inv.txt": "the dog barks\n\u200b\u200c\u00ad\nthe cat\n"})),
    case("mine-invisible-target", "mine {w}/de.txt {w}/inv.txt -o {w}/p.tsv {nothing}", 2,
         "inv.txt: has no text (2 blank row(s))", setup=with_files({"inv.txt": "\u200b\u200c\n\ufeff\u00ad\x01\n"})),
    case("mine-invisible-lines-never-paired", "mine {w}/zw-de.txt {w}/zw-en.txt -o {w}/p.tsv --threshold 0 "
         "--model {model} -q", 0, "p.tsv: 1 pairs out of 2 candidates", left=("p.tsv",),
         setup=with_files(INVISIBLE_SIDES)),
    case("score-invisible-side-unscored", "score {w}/de.txt {w}/inv.txt -o {w}/s.tsv --model {model} -q", 0,
         "1 left unscored (an empty side)", left=("s.tsv",),
         setup=with_files({"inv.txt": "the dog barks\n\ufeff\x01\nthe cat\n"})),
    case("search-invisible-query", "search {w}/idx hallo \u200b\u00ad", 2, "query 2 of 2 is empty",
         setup=with_files({"idx/xlsent.json": "{}"})),
    # score: given pairs; every refusal comes before the encoder is loaded
    case("score-rows-mismatched", "score {w}/de.txt {w}/long.txt -o {w}/s.tsv {nothing}", 2,
         "long.txt 7: line i of one is paired with line i of the other"),
    case("score-tsv-third-column", "score --tsv {w}/pairs.tsv --no-header -o {w}/s.tsv {nothing}", 2,
         "pairs.tsv:2: 3 column(s), expected 2 (source TAB target)",
         setup=with_files({"pairs.tsv": "a\tb\nc\td\te\n"})),
    case("score-tsv-one-column", "score --tsv {w}/pairs.tsv --no-header -o {w}/s.tsv {nothing}", 2,
         "pairs.tsv:1: 1 column(s), expected 2", setup=with_files({"pairs.tsv": "only one side\n"})),
    case("score-tsv-header-unstated", "score --tsv {w}/pairs.tsv -o {w}/s.tsv {nothing}", 2,
         "--header (skip it) or --no-header", setup=with_files({"pairs.tsv": "de\ten\na\tb\n"})),
    case("score-tsv-and-files", "score {w}/de.txt {w}/en.txt --tsv {w}/in.tsv -o {w}/s.tsv {nothing}", 2,
         "give the pairs either as SRC TGT or as --tsv PAIRS.tsv, not both"),
    case("score-tsv-stdin", "score --tsv - --no-header -o {w}/s.tsv {nothing}", 2, "--tsv needs a file"),
    case("score-tsv-folder", "score --tsv {w}/folder --no-header -o {w}/s.tsv {nothing}", 2,
         "folder: is a directory; give a file (or - for standard input)"),
    case("filter-pairs-folder", "filter {w}/folder -o {w}/f.tsv --threshold 0 {nothing}", 2,
         "folder: is a directory; give a file (or - for standard input)"),
    case("filter-pairs-dev-null", "filter /dev/null -o {w}/f.tsv {nothing}", 2, "/dev/null: PAIRS.tsv needs a file"),
    case("mine-given-embeddings-folder", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --src-emb {w}/folder {nothing}", 2,
         "folder: is a directory; give the .npy or .parquet file that `xlsent embed` wrote"),
    case("score-one-side", "score {w}/de.txt -o {w}/s.tsv {nothing}", 2, "give the pairs as SRC TGT"),
    case("score-output-csv", "score {w}/de.txt {w}/en.txt -o {w}/s.csv {nothing}", 2, "name a .tsv (or .txt) file"),
    case("score-precision-unknown", "score {w}/de.txt {w}/en.txt -o {w}/s.tsv --precision fp16 {nothing}", 2,
         "argument --precision: invalid choice: 'fp16'"),
    # filter: given pairs checked (and its outputs) before the encoder is loaded; a header row and blank sides are
    # documented behaviours
    case("filter-scorer-missing", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --scorer {w}/nope {nothing}", 2,
         "nope: no filter scorer there"),
    case("filter-scorer-not-json", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --scorer {w}/s.json {nothing}", 2,
         "s.json: not a filter scorer", setup=with_files({"s.json": "\x80\x04K."})),
    case("filter-scorer-other-format", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --scorer {w}/s.json {nothing}", 2,
         "s.json: not an xlsent filter scorer", setup=with_files({"s.json": '{"format": "pickle"}'})),
    case("filter-keep-with-no-score", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --keep 0.5 --no-score {nothing}", 2,
         "--no-score and --keep 0.5: score is off, so no score cut applies: drop keep or turn score on"),
    case("filter-threshold-with-no-score", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --threshold 1 --no-score "
         "{nothing}", 2, "--no-score and --threshold 1: score is off, so no score cut applies: drop threshold"),
    case("filter-min-p-clean-with-scorer-none", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --scorer none "
         "--min-p-clean 0.5 {nothing}", 2,
         "min_p_clean (0.5) is the learned scorer's cut, which scorer = 'none' turns off: give one"),
    case("filter-option-out-of-range-beside-a-settings-file", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --config "
         "{w}/c.toml --min-p-clean 2 {nothing}", 2, "--min-p-clean 2: min_p_clean must be",
         setup=with_files({"c.toml": ""})),
    case("filter-settings-file-turns-score-off-under-a-threshold", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv "
         "--config {w}/c.toml --threshold 0.3 {nothing}", 2, "c.toml: score = false and --threshold 0.3: score is off",
         setup=with_files({"c.toml": "score = false\n"})),
    case("filter-tsv-source-column-blank", "filter {w}/p.tsv -o {w}/k.tsv --threshold 0.5 {nothing}", 2,
         "p.tsv column 0: has no text (2 blank row(s))", setup=with_files({"p.tsv": "\tx\n \ty\n"})),
    case("filter-one-file-both-sides-too-small", "filter {w}/de.txt {w}/de.txt -o {w}/k.tsv --threshold 1.05 "
         "{nothing}", 2, "de.txt (source side) has"),
    case("filter-min-p-clean-above-one", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --min-p-clean 1.5 {nothing}", 2,
         "min_p_clean must be 'auto' or a probability between 0 and 1, not 1.5"),
    case("train-filter-unknown-key", "train filter --out {w}/s --set nope=1 {nothing}", 2,
         "--set 'nope=1': expected key=value with a key of"),
    case("train-filter-resume", "train filter --out {w}/s --resume {nothing}", 2,
         "--resume, --mode and --device are options of the encoder methods"),
    case("filter-scores-is-an-input", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --scores {w}/de.txt {nothing}", 2,
         "de.txt: is also an input"),
    case("filter-tsv-one-column", "filter {w}/pairs.tsv -o {w}/k.tsv {nothing}", 2,
         "pairs.tsv:1: 1 column(s), expected 2", setup=with_files({"pairs.tsv": "only one side\n"})),
    case("filter-tsv-third-column", "filter {w}/pairs.tsv -o {w}/k.tsv {nothing}", 2,
         "pairs.tsv:2: 3 column(s), expected 2 (source TAB target)",
         setup=with_files({"pairs.tsv": "a\tb\nc\td\te\n"})),
    case("filter-tsv-empty-line", "filter {w}/pairs.tsv -o {w}/k.tsv {nothing}", 2,
         "pairs.tsv:2: 1 column(s), expected 2", setup=with_files({"pairs.tsv": "a\tb\n\nc\td\n"})),
    case("filter-invalid-utf8", "filter {w}/de.txt {w}/bad.txt -o {w}/k.tsv {nothing}", 2,
         "bad.txt:3: invalid UTF-8"),
    case("filter-rows-mismatched", "filter {w}/de.txt {w}/long.txt -o {w}/k.tsv {nothing}", 2,
         "long.txt 7: line i of one is paired with line i of the other"),
    case("filter-three-files", "filter {w}/de.txt {w}/en.txt {w}/in.txt -o {w}/k.tsv {nothing}", 2,
         "unrecognized arguments: "),
    case("filter-scores-same-as-output", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --scores {w}/k.tsv {nothing}", 2,
         "-o, --scores and --histogram must name different files"),
    case("filter-histogram-not-png", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --histogram {w}/h.jpg {nothing}", 2,
         "h.jpg: the histogram is a PNG file"),
    case("filter-histogram-is-a-folder", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --histogram {w}/h.png {nothing}",
         2, "h.png: is a directory; name a .png file", setup=with_folder("h.png")),
    case("filter-histogram-below-a-file", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --histogram {w}/in.txt/h.png "
         "{nothing}", 2, "in.txt is a file, not a folder"),
    case("filter-keep-above-one", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --keep 1.5 {nothing}", 2,
         "--keep is a fraction of the pairs, above 0 and at most 1, not 1.5"),
    case("filter-header-row-read-as-a-pair", "filter {w}/pairs.tsv -o {w}/k.tsv --margin absolute --threshold 0.5 "
         "--no-langid --model toy:onehot -q", 0, "looks like a header", left=("k.tsv",),
         setup=with_files({"pairs.tsv": "src\ttgt\ndeu sentence 0\tenglish deu 0\ndeu sentence 1\tenglish deu 1\n"})),
    case("filter-blank-side-dropped", "filter {w}/one.txt {w}/two.txt -o {w}/k.tsv --margin absolute --threshold 0.5 "
         "--no-langid --model toy:onehot -q", 0, "dropped: empty 1", left=("k.tsv",),
         setup=with_files({"one.txt": "deu sentence 0\ndeu sentence 1\n", "two.txt": "english deu 0\n\n"})),
    case("export-to-a-file", "export toy:unloadable --sentence-transformers {w}/in.txt", 2,
         "is a file, but this output is a folder"),
    case("export-to-stdout", "export toy:unloadable --sentence-transformers -", 2,
         "--sentence-transformers -: this output is a folder, which standard output cannot take"),
    # evaluation results: a subset run never replaces a fuller result
    case("eval-subset-over-full-result", "eval tatoeba --langs kat --model toy:onehot --data {w}/data -o {w}/results "
         "-q", 2, "replacing it would lose deu, fra. Not saved", setup=full_tatoeba_result),
    case("eval-result-of-another-model-of-one-name", "eval tatoeba --model {model} --data {w}/data -o {w}/results "
         "-q", 2, "another model of the same name as this run's tiny@", setup=other_tiny_result),
    case("eval-record-subset-over-full-score", "eval tatoeba --langs kat --model {w}/model --data {w}/data "
         "-o {w}/sub --record -q", 2, "records tatoeba over 3 subset(s); this run scores 1, and replacing it would "
         "lose deu, fra. Not recorded", setup=full_tatoeba_recorded),
    case("eval-langs-files-missing-from-the-data", "eval tatoeba --langs ita --data {w}/data -o {w}/results {nothing}",
         2, "the files of Tatoeba language(s) ['ita'] are not under"),
    case("eval-langs-unknown-to-one-of-several-tasks", "eval sts tatoeba --langs stsb-en,deu --data {w}/data "
         "-o {w}/results {nothing}", 2, "--langs applies to every task named (sts, tatoeba)",
         setup=with_files({"data/stsb_multi_mt/data/stsb-en-test.csv": ""})),
    case("eval-langs-comma-list-before-task", "eval --langs kat,fra tatoeba --model toy:onehot --data {w}/data "
         "-o {w}/results -q", 0, "tatoeba: mean 100.00", left=("results", "results/tatoeba__toy.json")),
    # align: every document and output checked before the model loads; empty lines are null beads
    case("align-input-missing", "align {w}/nope.txt {w}/en.txt -o {w}/b.txt {nothing}", 2, "nope.txt: no such file"),
    case("align-invalid-utf8", "align {w}/de.txt {w}/bad.txt -o {w}/b.txt {nothing}", 2, "bad.txt:3: invalid UTF-8"),
    case("align-empty-document", "align {w}/de.txt {w}/empty.txt -o {w}/b.txt {nothing}", 2,
         "empty.txt: is empty; there is nothing to align", setup=with_files({"empty.txt": ""})),
    case("align-output-is-a-directory", "align {w}/de.txt {w}/en.txt -o {w}/folder {nothing}", 2,
         "folder: is a directory"),
    case("align-pairs-row-mismatch", "align --pairs {w}/list.tsv {nothing}", 2,
         "list.tsv:2: 2 column(s); each row of --pairs is SRC TAB TGT TAB OUT",
         setup=with_files({"list.tsv": "de.txt\ten.txt\ta.txt\nde.txt\ten.txt\n"})),
    case("align-bad-language-code", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --tgt-lang English {nothing}", 2,
         "'English' is not a language code"),
    case("align-output-is-an-input", "align {w}/de.txt {w}/en.txt -o {w}/de.txt {nothing}", 2,
         "de.txt: is also an input"),
    case("align-resume-output-is-an-input", "align {w}/de.txt {w}/en.txt -o {w}/de.txt --resume {nothing}", 2,
         "de.txt: is also an input"),
    case("align-pairs-empty-column", "align --pairs {w}/list.tsv {nothing}", 2,
         "list.tsv:1: column(s) 2 of 3 empty", setup=with_files({"list.tsv": "de.txt\t\to1\n"})),
    case("align-pairs-output-is-another-rows-input", "align --pairs {w}/list.tsv {nothing}", 2,
         "one.txt: is also an input",
         setup=with_files({"list.tsv": "one.txt\ttwo.txt\ta.txt\nde.txt\ten.txt\tone.txt\n",
                           "one.txt": "deu sentence 0\n", "two.txt": "english deu 0\n"})),
    case("align-pairs-output-is-the-list", "align --pairs {w}/list.tsv {nothing}", 2, "list.tsv: is also an input",
         setup=with_files({"list.tsv": "de.txt\ten.txt\tlist.tsv\n"})),
    case("align-pairs-and-files", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --pairs {w}/in.txt {nothing}", 2,
         "give SRC TGT -o OUTPUT, or --pairs LIST.tsv, not both"),
    case("align-one-line-and-empty-lines", "align {w}/one.txt {w}/two.txt -o {w}/b.txt --model toy:onehot -q", 0,
         "aligned 1 document pair(s): 3 beads, 2 of them null", left=("b.txt",),
         setup=with_files({"one.txt": "deu sentence 0\n", "two.txt": "english deu 0\n\nenglish deu 1\n"})),
    case("align-resume-nothing-left", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --resume {nothing}", 0,
         "1 pair(s) skipped, their output already written (--resume)", setup=with_files({"b.txt": "[0]:[0]:0.1\n"})),
    case("align-resume-output-is-a-directory", "align {w}/de.txt {w}/en.txt -o {w}/og --resume {nothing}", 2,
         "og: is a directory; name the output file", setup=with_folder("og")),
    case("align-resume-written-output-of-other-documents", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --resume "
         "--gold {w}/g.txt {nothing}", 2, "b.txt:2: the bead cites source line 7 (0-based), but",
         setup=with_files({"b.txt": "[0]:[0]:0.1\n[7]:[9]:0.1\n", "g.txt": "[0]:[0]\n[1]:[1]\n"})),
    case("align-resume-pairs", "align --pairs {w}/list.tsv --resume --model toy:onehot -q", 0,
         "aligned 1 document pair(s): 1 beads, 0 of them null", left=("b2.txt",),
         setup=with_files({"list.tsv": "one.txt\ttwo.txt\tb1.txt\none.txt\ttwo.txt\tb2.txt\n",
                           "one.txt": "deu sentence 0\n", "two.txt": "english deu 0\n", "b1.txt": "[0]:[0]:0.1\n"})),
    # align: paths of a list read one way, standard input, empty text, TSV fields, bounded settings, gold data
    case("align-pairs-stdout-from-another-folder", "align --pairs sub/list.tsv --model toy:onehot -q", 0, "[0]:[0]:",
         setup=with_files({"sub/list.tsv": "one.txt\ttwo.txt\t-\n", "sub/one.txt": "deu sentence 0\n",
                           "sub/two.txt": "english deu 0\n"})),
    case("align-pairs-one-output-two-spellings", "align --pairs list.tsv {nothing}", 2,
         "list.tsv:2: sub/../b.txt: is also the output of list.tsv:1",
         setup=with_files({"list.tsv": "de.txt\ten.txt\tb.txt\nen.txt\tde.txt\tsub/../b.txt\n", "sub/x.txt": ""})),
    case("align-pairs-header-row", "align --pairs list.tsv {nothing}", 2, "list.tsv:1: this row looks like a header",
         setup=with_files({"list.tsv": "src\ttgt\tout\nde.txt\ten.txt\tb.txt\n"})),
    case("align-pairs-missing-document-names-the-row", "align --pairs list.tsv {nothing}", 2,
         "list.tsv:2: nope.txt: no such file", setup=with_files({"list.tsv": "de.txt\ten.txt\ta.txt\nnope.txt\t"
                                                                             "en.txt\tb.txt\n"})),
    # align --gold: the beads written, scored against a gold alignment; the gold checked before the model loads
    case("align-gold-scored", "align {w}/one.txt {w}/two.txt -o {w}/b.txt --gold {w}/g.txt --model toy:onehot -q", 0,
         "against the gold of 1 pair(s): strict precision 100.0, recall 100.0, F1 100.0", left=("b.txt",),
         setup=with_files({"one.txt": "deu sentence 0\ndeu sentence 1\n", "two.txt": "english deu 0\nenglish deu 1\n",
                           "g.txt": "[0]:[0]\n[1]:[1]\n"})),
    case("align-gold-malformed", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --gold {w}/g.txt {nothing}", 2,
         "g.txt:1: not a bead; expected [i, j]:[k]", setup=with_files({"g.txt": "0-0\n"})),
    case("align-gold-past-the-end", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --gold {w}/g.txt {nothing}", 2,
         "g.txt:2: the bead cites source line 99 (0-based)", setup=with_files({"g.txt": "[0]:[0]\n[99]:[1]\n"})),
    case("align-gold-bead-of-no-line", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --gold {w}/g.txt {nothing}", 2,
         "g.txt:2: the bead []:[] holds no line", setup=with_files({"g.txt": "[0]:[0]\n[]:[]\n"})),
    case("align-gold-trailing-comma", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --gold {w}/g.txt {nothing}", 2,
         "g.txt:1: not a bead", setup=with_files({"g.txt": "[0,]:[0]\n"})),
    case("align-gold-ids-not-ascending", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --gold {w}/g.txt {nothing}", 2,
         "g.txt:1: the source ids (1, 0) are not ascending", setup=with_files({"g.txt": "[1, 0]:[0]\n"})),
    case("align-gold-cost-not-finite", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --gold {w}/g.txt {nothing}", 2,
         "g.txt:1: the cost 'nan' is not a finite number", setup=with_files({"g.txt": "[0]:[0]:nan\n"})),
    case("align-gold-empty", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --gold {w}/g.txt {nothing}", 2,
         "g.txt: holds no bead", setup=with_files({"g.txt": "\n"})),
    case("align-gold-is-a-folder", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --gold {w}/folder {nothing}", 2,
         "folder: is a folder, not a gold alignment"),
    case("align-gold-missing", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --gold {w}/nope.txt {nothing}", 2,
         "nope.txt: no such gold alignment"),
    case("align-gold-tsv-output", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --format tsv --gold {w}/g.txt {nothing}",
         2, "--gold scores the beads an output holds", setup=with_files({"g.txt": "[0]:[0]\n"})),
    case("align-gold-standard-output", "align {w}/de.txt {w}/en.txt -o - --gold {w}/g.txt {nothing}", 2,
         "--gold reads the output again to score it: name an output file, not -",
         setup=with_files({"g.txt": "[0]:[0]\n"})),
    case("align-gold-and-pairs", "align --pairs {w}/list.tsv --gold {w}/g.txt {nothing}", 2,
         "--gold goes with SRC TGT -o OUTPUT; a --pairs list names each pair's gold in a fourth column"),
    case("align-output-is-the-gold", "align {w}/de.txt {w}/en.txt -o {w}/g.txt --gold {w}/g.txt {nothing}", 2,
         "g.txt: is also an input", setup=with_files({"g.txt": "[0]:[0]\n"})),
    case("align-split-map-is-a-directory", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --split --src-lang de "
         "--tgt-lang en {nothing}", 2, "b.txt.tgt-sentences.tsv: is a directory, where --split writes a sentence map",
         setup=with_folder("b.txt.tgt-sentences.tsv")),
    case("align-split-map-is-another-output", "align --pairs list.tsv --split --src-lang de --tgt-lang en {nothing}",
         2, "list.tsv:1: x.src-sentences.tsv: the sentence map --split writes beside x is also the output of "
         "list.tsv:2",
         setup=with_files({"list.tsv": "de.txt\ten.txt\tx\nen.txt\tde.txt\tx.src-sentences.tsv\n"})),
    case("align-split-map-is-the-list", "align --pairs o.src-sentences.tsv --split --src-lang de --tgt-lang en "
         "{nothing}", 2, "o.src-sentences.tsv: is also an input",
         setup=with_files({"o.src-sentences.tsv": "de.txt\ten.txt\to\n"})),
    case("align-pairs-gold-in-some-rows", "align --pairs list.tsv {nothing}", 2,
         "list.tsv:2: 3 columns, but list.tsv:1 has 4",
         setup=with_files({"list.tsv": "de.txt\ten.txt\ta.txt\tg.txt\nde.txt\ten.txt\tb.txt\n"})),
    case("align-stdin-source", "align - {w}/two.txt -o {w}/b.txt --model toy:onehot -q", 0,
         "aligned 1 document pair(s): 1 beads, 0 of them null", left=("b.txt",), stdin=b"deu sentence 0\n",
         setup=with_files({"two.txt": "english deu 0\n"})),
    case("align-both-sides-stdin", "align - - -o {w}/b.txt {nothing}", 2,
         "<stdin>: is also a document of this pair; standard input and pipes are read once", stdin=b"a\n"),
    case("align-invisible-document", "align {w}/de.txt {w}/inv.txt -o {w}/b.txt {nothing}", 2,
         "inv.txt: has no text (2 blank line(s)); there is nothing to align",
         setup=with_files({"inv.txt": "\u200b\u00ad\n\ufeff\x01\n"})),
    case("align-invisible-line-is-an-empty-line", "align {w}/one.txt {w}/two.txt -o - --null-cost 0.5 "
         "--model toy:onehot -q", 0, "[]:[1]:0.000000",
         setup=with_files({"one.txt": "deu sentence 0\n", "two.txt": "english deu 0\n\u200b\u00ad\n"})),
    case("align-tsv-tab-and-cr-inside-a-line", "align {w}/one.txt {w}/two.txt -o - --format tsv --model toy:onehot "
         "-q", 0, "deu sentence 0 more deu sentence 1",
         setup=with_files({"one.txt": "deu sentence 0\tmore\rdeu sentence 1\n", "two.txt": "english deu 0\n"})),
    case("align-bracket-cost-huge", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --bracket-cost 1e300 {nothing}", 2,
         "--bracket-cost must be a number from 0 to 1000000, not 1e+300"),
    case("align-max-beads-one", "align {w}/de.txt {w}/en.txt -o {w}/b.txt --max-beads 1 {nothing}", 2,
         "argument --max-beads: must be a whole number from 2 (1-1 beads only) to 8, not '1'"),
    case("eval-align-gold-past-the-end", "eval align --model toy:onehot --data {w}/data -o {w}/results -q", 2,
         "dev.defr:2: the bead cites source line 2 (0-based), but",
         setup=with_files({"data/align_textberg/dev.de": "deu sentence 0\ndeu sentence 1\n",
                           "data/align_textberg/dev.fr": "english deu 0\nenglish deu 1\n",
                           "data/align_textberg/dev.defr": "[0]:[0]\n[1, 2]:[1]\n"})),
    # records, cached graphs, exports, the service's start and resuming (issue 45)
    case("mine-auto-threshold-model-directory-first", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --threshold auto "
         "--backend openvino-bf16 --model {w}/model -q", 0, "candidates at threshold 0.5 (", left=("p.tsv",),
         setup=thresholds_in_model_and_cache),
    case("demo-output-is-a-file", "demo -o {w}/de.txt --model toy:unloadable", 2,
         "de.txt: is a file, but this output is a folder"),
    case("demo-output-stdout", "demo -o - --model toy:unloadable", 2,
         "-o -: this output is a folder, which standard output"),
    case("xlsent-home-is-a-file", "models --prepare", 1,
         "is a file, but xlsent keeps its cache in a folder there; point XLSENT_HOME at a folder",
         env={"XLSENT_HOME": "{w}/de.txt"}),
    case("xlsent-home-below-a-file", "models --prepare", 1,
         "de.txt/cache: cannot make the cache folder there (Not a directory); point XLSENT_HOME at a folder you can "
         "write", env={"XLSENT_HOME": "{w}/de.txt/cache"}),
    case("output-folder-cannot-be-made", "embed {w}/de.txt -o /proc/xlsent-nope/o.npy {nothing}", 1,
         "/proc/xlsent-nope: cannot create the output's folder"),
    case("models-force-without-prepare", "models --force", 2,
         "--force converts the default model again, with --prepare"),
    case("calibrate-too-few-gold-pairs", "calibrate --model toy:planted --data {w}/data --langs de -q", 0,
         "calibrated on too few gold pairs (de-en: 12; at least 500 a set make a stable threshold)",
         setup=small_newstest(12)),
    case("calibrate-langs-any-case", "calibrate --model toy:planted --data {w}/data --langs DE-de -q", 0,
         "calibrated on too few gold pairs (de-en: 12;", setup=small_newstest(12)),
    case("calibrate-data-missing", "calibrate --data {w}/nope {nothing}", 2,
         "nope: no such benchmark data folder (--data)"),
    case("calibrate-filter-data-missing", "calibrate --for filter --data {w}/nope {nothing}", 2,
         "nope: no such benchmark data folder (--data)"),
    case("eval-existing-result-unreadable", "eval tatoeba --model toy:onehot --data {w}/data -o {w}/results -q", 2,
         "tatoeba__toy.json holds no readable tatoeba result (not a JSON object with an encoder)",
         setup=with_files({"results/tatoeba__toy.json": "{not json"})),
    case("eval-data-is-a-file", "eval tatoeba --data {w}/in.txt -o {w}/results {nothing}", 2,
         "in.txt: is a file, not the benchmark data folder (--data)"),
    case("eval-data-variable-is-a-file", "eval tatoeba -o {w}/results {nothing}", 2,
         "in.txt: is a file, not the benchmark data folder; point XLSENT_DATA at the folder holding the benchmark data",
         env={"XLSENT_DATA": "{w}/in.txt"}),
    case("filter-config-threshold-nan", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --config {w}/f.toml {nothing}", 2,
         "f.toml: threshold = nan: expected a number or a string, not nan (no setting is nan or inf)",
         setup=with_files({"f.toml": "threshold = nan\n"})),
    case("calibrate-no-gold-pairs", "calibrate --model {w}/model --data {w}/data --langs de -q", 2,
         "de-en: the BUCC-style dev set under", setup=lambda w, model: (small_newstest(0)(w, model),
                                                                           model_copy(w, model))),
    case("embed-openvino-graph-bytes-flipped", "embed {w}/in.txt -o {w}/o.npy --backend openvino --model {model} -q",
         0, "model.bin: checksum differs from export.json (corrupt or edited); rebuilding this cached export",
         left=EMBEDDED, setup=cached_graph("openvino", flip_middle_bytes)),
    case("embed-onnx-graph-truncated", "embed {w}/in.txt -o {w}/o.npy --backend onnx --model {model} -q", 0,
         "(truncated or partial); rebuilding this cached export", left=EMBEDDED,
         setup=cached_graph("onnx", cut_in_half)),
    case("export-lora-model", "export {w}/lora --sentence-transformers {w}/st", 0, "wrote sentence-transformers folder",
         left=ST_FOLDER, setup=lora_over(exportable_copy)),
    case("export-tokenizer-config-not-json", "export {w}/model --sentence-transformers {w}/st", 2,
         "tokenizer_config.json: not a readable JSON file", setup=lambda w, model: model_copy(w, model).joinpath(
             "tokenizer_config.json").write_text("{bad", encoding="utf-8")),
    case("export-backbone-without-tokenizer-config", "export {w}/lora --sentence-transformers {w}/st", 0,
         "wrote sentence-transformers folder", left=ST_FOLDER, setup=lora_over(lambda w, model: model)),
    case("embed-lora-backbone-gone", "embed {w}/in.txt -o {w}/o.npy --model {w}/lora -q", 2,
         "/model is not there, nor at ../model from the model's folder", setup=lora_without_backbone),
    case("serve-host-not-on-this-machine", "serve --model toy:onehot --host 203.0.113.7 --port 0", 2,
         "--host 203.0.113.7: this machine has no such address; use 127.0.0.1 (this machine only), 0.0.0.0 (every "
         "interface) or one of this machine's addresses"),
    case("serve-api-key-padded", "serve --model toy:onehot --port 0", 2,
         "XLSENT_API_KEY: the API key has whitespace around it", env={"XLSENT_API_KEY": "key "}),
    case("serve-api-key-blank", "serve --model toy:onehot --port 0", 2, "XLSENT_API_KEY: the API key is set but blank",
         env={"XLSENT_API_KEY": ""}),
    case("serve-api-key-env-empty", "serve --model toy:onehot --port 0 --api-key-env {empty}", 2,
         "--api-key-env '': names no environment variable"),
    case("train-resume-another-methods-model", "train linear-map --out {w}/done --resume -q", 2,
         "done holds a dual-pivot model, not one of the method trained now; --resume continues a run of the same "
         "method only", setup=finished_dual_pivot),
    case("eval-summary-without-averages", "eval tatoeba --langs deu,fra --model toy:onehot --data {w}/data "
         "-o {w}/results -q", 0, "tatoeba: mean 100.00 -> ", left=("results", "results/tatoeba__toy.json")),
    # a cut applies to the scores it was made for: a side of fewer than k sentences gives cosines, never cut by a
    # margin's cut (which would drop every pair)
    case("filter-margin-cut-on-cosines", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --threshold 0.5 --no-langid "
         "{nothing}", 2, "--threshold 0.5 cuts ratio margins, but the scores of this run are cosines ("),
    case("filter-keep-with-threshold", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --keep 0.5 --threshold 1.0 "
         "{nothing}", 2, "--keep 0.5 and --threshold 1 both set the score cut: give one"),
    case("filter-min-p-clean-with-keep", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --keep 0.5 --min-p-clean 0.5 "
         "{nothing}", 2, "--min-p-clean 0.5 and --keep 0.5 both set the cut: give one"),
    case("filter-empty-source", "filter {w}/empty.txt {w}/en.txt -o {w}/k.tsv {nothing}", 2,
         "empty.txt: is empty, so there is nothing to filter", setup=with_files({"empty.txt": ""})),
    # settings files: every value typed and checked, naming the file and the key
    case("filter-config-string-for-boolean", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --config {w}/f.toml "
         "{nothing}", 2, "f.toml: langid = 'false': expected true or false, not a string (write it without quotes)",
         setup=with_files({"f.toml": 'langid = "false"\n'})),
    case("filter-config-fraction-for-whole-number", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --config {w}/f.toml "
         "{nothing}", 2, "f.toml: max_length = 1.5: expected a whole number, not a number with a fraction",
         setup=with_files({"f.toml": "[filter]\nmax_length = 1.5\n"})),
    case("serve-config-string-for-boolean", "serve --model toy:unloadable --config {w}/s.toml --port 0", 2,
         "s.toml: warmup = 'false': expected true or false, not a string",
         setup=with_files({"s.toml": 'warmup = "false"\n'})),
    # embeddings given for a side: made from that side's column, by the model named (or no --model at all)
    case("score-tgt-emb-of-the-source-column", "score --tsv {w}/pairs.tsv --no-header -o {w}/s.tsv --src-emb "
         "{w}/col0.npy --tgt-emb {w}/col0.npy -q", 2,
         "col0.npy: --tgt-emb was made from column 0 of a TSV read without header (--column 0 --no-header)",
         setup=embedded_columns),
    case("score-model-with-both-embeddings", "score {w}/de.txt {w}/en.txt -o {w}/s.tsv --src-emb {w}/de.npy "
         "--tgt-emb {w}/en.npy {nothing}", 2,
         "--model toy:unloadable with --src-emb and --tgt-emb: the vectors of both sides are given, so no model is "
         "used",
         setup=embedded_sides),
    case("mine-src-emb-of-another-language", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --src-emb {w}/de.npy "
         "--src-lang fr {nothing}", 2, "de.npy: --src-emb was embedded as language 'de', but this run gives 'fr'",
         setup=embedded_sides),
    # language codes and data: refused before the model loads
    case("score-bad-language-code", "score {w}/de.txt {w}/en.txt -o {w}/s.tsv --src-lang German {nothing}", 2,
         "'German' is not a language code"),
    case("filter-bad-language-code", "filter {w}/de.txt {w}/en.txt -o {w}/k.tsv --tgt-lang English {nothing}", 2,
         "'English' is not a language code"),
    case("mine-bad-language-code", "mine {w}/de.txt {w}/en.txt -o {w}/p.tsv --src-lang Deutsch {nothing}", 2,
         "'Deutsch' is not a language code"),
    case("eval-align-no-data", "eval align --data {w}/folder -o {w}/results {nothing}", 2, "align: no data under"),
    case("embed-language-code-in-capitals", "embed {w}/in.txt -o {w}/o.npy --lang DE --model {model} -q", 0, "wrote ",
         left=EMBEDDED),
    case("embed-language-code-outside-the-table", "embed {w}/in.txt -o {w}/o.npy --lang xx --model {model} -q", 0,
         "'xx' is not in xlsent's language table (xlsent.languages): taken as given", left=EMBEDDED),
    # text files: UTF-16 and CR-only line ends named as such
    case("mine-utf16-source", "mine {w}/u16.txt {w}/en.txt -o {w}/p.tsv {nothing}", 2,
         "u16.txt: is UTF-16 (it starts with a UTF-16 byte-order mark), not UTF-8; convert it",
         setup=lambda w, model: (w / "u16.txt").write_bytes("der hund\nb\n".encode("utf-16"))),
    case("filter-utf16-without-bom", "filter {w}/u16.txt {w}/en.txt -o {w}/k.tsv {nothing}", 2,
         "u16.txt: is UTF-16 (NUL bytes stand between its characters), not UTF-8",
         setup=lambda w, model: (w / "u16.txt").write_bytes("a\nb\nc\n".encode("utf-16-le"))),
    case("embed-cr-only-line-ends", "embed {w}/cr.txt -o {w}/o.npy --model {model} -q", 0,
         "cr.txt:1: holds 2 carriage return(s) (CR) inside the line", left=EMBEDDED,
         setup=lambda w, model: (w / "cr.txt").write_bytes(b"the dog\rder hund\rb\r")),
    # model folders: a config value of the wrong type, weights of another shape, NaN weights: one line, exit 2
    case("model-folder-config-value-of-wrong-type", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "hf/config.json: num_hidden_layers = '2': expected a whole number, not a string",
         setup=foreign_folder(with_config_field("num_hidden_layers", "2"))),
    case("model-folder-weights-of-another-shape", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "hf/model.safetensors: weights do not match",
         setup=foreign_folder(with_config_field("intermediate_size", 48))),
    case("model-folder-nan-weights", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "the weights are broken (NaN or infinite values?), so the model is not used",
         setup=foreign_folder(with_nan_weights)),
    case("model-folder-nan-in-one-row", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "model.safetensors: tensor embeddings.word_embeddings.weight holds values that are not finite numbers",
         setup=foreign_folder(with_nan_in_one_row)),
    case("model-folder-tokenizer-past-the-vocabulary", "embed {w}/in.txt -o {w}/o.npy --model {w}/hf -q", 2,
         "tokenizer.json: gives token ids up to", setup=foreign_folder(with_a_piece_past_the_vocabulary)),
    case("serve-model-nan-weights", "serve --model {w}/hf --port 0", 2,
         "the weights are broken (NaN or infinite values?), so the model is not used",
         setup=foreign_folder(with_nan_weights)),
]


def tree(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch,
                   capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    w, scratch = tmp_path / "w", tmp_path / "tmp"
    w.mkdir()
    scratch.mkdir()
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(w))
    monkeypatch.chdir(w)  # a stray relative path (say, a file named -) would show among the files left
    standard_files(w)
    if case.setup:  # before the scratch folder is the temporary folder: what a setup leaves there is not the case's
        case.setup(w, tiny_model_dir)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    if case.stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(case.stdin)))
    for name, value in (case.env or {}).items():
        monkeypatch.setenv(name, value.format(w=w))
    before = tree(w)
    capsys.readouterr()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        code = main([arg.format(w=w, model=tiny_model_dir, empty="") for arg in case.argv])
    captured = capsys.readouterr()
    said = captured.out + captured.err + caplog.text
    assert code == case.code, said
    assert case.message in said
    assert sorted(tree(w) - before) == sorted(case.left)
    assert not any(scratch.iterdir()), "temporary files left behind"


def docs_rows() -> dict[str, list[str]]:
    rows = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"\| `([a-z0-9-]+)` \|", line):
            rows[m.group(1)] = [cell.strip() for cell in line.strip("|").split("|")]
    return rows


def test_docs_table_lists_every_case() -> None:
    rows = docs_rows()
    assert list(rows) == [c.id for c in CASES]
    for c in CASES:
        cells = rows[c.id]
        assert cells[2] == str(c.code), c.id
        assert cells[3].strip("`").replace("\\|", "|") == c.message, c.id
        assert cells[4] == (", ".join(f"`{p}`" for p in c.left) or "nothing"), c.id


def test_weights_are_hashed_once_per_change(tmp_path: Path, tiny_model_dir: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(model_dir, "BIG_FILE_BYTES", 50_000)  # the tiny weights (87 kB) count as big
    copy = Path(shutil.copytree(tiny_model_dir, tmp_path / "m"))
    hashed: list[str] = []
    real = model_dir.sha256_file
    monkeypatch.setattr(model_dir, "sha256_file", lambda p: hashed.append(Path(p).name) or real(p))
    read_manifest(copy)
    assert sorted(hashed) == ["config.json", "model.safetensors", "tokenizer.json"]
    hashed.clear()
    read_manifest(copy)
    assert sorted(hashed) == ["config.json", "tokenizer.json"]  # small files every time, weights from the cache
    cache = json.loads((tmp_path / "home" / "checksums.json").read_text(encoding="utf-8"))
    entry = cache["files"][str((copy / "model.safetensors").absolute())]
    assert entry["bytes"] == 87608 and entry["sha256"] == real(copy / "model.safetensors")

    (tmp_path / "home" / "checksums.json").write_text("{not json", encoding="utf-8")  # an unreadable cache
    hashed.clear()
    read_manifest(copy)
    assert "model.safetensors" in hashed
    assert json.loads((tmp_path / "home" / "checksums.json").read_text(encoding="utf-8"))["version"] == 1

    weights = copy / "model.safetensors"
    stat = weights.stat()
    time.sleep(0.05)  # the change time moves on even when the modification time is put back
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(ModelDirError, match="model.safetensors: checksum differs"):
        read_manifest(copy)
    data[-1] ^= 0x01  # restored: the stale entry is re-hashed and the file passes again
    weights.write_bytes(bytes(data))
    read_manifest(copy)


def test_encoder_id_comes_from_the_verified_files(tmp_path: Path, tiny_model_dir: Path) -> None:
    copy = Path(shutil.copytree(tiny_model_dir, tmp_path / "m"))
    genuine = TransformerEncoder(copy).id
    edit_same_size(copy / "config.json", b"1e-12", b"1e-01")
    with pytest.raises(ModelDirError, match="config.json: checksum differs"):
        TransformerEncoder(copy)
    manifest = json.loads((copy / "xlsent.json").read_text(encoding="utf-8"))
    write_manifest(copy, {k: v for k, v in manifest.items() if k not in ("files", "format_version")})
    assert TransformerEncoder(copy).id != genuine  # the edit, once recorded, is another encoder


def test_result_of_other_weights_never_replaced(tmp_path: Path) -> None:
    def result(encoder: str) -> TaskResult:
        return TaskResult(task="bucc", encoder=encoder, dataset="d", main_score=50.0, main_metric="f1",
                          scores={"zh-en": {"f1": 50.0}})

    path = result("student@aaaa").save(tmp_path)
    result("student@aaaa+openvino-bf16").save(tmp_path)  # the same weights on another backend: replaced
    assert json.loads(path.read_text(encoding="utf-8"))["encoder"] == "student@aaaa+openvino-bf16"
    with pytest.raises(ResultExistsError, match="bucc result of student@aaaa\\+openvino-bf16, another model"):
        result("student@bbbb").save(tmp_path)
    assert json.loads(path.read_text(encoding="utf-8"))["encoder"] == "student@aaaa+openvino-bf16"
    result("student@bbbb").save(tmp_path, overwrite=True)
    assert json.loads(path.read_text(encoding="utf-8"))["encoder"] == "student@bbbb"


def test_subset_result_never_replaces_a_fuller_one(tmp_path: Path) -> None:
    def result(*langs: str, score: float = 50.0) -> TaskResult:
        return TaskResult(task="tatoeba", encoder="me5-small@abc", dataset="d", main_score=score,
                          main_metric="mean", scores={lang: {"mean": score} for lang in langs})

    path = result("deu", "fra", "kat").save(tmp_path)
    with pytest.raises(ResultExistsError, match="replacing it would lose deu, fra"):
        result("kat").save(tmp_path)
    assert set(json.loads(path.read_text(encoding="utf-8"))["scores"]) == {"deu", "fra", "kat"}
    result("kat").save(tmp_path, overwrite=True)
    with pytest.raises(ResultExistsError, match="would lose kat"):  # a second subset does not replace the first
        result("deu").save(tmp_path)
    result("kat", score=60.0).save(tmp_path)  # the same subset again: replaced
    assert json.loads(path.read_text(encoding="utf-8"))["main_score"] == 60.0
    result("deu", "kat").save(tmp_path)  # a fuller run: replaced
    assert set(json.loads(path.read_text(encoding="utf-8"))["scores"]) == {"deu", "kat"}


def test_interrupted_mine_keeps_only_finished_stages(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "de.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("b\na\n", encoding="utf-8")

    class Interrupted(LookupEncoder):
        def __init__(self, after: int) -> None:
            super().__init__({"a": [1.0, 0.0], "b": [0.0, 1.0]}, name="toy")
            self.after = after

        def encode(self, sentences, lang=None, **kw):  # type: ignore[no-untyped-def]
            self.after -= 1
            if self.after < 0:
                raise KeyboardInterrupt
            return super().encode(sentences, lang, **kw)

    src, tgt = InputSpec(tmp_path / "de.txt"), InputSpec(tmp_path / "en.txt")
    out, work = tmp_path / "p.tsv", tmp_path / "p.tsv.work"
    with pytest.raises(KeyboardInterrupt):  # nothing finished yet: nothing kept
        mine_files(src, tgt, out, LocalEngine(Interrupted(after=0)), MineConfig(), progress=False)
    assert not work.exists()
    with caplog.at_level(logging.WARNING), pytest.raises(KeyboardInterrupt):  # the source side is finished
        mine_files(src, tgt, out, LocalEngine(Interrupted(after=1)), MineConfig(), progress=False)
    assert "kept the finished stages" in caplog.text and (work / "src.npy").is_file()
    # reuses src.npy: one call left
    mine_files(src, tgt, out, LocalEngine(Interrupted(after=1)), MineConfig(), progress=False)
    assert out.read_text(encoding="utf-8").count("\n") == 2 and not work.exists()


def test_mine_config_names_the_flags() -> None:
    with pytest.raises(ValueError, match="--k must be at least 1, not 0; --threshold must be a finite number, not nan"):
        MineConfig(k=0, threshold=float("nan"))
    with pytest.raises(ValueError, match="--margin must be one of ratio, distance, absolute, not 'ratios'"):
        MineConfig(margin="ratios")


@pytest.mark.parametrize("argv", [["eval", "tatoeba", "--langs", "kat,fra"], ["eval", "--langs", "kat,fra", "tatoeba"],
                                  ["eval", "--langs", "kat", "fra", "tatoeba"],
                                  ["eval", "tatoeba", "--langs", "kat", "--langs", "fra"]])
def test_langs_forms(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert [*args.tasks, *args.more_tasks] == ["tatoeba"] and args.langs == ["kat", "fra"]


def test_tsv_header_rule_and_line_numbers(tmp_path: Path, tiny_encoder: TransformerEncoder) -> None:
    src = tmp_path / "de.tsv"
    src.write_text("text\tid\nder hund bellt\t7\nder hund\t8\n\t9\nb\t10\n", encoding="utf-8")
    by_name = InputSpec(src, column="text")
    by_index = InputSpec(src, column="0", header=True)
    no_header = InputSpec(src, header=False)
    with pytest.raises(InputError, match="--header"):
        InputSpec(src).check()
    vecs = {}
    for name, spec in (("name", by_name), ("index", by_index), ("none", no_header)):
        embed_file(spec, tmp_path / f"{name}.npy", tiny_encoder, EmbedOptions(progress=False))
        vecs[name] = load_embeddings(tmp_path / f"{name}.npy")[0]
    np.testing.assert_array_equal(vecs["name"], vecs["index"])
    np.testing.assert_allclose(vecs["none"][1:], vecs["name"], atol=1e-6)
    np.testing.assert_allclose(vecs["none"][0], tiny_encoder.encode(["text"])[0], atol=1e-6)

    tgt = tmp_path / "en.txt"
    tgt.write_text("the dog barks\na cat runs\nthe cat\n", encoding="utf-8")
    out = tmp_path / "pairs.tsv"
    mine_files(by_name, InputSpec(tgt), out, LocalEngine(tiny_encoder), MineConfig(with_ids=True, k=2), progress=False)
    src_lines, tgt_lines = src.read_text(encoding="utf-8").splitlines(), tgt.read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows
    for _, s, t, s_line, t_line in rows:  # --with-ids gives line numbers, the header being line 1
        assert src_lines[int(s_line) - 1].split("\t")[0] == s and tgt_lines[int(t_line) - 1] == t


def test_pipes_and_standard_streams(tmp_path: Path, tiny_model_dir: Path, tiny_encoder: TransformerEncoder,
                                    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    lines = ["the dog barks", "a cat runs"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("".join(s + "\n" for s in lines).encode())))
    assert main(["embed", "-", "-o", str(tmp_path / "stdin.npy"), "--model", str(tiny_model_dir), "-q"]) == 0
    vecs, meta = load_embeddings(tmp_path / "stdin.npy")
    assert meta["source"]["path"] == "<stdin>" and meta["rows"] == 2
    np.testing.assert_allclose(vecs, tiny_encoder.encode(lines), atol=1e-6)

    pipe = tmp_path / "pipe"  # what /dev/stdin is when a command's output is piped in
    os.mkfifo(pipe)
    writer = threading.Thread(target=lambda: pipe.write_text("".join(s + "\n" for s in lines), encoding="utf-8"),
                              daemon=True)
    writer.start()
    assert main(["embed", str(pipe), "-o", str(tmp_path / "pipe.npy"), "--model", str(tiny_model_dir), "-q"]) == 0
    writer.join(timeout=10)
    piped, meta = load_embeddings(tmp_path / "pipe.npy")
    assert meta["source"]["path"] == str(pipe)
    np.testing.assert_array_equal(piped, vecs)

    (tmp_path / "en.txt").write_text("the dog barks\na cat runs\nthe cat\n", encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"der hund bellt\nb\n")))
    capsys.readouterr()
    assert main(["mine", "-", str(tmp_path / "en.txt"), "-o", "-", "--model", str(tiny_model_dir), "-q",
                 "--with-ids"]) == 0
    out = capsys.readouterr()
    rows = [line.split("\t") for line in out.out.splitlines()]  # the pairs alone on standard output
    assert rows and all(len(r) == 5 and r[1] in ("der hund bellt", "b") for r in rows)
    assert "wrote -:" in out.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["en.txt", "pipe", "pipe.npy", "pipe.npy.json",
                                                          "stdin.npy", "stdin.npy.json"]


def test_every_option_shows_its_default_and_meaning() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    for name in commands.choices:
        sub = commands.build(name)  # type: ignore[attr-defined]
        if name == "train":  # its options are the training platform's (and list the config defaults)
            continue
        for action in sub._actions:
            if action.help == "==SUPPRESS==" or action.dest in ("help", "version"):
                continue
            flag = "/".join(action.option_strings) or action.dest
            assert action.help, f"{name} {flag}: no help"
            if action.option_strings and action.nargs != 0 and not action.required:
                assert "default" in action.help, f"{name} {flag}: help does not say its default"
            if action.dest == "output":
                assert action.option_strings == ["-o", "--output"], name
            if action.dest == "k":
                assert action.option_strings == ["-k", "--k"], name


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["mine", "--help"]])
def test_help_and_version_start_fast(argv: list[str]) -> None:
    """No numpy, torch or other heavy import: start-up is the interpreter's and argparse's time (~0.1 s)."""
    code = ("import sys\nfrom xlsent.cli import main\nassert main(sys.argv[1:]) == 0\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'torch', 'tqdm', 'scipy', 'pyarrow'})\n"
            "print('HEAVY', heavy, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stderr
