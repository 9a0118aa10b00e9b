"""The shared training loop: resume byte-identical with dropout, validation and best checkpoints, schedules,
clipping, checkpoints without pickle, and alternating critics."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from xlsent.training.adversarial import CriticGroup
from xlsent.training.batching import batch_indices
from xlsent.training.checkpoint import (
    CheckpointError,
    TrainState,
    latest_checkpoint,
    load_checkpoint,
    save_checkpoint,
)
from xlsent.training.config import TrainConfig
from xlsent.training.loop import Trainer, Validation, resolve_device
from xlsent.training.losses import WassersteinCritic
from xlsent.training.run_folder import LOG_FILE
from xlsent.training.schedule import lr_factor

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class _Problem:
    """A regression with dropout (global torch RNG), Adam, seeded batches and numpy noise (global numpy RNG)."""

    def __init__(self, out: Path, steps: int = 20, **cfg: object) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Dropout(0.3),
                                         torch.nn.Linear(16, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=0.01)
        gen = torch.Generator().manual_seed(1)
        self.x = torch.randn(64, 4, generator=gen)
        self.y = self.x.sum(dim=1, keepdim=True).sin()
        settings: dict[str, object] = {"checkpoint_every": 5, "log_every": 4, **cfg}
        config = TrainConfig(steps=steps, device="cpu", **settings)  # type: ignore[arg-type]
        self.trainer = Trainer(out, config, TrainState({"model": self.model}, {"opt": self.opt}), progress=False,
                               validation=self.validation())
        np.random.seed(0)

    def validation(self) -> Validation | None:
        return None

    def step(self, s: int) -> dict[str, float]:
        idx = torch.from_numpy(batch_indices(64, 8, s, seed=3))
        noise = torch.from_numpy(np.random.normal(scale=0.01, size=(8, 1)).astype(np.float32))
        loss = (self.model(self.x[idx]) - self.y[idx] - noise).pow(2).mean()
        self.trainer.update("opt", loss)
        return {"loss": loss.item()}


def _log_lines(path: Path) -> list[dict[str, object]]:
    lines = [json.loads(ln) for ln in (path / LOG_FILE).read_text().splitlines()]
    return [{k: v for k, v in ln.items() if k != "elapsed_s"} for ln in lines]


def _kill_at(problem: _Problem, step: int) -> Callable[[int], dict[str, float]]:
    def step_fn(s: int) -> dict[str, float]:
        if s == step:
            raise KeyboardInterrupt
        return problem.step(s)

    return step_fn


def test_resume_with_dropout_is_byte_identical(tmp_path: Path) -> None:
    straight = _Problem(tmp_path / "a")
    full = straight.trainer.run(straight.step)

    killed = _Problem(tmp_path / "b")
    with pytest.raises(KeyboardInterrupt):
        killed.trainer.run(_kill_at(killed, 13))
    assert latest_checkpoint(tmp_path / "b" / "checkpoints") == tmp_path / "b" / "checkpoints" / "ckpt-000000010.json"
    torch.manual_seed(123)  # a new process: other global RNG states, everything else from disk
    np.random.seed(123)
    resumed = _Problem(tmp_path / "b")
    out = resumed.trainer.run(resumed.step, resume=True)
    assert out.start_step == 10
    for a, b in zip(straight.model.parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(a, b)
    assert [h["loss"] for h in out.history] == [h["loss"] for h in full.history]
    assert _log_lines(tmp_path / "b") == _log_lines(tmp_path / "a")  # no duplicated lines after the resume
    assert len(list((tmp_path / "b" / "checkpoints").glob("ckpt-*.json"))) == 2  # older checkpoints pruned


def test_dropout_is_on_while_training_and_off_while_validating(tmp_path: Path) -> None:
    modes: list[bool] = []

    class Watched(_Problem):
        def validation(self) -> Validation:
            return Validation(lambda: modes.append(self.model.training) or {"score": 0.0}, "score", every=5)

        def step(self, s: int) -> dict[str, float]:
            modes.append(self.model.training)
            return super().step(s)

    w = Watched(tmp_path, steps=10)
    w.trainer.run(w.step)
    assert modes == [True] * 5 + [False] + [True] * 5 + [False]


def test_validation_keeps_the_best_and_leaves_training_untouched(tmp_path: Path) -> None:
    scores = iter([1.0, 3.0, 2.0, 0.5])
    snapshots: list[torch.Tensor] = []

    class Validated(_Problem):
        def validation(self) -> Validation:
            def evaluate() -> dict[str, float]:
                snapshots.append(self.model[0].weight.detach().clone())
                torch.rand(5)  # an evaluation drawing random numbers must not change the training run
                np.random.rand()
                return {"score": next(scores), "other": 0.0}

            return Validation(evaluate, "score", every=5)

    plain = _Problem(tmp_path / "plain")
    plain.trainer.run(plain.step)
    v = Validated(tmp_path / "v")
    result = v.trainer.run(v.step)
    for a, b in zip(plain.model.parameters(), v.model.parameters(), strict=True):
        assert torch.equal(a, b)
    assert result.best == {"step": 10, "criterion": "score", "score": 3.0}
    assert [r["best"] for r in result.validations] == [True, True, False, False]
    assert v.trainer.restore_best() == {"step": 10, "criterion": "score", "score": 3.0}
    assert torch.equal(v.model[0].weight, snapshots[1])
    logged = [ln for ln in _log_lines(tmp_path / "v") if "validation" in ln]
    assert [ln["step"] for ln in logged] == [5, 10, 15, 20] and logged[1]["best"] is True


def test_lower_is_better_criterion(tmp_path: Path) -> None:
    scores = iter([2.0, 1.0, 3.0, 4.0])

    class Validated(_Problem):
        def validation(self) -> Validation:
            return Validation(lambda: {"loss": next(scores)}, "loss", every=5, higher_is_better=False)

    v = Validated(tmp_path)
    assert v.trainer.run(v.step).best == {"step": 10, "criterion": "loss", "score": 1.0}


def test_resume_refuses_another_config_and_fresh_run_refuses_old_checkpoints(tmp_path: Path) -> None:
    p = _Problem(tmp_path, steps=6)
    p.trainer.run(p.step)
    other = _Problem(tmp_path, steps=6, lr=0.5)
    with pytest.raises(ValueError, match=r"config keys differ: lr 0.001 -> 0.5"):
        other.trainer.run(other.step, resume=True)
    again = _Problem(tmp_path, steps=6)
    with pytest.raises(FileExistsError, match="--resume"):
        again.trainer.run(again.step)
    longer_log = _Problem(tmp_path, steps=6, log_every=2)  # logging is not part of the fingerprint
    longer_log.trainer.run(longer_log.step, resume=True)


def test_schedule_and_which_optimizers_follow_it(tmp_path: Path) -> None:
    assert [lr_factor(s, steps=10, warmup=4) for s in range(5)] == [0.25, 0.5, 0.75, 1.0, 1.0]
    assert lr_factor(9, steps=10, kind="linear") == pytest.approx(0.1)
    assert lr_factor(10, steps=10, kind="cosine") == pytest.approx(0.0)
    with pytest.raises(ValueError, match="schedule"):
        lr_factor(0, steps=1, kind="exp")
    gen_param, critic_param = torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    gen_opt, critic_opt = torch.optim.SGD([gen_param], lr=1.0), torch.optim.SGD([critic_param], lr=0.5)
    cfg = TrainConfig(steps=4, device="cpu", warmup_steps=2, schedule="linear", log_every=1)
    modules = {"g": torch.nn.ParameterList([gen_param]), "c": torch.nn.ParameterList([critic_param])}
    trainer = Trainer(tmp_path, cfg, TrainState(modules, {"gen": gen_opt, "critic": critic_opt}),
                      scheduled=["gen"], progress=False)
    seen: list[tuple[float, float]] = []
    trainer.run(lambda s: seen.append((gen_opt.param_groups[0]["lr"], critic_opt.param_groups[0]["lr"])) or {})
    assert seen == [(0.5, 0.5), (1.0, 0.5), (1.0, 0.5), (0.5, 0.5)]
    logged = _log_lines(tmp_path)
    assert logged[0]["lr"] == {"gen": 0.5, "critic": 0.5}


def test_gradient_clipping(tmp_path: Path) -> None:
    w = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([w], lr=1.0)
    trainer = Trainer(tmp_path, TrainConfig(steps=1, device="cpu", grad_clip=1.0),
                      TrainState({"w": torch.nn.ParameterList([w])}, {"opt": opt}), progress=False)
    trainer.update("opt", (w * torch.tensor([3.0, 4.0])).sum())  # gradient (3, 4), norm 5 -> (0.6, 0.8)
    torch.testing.assert_close(w.detach(), torch.tensor([-0.6, -0.8]))


def test_checkpoint_restores_adam_state_without_pickle(tmp_path: Path) -> None:
    p = _Problem(tmp_path / "run")
    for s in range(3):
        p.step(s)
    path = save_checkpoint(tmp_path, 3, p.trainer.state, {"note": "x"})
    assert not list(tmp_path.glob("*.pt")) and path.with_suffix(".safetensors").is_file()
    q = _Problem(tmp_path / "other")
    info = load_checkpoint(path, q.trainer.state)
    assert info["step"] == 3 and info["note"] == "x"
    a, b = p.opt.state_dict(), q.opt.state_dict()
    assert a["param_groups"] == b["param_groups"]
    for idx, st in a["state"].items():
        for key in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(st[key], b["state"][idx][key])
    path.with_suffix(".safetensors").write_bytes(b"corrupt")
    with pytest.raises(CheckpointError, match="corrupt"):
        load_checkpoint(path, q.trainer.state)


def test_critic_group_alternates_clips_and_freezes() -> None:
    torch.manual_seed(0)
    critics = {lang: WassersteinCritic(torch.nn.Linear(3, 1), clip=0.05) for lang in ("de", "fr")}
    opts = {lang: torch.optim.Adam(c.parameters(), lr=0.5) for lang, c in critics.items()}
    group = CriticGroup(critics, opts, steps=3)
    low, high = torch.zeros(6, 3), torch.ones(6, 3)
    calls: list[tuple[str, int]] = []

    def loss(name: str, k: int) -> torch.Tensor:
        calls.append((name, k))
        return critics[name](low, high)

    metrics = group.update(loss)
    assert calls == [("de", 0), ("fr", 0), ("de", 1), ("fr", 1), ("de", 2), ("fr", 2)]
    assert set(metrics) == {"critic/de", "critic/fr"}
    assert all(float(c.critic.weight.detach().abs().max()) <= 0.05 + 1e-7 for c in critics.values())
    with group.frozen():
        assert not any(p.requires_grad for c in critics.values() for p in c.parameters())
    assert all(p.requires_grad for c in critics.values() for p in c.parameters())
    with pytest.raises(ValueError, match="same names"):
        CriticGroup(critics, {"de": opts["de"]})


def test_device_resolution() -> None:
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="--device cpu"):
            resolve_device("cuda")


class FakeClock:
    """``time.perf_counter`` for the trainer: seconds pass only when a test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _ten_second_budget(tmp_path: Path, clock: FakeClock) -> tuple[_Problem, Callable[[int], dict[str, float]]]:
    """A long run with a budget of 10 s of ``clock``, and its step, which takes one second."""
    problem = _Problem(tmp_path, steps=1000)
    problem.trainer.time_budget_s = 10.0

    def one_second_step(s: int) -> dict[str, float]:
        clock.now += 1.0
        return problem.step(s)

    return problem, one_second_step


