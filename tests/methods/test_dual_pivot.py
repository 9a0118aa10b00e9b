from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from xlsent.cli import main as cli_main
from xlsent.data import bitext as pivot_data
from xlsent.data.bitext import Bitext, Unpaired, pair_bitext, split_unpaired
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.layer_cache import LayerStates
from xlsent.encoders.model_dir import ModelDirError
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.methods.dual_pivot.config import DualPivotConfig
from xlsent.methods.dual_pivot.model import METHOD, DualPivotEncoder, ExtractionModule, fit, train_on
from xlsent.testing import make_tiny_model_dir
from xlsent.training import loop
from xlsent.training.config import ConfigError, build_config, to_toml

# --- the module ------------------------------------------------------------------------------------------------


def test_module_output_is_the_paper_formula() -> None:
    rng = np.random.default_rng(0)
    sums = rng.normal(size=(5, 4, 6)).astype(np.float32)
    module = ExtractionModule(4, 6)
    logits, weight = rng.normal(size=4), rng.normal(size=(6, 6))
    with torch.no_grad():
        module.mix_logits.copy_(torch.from_numpy(logits))
        module.map.copy_(torch.from_numpy(weight))
    w = np.exp(logits) / np.exp(logits).sum()
    expected = np.stack([weight @ sum(w[k] * sums[i, k] for k in range(4)) for i in range(5)])
    got = module(torch.from_numpy(sums)).detach().numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)

    frozen = ExtractionModule(4, 6, train_mix=False, train_map=False)
    np.testing.assert_allclose(frozen(torch.from_numpy(sums)).detach().numpy(), sums.mean(axis=1), atol=1e-5)
    assert not any(p.requires_grad for p in frozen.parameters())
    single = ExtractionModule(4, 6, layer=2)
    np.testing.assert_allclose(single(torch.from_numpy(sums)).detach().numpy(), sums[:, 2], atol=1e-6)
    assert not single.mix_logits.requires_grad and single.map.requires_grad
    with pytest.raises(ValueError, match="out of range"):
        ExtractionModule(4, 6, layer=4)


# --- training on a toy problem with a known answer ---------------------------------------------------------------


def _toy(n: int, content_seed: int, noise_seed: int, lang: int) -> LayerStates:
    """3 layers x 16 dims. Layer 1 holds the content (first 8 dims) plus a language offset; 0 and 2 are noise."""
    content = np.random.default_rng(content_seed).normal(size=(n, 8))
    offset = np.zeros(16)
    offset[8 + lang] = 4.0
    means = np.random.default_rng(noise_seed).normal(scale=1.5, size=(n, 3, 16))
    means[:, 1] = np.concatenate([content, np.zeros((n, 8))], axis=1) + offset
    return LayerStates(means.astype(np.float32), np.full(n, 3.0, np.float32))


def _accuracy(module: ExtractionModule, src: LayerStates, tgt: LayerStates) -> float:
    with torch.no_grad():
        ys = torch.nn.functional.normalize(module(torch.from_numpy(src.sums())), dim=1)
        yt = torch.nn.functional.normalize(module(torch.from_numpy(tgt.sums())), dim=1)
    return float(((ys @ yt.T).argmax(dim=1) == torch.arange(len(ys))).float().mean())


def _language_gap(module: ExtractionModule, src: LayerStates, tgt: LayerStates) -> float:
    with torch.no_grad():
        ys = torch.nn.functional.normalize(module(torch.from_numpy(src.sums())), dim=1)
        yt = torch.nn.functional.normalize(module(torch.from_numpy(tgt.sums())), dim=1)
    return float((ys.mean(0) - yt.mean(0)).norm())


def _config(mode: str, *sets: str) -> DualPivotConfig:
    cfg = METHOD.config(mode=mode, sets=["selection=none", "device=cpu", *sets])
    assert isinstance(cfg, DualPivotConfig)
    return cfg


