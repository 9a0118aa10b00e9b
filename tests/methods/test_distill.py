"""``xlsent train distill``: the multilingual bitext builder, temperature sampling, and the LoRA student trained by
distillation, ranking or both on a tiny random transformer."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import xlsent
from xlsent.api import train
from xlsent.data.held_out import held_out_sentences
from xlsent.data.multilingual import EnglishBitext, TemperatureSampler, build_english_bitext, english_languages
from xlsent.data.sts import StsPairs
from xlsent.data.user_bitext import BitextError, BitextFile, load_user_bitext
from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.methods.distill.config import DistillConfig
from xlsent.methods.distill.model import METHOD, DevSts, held_out_scores, kept_english, stsb_spearman, train_on
from xlsent.training.config import ConfigError
from xlsent.training.method import with_user_bitext

pytestmark = pytest.mark.usefixtures("one_torch_thread", "xlsent_home")

TINY = ["steps=30", "batch_size=4", "eval_every=10", "checkpoint_every=10", "log_every=5", "device=cpu",
        "lora_r=2", "lora_alpha=4", "warmup_steps=0", "lr=0.01", "dropout=0.0", "lora_dropout=0.0", "bitext_epochs=0",
        'bitext_start=""']


def tiny_config(*sets: str) -> DistillConfig:
    cfg = METHOD.config(sets=[*TINY, *sets])
    assert isinstance(cfg, DistillConfig)
    return cfg


def toy_bitext() -> list[EnglishBitext]:
    """de-en and fr-en toy pairs (words translate one to one) with 4 held-out pairs each."""
    rng = np.random.default_rng(0)
    words = {"en": ["dog", "cat", "house", "tree", "red", "blue"], "de": ["hund", "katze", "haus", "baum", "rot",
             "blau"], "fr": ["chien", "chat", "maison", "arbre", "rouge", "bleu"]}
    rows = [rng.choice(6, size=rng.integers(2, 4)) for _ in range(40)]

    def side(lang: str, part: list[np.ndarray]) -> list[str]:
        return [" ".join(words[lang][i] for i in r) for r in part]

    return [EnglishBitext(x, side(x, rows[:36]), side("en", rows[:36]), side(x, rows[36:]), side("en", rows[36:]))
            for x in ("de", "fr")]


def losses_of(out: Path) -> list[dict[str, float]]:
    return [ln["losses"] for ln in map(json.loads, (out / "train.jsonl").read_text().splitlines()) if "losses" in ln]


def test_temperature_sampling_favours_small_languages_and_repeats() -> None:
    sampler = TemperatureSampler([9000, 1000], temperature=5.0, seed=0)
    draws = [sampler.language(d) for d in range(4000)]
    assert 0.3 < np.mean(draws) < 0.45  # 1000 ** 0.2 / (9000 ** 0.2 + 1000 ** 0.2) = 0.39, far above 0.1
    assert draws == [sampler.language(d) for d in range(4000)]
    assert np.mean([TemperatureSampler([9000, 1000], 1.0).language(d) for d in range(4000)]) < 0.15


def test_ranking_and_distillation_train_a_student_that_reloads(tmp_path: Path, tiny_model_dir: Path) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    out = train_on(tiny_config(), toy_bitext(), teacher, teacher, tmp_path / "m", progress=False)
    losses = losses_of(out)
    assert {"loss", "distill", "ranking"} <= set(losses[0])
    assert losses[-1]["ranking"] < losses[0]["ranking"]
    assert any(k.startswith("batches ") for k in losses[0])
    manifest = json.loads((out / "xlsent.json").read_text())
    assert manifest["type"] == "distill" and manifest["weights"] == "transformer-lora"
    training = manifest["training"]
    assert training["teacher"]["id"] == teacher.id and training["data"]["per_lang"]["de"]["pairs"] == 36
    assert json.loads((out / "data.json").read_text())["per_lang"]["fr"]["held_out"] == 4
    assert training["validation"]["selection"] == "selection" and training["validation"]["best"] is not None
    student = xlsent.load(out)
    assert isinstance(student, TransformerEncoder) and student.dim == teacher.dim
    assert not np.allclose(student.encode(["hund katze"]), teacher.encode(["hund katze"]))
    adapters = [f for f in out.iterdir() if f.suffix == ".safetensors"]
    assert adapters and sum(f.stat().st_size for f in adapters) < 1e6  # adapter-sized
    assert all("lora" in k for f in adapters for k in load_file(f))


def counting_encodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sentences every ``TransformerEncoder.encode`` call gets from now on."""
    encoded: list[str] = []
    real = TransformerEncoder.encode

    def counting(self: TransformerEncoder, sentences: list[str], *args: object, **kwargs: object) -> np.ndarray:
        encoded.extend(sentences)
        return real(self, sentences, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(TransformerEncoder, "encode", counting)
    return encoded


def test_the_teacher_encodes_only_the_english_sides_the_run_trains_on_each_once(
        tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    encoded = counting_encodes(monkeypatch)
    out = train_on(tiny_config("steps=3", "eval_every=0", "loss=distill", "languages_per_batch=2"), toy_bitext(),
                   teacher, teacher, tmp_path / "a", progress=False)
    training = json.loads((out / "xlsent.json").read_text())["training"]
    assert 0 < len(encoded) == training["teacher_sentences_encoded"] <= 3 * 4  # 3 steps of 4 pairs
    english = {s for b in toy_bitext() for s in b.en}
    assert set(encoded) <= english and len(set(encoded)) <= len(encoded)
    encoded.clear()
    out = train_on(tiny_config("steps=2", "eval_every=0", "loss=ranking", "relation_weight=0"), toy_bitext(), teacher,
                   teacher, tmp_path / "c", progress=False)  # ranking alone needs no teacher vectors
    assert "distill" not in losses_of(out)[0] and not encoded


def test_character_noise_edits_the_x_sides_alone_and_the_same_way_in_every_run(
        tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    embedded: list[list[str]] = []
    real = TrainableTransformer.embed

    def recording(self: TrainableTransformer, sentences: list[str], *args: object) -> torch.Tensor:
        embedded.append(list(sentences))
        return real(self, sentences, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(TrainableTransformer, "embed", recording)
    runs = []
    for name in ("a", "b"):
        embedded.clear()
        train_on(tiny_config("steps=3", "eval_every=0", "char_noise=1.0"), toy_bitext(), teacher, teacher,
                 tmp_path / name, progress=False)
        runs.append([list(batch) for batch in embedded])
    clean_x = {s for b in toy_bitext() for s in b.xx}
    english = {s for b in toy_bitext() for s in b.en}
    for batch in runs[0]:
        x, en = batch[:4], batch[4:8]
        assert set(en) <= english  # the English sides as they are
        assert not set(x) & clean_x  # every x side has a word edited (share 1)
    assert runs[0] == runs[1]  # seeded by the run's seed and the step


def test_char_noise_must_be_a_share() -> None:
    with pytest.raises(ConfigError, match="char_noise must be in"):
        tiny_config("char_noise=1.5")
    assert "char_noise" not in DistillConfig().fingerprinted()  # students trained before it keep their fingerprint


def test_resume_after_a_kill_equals_the_uninterrupted_run(tmp_path: Path, tiny_model_dir: Path,
                                                           killed_run: Callable[..., AbstractContextManager[None]]
                                                           ) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    cfg = tiny_config("steps=12", "eval_every=0")
    whole = train_on(cfg, toy_bitext(), teacher, teacher, tmp_path / "whole", progress=False)
    with killed_run(7):
        train_on(cfg, toy_bitext(), teacher, teacher, tmp_path / "part", progress=False)
    resumed = train_on(cfg, toy_bitext(), teacher, teacher, tmp_path / "part", resume=True, progress=False)
    a = xlsent.load(whole).encode(["hund katze", "chat rouge"])
    b = xlsent.load(resumed).encode(["hund katze", "chat rouge"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_config_checks() -> None:
    with pytest.raises(ConfigError, match="loss must be one of"):
        tiny_config("loss=translate")
    with pytest.raises(ConfigError, match="temperature must be > 0"):
        tiny_config("temperature=0")
    with pytest.raises(ConfigError, match="batch_size must be >= 2"):
        tiny_config("batch_size=1")


@pytest.mark.data
def test_the_bitext_covers_every_language_with_english_and_no_test_sentence(parallel_data: Path) -> None:
    langs = english_languages(parallel_data)
    assert {"de", "kk", "zh", "zho_Hant", "srp-Latn"} <= set(langs) and "en" not in langs
    bitext = build_english_bitext(parallel_data, languages=["de", "kk", "sw"], max_pairs=500, valid_pairs=20)
    banned = held_out_sentences(parallel_data)
    for b in bitext:
        assert len(b.valid_xx) == 20 and 0 < len(b.xx) <= 500
        assert not (set(b.xx) | set(b.en)) & banned
        assert not (set(b.valid_xx) | set(b.valid_en)) & (set(b.xx) | set(b.en))  # held-out pairs share nothing
        assert len(set(zip(b.xx, b.en, strict=True))) == len(b.xx)
    again = build_english_bitext(parallel_data, languages=["de", "kk", "sw"], max_pairs=500, valid_pairs=20)
    assert [(b.xx, b.valid_en) for b in again] == [(b.xx, b.valid_en) for b in bitext]
    assert bitext[1].lang == "kk" and bitext[1].sources["ntrex128"]["kept"] > 0  # NTREX's kk-en pairs are used


def test_micro_batches_give_the_same_vectors_and_gradients(tiny_model_dir: Path) -> None:


    learner = TrainableTransformer(tiny_model_dir)
    learner.set_dropout(0.0, 0.0)
    sentences = ["a", "the dog barks at the red cat in the house", "a cat", "dogs and trees", "blue"]
    grads = []
    for micro in (0, 2):
        learner.zero_grad()
        emb = learner.embed(sentences, micro)
        (emb * torch.arange(emb.numel(), dtype=emb.dtype).reshape(emb.shape)).sum().backward()
        grads.append((emb.detach(), [p.grad.clone() for p in learner.parameters() if p.grad is not None]))
    torch.testing.assert_close(grads[0][0], grads[1][0], atol=1e-5, rtol=1e-4)
    assert len(grads[0][1]) == len(grads[1][1]) > 0
    for a, b in zip(grads[0][1], grads[1][1], strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-3)


def test_micro_batch_must_not_be_negative() -> None:
    with pytest.raises(ConfigError, match="micro_batch must be >= 0"):
        tiny_config("micro_batch=-1")


def test_an_over_long_sentence_in_a_micro_batch_is_named_by_its_input_position(tiny_model_dir: Path) -> None:


    learner = TrainableTransformer(tiny_model_dir)
    with pytest.raises(ValueError, match="sentence 1 has"):
        learner.embed(["a b", "word " * 500, "c"], micro_batch=1)


def toy_sts() -> StsPairs:
    return StsPairs(name="toy", lang1="en", lang2="en", sent1=["dog cat", "house", "red tree", "dog"],
                    sent2=["cat dog", "tree", "red house", "house dog"], scores=[5.0, 0.0, 2.0, 3.0])


def test_validation_keeps_english_stsb_dev_and_pools_the_languages(tmp_path: Path, tiny_model_dir: Path) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    out = train_on(tiny_config(), toy_bitext(), teacher, teacher, tmp_path / "m", progress=False, stsb_dev=toy_sts())
    validation = json.loads((out / "xlsent.json").read_text())["training"]["validation"]
    learner = TrainableTransformer(teacher)
    assert validation["stsb_dev_backbone"] == pytest.approx(stsb_spearman(learner, toy_sts()))
    assert {"retrieval", "pooled retrieval", "stsb-en dev", "stsb-en dev change", "selection"} <= set(
        validation["last"])
    assert validation["stsb_dev_held"] == (validation["stsb_dev_change_kept"] >= -0.5)
    assert "- English STS-B dev at the kept step:" in (out / "README.md").read_text()
    bitext = toy_bitext()
    kept = held_out_scores(learner, bitext, DevSts(toy_sts(), -100.0), tolerance=0.5)
    assert kept["selection"] == kept["pooled retrieval"]  # nothing lost against the backbone: no penalty
    lost = held_out_scores(learner, bitext, DevSts(toy_sts(), kept["stsb-en dev"] + 2.0), tolerance=0.5)
    assert lost["selection"] == pytest.approx(kept["pooled retrieval"] - 150.0)  # 2 points lost, 1.5 beyond 0.5
    assert held_out_scores(learner, bitext, None, tolerance=0.5)["selection"] == kept["pooled retrieval"]


def test_a_kept_step_beyond_the_english_tolerance_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    from xlsent.training.loop import TrainResult

    run = TrainResult([], 0, 300, 1.0, None, [{"step": s, "validation": {"stsb-en dev change": c}}
                                              for s, c in ((100, -1.58), (200, -2.4), (300, -0.4))])
    with caplog.at_level("WARNING"):
        assert kept_english(run, {"step": 300}, 0.5)["stsb_dev_held"]
        assert not caplog.records
        assert kept_english(run, {"step": 100}, 0.5) == {"stsb_dev_change_kept": -1.58, "stsb_dev_tolerance": 0.5,
                                                          "stsb_dev_held": False}
    assert "the kept step 100 lost 1.58 points" in caplog.text
    assert kept_english(run, None, 0.5) == {}


def test_scaled_adapters_are_tried_where_english_is_lost_and_the_kept_scale_is_saved(
        tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from xlsent.methods.distill import model as distill_model

    seen: list[float] = []

    def english(learner: TrainableTransformer, pairs: StsPairs) -> float:
        """STS-B dev falls with the scale: 2 points lost at 1, 1 at 0.75, none at 0.5 (80: the backbone)."""
        if learner.lora is None:
            return 80.0
        seen.append(learner.adapter_scale)
        return 80.0 - 4.0 * max(0.0, learner.adapter_scale - 0.5)

    monkeypatch.setattr(distill_model, "stsb_spearman", english)
    learner = TrainableTransformer(TransformerEncoder(tiny_model_dir))
    learner.apply_lora(r=2, alpha=4)
    dev = DevSts(toy_sts(), 80.0)
    scores = held_out_scores(learner, toy_bitext(), dev, 0.5, scales=(0.25, 1.0, 0.5, 0.75))
    assert seen == [1.0, 0.75, 0.5] and learner.adapter_scale == 1.0  # largest first, stops where English holds
    assert scores["adapter scale"] == 0.5 and scores["stsb-en dev change"] == 0.0
    assert scores["selection"] == scores["pooled retrieval"]
    assert held_out_scores(learner, toy_bitext(), dev, 0.5, scales=(1.0, 0.75))["adapter scale"] == 0.75  # smallest
    seen.clear()
    assert "adapter scale" not in held_out_scores(learner, toy_bitext(), dev, 0.5) and seen == [1.0]  # one scale

    teacher = TransformerEncoder(tiny_model_dir)
    out = train_on(tiny_config("adapter_scales=[1.0, 0.5]"), toy_bitext(), teacher, teacher, tmp_path / "m",
                   progress=False, stsb_dev=toy_sts())
    manifest = json.loads((out / "xlsent.json").read_text())
    assert manifest["training"]["validation"]["adapter_scale"] == 0.5
    assert manifest["lora"]["scale"] == 0.5 and manifest["lora"]["alpha"] == manifest["lora"]["trained_alpha"] / 2
    with pytest.raises(ValueError, match="adapter_scales must hold 1"):
        tiny_config("adapter_scales=[0.5]").check()


def toy_user_file(path: Path, n: int = 120) -> Path:
    """A toy new language "qx" (the toy words spelt backwards) with English, one pair a line."""
    rng = np.random.default_rng(1)
    en = ["dog", "cat", "house", "tree", "red", "blue"]
    rows = [rng.choice(6, size=rng.integers(2, 5)) for _ in range(n)]
    path.write_text("".join(" ".join(en[i][::-1] for i in r) + "\t" + " ".join(en[i] for i in r) + f" {k}\n"
                            for k, r in enumerate(rows)), encoding="utf-8")
    return path


def test_user_bitext_takes_its_share_of_batches_is_validated_and_recorded(tmp_path: Path,
                                                                          tiny_model_dir: Path) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    user = load_user_bitext([BitextFile("qx", str(toy_user_file(tmp_path / "qx.tsv")))], hold_out=True, seed=0)
    out = train_on(tiny_config("steps=24", "eval_every=12"), toy_bitext(), teacher, teacher, tmp_path / "m",
                   progress=False, user=user)
    batches = [k for ln in losses_of(out) for k in ln if k.startswith("batches ")]
    assert 0.3 < batches.count("batches qx") / len(batches) < 0.7  # half the draws, not a third
    training = json.loads((out / "xlsent.json").read_text())["training"]
    assert training["user_bitext"][0]["held_out"] == 50 and training["user_bitext"][0]["lang"] == "qx"
    last = training["validation"]["last"]
    assert {"user retrieval", "pooled retrieval", "retrieval/qx"} <= set(last)
    assert last["selection"] == pytest.approx((last["user retrieval"] + last["pooled retrieval"]) / 2)
    assert json.loads((out / "data.json").read_text())["user_bitext"] == training["user_bitext"]
    pairs = training["user_bitext"][0]["pairs"]
    assert f"user bitext qx-en: {pairs} training pairs, 50 held out (qx.tsv sha256 " in (out / "README.md").read_text()


def test_the_steps_follow_the_user_pairs_and_the_model_keeps_its_configuration(tmp_path: Path,
                                                                             tiny_model_dir: Path) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    user = load_user_bitext([BitextFile("qx", str(toy_user_file(tmp_path / "qx.tsv")))], hold_out=True, seed=0)
    assert sum(len(b.xx) for b in user.bitext) == 64  # 120 lines, distinct pairs less 50 held out
    cfg = tiny_config("steps=2", "eval_every=0", "bitext_epochs=0.3")
    out = train_on(cfg, toy_bitext(), teacher, teacher, tmp_path / "m", progress=False, user=user)
    training = json.loads((out / "xlsent.json").read_text())["training"]
    assert training["steps_done"] == 10  # 0.3 x 64 pairs / (4 a batch x 0.5 share), rounded up
    assert METHOD.config(files=[out / "config.toml"]) == cfg
    assert train_on(cfg, toy_bitext(), teacher, teacher, tmp_path / "m", resume=True, progress=False) == out


def test_a_bitext_run_adds_adapters_to_a_trained_student_for_the_steps_its_pairs_ask(
        tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_DATA", str(tmp_path / "no-data"))
    teacher = TransformerEncoder(tiny_model_dir)
    base = train_on(tiny_config("steps=6", "eval_every=0"), toy_bitext(), teacher, teacher, tmp_path / "base",
                    progress=False)
    cfg = with_user_bitext(tiny_config("steps=1000", "warmup_steps=100", "eval_every=0", "bitext_epochs=0.3",
                                       "lr=1e-9", f"backbone={tiny_model_dir}", f"teacher={tiny_model_dir}",
                                       f"bitext_start={base}"), [f"qx={toy_user_file(tmp_path / 'qx.tsv')}"], True)
    out = METHOD.train(cfg, tmp_path / "m", progress=False)
    pairs = sum(len(b.xx) for b in load_user_bitext(cfg.bitext, hold_out=False, seed=0).bitext)
    manifest = json.loads((out / "xlsent.json").read_text())
    training = manifest["training"]
    assert training["steps_done"] == -(-3 * pairs // 40)  # 0.3 draws of each pair at 4 a batch, not steps = 1000
    assert training["started_from"] == xlsent.load(base).id
    assert manifest["backbone"] == {"ref": str(base.resolve()), "id": xlsent.load(base).id,  # adapters on adapters
                                    "relative": os.path.relpath(base.resolve(), out.resolve())}
    assert f"- started from the trained student {training['started_from']} (bitext_start)" in (
        out / "README.md").read_text()
    # (almost) no learning rate: the new adapters start at zero, so the model is the student it started from
    sentences = ["hund katze", "blue red tree"]
    np.testing.assert_allclose(xlsent.load(out).encode(sentences), xlsent.load(base).encode(sentences), atol=1e-5)
    assert METHOD.config(files=[out / "config.toml"]) == cfg


def test_resume_takes_the_files_the_run_started_with_given_by_another_path(
        tmp_path: Path, tiny_model_dir: Path, killed_run: Callable[..., AbstractContextManager[None]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Started with a relative path, resumed with the absolute one (or ./): the same bytes, so the same run."""
    monkeypatch.setenv("XLSENT_DATA", str(tmp_path / "no-data"))
    monkeypatch.chdir(tmp_path)
    toy_user_file(tmp_path / "qx.tsv")
    sets = [*TINY, "steps=12", "eval_every=0", f"backbone={tiny_model_dir}", f"teacher={tiny_model_dir}"]
    with killed_run(7):
        train("distill", "m", sets=sets, bitext=["qx=qx.tsv"], bitext_only=True, progress=False)
    for spelling in (str(tmp_path / "qx.tsv"), "./qx.tsv"):
        out = train("distill", "m", sets=sets, bitext=[f"qx={spelling}"], bitext_only=True,
                               resume=True, progress=False)
    fresh = train("distill", "fresh", sets=sets, bitext=["qx=qx.tsv"], bitext_only=True, progress=False)
    resumed, whole = load_file(out / "adapter.safetensors"), load_file(fresh / "adapter.safetensors")
    assert resumed.keys() == whole.keys() and all(torch.equal(resumed[k], whole[k]) for k in whole)
    assert METHOD.config(files=[out / "config.toml"]).bitext == [BitextFile("qx", "qx.tsv")]  # type: ignore[attr-defined]


def test_bitext_only_trains_without_the_shipped_data_and_resume_refuses_a_changed_file(
        tmp_path: Path, tiny_model_dir: Path, killed_run: Callable[..., AbstractContextManager[None]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_DATA", str(tmp_path / "no-data"))
    path = toy_user_file(tmp_path / "qx.tsv")
    cfg = with_user_bitext(tiny_config("steps=12", "eval_every=0", f"backbone={tiny_model_dir}",
                                       f"teacher={tiny_model_dir}"), [f"qx={path}"], True)
    with killed_run(7):
        METHOD.train(cfg, tmp_path / "m", progress=False)
    toy_user_file(path, 121)
    with pytest.raises(BitextError, match=f"changed --bitext file.s.: {path}"):
        METHOD.train(cfg, tmp_path / "m", resume=True, progress=False)
    out = METHOD.train(cfg, tmp_path / "fresh", progress=False)
    assert json.loads((out / "data.json").read_text())["per_lang"].keys() == {"qx"}


@pytest.mark.parametrize("lines", ["a\tb\n", "a\tb\nc\td\n", "", " \t \n"])
def test_too_few_user_pairs_without_validation_name_the_file_and_leave_no_out_folder(tmp_path: Path,
                                                                                      lines: str) -> None:
    path = tmp_path / "kab.tsv"
    path.write_text(lines, encoding="utf-8")
    usable = sum(1 for line in lines.splitlines() if line.strip())
    cfg = with_user_bitext(tiny_config("eval_every=0", "backbone=no/such/model"), [f"kab={path}"], True)
    with pytest.raises(BitextError, match=rf"^kab={path}: {usable} usable pair\(s\); at least 50 are needed to train "
                                          r"\(100 with eval_every > 0, which holds out as many"):
        METHOD.train(cfg, tmp_path / "m", progress=False)  # before the (missing) backbone loads
    assert not (tmp_path / "m").exists()
