from __future__ import annotations

import json
import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
import pytest
import torch

import xlsent
from xlsent.cli import main as cli_main
from xlsent.data.xnli import NliSet
from xlsent.encoders.lora import LoraEncoder
from xlsent.encoders.model_dir import ModelDirError, read_manifest
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.results import TaskResult
from xlsent.evaluation.task import EmbedFn
from xlsent.methods.dueam import study as dueam_study
from xlsent.methods.dueam.config import DueamConfig
from xlsent.methods.dueam.data import (
    HeldOut,
    SentencePairs,
    build_pairs,
    heldout_pairs,
    unsupervised_pairs,
    weakly_supervised_pairs,
)
from xlsent.methods.dueam.model import (
    METHOD,
    DueamLoss,
    fit,
    load_model,
    make_learner,
    resolve_layer,
    save_model,
    train_on,
)
from xlsent.studies.command import rescore, run_studies
from xlsent.testing import make_tiny_model_dir, toy_training_record
from xlsent.training.config import ConfigError, build_config, to_toml

pytestmark = pytest.mark.usefixtures("one_torch_thread")
KilledRun = Callable[..., AbstractContextManager[None]]  # the killed_run fixture (conftest.py)


# --- the loss ------------------------------------------------------------------------------------------------


def test_loss_is_the_paper_formula() -> None:
    s = torch.tensor([[3.0, 4.0], [1.0, 0.0]])
    t = torch.tensor([[0.0, 2.0], [2.0, 0.0]])
    d_wmd = torch.tensor([0.5, 1.0])
    # raw vectors: d_euc = (sqrt(9 + 4), 1), cos = (0.8, 1)
    d_euc = [math.sqrt(13), 1.0]
    la = np.mean([math.exp(abs(math.exp(-d) - math.exp(-w))) for d, w in zip(d_euc, [0.5, 1.0], strict=True)])
    lb = (0.8 + 1.0) / 2
    loss, terms = DueamLoss(lambda_b=0.003, normalize=False)(s, t, d_wmd)
    assert loss.item() == pytest.approx(la - 0.003 * lb, rel=1e-6)
    assert terms["L_A"] == pytest.approx(la, rel=1e-6) and terms["L_B"] == pytest.approx(lb, rel=1e-6)
    assert terms["d_euc"] == pytest.approx(np.mean(d_euc), rel=1e-6) and terms["d_wmd"] == pytest.approx(0.75)
    assert DueamLoss(objective="LA", normalize=False)(s, t, d_wmd)[0].item() == pytest.approx(la, rel=1e-6)
    assert DueamLoss(objective="LB", normalize=False)(s, t, d_wmd)[0].item() == pytest.approx(-lb, rel=1e-6)
    # unit vectors: d_euc of the first pair = |(0.6, 0.8) - (0, 1)| = sqrt(0.4), the second pair coincides
    unit = [math.sqrt(0.36 + 0.04), 0.0]
    la_unit = np.mean([math.exp(abs(math.exp(-d) - math.exp(-w))) for d, w in zip(unit, [0.5, 1.0], strict=True)])
    assert DueamLoss(objective="LA")(s, t, d_wmd)[0].item() == pytest.approx(la_unit, rel=1e-6)
    with pytest.raises(ValueError, match="objective"):
        DueamLoss(objective="LC")


# --- training data ---------------------------------------------------------------------------------------------


def _nli(langs: tuple[str, ...] = ("en", "de", "fr"), items: int = 4) -> dict[str, NliSet]:
    # XNLI repeats each premise for its three hypotheses: items 0-2 share one premise
    return {x: NliSet(x, "dev", [f"p{i // 3}-{x}" for i in range(items)], [f"h{i}-{x}" for i in range(items)],
                      ["neutral"] * items) for x in langs}


