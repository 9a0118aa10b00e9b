from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import xlsent
from xlsent.encoders import transformer_model
from xlsent.encoders.lora import ADAPTER_FILE, LoraEncoder, merge_lora
from xlsent.encoders.model_dir import ModelDirError, read_manifest, write_manifest
from xlsent.encoders.registry import load_encoder
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.testing import make_tiny_model_dir

SENTS = ["the dog barks", "der hund bellt", "a cat runs", "the cat"]
IDS = torch.tensor([[0, 5, 6, 7, 2, 1], [0, 8, 9, 2, 1, 1]])
MASK = (IDS != 1).long()


def _states(model: torch.nn.Module) -> list[torch.Tensor]:
    with torch.no_grad():
        out: list[torch.Tensor] = model(IDS, MASK, all_layers=True)
    return out


def _train_steps(model: TrainableTransformer, steps: int = 3) -> None:
    """A few Adam steps that pull two translations together (any loss that moves the weights will do)."""
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(steps):
        v = torch.nn.functional.normalize(model.embed(SENTS[:2]), dim=1)
        loss = -(v[0] @ v[1])
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_eval_outputs_equal_the_model_before_dropout_existed(tiny_encoder: TransformerEncoder) -> None:
    # Values of the tiny model (seed 0) for IDS, computed with the model code before dropout was added.
    states = _states(tiny_encoder.model)
    expected = {
        0: ([-0.31713154911994934, -0.44754230976104736, 0.5205149054527283, -0.24595952033996582],
            [-0.30481117963790894, 0.5900372862815857, -0.4754045903682709, -0.9924246668815613]),
        2: ([-0.32261282205581665, -0.4541732668876648, 0.48626086115837097, -0.27401065826416016],
            [-0.2997196614742279, 0.5775480270385742, -0.4925157129764557, -1.006381630897522]),
    }
    for layer, (row0, row1) in expected.items():
        torch.testing.assert_close(states[layer][0, 1, :4], torch.tensor(row0), rtol=0, atol=1e-6)
        torch.testing.assert_close(states[layer][1, 2, :4], torch.tensor(row1), rtol=0, atol=1e-6)


def test_dropout_acts_only_in_training_mode(tiny_model_dir: Path) -> None:
    reference = TransformerEncoder(tiny_model_dir).model
    model = TransformerEncoder(tiny_model_dir).model
    model.set_dropout(0.1, 0.1)
    model.eval()
    for a, b in zip(_states(reference), _states(model), strict=True):
        assert torch.equal(a, b)
    model.train()
    assert not torch.equal(_states(model)[-1], _states(model)[-1])
    torch.manual_seed(3)
    first = _states(model)[-1]
    torch.manual_seed(3)
    assert torch.equal(first, _states(model)[-1])
    for hidden, attention in [(0.5, 0.0), (0.0, 0.5)]:  # each kind of dropout is wired in on its own
        model.set_dropout(hidden, attention)
        assert not torch.equal(_states(model)[-1], _states(reference)[-1])
    model.set_dropout(0.0, 0.0)
    assert torch.equal(_states(model)[-1], _states(reference)[-1])
    with pytest.raises(ValueError, match="not in"):
        model.set_dropout(1.0, 0.0)