def _toy_config(mode: str, steps: int) -> DualPivotConfig:
    return _config(mode, f"steps={steps}", "batch_size=32", "lr=0.05", "checkpoint_every=1000", "log_every=10")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_supervised_learns_the_known_answer(tmp_path: Path) -> None:
    src = _toy(200, content_seed=0, noise_seed=1, lang=0)
    tgt = _toy(200, content_seed=0, noise_seed=2, lang=1)  # translations: same content, other noise
    cfg = _toy_config("supervised", 100)
    before = _accuracy(ExtractionModule(3, 16), src, tgt)
    result = fit(cfg, src, tgt, tmp_path, progress=False)
    after = _accuracy(result.model, src, tgt)
    assert result.run.history[-1]["sup"] < 0.5 * result.run.history[0]["sup"]
    assert before < 0.8 and after > 0.97
    assert result.model.mix_weights()[1] > 0.6  # the content layer wins


def test_unsupervised_removes_the_language_signal(tmp_path: Path) -> None:
    src = _toy(200, content_seed=0, noise_seed=1, lang=0)
    tgt = _toy(200, content_seed=9, noise_seed=2, lang=1)  # unpaired: other contents
    cfg = _toy_config("unsupervised", 80)
    start = ExtractionModule(3, 16)
    result = fit(cfg, src, tgt, tmp_path, progress=False)
    assert _language_gap(result.model, src, tgt) < 0.4 * _language_gap(start, src, tgt)
    assert result.run.history[-1]["cycle"] < 0.5 * result.run.history[0]["cycle"]
    assert {"adv", "cycle", "critic/critic", "loss"} <= set(result.run.history[0])


