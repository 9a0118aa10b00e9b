"""ABSent: its loss terms against hand-computed BCE, the architecture, the variants and the zero-shot set-up on
toy problems with known answers, resume, and the model directory (tiny backbone) with xlsent mine."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from xlsent.cli import main as cli_main
from xlsent.data.bitext import Bitext
from xlsent.encoders.registry import load_encoder
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.selection import retrieval_criterion
from xlsent.methods.absent import model as absent
from xlsent.methods.absent import study as absent_study
from xlsent.methods.absent.model import (
    METHOD,
    ABSentConfig,
    ABSentEncoder,
    Batch,
    Generator,
    Generators,
    domain_loss,
    fit,
    generator_terms,
    map_rows,
    real_loss,
)
from xlsent.methods.mapping.data import PairData, split_rows
from xlsent.methods.mapping.inputs import PairVectors, fit_input_encoder
from xlsent.studies.command import run_studies
from xlsent.studies.study import StudyRun, study_result
from xlsent.training.config import ConfigError
from xlsent.training.losses import PairDiscriminatorLoss

pytestmark = pytest.mark.usefixtures("one_torch_thread")
KilledRun = Callable[..., AbstractContextManager[None]]  # the killed_run fixture (conftest.py)

# --- the loss terms (Eqs. 1-6) ---------------------------------------------------------------------------------


class _Dot(nn.Module):
    """A stand-in discriminator with known logits: the dot product of the pair."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x * y).sum(dim=1)


def _bce(pairs: list[tuple[list[float], list[float]]], target: float) -> float:
    """Mean -[t log sigmoid(l) + (1 - t) log(1 - sigmoid(l))] over the pairs, l = x . y (by hand)."""
    out = []
    for x, y in pairs:
        p = 1 / (1 + math.exp(-sum(a * b for a, b in zip(x, y, strict=True))))
        out.append(-(target * math.log(p) + (1 - target) * math.log(1 - p)))
    return sum(out) / len(out)


def _rows(t: torch.Tensor | None) -> list[list[float]]:
    assert t is not None
    return t.tolist()


def _pairs(a: torch.Tensor | None, b: torch.Tensor | None) -> list[tuple[list[float], list[float]]]:
    return list(zip(_rows(a), _rows(b), strict=True))


def _batch() -> Batch:
    g = torch.Generator().manual_seed(0)
    t = [torch.randn(3, 2, generator=g) for _ in range(10)]
    return Batch(*t)


def test_discriminator_losses_are_the_papers_bce_terms() -> None:
    b, d = _batch(), PairDiscriminatorLoss(_Dot())
    fakes = _bce(_pairs(b.xp, b.fx), 0.0) + _bce(_pairs(b.fy, b.yp), 0.0)
    real = _bce(_pairs(b.xl, b.yl), 1.0)
    mismatch = _bce(_pairs(b.xm, b.ym), 0.0)
    assert real_loss(d, b, mismatch=True).item() == pytest.approx(real + fakes + mismatch, rel=1e-5)
    assert real_loss(d, b, mismatch=False).item() == pytest.approx(real + fakes, rel=1e-5)
    uni = Batch(b.xl, b.yl, b.xp, b.yp, b.xm, b.ym, fx=b.fx)  # uni-Sent: no G_Y, so no (G_Y(y), y) pairs
    assert real_loss(d, uni, mismatch=False).item() == pytest.approx(real + _bce(_pairs(b.xp, b.fx), 0.0), rel=1e-5)
    # D_dom: (x, G_X(x)) -> 1 and (G_Y(y), y) -> 0; the generators want the opposite
    dom = _bce(_pairs(b.xp, b.fx), 1.0) + _bce(_pairs(b.fy, b.yp), 0.0)
    assert domain_loss(d, b).item() == pytest.approx(dom, rel=1e-5)
    swapped = _bce(_pairs(b.xp, b.fx), 0.0) + _bce(_pairs(b.fy, b.yp), 1.0)
    assert domain_loss(d, b, generator=True).item() == pytest.approx(swapped, rel=1e-5)
    with pytest.raises(ValueError, match="no fy"):
        domain_loss(d, uni)


