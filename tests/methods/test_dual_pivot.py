from __future__ import annotations

import argparse
import dataclasses
import tomllib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch

from xlsent.encoders.cache import encoder_id
from xlsent.encoders.layer_cache import LayerStates
from xlsent.encoders.model_dir import ModelDirError
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.methods import pivot_data
from xlsent.methods.dual_pivot import (
    Config,
    DualPivotEncoder,
    ExtractionModule,
    add_arguments,
    default_config,
    fit,
    load_config,
    select_negatives,
    train,
    triplet_loss,
)
from xlsent.methods.pivot_data import Bitext, Unpaired, pair_bitext, split_unpaired
from xlsent.testing import make_tiny_model_dir

# --- the triplet loss ------------------------------------------------------------------------------------------


def _loop_triplet(a: torch.Tensor, b: torch.Tensor, alpha: float, negatives: str) -> float:
    """Direct implementation of h(a, b): 'hardest' (n=1) or 'all' (n=B-1) in-batch negatives."""
    def cos(u: torch.Tensor, v: torch.Tensor) -> float:
        return float(u @ v / (u.norm() * v.norm()))

    size, total = len(a), 0.0
    for i in range(size):
        pos = cos(a[i], b[i])
        others = [j for j in range(size) if j != i]
        cost_a = [max(0.0, alpha - pos + cos(a[j], b[i])) for j in others]
        cost_b = [max(0.0, alpha - pos + cos(a[i], b[j])) for j in others]
        if negatives == "hardest":
            j_a = max(others, key=lambda j: cos(a[j], b[i]))
            j_b = max(others, key=lambda j: cos(a[i], b[j]))
            cost_a, cost_b = [max(0.0, alpha - pos + cos(a[j_a], b[i]))], [max(0.0, alpha - pos + cos(a[i], b[j_b]))]
        total += sum(cost_a) + sum(cost_b)
    return total / size


@pytest.mark.parametrize("alpha", [0.0, 0.2, 0.4])
def test_triplet_loss_matches_direct_loop(alpha: float) -> None:
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(6, 5, generator=gen), torch.randn(6, 5, generator=gen)
    b = b + 1.5 * a  # positives more similar than most negatives, some hinges active
    got_hard = triplet_loss(a, b, 1, alpha, torch.Generator().manual_seed(1)).item()
    got_all = triplet_loss(a, b, 5, alpha, torch.Generator().manual_seed(1)).item()
    assert got_hard == pytest.approx(_loop_triplet(a, b, alpha, "hardest"), abs=1e-5)
    assert got_all == pytest.approx(_loop_triplet(a, b, alpha, "all"), abs=1e-5)
    assert got_hard > 0


def test_hardest_negative_is_always_selected() -> None:
    sim = torch.randn(8, 8, generator=torch.Generator().manual_seed(3))
    hardest = sim.masked_fill(torch.eye(8, dtype=torch.bool), float("-inf")).argmax(dim=1)
    for seed in range(20):
        neg = select_negatives(sim, 3, torch.Generator().manual_seed(seed))
        assert neg.shape == (8, 3)
        assert (neg[:, 0] == hardest).all()
        assert not (neg == torch.arange(8)[:, None]).any()  # never the positive
        assert all(len(set(row.tolist())) == 3 for row in neg)  # no repeats


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


