"""Sentence alignment of parallel documents (``xlsent align``): beads of consecutive lines, in document order.

The method, after Vecalign (Thompson & Koehn 2019) and Bertalign (Liu & Zhu 2022), each step in its own module:

- :mod:`~.overlaps`: embeddings of every span of up to ``max_beads - 1`` consecutive lines of each side, so a bead
  of several lines is scored by one vector per side; spans never cross an empty line.
- :mod:`~.normalise`: a bead's distance ``1 - cos`` divided by the mean distance of its two spans to their nearest
  lines in the other document near the path (or to random lines, as Vecalign), the mining margin's idea.
- :mod:`~.band` and :mod:`~.dp`: a dynamic programme over the cells of a band around a path found first on
  halved documents (recursively), so time and memory grow linearly with the documents' length.
- :mod:`~.aligner`: the steps put together, and empty lines put back as null beads.
- :mod:`~.job`: files in, bead files out (one pair, or a list of pairs with one model), written atomically.
"""