@pytest.mark.parametrize("mode", ["supervised", "unsupervised"])
def test_fit_resumes_to_the_same_module(mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _toy(40, content_seed=0, noise_seed=1, lang=0)
    tgt = _toy(40, content_seed=0, noise_seed=2, lang=1)
    cfg = _config(mode, "steps=6", "batch_size=8", "checkpoint_every=3")
    straight = fit(cfg, src, tgt, tmp_path / "a", progress=False)
    update = loop.Trainer.update
    calls = []

    def dies_at_step_4(self: loop.Trainer, name: str, loss: torch.Tensor, **kw: bool) -> None:
        calls.append(name)
        if calls.count("module") == 5:
            raise KeyboardInterrupt
        update(self, name, loss, **kw)

    monkeypatch.setattr(loop.Trainer, "update", dies_at_step_4)
    with pytest.raises(KeyboardInterrupt):
        fit(cfg, src, tgt, tmp_path / "b", progress=False)
    monkeypatch.setattr(loop.Trainer, "update", update)
    resumed = fit(cfg, src, tgt, tmp_path / "b", resume=True, progress=False)
    for a, b in zip(straight.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(a, b)


def test_ablation_switches(tmp_path: Path) -> None:
    src = _toy(40, content_seed=0, noise_seed=1, lang=0)
    tgt = _toy(40, content_seed=0, noise_seed=2, lang=1)
    base = ("steps=2", "batch_size=8")
    cycle_only = fit(_config("unsupervised", *base, "adversarial=false", "train_mix=false"), src, tgt, tmp_path / "c",
                     progress=False)
    assert "critic/critic" not in cycle_only.run.history[0] and "cycle" in cycle_only.run.history[0]
    torch.testing.assert_close(cycle_only.model.mix_weights(), torch.full((3,), 1 / 3))
    adv_only = fit(_config("unsupervised", *base, "cycle=false", "train_map=false"), src, tgt, tmp_path / "a",
                   progress=False)
    assert "cycle" not in adv_only.run.history[0]
    torch.testing.assert_close(adv_only.model.map, torch.eye(16))
    single = fit(_config("unsupervised", *base, "layer=1"), src, tgt, tmp_path / "s", progress=False)
    torch.testing.assert_close(single.model.mix_weights(), torch.tensor([0.0, 1.0, 0.0]))
    with pytest.raises(ConfigError, match="nothing to train"):
        DualPivotConfig(train_map=False, layer=1, selection="none").check()
    with pytest.raises(ConfigError, match="adversarial loss, the cycle loss"):
        DualPivotConfig(adversarial=False, cycle=False, selection="none").check()
    with pytest.raises(ConfigError, match="selection needs"):
        DualPivotConfig(eval_every=0).check()


def test_selection_keeps_the_best_step_and_the_last_weights(tmp_path: Path) -> None:
    src = _toy(120, content_seed=0, noise_seed=1, lang=0)
    tgt = _toy(120, content_seed=0, noise_seed=2, lang=1)
    valid = (_toy(60, content_seed=5, noise_seed=3, lang=0), _toy(60, content_seed=5, noise_seed=4, lang=1))
    cfg = build_config(DualPivotConfig, [to_toml(_toy_config("supervised", 40))],
                       sets=["selection=retrieval", "eval_every=10", "valid_pairs=60"])
    result = fit(cfg, src, tgt, tmp_path, valid=valid, progress=False)
    log = [json.loads(x) for x in (tmp_path / "train.jsonl").read_text().splitlines()]
    scores = {x["step"]: x["validation"]["retrieval"] for x in log if "validation" in x}
    assert sorted(scores) == [10, 20, 30, 40] and result.best is not None
    assert result.best["score"] == max(scores.values()) and scores[result.best["step"]] == result.best["score"]
    best_acc = _accuracy(result.model, *valid)
    assert best_acc * 100 == pytest.approx(result.best["score"], abs=1e-3)  # the kept weights are the best step's


# --- configuration -------------------------------------------------------------------------------------------


def test_packaged_defaults_and_toml_round_trip() -> None:
    unsup = METHOD.config()
    assert (unsup.mode, unsup.n_neg, unsup.alpha, unsup.selection) == ("unsupervised", 2, 0.2, "csls")
    sup = METHOD.config(mode="supervised")
    assert (sup.mode, sup.n_neg, sup.alpha, sup.selection) == ("supervised", 1, 0.0, "retrieval")
    custom = METHOD.config(mode="supervised", sets=["pairs=de-fr,ar-en", "layer=8", "max_pairs=1000", "steps=7"])
    assert build_config(DualPivotConfig, [to_toml(custom)]) == custom
    assert METHOD.config(sets=["n_neg=4"]).n_neg == 4
    with pytest.raises(ConfigError, match="unknown"):
        METHOD.config(sets=["n_negs=3"])


# --- training data -------------------------------------------------------------------------------------------


def test_bitext_filters_tatoeba_v1_and_unpaired_halves_are_disjoint(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tatoeba_v1").mkdir()
    (tmp_path / "tatoeba_v1" / "tatoeba.deu-eng.deu").write_text("Test satz.\n")
    (tmp_path / "tatoeba_v1" / "tatoeba.fra-eng.eng").write_text("Test sentence.\n")
    de = [f"Satz {i}." for i in range(40)] + ["Test satz.", "X.", "Satz 1.", "Satz 1."]
    en = [f"Sentence {i}." for i in range(40)] + ["Other.", "Test sentence.", "Sentence 1.", "Alt 1."]
    monkeypatch.setattr(pivot_data, "bitext_sources", lambda a, b, root: {"fake": lambda: (de, en)})
    bi = pair_bitext("de-en", tmp_path)
    assert len(bi.src) == 41  # two v1 pairs and one duplicate dropped
    assert "Test satz." not in bi.src and "Test sentence." not in bi.tgt
    assert bi.summary["de-en"]["sources"]["fake"]["tatoeba_v1_removed"] == 2
    un = split_unpaired(bi, seed=0)
    assert isinstance(un, Unpaired) and 15 <= len(un.src) <= 25
    src_lines = {i for i, s in enumerate(bi.src) if s in set(un.src)}
    tgt_lines = {i for i, t in enumerate(bi.tgt) if t in set(un.tgt)}
    assert not src_lines & tgt_lines and len(src_lines) + len(tgt_lines) == len(bi.src)
    assert ("Satz 1." in un.src) == ("Sentence 1." not in un.tgt)  # lines sharing "Satz 1." stay together
    assert ("Satz 1." in un.src) == ("Alt 1." not in un.tgt)
    capped = pair_bitext("de-en", tmp_path, max_pairs=10, seed=1)
    assert len(capped.src) == 10 and set(capped.src) <= set(bi.src)
    for cap in (10, None, 39):  # enough lines left by the cap / no cap / too few left: set aside before the cap
        held = pair_bitext("de-en", tmp_path, max_pairs=cap, seed=1, holdout=5)
        assert held.valid is not None and len(held.valid.src) == 5
        assert not (set(held.valid.src) | set(held.valid.tgt)) & (set(held.src) | set(held.tgt))
    assert pair_bitext("de-en", tmp_path, max_pairs=10, seed=1, holdout=5).src == capped.src  # same training lines


# --- end to end on the tiny backbone ---------------------------------------------------------------------------

DE = ["der hund bellt", "der hund", "hund bellt", "der", "bellt der hund", "hund", ""]
EN = ["the dog barks", "the dog", "dog barks", "the", "barks the dog", "dog", "the cat"]


def test_train_save_reload_identical(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    cfg = _config("supervised", "steps=5", "batch_size=4", "checkpoint_every=2")
    with pytest.raises(TypeError, match="Bitext"):
        train_on(cfg, Unpaired(DE, EN), tiny_encoder, tmp_path / "x")
    out = train_on(cfg, Bitext(DE, EN, "de", "en"), tiny_encoder, tmp_path / "model", progress=False)
    assert {p.name for p in out.iterdir()} == {"xlsent.json", "module.safetensors", "config.toml", "train.jsonl",
                                             "README.md"}
    assert any((tmp_path / "home" / "layers").rglob("*.npz"))  # layer states were cached

    enc = DualPivotEncoder(out)
    assert encoder_id(enc.backbone) == tiny_encoder.id and enc.manifest["training"]["data"]["src_sentences"] == 7
    assert enc.manifest["fingerprint"] == cfg.fingerprint() and enc.config == cfg
    got = enc.encode(DE)
    sums, _ = tiny_encoder.layer_pooled(DE)
    w = torch.softmax(enc.module.mix_logits, 0).detach().numpy()
    manual = np.einsum("nld,l->nd", sums, w) @ enc.module.map.detach().numpy().T
    norms = np.linalg.norm(manual, axis=1, keepdims=True)
    manual = np.where(norms > 0, manual / np.maximum(norms, 1e-12), 0)
    np.testing.assert_allclose(got, manual, atol=1e-5)
    assert not got[-1].any()  # empty sentence -> zero row
    np.testing.assert_allclose(np.linalg.norm(got[:-1], axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(enc.encode(DE, cache=True), got, atol=2e-3)  # float16 layer cache
    np.testing.assert_array_equal(DualPivotEncoder(out, backbone=tiny_encoder).encode(DE), got)
    assert enc.id.startswith("model@")
    with pytest.raises(FileExistsError):
        train_on(cfg, Bitext(DE, EN), tiny_encoder, out)
    assert train_on(cfg, Bitext(DE, EN), tiny_encoder, out, resume=True) == out


def _layer_mix_model(tiny_encoder: TransformerEncoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A supervised model trained for 3 steps, in a home folder of the test's own."""
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    cfg = _config("supervised", "steps=3", "batch_size=4", "selection=none")
    return train_on(cfg, Bitext(DE, EN, "de", "en"), tiny_encoder, tmp_path / "model", progress=False)


@pytest.mark.parametrize("backend", ["torch", "onnx", "openvino"])
def test_backends_run_the_layer_mix(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    out = _layer_mix_model(tiny_encoder, tmp_path, monkeypatch)
    reference = DualPivotEncoder(out).encode(DE)
    enc = DualPivotEncoder(out)
    enc.use_backend(backend)
    assert enc.backend == backend and enc.id == DualPivotEncoder(out).id
    np.testing.assert_allclose(enc.encode(DE), reference, atol=1e-4)
    assert DualPivotEncoder(out).backbone._runner is None  # the shared backbone keeps running on its own


def test_the_bf16_backend_runs_the_layer_mix_within_bf16_rounding(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  bf16_atol: float) -> None:
    out = _layer_mix_model(tiny_encoder, tmp_path, monkeypatch)
    reference = DualPivotEncoder(out).encode(DE)
    enc = DualPivotEncoder(out)
    enc.use_backend("openvino-bf16")
    assert enc.id == DualPivotEncoder(out).id + "+openvino-bf16"  # bf16 matrix work changes the vectors: another id
    difference = float(np.abs(enc.encode(DE) - reference).max())
    assert 1e-6 < difference <= bf16_atol  # bf16 did run (not fp32), and moved nothing beyond its rounding


def test_backbone_with_other_weights_is_refused(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    cfg = _config("unsupervised", "steps=2", "batch_size=4")
    out = train_on(cfg, Unpaired(DE[:4], EN[4:]), tiny_encoder, tmp_path / "model", progress=False)
    other = TransformerEncoder(make_tiny_model_dir(tmp_path / "other", seed=1))
    with pytest.raises(ModelDirError, match="different weights"):
        DualPivotEncoder(out, backbone=other)


@pytest.mark.data
def test_generic_cli_trains_resumes_and_reloads(tiny_model_dir: Path, tmp_path: Path, shared_data: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import xlsent

    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    out = tmp_path / "dp"
    argv = ["train", "dual-pivot", "--mode", "supervised", "--out", str(out), "--set", f"backbone={tiny_model_dir}",
            "--set", "max_pairs=300", "--set", "valid_pairs=40", "--set", "steps=20", "--set", "eval_every=10",
            "--set", "batch_size=16", "--seed", "1", "--device", "cpu", "-q", "--data", str(shared_data)]
    assert cli_main(argv) == 0
    enc = xlsent.load(out)
    assert isinstance(enc, DualPivotEncoder) and enc.config.seed == 1 and enc.config.max_pairs == 300
    training = enc.manifest["training"]
    assert training["validation"]["pairs"] == 40 and training["validation"]["best"]["criterion"] == "retrieval"
    assert enc.encode(["der hund", "the dog"]).shape == (2, 32)
    assert cli_main([*argv, "--resume"]) == 0  # a finished model: nothing to do
    assert cli_main(argv) == 2 and "already holds a model" in capsys.readouterr().err
    assert cli_main(["train", "dual-pivot", "--out", str(tmp_path / "x"), "--set", "stepz=1"]) == 2
    assert "unknown key 'stepz'" in capsys.readouterr().err
    assert "Not evaluated yet" in (out / "README.md").read_text()
    assert cli_main(["eval", "tatoeba", "--model", str(out), "--langs", "deu", "--record", "-q", "--data",
                     str(shared_data), "--out", str(tmp_path / "results")]) == 0
    recorded = json.loads((out / "xlsent.json").read_text())["metrics"]["tatoeba"]
    saved = json.loads((tmp_path / "results" / "tatoeba__dp.json").read_text())
    assert recorded["main_score"] == pytest.approx(saved["main_score"], abs=1e-4)
    assert f"| tatoeba | {saved['main_score']:.2f} |" in (out / "README.md").read_text()
    assert DualPivotEncoder(out).id == enc.id  # recording metrics does not change the model id


def test_mix_can_start_at_the_last_layer() -> None:
    from xlsent.methods.dual_pivot.model import ExtractionModule

    weights = ExtractionModule(13, 8, mix_init="last").mix_weights().detach().numpy()
    assert weights[-1] > 0.9 and np.allclose(weights[:-1], weights[0])
    assert np.allclose(ExtractionModule(13, 8).mix_weights().detach().numpy(), 1 / 13)
