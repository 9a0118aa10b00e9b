"""A BERT/XLM-R style encoder in plain PyTorch, with Hugging Face parameter names.

Parameter names match ``transformers.XLMRobertaModel`` and ``transformers.BertModel`` so one safetensors file
serves xlsent and an exported sentence-transformers folder, and a BERT or XLM-R folder from elsewhere loads as it
is; the two differ in their position ids (:data:`ARCHITECTURES`). Attention uses ``scaled_dot_product_attention``.
Dropout sits where BERT has it (embedding output, attention probabilities, each dense output before its residual)
and is 0 by default, so inference is unchanged; training turns it on with ``set_dropout``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

ARCHITECTURES = {"xlm-roberta": "padding", "roberta": "padding", "bert": "zero"}
"""Hugging Face ``model_type`` -> where its position ids start: ``padding`` after the padding id (RoBERTa's
``padding_idx + 1``, counting real tokens only), ``zero`` at 0 (BERT)."""
ACTIVATIONS = {"gelu": "none", "gelu_new": "tanh", "gelu_pytorch_tanh": "tanh"}
"""Hugging Face ``hidden_act`` -> the ``approximate`` argument of ``F.gelu`` that computes it."""


@dataclass(frozen=True)
class TransformerConfig:
    """Architecture of the encoder (the subset of a Hugging Face config that matters)."""

    vocab_size: int = 250037
    hidden_size: int = 384
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 514
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 1
    hidden_dropout_prob: float = 0.0
    attention_probs_dropout_prob: float = 0.0
    model_type: str = "xlm-roberta"
    hidden_act: str = "gelu"

    @property
    def max_tokens(self) -> int:
        """The longest input (special tokens included) that has a position embedding."""
        if ARCHITECTURES[self.model_type] == "zero":
            return self.max_position_embeddings
        return self.max_position_embeddings - self.pad_token_id - 1

    def to_hf_dict(self) -> dict[str, object]:
        """A ``config.json`` that ``transformers.AutoModel`` reads as an XLM-RoBERTa model (the only kind xlsent
        writes)."""
        later = ("hidden_dropout_prob", "attention_probs_dropout_prob", "model_type", "hidden_act")
        out: dict[str, object] = {k: v for k, v in asdict(self).items() if k not in later}
        out.update(
            architectures=["XLMRobertaModel"],
            model_type=self.model_type,
            hidden_act=self.hidden_act,
            hidden_dropout_prob=self.hidden_dropout_prob,
            attention_probs_dropout_prob=self.attention_probs_dropout_prob,
            initializer_range=0.02,
            position_embedding_type="absolute",
            bos_token_id=0,
            eos_token_id=2,
        )
        return out

    @classmethod
    def from_json(cls, path: Path) -> TransformerConfig:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(**{k: raw[k] for k in cls.__dataclass_fields__ if k in raw})


class _Embeddings(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.position_embeddings = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
        self.token_type_embeddings = nn.Embedding(cfg.type_vocab_size, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.dropout = nn.Dropout(cfg.hidden_dropout_prob)
        self.pad = cfg.pad_token_id
        self.from_zero = ARCHITECTURES[cfg.model_type] == "zero"

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.from_zero:  # 0, 1, 2, ... (a cumulative sum rather than arange: exported graphs keep any length)
            positions = torch.cumsum(torch.ones_like(ids), dim=1) - 1
        else:
            positions = torch.cumsum(mask, dim=1) * mask + self.pad
        x = self.word_embeddings(ids) + self.position_embeddings(positions)
        x = x + self.token_type_embeddings.weight[0]
        return self.dropout(self.LayerNorm(x))


class _SelfAttention(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        h = cfg.hidden_size
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.heads = cfg.num_attention_heads
        self.dropout_p = cfg.attention_probs_dropout_prob


class _Dense(nn.Module):
    def __init__(self, n_in: int, n_out: int, eps: float | None, dropout: float = 0.0) -> None:
        super().__init__()
        self.dense = nn.Linear(n_in, n_out)
        if eps is not None:
            self.LayerNorm = nn.LayerNorm(n_out, eps=eps)
            self.dropout = nn.Dropout(dropout)

    def residual(self, x: torch.Tensor, inner: torch.Tensor) -> torch.Tensor:
        """``LayerNorm(x + dropout(dense(inner)))``: the output block of BERT's attention and feed-forward."""
        return self.LayerNorm(x + self.dropout(self.dense(inner)))