def test_generator_terms_are_adversarial_plus_cosine_distances() -> None:
    b, d = _batch(), PairDiscriminatorLoss(_Dot())
    terms = generator_terms(d, d, b)
    assert terms["adv"].item() == pytest.approx(_bce(_pairs(b.xp, b.fx), 1.0) + _bce(_pairs(b.fy, b.yp), 1.0),
                                                rel=1e-5)
    assert terms["dom"].item() == pytest.approx(domain_loss(d, b, generator=True).item())

    def cos_distance(a: torch.Tensor | None, c: torch.Tensor) -> float:  # f_d of Eq. 6, averaged
        out = [1 - float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))
               for u, v in zip(_rows(a), _rows(c), strict=True)]
        return sum(out) / len(out)

    assert terms["dist"].item() == pytest.approx(cos_distance(b.gxl, b.yl) + cos_distance(b.gyl, b.xl), rel=1e-5)
    uni = generator_terms(d, None, Batch(b.xl, b.yl, b.xp, b.yp, b.xm, b.ym, fx=b.fx, gxl=b.gxl))
    assert set(uni) == {"adv", "dist"} and uni["dist"].item() == pytest.approx(cos_distance(b.gxl, b.yl), rel=1e-5)
    assert set(generator_terms(None, None, b)) == {"dist"}  # adversarial = false: L_d alone


# --- architecture and configuration ----------------------------------------------------------------------------


def test_generators_follow_the_papers_architecture() -> None:
    layers = list(Generator(4, 3, [5, 6]))
    assert [type(m).__name__ for m in layers] == ["Linear", "BatchNorm1d", "ReLU", "Linear", "BatchNorm1d", "ReLU",
                                                   "Linear", "Tanh"]
    assert [(m.in_features, m.out_features) for m in layers if isinstance(m, nn.Linear)] == [(4, 5), (5, 6), (6, 3)]
    gens = Generators(4, 3, ["de", "es"], [8], bidirectional=True)
    assert sorted(gens.to_x) == ["de", "es"] and not list(Generators(4, 3, ["de"], [8], False).to_x)
    x = torch.randn(5, 4)
    torch.testing.assert_close(gens.map_x(x).norm(dim=1), torch.ones(5))
    assert gens.map_y(torch.randn(5, 3), "es").shape == (5, 4)


def test_modes_are_consistent_presets() -> None:
    cgan = METHOD.config(mode="conditional-gan")
    assert isinstance(cgan, ABSentConfig) and not (cgan.bidirectional or cgan.mismatch or cgan.unlabelled)
    assert METHOD.config(mode="absent", sets=["mismatch=false"]).bidirectional  # A\mis
    with pytest.raises(ConfigError, match="not bidirectional"):
        METHOD.config(mode="uni-sent", sets=["bidirectional=true"])
    with pytest.raises(ConfigError, match="neither mismatch"):
        METHOD.config(mode="conditional-gan", sets=["mismatch=true"])
    with pytest.raises(ConfigError, match="valid_pairs >= 2"):
        METHOD.config(sets=["valid_pairs=0"])


# --- training on toy problems with known answers ---------------------------------------------------------------


def _rotation_pair(n: int, seed: int, y: np.ndarray | None = None, ratio: float = 0.2, valid: int = 10,
                   lang: str = "de", marker: float = 0.0) -> PairVectors:
    """x = y Q^T for a random rotation Q: G_X must learn x -> x Q (identity retrieval is at chance). A ``marker``
    adds a 9th dimension telling the source language (languages are told apart by their vectors in real data)."""
    rng = np.random.default_rng(seed)
    if y is None:
        y = rng.normal(size=(n, 8))
        y /= np.linalg.norm(y, axis=1, keepdims=True)
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    x = y @ q.T
    if marker:
        x = np.concatenate([x, np.full((n, 1), marker)], axis=1) / np.sqrt(1 + marker**2)
    names = [str(i) for i in range(n)]
    data = PairData(Bitext(names, names, lang, "en"), *split_rows(n, ratio, valid, seed=seed))
    return PairVectors(data, x.astype(np.float32), y.astype(np.float32))


