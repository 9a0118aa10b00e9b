"""The transformer encoder backend: any model directory holding an XLM-R style model (e.g. me5-small)."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from xlsent.data.empty_text import is_empty
from xlsent.encoders.backend_probe import auto_backend_of
from xlsent.encoders.backends import BACKENDS, TABLE_ARCHITECTURES, Runner, build_runner
from xlsent.encoders.base import l2_normalize, sentence_list
from xlsent.encoders.batching import Window, pad_batch, split_windows, token_budget_batches
from xlsent.encoders.hf_checkpoint import read_tensors, read_tokenizer
from xlsent.encoders.model_dir import ModelDirError, model_checksum, read_manifest, require_listed
from xlsent.encoders.transformer_model import TransformerConfig, TransformerModel
from xlsent.inference import DEFAULT_BATCH_TOKENS, id_suffix
from xlsent.languages import TrainedLanguages

log = logging.getLogger(__name__)


class TransformerEncoder:
    """Sentence encoder over a frozen transformer: prefix, mean pooling, L2 normalisation.

    Inputs longer than the position window are split into windows whose mean-pooled vectors are
    averaged (weighted by token count); how many were split is logged, nothing is cut.

    >>> import xlsent
    >>> enc = xlsent.load("me5-small")                       # doctest: +SKIP
    >>> v = enc.encode(["Der Hund bellt.", "The dog barks."])  # doctest: +SKIP
    >>> float(v[0] @ v[1]) > 0.8                              # doctest: +SKIP
    True
    """

    def __init__(self, model_dir: str | Path, *, name: str | None = None, verify: str = "cached",
                 languages: frozenset[str] | None = None) -> None:
        self._runner: Runner | None = None
        self.backend = "torch"
        self.model_dir = Path(model_dir)
        self.files_dir = self.model_dir  # where config.json and the tokenizer files live
        self.manifest: dict[str, Any] = read_manifest(self.model_dir, verify=verify)
        if verify != "none":  # the id is the checksum of the manifest's files: each file loaded must be one of them
            require_listed(self.manifest, self.model_dir, ("config.json", "model.safetensors", "tokenizer.json"))
        cfg_path = self.model_dir / "config.json"
        if not cfg_path.is_file():
            raise ModelDirError(f"{self.model_dir}: config.json is missing")
        self.config = TransformerConfig.from_json(cfg_path)
        self.model = TransformerModel(self.config)
        state = {k: v for k, v in read_tensors(self.model_dir / "model.safetensors").items()
                 if not k.startswith("pooler.")}
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise ModelDirError(f"{self.model_dir}: weights do not match config (missing {missing[:3]}, "
                                f"unexpected {unexpected[:3]})")
        self.model.eval()
        self.tokenizer = read_tokenizer(self.model_dir, self.config)
        enc_cfg = self.manifest.get("encoder", {})
        self.prefix: str = enc_cfg.get("prefix", "")
        self.bos: int = enc_cfg.get("bos_id", 0)
        self.eos: int = enc_cfg.get("eos_id", 2)
        self._describe(name or self.manifest.get("name", self.model_dir.name), model_checksum(self.manifest),
                       languages)

    def _describe(self, name: str, checksum: str, languages: frozenset[str] | None) -> None:
        """Set what follows from ``self.config`` and the model's name and checksum: the id, sizes and windows;
        vectors are mean-pooled (no ``head``) from the text as it is (no lowercasing)."""
        self.head: nn.Module | None = None
        self.lowercase = False
        self.pad: int = self.config.pad_token_id
        self.max_tokens: int = self.config.max_tokens
        self.name: str = name
        self.dim: int = self.config.hidden_size
        self.num_layers: int = self.config.num_hidden_layers
        self.checksum = checksum
        self.id: str = f"{self.name}@{self.checksum}"
        self.trained_languages = TrainedLanguages(self.name, languages) if languages else None

    def auto_backend(self) -> str:
        """``auto``'s backend for this model on this CPU: the shipped table's where its guard checked the
        architecture (:data:`~xlsent.encoders.backends.TABLE_ARCHITECTURES`) and it has a row for this CPU class,
        else this machine's own measurement on this model (:mod:`xlsent.encoders.backend_probe`)."""
        kind = self.config.model_type
        if kind not in TABLE_ARCHITECTURES:
            log.info("backend auto: the measured table checked %s models only, not %s; this model's own "
                     "measurement decides", ", ".join(sorted(TABLE_ARCHITECTURES)), kind)
        return auto_backend_of(self, f"{kind}-{self.config.hidden_size}x{self.num_layers}",
                               use_table=kind in TABLE_ARCHITECTURES)

    def use_backend(self, backend: str, *, threads: int | None = None,
                    layer_weights: np.ndarray | None = None) -> None:
        """Run ``encode`` on ``backend`` (one of ``backends.BACKENDS``), exporting its graph once if needed; with
        ``layer_weights`` (one per layer, embeddings first), ``encode`` pools their weighted mix of every layer
        instead of the last layer (on every backend, PyTorch included).

        Layer-wise and token-level outputs stay on PyTorch. An int8 or bf16 backend changes the vectors, so it becomes
        part of the encoder id (embedding files of two backends are not mixed by mistake).
        """
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        plain = backend == "torch" and layer_weights is None and self.head is None
        self._runner = None if plain else build_runner(
            backend, self.model, self.checksum, pad=self.pad, threads=threads, layer_weights=layer_weights,
            head=self.head, tokenize=lambda texts: [[self.bos, *ids, self.eos] for ids in self.content_ids(texts)])
        self.backend = backend
        self.id = f"{self.name}@{self.checksum}{id_suffix(backend)}"

    def _texts(self, sentences: Sequence[str]) -> list[str]:
        """What the tokenizer reads: ``prefix + sentence`` without surrounding whitespace (which the tokenizer would
        read as word marks: ``"x"`` and ``"x  "`` embed alike, as in sentence-transformers), lowercased where the model
        wants it."""
        texts = [(self.prefix + s).strip() for s in sentences]
        return [t.lower() for t in texts] if self.lowercase else texts

    def content_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Token ids of ``prefix + sentence`` without the special tokens."""
        encs = self.tokenizer.encode_batch(self._texts(sentences), add_special_tokens=False)
        return [e.ids for e in encs]

    def prefixed_ids(self, sentences: Sequence[str]) -> list[tuple[list[int], int]]:
        """Per sentence, the ids of ``prefix + sentence`` and how many of the leading ones encode the prefix.

        A token belongs to the prefix when it ends within the prefix's text without its trailing spaces:
        SentencePiece turns the prefix's final space into the word-start mark of the sentence's first token.
        """
        encs = self.tokenizer.encode_batch(self._texts(sentences), add_special_tokens=False)
        cut = len(self.prefix.rstrip())
        return [(e.ids, sum(1 for _, end in e.offsets if end <= cut)) for e in encs]

    def _windows(self, sentences: Sequence[str]) -> tuple[list[int], list[Window]]:
        keep = [i for i, s in enumerate(sentences) if not is_empty(s)]
        return keep, self._split(self.content_ids([sentences[i] for i in keep]))

    def _split(self, content: Sequence[Sequence[int]]) -> list[Window]:
        windows, n_long = split_windows(content, self.max_tokens - 2)
        if n_long:
            log.warning("%d input(s) longer than %d tokens were split into windows and averaged",
                        n_long, self.max_tokens)
        return windows

    def _run(self, windows: list[Window], batch_tokens: int, progress: bool, all_layers: bool,
             total: int) -> tuple[np.ndarray, np.ndarray]:
        """Per-window token sums ``(windows, layers, dim)`` (the head's vectors where there is a ``head``) and token
        counts."""
        n_layers = self.num_layers + 1 if all_layers else 1
        width = self.config.hidden_size if all_layers else self.dim
        sums = np.zeros((len(windows), n_layers, width), dtype=np.float32)
        lengths = [len(w.ids) + 2 for w in windows]
        batches = list(token_budget_batches(lengths, batch_tokens))
        padded = (pad_batch([[self.bos, *windows[i].ids, self.eos] for i in batch], self.pad) for batch in batches)
        bar = tqdm(total=total, disable=not progress, unit="sent", desc=f"encode {self.name}")
        with torch.inference_mode():
            if self._runner is not None and not all_layers:
                outputs: Iterator[np.ndarray] = (
                    out[:, None] for out in self._runner((ids.numpy(), mask.numpy()) for ids, mask in padded))
            else:
                outputs = (self._layer_sums(ids, mask, all_layers) for ids, mask in padded)
            done = 0  # windows encoded; the bar counts texts, whole numbers up to ``total``
            for batch, out in zip(batches, outputs, strict=True):
                sums[batch] = out
                done += len(batch)
                bar.update(done * total // max(len(windows), 1) - bar.n)
        bar.close()
        return sums, np.asarray(lengths, dtype=np.float32)

    def _layer_sums(self, ids: torch.Tensor, mask: torch.Tensor, all_layers: bool) -> np.ndarray:
        """``(batch, layers, dim)`` sums over the mask of the last layer's (or every layer's) token states, on
        PyTorch."""
        states = self.model(ids, mask, all_layers=all_layers)
        m = mask.unsqueeze(-1).to(states[0].dtype)
        out: np.ndarray = torch.stack([(s * m).sum(dim=1) for s in states], dim=1).numpy()
        return out

    def encode(self, sentences: Sequence[str], lang: str | None = None, *,
               batch_tokens: int = DEFAULT_BATCH_TOKENS, progress: bool = False) -> np.ndarray:
        """``(len(sentences), dim)`` float32 unit rows; empty sentences give zero rows. A ``lang`` outside the
        model's training languages (where the ``languages`` it was built with name them) is encoded all the same,
        with a warning logged once."""
        sentences = sentence_list(sentences)
        keep, windows = self._windows(sentences)
        return self._pooled(windows, keep, len(sentences), lang, batch_tokens, progress)

    def encode_content(self, content: Sequence[Sequence[int]], lang: str | None = None, *,
                       batch_tokens: int = DEFAULT_BATCH_TOKENS) -> np.ndarray:
        """As :meth:`encode`, for texts given as their :meth:`content_ids` (tokenized once, e.g. by a server
        that counted their tokens before queueing them); every row is a text's own, none is empty."""
        return self._pooled(self._split(content), list(range(len(content))), len(content), lang, batch_tokens, False)

    def _pooled(self, windows: list[Window], keep: list[int], rows: int, lang: str | None, batch_tokens: int,
                progress: bool) -> np.ndarray:
        """Unit mean-pooled rows (the head's, where there is one) of the texts ``keep`` (window-averaged, weighted by
        token count), zero rows elsewhere."""
        if self.trained_languages is not None:
            self.trained_languages.check(lang)
        out = np.zeros((rows, self.dim), dtype=np.float32)
        if not windows:
            return out
        sums, counts = self._run(windows, batch_tokens, progress, all_layers=False, total=len(keep))
        means = sums[:, 0, :] if self.head is not None else sums[:, 0, :] / counts[:, None]
        if len(windows) == len(keep):  # nothing was split: window i is text keep[i]
            out[keep] = l2_normalize(means)
            return out
        weights = np.array([max(len(w.ids), 1) for w in windows], dtype=np.float32)
        acc = np.zeros((len(keep), self.dim), dtype=np.float64)
        owner = np.array([w.sentence for w in windows])
        np.add.at(acc, owner, means * weights[:, None])
        out[keep] = l2_normalize(acc.astype(np.float32))
        return out

    def layer_pooled(self, sentences: Sequence[str], *, batch_tokens: int = DEFAULT_BATCH_TOKENS,
                     progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Sum-pooled token states of every layer ``(n, layers + 1, dim)`` and token counts ``(n,)``."""
        sums = np.zeros((len(sentences), self.num_layers + 1, self.config.hidden_size), dtype=np.float32)
        counts = np.zeros(len(sentences), dtype=np.float32)
        keep, windows = self._windows(sentences)
        if not windows:
            return sums, counts
        wsums, wcounts = self._run(windows, batch_tokens, progress, all_layers=True, total=len(keep))
        owner = np.array([keep[w.sentence] for w in windows])
        np.add.at(sums, owner, wsums)
        np.add.at(counts, owner, wcounts)
        return sums, counts

    def token_states(self, sentences: Sequence[str], layer: int, *, batch_tokens: int = DEFAULT_BATCH_TOKENS,
                     progress: bool = False, specials: bool = False) -> list[np.ndarray]:
        """Per sentence, a ``(tokens, dim)`` float32 array of the states of ``layer`` (0 = embeddings).

        By default only the sentence's own tokens are returned; ``specials=True`` adds the prefix tokens and
        ``<s>``/``</s>``, i.e. every token the model saw, so the rows sum to ``layer_pooled``'s sums.
        Empty (blank) sentences give ``(0, dim)`` arrays. A sentence that does not fit the position window
        raises ValueError (token states of windows would not be one sentence's states).
        """
        if not 0 <= layer <= self.num_layers:
            raise ValueError(f"layer {layer} is not in 0..{self.num_layers}")
        out = [np.zeros((0, self.config.hidden_size), dtype=np.float32) for _ in sentences]
        keep = [i for i, s in enumerate(sentences) if not is_empty(s)]
        encoded = self.prefixed_ids([sentences[i] for i in keep])
        for i, (seq, _) in zip(keep, encoded, strict=True):
            if len(seq) > self.max_tokens - 2:
                raise ValueError(f"sentence {i} has {len(seq)} tokens; at most {self.max_tokens - 2} fit the "
                                 "model window (token states are not windowed: shorten or drop it)")
        lengths = [len(seq) + 2 for seq, _ in encoded]
        bar = tqdm(total=len(keep), disable=not progress, unit="sent", desc=f"token states {self.name}")
        with torch.inference_mode():
            for batch in token_budget_batches(lengths, batch_tokens):
                ids, mask = pad_batch([[self.bos, *encoded[j][0], self.eos] for j in batch], self.pad)
                states = self.model(ids, mask, layers=[layer])[0].numpy()
                for row, j in enumerate(batch):
                    start, stop = (0, lengths[j]) if specials else (1 + encoded[j][1], lengths[j] - 1)
                    out[keep[j]] = states[row, start:stop].copy()
                bar.update(len(batch))
        bar.close()
        return out
