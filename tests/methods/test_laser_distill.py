"""LASER's teacher-student objective: the shared loss, cached teacher vectors, projection, embedding init, and the
translate objective left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import xlsent
from xlsent.encoders.bilstm import LaserEncoder
from xlsent.encoders.cache import cache_dir
from xlsent.encoders.registry import CHECK_SENTENCE
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.methods.laser.model import train_on
from xlsent.methods.laser.vocab import teacher_embeddings
from xlsent.training.config import ConfigError

from .test_laser import tiny_config, toy_corpus

pytestmark = pytest.mark.usefixtures("one_torch_thread", "xlsent_home")


def losses_of(out: Path) -> list[dict[str, float]]:
    return [ln["losses"] for ln in map(json.loads, (out / "train.jsonl").read_text().splitlines()) if "losses" in ln]


def test_translate_reproduces_the_model_from_before_the_distillation_objective(tmp_path: Path) -> None:
    """Reference values: the same tiny run with the code before ``objective`` existed (commit ed76ba0, packed
    sequences; dropout 0, since the padded BiLSTM draws its inter-layer dropout masks in another order)."""
    out = train_on(tiny_config("objective=translate", "dropout=0.0"), toy_corpus(), tmp_path / "m", progress=False)
    losses = losses_of(out)
    np.testing.assert_allclose([losses[0]["loss"], losses[1]["loss"]], [4.04506402015686, 4.036566972732544],
                               rtol=1e-5)
    assert not {"translate", "distill"} & set(losses[0])
    weights = load_file(out / "encoder.safetensors")
    got = {k: float(weights[k].double().sum()) for k in ("embed.weight", "lstm.weight_ih_l1", "lstm.bias_ih_l1")}
    np.testing.assert_allclose(list(got.values()), [45.54997873707907, 2.8981191658531316, -1.3674377612769604],
                               rtol=1e-4)
    assert "project.weight" not in weights


def distill_config(teacher: Path, *sets: str):
    return tiny_config(f"teacher={teacher}", "objective=distill", "lr=0.01", "steps=60", *sets)


def test_distillation_lands_on_the_teacher_and_reuses_its_cached_vectors(tmp_path: Path, tiny_model_dir: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    out = train_on(distill_config(tiny_model_dir), toy_corpus(), tmp_path / "m", progress=False)
    losses = [ln["distill"] for ln in losses_of(out)]
    assert losses[-1] < 0.5 * losses[0]
    assert {"loss de-en", "loss en-es"} <= {k for ln in losses_of(out) for k in ln}
    assert "loss de-es" not in {k for ln in losses_of(out) for k in ln}  # no English side: not distilled
    weights = load_file(out / "encoder.safetensors")
    assert "project.weight" in weights and not any(k.startswith("decoder") for k in weights)
    student = xlsent.load(out)
    teacher = TransformerEncoder(tiny_model_dir)
    assert isinstance(student, LaserEncoder) and student.dim == teacher.dim == 32
    manifest = json.loads((out / "xlsent.json").read_text())
    assert manifest["training"]["objective"] == "distill"
    assert manifest["training"]["teacher"]["id"] == teacher.id
    texts = ["hund katze", "dog cat", "baum haus rot"]
    assert (student.encode(texts) * teacher.encode(texts)).sum(1).mean() > 0.5  # the teacher's space
    assert list(cache_dir(teacher).glob("*.npy"))

    original = TransformerEncoder.encode

    def no_encoding(self, sentences, *args, **kwargs):
        if list(sentences) == [CHECK_SENTENCE]:  # the load-time check of the model's output
            return original(self, sentences, *args, **kwargs)
        raise AssertionError("the teacher's vectors are cached: nothing is encoded again")

    monkeypatch.setattr(TransformerEncoder, "encode", no_encoding)
    train_on(distill_config(tiny_model_dir), toy_corpus(), tmp_path / "again", progress=False)


def test_both_trains_the_decoder_beside_the_distillation_term(tmp_path: Path, tiny_model_dir: Path) -> None:
    cfg = distill_config(tiny_model_dir, "objective=both", "steps=6", "distill_weight=0.5", "log_every=1")
    out = train_on(cfg, toy_corpus(), tmp_path / "m", progress=False)
    for ln in losses_of(out):
        expected = ln["translate"] + 0.5 * ln.get("distill", 0.0)
        assert ln["loss"] == pytest.approx(expected, rel=1e-5)
    assert any("distill" in ln for ln in losses_of(out)) and all("translate" in ln for ln in losses_of(out))


def test_embeddings_start_from_the_teachers(tmp_path: Path, tiny_model_dir: Path) -> None:
    out = train_on(distill_config(tiny_model_dir, "embed_init=teacher", "embed_dim=32", "freeze_embeddings=true",
                                  "steps=3"), toy_corpus(), tmp_path / "m", progress=False)
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(out / "spm.model"))
    teacher = TransformerEncoder(tiny_model_dir)
    table = teacher.model.embeddings.word_embeddings.weight.detach()
    embed = load_file(out / "encoder.safetensors")["embed.weight"]
    words = [i for i in range(4, sp.get_piece_size())
             if sp.id_to_piece(i).startswith("▁") and len(sp.id_to_piece(i)) > 2]
    for piece in words:
        ids = teacher.tokenizer.encode(sp.id_to_piece(piece).replace("▁", " "), add_special_tokens=False).ids
        torch.testing.assert_close(embed[piece], table[ids].mean(0))  # frozen: as initialised
    assert words
    assert teacher_embeddings(sp, teacher.tokenizer, table, {0: teacher.pad, 1: teacher.pad, 2: teacher.bos,
                                                             3: teacher.eos}).shape == (sp.get_piece_size(), 32)


def test_objective_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="objective must be one of"):
        tiny_config("objective=teach")
    with pytest.raises(ConfigError, match="distill_loss"):
        tiny_config("distill_loss=l1")
    with pytest.raises(ConfigError, match="needs English pairs"):
        tiny_config("objective=distill", "targets=es")


def test_embed_init_needs_the_teachers_width(tmp_path: Path, tiny_model_dir: Path) -> None:
    with pytest.raises(ValueError, match="embed_dim = 32"):
        train_on(distill_config(tiny_model_dir, "embed_init=teacher", "embed_dim=8"), toy_corpus(), tmp_path / "m",
                 progress=False)


def encoded_sentences(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sentences the transformer encoders encode from now on, in order (the real encoding still runs)."""
    encoded: list[str] = []
    original = TransformerEncoder.encode

    def spy(self, sentences, *args, **kwargs):
        if list(sentences) != [CHECK_SENTENCE]:  # not the load-time check of the model's output
            encoded.extend(sentences)
        return original(self, sentences, *args, **kwargs)

    monkeypatch.setattr(TransformerEncoder, "encode", spy)
    return encoded


