"""Linear maps between sentence-embedding spaces (the classic baselines of ABSent, paper 003), and what every
mapping method shares: training data with a parallel share, input representations, language routing, the
training steps around a method's fit (:func:`train_mapping_on`, :func:`mapping_train`), the model directory and
its encoder.

The four baselines of ABSent's Tables 1 and 5, each a map W fitted on parallel rows (x_i W ~ y_i) plus a
retrieval rule (:data:`METHODS`):

- ``lsq``: least squares ``min_W ||X W - Y||^2`` (+ ridge), nearest neighbour (Mikolov, Le & Sutskever 2013);
- ``lsq-gc``: the same map, retrieval by globally corrected ranks (Dinu, Lazaridou & Baroni 2014);
- ``procrustes-isf``: orthogonal Procrustes ``W = U V^T`` from ``X^T Y = U S V^T``, retrieval by the inverted
  softmax (Smith et al. 2017);
- ``procrustes-csls``: orthogonal Procrustes, retrieval by CSLS (supervised MUSE, Lample et al. 2018);
- ``procrustes``: orthogonal Procrustes with nearest neighbour.

An encoder maps only: the retrieval rule is recorded in the model directory and applied by the ABSent study;
other consumers (``xlsent mine``, ``xlsent eval``) use their own scoring on the mapped vectors.

Training data (:func:`build_pair_data`) for ``pairs`` like ``["de-en"]`` (several pairs with one target
language for ABSent's zero-shot set-up) from one ``corpus``:

- ``short``: Tatoeba-Challenge test v2021-08-07 X-eng pairs (the paper's Tatoeba role); a pair without English is
  joined through identical English sentences;
- ``long``: WMT newstest 2008-2011, 2013, 2014 (the paper's Europarl role; newstest2012 is the test set);
- ``ntrex``: NTREX-128 (1997 lines per language: low-resource pairs such as ``kaz-en``).

Pairs with an empty side, repeated pairs and pairs with a side among the Tatoeba v1 test sentences or the
``retrieval_pk`` test sentences are dropped. ``parallel_ratio`` of the pairs (a seeded draw) are the parallel
set D_l, of which ``valid_pairs`` are held out for model selection; the rest are unlabelled: both sides are kept
as separate sentence pools, their alignment never used.

Inputs (``inputs``): ``encoder`` (the backbone's own sentence vectors, any Encoder), or ``average`` / ``tfidf``:
(TF-IDF weighted) averages of the backbone's static subword vectors, xlsent's stand-in for the paper's
fastText word vectors (:mod:`xlsent.encoders.static_average`; the idf is fitted on the training sentences and
stored in the model directory).

Language routing: a model maps each *source* language of its pairs into the space of the *target* language;
``encode(sentences, lang)`` maps the sentences when ``lang`` is a source language (compared by primary language,
so ``de`` and ``deu`` are the same) and returns the input vectors as they are for the target language or any
other language (logged once). ``lang`` is required: ``xlsent mine --src-lang de --tgt-lang en``.

>>> import numpy as np
>>> rot = np.array([[0.0, -1.0], [1.0, 0.0]])
>>> x = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
>>> np.allclose(fit_procrustes(x, x @ rot), rot), np.allclose(fit_least_squares(x, 3 * x), 3 * np.eye(2))
(True, True)
"""

from __future__ import annotations

import abc
import json
import logging
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from xlsent.atomic import atomic_open, atomic_path
from xlsent.encoders.base import Encoder, l2_normalize
from xlsent.encoders.cache import cached_encode, encoder_id, sentences_key
from xlsent.encoders.model_card import write_card
from xlsent.encoders.model_dir import ModelDirError, model_checksum, read_manifest, write_manifest
from xlsent.encoders.registry import encoder_reference
from xlsent.encoders.static_average import INPUTS, StaticAverageEncoder, fit_idf
from xlsent.encoders.transformer import DEFAULT_BATCH_TOKENS, TransformerEncoder
from xlsent.evaluation.retrieval_pk import RULES, ScoreRule, reserved_sentences
from xlsent.languages import base_lang
from xlsent.data.bitext import (
    TATOEBA_CHALLENGE,
    Bitext,
    Loader,
    bitext_sources,
    filter_pairs,
    parse_pair,
    tatoeba_v1_sentences,
)
from xlsent.paths import data_root
from xlsent.training.config import TrainConfig, build_config, to_toml
from xlsent.training.loop import CHECKPOINT_DIR
from xlsent.training.method import Method, TrainFn, model_manifest, prepare_output

