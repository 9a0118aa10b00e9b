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


def gold_beads(src: Sequence[Line], tgt: Sequence[Line]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The beads of two perturbed sides: lines sharing a parallel line id, transitively, form one bead; a line
    sharing none is a null bead."""
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
    groups: dict[int, tuple[list[int], list[int]]] = {}
    for node in range(len(parent)):
        side = 0 if node < len(src) else 1
        groups.setdefault(root(node), ([], []))[side].append(node - side * len(src))
    beads = []
    for s, t in groups.values():
        if s and t:
            beads.append((tuple(s), tuple(t)))
        else:
            beads += [((k,), ()) for k in s] + [((), (k,)) for k in t]
    return sorted(beads, key=lambda b: (b[0][0] if b[0] else b[1][0]))


def perturb(src: Sequence[str], tgt: Sequence[str], src_foreign: Sequence[str], tgt_foreign: Sequence[str],
            p: Perturbation, seed: int) -> tuple[list[str], list[str], list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """Both sides perturbed (independently, seeded) and their gold beads."""
    rng = np.random.default_rng(seed)
    s, t = perturb_side(src, src_foreign, p, rng), perturb_side(tgt, tgt_foreign, p, rng)
    return [text for text, _ in s], [text for text, _ in t], gold_beads(s, t)
