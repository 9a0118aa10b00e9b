"""LoRA model directories: adapter tensors over a named backbone, merged into its weights on load.

A ``transformer-lora`` directory holds ``adapter.safetensors`` (the ``lora_A``/``lora_B`` matrices of each
adapted Linear layer, as ``peft`` names them) and a manifest with the backbone's ref (registered name or
model directory) and id, and the LoRA hyper-parameters. Loading needs neither ``peft`` nor a training setup.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from xlsent.encoders.hf_checkpoint import read_tensors
from xlsent.encoders.model_dir import MANIFEST, ModelDirError, model_checksum, read_manifest
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.encoders.transformer_model import TransformerModel

LORA_TYPE = "transformer-lora"
ADAPTER_FILE = "adapter.safetensors"


def merge_lora(state: Mapping[str, torch.Tensor], adapter: Mapping[str, torch.Tensor], *, r: int,
               alpha: float) -> dict[str, torch.Tensor]:
    """``state`` with each adapted Linear weight replaced by ``W + (alpha / r) * B @ A`` (Hu et al., 2021, eq. 3).

    ``adapter`` maps ``<layer>.lora_A.weight`` ``(r, in)`` and ``<layer>.lora_B.weight`` ``(out, r)``;
    a missing partner, an unknown layer or a wrong shape is a ValueError. ``state`` is not modified.

    >>> w = {"l.weight": torch.zeros(2, 2), "l.bias": torch.ones(2)}
    >>> ab = {"l.lora_A.weight": torch.tensor([[1.0, 2.0]]), "l.lora_B.weight": torch.tensor([[1.0], [0.5]])}
    >>> merge_lora(w, ab, r=1, alpha=2)["l.weight"].tolist()
    [[2.0, 4.0], [1.0, 2.0]]
    """
    layers = {key.rsplit(".lora_", 1)[0] for key in adapter}
    unknown = sorted(set(adapter) - {f"{m}.lora_{x}.weight" for m in layers for x in "AB"})
    if unknown:
        raise ValueError(f"unexpected adapter tensors {unknown[:3]}")
    merged = dict(state)
    for m in sorted(layers):
        a, b, w = adapter.get(f"{m}.lora_A.weight"), adapter.get(f"{m}.lora_B.weight"), state.get(f"{m}.weight")
        if a is None or b is None:
            raise ValueError(f"{m}: adapter needs both lora_A and lora_B")
        if w is None:
            raise ValueError(f"{m}: the backbone has no such layer")
        if a.shape[0] != r or b.shape[1] != r or (b.shape[0], a.shape[1]) != tuple(w.shape):
            raise ValueError(f"{m}: A {tuple(a.shape)} and B {tuple(b.shape)} do not fit rank {r} and "
                             f"weight {tuple(w.shape)}")
        merged[f"{m}.weight"] = w + (alpha / r) * (b.to(w.dtype) @ a.to(w.dtype))
    return merged


class LoraEncoder(TransformerEncoder):
    """A backbone with LoRA adapters merged in; encodes exactly like a ``TransformerEncoder``.

    The backbone is loaded by its ref and must have the id recorded at training time, so a changed or
    different backbone is an error rather than silently different vectors.
    """

    def __init__(self, model_dir: str | Path, *, name: str | None = None, verify: str = "cached") -> None:
        from xlsent.encoders.registry import load_backbone

        directory = Path(model_dir)
        manifest = read_manifest(directory, verify=verify)
        try:
            ref, backbone_id = str(manifest["backbone"]["ref"]), str(manifest["backbone"]["id"])
            r, alpha = int(manifest["lora"]["r"]), float(manifest["lora"]["alpha"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelDirError(f"{directory / MANIFEST}: needs backbone.ref, backbone.id, lora.r and lora.alpha "
                                f"({exc!r})") from exc
        path = directory / ADAPTER_FILE
        adapter = read_tensors(path)
        backbone = load_backbone(directory, manifest["backbone"])
        if not isinstance(backbone, TransformerEncoder):
            raise ModelDirError(f"{directory}: backbone {ref!r} is not a transformer model")
        if backbone.id != backbone_id:
            raise ModelDirError(f"{directory}: adapters were trained on backbone {backbone_id}, but {ref!r} "
                                f"is {backbone.id}")
        try:
            merged = merge_lora(backbone.model.state_dict(), adapter, r=r, alpha=alpha)
        except ValueError as exc:
            raise ModelDirError(f"{path}: {exc}") from exc
        vars(self).update(vars(backbone))  # the backbone's config, tokenizer, prefix, special ids and files_dir
        self.model = TransformerModel(self.config)
        self.model.load_state_dict(merged)
        self.model.eval()
        self.model_dir, self.manifest = directory, manifest
        self.name = name or manifest.get("name", directory.name)
        self.checksum = model_checksum(manifest)
        self.id = f"{self.name}@{self.checksum}"
