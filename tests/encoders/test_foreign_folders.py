"""Foreign folders: tiny random sentence-transformers and Hugging Face folders of every supported architecture and
pooling, built here with transformers' config classes and a tokenizer made in the test (no download), give
``SentenceTransformer(folder).encode``'s vectors on every backend; bad folders are errors naming the file."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from xlsent.checksum import sha256_file
from xlsent.cli import main
from xlsent.encoders import foreign
from xlsent.encoders.backends import BACKENDS
from xlsent.encoders.export import export_sentence_transformers as export_st
from xlsent.encoders.model_dir import MANIFEST, ModelDirError, write_manifest
from xlsent.encoders.registry import load_encoder
from xlsent.encoders.st_folder import read_folder
from xlsent.encoders.tokenizer_build import build_unigram_tokenizer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.testing import TINY_CHARS, TINY_WORDS

# sentence-transformers is imported by the tests that use it: its import takes seconds, which every test process
# paid at collection
pytestmark = pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                                reason="sentence-transformers is not installed")
transformers = pytest.importorskip("transformers")

SENTENCES = ["the dog barks", "der hund bellt", "a cat runs", "q: b", "the the the dog dog cat barks runs der hund",
             "Ünïcode, punctuation!", "  padded, as lines often are  "]
LOSSLESS = ("torch", "onnx", "openvino")
SIZES = {"hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 4, "intermediate_size": 64}


@dataclass(frozen=True)
class Shape:
    """A folder to build: architecture, pooling, dense activation (None: no Dense), normalisation, prompt."""

    arch: str
    pooling: str | tuple[str, ...]
    dense: str | None = None
    normalize: bool = True
    prompt: str = ""


SHAPES = {
    "labse": Shape("bert", "cls", dense="Tanh"),  # the three shapes of the issue's "done when"
    "bge": Shape("bert", "cls", normalize=False),
    "xlmr-mean": Shape("xlm-roberta", "mean", prompt="q: "),
    "bert-max": Shape("bert", "max", normalize=False),
    "bert-weightedmean": Shape("bert", "weightedmean", dense="Identity", prompt="q: "),
    "roberta-lasttoken": Shape("roberta", "lasttoken"),
    "xlmr-cls-mean-sqrt": Shape("xlm-roberta", ("cls", "mean_sqrt_len_tokens"), dense="Tanh", normalize=False),
}
DONE_WHEN = ("labse", "bge", "xlmr-mean")


def wordpiece_tokenizer() -> transformers.PreTrainedTokenizerFast:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *(w.lstrip("▁") for w in TINY_WORDS),
             *TINY_CHARS, *(f"##{c}" for c in TINY_CHARS)]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(dict.fromkeys(vocab))}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2),
                                                                                                 ("[SEP]", 3)])
    return transformers.BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                          cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def unigram_tokenizer() -> transformers.PreTrainedTokenizerFast:
    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁", *TINY_WORDS, *TINY_CHARS, "<mask>"]
    scores = [0.0] * 4 + [-2.0] + [-3.0] * len(TINY_WORDS) + [-6.0] * len(TINY_CHARS) + [0.0]
    tok = build_unigram_tokenizer(pieces, scores, charsmap=None)
    return transformers.XLMRobertaTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                                unk_token="<unk>", pad_token="<pad>", cls_token="<s>",
                                                sep_token="</s>", mask_token="<mask>")


def hf_folder(out: Path, arch: str, seed: int = 0) -> Path:
    """A tiny random Hugging Face model folder of ``arch`` with its tokenizer."""
    tokenizer = wordpiece_tokenizer() if arch == "bert" else unigram_tokenizer()
    config_class = {"bert": transformers.BertConfig, "roberta": transformers.RobertaConfig,
                    "xlm-roberta": transformers.XLMRobertaConfig}[arch]
    extra = {} if arch == "bert" else {"pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
    config = config_class(vocab_size=len(tokenizer), max_position_embeddings=66, **SIZES, **extra)
    torch.manual_seed(seed)
    model = transformers.AutoModel.from_config(config)
    with torch.no_grad():  # LayerNorms away from 1/0, so the test sees them
        for name, p in model.named_parameters():
            if "LayerNorm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def st_folder(out: Path, shape: Shape) -> Path:
    """A sentence-transformers folder of ``shape``, saved by sentence-transformers itself."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers import models as stm

    transformer = stm.Transformer(str(hf_folder(out.with_name(out.name + "-hf"), shape.arch)), max_seq_length=32)
    modules = [transformer, stm.Pooling(SIZES["hidden_size"], pooling_mode=shape.pooling)]
    width = SIZES["hidden_size"] * (1 if isinstance(shape.pooling, str) else len(shape.pooling))
    if shape.dense:
        torch.manual_seed(1)
        modules.append(stm.Dense(width, 16, activation_function=getattr(torch.nn, shape.dense)()))
    if shape.normalize:
        modules.append(stm.Normalize())
    prompts = {"query": shape.prompt} if shape.prompt else None
    SentenceTransformer(modules=modules, device="cpu", prompts=prompts,
                        default_prompt_name="query" if prompts else None).save(str(out))
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("foreign")
    return {name: st_folder(root / name, shape) for name, shape in SHAPES.items()}