log = logging.getLogger(__name__)

NAME = "linear-map"
CORPORA = ("short", "long", "ntrex")
METHODS: dict[str, tuple[str, str]] = {
    "lsq": ("least squares, nearest neighbour (Mikolov, Le & Sutskever 2013)", "nn"),
    "lsq-gc": ("least squares, globally corrected retrieval (Dinu, Lazaridou & Baroni 2014)", "gc"),
    "procrustes": ("orthogonal Procrustes, nearest neighbour (Xing et al. 2015)", "nn"),
    "procrustes-isf": ("orthogonal Procrustes, inverted softmax (Smith et al. 2017)", "isf"),
    "procrustes-csls": ("orthogonal Procrustes, CSLS (supervised MUSE, Lample et al. 2018)", "csls"),
}
"""Linear method -> (what it is, its retrieval rule)."""
ISF_BETAS = (1.0, 3.0, 10.0, 30.0, 100.0)
ISF_FIT_ROWS = 2000
MAP_FILE = "map.safetensors"
IDF_FILE = "idf.safetensors"
CONFIG_FILE = "config.toml"

# --- maps and retrieval rules ----------------------------------------------------------------------------------


def fit_least_squares(x: np.ndarray, y: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """``W`` (d_x, d_y) minimising ``||x W - y||^2 + ridge ||W||^2`` (Mikolov et al. 2013; ridge: Dinu et al.)."""
    x64, y64 = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if ridge > 0:
        gram = x64.T @ x64 + ridge * np.eye(x64.shape[1])
        return np.linalg.solve(gram, x64.T @ y64).astype(np.float32)
    return np.linalg.lstsq(x64, y64, rcond=None)[0].astype(np.float32)


def fit_procrustes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The orthogonal ``W`` minimising ``||x W - y||_F``: ``U V^T`` where ``x^T y = U S V^T`` (Schoenemann 1966;
    Xing et al. 2015, Smith et al. 2017, Lample et al. 2018)."""
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"Procrustes needs spaces of one dimension, got {x.shape[1]} and {y.shape[1]}")
    u, _, vt = np.linalg.svd(np.asarray(x, dtype=np.float64).T @ np.asarray(y, dtype=np.float64))
    return (u @ vt).astype(np.float32)


def globally_corrected(cos: np.ndarray) -> np.ndarray:
    """Dinu et al. (2014)'s globally corrected retrieval: target j ranks the queries by cosine, and query i takes
    the target where it ranks best; ties are broken by cosine. Scores: ``-rank + cos / 4`` (rank 0 = best, the
    cosine term never crosses a rank). The pool of queries is the rows of ``cos`` (the test queries).

    >>> globally_corrected(np.array([[0.9, 0.8], [0.95, 0.1]])).argmax(axis=1).tolist()
    [1, 0]
    """
    ranks = np.argsort(np.argsort(-cos, axis=0, kind="stable"), axis=0, kind="stable")
    return -ranks.astype(np.float32) + cos / 4


def inverted_softmax(cos: np.ndarray, beta: float) -> np.ndarray:
    """Smith et al. (2017)'s inverted softmax, as log-probabilities: ``log P(y_j | x_i)`` with
    ``P(y_j | x_i) = exp(beta cos_ij) / sum_m exp(beta cos_mj)``, normalised over the queries m for each target.

    >>> inverted_softmax(np.array([[0.9, 0.8], [0.95, 0.1]]), beta=10.0).argmax(axis=1).tolist()
    [1, 0]
    """
    z = beta * np.asarray(cos, dtype=np.float64)
    top = z.max(axis=0, keepdims=True)
    return z - (top + np.log(np.exp(z - top).sum(axis=0, keepdims=True)))


def fit_isf_beta(cos: np.ndarray, betas: Sequence[float] = ISF_BETAS) -> float:
    """The inverse temperature maximising the mean ``log P(y_i | x_i)`` of training pairs (row i pairs with
    column i), as Smith et al. (2017) learn beta on their training dictionary."""
    return max(betas, key=lambda b: float(np.mean(np.diagonal(inverted_softmax(cos, b)))))


def retrieval_rule(name: str, beta: float = 10.0) -> ScoreRule:
    """The scoring rule ``nn``, ``csls``, ``gc`` or ``isf`` (with ``beta``) over a cosine matrix."""
    if name in RULES:
        return RULES[name]
    if name == "gc":
        return globally_corrected
    if name == "isf":
        return lambda cos: inverted_softmax(cos, beta)
    raise ValueError(f"unknown retrieval rule {name!r}: nn, csls, gc or isf")


def fit_linear(method: str, x: np.ndarray, y: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """The map of ``method`` (a :data:`METHODS` key) fitted on row-aligned parallel vectors."""
    if method not in METHODS:
        raise ValueError(f"unknown linear method {method!r}; methods: {', '.join(METHODS)}")
    return fit_least_squares(x, y, ridge) if method.startswith("lsq") else fit_procrustes(x, y)


# --- the configuration every mapping method shares ------------------------------------------------------------


@dataclass
class MappingConfig(TrainConfig):
    """Data, inputs and backbone of a mapping method; ``configs/linear_map.toml`` and ``absent.toml`` document them."""

    backbone: str = "me5-small"
    inputs: str = "encoder"
    pairs: list[str] = field(default_factory=lambda: ["de-en"])
    corpus: str = "short"
    max_pairs: int | None = None
    parallel_ratio: float = 1.0
    valid_pairs: int = 0

    def problems(self) -> list[str]:
        out = super().problems()
        if self.inputs not in INPUTS:
            out.append(f"inputs must be one of {INPUTS}, not {self.inputs!r}")
        if self.corpus not in CORPORA:
            out.append(f"corpus must be one of {CORPORA}, not {self.corpus!r}")
        if not 0 < self.parallel_ratio <= 1:
            out.append("parallel_ratio must be in (0, 1]")
        if self.valid_pairs < 0 or (self.max_pairs is not None and self.max_pairs < 2):
            out.append("valid_pairs must be >= 0 and max_pairs >= 2")
        try:
            parsed = [parse_pair(p) for p in self.pairs]
        except ValueError as exc:
            return [*out, str(exc)]
        if not parsed:
            out.append("pairs is empty")
        elif len({t for _, t in parsed}) != 1 or len({s for s, _ in parsed}) != len(parsed):
            out.append(f"pairs {self.pairs} must share one target language and have distinct source languages")
        return out

    @property
    def sources(self) -> list[str]:
        return [parse_pair(p)[0] for p in self.pairs]

    @property
    def target(self) -> str:
        return parse_pair(self.pairs[0])[1]


# --- training data ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairData:
    """Every training pair of one language pair (``bitext``, canonical order) and how its rows are used:
    ``labelled`` rows are the parallel set D_l, ``valid`` rows (taken from D_l's share) pick the checkpoint, and
    ``unlabelled`` rows contribute their two sides as unaligned sentence pools."""

    bitext: Bitext
    labelled: np.ndarray
    unlabelled: np.ndarray
    valid: np.ndarray

    @property
    def pool(self) -> np.ndarray:
        """Rows whose sentences (each side on its own) are the unlabelled-plus-labelled pools."""
        return np.sort(np.concatenate([self.labelled, self.unlabelled]))


Sides = tuple[list[str], list[str]]


def _ntrex_code(code: str) -> str:
    return "eng" if code == "en" else TATOEBA_CHALLENGE.get(code, code)


def _joined_through_english(a: Sides, b: Sides) -> Sides:
    """X-Y pairs from X-en and Y-en pairs sharing an English sentence (the first translation of each side)."""
    firsts = []
    for xs, ens in (a, b):
        first: dict[str, str] = {}
        for x, e in zip(xs, ens, strict=True):
            first.setdefault(e.strip(), x)
        firsts.append(first)
    common = sorted(firsts[0].keys() & firsts[1].keys())
    return [firsts[0][e] for e in common], [firsts[1][e] for e in common]


def corpus_sources(pair: str, corpus: str, root: Path) -> dict[str, Loader]:
    """Loaders of the ``corpus`` bitexts holding ``pair`` (see the module docstring), each -> (src side, tgt side)."""
    a, b = parse_pair(pair)
    if corpus == "ntrex":
        from xlsent.data.parallel import load_ntrex

        return {"ntrex128": lambda: load_ntrex(_ntrex_code(a), _ntrex_code(b), root=root)}
    if corpus == "long":
        return {k: v for k, v in bitext_sources(a, b, root).items() if k.startswith("newstest")}
    if "en" in (a, b):
        return {k: v for k, v in bitext_sources(a, b, root).items() if k == "tatoeba-challenge"}
    load_a = bitext_sources(a, "en", root).get("tatoeba-challenge")
    load_b = bitext_sources(b, "en", root).get("tatoeba-challenge")
    if load_a is None or load_b is None:
        return {}
    return {"tatoeba-challenge via en": lambda: _joined_through_english(load_a(), load_b())}


def corpus_bitext(pair: str, corpus: str, root: str | Path | None = None, *, banned: set[str] | None = None,
                  max_pairs: int | None = None, seed: int = 0) -> Bitext:
    """The filtered training bitext of ``pair`` in ``corpus`` (a seeded subset of ``max_pairs`` if set)."""
    base = data_root(root)
    sources = corpus_sources(pair, corpus, base)
    if not sources:
        raise ValueError(f"no {corpus} bitext for {pair} in {base / 'parallel'}")
    banned = held_out_sentences(base) if banned is None else banned
    src, tgt, per_source = filter_pairs(pair, sources, banned, banned_key="held_out_removed")
    if max_pairs is not None and len(src) > max_pairs:
        rows = np.sort(np.random.default_rng(seed).choice(len(src), max_pairs, replace=False))
        src, tgt = [src[i] for i in rows], [tgt[i] for i in rows]
    a, b = parse_pair(pair)
    log.info("%s %s bitext: %d pairs (%s)", corpus, pair, len(src), per_source)
    return Bitext(src, tgt, a, b, {"corpus": corpus, "pairs": len(src), "sources": per_source})


def held_out_sentences(root: str | Path | None = None) -> set[str]:
    """Sentences no mapping method trains on: every Tatoeba v1 test sentence and the ``retrieval_pk`` test sets."""
    base = data_root(root)
    return tatoeba_v1_sentences(base) | reserved_sentences(base)


def split_rows(n: int, parallel_ratio: float, valid_pairs: int, seed: int) -> tuple[np.ndarray, ...]:
    """``(labelled, unlabelled, valid)`` sorted row indices: a seeded ``parallel_ratio`` share of the rows is D_l,
    of which ``valid_pairs`` are held out.

    >>> [r.tolist() for r in split_rows(10, 0.5, 1, seed=0)]
    [[2, 3, 6, 7], [0, 1, 5, 8, 9], [4]]
    """
    perm = np.random.default_rng(seed).permutation(n)
    n_l = max(int(round(parallel_ratio * n)), 1)
    if n_l - valid_pairs < 2:
        raise ValueError(f"{n} pairs at parallel_ratio {parallel_ratio} leave {n_l - valid_pairs} parallel training "
                         f"pairs after {valid_pairs} held out: need at least 2")
    return np.sort(perm[valid_pairs:n_l]), np.sort(perm[n_l:]), np.sort(perm[:valid_pairs])


def build_pair_data(config: MappingConfig, root: str | Path | None = None, *, banned: set[str] | None = None
                    ) -> list[PairData]:
    """Training data of every pair of ``config`` (see :func:`corpus_bitext`, :func:`split_rows`); ``banned``
    defaults to :func:`held_out_sentences`."""
    base = data_root(root)
    banned = held_out_sentences(base) if banned is None else banned
    out = []
    for i, pair in enumerate(config.pairs):
        bitext = corpus_bitext(pair, config.corpus, base, banned=banned, max_pairs=config.max_pairs,
                               seed=config.seed + i)
        labelled, unlabelled, valid = split_rows(len(bitext.src), config.parallel_ratio, config.valid_pairs,
                                                 config.seed + i)
        out.append(PairData(bitext, labelled, unlabelled, valid))
    return out


def data_summary(data: Sequence[PairData]) -> dict[str, Any]:
    """The training data for the manifest and model card: languages, sentence counts and, per pair, the corpus
    summary and how many rows are labelled, unlabelled and held out."""
    return {"kind": "bitext with a parallel share", "src_lang": "+".join(d.bitext.src_lang for d in data),
            "tgt_lang": data[0].bitext.tgt_lang, "src_sentences": sum(len(d.bitext.src) for d in data),
            "tgt_sentences": sum(len(d.bitext.tgt) for d in data),
            "pairs": {f"{d.bitext.src_lang}-{d.bitext.tgt_lang}": {
                **d.bitext.summary, "labelled": len(d.labelled), "unlabelled": len(d.unlabelled),
                "valid": len(d.valid)} for d in data}}


def data_meta(data: Sequence[PairData]) -> list[dict[str, str]]:
    """What identifies the training data (sentence lists and row split) for resuming and the manifest."""
    return [{"src": sentences_key(d.bitext.src, d.bitext.src_lang),
             "tgt": sentences_key(d.bitext.tgt, d.bitext.tgt_lang),
             "rows": sentences_key([json.dumps([d.labelled.tolist(), d.unlabelled.tolist(), d.valid.tolist()])])}
            for d in data]


# --- inputs ----------------------------------------------------------------------------------------------------


def input_encoder(backbone: Encoder, inputs: str, idf: np.ndarray | None = None) -> Encoder:
    """The input representation ``inputs`` over ``backbone`` (``tfidf`` needs the ``idf`` table)."""
    if inputs == "encoder":
        return backbone
    if not isinstance(backbone, TransformerEncoder):
        raise ValueError(f"inputs {inputs!r} average a transformer's subword vectors; {backbone.name} is not one")
    if inputs == "tfidf" and idf is None:
        raise ValueError("tfidf inputs need an idf table")
    return StaticAverageEncoder(backbone, idf if inputs == "tfidf" else None)


def fit_input_encoder(backbone: Encoder, inputs: str, data: Sequence[PairData]) -> tuple[Encoder, np.ndarray | None]:
    """The input encoder for training on ``data``; for ``tfidf`` the idf is fitted on all its sentences."""
    if inputs != "tfidf":
        return input_encoder(backbone, inputs), None
    plain = input_encoder(backbone, "average")
    assert isinstance(plain, StaticAverageEncoder)
    sentences = [s for d in data for s in (*d.bitext.src, *d.bitext.tgt)]
    idf = fit_idf(plain.token_ids(sentences), plain.vectors.shape[0])
    return input_encoder(backbone, inputs, idf), idf


@dataclass(frozen=True)
class PairVectors:
    """Input vectors of every row of a pair's bitext: ``x`` (source side) and ``y`` (target side)."""

    data: PairData
    x: np.ndarray
    y: np.ndarray


def pair_vectors(encoder: Encoder, data: Sequence[PairData], progress: bool = False) -> list[PairVectors]:
    """Input vectors of every pair's whole bitext, read from or written to the encoding cache."""
    return [PairVectors(d, cached_encode(encoder, d.bitext.src, d.bitext.src_lang, progress=progress),
                        cached_encode(encoder, d.bitext.tgt, d.bitext.tgt_lang, progress=progress)) for d in data]


def load_backbone(name: str) -> Encoder:
    from xlsent.encoders.registry import load_encoder

    return load_encoder(name)


# --- model directory and encoder -------------------------------------------------------------------------------


def write_mapped_model(out: Path, config: MappingConfig, backbone: Encoder, idf: np.ndarray | None,
                       weights: dict[str, torch.Tensor], weights_file: str, *, mapping: dict[str, Any],
                       training: dict[str, Any], method: str) -> Path:
    """Write a mapping model: ``weights_file``, the idf (tfidf inputs), ``config.toml``, ``xlsent.json``, card."""
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / weights_file) as tmp:
        save_file({k: v.detach().contiguous() for k, v in weights.items()}, str(tmp))
    if idf is not None:
        with atomic_path(out / IDF_FILE) as tmp:
            save_file({"idf": torch.from_numpy(np.ascontiguousarray(idf))}, str(tmp))
    with atomic_open(out / CONFIG_FILE) as fh:
        fh.write(to_toml(config))
    write_manifest(out, model_manifest(
        method, config, name=out.name,
        backbone={"name": backbone.name, "id": encoder_id(backbone), "ref": encoder_reference(backbone)},
        languages={"sources": config.sources, "target": config.target}, mapping=mapping, training=training,
        metrics={}))
    write_card(out)
    return out


@dataclass(frozen=True)
class FittedMapping:
    """What a mapping method's fit leaves for its model directory: the weights (tensors and file name), the
    manifest's ``mapping`` block, and ``training`` fields beyond the data, inputs and time that every one records."""

    weights: dict[str, torch.Tensor]
    weights_file: str
    mapping: dict[str, Any]
    training: dict[str, Any] = field(default_factory=dict)


FitMapping = Callable[[Sequence[PairVectors], Path, dict[str, Any]], FittedMapping]
"""``fit(vectors, out, meta)``: the input vectors of every pair, the output folder (for checkpoints) and what
identifies the run (backbone, inputs and data ids: a resumed run must match them)."""


def train_mapping_on(method: str, config: MappingConfig, data: Sequence[PairData], backbone: Encoder,
                     out_dir: str | Path, fit: FitMapping, *, resume: bool = False, progress: bool = True) -> Path:
    """Embed the training data (cached), ``fit`` on it, write the model directory of type ``method`` (checkpoints
    removed once it is written); with ``resume``, a finished ``out_dir`` is returned as it is."""
    out = Path(out_dir)
    if prepare_output(out, resume, config):
        return out
    start = time.perf_counter()
    inputs, idf = fit_input_encoder(backbone, config.inputs, data)
    meta = {"backbone": encoder_id(backbone), "inputs": encoder_id(inputs), "data": data_meta(data)}
    fitted = fit(pair_vectors(inputs, data, progress), out, meta)
    training = {"data": data_summary(data), "data_keys": meta["data"], "inputs": meta["inputs"], **fitted.training,
                "seconds": round(time.perf_counter() - start, 1)}
    write_mapped_model(out, config, backbone, idf, fitted.weights, fitted.weights_file, method=method,
                       mapping=fitted.mapping, training=training)
    shutil.rmtree(out / CHECKPOINT_DIR, ignore_errors=True)
    log.info("%s model written to %s", method, out)
    return out


def mapping_train(config_class: type[MappingConfig], train_on: Callable[..., Path]) -> TrainFn:
    """The ``train`` of a mapping method (``xlsent train``): build the data, load the backbone, then
    ``train_on(config, data, backbone, out, resume=..., progress=...)``."""

    def train(config: TrainConfig, out: str | Path, *, resume: bool = False, data: str | Path | None = None,
              progress: bool = True) -> Path:
        if not isinstance(config, config_class):
            raise TypeError(f"expected a {config_class.__name__}, got {type(config).__name__}")
        if prepare_output(out, resume, config):
            return Path(out)
        return train_on(config, build_pair_data(config, data), load_backbone(config.backbone), out, resume=resume,
                        progress=progress)

    return train


class MappedEncoder(abc.ABC):
    """Encoder of a mapping model directory: the input encoder, then the map of the sentence's source language
    (see the module docstring for the routing). Subclasses load their weights and implement :meth:`map_source`.
    """

    config_class: type[MappingConfig] = MappingConfig
    model_type = ""

    def __init__(self, model_dir: str | Path, *, backbone: Encoder | None = None, verify: str = "size") -> None:
        self.model_dir = Path(model_dir)
        self.manifest: dict[str, Any] = read_manifest(self.model_dir, verify=verify)
        if self.manifest["type"] != self.model_type:
            raise ModelDirError(f"{self.model_dir}: type {self.manifest['type']!r}, expected {self.model_type!r}")
        self.config = build_config(self.config_class, [self.manifest["config"]])
        info = self.manifest["backbone"]
        loaded = backbone if backbone is not None else load_backbone(info["ref"])
        if encoder_id(loaded) != info["id"]:
            raise ModelDirError(f"{self.model_dir}: trained on backbone {info['id']}, but {info['ref']} is "
                                f"{encoder_id(loaded)} (different weights)")
        self.backbone = loaded
        idf = self._load(IDF_FILE)["idf"].numpy() if self.config.inputs == "tfidf" else None
        self.inputs = input_encoder(loaded, self.config.inputs, idf)
        self.sources: list[str] = list(self.manifest["languages"]["sources"])
        self.target: str = self.manifest["languages"]["target"]
        self._warned: set[str] = set()
        self.name: str = self.manifest.get("name", self.model_dir.name)
        self.dim: int = self.inputs.dim
        self.id: str = f"{self.name}@{model_checksum(self.manifest)}"

    def _load(self, file: str) -> dict[str, torch.Tensor]:
        try:
            return load_file(str(self.model_dir / file))
        except Exception as exc:  # safetensors raises several types for a corrupt file
            raise ModelDirError(f"{self.model_dir / file}: cannot be read ({exc})") from exc

    def source_of(self, lang: str | None) -> str | None:
        """The source language whose map ``lang`` takes, or None (target space: vectors as they are)."""
        if lang is None:
            raise ValueError(f"{self.name} maps {'/'.join(self.sources)} into {self.target}: pass the language of "
                             "the sentences (encode(..., lang='de'), xlsent mine --src-lang/--tgt-lang)")
        key = base_lang(lang)
        for src in self.sources:
            if base_lang(src) == key:
                return src
        if key != base_lang(self.target) and lang not in self._warned:
            self._warned.add(lang)
            log.warning("%s maps %s into %s; %r is neither, its vectors are left as they are", self.name,
                        "/".join(self.sources), self.target, lang)
        return None

    @abc.abstractmethod
    def map_source(self, vectors: np.ndarray, source: str) -> np.ndarray:
        """``vectors`` of language ``source`` mapped into the target space (each subclass's own map)."""

    def project(self, vectors: np.ndarray, lang: str | None) -> np.ndarray:
        """Unit rows of input ``vectors`` of language ``lang`` in the target space (zero rows stay zero)."""
        source = self.source_of(lang)
        if source is None:
            return l2_normalize(vectors)
        out = l2_normalize(self.map_source(np.asarray(vectors, dtype=np.float32), source))
        out[np.linalg.norm(vectors, axis=1) == 0] = 0.0
        return out

    def encode(self, sentences: Sequence[str], lang: str | None = None, *,
               batch_tokens: int = DEFAULT_BATCH_TOKENS, progress: bool = False, cache: bool = False) -> np.ndarray:
        """``(len(sentences), dim)`` float32 unit rows; ``cache=True`` reads and writes the input encoding cache."""
        self.source_of(lang)
        inputs = (cached_encode(self.inputs, sentences, lang, progress=progress) if cache
                  else self.inputs.encode(sentences, lang, batch_tokens=batch_tokens, progress=progress))
        return self.project(inputs, lang)


# --- the linear-map method -------------------------------------------------------------------------------------


@dataclass
class LinearMapConfig(MappingConfig):
    """A linear baseline; ``src/xlsent/configs/linear_map.toml`` documents each key."""

    steps: int = 0
    method: str = "procrustes-csls"
    ridge: float = 0.0

    def problems(self) -> list[str]:
        out = super().problems()
        if self.method not in METHODS:
            out.append(f"method must be one of {tuple(METHODS)}, not {self.method!r}")
        if self.ridge < 0:
            out.append("ridge must be >= 0")
        return out


@dataclass(frozen=True)
class LinearFit:
    """One map per source language (``x W`` lies in the target space) and the inverted-softmax beta."""

    maps: dict[str, np.ndarray]
    beta: float


def fit_maps(config: LinearMapConfig, vectors: Sequence[PairVectors]) -> LinearFit:
    """Fit the configured map on the labelled rows of every pair (beta on up to 2000 of them for ``isf``)."""
    maps: dict[str, np.ndarray] = {}
    betas = []
    for pv in vectors:
        rows = pv.data.labelled
        w = fit_linear(config.method, pv.x[rows], pv.y[rows], config.ridge)
        maps[pv.data.bitext.src_lang] = w
        if METHODS[config.method][1] == "isf":
            sample = rows[:ISF_FIT_ROWS]
            betas.append(fit_isf_beta(l2_normalize(pv.x[sample] @ w) @ l2_normalize(pv.y[sample]).T))
    return LinearFit(maps, float(np.median(betas)) if betas else ISF_BETAS[2])


def train_on(config: LinearMapConfig, data: Sequence[PairData], backbone: Encoder, out_dir: str | Path, *,
             resume: bool = False, progress: bool = True) -> Path:
    """Embed the training data (cached), fit the maps, write the model directory."""

    def fit(vectors: Sequence[PairVectors], out: Path, meta: dict[str, Any]) -> FittedMapping:
        fitted = fit_maps(config, vectors)
        what, rule = METHODS[config.method]
        return FittedMapping({f"map.{src}": torch.from_numpy(w) for src, w in fitted.maps.items()}, MAP_FILE,
                             {"method": config.method, "description": what, "retrieval": rule,
                              "isf_beta": fitted.beta, "formula": "normalize(x @ map.<source language>)"})

    return train_mapping_on(NAME, config, data, backbone, out_dir, fit, resume=resume, progress=progress)


train = mapping_train(LinearMapConfig, train_on)


class LinearMapEncoder(MappedEncoder):
    """Encoder of a ``linear-map`` directory: ``normalize(x @ W_source)`` for source languages.

    >>> enc = LinearMapEncoder("models/procrustes-de-en")                   # doctest: +SKIP
    >>> enc.encode(["Der Hund bellt."], "de").shape, enc.retrieval_rule     # doctest: +SKIP
    ((1, 384), 'csls')
    """

    config_class = LinearMapConfig
    model_type = NAME

    def __init__(self, model_dir: str | Path, *, backbone: Encoder | None = None, verify: str = "size") -> None:
        super().__init__(model_dir, backbone=backbone, verify=verify)
        state = self._load(MAP_FILE)
        self.maps = {src: state[f"map.{src}"].numpy() for src in self.sources}
        mapping = self.manifest["mapping"]
        self.retrieval_rule: str = mapping["retrieval"]
        self.isf_beta: float = float(mapping["isf_beta"])

    def map_source(self, vectors: np.ndarray, source: str) -> np.ndarray:
        out: np.ndarray = vectors @ self.maps[source]
        return out

    def rule(self) -> ScoreRule:
        """The method's retrieval rule over a cosine matrix (:func:`retrieval_rule`)."""
        return retrieval_rule(self.retrieval_rule, self.isf_beta)


METHOD = Method(
    name=NAME,
    summary="linear maps between embedding spaces (least squares, Procrustes; ABSent paper 003's baselines)",
    config_class=LinearMapConfig,
    defaults="linear_map.toml",
    train=train,
    encoder=LinearMapEncoder,
)