def _config(mode: str, *sets: str) -> ABSentConfig:
    cfg = METHOD.config(mode=mode, sets=["device=cpu", "batch_size=32", "gen_hidden=[64]", "disc_hidden=[64]",
                                         "valid_pairs=10", "eval_every=30", "log_every=10", "checkpoint_every=1000",
                                         *sets])
    assert isinstance(cfg, ABSentConfig)
    return cfg


@pytest.mark.parametrize(("mode", "adversarial"), [("absent", True), ("uni-sent", True), ("conditional-gan", True),
                                                  ("absent", False)])
def test_every_variant_learns_a_rotation_from_20_percent_of_the_pairs(mode: str, adversarial: bool,
                                                                      tmp_path: Path) -> None:
    pv = _rotation_pair(200, seed=0)
    cfg = _config(mode, "steps=60", "eval_every=60", f"adversarial={str(adversarial).lower()}")
    result = fit(cfg, [pv], tmp_path, progress=False)
    assert retrieval_criterion(pv.x, pv.y) < 10
    assert retrieval_criterion(map_rows(result.model, pv.x), pv.y) > 80  # all 200 pairs, 30 seen as pairs
    keys = set(result.run.history[0])
    assert ({"critic/dom", "dom"} <= keys) == (mode == "absent" and adversarial)
    assert ({"critic/real", "adv"} <= keys) == adversarial and "dist" in keys
    assert result.run.history[-1]["dist"] < result.run.history[0]["dist"] and result.best is not None


def test_pools_of_the_conditional_gan_hold_only_parallel_rows() -> None:
    pv = _rotation_pair(50, seed=1, ratio=0.4)
    for mode, pool in (("conditional-gan", pv.data.labelled), ("absent", pv.data.pool)):
        (pair,) = absent._pair_tensors(_config(mode), [pv])
        assert pair.rows[1].tolist() == pair.rows[2].tolist() == pool.tolist()
        i, j = pair.mismatch
        assert set(i) | set(j) <= set(pool.tolist()) and (i != j).all() and len(i) == len(pv.data.labelled)


def test_zero_shot_maps_two_languages_into_english_and_retrieves_between_them(tmp_path: Path) -> None:
    de = _rotation_pair(200, seed=2, marker=1.0)
    es = _rotation_pair(200, seed=3, y=de.y, lang="es", marker=-1.0)  # the same English sentences, another rotation
    result = fit(_config("absent", "steps=120", "eval_every=120", "pairs=de-en,es-en"), [de, es], tmp_path,
                 progress=False)
    assert sorted(result.model.to_x) == ["de", "es"]
    gens = result.model
    assert retrieval_criterion(de.x, es.x) < 10
    assert retrieval_criterion(map_rows(gens, de.x), map_rows(gens, es.x)) > 80  # no de-es pair was seen


def test_resume_after_a_kill_equals_the_uninterrupted_run(tmp_path: Path, killed_run: KilledRun) -> None:
    pv = _rotation_pair(60, seed=4, ratio=0.5)
    cfg = _config("absent", "steps=6", "checkpoint_every=3", "batch_size=8", "eval_every=2")
    straight = fit(cfg, [pv], tmp_path / "a", progress=False)
    with killed_run(5, "generators"):  # the 5th step dies; the last checkpoint is step 3's
        fit(cfg, [pv], tmp_path / "b", progress=False)
    resumed = fit(cfg, [pv], tmp_path / "b", resume=True, progress=False)
    for (name, a), b in zip(straight.model.state_dict().items(), resumed.model.state_dict().values(),
                            strict=True):
        assert torch.equal(a, b), name


# --- the model directory ---------------------------------------------------------------------------------------


