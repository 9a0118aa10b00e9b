"""Encoders that xlsent did not write: a sentence-transformers folder or a Hugging Face model folder on disk.

The transformer runs as xlsent's own (:class:`TransformerModel`), and the folder's pooling, dense layers and
normalisation as a :class:`SentenceHead` in the same graph, so the folder runs on every backend, windows long
inputs at its ``max_seq_length``, and has an id carrying the checksum of every file it reads.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from xlsent.checksum import sha256_file
from xlsent.encoders.hf_checkpoint import base_model_state, read_tensors, read_tokenizer, special_ids
from xlsent.encoders.model_dir import BIG_FILE_BYTES, ModelDirError, cached_sha256
from xlsent.encoders.sentence_head import Dense, Normalize, Pooling, SentenceHead
from xlsent.encoders.st_folder import DenseSpec, FolderSpec, read_folder
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.encoders.transformer_model import TransformerModel


def folder_checksum(spec: FolderSpec) -> str:
    """A short id of every file the folder's encoder reads (big files hashed once per change, as model
    directories' weights are), and of a Normalize run before a Dense (:func:`normalizes_before_dense`): xlsent once
    ran such a folder's Dense first, so the graphs and vectors it cached under the files' id are not reused."""
    digests = {}
    for path in spec.files:
        big = path.stat().st_size >= BIG_FILE_BYTES
        digests[path.relative_to(spec.root).as_posix()] = cached_sha256(path) if big else sha256_file(path)
    if normalizes_before_dense(spec):
        digests["steps"] = "in the order of modules.json"
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()[:16]


def normalizes_before_dense(spec: FolderSpec) -> bool:
    """Whether a Normalize module comes before a Dense one in ``spec``'s steps."""
    kinds = [isinstance(step, DenseSpec) for step in spec.steps]
    return False in kinds and True in kinds[kinds.index(False):]


def build_head(spec: FolderSpec) -> SentenceHead:
    """The folder's pooling, then its dense layers (weights loaded) and normalisations in its order, as one module."""
    return SentenceHead(Pooling(spec.pooling), [dense_layer(s) if isinstance(s, DenseSpec) else Normalize()
                                                for s in spec.steps]).eval()


def dense_layer(d: DenseSpec) -> Dense:
    """One Dense module with its weights loaded."""
    layer = Dense(d.in_features, d.out_features, d.bias, d.activation)
    state = read_tensors(d.weights)
    try:
        layer.load_state_dict({k: v.float() for k, v in state.items()})
    except RuntimeError as exc:
        raise ModelDirError(f"{d.weights}: weights do not fit the Dense config ({exc})") from exc
    return layer


SIZE_MISMATCH = re.compile(r"size mismatch for (\S+): copying a param with shape torch\.Size\(\[(.*?)\]\) from "
                           r"checkpoint, the shape in current model is torch\.Size\(\[(.*?)\]\)")
"""How PyTorch reports a weight of another shape than the model's: its name, the file's shape, the model's."""


def load_weights(spec: FolderSpec) -> TransformerModel:
    """The folder's transformer with its weights, in eval mode; weights that are missing, unexpected or of another
    shape than the config says are a :class:`ModelDirError` naming both files."""
    config_path = spec.transformer / "config.json"
    try:
        model = TransformerModel(spec.config)
    except (RuntimeError, ValueError, TypeError) as exc:
        raise ModelDirError(f"{config_path}: describes no model xlsent can build ({exc})") from exc
    try:
        missing, unexpected = model.load_state_dict(base_model_state(spec.weights), strict=False)
    except RuntimeError as exc:  # a tensor of another shape than the config's
        found = SIZE_MISMATCH.findall(str(exc))
        shapes = [f"{name} is [{held}], the config makes [{made}]" for name, held, made in found]
        more = f" (and {len(shapes) - 2} more)" if len(shapes) > 2 else ""
        raise ModelDirError(f"{spec.weights[0]}: weights do not match {config_path}: "
                            f"{'; '.join(shapes[:2]) or exc}{more}") from None
    if missing or unexpected:
        raise ModelDirError(f"{spec.weights[0]}: weights do not match {config_path} "
                            f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
    return model.eval()


class ForeignEncoder(TransformerEncoder):
    """A sentence-transformers folder (``modules.json``) or a Hugging Face model folder, encoded as
    ``SentenceTransformer(folder).encode`` encodes it (then L2-normalised, as every xlsent encoder's rows are).

    >>> import xlsent
    >>> enc = xlsent.load("/models/LaBSE")             # doctest: +SKIP
    >>> enc.id, enc.dim                                # doctest: +SKIP
    ('LaBSE@3f0c9a1e52d7b804', 768)
    """

    def __init__(self, folder: str | Path, *, name: str | None = None) -> None:
        spec = read_folder(folder)
        self.spec = spec
        self._runner = None
        self.backend = "torch"
        self.model_dir = spec.root
        self.files_dir = spec.transformer
        self.manifest: dict[str, object] = {"type": spec.kind}
        self.config = spec.config
        self.model = load_weights(spec)
        self.tokenizer = read_tokenizer(spec.transformer, spec.config)
        self.prefix = spec.prompt
        self.bos, self.eos = special_ids(self.tokenizer, spec.transformer / "tokenizer.json")
        self._describe(name or spec.root.name, folder_checksum(spec), None)
        self.lowercase = spec.lowercase
        self.max_tokens = spec.max_seq_length
        self.dim = spec.dim
        if not spec.mean_pooled:  # xlsent's own mean pooling needs no head (and gives xlsent's vectors exactly)
            self.head = build_head(spec)
            self.use_backend("torch")
