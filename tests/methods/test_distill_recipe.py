"""The distilled student's recipe switches: gradient caching, hard negatives, languages mixed in a batch, the
teacher's backend and the precision chosen for the hardware."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
import torch

from xlsent.encoders.trainable import TrainableTransformer
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.methods.distill.hard_negatives import nearest_non_translations
from xlsent.methods.distill.model import train_on
from xlsent.training.config import ConfigError
from xlsent.training.grad_cache import cached_backward
from xlsent.training.loop import resolve_precision
from xlsent.training.losses import MultipleNegativesRankingLoss

from .test_distill import losses_of, tiny_config, toy_bitext

pytestmark = pytest.mark.usefixtures("one_torch_thread", "xlsent_home")


def test_gradient_caching_gives_the_gradients_of_the_whole_batch(tiny_model_dir: Path) -> None:
    learner = TrainableTransformer(tiny_model_dir)
    learner.set_dropout(0.1, 0.1)  # the second pass must draw the first pass's dropout masks
    learner.train()
    sentences = ["a dog", "the dog barks at the red cat in the house", "a cat", "dogs and trees", "blue", "red"]
    loss = MultipleNegativesRankingLoss(scale=20.0)

    def loss_of(vecs: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        return loss(vecs[:3], vecs[3:]), {}

    torch.manual_seed(3)
    value, _ = cached_backward(learner.embed, sentences, loss_of, chunk=2)
    cached = {n: p.grad.clone() for n, p in learner.named_parameters() if p.grad is not None}
    learner.zero_grad()
    torch.manual_seed(3)
    from xlsent.training.grad_cache import length_chunks

    vecs = torch.empty(len(sentences), learner.dim)  # the plain pass, chunk by chunk in the same order and RNG
    for rows in length_chunks(sentences, 2):
        vecs = vecs.index_copy(0, torch.from_numpy(rows), learner.embed([sentences[i] for i in rows]))
    plain_loss, _ = loss_of(vecs)
    plain_loss.backward()
    assert cached and value.item() == pytest.approx(plain_loss.item(), rel=1e-5)
    for name, grad in cached.items():
        torch.testing.assert_close(grad, learner.get_parameter(name).grad, rtol=1e-4, atol=1e-6)


def test_hard_negatives_join_the_english_candidates_only() -> None:
    loss = MultipleNegativesRankingLoss(scale=10.0, bidirectional=False)
    a = torch.eye(3)
    easy = loss(a, a)
    assert loss(a, a, negatives=-a).item() == pytest.approx(easy.item(), abs=1e-3)  # far negatives: no change
    assert loss(a, a, negatives=a).item() == pytest.approx(np.log(2), abs=1e-3)  # one as close as the positive
    assert loss(a, a, negatives=a).item() == loss(a, a, negatives=a[[1, 2, 0]]).item()  # every row sees them all
    with pytest.raises(ValueError, match="same shape"):
        loss(a, a[:2])


def test_each_pair_gets_its_nearest_other_english_side_below_the_cap() -> None:
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(50, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    english = [f"s{i}" for i in range(50)]
    hard = nearest_non_translations(vecs, english, 0.999)
    sims = vecs @ vecs.T
    np.fill_diagonal(sims, -2)
    assert (hard == sims.argmax(axis=1)).all()
    assert (nearest_non_translations(vecs, english, -0.99) == -1).all()  # nothing is that far


def test_the_recipe_switches_train_and_are_recorded(tmp_path: Path, tiny_model_dir: Path) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    cfg = tiny_config("steps=6", "eval_every=0", "batch_size=8", "languages_per_batch=2", "grad_cache=true",
                      "micro_batch=3", "hard_negatives=true", "hard_negative_max_cos=0.99", "precision=bf16")
    out = train_on(cfg, toy_bitext(), teacher, teacher, tmp_path / "m", progress=False)
    losses = losses_of(out)
    assert {"batches de", "batches fr"} <= set().union(*losses)  # two languages in the steps' batches
    assert all(np.isfinite(ln["loss"]) for ln in losses)
    manifest = json.loads((out / "xlsent.json").read_text())
    assert manifest["config"]["grad_cache"] is True and manifest["config"]["languages_per_batch"] == 2
    assert manifest["training"]["precision"] in ("fp32", "bf16")


def test_relational_distillation_is_a_weighted_logged_term_and_recorded(tmp_path: Path, tiny_model_dir: Path) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    cfg = tiny_config("steps=4", "eval_every=0", "batch_size=8", "relation_weight=0.5", "log_every=1", "lr=0.01",
                      "precision=fp32")
    out = train_on(cfg, toy_bitext(), teacher, teacher, tmp_path / "m", progress=False)
    losses = losses_of(out)
    assert all(0 < ln["relation"] < 10 for ln in losses)  # the x sides rank one another unlike the English sides
    assert all(ln["loss"] == pytest.approx(ln["distill"] + ln["ranking"] + 0.5 * ln["relation"], rel=1e-4)
               for ln in losses)
    manifest = json.loads((out / "xlsent.json").read_text())
    assert manifest["training"]["loss"] == "1 x distill + 1 x ranking + 0.5 x relation"
    with pytest.raises(ConfigError, match="relation_weight"):
        tiny_config("relation_weight=1", "loss=ranking")
    with pytest.raises(ConfigError, match="batch_size >= 3"):
        tiny_config("relation_weight=1", "batch_size=2")


def test_gradient_caching_trains_the_same_student_as_one_pass(tmp_path: Path, tiny_model_dir: Path) -> None:
    teacher = TransformerEncoder(tiny_model_dir)
    runs = [train_on(tiny_config("steps=3", "eval_every=0", "batch_size=8", f"grad_cache={flag}", "micro_batch=4",
                                 "precision=fp32"), toy_bitext(), teacher, teacher, tmp_path / flag, progress=False)
            for flag in ("false", "true")]
    plain, cached = ([ln["loss"] for ln in losses_of(out)] for out in runs)
    np.testing.assert_allclose(plain, cached, rtol=1e-4)


def test_ranking_against_the_teacher_ranks_the_same_candidates_as_the_untrained_student(
        tmp_path: Path, tiny_model_dir: Path) -> None:
    # At step 1 the LoRA student is its backbone, which is also the teacher: its English vectors and its hard
    # negatives' are the teacher's, so both targets give the same first ranking loss; later steps part.
    teacher = TransformerEncoder(tiny_model_dir)
    runs = {targets: losses_of(train_on(tiny_config("steps=4", "eval_every=0", "batch_size=8", "log_every=1",
                                                    "hard_negatives=true", "hard_negative_max_cos=0.999",
                                                    f"ranking_targets={targets}", "precision=fp32"),
                                        toy_bitext(), teacher, teacher, tmp_path / targets, progress=False))
            for targets in ("student", "teacher")}
    student, on_teacher = ([ln["ranking"] for ln in runs[t]] for t in ("student", "teacher"))
    assert on_teacher[0] == pytest.approx(student[0], rel=1e-4)
    assert on_teacher[1:] != pytest.approx(student[1:], rel=1e-4)


def test_languages_per_batch_must_divide_the_batch() -> None:
    with pytest.raises(ConfigError, match="languages_per_batch must be >= 1 and divide batch_size"):
        tiny_config("batch_size=8", "languages_per_batch=3")
    with pytest.raises(ConfigError, match="hard_negatives and ranking_targets = teacher need the teacher"):
        tiny_config("hard_negatives=true", "loss=ranking")
    with pytest.raises(ConfigError, match="ranking_targets must be one of"):
        tiny_config("ranking_targets=both")


def test_bf16_runs_only_where_the_hardware_has_it(caplog: pytest.LogCaptureFixture) -> None:
    cpu = torch.device("cpu")
    assert resolve_precision("bf16", cpu, frozenset({"avx512_bf16"})) == "bf16"
    assert resolve_precision("bf16", cpu, frozenset({"amx_bf16", "avx2"})) == "bf16"
    assert resolve_precision("fp32", cpu, frozenset({"amx_bf16"})) == "fp32"
    with caplog.at_level(logging.WARNING):
        assert resolve_precision("bf16", cpu, frozenset({"avx2", "fma"})) == "fp32"
    assert "no native bf16" in caplog.text
