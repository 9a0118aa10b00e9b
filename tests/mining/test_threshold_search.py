"""The F1-optimal threshold search of BUCC-style mining."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.mining.threshold_search import best_threshold


def test_best_threshold_is_the_f1_optimum_of_a_brute_force_sweep() -> None:
    rng = np.random.default_rng(3)
    scores, correct = rng.random(40), rng.random(40) < 0.4
    best = best_threshold(scores, correct.tolist(), n_gold=25)
    sweep = []
    for t in scores:
        kept = scores >= t
        p, r = correct[kept].sum() / kept.sum(), correct[kept].sum() / 25
        sweep.append(0.0 if p + r == 0 else 200 * p * r / (p + r))
    assert best.f1 == pytest.approx(max(sweep))


def test_no_candidate_or_no_gold_pair_scores_zero() -> None:
    assert best_threshold([], [], n_gold=3).f1 == 0.0
    assert best_threshold([0.5], [False], n_gold=0).threshold == float("inf")
