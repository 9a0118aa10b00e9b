"""What a sentence-transformers folder puts after its transformer, as one module that every backend exports with
the transformer: pooling (one mode or several, concatenated), then its dense layers (with their activation) and L2
normalisations in the folder's order.

Inputs are right-padded (xlsent pads on the right), so the first token is the CLS token and the last real token
sits at ``mask.sum() - 1``.

>>> head = SentenceHead(Pooling(("cls", "mean")), [])
>>> states = torch.tensor([[[1.0], [3.0], [9.0]]])
>>> head(states, torch.tensor([[1, 1, 0]])).tolist()
[[1.0, 2.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")
"""sentence-transformers' pooling modes, in the order it concatenates them."""
ACTIVATIONS: dict[str, type[nn.Module]] = {
    "torch.nn.modules.activation.Tanh": nn.Tanh,
    "torch.nn.modules.linear.Identity": nn.Identity,
    "torch.nn.modules.activation.ReLU": nn.ReLU,
    "torch.nn.modules.activation.GELU": nn.GELU,
    "torch.nn.modules.activation.Sigmoid": nn.Sigmoid,
}
"""The activation functions of a Dense module (as sentence-transformers names them) that xlsent builds."""


class Pooling(nn.Module):
    """Token states ``(batch, tokens, dim)`` and the attention mask -> ``(batch, dim * len(modes))``."""

    def __init__(self, modes: Sequence[str]) -> None:
        super().__init__()
        unknown = [m for m in modes if m not in POOLING_MODES]
        if unknown or not modes:
            raise ValueError(f"pooling modes {list(modes)}: choose among {', '.join(POOLING_MODES)}")
        self.modes = tuple(modes)

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask.unsqueeze(-1).to(states.dtype)
        out = [self._pool(mode, states, mask, m) for mode in self.modes]
        return out[0] if len(out) == 1 else torch.cat(out, dim=-1)

    @staticmethod
    def _pool(mode: str, states: torch.Tensor, mask: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        if mode == "cls":
            return states[:, 0]
        if mode == "max":
            return states.masked_fill(m == 0, float("-inf")).max(dim=1).values
        if mode == "lasttoken":
            last = (mask.sum(dim=1) - 1).clamp(min=0)
            return torch.gather(states, 1, last.view(-1, 1, 1).expand(-1, 1, states.shape[-1])).squeeze(1)
        weights = m * torch.cumsum(torch.ones_like(m), dim=1) if mode == "weightedmean" else m  # 1, 2, 3, ...
        total = weights.sum(dim=1).clamp(min=1e-9)
        return (states * weights).sum(dim=1) / (total.sqrt() if mode == "mean_sqrt_len_tokens" else total)


class Dense(nn.Module):
    """sentence-transformers' Dense module: ``activation(linear(x))``; its weights are named ``linear.*``."""

    def __init__(self, in_features: int, out_features: int, bias: bool, activation: str) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r} is not supported (supported: {', '.join(ACTIVATIONS)})")
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        self.activation = ACTIVATIONS[activation]()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.activation(self.linear(x))
        return out


class Normalize(nn.Module):
    """sentence-transformers' Normalize module: each row scaled to unit length."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, dim=-1)


class SentenceHead(nn.Module):
    """Pooling, then each of ``steps`` (:class:`Dense` and :class:`Normalize` modules) in order:
    ``(states, mask) -> vectors``."""

    def __init__(self, pooling: Pooling, steps: Sequence[Dense | Normalize]) -> None:
        super().__init__()
        self.pooling = pooling
        self.steps = nn.ModuleList(steps)

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.pooling(states, mask)
        for step in self.steps:
            x = step(x)
        return x