def test_the_teacher_encodes_each_distinct_english_sentence_once(tmp_path: Path, tiny_model_dir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    encoded = encoded_sentences(monkeypatch)
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    corpus = toy_corpus()
    english = {s for c in corpus for s in (c.src if c.src_lang == "en" else c.tgt if c.tgt_lang == "en" else [])}
    train_on(distill_config(tiny_model_dir, "steps=2"), corpus, tmp_path / "m", progress=False)
    assert sorted(encoded) == sorted(english)  # de-en and en-es share their English side: encoded once


def test_ranking_term_trains_beside_distillation(tmp_path: Path, tiny_model_dir: Path) -> None:
    out = train_on(distill_config(tiny_model_dir, "ranking_weight=1.0", "precision=bf16"), toy_corpus(),
                   tmp_path / "m", progress=False)
    logged = losses_of(out)
    assert logged[-1]["ranking"] < logged[0]["ranking"]
    np.testing.assert_allclose(logged[0]["loss"], logged[0]["distill"] + logged[0]["ranking"], rtol=1e-5)
    with pytest.raises(ConfigError, match="ranking_weight > 0 needs objective distill"):
        tiny_config("ranking_weight=1.0")


def test_teacher_ranking_term_trains_beside_distillation(tmp_path: Path, tiny_model_dir: Path) -> None:
    out = train_on(distill_config(tiny_model_dir, "teacher_ranking_weight=0.5", "teacher_negatives=16"), toy_corpus(),
                   tmp_path / "m", progress=False)
    logged = losses_of(out)
    assert logged[-1]["teacher_ranking"] < logged[0]["teacher_ranking"]
    np.testing.assert_allclose(logged[0]["loss"], logged[0]["distill"] + 0.5 * logged[0]["teacher_ranking"],
                               rtol=1e-5)
    with pytest.raises(ConfigError, match="teacher_ranking_weight > 0 needs objective distill"):
        tiny_config("teacher_ranking_weight=1.0")


def test_a_users_pair_is_the_only_one_whose_english_the_teacher_encodes_again(tmp_path: Path, tiny_model_dir: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from xlsent.data.user_bitext import BitextFile, load_user_bitext

    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    train_on(distill_config(tiny_model_dir, "steps=2"), toy_corpus(), tmp_path / "a", progress=False)
    (tmp_path / "qx.tsv").write_text("".join(f"tazrut {i}\tthe dog {i}\n" for i in range(20)), encoding="utf-8")
    user = load_user_bitext([BitextFile("qx", str(tmp_path / "qx.tsv"))], hold_out=False, seed=0)
    encoded = encoded_sentences(monkeypatch)
    train_on(distill_config(tiny_model_dir, "steps=2"), toy_corpus(), tmp_path / "b", progress=False, user=user)
    assert sorted(encoded) == sorted(user.bitext[0].en)
