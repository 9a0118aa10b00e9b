"""Alignment dev documents made from parallel lines: each side's lines merged, split, dropped and foreign lines
inserted at random (seeded), with the gold beads that follow from what was done.

>>> src, tgt, gold = perturb(["a b, c d e f g h i j k.", "x"], ["A B, C D E F G H I J K.", "X"], ["z"], ["Z"],
...                          Perturbation(merge=0, split=0, drop=0, insert=0), seed=1)
>>> src, gold
(['a b, c d e f g h i j k.', 'x'], [((0,), (0,)), ((1,), (1,))])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_SPLIT = re.compile(r"[,;:，；、。](?=\s*\S)")

Line = tuple[str, tuple[int, ...]]
"""A line of a perturbed side: its text and the ids of the parallel lines it came from (none: inserted)."""


@dataclass(frozen=True)
class Perturbation:
    """Chance per line of merging it into the line before, splitting it at a comma or semicolon near its middle,
    dropping it, and inserting a foreign line after it."""

    merge: float = 0.08
    split: float = 0.06
    drop: float = 0.03
    insert: float = 0.03


def split_point(text: str) -> int | None:
    """The index after the clause mark nearest the middle of ``text``, leaving 10 characters or more each side.

    >>> split_point("one two three, four five six seven")
    14
    >>> split_point("short, text") is None
    True
    """
    cuts = [m.end() for m in _SPLIT.finditer(text) if 10 <= m.end() <= len(text) - 10]
    return min(cuts, key=lambda c: abs(c - len(text) / 2)) if cuts else None


def perturb_side(lines: Sequence[str], foreign: Sequence[str], p: Perturbation, rng: np.random.Generator
                 ) -> list[Line]:
    """One side's lines with merges, splits, drops and insertions."""
    out: list[Line] = []
    for i, text in enumerate(lines):
        r = rng.random()
        cut = split_point(text)
        if r < p.drop:
            pass
        elif r < p.drop + p.merge and out and out[-1][1] and out[-1][1][-1] == i - 1:
            out[-1] = (f"{out[-1][0]} {text}", (*out[-1][1], i))
        elif r < p.drop + p.merge + p.split and cut is not None:
            out += [(text[:cut].strip(), (i,)), (text[cut:].strip(), (i,))]
        else:
            out.append((text, (i,)))
        if rng.random() < p.insert:
            out.append((foreign[int(rng.integers(len(foreign)))], ()))
    return out


def _bead_roots(src: Sequence[Line], tgt: Sequence[Line]) -> list[int]:
    """For every line of ``src`` then ``tgt``, the id of its bead: lines sharing a parallel line id, transitively,
    share one."""
    parent = list(range(len(src) + len(tgt)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    first: dict[int, int] = {}
    for node, (_, ids) in enumerate([*src, *tgt]):
        for i in ids:
            if i in first:
                parent[root(node)] = root(first[i])
            else:
                first[i] = node
    return [root(node) for node in range(len(parent))]


def gold_beads(src: Sequence[Line], tgt: Sequence[Line]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The beads of two perturbed sides: lines sharing a parallel line id, transitively, form one bead; a line
    sharing none is a null bead."""
    roots = _bead_roots(src, tgt)
    groups: dict[int, tuple[list[int], list[int]]] = {}
    for node, group in enumerate(roots):
        side = 0 if node < len(src) else 1
        groups.setdefault(group, ([], []))[side].append(node - side * len(src))
    beads = []
    for s, t in groups.values():
        if s and t:
            beads.append((tuple(s), tuple(t)))
        else:
            beads += [((k,), ()) for k in s] + [((), (k,)) for k in t]
    return sorted(beads, key=lambda b: (b[0][0] if b[0] else b[1][0]))


def keep_beads_whole(side: Sequence[Line], roots: Sequence[int]) -> list[Line]:
    """``side`` with every inserted line that falls between two lines of one bead (``roots``: each line's bead, as
    :func:`_bead_roots` gives them) moved to just after that bead, so that every gold bead is a run of consecutive
    lines, as an aligner's beads are.

    >>> keep_beads_whole([("a", (0,)), ("x", ()), ("b", (1,)), ("c", (2,))], [0, 1, 0, 3])
    [('a', (0,)), ('b', (1,)), ('x', ()), ('c', (2,))]
    """
    last = {roots[k]: k for k, (_, ids) in enumerate(side) if ids}
    out: list[Line] = []
    held: list[Line] = []
    open_until = -1
    for k, line in enumerate(side):
        if not line[1] and k < open_until:
            held.append(line)
            continue
        out.append(line)
        if line[1]:
            open_until = max(open_until, last[roots[k]])
            if k == open_until:
                out += held
                held = []
    return out + held


def perturb(src: Sequence[str], tgt: Sequence[str], src_foreign: Sequence[str], tgt_foreign: Sequence[str],
            p: Perturbation, seed: int) -> tuple[list[str], list[str], list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """Both sides perturbed (independently, seeded), every bead kept a run of consecutive lines
    (:func:`keep_beads_whole`), and their gold beads."""
    rng = np.random.default_rng(seed)
    s, t = perturb_side(src, src_foreign, p, rng), perturb_side(tgt, tgt_foreign, p, rng)
    roots = _bead_roots(s, t)
    s, t = keep_beads_whole(s, roots[:len(s)]), keep_beads_whole(t, roots[len(s):])
    return [text for text, _ in s], [text for text, _ in t], gold_beads(s, t)