def test_weakly_supervised_pairs_join_premise_and_hypothesis_of_the_same_item() -> None:
    data = weakly_supervised_pairs(_nli())
    assert len(data) == 4 * 3 * 3 and data.summary["monolingual"] == 12 and data.summary["cross_lingual"] == 24
    for (s, t), a, b in zip(data.pairs(), data.src_lang, data.tgt_lang, strict=True):
        assert s.startswith("p") and s.endswith(a) and t.startswith("h") and t.endswith(b)
    items = {(s.split("-")[0], t.split("-")[0]) for s, t in data.pairs()}
    assert items == {("p0", "h0"), ("p0", "h1"), ("p0", "h2"), ("p1", "h3")}  # never another item's hypothesis
    assert len(set(data.pairs())) == len(data)
    assert data.corpus == sorted({f"p{i}-{x}" for i in (0, 1) for x in ("en", "de", "fr")}
                                 | {f"h{i}-{x}" for i in range(4) for x in ("en", "de", "fr")})
    sample = weakly_supervised_pairs(_nli(), max_pairs=10, seed=3)
    assert len(sample) == 10 and set(sample.pairs()) <= set(data.pairs())
    assert sample.pairs() == weakly_supervised_pairs(_nli(), max_pairs=10, seed=3).pairs()
    assert sample.pairs() != weakly_supervised_pairs(_nli(), max_pairs=10, seed=4).pairs()


def test_unsupervised_pairs_are_random_sentences_of_the_pool() -> None:
    nli = _nli()
    data = unsupervised_pairs(nli, seed=0)
    pool = set(data.corpus)
    assert len(pool) == 2 * 3 + 4 * 3 and 30 <= len(data) <= 36  # default size: items x langs^2, minus self-pairs
    assert all(s in pool and t in pool and s != t for s, t in data.pairs())
    assert all(s.endswith(a) and t.endswith(b) for (s, t), a, b in
               zip(data.pairs(), data.src_lang, data.tgt_lang, strict=True))
    cross_item = sum(s.split("-")[0].lstrip("ph") != t.split("-")[0].lstrip("ph") for s, t in data.pairs())
    assert cross_item > len(data) / 2  # mostly unrelated pairs
    assert len(unsupervised_pairs(nli, n_pairs=500, seed=1)) > 450


def test_heldout_pairs_spread_over_languages_without_repeating_english(tmp_path: Path) -> None:
    folder = tmp_path / "parallel" / "ntrex128" / "NTREX-128"
    folder.mkdir(parents=True)
    (folder / "newstest2019-src.eng.txt").write_text("".join(f"en {j}\n" for j in range(30)))
    for code in ("deu", "fra"):
        (folder / f"newstest2019-ref.{code}.txt").write_text("".join(f"{code} {j}\n" for j in range(30)))
    valid = heldout_pairs(["deu", "fra"], 20, seed=0, root=tmp_path)
    assert len(valid.src) == 20 and len(set(valid.tgt)) == 20
    assert valid.langs == ["deu", "fra"] * 10
    assert all(s == f"{x} {t.split()[1]}" for s, t, x in zip(valid.src, valid.tgt, valid.langs, strict=True))
    with pytest.raises(ValueError, match="usable lines"):
        heldout_pairs(["deu"], 31, root=tmp_path)


@pytest.mark.data
def test_real_xnli_pairs(shared_data: Path) -> None:
    weak = build_pairs("weakly-supervised", ["en", "de"], root=shared_data)
    assert len(weak) == 2490 * 4 and weak.summary["monolingual"] == 2490 * 2
    unsup = build_pairs("unsupervised", ["en", "de"], max_pairs=100, root=shared_data)
    assert len(unsup) <= 100 and set(unsup.src) <= set(weak.corpus)
    with pytest.raises(ValueError, match="XNLI languages"):
        build_pairs("unsupervised", ["en", "xx"], root=shared_data)


# --- training on the tiny backbone -------------------------------------------------------------------------------

SRC = ["the dog barks", "der hund bellt", "a cat runs", "the cat", "hund", "the dog", "a b", "der hund"]
TGT = ["der hund bellt", "the dog barks", "the dog", "hund bellt", "a cat", "der hund", "the cat runs", "dog"]
DIST = np.array([0.2, 0.2, 1.4, 1.2, 1.0, 0.3, 1.5, 0.4], dtype=np.float32)


def _data() -> SentencePairs:
    return SentencePairs(SRC, TGT, ["en"] * 8, ["de"] * 8, sorted(set(SRC + TGT)))


