"""A transformer backbone to fine-tune: fully, or through LoRA adapters (``peft``), and to save as a model dir.

Sentences become padded id batches exactly as ``TransformerEncoder`` builds them (prefix, ``<s>`` ... ``</s>``),
and ``forward`` mean-pools the last layer over every token the model sees, so a saved model encodes as the
trained module embeds (after the caller's L2 normalisation).

>>> import tempfile, pathlib, torch
>>> from xlsent.testing import make_tiny_model_dir
>>> model = TrainableTransformer(make_tiny_model_dir(pathlib.Path(tempfile.mkdtemp()) / "m"))
>>> ids, mask = model.batch(["the dog barks", "a cat"])
>>> tuple(model(ids, mask).shape), model(ids, mask).requires_grad
((2, 32), True)
"""

from __future__ import annotations

import copy
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn

from xlsent.atomic import atomic_path
from xlsent.encoders.batching import pad_batch
from xlsent.encoders.foreign import ForeignEncoder
from xlsent.encoders.lora import ADAPTER_FILE, LORA_TYPE
from xlsent.encoders.model_dir import write_manifest
from xlsent.encoders.registry import REGISTERED, with_relative
from xlsent.encoders.transformer import TransformerEncoder

log = logging.getLogger(__name__)

EMBED_BATCH = 64
_COPIED = ("config.json", "tokenizer.json", "tokenizer_config.json")
_RESERVED = ("type", "name", "encoder", "backbone", "lora", "files", "format_version")


