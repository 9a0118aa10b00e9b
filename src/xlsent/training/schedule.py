"""Learning-rate schedules as pure functions of the step: linear warm-up, then constant, linear or cosine decay.

A schedule has no state, so a resumed run gets the same learning rates from the step alone.

>>> [round(lr_factor(s, steps=10, warmup=2, kind="linear"), 3) for s in (0, 1, 2, 6, 9)]
[0.5, 1.0, 1.0, 0.5, 0.125]
>>> round(lr_factor(6, steps=10, warmup=2, kind="cosine"), 3)
0.5
"""

from __future__ import annotations

import math

import torch


def lr_factor(step: int, *, steps: int, warmup: int = 0, kind: str = "constant") -> float:
    """Multiplier of the base learning rate for update ``step`` (0-based) of ``steps``.

    Warm-up: ``(step + 1) / warmup`` for the first ``warmup`` updates. After it, ``constant`` keeps 1,
    ``linear`` and ``cosine`` decay from 1 towards 0 at ``steps``.
    """
    if step < warmup:
        return (step + 1) / warmup
    if kind == "constant":
        return 1.0
    progress = (step - warmup) / max(1, steps - warmup)
    if kind == "linear":
        return max(0.0, 1.0 - progress)
    if kind == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))
    raise ValueError(f"unknown schedule {kind!r}: use constant, linear or cosine")


def remember_base_lrs(optimizer: torch.optim.Optimizer) -> None:
    """Store each param group's learning rate as its ``base_lr`` (once; checkpoints carry it)."""
    for group in optimizer.param_groups:
        group.setdefault("base_lr", group["lr"])


def apply_schedule(optimizer: torch.optim.Optimizer, factor: float) -> dict[str, float]:
    """Set every group's ``lr`` to ``base_lr * factor``; returns ``{group name or index: lr}``."""
    out = {}
    for i, group in enumerate(optimizer.param_groups):
        group["lr"] = group["base_lr"] * factor
        out[str(group.get("name", i))] = group["lr"]
    return out