def test_time_budget_ends_the_run_like_a_last_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(time, "perf_counter", clock)
    problem, one_second_step = _ten_second_budget(tmp_path, clock)
    result = problem.trainer.run(one_second_step)
    assert result.steps == 10
    assert _log_lines(tmp_path)[-1]["step"] == 10  # the stopping step is logged ...
    ckpt = latest_checkpoint(tmp_path / "checkpoints")
    assert ckpt is not None and json.loads(ckpt.read_text())["step"] == 10  # ... and checkpointed
    again = _Problem(tmp_path, steps=1000)
    again.trainer.time_budget_s = 10.0
    assert again.trainer.run(again.step, resume=True).steps == 10  # a spent budget trains no more


def test_a_budget_spent_while_checkpointing_still_ends_on_a_logged_step(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget ran out during the checkpoint of step 5 (under load): step 6 is the last, logged and checkpointed,
    and the result says 6 (it said 4, the last logged step, while step 5's checkpoint held more)."""
    import xlsent.training.loop as loop

    clock = FakeClock()
    monkeypatch.setattr(time, "perf_counter", clock)
    slow_save = loop.save_checkpoint

    def save_then_wait(*args: object, **kwargs: object) -> None:
        slow_save(*args, **kwargs)  # type: ignore[arg-type]
        clock.now += 6.0

    monkeypatch.setattr(loop, "save_checkpoint", save_then_wait)
    problem, one_second_step = _ten_second_budget(tmp_path, clock)
    result = problem.trainer.run(one_second_step)
    assert result.steps == 6 and _log_lines(tmp_path)[-1]["step"] == 6
    ckpt = latest_checkpoint(tmp_path / "checkpoints")
    assert ckpt is not None and json.loads(ckpt.read_text())["step"] == 6


def test_a_term_of_some_steps_is_averaged_over_those_steps(tmp_path: Path) -> None:
    problem = _Problem(tmp_path, steps=8)

    def step(s: int) -> dict[str, float]:
        return {**problem.step(s), **({"odd": float(s)} if s % 2 else {})}

    problem.trainer.run(step)
    logged = [ln["losses"] for ln in _log_lines(tmp_path)]
    assert [ln["odd"] for ln in logged] == [2.0, 6.0]  # (1 + 3) / 2 and (5 + 7) / 2, not divided by 4


def test_bf16_precision_runs_steps_under_autocast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("xlsent.training.loop.cpu_flags", lambda: frozenset({"amx_bf16"}))
    dtypes: list[torch.dtype] = []
    for precision in ("fp32", "bf16"):
        problem = _Problem(tmp_path / precision, steps=4, precision=precision)

        def step(s: int, p: _Problem = problem) -> dict[str, float]:
            dtypes.append(p.model[0](p.x[:2]).dtype)
            return p.step(s)

        problem.trainer.run(step)
        assert next(problem.model.parameters()).dtype == torch.float32  # weights stay float32
    assert dtypes == [torch.float32] * 4 + [torch.bfloat16] * 4


def test_bf16_falls_back_to_fp32_where_the_cpu_lacks_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("xlsent.training.loop.cpu_flags", lambda: frozenset({"avx2"}))
    problem = _Problem(tmp_path / "p", steps=2, precision="bf16")
    dtypes: list[torch.dtype] = []

    def step(s: int) -> dict[str, float]:
        dtypes.append(problem.model[0](problem.x[:2]).dtype)
        return problem.step(s)

    problem.trainer.run(step)
    assert problem.trainer.precision == "fp32" and dtypes == [torch.float32] * 2