def _config(*sets: str) -> DueamConfig:
    cfg = METHOD.config(sets=["device=cpu", "eval_every=0", "batch_size=4", "warmup_steps=0", "log_every=2",
                              "checkpoint_every=100", *sets])
    assert isinstance(cfg, DueamConfig)
    return cfg


def _gap(learner: TrainableTransformer) -> float:
    """Mean |exp(-d_euc) - exp(-d_wmd)| over the toy pairs: what L_A drives to zero."""
    learner.eval()
    s, t = (torch.from_numpy(learner.vectors(x)) for x in (SRC, TGT))
    d = torch.linalg.vector_norm(torch.nn.functional.normalize(s) - torch.nn.functional.normalize(t), dim=1)
    return float((torch.exp(-d) - torch.exp(-torch.from_numpy(DIST))).abs().mean())


def test_the_learner_fits_the_anchor_distances(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    cfg = _config("steps=15", "finetune=full", "lr=0.003", "objective=LA", "dropout=0")
    learner = make_learner(tiny_encoder, cfg)
    before = _gap(learner)
    result = fit(cfg, learner, _data(), DIST, tmp_path, progress=False)
    assert {"L_A", "L_B", "loss", "d_euc", "d_wmd"} <= set(result.run.history[0])
    assert result.run.history[-1]["L_A"] < result.run.history[0]["L_A"]
    assert _gap(result.model) < 0.2 * before


@pytest.mark.parametrize("finetune", ["lora", "full"])
def test_fit_resumes_to_the_same_learner(finetune: str, tiny_encoder: TransformerEncoder, tmp_path: Path,
                                         killed_run: KilledRun) -> None:
    cfg = _config("steps=6", "checkpoint_every=3", f"finetune={finetune}", "lr=0.01", "warmup_steps=2")
    torch.manual_seed(0)
    straight = fit(cfg, make_learner(tiny_encoder, cfg), _data(), DIST, tmp_path / "a", progress=False)
    torch.manual_seed(0)
    with killed_run(5):
        fit(cfg, make_learner(tiny_encoder, cfg), _data(), DIST, tmp_path / "b", progress=False)
    torch.manual_seed(0)
    resumed = fit(cfg, make_learner(tiny_encoder, cfg), _data(), DIST, tmp_path / "b", resume=True, progress=False)
    assert resumed.run.history == straight.run.history
    for a, b in zip(straight.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("finetune", ["lora", "full"])
def test_saved_model_reloads_with_the_learners_vectors(finetune: str, tiny_encoder: TransformerEncoder,
                                                       tmp_path: Path) -> None:
    cfg = _config("steps=4", f"finetune={finetune}", "lr=0.01")
    result = fit(cfg, make_learner(tiny_encoder, cfg), _data(), DIST, tmp_path / "m", progress=False)
    out = save_model(tmp_path / "m", result.model, cfg, tiny_encoder, toy_training_record())
    enc = xlsent.load(out)
    assert isinstance(enc, LoraEncoder) == (finetune == "lora") and isinstance(enc, TransformerEncoder)
    expected = result.model.vectors(SRC)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(enc.encode(SRC), expected, atol=2e-5)
    assert not np.allclose(enc.encode(SRC), tiny_encoder.encode(SRC), atol=1e-3)  # training changed the vectors
    manifest = read_manifest(out, verify="sha256")
    assert manifest["type"] == "dueam" and manifest["fingerprint"] == cfg.fingerprint()
    assert manifest["weights"] == ("transformer-lora" if finetune == "lora" else "transformer")
    assert build_config(DueamConfig, [(out / "config.toml").read_text()]) == cfg
    with pytest.raises(ModelDirError, match="expected 'dueam'"):
        load_model(tiny_encoder.model_dir)


def test_train_on_writes_a_model_with_its_validation(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    cfg = _config("steps=6", "eval_every=3", "valid_pairs=4")
    valid = HeldOut(["der hund bellt", "hund", "der hund", "bellt"], ["the dog barks", "dog", "the dog", "barks"],
                    ["deu"] * 4)
    out = train_on(cfg, _data(), tiny_encoder, tiny_encoder, tmp_path / "model", valid=valid, progress=False,
                   wmd_root=tmp_path / "wmd")
    assert {p.name for p in out.iterdir()} == {"xlsent.json", "adapter.safetensors", "config.toml", "train.jsonl",
                                             "README.md"}
    log = [json.loads(x) for x in (out / "train.jsonl").read_text().splitlines()]
    assert [x["step"] for x in log if "validation" in x] == [3, 6]
    assert {"L_A", "L_B"} <= set(log[0]["losses"])
    training = read_manifest(out)["training"]
    assert training["pairs"] == 8 and training["steps_done"] == 6 and training["pairs_seen"] == 24
    assert training["validation"]["best"]["criterion"] == "retrieval" and training["validation"]["pairs"] == 4
    assert training["anchor"]["settings"]["layer"] == tiny_encoder.num_layers and training["seconds"] > 0
    assert any((tmp_path / "wmd").rglob("*.npz"))
    with pytest.raises(FileExistsError):
        train_on(cfg, _data(), tiny_encoder, tiny_encoder, out)
    assert train_on(cfg, _data(), tiny_encoder, tiny_encoder, out, resume=True) == out


def test_config_defaults_and_checks(tiny_encoder: TransformerEncoder) -> None:
    short = METHOD.config([Path(dueam_study.__file__).parents[2] / "configs" / "dueam-short.toml"])
    assert isinstance(short, DueamConfig) and (short.steps, short.batch_size, short.max_pairs) == (250, 16, 2000)
    assert short.lr == METHOD.config().lr and short.valid_pairs == 300
    weak, unsup = METHOD.config(), METHOD.config(mode="unsupervised")
    assert isinstance(weak, DueamConfig) and isinstance(unsup, DueamConfig)
    assert (weak.mode, unsup.mode) == ("weakly-supervised", "unsupervised")
    assert weak.lambda_b == 0.003 and weak.batch_size == 64
    assert len(weak.langs) == 13 and weak.valid_pairs == 1000 and weak.anchor_layer == -1
    custom = METHOD.config(sets=["langs=en,de", "objective=LB", "max_pairs=0", "finetune=full"])
    assert build_config(DueamConfig, [to_toml(custom)]) == custom
    for bad, message in (("objective=LC", "objective"), ("finetune=half", "finetune"), ("solver=x", "solver"),
                         ("weighting=tf", "weighting"), ("langs=", "langs"), ("max_pairs=1", "max_pairs")):
        with pytest.raises(ConfigError, match=message):
            METHOD.config(sets=[bad])
    with pytest.raises(ValueError, match="unknown mode"):
        METHOD.config(mode="supervised")
    assert resolve_layer(tiny_encoder, -1) == 2 and resolve_layer(tiny_encoder, 0) == 0
    with pytest.raises(ValueError, match="out of range"):
        resolve_layer(tiny_encoder, 3)


@pytest.mark.data
@pytest.mark.usefixtures("xlsent_home")
@pytest.mark.parametrize("mode", ["weakly-supervised", "unsupervised"])
def test_cli_trains_both_modes_and_reloads(mode: str, tmp_path: Path, shared_data: Path) -> None:
    model = make_tiny_model_dir(tmp_path / "tiny512", max_positions=512)
    out = tmp_path / "dueam"
    argv = ["train", "dueam", "--mode", mode, "--out", str(out), "--set", f"backbone={model}", "--set",
            f"anchor={model}", "--set", "langs=en,de", "--set", "max_pairs=40", "--set", "valid_pairs=20",
            "--set", "steps=4", "--set", "eval_every=2", "--set", "batch_size=4", "--set", "warmup_steps=1",
            "--device", "cpu", "-q", "--data", str(shared_data)]
    assert cli_main(argv) == 0
    enc = xlsent.load(out)
    assert enc.encode(["der hund", "the dog"]).shape == (2, 32)
    training = read_manifest(out)["training"]
    assert training["data"]["summary"]["mode"] == mode and training["validation"]["langs"] == ["deu"]
    assert cli_main([*argv, "--resume"]) == 0


# --- the study -----------------------------------------------------------------------------------------------

M = "metric"


def test_study_claims_follow_the_paper() -> None:
    rows = {"me5 (backbone)": {M: 70.0, "bucc mean f1": 80.0}, "DuEAM unsupervised": {M: 72.0, "bucc mean f1": 85.0},
            "DuEAM weakly-supervised": {M: 75.0, "bucc mean f1": 84.0}}
    main = dueam_study.claims_main(rows, M, "DuEAM weakly-supervised")
    assert [(v.held, v.source) for v in main] == [(False, "paper"), (True, "xlsent"), (True, "xlsent")]
    assert main[0].evidence == "84.0 vs 85.0" and "improves on its backbone on metric" in main[1].claim

    objectives = {"L_A only": {M: 60.0}, "L_B only": {M: 80.0}, "both": {M: 75.0}}
    assert [v.held for v in dueam_study.claims_objectives(objectives, M, "both")] == [True, False]

    scores = (70.0, 74.0, 72.0, 65.0)
    paper_like = {f"lambda = {lam}": {M: v} for lam, v in zip(dueam_study.LAMBDAS, scores, strict=True)}
    assert all(v.held for v in dueam_study.claims_lambda(paper_like, M, "lambda = 0.003"))
    paper_like["lambda = 0.3"] = {M: 73.0}
    best, falling = dueam_study.claims_lambda(paper_like, M, "lambda = 0.003")
    assert best.held and falling.held is False and "0.3: 73.0" in falling.evidence

    close = {f"lambda = {lam}": {M: v} for lam, v in zip(dueam_study.LAMBDAS, (73.04, 73.06, 73.14, 72.96),
                                                          strict=True)}
    _, close_falling = dueam_study.claims_lambda(close, M, "lambda = 0.003")
    assert "0.003: 73.06, 0.03: 73.14" in close_falling.evidence  # one decimal printed 73.1 twice

    zero = {"me5 (backbone)": {M: 60.0, "sts es-es": 70.0, "sts ar-ar": 50.0},
            "en-de": {M: 61.0, "sts es-es": 72.0, "sts ar-ar": 50.0}}
    (verdict,) = dueam_study.claims_zero_shot(zero, M, "en-de")
    assert verdict.held and "better on 1 of 2: es-es" in verdict.evidence

    layers = {"layer 0": {M: 70.0}, "layer 1": {M: 80.0}}
    assert dueam_study.claims_anchor(layers, M, "layer 1")[0].held
    assert dueam_study.claims_anchor(layers, M, "layer 0")[0].held is False


def _fake_sts(embed: EmbedFn, *, encoder_id: str, langs: list[str] | None = None, root: str | None = None,
              progress: bool = False) -> TaskResult:
    """Stands in for STS: scores that depend on the model (cosine of two sentences) and the subset."""
    v = embed(["the dog barks", "der hund bellt"], "en")
    score = float(v[0] @ v[1]) * 100
    return TaskResult(task="sts", encoder=encoder_id, dataset="fake", main_score=score, main_metric="spearman",
                      scores={name: {"spearman": score - i} for i, name in enumerate(langs or [])})


@pytest.mark.data
@pytest.mark.usefixtures("xlsent_home")
def test_lambda_study_trains_reuses_and_refuses_stale_models(tmp_path: Path, shared_data: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dueam_study.sts, "evaluate", _fake_sts)
    model = make_tiny_model_dir(tmp_path / "tiny512", max_positions=512)
    settings = dueam_study.Settings(steps=3, ablation_steps=2, max_pairs=24, models_dir=tmp_path / "models",
                                    data=str(shared_data), sets=("eval_every=0", "batch_size=4", "langs=en,de"),
                                    backbone=str(model))
    (path,) = run_studies(dueam_study, ["lambda"], settings, tmp_path / "results")
    saved = json.loads(path.read_text())
    assert path.name == "dueam-lambda__tiny.json" and saved["options"]["method_row"] == "lambda = 0.003"
    assert list(saved["scores"]) == [f"lambda = {lam}" for lam in dueam_study.LAMBDAS]
    assert saved["main_score"] == saved["scores"]["lambda = 0.003"]["sts table-1 avg"]
    assert len(saved["verdicts"]) == 2
    models = saved["options"]["models"]
    assert models["lambda = 0.3"]["steps"] == 2 and models["lambda = 0.3"]["pairs"] == 24
    assert any("2 steps x 4 pairs over 24 pairs" in n for n in saved["notes"])
    manifest = tmp_path / "models" / "ablation-lambda-0.3" / "xlsent.json"
    stamp = manifest.stat().st_mtime_ns
    run_studies(dueam_study, ["lambda"], settings, tmp_path / "results")
    assert manifest.stat().st_mtime_ns == stamp  # finished models are reused
    longer = dueam_study.Settings(**{**vars(settings), "ablation_steps": 3})
    with pytest.raises(ValueError, match="another configuration .*steps: 2 in the model, 3 wanted"):
        run_studies(dueam_study, ["lambda"], longer, tmp_path / "results")
    assert any("2 steps per model (the Figure 2/3 ablations)" in n for n in saved["notes"])
    (again,) = rescore(dueam_study, ["lambda"], tmp_path / "results")
    rescored = json.loads(again.read_text())
    assert again == path and {k: rescored[k] for k in ("scores", "notes", "options", "main_score", "verdicts")} == {
        k: saved[k] for k in ("scores", "notes", "options", "main_score", "verdicts")}
    with pytest.raises(FileNotFoundError, match="run the study first"):
        rescore(dueam_study, ["objectives"], tmp_path / "results")


def _fake_task(task: str, metric: str, names: tuple[str, ...]) -> Callable[..., TaskResult]:
    """An evaluation task's ``evaluate`` whose scores depend on the model (via ``_fake_sts``) and the subset."""
    def evaluate(embed: EmbedFn, *, encoder_id: str, langs: list[str] | None = None, root: str | None = None,
                 progress: bool = False) -> TaskResult:
        fake = _fake_sts(embed, encoder_id=encoder_id, langs=list(langs or names))
        scores = {n: {metric: v["spearman"]} for n, v in fake.scores.items()}
        return TaskResult(task=task, encoder=encoder_id, dataset="fake", main_score=fake.main_score,
                          main_metric=metric, scores=scores, averages={"fake avg": fake.main_score})
    return evaluate


@pytest.mark.data
@pytest.mark.usefixtures("xlsent_home")
def test_main_study_records_every_task_in_the_models(tmp_path: Path, shared_data: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dueam_study.tatoeba, "evaluate", _fake_task("tatoeba", "mean", ("deu", "fra")))
    sts_names = tuple(dueam_study.STS_TABLE1.values())
    monkeypatch.setattr(dueam_study.sts, "evaluate", _fake_task("sts", "spearman", sts_names))
    monkeypatch.setattr(dueam_study.bucc, "evaluate", _fake_task("bucc", "f1", ()))
    monkeypatch.setattr(dueam_study.senteval, "evaluate", _fake_task("senteval", "accuracy", ("MR", "TREC")))
    model = make_tiny_model_dir(tmp_path / "tiny512", max_positions=512)
    settings = dueam_study.Settings(steps=2, max_pairs=16, models_dir=tmp_path / "models", data=str(shared_data),
                                    sets=("eval_every=0", "batch_size=4", "langs=en,de"), backbone=str(model))
    paths = run_studies(dueam_study, ["main"], settings, tmp_path / "results")
    assert paths[0].name == "dueam-main__tiny.json"
    tasks = ("tatoeba", "sts", "bucc", "senteval")
    assert sorted(p.name for p in paths[1:]) == sorted(f"{t}__dueam-{m}.json" for t in tasks for m in ("unsup", "weak"))
    saved = json.loads(paths[0].read_text())
    assert list(saved["scores"]) == ["tiny (backbone)", "DuEAM unsupervised", "DuEAM weakly-supervised"]
    weak = saved["scores"]["DuEAM weakly-supervised"]
    assert saved["main_score"] == weak["tatoeba 2 langs"] and {"sts table-1 avg", "bucc mean f1"} <= set(weak)
    assert len(saved["verdicts"]) == 5
    assert saved["options"]["models"]["DuEAM unsupervised"]["mode"] == "unsupervised"
    metrics = read_manifest(tmp_path / "models" / "dueam-weak")["metrics"]
    assert set(metrics) == {"tatoeba", "sts", "bucc", "senteval"}
