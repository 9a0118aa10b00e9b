"""The fine-tuned transformer of a method: checkpointed part, model directory round trip, refused directories."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from xlsent.encoders.lora import LoraEncoder
from xlsent.encoders.model_dir import ModelDirError, read_manifest, write_manifest
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.testing import toy_training_record
from xlsent.training.config import TrainConfig, build_config
from xlsent.training.finetuned import TrainedPart, load_finetuned, save_finetuned, transformer_backbone
from xlsent.training.run_folder import CHECKPOINT_DIR

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SENTS = ["the dog barks", "der hund bellt", "a cat"]


def test_trained_part_holds_only_the_trainable_parameters(tiny_encoder: TransformerEncoder) -> None:
    first, last = nn.Linear(2, 2), nn.Linear(2, 1)
    first.requires_grad_(False)
    part = TrainedPart(nn.Sequential(first, nn.LayerNorm(2), last))
    assert sorted(part.state_dict()) == ["inner.1.bias", "inner.1.weight", "inner.2.bias", "inner.2.weight"]
    frozen = first.weight.detach().clone()
    zeros = {k: torch.zeros_like(v) for k, v in part.state_dict().items()}
    part.load_state_dict(zeros)
    assert not last.weight.any() and torch.equal(first.weight, frozen)  # shared with the module; frozen untouched
    with pytest.raises(RuntimeError, match="trainable parameters differ"):
        part.load_state_dict(dict(list(zeros.items())[1:]))
    with pytest.raises(RuntimeError, match="trainable parameters differ"):
        part.load_state_dict({**zeros, "inner.0.weight": frozen})
    lora = TrainableTransformer(tiny_encoder)
    lora.apply_lora(r=2)
    keys = set(TrainedPart(lora).state_dict())
    assert keys and keys == {f"inner.{n}" for n, p in lora.named_parameters() if ".lora_" in n}


@pytest.mark.parametrize("lora", [True, False])
def test_saved_model_reloads_as_the_method_type(lora: bool, tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    model = TrainableTransformer(tiny_encoder)
    if lora:
        model.apply_lora(r=2)
    with torch.no_grad():  # move the weights the directory must carry
        for p in model.parameters():
            if p.requires_grad:
                p.add_(0.05 * torch.randn_like(p))
    model.eval()
    out = tmp_path / "m"
    (out / CHECKPOINT_DIR).mkdir(parents=True)
    (out / "train.jsonl").write_text("{}\n")
    config = TrainConfig(steps=3, seed=7)
    assert save_finetuned(out, model, "toy", config, training=toy_training_record(3)) == out
    manifest = read_manifest(out, verify="sha256")
    assert manifest["type"] == "toy" and manifest["weights"] == ("transformer-lora" if lora else "transformer")
    assert manifest["name"] == "m" and manifest["training"]["steps_done"] == 3 and manifest["metrics"] == {}
    assert manifest["fingerprint"] == config.fingerprint() and manifest["backbone"]["id"] == tiny_encoder.id
    assert build_config(TrainConfig, [(out / "config.toml").read_text()]) == config
    assert not (out / CHECKPOINT_DIR).exists() and (out / "train.jsonl").is_file() and (out / "README.md").is_file()
    enc = load_finetuned(out, "toy")
    assert isinstance(enc, LoraEncoder) == lora and isinstance(enc, TransformerEncoder)
    with torch.no_grad():
        expected = torch.nn.functional.normalize(model.embed(SENTS), dim=1).numpy()
    np.testing.assert_allclose(enc.encode(SENTS), expected, atol=1e-5)
    assert not np.allclose(enc.encode(SENTS), tiny_encoder.encode(SENTS), atol=1e-3)
    assert load_finetuned(out, "toy", name="renamed").name == "renamed"


def test_other_directories_are_refused(tiny_model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelDirError, match="type 'transformer', expected 'toy'"):
        load_finetuned(tiny_model_dir, "toy")
    odd = tmp_path / "odd"
    odd.mkdir()
    write_manifest(odd, {"type": "toy", "weights": "static"})
    with pytest.raises(ModelDirError, match="unknown fine-tuned weights 'static'"):
        load_finetuned(odd, "toy")


def test_backbone_must_be_a_transformer(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("xlsent.encoders.registry.load_encoder", lambda name: object())
    with pytest.raises(ValueError, match="the anchor must be a transformer model, not me5-small"):
        transformer_backbone("me5-small", "anchor")
    monkeypatch.undo()
    assert isinstance(transformer_backbone(str(tiny_model_dir)), TransformerEncoder)


def test_a_lora_model_moved_with_its_backbone_finds_it_and_one_without_says_where_it_looked(
        tiny_model_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    backbone = Path(shutil.copytree(tiny_model_dir, repo / "models" / "start"))
    model = TrainableTransformer(TransformerEncoder(backbone))
    model.apply_lora(r=2)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.add_(0.05 * torch.randn_like(p))
    model.eval()
    model.save(repo / "runs" / "kab", name="kab")
    assert read_manifest(repo / "runs" / "kab")["backbone"]["relative"] == "../../models/start"
    expected = LoraEncoder(repo / "runs" / "kab").encode(SENTS)
    moved = Path(shutil.move(repo, tmp_path / "clone"))  # the repository cloned or moved elsewhere
    np.testing.assert_array_equal(LoraEncoder(moved / "runs" / "kab").encode(SENTS), expected)
    shutil.rmtree(moved / "models")
    with pytest.raises(ModelDirError, match=f"its backbone {backbone} is not there, nor at ../../models/start from "
                                            "the model's folder"):
        LoraEncoder(moved / "runs" / "kab")
