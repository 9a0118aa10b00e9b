"""LASER's sentence encoder (paper 001): SentencePiece subwords, a stacked BiLSTM, max-pooling over time.

A model directory of type ``laser`` (written by ``xlsent train laser``) holds the SentencePiece model
(``spm.model``, protobuf, no pickle), the encoder weights (``encoder.safetensors``, float16 to keep the shipped
model small; computation is float32) and ``xlsent.json`` with the architecture. The sentence embedding is the
element-wise maximum over time of the last BiLSTM layer's outputs (both directions concatenated), so its size is
twice the hidden size per direction, or, for a student trained onto a teacher's vectors, a linear projection of it
to the teacher's size (``out_dim`` in the architecture). The encoder reads no language tag: one vocabulary and one
network for all languages, as in the paper. Inputs are never cut: an LSTM runs over any length (a very long line
costs time and memory in proportion to its length only).

>>> import torch
>>> net = BiLstmSentenceEncoder(vocab_size=20, embed_dim=8, hidden=4, layers=2)
>>> ids = torch.tensor([[5, 6, 3, 0], [7, 3, 0, 0]])                 # padded with 0, EOS = 3
>>> net(ids, torch.tensor([3, 2])).shape
torch.Size([2, 8])
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file
from torch import nn
from tqdm.auto import tqdm

from xlsent.data.empty_text import is_empty
from xlsent.encoders.base import l2_normalize, sentence_list
from xlsent.encoders.batching import token_budget_batches
from xlsent.encoders.model_dir import ModelDirError, model_checksum, read_manifest, require_listed
from xlsent.inference import id_suffix

log = logging.getLogger(__name__)

MODEL_TYPE = "laser"
ENCODER_FILE = "encoder.safetensors"
SPM_FILE = "spm.model"
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
"""SentencePiece ids fixed at training (``xlsent.methods.laser.vocab``): padding, unknown, begin and end."""
BATCHING: dict[str, tuple[int, float]] = {"torch": (4096, 1.2), "torch-bf16": (8192, 0.0)}
"""Backend -> (default padded tokens per batch, largest ratio of a batch's longest sentence to its shortest; 0: any).
An LSTM over a padded batch computes every padded step, so on fp32 batches of even lengths waste less; under bf16
autocast every batch also casts the weights again, so there fewer, larger batches win (the embed bench measures
both backends)."""
OWN_BACKENDS = ("torch", "torch-bf16")


class BiLstmSentenceEncoder(nn.Module):
    """Token ids ``(batch, time)`` and their lengths -> ``(batch, 2 * hidden)`` max-pooled BiLSTM states, projected
    linearly to ``out_dim`` when it is > 0."""

    def __init__(self, vocab_size: int, embed_dim: int = 320, hidden: int = 512, layers: int = 5,
                 dropout: float = 0.1, pad_id: int = PAD_ID, out_dim: int = 0) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.lstm = nn.LSTM(embed_dim, hidden, num_layers=layers, bidirectional=True, batch_first=True,
                            dropout=dropout if layers > 1 else 0.0)
        self.project = nn.Linear(2 * hidden, out_dim) if out_dim > 0 else None
        self.dim = out_dim if out_dim > 0 else 2 * hidden

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Every length must be >= 1 (sentences end with EOS, so even an empty one has a token).

        Runs on the padded batch, not a packed one (the packed path has no oneDNN kernel and no bf16 speed-up on
        CPUs): the forward direction reads the right-padded rows, the backward one each row's own tokens reversed
        (padding after them), so no state ever sees padding and a row's vector does not depend on its batch.
        """
        steps = ids.shape[1]
        positions = torch.arange(steps, device=ids.device)
        lengths = lengths.to(ids.device)
        valid = positions[None, :] < lengths[:, None]
        reverse = torch.where(valid, lengths[:, None] - 1 - positions[None, :], positions[None, :])
        x = self.dropout(self.embed(ids))
        for layer in range(self.lstm.num_layers):
            if layer:
                x = nn.functional.dropout(x, self.lstm.dropout, self.training)
            index = reverse[..., None].expand(-1, -1, x.shape[-1])
            forward = self._direction(x, layer, "")
            backward = self._direction(x.gather(1, index), layer, "_reverse")
            x = torch.cat([forward, backward.gather(1, reverse[..., None].expand_as(backward))], dim=-1)
        pooled = x.masked_fill(~valid[..., None], float("-inf")).max(dim=1).values
        return pooled if self.project is None else self.project(pooled)

    def _direction(self, x: torch.Tensor, layer: int, suffix: str) -> torch.Tensor:
        """Outputs ``(batch, time, hidden)`` of one direction of one layer of :attr:`lstm` over ``x``."""
        weights = [getattr(self.lstm, f"{name}_l{layer}{suffix}")
                   for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        zeros = x.new_zeros(1, x.shape[0], self.lstm.hidden_size)
        out, _, _ = torch.lstm(x, (zeros, zeros), weights, True, 1, 0.0, self.training, False, True)
        return out


def architecture(manifest: dict[str, Any]) -> dict[str, int]:
    """The encoder sizes recorded in a ``laser`` manifest (``out_dim`` 0 where it has none: no projection)."""
    arch = manifest.get("architecture", {})
    keys = ("vocab_size", "embed_dim", "hidden", "layers")
    if not all(isinstance(arch.get(k), int) for k in (*keys, *(["out_dim"] if "out_dim" in arch else []))):
        raise ModelDirError(f"manifest architecture must give integer {', '.join(keys)} (and out_dim); got {arch}")
    return {**{k: arch[k] for k in keys}, "out_dim": arch.get("out_dim", 0)}


def pad_batch(seqs: Sequence[Sequence[int]], pad_id: int = PAD_ID) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ids, lengths)``: the sequences right-padded into one long tensor, and their lengths.

    >>> pad_batch([[4, 3], [3]])
    (tensor([[4, 3],
            [3, 0]]), tensor([2, 1]))
    """
    lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
    ids = np.full((len(seqs), int(lengths.max())), pad_id, dtype=np.int64)
    ids[np.arange(ids.shape[1]) < lengths[:, None]] = np.fromiter(
        (t for s in seqs for t in s), dtype=np.int64, count=int(lengths.sum()))
    return torch.from_numpy(ids), torch.from_numpy(lengths)


class LaserEncoder:
    """Encoder of a ``laser`` model directory: unit rows of the max-pooled BiLSTM states, any language."""

    def __init__(self, model_dir: str | Path, *, verify: str = "cached", device: str = "cpu") -> None:
        import sentencepiece as spm

        self.model_dir = Path(model_dir)
        self.manifest = read_manifest(self.model_dir, verify=verify)
        if self.manifest["type"] != MODEL_TYPE:
            raise ModelDirError(f"{self.model_dir}: type {self.manifest['type']!r}, expected {MODEL_TYPE!r}")
        require_listed(self.manifest, self.model_dir, (ENCODER_FILE, SPM_FILE))
        arch = architecture(self.manifest)
        self.sp = spm.SentencePieceProcessor(model_file=str(self.model_dir / SPM_FILE))
        if self.sp.get_piece_size() != arch["vocab_size"]:
            raise ModelDirError(f"{self.model_dir / SPM_FILE}: {self.sp.get_piece_size()} pieces, the encoder "
                                f"expects {arch['vocab_size']}; write the model again")
        self.model = BiLstmSentenceEncoder(**arch, dropout=0.0)
        try:
            weights = load_file(str(self.model_dir / ENCODER_FILE))
            self.model.load_state_dict({k: v.float() for k, v in weights.items()})
        except Exception as exc:  # safetensors and load_state_dict raise several types for bad files
            raise ModelDirError(f"{self.model_dir / ENCODER_FILE}: cannot be loaded ({exc})") from exc
        self.device = torch.device(device)
        self.model.to(self.device).eval()
        self.name: str = self.manifest.get("name", self.model_dir.name)
        self.dim: int = self.model.dim
        self.id: str = f"{self.name}@{model_checksum(self.manifest)}"
        self.backend = "torch"

    def auto_backend(self) -> str:
        """``auto``'s choice for this encoder: on a CPU, the fastest backend that held the accuracy guard for LASER
        models on this kind of CPU in the measured backend table (``benchmarks/backend_bench.py --model
        models/laser-small``; :func:`xlsent.encoders.backends.backend_choice`), else this machine's own measurement
        (:mod:`xlsent.encoders.backend_probe`; PyTorch fp32 alone where the CPU has no native bf16); ``torch`` on
        GPUs."""
        from xlsent.encoders.backend_probe import auto_backend_of

        return auto_backend_of(self, f"{MODEL_TYPE}-{self.dim}", MODEL_TYPE, OWN_BACKENDS) \
            if self.device.type == "cpu" else "torch"

    def use_backend(self, backend: str) -> None:
        """Run on ``backend``: ``torch`` (fp32) or ``torch-bf16`` (bf16 autocast; lossy, so part of the id)."""
        if backend not in OWN_BACKENDS:
            raise ValueError(f"{self.name}: a LASER BiLSTM runs on {' or '.join(OWN_BACKENDS)} (or auto), not "
                             f"{backend!r}")
        from xlsent.encoders.backends import native_bf16

        if backend == "torch-bf16" and self.device.type == "cpu" and not native_bf16():
            raise ValueError(f"{self.name}: backend torch-bf16 needs a CPU with native bf16 (AMX or AVX512-BF16), "
                             "where PyTorch has a bf16 LSTM kernel; this CPU has neither: use --backend torch")
        self.backend = backend
        self.id = f"{self.name}@{model_checksum(self.manifest)}{id_suffix(backend)}"

    def token_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """SentencePiece ids of each sentence followed by EOS (an empty sentence is ``[EOS]``)."""
        return [ids + [EOS_ID] for ids in self.sp.encode(list(sentences))]

    def encode(self, sentences: Sequence[str], lang: str | None = None, *,
               batch_tokens: int | None = None, progress: bool = False) -> np.ndarray:
        """``(len(sentences), dim)`` float32 unit rows, row i for sentence i; empty sentences give zero rows.

        ``lang`` is accepted and not used (the encoder is language-agnostic). ``batch_tokens`` (padded tokens per
        batch) defaults to the backend's (:data:`BATCHING`).
        """
        sentences = sentence_list(sentences)
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        ids = self.token_ids(sentences)
        rows = [i for i, s in enumerate(sentences) if not is_empty(s)]
        default_tokens, ratio = BATCHING[self.backend]
        batches = list(token_budget_batches([len(ids[i]) for i in rows], batch_tokens or default_tokens,
                                            max_ratio=ratio))
        bf16 = self.backend == "torch-bf16"
        with torch.inference_mode(), torch.autocast(self.device.type, torch.bfloat16, enabled=bf16):
            for batch in tqdm(batches, disable=not progress, desc=f"encode {self.name}", unit="batch"):
                idx = [rows[j] for j in batch]
                tokens, lengths = pad_batch([ids[i] for i in idx])
                out[idx] = self.model(tokens.to(self.device), lengths).float().cpu().numpy()
        return l2_normalize(out)
