"""``xlsent align --gold``: the beads written scored against a gold alignment, one pair or a list, resumed or not."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from xlsent.align.job import DocPair, read_pairs_list
from xlsent.data.text_input import InputError
from xlsent.evaluation.align_gold import gold_scores
from xlsent.evaluation.bead_scores import bead_scores, strict_f1_interval

from .test_docalign import toy_embed


def _write(path: Path, lines: Sequence[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _pair(tmp: Path, name: str, n: int, m: int, out: Sequence[str], gold: Sequence[str]) -> DocPair:
    src = _write(tmp / f"{name}.src", [f"s{i}" for i in range(n)])
    tgt = _write(tmp / f"{name}.tgt", [f"s{j}" for j in range(m)])
    return DocPair.of(src, tgt, _write(tmp / f"{name}.beads", out), gold=_write(tmp / f"{name}.gold", gold))


def test_gold_scores_sum_the_counts_over_the_pairs(tmp_path: Path) -> None:
    """As the papers score the 7 documents of a test half: counts summed, not scores averaged."""
    one = _pair(tmp_path, "a", 3, 3, ["[0]:[0]:0.1", "[1]:[1]:0.1", "[2]:[2]:0.1"], ["[0]:[0]", "[1, 2]:[1, 2]"])
    two = _pair(tmp_path, "b", 2, 2, ["[0]:[0]:0.1", "[1]:[1]:0.1"], ["[0]:[0]", "[1]:[1]"])
    scores = gold_scores([one, two, DocPair.of(one.src.path, one.tgt.path, one.out)])  # a pair without gold: left out
    expected = bead_scores([[((0,), (0,)), ((1, 2), (1, 2))], [((0,), (0,)), ((1,), (1,))]],
                           [[((0,), (0,)), ((1,), (1,)), ((2,), (2,))], [((0,), (0,)), ((1,), (1,))]])
    assert {k: scores[k] for k in expected} == pytest.approx(expected)
    assert scores["strict_precision"] == pytest.approx(3 / 5) and scores["strict_recall"] == pytest.approx(3 / 4)
    assert scores["pairs"] == 2
    joined = strict_f1_interval([((0,), (0,)), ((1, 2), (1, 2)), ((3,), (3,)), ((4,), (4,))],
                                [((0,), (0,)), ((1,), (1,)), ((2,), (2,)), ((3,), (3,)), ((4,), (4,))])
    assert (scores["strict_f1_low"], scores["strict_f1_high"]) == pytest.approx(joined)


class Toy:
    name = id = "toy"
    dim = 64

    def encode(self, sentences: Sequence[str], lang: str | None = None, **_: object) -> np.ndarray:
        return toy_embed(sentences, lang)


def test_a_list_with_golds_is_scored_and_a_resumed_run_scores_what_it_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import xlsent.api
    from xlsent.cli import main

    monkeypatch.setattr(xlsent.api, "load", lambda model, backend: Toy())
    rows = []
    for name, (src, tgt, gold) in {"a": (["s0", "s1 s2", "s3"], ["s0", "s1", "s2", "s3"],
                                         ["[0]:[0]", "[1]:[1, 2]", "[2]:[3]"]),
                                   "b": (["s4", "s5"], ["s4", "s5"], ["[0]:[1]", "[1]:[0]"])}.items():
        _write(tmp_path / f"{name}.de", src)
        _write(tmp_path / f"{name}.en", tgt)
        _write(tmp_path / f"{name}.gold", gold)
        rows.append(f"{name}.de\t{name}.en\t{name}.beads\t{name}.gold")
    _write(tmp_path / "list.tsv", rows)
    first = xlsent.api.align(pairs=tmp_path / "list.tsv", progress=False)
    assert first.scores is not None and first.scores["pairs"] == 2
    assert first.scores["strict_precision"] == pytest.approx(3 / 5)  # pair b's gold crosses its lines: both wrong
    assert first.scores["strict_recall"] == pytest.approx(3 / 5)
    again = xlsent.api.align(pairs=tmp_path / "list.tsv", resume=True, progress=False)
    assert again.documents == 0 and again.skipped == 2 and again.scores == first.scores
    assert main(["align", str(tmp_path / "a.de"), str(tmp_path / "a.en"), "-o", str(tmp_path / "one.beads"), "-q",
                 "--gold", str(tmp_path / "a.gold")]) == 0
    assert "against the gold of 1 pair(s): strict precision 100.0, recall 100.0, F1 100.0" in capsys.readouterr().err


def test_a_header_naming_the_gold_column_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "list.tsv", ["src\ttgt\tout\tgold", "a.de\ta.en\ta.beads\ta.gold"])
    with pytest.raises(InputError, match="list.tsv:1: this row looks like a header"):
        read_pairs_list(tmp_path / "list.tsv")