class TrainableTransformer(nn.Module):
    """A trainable copy of a transformer encoder's model, with its tokenizer, prefix and special ids.

    Built from a model directory or a loaded ``TransformerEncoder`` (whose model is copied, so the encoder
    stays frozen and usable as an anchor). Dropout is the config's (0 in xlsent's model directories) until
    ``set_dropout``; the module starts in training mode, as every ``nn.Module`` does.
    """

    def __init__(self, source: str | Path | TransformerEncoder) -> None:
        super().__init__()
        encoder = source if isinstance(source, TransformerEncoder) else TransformerEncoder(source)
        if isinstance(encoder, ForeignEncoder):
            raise ValueError(f"{encoder.model_dir}: training from a {encoder.spec.kind} folder is not supported (its "
                             "pooling and tokenizer settings would not carry over); train from me5-small or an xlsent "
                             "model directory")
        self.model = copy.deepcopy(encoder.model) if encoder is source else encoder.model
        self.model.requires_grad_(True)
        self.tokenizer = encoder.tokenizer
        self.prefix, self.bos, self.eos, self.pad = encoder.prefix, encoder.bos, encoder.eos, encoder.pad
        self.max_tokens, self.dim, self.num_layers = encoder.max_tokens, encoder.dim, encoder.num_layers
        self.files_dir = encoder.files_dir
        self.encoder_block: dict[str, Any] = {"prefix": encoder.prefix, "pooling": "mean",
                                              "bos_id": encoder.bos, "eos_id": encoder.eos}
        is_registered = encoder.name in REGISTERED and encoder.manifest.get("type") == "transformer"
        self.backbone = {"ref": encoder.name if is_registered else str(encoder.model_dir.resolve()),
                         "id": encoder.id}
        self.lora: dict[str, Any] | None = None
        self.adapter_scale = 1.0
        self.train()

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def gradient_checkpointing(self) -> bool:
        """Recompute layer activations in the backward pass (training mode only) to save memory."""
        return self.model.gradient_checkpointing

    @gradient_checkpointing.setter
    def gradient_checkpointing(self, on: bool) -> None:
        self.model.gradient_checkpointing = on

    def set_dropout(self, hidden: float, attention: float) -> None:
        """Dropout probabilities for training (e5 and XLM-R used 0.1 for both); see ``TransformerModel``."""
        self.model.set_dropout(hidden, attention)

    def batch(self, sentences: Sequence[str], numbers: Sequence[int] | None = None
              ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(ids, mask)`` on this module's device, padded to the longest sentence.

        A sentence longer than the position window raises ValueError naming it by its position, or by its entry in
        ``numbers`` (filter long inputs beforehand).
        """
        encs = self.tokenizer.encode_batch([(self.prefix + s).strip() for s in sentences], add_special_tokens=False)
        limit = self.max_tokens - 2
        for i, e in enumerate(encs):
            if len(e.ids) > limit:
                number = i if numbers is None else numbers[i]
                raise ValueError(f"sentence {number} has {len(e.ids)} tokens; at most {limit} fit the model window "
                                 "(filter long inputs before batching)")
        ids, mask = pad_batch([[self.bos, *e.ids, self.eos] for e in encs], self.pad)
        return ids.to(self.device), mask.to(self.device)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Mean-pooled last layer ``(n, dim)`` with gradients, not normalised."""
        last = self.model(ids, mask)[0]
        m = mask.unsqueeze(-1).to(last.dtype)
        return (last * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)

    def embed(self, sentences: Sequence[str], micro_batch: int = 0) -> torch.Tensor:
        """``forward(*batch(sentences))``; with ``micro_batch`` > 0, that many sentences of similar length per
        forward pass (rows back in input order): the same vectors and gradients with less padding, since one long
        sentence no longer pads a whole batch (a training step over 64 news sentences took 1.5x less time).

        >>> import tempfile, pathlib
        >>> from xlsent.testing import make_tiny_model_dir
        >>> model = TrainableTransformer(make_tiny_model_dir(pathlib.Path(tempfile.mkdtemp()) / "m")).eval()
        >>> s = ["a", "the dog barks at the cat", "a cat", "dogs"]
        >>> torch.allclose(model.embed(s), model.embed(s, micro_batch=2), atol=1e-5)
        True
        """
        if micro_batch <= 0 or micro_batch >= len(sentences):
            return self(*self.batch(sentences))
        order = np.argsort([len(s) for s in sentences], kind="stable")
        chunks = [order[start : start + micro_batch] for start in range(0, len(order), micro_batch)]
        parts = [self(*self.batch([sentences[i] for i in rows], [int(i) for i in rows])) for rows in chunks]
        inverse = torch.from_numpy(np.argsort(order)).to(parts[0].device)
        return torch.cat(parts)[inverse]

    def vectors(self, sentences: Sequence[str], batch: int = EMBED_BATCH) -> np.ndarray:
        """Mean-pooled vectors ``(n, dim)`` float32 (not normalised) without gradients, in the module's current
        mode, ``batch`` sentences of similar length at a time (for validation during training)."""
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        order = np.argsort([len(s) for s in sentences], kind="stable")
        with torch.no_grad():
            for start in range(0, len(order), batch):
                rows = order[start : start + batch]
                out[rows] = self.embed([sentences[i] for i in rows]).float().cpu().numpy()
        return out

    def token_states(self, ids: torch.Tensor, mask: torch.Tensor, layer: int) -> torch.Tensor:
        """States ``(n, tokens, dim)`` of ``layer`` (0 = embeddings) for every position, with gradients."""
        return self.model(ids, mask, layers=[layer])[0]

    def apply_lora(self, r: int = 8, alpha: int = 16, dropout: float = 0.1,
                   target_modules: Sequence[str] = ("query", "key", "value", "dense")) -> None:
        """Add LoRA adapters (Hu et al., 2021) to the named Linear layers; only the adapters stay trainable.

        The adapted layer computes ``W x + (alpha / r) * B A x`` with ``A`` Gaussian and ``B`` zero at the start.
        """
        import peft

        if self.lora is not None:
            raise ValueError("LoRA adapters are already applied")
        config = peft.LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=list(target_modules))
        peft.inject_adapter_in_model(config, self.model)
        for name, p in self.model.named_parameters():
            p.requires_grad_(".lora_" in name)
        self.lora = {"r": r, "alpha": alpha, "dropout": dropout, "target_modules": list(target_modules)}

    def scale_adapters(self, scale: float) -> None:
        """Multiply every LoRA update by ``scale`` (``W + scale * (alpha / r) * B A``): 1 is the adapters as trained,
        0 the backbone, values between interpolate the weights (Wortsman et al. 2022, WiSE-FT); a saved model keeps
        the scale (its manifest's ``lora.alpha`` times it, ``lora.scale`` and ``lora.trained_alpha`` recorded)."""
        if self.lora is None:
            raise ValueError("scale_adapters needs LoRA adapters (apply_lora first)")
        if not 0 <= scale <= 1:
            raise ValueError(f"an adapter scale must be in [0, 1], not {scale}")
        from peft.tuners.lora import LoraLayer

        for module in self.model.modules():
            if isinstance(module, LoraLayer):
                module.set_scale("default", scale)
        self.adapter_scale = float(scale)

    def save(self, out_dir: str | Path, *, name: str, extra: dict[str, Any] | None = None) -> Path:
        """Write a model directory that ``xlsent.load`` reads; ``extra`` (e.g. hyper-parameters) joins the manifest.

        Without LoRA: a ``transformer`` directory (weights, config and tokenizer copied from the backbone).
        With LoRA: a ``transformer-lora`` directory holding only the adapter tensors and the backbone's ref and id.
        """
        extra = dict(extra or {})
        clash = sorted(set(extra) & set(_RESERVED))
        if clash:
            raise ValueError(f"extra manifest keys {clash} are reserved")
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        manifest: dict[str, Any]
        if self.lora is None:
            tensors = self.model.state_dict()
            weights = "model.safetensors"
            for file in _COPIED:
                if (self.files_dir / file).is_file():
                    with atomic_path(out / file) as tmp:
                        shutil.copyfile(self.files_dir / file, tmp)
            manifest = {"type": "transformer", "name": name, "backbone": dict(self.backbone),
                        "encoder": dict(self.encoder_block)}
        else:
            import peft

            tensors = peft.get_peft_model_state_dict(self.model)
            weights = ADAPTER_FILE
            lora = dict(self.lora)
            if self.adapter_scale != 1.0:
                lora |= {"alpha": self.lora["alpha"] * self.adapter_scale, "scale": self.adapter_scale,
                         "trained_alpha": self.lora["alpha"]}
            manifest = {"type": LORA_TYPE, "name": name, "backbone": with_relative(self.backbone, out), "lora": lora}
        with atomic_path(out / weights) as tmp:
            save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, str(tmp),
                      metadata={"format": "pt"})
        write_manifest(out, {**manifest, **extra})
        log.info("saved %s (%s) to %s", name, manifest["type"], out)
        return out