@pytest.fixture(scope="module")
def reference(folders: dict[str, Path]) -> dict[str, np.ndarray]:
    """sentence-transformers' own vectors of every folder (unit rows)."""
    from sentence_transformers import SentenceTransformer

    return {name: SentenceTransformer(str(path), device="cpu").encode(SENTENCES, normalize_embeddings=True)
            for name, path in folders.items()}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One ``$XLSENT_HOME`` for the module: each folder's graphs are exported once, as on a user's machine."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLSENT_HOME", str(home))
        yield home


def min_cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sum(a * b, axis=1).min())


GATHERS = ("bert-max", "roberta-lasttoken")
"""Poolings whose exported graph gathers or masks differently from a sum: checked on ONNX too."""
CASES = [(name, b) for name in SHAPES for b in (BACKENDS if name in DONE_WHEN else
                                                ("torch", "onnx") if name in GATHERS else ("torch",))]


@pytest.mark.parametrize(("name", "backend"), CASES, ids=[f"{n}-{b}" for n, b in CASES])
def test_vectors_match_sentence_transformers(folders: dict[str, Path], reference: dict[str, np.ndarray], home: Path,
                                             name: str, backend: str, one_torch_thread: None) -> None:
    enc = load_encoder(folders[name], backend)
    got = enc.encode(SENTENCES)
    floor = 0.9999 if backend in LOSSLESS else 0.99
    assert got.shape == reference[name].shape
    assert min_cosine(got, reference[name]) >= floor, f"{name} on {backend}"


def test_auto_on_an_unmeasured_architecture_falls_back_to_a_checked_backend(
        folders: dict[str, Path], reference: dict[str, np.ndarray], home: Path, caplog: pytest.LogCaptureFixture,
        one_torch_thread: None) -> None:
    with caplog.at_level(logging.INFO):
        enc = load_encoder(folders["labse"], "auto")
    assert enc.backend == "openvino"  # type: ignore[attr-defined]
    assert "checked xlm-roberta models only, not bert" in caplog.text
    assert min_cosine(enc.encode(SENTENCES), reference["labse"]) >= 0.9999


