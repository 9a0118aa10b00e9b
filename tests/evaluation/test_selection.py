"""Model-selection criteria on tiny matrices whose answers can be checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.evaluation.selection import (
    cosines,
    csls,
    csls_mean_cosine,
    mutual_nn_fraction,
    retrieval_criterion,
)


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_csls_matches_its_definition_computed_pair_by_pair() -> None:
    rng = np.random.default_rng(0)
    src, tgt = unit(rng.normal(size=(5, 4))), unit(rng.normal(size=(7, 4)))
    k = 3
    got = csls(cosines(src, tgt), k)
    for i in range(5):
        for j in range(7):
            r_t = np.mean(sorted((float(src[i] @ y) for y in tgt), reverse=True)[:k])
            r_s = np.mean(sorted((float(x @ tgt[j]) for x in src), reverse=True)[:k])
            assert got[i, j] == pytest.approx(2 * float(src[i] @ tgt[j]) - r_t - r_s, abs=1e-5)


def test_tilted_and_permuted_targets_csls_finds_the_planted_pairs() -> None:
    # Target i is source i tilted by 60 degrees into a direction of its own: cos 0.5 with it, 0 with the others.
    n, theta = 6, np.pi / 3
    src = np.eye(n, 2 * n)
    planted = np.cos(theta) * np.eye(n, 2 * n) + np.sin(theta) * np.eye(n, 2 * n, k=n)
    perm = np.roll(np.arange(n), 1)  # target row j holds the translation of source perm[j]
    tgt = planted[perm]
    assert csls(cosines(src, tgt)).argmax(axis=1).tolist() == np.argsort(perm).tolist()
    assert csls_mean_cosine(src, tgt) == pytest.approx(0.5)
    assert mutual_nn_fraction(src, tgt) == 1.0
    assert retrieval_criterion(src, tgt) == 0.0  # rows are not aligned: no source finds row i
    assert retrieval_criterion(src, planted) == 100.0


def test_csls_looks_past_a_hub_that_plain_nearest_neighbour_picks() -> None:
    # x_i = e_i + 1.2 u, y_i = e_i, hub h = u: cos(x_i, h) = 1.2/sqrt(2.44) > cos(x_i, y_i) = 1/sqrt(2.44),
    # but the hub is close to every source, so r_S(h) = 0.768 against r_S(y_i) = 0.320 with k = 2.
    n = 4
    u = np.eye(n + 1)[n]
    src = np.eye(n, n + 1) + 1.2 * u
    tgt = np.vstack([np.eye(n, n + 1), u])
    cos = cosines(src, tgt)
    assert cos.argmax(axis=1).tolist() == [n] * n
    assert csls(cos, k=2).argmax(axis=1).tolist() == list(range(n))
    assert csls_mean_cosine(src, tgt, k=2) == pytest.approx(1 / np.sqrt(2.44), abs=1e-6)


def test_aligned_sets_score_higher_than_rotated_or_unrelated_ones() -> None:
    rng = np.random.default_rng(1)
    src = rng.normal(size=(60, 16))
    aligned = src + 0.1 * rng.normal(size=src.shape)
    rotation, _ = np.linalg.qr(rng.normal(size=(16, 16)))
    unrelated = rng.normal(size=(60, 16))
    scores = {name: csls_mean_cosine(src, tgt) for name, tgt in
              [("aligned", aligned), ("rotated", aligned @ rotation), ("unrelated", unrelated),
               ("rotated back", aligned @ rotation @ rotation.T)]}
    assert scores["aligned"] > 0.9 > 0.6 > max(scores["rotated"], scores["unrelated"])
    assert scores["rotated back"] == pytest.approx(scores["aligned"], abs=1e-5)
    assert mutual_nn_fraction(src, aligned) == 1.0 and mutual_nn_fraction(src, unrelated) < 0.5
    assert retrieval_criterion(src, aligned) == 100.0 and retrieval_criterion(src, unrelated) < 20


def test_inputs_are_not_normalised_in_place() -> None:
    src = np.array([[3.0, 4.0], [0.0, 2.0]])
    before = src.copy()
    csls_mean_cosine(src, src)
    retrieval_criterion(src, src)
    assert np.array_equal(src, before)
