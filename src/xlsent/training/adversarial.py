"""Alternating adversarial updates: k critic (discriminator) steps per generator step, one or several critics.

Dual-pivot (a language critic, WGAN-GP), EMU (one Wasserstein critic per training language, weight clipping,
k = 5, its Algorithm 1) and ABSent (two pair discriminators) all alternate the same way: the critics are updated
``steps`` times on detached inputs, then the generator is updated with the critics frozen.

>>> import torch
>>> from xlsent.training.losses import WassersteinCritic
>>> critic = WassersteinCritic(torch.nn.Linear(2, 1), clip=0.01)
>>> opt = torch.optim.SGD(critic.parameters(), lr=1.0)
>>> group = CriticGroup({"lang": critic}, {"lang": opt}, steps=3)
>>> low, high = torch.zeros(4, 2), torch.ones(4, 2)
>>> metrics = group.update(lambda name, k: group.critics[name](low, high))
>>> sorted(metrics), float(critic.critic.weight.detach().abs().max()) <= 0.01
(['critic/lang'], True)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping

import numpy as np
import torch


@contextlib.contextmanager
def frozen(*modules: torch.nn.Module) -> Iterator[None]:
    """Switch off gradients of ``modules``' parameters inside the block (e.g. the critic in a generator step)."""
    params = [p for m in modules for p in m.parameters()]
    flags = [p.requires_grad for p in params]
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, flag in zip(params, flags, strict=True):
            p.requires_grad_(flag)


class CriticGroup:
    """Named critics with their optimizers, each updated ``steps`` times per generator step.

    ``update(loss)`` calls ``loss(name, k)`` for update ``k`` of critic ``name`` (the caller draws its batch
    from ``k``, inputs detached from the generator), steps that critic's optimizer, and clips its weights when
    the critic has a ``clip_`` method (WGAN). ``frozen()`` wraps the generator step.
    """

    def __init__(self, critics: Mapping[str, torch.nn.Module], optimizers: Mapping[str, torch.optim.Optimizer],
                 steps: int = 1) -> None:
        if set(critics) != set(optimizers):
            raise ValueError(f"critics {sorted(critics)} and optimizers {sorted(optimizers)} must have the same names")
        if steps < 1:
            raise ValueError("critic steps per generator step must be >= 1")
        self.critics = dict(critics)
        self.optimizers = dict(optimizers)
        self.steps = steps

    def update(self, loss: Callable[[str, int], torch.Tensor]) -> dict[str, float]:
        """Run the critic updates; returns ``{"critic/<name>": mean loss}``."""
        values: dict[str, list[float]] = {name: [] for name in self.critics}
        for k in range(self.steps):
            for name, critic in self.critics.items():
                opt = self.optimizers[name]
                opt.zero_grad(set_to_none=True)
                value = loss(name, k)
                value.backward()
                opt.step()
                clip = getattr(critic, "clip_", None)
                if callable(clip):
                    clip()
                values[name].append(value.item())
        return {f"critic/{name}": float(np.mean(v)) for name, v in values.items()}

    def frozen(self) -> contextlib.AbstractContextManager[None]:
        """A block in which no critic parameter takes gradients (the generator's step)."""
        return frozen(*self.critics.values())
