"""Lines a bracket holds together: which cuts fall inside a bracket, what the programme charges for one, and the
aligner keeping a sentence cut inside a parenthesis in one bead."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlsent.align.aligner import align_texts
from xlsent.align.band import full_band
from xlsent.align.brackets import REACH, bracket_cuts
from xlsent.align.config import AlignConfig
from xlsent.align.dp import best_beads

from .test_docalign import every_line_once, pairs_of, toy_embed


def _inside(lines: list[str]) -> list[int]:
    return np.flatnonzero(bracket_cuts(lines)).tolist()


@pytest.mark.parametrize(("lines", "inside"), [
    (["Das Buch ( London :", "Collins 1956 ) .", "Neu ."], [1]),
    (["Ein Bericht ( « Alpine Journal » No .", "293 , Nov .", "1956 , S. 340-343 ) .", "Neu ."], [1, 2]),
    (["a ( b ) c .", "d ."], []),                                   # closed on its own line
    (["a ( b", "c", "d", "e", "f ) ."], []),                        # closed beyond the reach: an OCR slip, nothing held
    (["a ( b", "c .", "d ."], []),                                  # never closed
    (["a ) b ( c", "d ) e ."], [1]),                                # a closing bracket with none open is ignored
    (["a ( b [ c", "d ] e", "f ) g ."], [1, 2]),                    # nested: held until the outer one closes
    (["（ 参见 ：", "伦敦 1955 ） 。"], [1]),                         # full-width
    (["« Er sagte :", "Nein . »"], []),                              # quotation marks hold nothing
    (["Schade :(", "Gut .", "Bis bald :)"], []),                    # nor faces
    (["( voir Izzard , 1955 .", ") 13. L' année 1955"], []),        # the splitter cut before the closing bracket
    (["a ( b", "c", ") d ."], [1]),                                 # ... only that last cut is free
])
def test_bracket_cuts(lines: list[str], inside: list[int]) -> None:
    assert _inside(lines) == inside
    assert bracket_cuts(lines).shape == (len(lines) + 1,)


def test_reach_counts_the_lines_after_the_opening_one() -> None:
    lines = ["a (", *(["b"] * (REACH - 1)), "c ) ."]
    assert _inside(lines) == list(range(1, REACH + 1))
    assert _inside(["a (", *(["b"] * REACH), "c ) ."]) == []


def test_the_programme_charges_a_cut_to_the_bead_ending_there() -> None:
    band, types = full_band(2, 2), np.array([[1, 1], [2, 2]], dtype=np.int64)
    costs = np.full((2, band.cells), np.inf, dtype=np.float32)
    costs[0, [4, 8]] = 0.1  # 1-1 beads ending in (1, 1) and (2, 2): cell i * 3 + j
    costs[1, 8] = 0.5       # the 2-2 bead
    free = best_beads(band, types, costs, 1.0)
    assert [(s, t) for s, t, _ in free] == [((0, 1), (0, 1)), ((1, 2), (1, 2))]
    small = best_beads(band, types, costs, 1.0, (np.array([0.0, 0.01, 0.0]), np.zeros(3)))
    assert [(s, t) for s, t, _ in small] == [((0, 1), (0, 1)), ((1, 2), (1, 2))]
    assert [c for _, _, c in small] == pytest.approx([0.11, 0.1])
    held = best_beads(band, types, costs, 1.0, (np.zeros(3), np.array([0.0, 1.0, 0.0])))
    assert [(s, t, c) for s, t, c in held] == [((0, 2), (0, 2), pytest.approx(0.5))]
    with pytest.raises(ValueError, match="one cost per row and per column"):
        best_beads(band, types, costs, 1.0, (np.zeros(2), np.zeros(3)))


def test_a_sentence_cut_inside_a_parenthesis_stays_in_one_bead() -> None:
    """The second half of the cut sentence (``s9``) has no counterpart: the encoder alone leaves it unpaired."""
    src = ["s0", "s1 s2 (", "s9 ) .", "s3", "s4"]
    tgt = ["s0", "s1 s2", "s3", "s4"]
    alone = align_texts(src, tgt, toy_embed, AlignConfig(bracket_cost=0.0), "a", "b")
    assert ((1,), (1,)) in pairs_of(alone) and ((2,), ()) in pairs_of(alone)
    beads = align_texts(src, tgt, toy_embed, None, "a", "b")
    assert pairs_of(beads) == [((0,), (0,)), ((1, 2), (1,)), ((3,), (2,)), ((4,), (3,))]
    every_line_once(beads, len(src), len(tgt))


def test_bracket_cost_reaches_xlsent_align(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import xlsent.api
    from xlsent.cli import main
    from xlsent.data.beads import read_beads

    class Toy:
        name = id = "toy"
        dim = 64

        def encode(self, sentences: Sequence[str], lang: str | None = None, **_: object) -> np.ndarray:
            return toy_embed(sentences, lang)

    monkeypatch.setattr(xlsent.api, "load", lambda model, backend: Toy())
    (tmp_path / "de.txt").write_text("s0\ns1 s2 (\ns9 ) .\ns3\ns4\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("s0\ns1 s2\ns3\ns4\n", encoding="utf-8")
    for flags, bead in (([], ((1, 2), (1,))), (["--bracket-cost", "0"], ((2,), ()))):
        out = tmp_path / f"out{len(flags)}.beads"
        assert main(["align", str(tmp_path / "de.txt"), str(tmp_path / "en.txt"), "-o", str(out), "-q", *flags]) == 0
        assert bead in [(b.src, b.tgt) for b in read_beads(out)]


def test_the_adaptive_span_flags_reach_the_alignment_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """--unsure-radius had no flag: the config's error named one no user could give."""
    import xlsent.api
    from xlsent.cli import main

    seen: list[AlignConfig] = []

    class Summary:
        def describe(self) -> str:
            return "aligned"

    def spy(*_: object, config: AlignConfig, **__: object) -> Summary:
        seen.append(config)
        return Summary()

    monkeypatch.setattr(xlsent.api, "align", spy)
    assert main(["align", "a.txt", "b.txt", "-o", str(tmp_path / "o"), "-q", "--unsure-share", "0.3",
                 "--unsure-radius", "2"]) == 0
    assert (seen[0].unsure_share, seen[0].unsure_radius) == (0.3, 2)
    assert main(["align", "a.txt", "b.txt", "-o", str(tmp_path / "o"), "--unsure-radius", "-1"]) == 2
    assert "--unsure-radius must be 0 or more, not -1" in capsys.readouterr().err


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab .:()[]（）", max_size=12), max_size=8))
def test_bracket_cuts_hold_only_inner_cuts_that_a_later_line_closes(lines: list[str]) -> None:
    inside = bracket_cuts(lines)
    assert inside.shape == (len(lines) + 1,) and not inside[0] and not inside[-1]
    for c in np.flatnonzero(inside):
        opened = [i for i in range(max(0, c - REACH), c) if "(" in lines[i] or "[" in lines[i] or "（" in lines[i]]
        assert opened, "a held cut has a line with an opening bracket before it"