def test_gradient_checkpointing_gives_the_same_gradients(tiny_encoder: TransformerEncoder,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = transformer_model.checkpoint

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(kwargs.get("use_reentrant"))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(transformer_model, "checkpoint", counting)
    grads = []
    for on in (False, True):
        model = TrainableTransformer(tiny_encoder)
        model.gradient_checkpointing = on
        model.embed(SENTS).pow(2).sum().backward()
        grads.append({n: p.grad for n, p in model.named_parameters()})
    assert calls == [False, False]  # one call per layer, only in the checkpointed run
    assert grads[0].keys() == grads[1].keys()
    for name, g in grads[0].items():
        torch.testing.assert_close(grads[1][name], g, rtol=1e-5, atol=1e-7, msg=name)
    model.eval()
    model.embed(SENTS)
    assert len(calls) == 2  # not used outside training


def test_layers_returns_the_listed_layers_and_stops_early(tiny_encoder: TransformerEncoder) -> None:
    model = tiny_encoder.model
    full = _states(model)
    with torch.no_grad():
        picked = model(IDS, MASK, layers=[2, 0, 1])
        assert [torch.equal(a, b) for a, b in zip(picked, [full[2], full[0], full[1]], strict=True)] == [True] * 3
        ran = []
        hook = model.encoder.layer[1].register_forward_hook(lambda *_: ran.append(1))
        try:
            (first,) = model(IDS, MASK, layers=[1])
        finally:
            hook.remove()
    assert torch.equal(first, full[1]) and ran == []
    for bad in ([3], [-1], []):
        with pytest.raises(ValueError, match="layers must be"):
            model(IDS, MASK, layers=bad)
    with pytest.raises(ValueError, match="not both"):
        model(IDS, MASK, all_layers=True, layers=[1])


def test_token_states_shapes_and_sums(tiny_encoder: TransformerEncoder) -> None:
    sents = ["the dog barks", "", "der hund bellt", "a"]
    sums, _ = tiny_encoder.layer_pooled(sents)
    for layer in range(tiny_encoder.num_layers + 1):
        content = tiny_encoder.token_states(sents, layer)
        full = tiny_encoder.token_states(sents, layer, specials=True, batch_tokens=1)
        for i, s in enumerate(sents):
            n_words = len(tiny_encoder.tokenizer.encode(s, add_special_tokens=False).ids) if s else 0
            assert content[i].shape == (n_words, 32) and content[i].dtype == np.float32
            # the prefix "q: " is two tokens (▁q, :), then <s> ... </s> around everything
            assert full[i].shape == ((n_words + 4) if s else 0, 32)
            np.testing.assert_allclose(full[i].sum(axis=0), sums[i, layer], atol=1e-5)
            if s:
                np.testing.assert_allclose(content[i], full[i][3:-1], atol=1e-6)
    assert tiny_encoder.token_states([], 1) == []
    with pytest.raises(ValueError, match="layer 3"):
        tiny_encoder.token_states(sents, 3)


def test_prefix_tokens_are_told_apart_from_the_sentence(tiny_encoder: TransformerEncoder) -> None:
    # the prefix's final space becomes the word-start mark of the sentence: "▁the", or a bare "▁" before "D"
    sents = ["the dog", "Der", " the", "q: x"]
    encoded = tiny_encoder.prefixed_ids(sents)
    assert [n for _, n in encoded] == [2, 2, 2, 2]
    for s, (ids, n) in zip(sents, encoded, strict=True):
        assert ids[n:] == tiny_encoder.tokenizer.encode(s, add_special_tokens=False).ids


def test_long_inputs_raise_and_name_the_row(tmp_path: Path) -> None:
    enc = TransformerEncoder(make_tiny_model_dir(tmp_path / "m", max_positions=8))
    sents = ["the dog", "the dog barks " * 10]  # ▁q : + 30 words = 32 tokens (the trailing space is stripped)
    with pytest.raises(ValueError, match="sentence 1 has 32 tokens; at most 6"):
        enc.token_states(sents, 1)
    with pytest.raises(ValueError, match="sentence 1 has 32 tokens; at most 6"):
        TrainableTransformer(enc).batch(sents)


def test_trainable_embeds_like_the_encoder_and_leaves_it_frozen(tiny_encoder: TransformerEncoder) -> None:
    before = tiny_encoder.encode(SENTS)
    model = TrainableTransformer(tiny_encoder)
    ids, mask = model.batch(SENTS)
    tid = tiny_encoder.tokenizer.token_to_id
    assert ids[3].tolist() == [0, tid("▁q"), tid(":"), tid("▁the"), tid("▁cat"), 2, 1]  # padded to the longest
    assert mask[3].tolist() == [1, 1, 1, 1, 1, 1, 0] and ids.shape == (4, 7)
    assert model.token_states(ids, mask, 1).requires_grad
    out = model(ids, mask)
    assert out.requires_grad
    np.testing.assert_allclose(torch.nn.functional.normalize(out, dim=1).detach().numpy(), before, atol=1e-5)
    _train_steps(model)
    np.testing.assert_array_equal(tiny_encoder.encode(SENTS), before)
    assert model.to("cpu").device == torch.device("cpu")


def test_full_fine_tune_saves_a_transformer_dir(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    model = TrainableTransformer(tiny_encoder)
    model.set_dropout(0.1, 0.1)
    _train_steps(model)
    model.eval()
    with torch.no_grad():
        trained = torch.nn.functional.normalize(model.embed(SENTS), dim=1).numpy()
    assert np.abs(trained - tiny_encoder.encode(SENTS)).max() > 1e-3
    out = model.save(tmp_path / "ft", name="tiny-ft", extra={"method": "test", "hyper": {"lr": 0.01}})
    enc = xlsent.load(out, backend="torch")  # auto may be OpenVINO in bf16 (AMX CPUs): not this test's question
    assert isinstance(enc, TransformerEncoder)
    np.testing.assert_allclose(enc.encode(SENTS), trained, atol=1e-5)
    manifest = read_manifest(out, verify="sha256")
    assert manifest["type"] == "transformer" and manifest["method"] == "test"
    assert manifest["encoder"] == tiny_encoder.manifest["encoder"]
    assert manifest["backbone"] == {"ref": str(tiny_encoder.model_dir.resolve()), "id": tiny_encoder.id}
    assert (out / "config.json").read_bytes() == (tiny_encoder.model_dir / "config.json").read_bytes()
    with pytest.raises(ValueError, match="reserved"):
        model.save(tmp_path / "x", name="x", extra={"type": "other"})


def test_lora_trains_only_adapters_and_reloads(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    model = TrainableTransformer(tiny_encoder)
    base = {n: p.detach().clone() for n, p in model.model.named_parameters()}
    model.apply_lora(r=4, alpha=8)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    # 6 Linear layers (query, key, value, attention output, intermediate, output) x 2 layers x (A, B)
    assert len(trainable) == 24 and all(".lora_A." in n or ".lora_B." in n for n in trainable)
    model.set_dropout(0.2, 0.3)
    dropouts = {n.rsplit(".", 1)[-1]: m.p for n, m in model.named_modules() if isinstance(m, torch.nn.Dropout)}
    assert dropouts == {"dropout": 0.2, "default": 0.1}  # the adapters' own dropout is left alone
    model.set_dropout(0.0, 0.0)
    model.eval()
    with torch.no_grad():  # B starts at zero: the adapted model starts as the backbone
        np.testing.assert_allclose(torch.nn.functional.normalize(model.embed(SENTS), dim=1).numpy(),
                                   tiny_encoder.encode(SENTS), atol=1e-6)
    model.train()
    _train_steps(model)
    model.eval()
    with torch.no_grad():
        trained = torch.nn.functional.normalize(model.embed(SENTS), dim=1).numpy()
    assert np.abs(trained - tiny_encoder.encode(SENTS)).max() > 1e-3
    for name, p in model.model.named_parameters():
        if ".lora_" not in name:
            assert torch.equal(p, base[name.replace(".base_layer", "")]), name
    out = model.save(tmp_path / "lora", name="tiny-lora", extra={"method": "test"})
    assert sorted(p.name for p in out.iterdir()) == [ADAPTER_FILE, "xlsent.json"]
    assert (out / ADAPTER_FILE).stat().st_size < (tiny_encoder.model_dir / "model.safetensors").stat().st_size / 4
    manifest = read_manifest(out)
    assert manifest["type"] == "transformer-lora" and manifest["method"] == "test"
    assert manifest["lora"] == {"r": 4, "alpha": 8, "dropout": 0.1,
                                "target_modules": ["query", "key", "value", "dense"]}
    loaded = xlsent.load(out)
    assert isinstance(loaded, LoraEncoder) and loaded.name == "tiny-lora" and loaded.id != tiny_encoder.id
    np.testing.assert_allclose(loaded.encode(SENTS), trained, atol=1e-5)
    sums, counts = loaded.layer_pooled(SENTS)
    last = sums[:, -1] / counts[:, None]
    np.testing.assert_allclose(last / np.linalg.norm(last, axis=1, keepdims=True), trained, atol=1e-5)
    assert (loaded.dim, loaded.num_layers, loaded.prefix) == (32, 2, "q: ")
    merged = TrainableTransformer(loaded).save(tmp_path / "merged", name="tiny-merged")  # a plain model dir
    assert read_manifest(merged)["backbone"] == {"ref": str(out.resolve()), "id": loaded.id}
    np.testing.assert_allclose(TransformerEncoder(merged).encode(SENTS), trained, atol=1e-5)


def test_scaled_adapters_interpolate_and_reload(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    model = TrainableTransformer(tiny_encoder)
    with pytest.raises(ValueError, match="apply_lora"):
        model.scale_adapters(0.5)
    model.apply_lora(r=4, alpha=8)
    _train_steps(model)
    model.eval()

    def vectors() -> np.ndarray:
        with torch.no_grad():
            return torch.nn.functional.normalize(model.embed(SENTS), dim=1).numpy()

    trained = vectors()
    model.scale_adapters(0.0)  # no update: the backbone
    np.testing.assert_allclose(vectors(), tiny_encoder.encode(SENTS), atol=1e-6)
    model.scale_adapters(0.5)
    half = vectors()
    assert np.abs(half - trained).max() > 1e-4 and np.abs(half - tiny_encoder.encode(SENTS)).max() > 1e-4
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        model.scale_adapters(1.5)
    out = model.save(tmp_path / "half", name="half")
    assert read_manifest(out)["lora"] | {"target_modules": []} == {"r": 4, "alpha": 4.0, "dropout": 0.1, "scale": 0.5,
                                                                   "trained_alpha": 8, "target_modules": []}
    np.testing.assert_allclose(xlsent.load(out).encode(SENTS), half, atol=1e-5)  # the scale travels with the model
    model.scale_adapters(1.0)
    np.testing.assert_allclose(vectors(), trained, atol=1e-6)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_trains_and_saves_on_gpu(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    model = TrainableTransformer(tiny_encoder).to("cuda")
    model.apply_lora(r=2, alpha=4)
    assert model.batch(SENTS)[0].device.type == "cuda"
    _train_steps(model)
    model.eval()
    with torch.no_grad():
        trained = torch.nn.functional.normalize(model.embed(SENTS), dim=1).cpu().numpy()
    np.testing.assert_allclose(LoraEncoder(model.save(tmp_path / "g", name="g")).encode(SENTS), trained, atol=1e-4)


def test_lora_dir_errors(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    model = TrainableTransformer(tiny_encoder)
    model.apply_lora(r=2, alpha=4)
    out = model.save(tmp_path / "lora", name="tiny-lora")
    manifest = read_manifest(out)
    wrong = {**manifest, "backbone": {**manifest["backbone"], "id": "tiny@0000000000000000"}}
    write_manifest(out, {k: v for k, v in wrong.items() if k not in ("files", "format_version")})
    with pytest.raises(ModelDirError, match=f"trained on backbone tiny@0000000000000000, but .* is {tiny_encoder.id}"):
        load_encoder(out)
    adapter = out / ADAPTER_FILE
    adapter.write_bytes(adapter.read_bytes()[:50])
    with pytest.raises(ModelDirError, match=f"{ADAPTER_FILE}: cannot be read"):
        LoraEncoder(out, verify="none")
    adapter.unlink()
    with pytest.raises(ModelDirError, match=f"file {ADAPTER_FILE} listed in xlsent.json is missing"):
        LoraEncoder(out)
    (out / "xlsent.json").write_text(json.dumps({"type": "transformer-lora"}))
    with pytest.raises(ModelDirError, match="needs backbone.ref"):
        LoraEncoder(out)


def test_lora_adapters_with_nan_are_an_error_naming_the_tensor(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                                               nan_row: Callable[[Path, str], None]) -> None:
    model = TrainableTransformer(tiny_encoder)
    model.apply_lora(r=2, alpha=4)
    out = model.save(tmp_path / "lora", name="tiny-lora")
    name = next(k for k in load_file(str(out / ADAPTER_FILE)) if "lora_B" in k)
    nan_row(out / ADAPTER_FILE, name)
    with pytest.raises(ModelDirError, match=f"{ADAPTER_FILE}: tensor {name} holds values that are not finite numbers"):
        LoraEncoder(out, verify="none")


def test_merge_lora_rejects_mismatched_adapters() -> None:
    state = {"l.weight": torch.zeros(3, 2)}
    a, b = torch.ones(1, 2), torch.ones(3, 1)
    with pytest.raises(ValueError, match="both lora_A and lora_B"):
        merge_lora(state, {"l.lora_A.weight": a}, r=1, alpha=1)
    with pytest.raises(ValueError, match="no such layer"):
        merge_lora(state, {"m.lora_A.weight": a, "m.lora_B.weight": b}, r=1, alpha=1)
    with pytest.raises(ValueError, match="do not fit rank 2"):
        merge_lora(state, {"l.lora_A.weight": a, "l.lora_B.weight": b}, r=2, alpha=1)
    with pytest.raises(ValueError, match="unexpected adapter tensors"):
        merge_lora(state, {"l.lora_A.default.weight": a}, r=1, alpha=1)
