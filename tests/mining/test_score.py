"""``xlsent score``: the margins of given pairs, as LASER's ``mine_bitexts.py --mode score`` computes them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xlsent.cli import main
from xlsent.mining.faiss_index import two_pass_faiss_knn
from xlsent.testing import LookupEncoder

N, DIM = 60, 24


@pytest.fixture()
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, LookupEncoder]:
    """60 German-English pairs (planted: a shared direction plus noise; the last 20 mismatched), written as two
    files, and ``--model`` loading the encoder that knows their vectors."""
    rng = np.random.default_rng(11)
    base = rng.normal(size=(N, DIM))
    src = [f"de {i}" for i in range(N)]
    tgt = [f"en {i if i < 40 else 40 + (i + 7) % 20}" for i in range(N)]  # distinct lines
    table = {f"de {i}": base[i] + 0.3 * rng.normal(size=DIM) for i in range(N)}
    table |= {f"en {i}": base[i] + 0.3 * rng.normal(size=DIM) for i in range(N)}
    enc = LookupEncoder({k: list(v) for k, v in table.items()}, name="toy")
    monkeypatch.setattr("xlsent.api.load", lambda model, backend="auto": enc)
    (tmp_path / "de.txt").write_text("".join(s + "\n" for s in src), encoding="utf-8")
    (tmp_path / "en.txt").write_text("".join(t + "\n" for t in tgt), encoding="utf-8")
    return tmp_path / "de.txt", tmp_path / "en.txt", enc


def laser_score_mode(x: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """LASER's ``--mode score`` on the rows of ``x`` and ``y`` (one pair a row): FAISS k-NN both ways (its
    ``knnCPU``), ``score = cos / ((x2y_mean + y2x_mean) / 2)``."""
    knn = two_pass_faiss_knn(x, y, k)
    fwd_mean, bwd_mean = knn.fwd_sim.mean(axis=1), knn.bwd_sim.mean(axis=1)
    return np.array([x[i].dot(y[i]) / ((fwd_mean[i] + bwd_mean[i]) / 2) for i in range(len(x))])


def read_scores(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]


def test_scores_are_laser_score_mode_margins_in_input_order(toy: tuple[Path, Path, LookupEncoder],
                                                            tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, tgt, enc = toy
    out = tmp_path / "scored.tsv"
    assert main(["score", str(src), str(tgt), "-o", str(out), "-q"]) == 0
    rows = read_scores(out)
    src_lines, tgt_lines = src.read_text().splitlines(), tgt.read_text().splitlines()
    assert [(r[1], r[2]) for r in rows] == list(zip(src_lines, tgt_lines, strict=True))
    want = laser_score_mode(enc.encode(src_lines), enc.encode(tgt_lines), 4)
    np.testing.assert_allclose([float(r[0]) for r in rows], want, atol=1e-4)
    scores = np.array([float(r[0]) for r in rows])
    assert scores[:40].min() > scores[40:].max()  # translations score above mismatched pairs
    assert "60 of 60 pairs scored (ratio margin (k=4))" in capsys.readouterr().err


def test_a_pair_file_with_empty_sides_and_repeats(toy: tuple[Path, Path, LookupEncoder], tmp_path: Path) -> None:
    """A TSV of pairs: an empty side scores as missing (an empty cell) and is no neighbour; a repeated sentence is
    one sentence of the neighbourhoods (LASER's --unify)."""
    src, tgt, enc = toy
    pairs = list(zip(src.read_text().splitlines(), tgt.read_text().splitlines(), strict=True))
    pairs[5] = ("", pairs[5][1])
    pairs[9] = (pairs[9][0], "   ")
    pairs.append(pairs[3])
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("de\ten\n" + "".join(f"{a}\t{b}\n" for a, b in pairs), encoding="utf-8")
    out = tmp_path / "scored.tsv"
    assert main(["score", "--tsv", str(tsv), "--header", "-o", str(out), "-q"]) == 0
    rows = read_scores(out)
    assert len(rows) == len(pairs) and rows[5][0] == "" and rows[9][0] == ""
    kept = sorted({a for a, _ in pairs if a.strip()}), sorted({b for _, b in pairs if b.strip()})
    x, y = enc.encode(kept[0]), enc.encode(kept[1])
    knn = two_pass_faiss_knn(x, y, 4)
    means = dict(zip(kept[0], knn.fwd_sim.mean(axis=1), strict=True)), dict(zip(kept[1], knn.bwd_sim.mean(axis=1),
                                                                                 strict=True))
    for row, (a, b) in zip(rows, pairs, strict=True):
        if a.strip() and b.strip():
            cos = enc.encode([a])[0] @ enc.encode([b])[0]
            assert float(row[0]) == pytest.approx(cos / ((means[0][a] + means[1][b]) / 2), abs=1e-4)
    assert rows[-1] == rows[3]


def test_too_few_sentences_for_k_neighbours_gives_cosines(toy: tuple[Path, Path, LookupEncoder], tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    src, tgt, enc = toy
    small_src, small_tgt = tmp_path / "s.txt", tmp_path / "t.txt"
    small_src.write_text("de 1\nde 2\nde 3\n", encoding="utf-8")
    small_tgt.write_text("en 1\nen 2\nen 3\n", encoding="utf-8")
    out = tmp_path / "scored.tsv"
    assert main(["score", str(small_src), str(small_tgt), "-o", str(out), "-q"]) == 0
    assert "s.txt has 3 distinct sentence(s)" in caplog.text and "the scores are cosines" in caplog.text
    cos = [float(enc.encode([f"de {i}"])[0] @ enc.encode([f"en {i}"])[0]) for i in (1, 2, 3)]
    np.testing.assert_allclose([float(r[0]) for r in read_scores(out)], cos, atol=1e-6)


@pytest.mark.parametrize(("content", "flags", "message"), [
    ("a\tb\tc\n", ["--no-header"], "pairs.tsv:1: 3 column(s), expected 2"),
    ("a\tb\nonly one\n", ["--no-header"], "pairs.tsv:2: 1 column(s), expected 2"),
    ("src\ttgt\na\tb\n", [], "say whether line 1 of this TSV is a header"),
])
def test_a_bad_pair_file_is_refused_naming_the_line(toy: tuple[Path, Path, LookupEncoder], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str], content: str,
                                                    flags: list[str], message: str) -> None:
    tsv, out = tmp_path / "pairs.tsv", tmp_path / "scored.tsv"
    tsv.write_text(content, encoding="utf-8")
    assert main(["score", "--tsv", str(tsv), *flags, "-o", str(out), "-q"]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "scored.tsv.work").exists()


def test_sides_of_different_lengths_are_refused(toy: tuple[Path, Path, LookupEncoder], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    src, tgt, _ = toy
    short = tmp_path / "short.txt"
    short.write_text("en 1\nen 2\n", encoding="utf-8")
    out = tmp_path / "scored.tsv"
    assert main(["score", str(src), str(short), "-o", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert "de.txt has 60 rows and" in err and "short.txt 2: line i of one is paired with line i" in err
    assert not out.exists() and not (tmp_path / "scored.tsv.work").exists()
    assert main(["score", str(src), "-o", str(out), "-q"]) == 2
    assert "give the pairs as SRC TGT" in capsys.readouterr().err
