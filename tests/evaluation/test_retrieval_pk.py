"""ABSent's P@k retrieval task: ranks and P@k against brute force, both directions, rules, the real test sets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from xlsent.evaluation import retrieval_pk
from xlsent.evaluation.retrieval_pk import gold_ranks, pair_scores, precision_at_k
from xlsent.evaluation.runner import REGISTRY, evaluate_task
from xlsent.evaluation.task import EmbedFn
from xlsent.testing import dataset_or_skip


def _brute_ranks(scores: np.ndarray) -> list[int]:
    """Position of the gold column in each row sorted by decreasing score, ties kept in column order."""
    out = []
    for i, row in enumerate(scores.tolist()):
        order = sorted(range(len(row)), key=lambda j: -row[j])  # sorted() is stable
        out.append(order.index(i))
    return out


def test_ranks_and_precision_match_brute_force_with_ties() -> None:
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, size=(30, 30)).astype(np.float32)  # many ties
    ranks = gold_ranks(scores)
    assert ranks.tolist() == _brute_ranks(scores)
    p = precision_at_k(scores, (1, 5, 30))
    assert p[1] == pytest.approx(100 * np.mean(ranks == 0)) and p[30] == 100.0
    assert p[5] == pytest.approx(100 * np.mean(ranks < 5))
    with pytest.raises(ValueError, match="square"):
        gold_ranks(np.zeros((2, 3)))


def test_pair_scores_have_both_directions_and_every_rule() -> None:
    x = np.array([[1.0, 0.0], [0.9, 0.1]], dtype=np.float32)
    y = np.array([[0.8, 0.2], [0.1, 0.9]], dtype=np.float32)
    cos = (x / np.linalg.norm(x, axis=1, keepdims=True)) @ (y / np.linalg.norm(y, axis=1, keepdims=True)).T
    got = pair_scores(x, y, {"nn": retrieval_pk.nn_rule, "neg": lambda c: -c}, ks=(1,))
    assert got["x->y p@1"] == 100 * np.mean(cos.argmax(axis=1) == [0, 1])
    assert got["y->x p@1"] == 100 * np.mean(cos.argmax(axis=0) == [0, 1])
    assert got["mean p@1"] == (got["x->y p@1"] + got["y->x p@1"]) / 2
    assert got["neg x->y p@1"] == 100 * np.mean((-cos).argmax(axis=1) == [0, 1])
    assert got["pairs"] == 2.0
    with pytest.raises(ValueError, match="same shape"):
        pair_scores(x, y[:1], retrieval_pk.RULES)


def test_csls_rule_is_symmetric_in_the_directions() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(20, 6)), rng.normal(size=(20, 6))
    got = pair_scores(x, y, retrieval_pk.RULES)
    swapped = pair_scores(y, x, retrieval_pk.RULES)
    assert got["csls x->y p@5"] == swapped["csls y->x p@5"] and got["x->y p@1"] == swapped["y->x p@1"]


def _position_embed(reverse_lang: str | None) -> EmbedFn:
    """Row i -> e_i, reversed for ``reverse_lang``: then no query's translation is its nearest (even sets)."""
    def embed(sentences: Sequence[str], lang: str | None) -> np.ndarray:
        eye = np.eye(len(sentences), dtype=np.float32)
        return eye[::-1].copy() if lang == reverse_lang else eye

    return embed


@pytest.mark.data
def test_evaluate_on_the_real_sets_with_known_answers() -> None:
    root = dataset_or_skip("tatoeba_v1")
    dataset_or_skip("parallel")
    assert REGISTRY["retrieval_pk"] is retrieval_pk.RetrievalPk
    result = evaluate_task("retrieval_pk", _position_embed(None), encoder_id="pos", root=root,
                           langs=["deu", "news-de", "deu-spa"])
    assert result.main_score == 100.0 and set(result.scores) == {"deu", "news-de", "deu-spa"}
    assert [result.scores[s]["pairs"] for s in ("deu", "news-de", "deu-spa")] == [1000.0, 1600.0, 490.0]
    assert result.scores["deu"]["csls mean p@5"] == 100.0
    wrong = retrieval_pk.evaluate(_position_embed("es"), encoder_id="pos", root=root, langs=["news-de-es"])
    assert wrong.scores["news-de-es"]["mean p@1"] == 0.0  # 490 rows: e_i never meets e_(489-i)


def test_a_tatoeba_set_missing_from_the_data_is_named_with_its_files(tmp_path: Path) -> None:
    """`eval retrieval_pk --langs fra` on data without tatoeba.fra-eng.* said "unknown retrieval_pk set(s)"."""
    from xlsent.evaluation.task import NoDataError, UnknownSubsetError

    (tmp_path / "tatoeba_v1").mkdir()
    for side in ("deu", "eng"):
        (tmp_path / "tatoeba_v1" / f"tatoeba.deu-eng.{side}").write_text("a\n", encoding="utf-8")
    with pytest.raises(NoDataError, match=r"retrieval_pk set\(s\) \['fra'\] are not under .*"
                                          r"tatoeba_v1/tatoeba.fra-eng.fra, tatoeba_v1/tatoeba.fra-eng.eng missing"):
        retrieval_pk.RetrievalPk.check_data(langs=["fra"], root=tmp_path)
    with pytest.raises(UnknownSubsetError, match=r"unknown retrieval_pk set\(s\) \['zzz'\]"):
        retrieval_pk.RetrievalPk.check_data(langs=["zzz"], root=tmp_path)
    assert retrieval_pk.RetrievalPk.check_data(langs=["deu"], root=tmp_path) == ["deu"]
