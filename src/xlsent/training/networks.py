"""The small networks adversarial losses score with: a multi-layer perceptron, the shape of every critic and
discriminator the methods train (dual-pivot's and EMU's language critics, ABSent's pair discriminators).

>>> from torch import nn
>>> mlp(4, [8, 8], 1, activation=nn.ReLU, dropout=0.2)
Sequential(
  (0): Linear(in_features=4, out_features=8, bias=True)
  (1): ReLU()
  (2): Dropout(p=0.2, inplace=False)
  (3): Linear(in_features=8, out_features=8, bias=True)
  (4): ReLU()
  (5): Dropout(p=0.2, inplace=False)
  (6): Linear(in_features=8, out_features=1, bias=True)
)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from torch import nn


def mlp(dim_in: int, hidden: Sequence[int], dim_out: int, *, activation: Callable[[], nn.Module],
        dropout: float = 0.0) -> nn.Sequential:
    """Linear layers ``dim_in -> hidden... -> dim_out``, each hidden one followed by ``activation()`` and, when
    ``dropout`` > 0, dropout (no hidden layer: one linear map)."""
    if any(h < 1 for h in hidden):
        raise ValueError(f"hidden layer sizes must be >= 1, got {tuple(hidden)}")
    sizes = [dim_in, *hidden]
    layers: list[nn.Module] = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(n_in, n_out), activation()]
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
    layers.append(nn.Linear(sizes[-1], dim_out))
    return nn.Sequential(*layers)