def test_id_carries_the_folder_checksum_and_export_is_cached(folders: dict[str, Path], home: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    enc = load_encoder(folders["labse"], "onnx")
    assert enc.id == f"labse@{enc.checksum}"  # type: ignore[attr-defined]
    assert enc.id != load_encoder(folders["bge"]).id  # type: ignore[attr-defined]
    assert (home / "backends" / enc.checksum / "onnx" / "model.onnx").is_file()  # type: ignore[attr-defined]

    def no_export(*_: object) -> None:
        raise AssertionError("the cached graph was rebuilt")

    monkeypatch.setattr("xlsent.encoders.backends._export_onnx", no_export)
    assert load_encoder(folders["labse"], "onnx").encode(SENTENCES[:1]).shape == (1, 16)


@pytest.mark.parametrize("name", ["labse", "xlmr-mean"])
def test_batch_invariance_and_windows(folders: dict[str, Path], name: str, caplog: pytest.LogCaptureFixture,
                                      one_torch_thread: None) -> None:
    enc = load_encoder(folders[name])
    together = enc.encode(SENTENCES)
    alone = np.concatenate([enc.encode([s]) for s in SENTENCES])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert enc.max_tokens == 32  # type: ignore[attr-defined]
    with caplog.at_level(logging.WARNING):
        long = enc.encode(["the dog barks " * 40])
    assert "longer than 32 tokens were split into windows" in caplog.text
    assert abs(float(np.linalg.norm(long)) - 1.0) < 1e-5


def test_hugging_face_folder_is_mean_pooled_as_sentence_transformers_does(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from sentence_transformers import SentenceTransformer

    folder = hf_folder(tmp_path / "plain", "bert")
    ref = SentenceTransformer(str(folder), device="cpu").encode(SENTENCES, normalize_embeddings=True)
    with caplog.at_level(logging.WARNING):  # the notice README promises, shown at the default log level
        enc = load_encoder(folder)
    assert "no modules.json, so a Hugging Face model folder: mean pooling" in caplog.text
    assert min_cosine(enc.encode(SENTENCES), ref) >= 0.9999


@pytest.fixture(scope="module")
def exportable(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model directory with the tokenizer_config.json that an export copies."""
    copy = Path(shutil.copytree(tiny_model_dir, tmp_path_factory.mktemp("exportable") / "tiny"))
    (copy / "tokenizer_config.json").write_text('{"tokenizer_class": "XLMRobertaTokenizer"}', encoding="utf-8")
    manifest = json.loads((copy / MANIFEST).read_text(encoding="utf-8"))
    write_manifest(copy, {k: v for k, v in manifest.items() if k not in ("files", "format_version")})
    return copy


def exported(tmp_path: Path, exportable: Path) -> Path:
    """``exportable`` as ``xlsent export --sentence-transformers`` writes it."""
    return export_st(TransformerEncoder(exportable), tmp_path / "st")


def test_export_round_trip_gives_identical_vectors(exportable: Path, tmp_path: Path, home: Path) -> None:
    out = exported(tmp_path, exportable)
    for backend in ("torch", "onnx"):
        ours, back = load_encoder(exportable, backend), load_encoder(out, backend)
        assert isinstance(back, foreign.ForeignEncoder)
        np.testing.assert_array_equal(back.encode(SENTENCES), ours.encode(SENTENCES))
    with pytest.raises(ValueError, match="is already a sentence-transformers folder: copy it instead"):
        export_st(back, tmp_path / "again")  # type: ignore[arg-type]


def test_a_model_without_tokenizer_config_exports_one_derived_from_the_model(tiny_model_dir: Path, tmp_path: Path,
                                                                            home: Path) -> None:
    """The tiny model has no tokenizer_config.json, and its export was refused although it loads and encodes."""
    assert not (tiny_model_dir / "tokenizer_config.json").exists()
    out = export_st(TransformerEncoder(tiny_model_dir), tmp_path / "st")
    assert json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8")) == {
        "tokenizer_class": "XLMRobertaTokenizerFast", "model_max_length": 64}
    assert not (tiny_model_dir / "tokenizer_config.json").exists()
    np.testing.assert_array_equal(load_encoder(out).encode(SENTENCES), load_encoder(tiny_model_dir).encode(SENTENCES))


def lora_model(backbone: Path, out: Path) -> Path:
    """A LoRA model directory over ``backbone`` whose adapters change the vectors (B is not zero)."""
    from xlsent.encoders.trainable import TrainableTransformer

    model = TrainableTransformer(TransformerEncoder(backbone))
    model.apply_lora(r=2, alpha=4)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".lora_B." in name:
                p.normal_(0.0, 0.5, generator=torch.Generator().manual_seed(0))
    return model.save(out, name="tiny-lora")


def test_a_lora_model_exports_with_its_adapters_merged(exportable: Path, tmp_path: Path, home: Path) -> None:
    lora = load_encoder(lora_model(exportable, tmp_path / "lora"), "torch")
    assert not np.allclose(lora.encode(SENTENCES), load_encoder(exportable, "torch").encode(SENTENCES), atol=1e-3)
    out = export_st(lora, tmp_path / "st")  # type: ignore[arg-type]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lora", "st"]
    np.testing.assert_allclose(load_encoder(out, "torch").encode(SENTENCES), lora.encode(SENTENCES), atol=1e-5)
    from sentence_transformers import SentenceTransformer

    theirs = SentenceTransformer(str(out), device="cpu").encode(SENTENCES, normalize_embeddings=True)
    assert min_cosine(theirs, lora.encode(SENTENCES)) >= 0.9999


def test_a_failed_export_leaves_nothing_behind(tiny_model_dir: Path, tmp_path: Path, home: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from xlsent.encoders import export

    def full_disk(encoder: TransformerEncoder, path: Path) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(export, "_write_weights", full_disk)
    lora = load_encoder(lora_model(tiny_model_dir, tmp_path / "lora"), "torch")
    with pytest.raises(OSError, match="No space left on device"):
        export_st(lora, tmp_path / "st")  # type: ignore[arg-type]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lora"]


def test_models_lists_the_folders_of_xlsent_models(folders: dict[str, Path], tiny_model_dir: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    parent = folders["labse"].parent
    monkeypatch.setenv("XLSENT_MODELS", f"{tiny_model_dir}:{parent}")
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "me5-small" in out
    assert f"{'labse':<32} {16:>4}  {'sentence-transformers':<22} {folders['labse']}" in out
    assert f"{'labse-hf':<32} {32:>4}  {'hugging-face':<22} {parent / 'labse-hf'}" in out
    assert f"{tiny_model_dir.name:<32} {32:>4}  {'xlsent transformer':<22} {tiny_model_dir}" in out



def test_a_folder_named_twice_is_listed_once_and_an_index_is_no_model(tiny_model_dir: Path, tmp_path: Path) -> None:
    from xlsent.encoders.local_models import local_models

    shutil.copytree(tiny_model_dir, tmp_path / "models" / "tiny")
    (tmp_path / "models" / "idx").mkdir()
    (tmp_path / "models" / "idx" / "xlsent.json").write_text('{"type": "sentence-index", "model": "tiny"}')
    models = tmp_path / "models"
    listed = local_models(os.pathsep.join([str(models), str(models / "tiny"), str(models / ".." / "models")]))
    assert [(m.name, m.kind, m.path) for m in listed] == [("tiny", "xlsent transformer", models / "tiny")]


def test_corrupt_folders_and_odd_entries_are_listed_with_their_problem(tiny_model_dir: Path, tmp_path: Path) -> None:
    from xlsent.encoders.local_models import local_models

    models = tmp_path / "models"
    shutil.copytree(tiny_model_dir, models / "cut")
    with open(models / "cut" / "model.safetensors", "r+b") as fh:
        fh.truncate(100)
    (models / "bad").mkdir()
    (models / "bad" / "xlsent.json").write_text("{bad", encoding="utf-8")
    (models / "empty").mkdir()
    (models / "empty" / "xlsent.json").write_text("{}", encoding="utf-8")
    (tmp_path / "a-file").write_text("hi", encoding="utf-8")
    listed = local_models(os.pathsep.join([str(models), str(tmp_path / "a-file"), "~no-such-user-here/models"]))
    got = {m.name: (m.kind, m.problem) for m in listed}
    assert got["cut"][0] == got["bad"][0] == got["empty"][0] == "unreadable"
    assert "size 100 != " in got["cut"][1] and "unreadable manifest" in got["bad"][1]
    assert "no 'type' field" in got["empty"][1]
    assert got["a-file"] == ("missing", "a file, not a folder")
    assert got["models"][0] == "missing" and "cannot expand it" in got["models"][1]


def test_a_folder_of_json_of_another_shape_is_listed_as_unreadable(tmp_path: Path, exportable: Path) -> None:
    from xlsent.encoders.local_models import local_models

    folder = exported(tmp_path, exportable)
    (folder / "config_sentence_transformers.json").write_text('{"prompts": ["query"]}', encoding="utf-8")
    (listed,) = local_models(str(tmp_path))
    assert (listed.name, listed.kind) == ("st", "unreadable")
    assert "config_sentence_transformers.json: prompts = ['query']: expected an object" in listed.problem


# bad folders: an error naming the file, and what to do


def edit_json(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(("missing", "settings", "key", "hub_name"), [
    ("model.safetensors", "config.json", "_name_or_path", "sentence-transformers/LaBSE"),
    ("tokenizer.json", "sentence_bert_config.json", "tokenizer_name_or_path", "xlm-roberta-base"),
], ids=["weights", "tokenizer"])
def test_a_hub_name_instead_of_a_file_is_an_error_naming_the_missing_file(
        tmp_path: Path, exportable: Path, missing: str, settings: str, key: str, hub_name: str) -> None:
    folder = exported(tmp_path, exportable)
    (folder / missing).unlink()
    edit_json(folder / settings, **{key: hub_name})
    with pytest.raises(ModelDirError, match=rf"st/{missing}: is missing .*{settings} names '{hub_name}', not on this "
                                            "disk: xlsent never downloads"):
        load_encoder(folder)


def test_a_module_path_that_is_a_hub_name_is_an_error(tmp_path: Path, exportable: Path) -> None:
    folder = exported(tmp_path, exportable)
    modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    modules[1]["path"] = "sentence-transformers/LaBSE"
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    with pytest.raises(ModelDirError, match=r"modules.json: module 1 \(Pooling\) has path "
                                            r"'sentence-transformers/LaBSE', which is not a folder inside"):
        load_encoder(folder)


def test_a_module_folder_linked_from_outside_is_an_error_saying_so(tmp_path: Path, exportable: Path) -> None:
    folder = exported(tmp_path, exportable)
    shutil.move(folder / "1_Pooling", tmp_path / "elsewhere")
    (folder / "1_Pooling").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ModelDirError, match=r"modules.json: module 1 \(Pooling\) has path '1_Pooling': "
                                            r".*st/1_Pooling is a symlink to .*elsewhere, outside the model folder"):
        load_encoder(folder)


def test_a_normalize_module_needs_no_folder(tmp_path: Path, exportable: Path, home: Path) -> None:
    """A Normalize module has no files: sentence-transformers loads a folder without its (empty) folder, and so does
    xlsent, to the same vectors."""
    folder = exported(tmp_path, exportable)
    expected = load_encoder(folder).encode(SENTENCES)
    (folder / "2_Normalize").rmdir()
    np.testing.assert_array_equal(load_encoder(folder).encode(SENTENCES), expected)


def test_normalize_before_dense_runs_in_that_order(folders: dict[str, Path], tmp_path: Path, home: Path,
                                                  one_torch_thread: None) -> None:
    """modules.json's order is followed: a Normalize before a Dense scales the Dense's input to unit length."""
    from sentence_transformers import SentenceTransformer

    folder = Path(shutil.copytree(folders["labse"], tmp_path / "normalize-first"))
    modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    assert [m["type"].rsplit(".", 1)[-1] for m in modules] == ["Transformer", "Pooling", "Dense", "Normalize"]
    modules[2:] = modules[:1:-1]
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    theirs = SentenceTransformer(str(folder), device="cpu").encode(SENTENCES, normalize_embeddings=True)
    for backend in ("torch", "onnx"):
        assert min_cosine(load_encoder(folder, backend).encode(SENTENCES), theirs) >= 0.9999
    spec = read_folder(folder)
    files_only = json.dumps({p.relative_to(folder).as_posix(): sha256_file(p) for p in spec.files}, sort_keys=True)
    assert foreign.folder_checksum(spec) != hashlib.sha256(files_only.encode()).hexdigest()[:16]  # not the old id


def pickled_weights(folder: Path) -> None:
    """The folder's weights as ``pytorch_model.bin`` holding an object beyond tensors (a Fraction)."""
    from fractions import Fraction

    from safetensors.torch import load_file

    torch.save({**load_file(str(folder / "model.safetensors")), "x": Fraction(1, 2)}, folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()


def sharded_with_a_list(folder: Path) -> None:
    """The weights as one shard, its index's weight_map a list instead of an object."""
    (folder / "model.safetensors").rename(folder / "model-1.safetensors")
    (folder / "model.safetensors.index.json").write_text('{"weight_map": ["model-1.safetensors"]}', encoding="utf-8")


def token_past_vocab(folder: Path) -> None:
    """One more piece in the tokenizer's vocabulary than config.json's vocab_size."""
    tokenizer = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer["model"]["vocab"].append(["▁zebra", -1.0])
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")


def added_token_past_vocab(folder: Path) -> None:
    """An added token that is no piece of the vocabulary: the tokenizer gives it the next id, 51, past config.json's
    vocab_size."""
    tokenizer = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer["added_tokens"].append({"id": 51, "content": "<extra>", "single_word": False, "lstrip": False,
                                      "rstrip": False, "normalized": False, "special": True})
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda f: (f / "modules.json").write_text("[{", encoding="utf-8"), r"st/modules.json: not readable JSON"),
    (lambda f: edit_json(f / "config.json", model_type="mpnet", architectures=["MPNetModel"]),
     r"st/config.json: architecture 'mpnet' \(MPNetModel\) is not supported; xlsent runs bert, roberta, xlm-roberta"),
    (lambda f: (f / "model.safetensors").unlink(), r"st/model.safetensors: is missing \(nor is there"),
    (lambda f: (f / "model.safetensors").write_bytes(b"not weights"), r"st/model.safetensors: cannot be read"),
    (lambda f: (f / "modules.json").write_text(json.dumps(
        [{"idx": 0, "path": "", "type": "sentence_transformers.models.Transformer"},
         {"idx": 1, "path": "", "type": "sentence_transformers.models.LSTM"}]), encoding="utf-8"),
     r"modules.json: module 1 has type 'sentence_transformers.models.LSTM', which xlsent does not run"),
    (lambda f: edit_json(f / "1_Pooling" / "config.json", pooling_mode_mean_tokens=False),
     r"1_Pooling/config.json: pooling \[\] is not one of"),
    (lambda f: edit_json(f / "config.json", layer_norm_eps="1e-12"),
     r"st/config.json: layer_norm_eps = '1e-12': expected a number, not a string \(write it without quotes\)"),
    (lambda f: edit_json(f / "config.json", num_attention_heads=5),
     r"st/config.json: hidden_size 32 is not a multiple of num_attention_heads 5"),
    (lambda f: edit_json(f / "config.json", hidden_size=48),
     r"st/model.safetensors: weights do not match .*st/config.json: embeddings.word_embeddings.weight is \[\d+, 32\], "
     r"the config makes \[\d+, 48\]"),
    (token_past_vocab, r"st/tokenizer.json: gives token ids up to 51, but .*st/config.json has vocab_size 51"),
    (added_token_past_vocab, r"st/tokenizer.json: gives token ids up to 51, but .*st/config.json has vocab_size 51"),
    (lambda f: edit_json(f / "config_sentence_transformers.json", prompts="query: "),
     r"st/config_sentence_transformers.json: prompts = 'query: ': expected an object of names to strings"),
    (lambda f: edit_json(f / "config_sentence_transformers.json", prompts=["query"]),
     r"st/config_sentence_transformers.json: prompts = \['query'\]: expected an object of names to strings"),
    (lambda f: edit_json(f / "config_sentence_transformers.json", prompts={"1": "q: "}, default_prompt_name=1),
     r"st/config_sentence_transformers.json: default_prompt_name = 1: expected a string, the name of one of its "
     r"prompts \(1\)"),
    (lambda f: ((f / "modules.json").unlink(), (f / "tokenizer_config.json").write_text("[]", encoding="utf-8")),
     r"st/tokenizer_config.json: holds an array, not a tokenizer config \(a JSON object\)"),
    (sharded_with_a_list,
     r"st/model.safetensors.index.json: weight_map = \['model-1.safetensors'\]: expected an object"),
    (pickled_weights, r"st/pytorch_model.bin: holds pickled objects beyond tensors, and xlsent loads none \(a pickle "
                      r"can run code\); convert the file to safetensors where you trust its source$"),
], ids=["modules-not-json", "unsupported-architecture", "weights-missing", "weights-corrupt", "unsupported-module",
        "no-pooling-mode", "config-value-mistyped", "config-heads-misfit", "weights-of-another-shape",
        "token-past-vocab", "added-token-past-vocab", "prompts-a-string", "prompts-a-list",
        "default-prompt-name-a-number", "tokenizer-config-a-list", "weight-map-a-list", "pickled-objects"])
def test_bad_folders_are_errors_naming_the_file(tmp_path: Path, exportable: Path, edit: object,
                                                message: str) -> None:
    folder = exported(tmp_path, exportable)
    edit(folder)  # type: ignore[operator]
    with pytest.raises(ModelDirError, match=message):
        load_encoder(folder)


def test_nan_weights_the_check_sentence_misses_are_an_error_naming_the_tensor(
        tmp_path: Path, exportable: Path, nan_row: Callable[[Path, str], None]) -> None:
    folder = exported(tmp_path, exportable)
    nan_row(folder / "model.safetensors", "embeddings.word_embeddings.weight")
    with pytest.raises(ModelDirError, match=r"st/model.safetensors: tensor embeddings.word_embeddings.weight holds "
                                            r"values that are not finite numbers: the weights are broken \(NaN or "
                                            r"infinite values\?\), so the model is not used"):
        load_encoder(folder)


def test_training_from_a_foreign_folder_is_refused(tmp_path: Path, exportable: Path) -> None:
    from xlsent.encoders.trainable import TrainableTransformer

    back = load_encoder(exported(tmp_path, exportable))
    assert isinstance(back, TransformerEncoder)
    with pytest.raises(ValueError, match="training from a sentence-transformers folder is not supported"):
        TrainableTransformer(back)


def test_a_folder_without_any_model_file_says_what_it_looked_for(tmp_path: Path) -> None:
    shutil.rmtree(tmp_path, ignore_errors=True)
    tmp_path.mkdir()
    with pytest.raises(ModelDirError, match="nor a sentence-transformers folder \\(no modules.json\\)"):
        load_encoder(tmp_path)


def test_xlsent_embed_runs_a_foreign_folder(folders: dict[str, Path], reference: dict[str, np.ndarray], home: Path,
                                            tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("".join(f"{s}\n" for s in SENTENCES), encoding="utf-8")
    out = tmp_path / "o.npy"
    assert main(["embed", str(tmp_path / "in.txt"), "-o", str(out), "--model", str(folders["labse"]),
                 "--backend", "torch", "-q"]) == 0
    assert min_cosine(np.load(out), reference["labse"]) >= 0.9999
    sidecar = json.loads(out.with_name("o.npy.json").read_text(encoding="utf-8"))
    assert sidecar["encoder"] == load_encoder(folders["labse"]).id  # type: ignore[attr-defined]


def test_xlsent_mine_and_score_run_a_foreign_folder(folders: dict[str, Path], home: Path, tmp_path: Path) -> None:
    """The mining job takes a foreign folder as any encoder: each sentence mined with itself, scored above 1."""
    (tmp_path / "a.txt").write_text("".join(f"{s}\n" for s in SENTENCES), encoding="utf-8")
    (tmp_path / "b.txt").write_text("".join(f"{s}\n" for s in reversed(SENTENCES)), encoding="utf-8")
    model = ["--model", str(folders["xlmr-mean"]), "--backend", "torch", "-k", "2", "-q"]
    assert main(["mine", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(tmp_path / "p.tsv"), *model]) == 0
    pairs = [line.split("\t") for line in (tmp_path / "p.tsv").read_text(encoding="utf-8").splitlines()]
    assert {(s, t) for _, s, t in pairs} == {(s, s) for s in SENTENCES}
    assert main(["score", str(tmp_path / "a.txt"), str(tmp_path / "a.txt"), "-o", str(tmp_path / "s.tsv"),
                 *model]) == 0
    scores = [float(line.split("\t")[0]) for line in (tmp_path / "s.tsv").read_text(encoding="utf-8").splitlines()]
    assert len(scores) == len(SENTENCES) and min(scores) > 1.0


def test_xlsent_eval_runs_a_foreign_folder(folders: dict[str, Path], home: Path, tmp_path: Path) -> None:
    """``xlsent eval`` scores a foreign folder as any encoder, its result named after the folder's encoder id."""
    data = tmp_path / "data" / "tatoeba_v1"
    data.mkdir(parents=True)
    (data / "tatoeba.deu-eng.deu").write_text("der hund bellt\na cat runs\n", encoding="utf-8")
    (data / "tatoeba.deu-eng.eng").write_text("der hund bellt\na cat runs\n", encoding="utf-8")
    assert main(["eval", "tatoeba", "--model", str(folders["bge"]), "--backend", "torch", "--langs", "deu",
                 "--data", str(tmp_path / "data"), "--out", str(tmp_path / "results"), "-q"]) == 0
    (path,) = (tmp_path / "results").glob("tatoeba__*.json")
    result = json.loads(path.read_text(encoding="utf-8"))
    assert result["encoder"].startswith(load_encoder(folders["bge"]).id)  # type: ignore[attr-defined]
    assert result["scores"]["deu"]["mean"] == pytest.approx(100.0)  # identical sentences find each other


def test_xlsent_serve_runs_a_foreign_folder(folders: dict[str, Path], reference: dict[str, np.ndarray],
                                            home: Path) -> None:
    """The service loads a foreign folder as ``xlsent serve --model DIR`` does and returns its vectors."""
    from functools import partial

    from starlette.testclient import TestClient

    from xlsent.api import load
    from xlsent.serve import create_app

    with TestClient(create_app({"labse": partial(load, str(folders["labse"]), "torch")})) as client:
        for _ in range(600):
            if client.get("/ready").status_code == 200:
                break
            time.sleep(0.05)
        response = client.post("/v1/embeddings", json={"model": "labse", "input": SENTENCES})
    assert response.status_code == 200, response.text
    got = np.array([row["embedding"] for row in response.json()["data"]], dtype=np.float32)
    assert min_cosine(got, reference["labse"]) >= 0.9999