def _toy_config(mode: str, steps: int) -> Config:
    return dataclasses.replace(default_config(mode), steps=steps, batch_size=32, lr=0.05, checkpoint_every=1000)


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """Tiny tensors: threads only add contention on a shared machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_supervised_learns_the_known_answer() -> None:
    src = _toy(200, content_seed=0, noise_seed=1, lang=0)
    tgt = _toy(200, content_seed=0, noise_seed=2, lang=1)  # translations: same content, other noise
    cfg = _toy_config("supervised", 100)
    before = _accuracy(ExtractionModule(3, 16), src, tgt)
    result = fit(cfg, src, tgt, progress=False, log_every=10)
    after = _accuracy(result.module, src, tgt)
    assert result.history[-1]["sup"] < 0.5 * result.history[0]["sup"]
    assert before < 0.8 and after > 0.97
    assert result.module.mix_weights()[1] > 0.6  # the content layer wins


def test_unsupervised_removes_the_language_signal() -> None:
    src = _toy(200, content_seed=0, noise_seed=1, lang=0)
    tgt = _toy(200, content_seed=9, noise_seed=2, lang=1)  # unpaired: other contents
    cfg = _toy_config("unsupervised", 80)
    start = ExtractionModule(3, 16)
    result = fit(cfg, src, tgt, progress=False, log_every=10)
    assert _language_gap(result.module, src, tgt) < 0.4 * _language_gap(start, src, tgt)
    assert result.history[-1]["cycle"] < 0.5 * result.history[0]["cycle"]
    assert {"adv", "cycle", "disc", "loss"} <= set(result.history[0])


@pytest.mark.parametrize("mode", ["supervised", "unsupervised"])
def test_fit_resumes_to_the_same_module(mode: str, tmp_path: Path) -> None:
    src = _toy(40, content_seed=0, noise_seed=1, lang=0)
    tgt = _toy(40, content_seed=0, noise_seed=2, lang=1)
    cfg = dataclasses.replace(default_config(mode), steps=6, batch_size=8, checkpoint_every=3)
    straight = fit(cfg, src, tgt, progress=False)
    fit(dataclasses.replace(cfg, steps=3), src, tgt, checkpoint_dir=tmp_path, progress=False)  # "killed" at 3
    resumed = fit(cfg, src, tgt, checkpoint_dir=tmp_path, resume=True, progress=False)
    for a, b in zip(straight.module.parameters(), resumed.module.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)


def test_ablation_switches() -> None:
    src = _toy(40, content_seed=0, noise_seed=1, lang=0)
    tgt = _toy(40, content_seed=0, noise_seed=2, lang=1)
    base = dataclasses.replace(default_config("unsupervised"), steps=2, batch_size=8)
    cycle_only = fit(dataclasses.replace(base, adversarial=False, train_mix=False), src, tgt, progress=False)
    assert "disc" not in cycle_only.history[0] and "cycle" in cycle_only.history[0]
    torch.testing.assert_close(cycle_only.module.mix_weights(), torch.full((3,), 1 / 3))
    adv_only = fit(dataclasses.replace(base, cycle=False, train_map=False), src, tgt, progress=False)
    assert "cycle" not in adv_only.history[0]
    torch.testing.assert_close(adv_only.module.map, torch.eye(16))
    single = fit(dataclasses.replace(base, layer=1), src, tgt, progress=False)
    torch.testing.assert_close(single.module.mix_weights(), torch.tensor([0.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match="nothing to train"):
        Config(train_map=False, layer=1).check()
    with pytest.raises(ValueError, match="adversarial loss, the cycle loss"):
        Config(adversarial=False, cycle=False).check()


# --- configuration -------------------------------------------------------------------------------------------


def test_packaged_defaults_and_toml_round_trip(tmp_path: Path) -> None:
    assert default_config("unsupervised") == Config()
    sup = default_config("supervised")
    assert (sup.mode, sup.n_neg, sup.alpha) == ("supervised", 1, 0.0)
    custom = dataclasses.replace(sup, pairs=["de-fr", "ar-en"], layer=8, max_pairs=1000, steps=7)
    path = tmp_path / "c.toml"
    path.write_text(custom.to_toml())
    assert Config.from_dict(tomllib.loads(path.read_text())) == custom
    assert load_config(path) == custom
    path.write_text('alpha = 0.4\n[supervised]\nn_neg = 4\n')
    assert (load_config(path, "supervised").n_neg, load_config(path, "supervised").alpha) == (4, 0.4)
    assert load_config(path).n_neg == 2  # the [supervised] table does not apply to the unsupervised mode
    path.write_text("n_negs = 3\n")
    with pytest.raises(ValueError, match="unknown"):
        load_config(path)


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


# --- end to end on the tiny backbone ---------------------------------------------------------------------------

DE = ["der hund bellt", "der hund", "hund bellt", "der", "bellt der hund", "hund", ""]
EN = ["the dog barks", "the dog", "dog barks", "the", "barks the dog", "dog", "the cat"]


def test_train_save_reload_identical(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    cfg = dataclasses.replace(default_config("supervised"), steps=5, batch_size=4, checkpoint_every=2)
    with pytest.raises(TypeError, match="Bitext"):
        train(cfg, Unpaired(DE, EN), tiny_encoder, tmp_path / "x")
    out = train(cfg, Bitext(DE, EN, "de", "en"), tiny_encoder, tmp_path / "model", progress=False)
    assert {p.name for p in out.iterdir()} == {"xlsent.json", "module.safetensors", "config.toml"}
    assert any((tmp_path / "home" / "layers").rglob("*.npz"))  # layer states were cached

    enc = DualPivotEncoder(out)
    assert encoder_id(enc.backbone) == tiny_encoder.id and enc.manifest["training"]["data"]["src_sentences"] == 7
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
        train(cfg, Bitext(DE, EN), tiny_encoder, out)
    assert train(cfg, Bitext(DE, EN), tiny_encoder, out, resume=True) == out


def test_backbone_with_other_weights_is_refused(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    cfg = dataclasses.replace(default_config("unsupervised"), steps=2, batch_size=4)
    out = train(cfg, Unpaired(DE[:4], EN[4:]), tiny_encoder, tmp_path / "model", progress=False)
    other = TransformerEncoder(make_tiny_model_dir(tmp_path / "other", seed=1))
    with pytest.raises(ModelDirError, match="different weights"):
        DualPivotEncoder(out, backbone=other)


def test_cli_arguments() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--mode", "supervised", "--pair", "de-en", "--pair", "ar-en", "--out", "m",
                              "--steps", "10", "--resume"])
    assert args.pairs == ["de-en", "ar-en"] and args.steps == 10 and args.resume and args.config is None


def test_mix_can_start_at_the_last_layer() -> None:
    from xlsent.methods.dual_pivot import ExtractionModule

    weights = ExtractionModule(13, 8, mix_init="last").mix_weights().detach().numpy()
    assert weights[-1] > 0.9 and np.allclose(weights[:-1], weights[0])
    assert np.allclose(ExtractionModule(13, 8).mix_weights().detach().numpy(), 1 / 13)
