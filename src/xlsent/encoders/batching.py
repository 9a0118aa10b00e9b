"""Token-budget batching over length-sorted windows, padding, and the window split for over-long inputs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Window:
    """A slice of one sentence's content tokens, run as one model input."""

    sentence: int
    ids: list[int]


def split_windows(content: Sequence[Sequence[int]], max_content: int) -> tuple[list[Window], int]:
    """Split each sentence's token ids into windows of at most ``max_content`` tokens.

    Returns the windows and the number of sentences that needed more than one.

    >>> ws, n_long = split_windows([[1, 2, 3], [4]], max_content=2)
    >>> [(w.sentence, w.ids) for w in ws], n_long
    ([(0, [1, 2]), (0, [3]), (1, [4])], 1)
    """
    windows: list[Window] = []
    n_long = 0
    for i, ids in enumerate(content):
        if len(ids) > max_content:
            n_long += 1
        for start in range(0, max(len(ids), 1), max_content):
            windows.append(Window(i, list(ids[start : start + max_content])))
    return windows, n_long


def token_budget_batches(lengths: Sequence[int], batch_tokens: int, *, max_ratio: float = 0.0
                         ) -> Iterator[list[int]]:
    """Group item indices, longest first, so that ``count * longest`` stays within ``batch_tokens`` and, with
    ``max_ratio`` > 0, a batch's longest item is at most ``max_ratio`` times its shortest (less padding, for models
    whose cost grows with the padded length, such as an LSTM run over padded batches).

    Every batch holds at least one item, so an item longer than the budget still runs alone.

    >>> list(token_budget_batches([3, 10, 4, 9], batch_tokens=20))
    [[1, 3], [2, 0]]
    >>> list(token_budget_batches([3, 10, 4, 9], batch_tokens=100, max_ratio=1.5))
    [[1, 3], [2, 0]]
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batch: list[int] = []
    longest = 0
    for i in order:
        longest_if_added = max(longest, lengths[i])
        too_many = longest_if_added * (len(batch) + 1) > batch_tokens
        too_uneven = max_ratio > 0 and longest_if_added > max_ratio * lengths[i]
        if batch and (too_many or too_uneven):
            yield batch
            batch, longest_if_added = [], lengths[i]
        batch.append(i)
        longest = longest_if_added
    if batch:
        yield batch


def pad_batch(seqs: Sequence[Sequence[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token id lists to the longest: ``ids`` and attention ``mask``, both ``(n, longest)`` int64.

    >>> ids, mask = pad_batch([[0, 7, 2], [0, 2]], pad=1)
    >>> ids.tolist(), mask.tolist()
    ([[0, 7, 2], [0, 2, 1]], [[1, 1, 1], [1, 1, 0]])
    """
    width = max((len(s) for s in seqs), default=0)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids, mask
