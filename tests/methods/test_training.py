from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from xlsent.methods._training import (
    CriticSchedule,
    TrainState,
    batch_indices,
    critic_updates,
    gradient_penalty,
    latest_checkpoint,
    load_checkpoint,
    run_training,
    save_checkpoint,
    seed_everything,
    step_generator,
)


def test_batch_indices_are_deterministic_epochs() -> None:
    draws = [batch_indices(10, 3, d, seed=5) for d in range(6)]
    assert all(len(d) == 3 for d in draws)
    first_epoch = np.concatenate(draws[:3])
    assert len(set(first_epoch.tolist())) == 9  # an epoch never repeats a row
    np.testing.assert_array_equal(batch_indices(10, 3, 4, seed=5), draws[4])
    assert not np.array_equal(batch_indices(10, 3, 0, seed=5, stream=1), draws[0])
    assert sorted(batch_indices(4, 8, 7, seed=0).tolist()) == [0, 1, 2, 3]


class _Problem:
    """A tiny regression trained with Adam on seeded batches and random dropout: every draw from the step."""

    def __init__(self) -> None:
        seed_everything(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=0.01)
        gen = torch.Generator().manual_seed(1)
        self.x = torch.randn(50, 4, generator=gen)
        self.y = self.x.sum(dim=1, keepdim=True).sin()
        self.state = TrainState({"model": self.model}, {"opt": self.opt})

    def step(self, s: int) -> dict[str, float]:
        idx = torch.from_numpy(batch_indices(50, 8, s, seed=3))
        keep = (torch.rand(8, 4, generator=step_generator(3, s)) > 0.1).float()
        self.opt.zero_grad()
        loss = (self.model(self.x[idx] * keep) - self.y[idx]).pow(2).mean()
        loss.backward()
        self.opt.step()
        return {"loss": loss.item()}


def test_resume_after_kill_equals_uninterrupted_run(tmp_path: Path) -> None:
    straight = _Problem()
    full = run_training(straight.step, steps=20, state=straight.state, progress=False, log_every=4)

    killed = _Problem()

    def dies_at_13(s: int) -> dict[str, float]:
        if s == 13:
            raise KeyboardInterrupt
        return killed.step(s)

    with pytest.raises(KeyboardInterrupt):
        run_training(dies_at_13, steps=20, state=killed.state, checkpoint_dir=tmp_path, checkpoint_every=5,
                     progress=False, log_every=4, meta={"run": "a"})
    assert latest_checkpoint(tmp_path) == tmp_path / "ckpt-000000010.json"

    resumed = _Problem()  # a fresh process: new objects, state only from disk
    out = run_training(resumed.step, steps=20, state=resumed.state, checkpoint_dir=tmp_path, checkpoint_every=5,
                       resume=True, progress=False, log_every=4, meta={"run": "a"})
    assert out.start_step == 10
    for a, b in zip(straight.model.parameters(), resumed.model.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)
    assert [h["step"] for h in out.history] == [h["step"] for h in full.history]
    np.testing.assert_allclose([h["loss"] for h in out.history], [h["loss"] for h in full.history], atol=1e-6)
    assert len(list(tmp_path.glob("ckpt-*.json"))) == 2  # older checkpoints pruned


def test_resume_refuses_other_meta_and_fresh_run_refuses_old_checkpoints(tmp_path: Path) -> None:
    p = _Problem()
    run_training(p.step, steps=4, state=p.state, checkpoint_dir=tmp_path, checkpoint_every=2, progress=False,
                 meta={"lr": 1})
    with pytest.raises(ValueError, match="another configuration"):
        run_training(p.step, steps=6, state=p.state, checkpoint_dir=tmp_path, resume=True, progress=False,
                     meta={"lr": 2})
    with pytest.raises(FileExistsError):
        run_training(p.step, steps=6, state=p.state, checkpoint_dir=tmp_path, progress=False, meta={"lr": 1})


def test_checkpoint_restores_adam_state_without_pickle(tmp_path: Path) -> None:
    p = _Problem()
    for s in range(3):
        p.step(s)
    path = save_checkpoint(tmp_path, 3, p.state, {"note": "x"})
    assert not list(tmp_path.glob("*.pt")) and path.with_suffix(".safetensors").is_file()
    q = _Problem()
    info = load_checkpoint(path, q.state)
    assert info["step"] == 3 and info["note"] == "x"
    a, b = p.opt.state_dict(), q.opt.state_dict()
    assert a["param_groups"] == b["param_groups"]
    for idx, st in a["state"].items():
        for key in ("exp_avg", "exp_avg_sq", "step"):
            torch.testing.assert_close(st[key], b["state"][idx][key], atol=0, rtol=0)
    path.with_suffix(".safetensors").write_bytes(b"corrupt")
    with pytest.raises(ValueError, match="corrupt"):
        load_checkpoint(path, q.state)


def test_critic_updates_clip_and_gradient_penalty() -> None:
    seed_everything(0)
    critic = torch.nn.Linear(3, 1)
    opt = torch.optim.Adam(critic.parameters(), lr=0.5)
    low, high = torch.zeros(6, 3), torch.ones(6, 3)
    calls: list[int] = []

    def batch(k: int) -> tuple[torch.Tensor, torch.Tensor]:
        calls.append(k)
        return low, high

    gap = critic_updates(critic, opt, batch, CriticSchedule(kappa=3, clip=0.05), torch.Generator())
    assert calls == [0, 1, 2] and isinstance(gap, float)
    assert critic.weight.abs().max() <= 0.05 + 1e-7
    unit = torch.nn.Linear(3, 1)
    with torch.no_grad():
        unit.weight.copy_(torch.tensor([[0.6, 0.8, 0.0]]))
    assert gradient_penalty(unit, low, high, torch.Generator()).item() == pytest.approx(0.0, abs=1e-10)
    with torch.no_grad():
        unit.weight.mul_(3)
    assert gradient_penalty(unit, low, high, torch.Generator()).item() == pytest.approx(4.0, rel=1e-5)
