"""Which rows go into the batch of step ``s``: seeded functions of the step, so a resumed run draws the same.

- :func:`batch_indices`: fixed-size batches over one set, epochs of seeded permutations.
- :class:`TokenBudgetBatches`: LASER-style batches under a token budget, bucketed by length (little padding),
  per language pair, the pairs taking turns (LASER alternates over its pairs).
- :func:`step_generator`: a torch generator for any other draw of a step (negatives, interpolation points).

>>> sampler = TokenBudgetBatches({"de-en": [3, 9, 4, 8, 5], "fr-en": [2, 2]}, max_tokens=12, seed=0)
>>> [sampler.batch(d)[0] for d in range(4)]
['de-en', 'fr-en', 'de-en', 'fr-en']
>>> all(max(sampler.lengths["de-en"][i] for i in sampler.batch(d)[1]) * len(sampler.batch(d)[1]) <= 12
...     for d in range(0, 20, 2))
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
import torch


def derived_seed(seed: int, *keys: int) -> int:
    """A 63-bit seed derived from ``seed`` and ``keys`` (independent streams for distinct keys)."""
    return int(np.random.SeedSequence([seed, *keys]).generate_state(2, np.uint64)[0] >> np.uint64(1))


def step_generator(seed: int, step: int, stream: int = 0) -> torch.Generator:
    """A CPU torch generator whose state depends only on ``(seed, step, stream)``."""
    return torch.Generator().manual_seed(derived_seed(seed, step, stream))


def batch_indices(n: int, batch_size: int, draw: int, seed: int, stream: int = 0) -> np.ndarray:
    """Row indices of the ``draw``-th batch over ``n`` rows: epochs of seeded permutations, last partial dropped.

    Depends only on its arguments, so a resumed run sees the same batches. With ``n < batch_size`` every batch
    is a permutation of all rows.

    >>> first, second = batch_indices(10, 4, 0, seed=1), batch_indices(10, 4, 1, seed=1)
    >>> len(set(first) | set(second)), bool((batch_indices(10, 4, 0, seed=1) == first).all())
    (8, True)
    """
    if n <= 0:
        raise ValueError("cannot draw batches from an empty set")
    size = min(batch_size, n)
    per_epoch = n // size
    epoch, pos = divmod(draw, per_epoch)
    perm = np.random.default_rng(derived_seed(seed, stream, epoch)).permutation(n)
    return perm[pos * size : (pos + 1) * size]


def budget_batches(lengths: np.ndarray, order: np.ndarray, max_tokens: int, max_rows: int) -> list[np.ndarray]:
    """Cut ``order`` (rows sorted by length) into batches whose padded size ``longest * rows`` fits the budget.

    A row longer than ``max_tokens`` on its own gets a batch of its own (callers filter such rows beforehand).
    """
    batches: list[np.ndarray] = []
    start, longest = 0, 0
    for pos, row in enumerate(order):
        longest = max(longest, int(lengths[row]))
        rows = pos - start + 1
        if pos > start and (longest * rows > max_tokens or rows > max_rows):
            batches.append(order[start:pos])
            start, longest = pos, int(lengths[row])
    if start < len(order):
        batches.append(order[start:])
    return batches


class TokenBudgetBatches:
    """Batches of row indices per group (language pair) under a padded-token budget, groups taking turns.

    Each epoch of a group shuffles its rows with a seed of ``(seed, group, epoch)``, sorts them by length (ties
    keep the shuffled order), cuts batches under ``max_tokens`` (and ``max_rows``) and shuffles the batch order.
    Draw ``d`` takes group ``d mod G`` and that group's next batch, so the result depends only on ``d``.
    """

    def __init__(self, lengths: Mapping[str, Sequence[int]], max_tokens: int, seed: int = 0,
                 max_rows: int = 10_000) -> None:
        if not lengths or any(len(v) == 0 for v in lengths.values()):
            raise ValueError("every group needs at least one row")
        if max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        self.groups = list(lengths)
        self.lengths = {g: np.asarray(v, dtype=np.int64) for g, v in lengths.items()}
        self.max_tokens, self.seed, self.max_rows = max_tokens, seed, max_rows
        self._epoch = lru_cache(maxsize=2 * len(self.groups))(self._make_epoch)

    def _make_epoch(self, group: int, epoch: int) -> list[np.ndarray]:
        lengths = self.lengths[self.groups[group]]
        rng = np.random.default_rng(derived_seed(self.seed, group, epoch))
        order = rng.permutation(len(lengths))
        order = order[np.argsort(lengths[order], kind="stable")]
        batches = budget_batches(lengths, order, self.max_tokens, self.max_rows)
        return [batches[i] for i in rng.permutation(len(batches))]

    def batches_per_epoch(self, group: str) -> int:
        """How many batches one epoch of ``group`` has (the same every epoch: lengths fix the cuts)."""
        return len(self._epoch(self.groups.index(group), 0))

    def batch(self, draw: int) -> tuple[str, np.ndarray]:
        """``(group, row indices)`` of the ``draw``-th batch."""
        g = draw % len(self.groups)
        turn = draw // len(self.groups)
        per_epoch = self.batches_per_epoch(self.groups[g])
        epoch, pos = divmod(turn, per_epoch)
        return self.groups[g], self._epoch(g, epoch)[pos]