@pytest.mark.usefixtures("xlsent_home")
def test_model_directory_round_trip_and_mining(tiny_encoder: TransformerEncoder, tiny_model_dir: Path,
                                               tmp_path: Path, toy_pair_data: Callable[..., PairData]) -> None:
    cfg = _config("absent", "steps=4", f"backbone={tiny_model_dir}", "valid_pairs=4", "eval_every=2",
                  "inputs=average")
    data = toy_pair_data(ratio=0.5, valid=4)
    out = absent.train_on(cfg, [data], tiny_encoder, tmp_path / "absent", progress=False)
    assert not (out / "checkpoints").exists() and (out / "train.jsonl").is_file()
    enc = load_encoder(out)
    assert isinstance(enc, ABSentEncoder) and enc.dim == 32
    inputs, _ = fit_input_encoder(tiny_encoder, "average", [data])
    x, y = inputs.encode(data.bitext.src), inputs.encode(data.bitext.tgt)
    reloaded = ABSentEncoder(out, backbone=tiny_encoder)
    expect = map_rows(reloaded.generators, x)
    np.testing.assert_allclose(enc.encode(data.bitext.src, "de"), expect, atol=1e-5)
    np.testing.assert_allclose(enc.encode(data.bitext.tgt, "eng"), y, atol=1e-6)
    assert not enc.encode(["", "der hund"], "de")[0].any()
    manifest = json.loads((out / "xlsent.json").read_text(encoding="utf-8"))
    assert manifest["training"]["data"]["pairs"]["de-en"]["labelled"] == 16 and manifest["type"] == "absent"
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "- data: bitext with a parallel share de-en, 40 source / 40 target sentences" in card
    assert "model selection: retrieval on 4 held-out pairs" in card

    src, tgt = tmp_path / "src.txt", tmp_path / "tgt.txt"
    src.write_text("\n".join(data.bitext.src[:10]) + "\n", encoding="utf-8")
    tgt.write_text("\n".join(data.bitext.tgt[:10]) + "\n", encoding="utf-8")
    mined = tmp_path / "mined.tsv"
    assert cli_main(["mine", str(src), str(tgt), "--model", str(out), "--src-lang", "de", "--tgt-lang", "en",
                     "-o", str(mined), "-q"]) == 0
    assert mined.is_file() and mined.read_text(encoding="utf-8").strip()


@pytest.mark.data
@pytest.mark.usefixtures("xlsent_home")
def test_cli_trains_absent_on_real_pairs(tiny_model_dir: Path, tmp_path: Path, parallel_data: Path) -> None:
    out = tmp_path / "uni"
    assert cli_main(["train", "absent", "--mode", "uni-sent", "--out", str(out), "--data", str(parallel_data), "-q",
                     "--set", f"backbone={tiny_model_dir}", "--set", "max_pairs=200", "--set", "steps=3",
                     "--set", "gen_hidden=[16]", "--set", "disc_hidden=[16]", "--set", "valid_pairs=10",
                     "--set", "eval_every=3", "--set", "corpus=long"]) == 0
    manifest = json.loads((out / "xlsent.json").read_text(encoding="utf-8"))
    assert manifest["training"]["data"]["pairs"]["de-en"]["labelled"] == 30  # 20% of 200, minus 10 held out
    assert manifest["training"]["validation"]["best"]["step"] == 3
    assert load_encoder(out).encode(["Der Hund bellt."], "de").shape == (1, 32)


# --- the study -------------------------------------------------------------------------------------------------


def _study_row(p1: float, p5: float | None = None, **columns: float) -> dict[str, float]:
    return {"mean p@1": p1, "mean p@5": p1 + 10 if p5 is None else p5, **columns}


class _Lab:
    encoder = "me5@x"

    def notes(self, run: StudyRun[absent_study.Settings]) -> list[str]:
        return []


def test_main_claims_compare_absent_with_every_linear_map(tmp_path: Path) -> None:
    linear = {label: _study_row(30 + i, **{"short de->en p@1": 30.0 + i}) for i, label in
              enumerate(absent_study.LINEAR_ROWS.values())}
    rows = {absent_study.NO_MAP: _study_row(50), **linear, "Conditional GAN (20%)": _study_row(20),
            "ABSent (20%)": _study_row(40, 30, **{"short de->en p@1": 40.0})}
    verdicts = absent_study.claims_main(rows, "mean p@1", "ABSent (20%)")
    assert [v.held for v in verdicts] == [True, False, True, False]
    assert "40.0 vs best linear map Lample et al. 2018 (Procrustes + CSLS) 33.0" in verdicts[0].evidence
    assert [v.source for v in verdicts] == ["paper", "paper", "paper", "xlsent"]
    run = StudyRun("main", absent_study.Settings(), tmp_path, "encoder", rows=rows)
    result = study_result(absent_study, run, _Lab())
    assert result.main_score == 40 and "ABSent (20%)" in result.main_metric  # the method row, not the best (50)
    assert result.variant == "main-encoder" and len(result.verdicts) == 4 and result.options["inputs"] == "encoder"


