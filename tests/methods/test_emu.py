"""EMU: configuration, data split, Algorithm 1 on the tiny backbone, resume, selection and the model directory."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
import peft
import pytest
import torch
from safetensors.torch import load_file

from xlsent.cli import main as cli_main
from xlsent.encoders.base import l2_normalize
from xlsent.encoders.lora import LoraEncoder
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation.intent import loo_nn_accuracy
from xlsent.methods.emu import data as emu_data
from xlsent.methods.emu import model as emu
from xlsent.methods.emu.config import EmuConfig
from xlsent.methods.emu.data import EmuData, Sentences, build_data, held_out_ids
from xlsent.methods.emu.model import METHOD, fit, load_model, train_on
from xlsent.training.checkpoint import latest_checkpoint, read_tensors_json
from xlsent.training.config import ConfigError, build_config, to_toml
from xlsent.training.run_folder import CHECKPOINT_DIR

pytestmark = pytest.mark.usefixtures("one_torch_thread")
KilledRun = Callable[..., AbstractContextManager[None]]  # the killed_run fixture (conftest.py)

# --- toy data in the tiny backbone's vocabulary ----------------------------------------------------------------

EN = ["the dog barks", "a dog barks", "the dog runs", "dog barks", "the cat runs", "a cat runs", "cat runs",
      "the cat", "a b", "b a", "a b a", "b b"]
INTENTS = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
WORDS = {"the": "der", "dog": "hund", "barks": "bellt", "a": "ein", "cat": "katze", "runs": "rennt", "b": "bb"}


def de(text: str) -> str:
    return " ".join(WORDS[w] for w in text.split())


def toy_data(*, parallel: bool = False, valid: int = 0) -> EmuData:
    ids = [str(i + 1) for i in range(len(EN))]
    rows = Sentences("en", EN, ids, INTENTS)
    held = [i for i in range(len(EN)) if i % 4 == 3][:valid]
    train = rows.subset([i for i in range(len(EN)) if i not in held])
    if parallel:
        adversarial = {"de": Sentences("de", [de(t) for t in train.texts], train.ids)}
    else:
        adversarial = {"de": Sentences("de", ["der hund", "hund bellt", "der", "katze", "ein hund", "bellt"])}
    return EmuData(["dog", "cat", "ab"], {"en": train}, {"en": rows.subset(held)}, adversarial)


def config(mode: str = "emu", *sets: str) -> EmuConfig:
    cfg = METHOD.config(mode=mode, sets=["device=cpu", "steps=3", "batch_size=4", "critic_steps=2",
                                         "critic_hidden=16", "adversarial_langs=de", "log_every=1",
                                         "checkpoint_every=1000", "eval_every=0", "valid_size=0", *sets])
    assert isinstance(cfg, EmuConfig)
    return cfg


class EmbedSpy:
    """Records the sentence lists ``TrainableTransformer.embed`` sees, with whether gradients were on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[list[str], bool]] = []
        real = TrainableTransformer.embed

        def spy(model: TrainableTransformer, sentences: list[str]) -> torch.Tensor:
            self.calls.append((list(sentences), torch.is_grad_enabled()))
            return real(model, sentences)

        monkeypatch.setattr(TrainableTransformer, "embed", spy)


# --- configuration ---------------------------------------------------------------------------------------------


def test_modes_set_the_papers_variants_and_round_trip() -> None:
    emu_cfg = METHOD.config()
    assert (emu_cfg.loss, emu_cfg.alpha, emu_cfg.center_weight, emu_cfg.gamma) == ("l2-softmax", 50.0, 1e-4, 1e-4)
    assert (emu_cfg.critic_steps, emu_cfg.critic_clip, emu_cfg.critic_hidden, emu_cfg.critic_dropout,
            emu_cfg.critic_lr) == (5, 0.01, 900, 0.2, 5e-4)
    assert (emu_cfg.lr, emu_cfg.batch_size, emu_cfg.epochs, emu_cfg.train_langs) == (1e-3, 16, 3.0, ["en"])
    expected = {"emu": ("l2-softmax", True, True, "random"), "emu-no-ld": ("l2-softmax", True, False, "random"),
                "emu-no-ld-cl": ("l2-softmax", False, False, "random"),
                "emu-parallel": ("l2-softmax", True, True, "parallel"),
                "softmax": ("softmax", False, False, "random"), "contrastive": ("contrastive", False, False, "random"),
                "npair": ("npair", False, False, "random")}
    assert set(expected) == set(METHOD.modes)
    for mode, keys in expected.items():
        cfg = METHOD.config(mode=mode)
        assert (cfg.loss, cfg.center_loss, cfg.discriminator, cfg.adversarial) == keys and cfg.mode == mode
    custom = METHOD.config(mode="emu-parallel", sets=["train_langs=en,de", "encoder_lr=2e-5", "lora=false"])
    assert build_config(EmuConfig, [to_toml(custom)]) == custom


