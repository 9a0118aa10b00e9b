"""Seeded batches: fixed-size epochs and LASER-style token-budget batches per language pair."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.training.batching import TokenBudgetBatches, batch_indices, budget_batches


def test_batch_indices_are_deterministic_epochs() -> None:
    draws = [batch_indices(10, 3, d, seed=5) for d in range(6)]
    assert all(len(d) == 3 for d in draws)
    assert len(set(np.concatenate(draws[:3]).tolist())) == 9  # an epoch never repeats a row
    np.testing.assert_array_equal(batch_indices(10, 3, 4, seed=5), draws[4])
    assert not np.array_equal(batch_indices(10, 3, 0, seed=5, stream=1), draws[0])
    assert sorted(batch_indices(4, 8, 7, seed=0).tolist()) == [0, 1, 2, 3]


def test_budget_cuts() -> None:
    lengths = np.array([2, 2, 3, 5, 5, 9])
    cuts = budget_batches(lengths, np.arange(6), max_tokens=10, max_rows=100)
    # [2,2,3]: 3*3=9 fits, +5 -> 5*4=20 no; [5,5]: 10 fits, +9 -> 27 no; [9]
    assert [c.tolist() for c in cuts] == [[0, 1, 2], [3, 4], [5]]
    assert [c.tolist() for c in budget_batches(lengths, np.arange(6), 100, max_rows=2)] == [[0, 1], [2, 3], [4, 5]]


def test_token_budget_batches_per_pair() -> None:
    rng = np.random.default_rng(0)
    lengths = {"de-en": rng.integers(3, 60, size=500).tolist(), "fr-en": rng.integers(3, 30, size=120).tolist()}
    sampler = TokenBudgetBatches(lengths, max_tokens=400, seed=7)
    groups = [sampler.batch(d)[0] for d in range(6)]
    assert groups == ["de-en", "fr-en"] * 3  # the pairs take turns, as LASER alternates
    per_epoch = sampler.batches_per_epoch("de-en")
    epoch = [sampler.batch(2 * i)[1] for i in range(per_epoch)]
    rows = np.concatenate(epoch)
    assert sorted(rows.tolist()) == list(range(500))  # one epoch covers every row once
    lens = np.asarray(lengths["de-en"])
    assert all(lens[b].max() * len(b) <= 400 for b in epoch)
    padded = sum(lens[b].max() * len(b) for b in epoch)
    assert lens.sum() / padded > 0.9  # bucketing by length: little padding
    again = TokenBudgetBatches(lengths, max_tokens=400, seed=7)
    assert all(np.array_equal(again.batch(d)[1], sampler.batch(d)[1]) for d in (0, 5, 2 * per_epoch + 2))
    assert not np.array_equal(sampler.batch(0)[1], sampler.batch(2 * per_epoch)[1])  # a new epoch reshuffles
    with pytest.raises(ValueError, match="at least one row"):
        TokenBudgetBatches({"x": []}, max_tokens=10)