class _Attention(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.self = _SelfAttention(cfg)
        self.output = _Dense(cfg.hidden_size, cfg.hidden_size, cfg.layer_norm_eps, cfg.hidden_dropout_prob)

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        b, n, h = x.shape
        heads = self.self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, heads, h // heads).transpose(1, 2)

        q, k, v = split(self.self.query(x)), split(self.self.key(x)), split(self.self.value(x))
        dropout_p = self.self.dropout_p if self.training else 0.0
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)
        ctx = ctx.transpose(1, 2).reshape(b, n, h)
        return self.output.residual(x, ctx)


class _Layer(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.attention = _Attention(cfg)
        self.intermediate = _Dense(cfg.hidden_size, cfg.intermediate_size, None)
        self.output = _Dense(cfg.intermediate_size, cfg.hidden_size, cfg.layer_norm_eps, cfg.hidden_dropout_prob)
        self.approximate = ACTIVATIONS[cfg.hidden_act]

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        x = self.attention(x, attn_mask)
        return self.output.residual(x, F.gelu(self.intermediate.dense(x), approximate=self.approximate))


class _Stack(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList(_Layer(cfg) for _ in range(cfg.num_hidden_layers))


class TransformerModel(nn.Module):
    """Token ids -> hidden states of every layer (embedding output first).

    ``gradient_checkpointing`` recomputes each layer's activations in the backward pass instead of
    keeping them (less memory, about one more forward pass of time); it acts only in training mode.
    """

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.config = cfg
        self.embeddings = _Embeddings(cfg)
        self.encoder = _Stack(cfg)
        self.gradient_checkpointing = False

    def set_dropout(self, hidden: float, attention: float) -> None:
        """Set the dropout probabilities (BERT's ``hidden_dropout_prob`` and ``attention_probs_dropout_prob``).

        They act only in training mode; e5 and XLM-R were trained with 0.1 for both. Dropout modules that
        others add (e.g. LoRA adapters') keep their own probability.
        """
        for p in (hidden, attention):
            if not 0.0 <= p < 1.0:
                raise ValueError(f"dropout probability {p} is not in [0, 1)")
        for module in self.modules():
            if isinstance(module, _SelfAttention):
                module.dropout_p = attention
            elif isinstance(module, _Embeddings | _Dense) and hasattr(module, "dropout"):
                module.dropout.p = hidden

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, all_layers: bool = False,
                layers: Sequence[int] | None = None) -> list[torch.Tensor]:
        """Return ``[last]``; with ``all_layers``, ``[embeddings, layer1, ..., layerN]``; with ``layers``, those
        layers in the order given (0 = embeddings, N = last), computing no layer past the deepest one."""
        n = len(self.encoder.layer)
        if layers is not None:
            if all_layers:
                raise ValueError("pass either all_layers or layers, not both")
            bad = [i for i in layers if not 0 <= i <= n]
            if bad or not layers:
                raise ValueError(f"layers must be a non-empty list of indices in 0..{n}, got {list(layers)}")
        wanted = range(n + 1) if all_layers else [n] if layers is None else layers
        keep = set(wanted)
        x = self.embeddings(ids, mask)
        attn_mask = mask[:, None, None, :].bool()
        states = {0: x} if 0 in keep else {}
        recompute = self.gradient_checkpointing and self.training and torch.is_grad_enabled()
        for i, layer in enumerate(self.encoder.layer[: max(keep)], start=1):
            x = checkpoint(layer, x, attn_mask, use_reentrant=False) if recompute else layer(x, attn_mask)
            if i in keep:
                states[i] = x
        return [states[i] for i in wanted]


def init_random(model: nn.Module, seed: int = 0) -> None:
    """Initialise weights like BERT (normal 0.02), deterministically; used for tiny test models."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name:
                p.fill_(1.0 if name.endswith("weight") else 0.0)
            elif name.endswith("bias"):
                p.zero_()
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.02 * math.sqrt(1.0))