def test_inconsistent_configs_are_refused() -> None:
    with pytest.raises(ConfigError, match="loss must be one of"):
        METHOD.config(sets=["loss=hinge"])
    with pytest.raises(ConfigError, match="no random sentences here"):
        METHOD.config(sets=["adversarial_langs=de,kk"])  # kk: no Tatoeba-Challenge sentences
    assert METHOD.config(mode="emu-parallel", sets=["adversarial_langs=de,kk"]).adversarial_langs == ["de", "kk"]
    with pytest.raises(ConfigError, match="other than its own"):
        METHOD.config(sets=["train_langs=de", "adversarial_langs=de"])
    assert not METHOD.config(mode="emu-no-ld", sets=["train_langs=de", "adversarial_langs=de"]).discriminator
    with pytest.raises(ConfigError, match="selection needs"):
        METHOD.config(sets=["selection=loo", "valid_size=0"])
    with pytest.raises(ConfigError, match="xSID languages"):
        METHOD.config(sets=["train_langs=fr"])


# --- the held-out split ----------------------------------------------------------------------------------------


def test_held_out_ids_are_stratified_and_keep_every_intent() -> None:
    intents = ["w"] * 80 + ["r"] * 26 + ["a"] * 24 + ["s"] * 2 + ["m"]  # 133 utterances
    ids = [str(i) for i in range(len(intents))]
    held = held_out_ids(ids, intents, 40, seed=3)
    counts = Counter(intents[int(i)] for i in held)
    # exact shares 40 n / 133: w 24.06, r 7.82, a 7.22, s 0.60, m 0.30 -> floors 24 7 7 0 0 (38), the two
    # largest remainders among intents with room (r .82, s .60; m has a single utterance) get one more
    assert counts == Counter({"w": 24, "r": 8, "a": 7, "s": 1}) and len(held) == 40
    assert held == held_out_ids(ids, intents, 40, seed=3) and held != held_out_ids(ids, intents, 40, seed=4)
    assert held_out_ids(ids, intents, 0, seed=3) == set()
    assert len(held_out_ids(ids, intents, 200, seed=3)) == 133 - 5  # each intent keeps one utterance


# --- Algorithm 1 on the tiny backbone --------------------------------------------------------------------------