def test_ablation_ratio_and_zero_shot_claims() -> None:
    cols = {"short de->en p@1": 0.0, "long de->en p@1": 0.0}
    ab = {"U\\mis": 10, "U": 12, "A\\mis": 11, "A (ABSent)": 15, "A_s (swapped weighting)": 14,
          absent_study.LD_ONLY: 16}
    rows = {k: _study_row(v, **{c: float(v) for c in cols}) for k, v in ab.items()}
    rows["A_s (swapped weighting)"]["long de->en p@1"] = 20.0
    verdicts = absent_study.claims_ablations(rows, "mean p@1", "A (ABSent)")
    assert [v.held for v in verdicts] == [True, True, True, True, False, True, False]
    ratios = {f"{m} {p}%": _study_row(v + (5 if m == "ABSent" else 0)) for m in ("ABSent", "uni-Sent")
              for p, v in (("10", 10), ("20", 20), ("100", 15))}
    grows, beats = absent_study.claims_ratios(ratios, "mean p@1", "ABSent 20%")
    assert grows.held is False and grows.evidence == "10% 15.0, 20% 25.0, 100% 20.0 mean p@1" and beats.held
    zero = {absent_study.NO_MAP: _study_row(5), "Smith et al. 2017 (Procrustes + ISF), de-es pairs": _study_row(20),
            "Procrustes + CSLS via en (zero-shot, extension)": _study_row(30), "ABSent zero-shot (20%)": _study_row(25)}
    assert [v.held for v in absent_study.claims_zeroshot(zero, "mean p@1", "ABSent zero-shot (20%)")] == [
        True, True, False]
    low = {absent_study.NO_MAP: _study_row(30), absent_study.LINEAR_ROWS["lsq"]: _study_row(10),
           absent_study.LINEAR_ROWS["procrustes-csls"]: _study_row(20), "ABSent (100%)": _study_row(25)}
    beats_linear, beats_input = absent_study.claims_lowres(low, "mean p@1", "ABSent (100%)")
    assert beats_linear.held and "Procrustes + CSLS) 20.0" in beats_linear.evidence
    assert beats_input.held is False


@pytest.mark.data
@pytest.mark.usefixtures("xlsent_home")
def test_study_runs_end_to_end_on_a_tiny_backbone(tiny_model_dir: Path, tmp_path: Path, parallel_data: Path) -> None:
    settings = absent_study.Settings(inputs=("static",), datasets=("short de-en",), steps=2, max_pairs=60,
                                     valid_pairs=4, models_dir=tmp_path / "models", data=str(parallel_data),
                                     backbone=str(tiny_model_dir))
    (path,) = run_studies(absent_study, ["main"], settings, tmp_path / "results")
    assert path.name == "absent-main-static__tiny.json"
    main = json.loads(path.read_text(encoding="utf-8"))
    assert set(main["scores"]) == {absent_study.NO_MAP, *absent_study.LINEAR_ROWS.values(), "Conditional GAN (20%)",
                                   "ABSent (20%)"}
    assert list(main["scores"]["ABSent (20%)"])[:3] == ["mean p@1", "mean p@5", "mean p@1 csls"]
    assert {"short de->en p@1", "short en->de p@5"} <= set(main["scores"]["ABSent (20%)"])
    assert main["main_score"] == main["scores"]["ABSent (20%)"]["mean p@1"]
    assert (tmp_path / "models" / "average-short-de-en-absent-20-s2-v4-m60" / "xlsent.json").is_file()
