"""Gradient caching (Gao et al. 2021, "Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup"):
a contrastive loss over a batch far larger than one forward pass fits in memory, with the same gradients.

The batch's vectors are computed chunk by chunk without a graph; the loss and its gradient with respect to those
vectors are computed once over the whole batch; then each chunk is run again with a graph and back-propagates its
slice of that gradient. Memory is that of one chunk (plus the batch's vectors), the cost about 4/3 of one forward
and backward pass. Each chunk's second pass restores the random state of its first, so dropout draws the same masks
(sentence-transformers' ``CachedMultipleNegativesRankingLoss`` does the same).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch


def length_chunks(sentences: Sequence[str], chunk: int) -> list[np.ndarray]:
    """Row indices of ``sentences`` in chunks of ``chunk`` (0 = one chunk) of similar length (less padding).

    >>> [c.tolist() for c in length_chunks(["aaa", "a", "aa", "aaaa"], 2)]
    [[1, 2], [0, 3]]
    """
    order = np.argsort([len(s) for s in sentences], kind="stable")
    size = chunk if chunk > 0 else max(1, len(order))
    return [order[start : start + size] for start in range(0, len(order), size)]


def cached_backward(embed: Callable[[list[str]], torch.Tensor], sentences: Sequence[str],
                    loss_of: Callable[[torch.Tensor], tuple[torch.Tensor, dict[str, torch.Tensor]]],
                    chunk: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Back-propagate ``loss_of(vectors of sentences)`` into ``embed``'s parameters, ``chunk`` sentences per forward
    pass; returns the loss and its terms, detached. ``embed`` maps sentences to ``(n, dim)`` vectors with gradients;
    ``loss_of`` gets the whole batch's vectors (float32, row i = sentence i) and returns the loss to minimise and
    the terms to log. The parameters' gradients equal those of ``loss_of(embed(sentences)).backward()``.

    >>> lin = torch.nn.Linear(1, 2)
    >>> feats = lambda s: torch.tensor([[float(len(t))] for t in s])
    >>> loss_of = lambda v: ((v ** 2).sum(), {})
    >>> _ = cached_backward(lambda s: lin(feats(s)), ["a", "bb", "ccc"], loss_of, chunk=1)
    >>> cached = lin.weight.grad.clone(); lin.zero_grad()
    >>> loss_of(lin(feats(["a", "bb", "ccc"])))[0].backward()
    >>> torch.allclose(cached, lin.weight.grad)
    True
    """
    chunks = length_chunks(sentences, chunk)
    states: list[torch.Tensor] = []
    parts: list[torch.Tensor] = []
    with torch.no_grad():
        for rows in chunks:
            states.append(torch.get_rng_state())
            parts.append(embed([sentences[i] for i in rows]).float())
    vectors = torch.empty(len(sentences), parts[0].shape[1], dtype=torch.float32, device=parts[0].device)
    for rows, part in zip(chunks, parts, strict=True):
        vectors[torch.from_numpy(rows).to(vectors.device)] = part
    leaf = vectors.requires_grad_()
    loss, terms = loss_of(leaf)
    loss.backward()
    grad = leaf.grad
    assert grad is not None
    for rows, state in zip(chunks, states, strict=True):
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(state)
            out = embed([sentences[i] for i in rows])
        out.backward(grad[torch.from_numpy(rows).to(grad.device)].to(out.dtype))
    return loss.detach(), {k: v.detach() for k, v in terms.items()}