def test_emu_step_is_algorithm_1(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    spy = EmbedSpy(monkeypatch)
    cfg = config("emu", "center_weight=0.5", "gamma=2.0", "steps=2")
    result = fit(cfg, toy_data(), TrainableTransformer(tiny_encoder), tmp_path, progress=False)
    # per step: k = 2 critic updates, each embedding a training and an adversarial batch without gradients,
    # then the encoder update embedding both with gradients
    assert [grad for _, grad in spy.calls] == [False, False, False, False, True, True] * 2
    pool = set(toy_data().adversarial["de"].texts)
    for texts, _ in spy.calls:
        assert len(texts) == 4 and (set(texts) <= set(EN) or set(texts) <= pool)
    assert [set(texts) <= pool for texts, _ in spy.calls[:6]] == [False, True, False, True, False, True]
    for h in result.run.history:  # Eq. 2 and 4: L_C + ... = semantic + lambda center - gamma (D(v) - D(u))
        assert h["loss"] == pytest.approx(h["semantic"] + 0.5 * h["center"] - 2.0 * h["critic_gap"], rel=1e-5)
        assert {"critic", "u_norm"} <= set(h)
    ckpt = latest_checkpoint(tmp_path / CHECKPOINT_DIR)
    assert ckpt is not None
    tensors, _ = read_tensors_json(ckpt)
    critic = [v for k, v in tensors.items() if k.startswith("module/critic_en/")]
    assert critic and max(float(v.abs().max()) for v in critic) <= 0.01 + 1e-9  # WGAN clipping (c = 0.01)
    encoder = [k for k in tensors if k.startswith("module/encoder/")]
    assert encoder and all(".lora_" in k for k in encoder)  # checkpoints hold the adapters only


def test_parallel_adversarial_sentences_translate_the_batch(tiny_encoder: TransformerEncoder, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    spy = EmbedSpy(monkeypatch)
    fit(config("emu-parallel", "steps=2"), toy_data(parallel=True), TrainableTransformer(tiny_encoder), tmp_path,
        progress=False)
    assert len(spy.calls) == 12
    for (batch, _), (other, _) in zip(spy.calls[::2], spy.calls[1::2], strict=True):
        assert set(batch) <= set(EN) and other == [de(t) for t in batch]
    with pytest.raises(ValueError, match="ids"):
        fit(config("emu-parallel"), toy_data(), TrainableTransformer(tiny_encoder), tmp_path / "x", progress=False)


@pytest.mark.parametrize(("mode", "terms"), [
    ("emu-no-ld", {"semantic", "center"}), ("emu-no-ld-cl", {"semantic"}), ("softmax", {"semantic"}),
    ("contrastive", {"semantic"}), ("npair", {"semantic"})])
def test_ablations_and_baselines_drop_their_parts(mode: str, terms: set[str], tiny_encoder: TransformerEncoder,
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = EmbedSpy(monkeypatch)
    result = fit(config(mode, "steps=2"), toy_data(), TrainableTransformer(tiny_encoder), tmp_path, progress=False)
    assert [grad for _, grad in spy.calls] == [True, True]  # no critic, no adversarial batch
    assert set(result.run.history[0]) == terms | {"step", "loss", "u_norm"}
    total = result.run.history[0]["semantic"] + 1e-4 * result.run.history[0].get("center", 0.0)
    assert result.run.history[0]["loss"] == pytest.approx(total, rel=1e-6)
    head = {"softmax": emu.SoftmaxLoss, "contrastive": emu.ContrastiveLoss, "npair": emu.NPairLoss}.get(
        mode, emu.L2ConstrainedSoftmaxLoss)
    assert isinstance(emu.semantic_loss(result.config, 32, 3), head)


FILLERS = ["the a b the", "b b a", "a a the b", "q : b"]
CONFUSING = [f"{f} {w}" for f in FILLERS for w in ("dog", "cat")]  # nearest neighbours share the filler


def _loo(model: TrainableTransformer) -> float:
    vectors = l2_normalize(model.vectors(CONFUSING))
    ids = [str(i) for i in range(len(CONFUSING))]
    return loo_nn_accuracy(vectors, ids, [0, 1] * 4, vectors, ids, [0, 1] * 4)


def test_the_semantic_classifier_clusters_intents(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    model = TrainableTransformer(tiny_encoder)
    model.eval()
    before = _loo(model)
    data = EmuData(["dog", "cat"], {"en": Sentences("en", CONFUSING, [str(i) for i in range(8)], [0, 1] * 4)},
                   {}, {})
    cfg = config("emu-no-ld", "steps=40", "encoder_lr=0.01", "lr=0.05", "dropout=0.0")
    result = fit(cfg, data, model, tmp_path, progress=False)
    assert result.run.history[-1]["semantic"] < 0.3 * result.run.history[0]["semantic"]
    assert before <= 25 and _loo(result.model) == 100.0


@pytest.mark.parametrize("mode", ["emu", "emu-no-ld"])
def test_resume_after_a_kill_equals_the_uninterrupted_run(mode: str, tiny_encoder: TransformerEncoder,
                                                         tmp_path: Path, killed_run: KilledRun) -> None:
    cfg = config(mode, "steps=4", "checkpoint_every=2")
    straight = fit(cfg, toy_data(), TrainableTransformer(tiny_encoder), tmp_path / "a", progress=False)
    with killed_run(3):
        fit(cfg, toy_data(), TrainableTransformer(tiny_encoder), tmp_path / "b", progress=False)
    resumed = fit(cfg, toy_data(), TrainableTransformer(tiny_encoder), tmp_path / "b", resume=True, progress=False)
    assert resumed.run.history == straight.run.history
    for a, b in zip(straight.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(a, b)


def test_selection_restores_the_best_held_out_step(tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    cfg = config("emu-no-ld", "steps=12", "encoder_lr=0.01", "selection=loo", "eval_every=3", "valid_size=3")
    data = toy_data(valid=3)
    result = fit(cfg, data, TrainableTransformer(tiny_encoder), tmp_path, progress=False)
    scores = {v["step"]: v["validation"]["loo"] for v in result.run.validations}
    assert sorted(scores) == [3, 6, 9, 12] and result.best is not None
    assert result.best["score"] == max(scores.values()) and scores[result.best["step"]] == result.best["score"]
    held, pool = data.valid["en"], data.train["en"]
    q, p = l2_normalize(result.model.vectors(held.texts)), l2_normalize(result.model.vectors(pool.texts))
    again = loo_nn_accuracy(q, held.ids, held.labels, np.vstack([q, p]), held.ids + pool.ids,
                            held.labels + pool.labels)
    assert again == pytest.approx(result.best["score"])  # the restored weights are the best step's


# --- the model directory ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("lora", [True, False])
def test_train_save_reload_identical(lora: bool, tiny_encoder: TransformerEncoder, tmp_path: Path) -> None:
    import xlsent

    cfg = config("emu", f"lora={str(lora).lower()}", "encoder_lr=0.01")
    out = train_on(cfg, toy_data(), tiny_encoder, tmp_path / "model", progress=False)
    enc = xlsent.load(out)
    assert isinstance(enc, LoraEncoder) == lora and isinstance(enc, TransformerEncoder)
    files = {p.name for p in out.iterdir()}
    assert {"xlsent.json", "config.toml", "train.jsonl", "README.md"} <= files
    assert ("adapter.safetensors" in files) == lora and ("model.safetensors" in files) != lora
    manifest = json.loads((out / "xlsent.json").read_text())
    assert manifest["type"] == "emu" and manifest["weights"] == ("transformer-lora" if lora else "transformer")
    assert manifest["fingerprint"] == cfg.fingerprint() and manifest["training"]["data"]["src_sentences"] == 12
    assert build_config(EmuConfig, [(out / "config.toml").read_text()]) == cfg
    reference = TrainableTransformer(tiny_encoder)  # the trained weights, applied by hand
    if lora:
        reference.apply_lora(cfg.lora_r, cfg.lora_alpha, cfg.lora_dropout)
        peft.set_peft_model_state_dict(reference.model, load_file(str(out / "adapter.safetensors")))
    else:
        reference = TrainableTransformer(TransformerEncoder(out))
    reference.eval()
    np.testing.assert_allclose(enc.encode(EN), l2_normalize(reference.vectors(EN)), atol=1e-5)
    assert not np.allclose(enc.encode(EN), tiny_encoder.encode(EN), atol=1e-3)  # training changed the encoder
    assert load_model(out).id == enc.id and not (out / "checkpoints").exists()
    with pytest.raises(FileExistsError):
        train_on(cfg, toy_data(), tiny_encoder, out)
    assert train_on(cfg, toy_data(), tiny_encoder, out, resume=True) == out


def test_load_model_refuses_other_types(tiny_model_dir: Path) -> None:
    from xlsent.encoders.model_dir import ModelDirError

    with pytest.raises(ModelDirError, match="expected 'emu'"):
        load_model(tiny_model_dir)


# --- real data -------------------------------------------------------------------------------------------------


@pytest.mark.data
def test_build_data_from_xsid_and_tatoeba_challenge(shared_data: Path) -> None:
    from xlsent.data.xsid import load_xsid

    cfg = METHOD.config(sets=["adversarial_langs=de,zh", "unlabelled_per_lang=50", "train_langs=en,de"])
    data = build_data(cfg, shared_data)
    assert len(data.train["en"]) == 240 and len(data.valid["en"]) == 60 and len(data.intents) == 15
    assert set(data.valid["de"].ids) == set(data.valid["en"].ids)  # the same utterances held out in every language
    assert not set(data.valid["en"].ids) & set(data.train["en"].ids)
    xsid_de = set(load_xsid("de", "test", shared_data).texts) | set(load_xsid("de", "valid", shared_data).texts)
    unlabelled = data.adversarial["de"]
    assert len(unlabelled) == 50 and not unlabelled.ids and not set(unlabelled.texts) & xsid_de
    assert build_data(cfg, shared_data).adversarial["zh"] == data.adversarial["zh"]  # seeded
    parallel = build_data(METHOD.config(mode="emu-parallel", sets=["adversarial_langs=de"]), shared_data)
    assert set(parallel.adversarial["de"].ids) == set(parallel.train["en"].ids)  # translations of training items
    assert data.summary["adversarial"]["source"] == emu_data.UNLABELLED_SOURCE


@pytest.mark.data
@pytest.mark.usefixtures("xlsent_home")
def test_cli_trains_and_reloads(tiny_model_dir: Path, tmp_path: Path, shared_data: Path) -> None:
    import xlsent

    out = tmp_path / "emu"
    argv = ["train", "emu", "--out", str(out), "--set", f"backbone={tiny_model_dir}", "--set", "steps=2",
            "--set", "critic_steps=1", "--set", "critic_hidden=8", "--set", "adversarial_langs=de",
            "--set", "unlabelled_per_lang=40", "--set", "selection=loo", "--set", "eval_every=1",
            "--device", "cpu", "-q", "--data", str(shared_data)]
    assert cli_main(argv) == 0
    enc = xlsent.load(out)
    assert isinstance(enc, LoraEncoder) and enc.encode(["der hund", "the dog"]).shape == (2, 32)
    training = json.loads((out / "xlsent.json").read_text())["training"]
    assert training["validation"]["pairs"] == 60 and training["validation"]["best"]["criterion"] == "loo"
    assert cli_main([*argv, "--resume"]) == 0


# --- the study ---------------------------------------------------------------------------------------------------

STUDY_ROWS = ("original", "softmax loss", "contrastive loss", "N-pair loss", "EMU", "EMU w/o LD", "EMU w/o LD+CL",
              "EMU-PARALLEL")


def test_main_claims_read_the_declared_rows() -> None:
    from xlsent.methods.emu.study import claims_main

    rows = {"original": {"cross-lingual": 60.0, "tatoeba paper-14": 90.0},
            "softmax loss": {"cross-lingual": 40.0}, "contrastive loss": {"cross-lingual": 65.0},
            "N-pair loss": {"cross-lingual": 30.0}, "EMU": {"cross-lingual": 70.0, "tatoeba paper-14": 87.5},
            "EMU w/o LD": {"cross-lingual": 68.0}, "EMU w/o LD+CL": {"cross-lingual": 66.0},
            "EMU-PARALLEL": {"cross-lingual": 71.0}}
    verdicts = claims_main(rows, "cross-lingual", "EMU")
    held = [v.held for v in verdicts]
    # EMU beats softmax, contrastive, N-pair; beats the original; softmax / contrastive / N-pair below the original;
    # the discriminator helps; EMU-PARALLEL does not beat EMU; Tatoeba within 2 points
    assert held == [True, True, True, True, True, False, True, True, False, False]
    assert (verdicts[1].evidence, verdicts[8].evidence, verdicts[9].evidence) == ("70.0 vs 65.0", "71.0 vs 70.0",
                                                                                   "87.5 vs 90.0")
    assert verdicts[9].source == "xlsent" and {v.source for v in verdicts[:9]} == {"paper"}
    del rows["EMU"]["tatoeba paper-14"]
    assert len(claims_main(rows, "cross-lingual", "EMU")) == 9  # no Tatoeba check without its numbers


def test_ablation_contribution_and_claims() -> None:
    from xlsent.methods.emu.study import claims_ablation, contribution, table2_pairs

    scores = {"en-en": {}, "en-de": {}, "en-de-ba": {}, "de-en": {}, "de-ba-en": {}, "de-de": {}, "de-ba-de-ba": {}}
    pairs = table2_pairs(scores)
    assert pairs == ["en-en", "en-de", "en-de-ba", "de-en", "de-ba-en"]
    with_ld = {"en-en": 80.0, "en-de": 70.0, "en-de-ba": 50.0, "de-en": 60.0, "de-ba-en": 40.0}
    without = {"en-en": 80.0, "en-de": 66.0, "en-de-ba": 49.0, "de-en": 61.0, "de-ba-en": 36.0}
    c = contribution(with_ld, without, pairs)
    # differences 0, 4, 1, -1, 4: mean 1.6; en->xx (4 + 1) / 2; xx->en (-1 + 4) / 2
    assert (c["mean pp drop"], c["en-en"], c["en->xx"], c["xx->en"]) == pytest.approx((1.6, 0.0, 2.5, 1.5))
    assert (c["pairs better"], c["pairs worse"]) == (3.0, 1.0) and 0 < c["wilcoxon p"] <= 1
    assert contribution(with_ld, with_ld, pairs)["wilcoxon p"] == 1.0
    worse = dict(c, **{"mean pp drop": -0.4})
    ld, cl = claims_ablation({"language discriminator": c, "center loss": worse}, "mean pp drop", "")
    assert ld.held and "+1.60 pp" in ld.evidence and cl.held is False and "-0.40 pp" in cl.evidence
    assert "not significant at p < 0.05" in ld.evidence  # 5 pairs cannot reach it
    significant = dict(c, **{"wilcoxon p": 0.01})
    assert "not significant" not in claims_ablation({"language discriminator": significant, "center loss": c}, "",
                                                    "")[0].evidence


def test_table3_claims() -> None:
    from xlsent.methods.emu.study import claims_langs

    langs = ["en", "de", "it"]
    pairs = [f"{a}-{b}" for a in langs for b in langs]
    subsets = ["en", "de", "it", "en+de", "en+it", "de+it", "en+de+it"]

    def score(subset: str, pair: str) -> float:  # more shared languages -> higher; all three best everywhere
        return 10.0 * len(set(subset.split("+")) & set(pair.split("-"))) + len(subset.split("+"))

    rows = {s: {p: score(s, p) for p in pairs} for s in subsets}
    assert [v.held for v in claims_langs(rows, "en-en", "en")] == [True, True, True]
    rows["de"]["en-en"] = 99.0
    rows["en+de+it"] = {p: 0.0 for p in pairs}
    mono, two, every = claims_langs(rows, "en-en", "en")
    assert mono.held is False and mono.evidence == "2 of 3: de it"
    assert two.held and every.held is False and every.evidence == "0 of 9"


@pytest.mark.data
@pytest.mark.usefixtures("xlsent_home")
def test_every_study_runs_end_to_end_on_the_tiny_backbone(tiny_model_dir: Path, tmp_path: Path,
                                                          shared_data: Path) -> None:
    from xlsent.methods.emu import study
    from xlsent.studies.command import run_studies

    settings = study.Settings(langs=("de",), tatoeba="none", table3_langs=("en", "de"), tsne=False,
                             models_dir=tmp_path / "models", data=str(shared_data), backbone=str(tiny_model_dir),
                             sets=("steps=1", "critic_steps=1", "critic_hidden=8", "adversarial_langs=de",
                                   "unlabelled_per_lang=20", "device=cpu", "eval_every=0"))
    paths = run_studies(study, ["main", "ablation", "langs", "langs-acc"], settings, tmp_path / "results")
    assert [p.name for p in paths] == [f"emu-{v}__tiny.json" for v in ("main", "ablation", "langs", "langs-acc")]
    main = json.loads(paths[0].read_text())
    assert list(main["scores"]) == list(STUDY_ROWS)
    assert main["main_score"] == main["scores"][study.STUDIES["main"].method_row]["cross-lingual"]
    assert len(main["verdicts"]) == 9
    per_model = sorted(p.name for p in (tmp_path / "results").glob("intent-emu__*.json"))
    assert len(per_model) == 8 and "intent-emu__emu.json" in per_model
    intent_emu = json.loads((tmp_path / "results" / "intent-emu__emu.json").read_text())
    assert intent_emu["main_score"] == main["scores"]["EMU"]["cross-lingual"]  # the row is the task's own score
    langs = json.loads(paths[2].read_text())
    assert list(langs["scores"]) == ["en", "de", "en+de"] and set(langs["scores"]["en"]) == {
        "en-en", "en-de", "de-en", "de-de"}
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == sorted(
        ["softmax", "contrastive", "npair", "emu", "emu-no-ld", "emu-no-ld-cl", "emu-parallel", "emu-no-ld-de",
         "emu-no-ld-en+de"])
    ablation = json.loads(paths[1].read_text())
    shutil.rmtree(tmp_path / "models")
    again = run_studies(study, ["ablation"], settings, tmp_path / "results")  # from the saved intent results
    assert json.loads(again[0].read_text())["scores"] == ablation["scores"]
    assert not (tmp_path / "models").exists()  # nothing was retrained
    stale = tmp_path / "results" / "intent-emu__emu.json"
    raw = json.loads(stale.read_text())
    stale.write_text(json.dumps({**raw, "main_score": raw["main_score"] + 1}))
    run_studies(study, ["ablation"], settings, tmp_path / "results")  # no longer Table 2's results: retrained
    assert (tmp_path / "models" / "emu").is_dir()
