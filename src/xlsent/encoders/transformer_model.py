"""A BERT/XLM-R style encoder in plain PyTorch, with Hugging Face parameter names.

Parameter names match ``transformers.XLMRobertaModel`` so one safetensors file serves xlsent and an
exported sentence-transformers folder. Attention uses ``scaled_dot_product_attention``.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn


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

    def to_hf_dict(self) -> dict[str, object]:
        """A ``config.json`` that ``transformers.AutoModel`` reads as an XLM-RoBERTa model."""
        out: dict[str, object] = dict(asdict(self))
        out.update(
            architectures=["XLMRobertaModel"],
            model_type="xlm-roberta",
            hidden_act="gelu",
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
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
        self.pad = cfg.pad_token_id

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        positions = torch.cumsum(mask, dim=1) * mask + self.pad
        x = self.word_embeddings(ids) + self.position_embeddings(positions)
        x = x + self.token_type_embeddings.weight[0]
        return self.LayerNorm(x)


class _SelfAttention(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        h = cfg.hidden_size
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.heads = cfg.num_attention_heads


class _Dense(nn.Module):
    def __init__(self, n_in: int, n_out: int, eps: float | None) -> None:
        super().__init__()
        self.dense = nn.Linear(n_in, n_out)
        if eps is not None:
            self.LayerNorm = nn.LayerNorm(n_out, eps=eps)


class _Attention(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.self = _SelfAttention(cfg)
        self.output = _Dense(cfg.hidden_size, cfg.hidden_size, cfg.layer_norm_eps)

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        b, n, h = x.shape
        heads = self.self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, heads, h // heads).transpose(1, 2)

        q, k, v = split(self.self.query(x)), split(self.self.key(x)), split(self.self.value(x))
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        ctx = ctx.transpose(1, 2).reshape(b, n, h)
        return self.output.LayerNorm(x + self.output.dense(ctx))


class _Layer(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.attention = _Attention(cfg)
        self.intermediate = _Dense(cfg.hidden_size, cfg.intermediate_size, None)
        self.output = _Dense(cfg.intermediate_size, cfg.hidden_size, cfg.layer_norm_eps)

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor) -> torch.Tensor:
        x = self.attention(x, attn_mask)
        mid = F.gelu(self.intermediate.dense(x))
        return self.output.LayerNorm(x + self.output.dense(mid))


class _Stack(nn.Module):
    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList(_Layer(cfg) for _ in range(cfg.num_hidden_layers))


class TransformerModel(nn.Module):
    """Token ids -> hidden states of every layer (embedding output first)."""

    def __init__(self, cfg: TransformerConfig) -> None:
        super().__init__()
        self.config = cfg
        self.embeddings = _Embeddings(cfg)
        self.encoder = _Stack(cfg)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, all_layers: bool = False) -> list[torch.Tensor]:
        """Return ``[last]`` or, with ``all_layers``, ``[embeddings, layer1, ..., layerN]``."""
        x = self.embeddings(ids, mask)
        attn_mask = mask[:, None, None, :].bool()
        states = [x]
        for layer in self.encoder.layer:
            x = layer(x, attn_mask)
            if all_layers:
                states.append(x)
        return states if all_layers else [x]


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
