"""Word Mover's Distance between sentences from a frozen anchor's contextual token states, cached per pair.

DuEAM's anchor (paper 000, section 3.1 and section 4) scores a sentence pair by the Word Mover's Distance
(Kusner et al., 2015) between the two sentences' contextual token embeddings, as MoverScore does (Zhao et al.,
2019): token vectors of one layer, each scaled to unit length, Euclidean cost between them, and token weights that
are uniform or MoverScore's idf, ``idf(w) = log((M + 1) / (df(w) + 1))`` over a corpus of M sentences. Every token
of the sentence counts (no stop-word removal, as the paper says); the model's prefix and ``<s>``/``</s>`` do not.
The transport problem is solved exactly by POT's network simplex (``ot.emd2``) or, as an option, with entropic
regularisation (``ot.sinkhorn2``, log-domain).

Distances are cached on disk per pair: ``$XLSENT_HOME/wmd/<anchor id>/<settings key>/`` holds ``settings.json``
(anchor id, layer, weighting, solver, regularisation, idf checksum) and shards ``*.npz`` (no pickle) of
16-byte pair keys (SHA-256 of the two texts) and distances. Computed chunks are written as they finish, so an
interrupted run keeps what it computed, and a later run with the same settings only computes new pairs.

>>> import numpy as np
>>> x = np.array([[0.0, 0.0], [2.0, 0.0]]); y = np.array([[2.0, 1.0], [0.0, 1.0]])
>>> wmd(x, y)  # each token moves to the point above it
1.0
>>> round(wmd(x, y, solver="sinkhorn", reg=0.01), 3)
1.0
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from tqdm.auto import tqdm

from xlsent.atomic import atomic_open, write_json
from xlsent.encoders.cache import TEXT_READING, encoder_id
from xlsent.paths import xlsent_home

log = logging.getLogger(__name__)

WEIGHTINGS = ("uniform", "idf")
SOLVERS = ("emd", "sinkhorn")
SINKHORN_SLACK = 0.01
"""The most a Sinkhorn plan's row or column sums may miss their token weights by, as a share of the smallest weight
(converged plans miss by under 1e-8 at the default regularisation)."""
KEY_BYTES = 16
CACHE_FORMAT = "xlsent-wmd-v1"


class WmdCacheError(ValueError):
    """A WMD cache folder or shard belongs to other settings or is unreadable."""


class TokenAnchor(Protocol):
    """A frozen encoder that gives per-token states of one layer (e.g. :class:`TransformerEncoder`)."""

    name: str
    num_layers: int
    max_tokens: int

    def prefixed_ids(self, sentences: Sequence[str]) -> list[tuple[list[int], int]]: ...

    def token_states(self, sentences: Sequence[str], layer: int, *, batch_tokens: int = ..., progress: bool = ...,
                     specials: bool = ...) -> list[np.ndarray]: ...


# --- the distance ------------------------------------------------------------------------------------------------


def _marginal(w: np.ndarray | None, n: int) -> np.ndarray:
    if w is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (n,) or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"token weights must be {n} non-negative numbers with a positive sum")
    return w / w.sum()


def wmd(x: np.ndarray, y: np.ndarray, a: np.ndarray | None = None, b: np.ndarray | None = None, *,
        solver: str = "emd", reg: float = 0.05) -> float:
    """Word Mover's Distance between token vectors ``x`` ``(n, d)`` and ``y`` ``(m, d)`` (Kusner et al. 2015, eq. 1).

    ``min_T sum_ij T_ij ||x_i - y_j||`` over transport plans ``T >= 0`` whose rows sum to ``a`` and columns to
    ``b`` (token weights, normalised to sum 1; uniform when None). ``solver="emd"`` solves it exactly (POT
    ``ot.emd2``), ``"sinkhorn"`` with entropic regularisation ``reg`` (POT ``ot.sinkhorn2``, log domain), whose
    plan is blurred and so costs a little more than the exact one. A Sinkhorn plan that misses the token weights
    by more than :data:`SINKHORN_SLACK` of the smallest one (``reg`` too small to converge) is a ValueError, not a
    distance.
    """
    import ot

    if len(x) == 0 or len(y) == 0:
        raise ValueError("WMD needs at least one token on each side")
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, not {solver!r}")
    x64, y64 = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    cost = np.sqrt(np.maximum(((x64[:, None, :] - y64[None, :, :]) ** 2).sum(-1), 0.0))
    pa, pb = _marginal(a, len(x64)), _marginal(b, len(y64))
    if solver == "emd":
        return float(ot.emd2(pa, pb, cost))
    with warnings.catch_warnings():  # POT's own "did not converge" warning: the check below says it, and what to do
        warnings.filterwarnings("ignore", message="Sinkhorn did not converge")
        plan = ot.sinkhorn(pa, pb, cost, reg, method="sinkhorn_log")
    missed = max(np.abs(plan.sum(1) - pa).max(), np.abs(plan.sum(0) - pb).max()) / min(pa.min(), pb.min())
    if not missed <= SINKHORN_SLACK:
        raise ValueError(f"Sinkhorn did not converge with regularisation {reg:g} (its transport plan misses a token's "
                         f"weight by {missed:.0%}): raise sinkhorn_reg (default 0.05), or set solver = \"emd\"")
    return float((plan * cost).sum())


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (MoverScore normalises token embeddings before the Euclidean cost).

    >>> unit_rows(np.array([[2.0, 0.0], [0.0, 0.5]])).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32)


# --- token weights -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Idf:
    """Document frequencies of token ids over ``n`` sentences; ``weights`` gives MoverScore's idf per token.

    >>> idf = Idf.fit([[1, 2], [1, 3], [1]])
    >>> idf.weights([1, 2, 9]).round(4).tolist()  # in every sentence, in one, in none
    [0.0, 0.6931, 1.3863]
    """

    df: dict[int, int]
    n: int

    @classmethod
    def fit(cls, token_ids: Iterable[Sequence[int]]) -> Idf:
        """Count in how many of the sentences (token id lists) each id occurs."""
        df: Counter[int] = Counter()
        n = 0
        for ids in token_ids:
            df.update(set(ids))
            n += 1
        return cls(dict(df), n)

    def weights(self, ids: Sequence[int]) -> np.ndarray:
        """``log((n + 1) / (df + 1))`` of each id."""
        return np.array([math.log((self.n + 1) / (self.df.get(i, 0) + 1)) for i in ids], dtype=np.float64)

    def checksum(self) -> str:
        """16 hex digits identifying the table (part of the cache key of idf-weighted distances)."""
        items = sorted(self.df.items())
        return hashlib.sha256(json.dumps([self.n, items]).encode()).hexdigest()[:16]


def content_ids(anchor: TokenAnchor, sentences: Sequence[str]) -> list[list[int]]:
    """Token ids of each sentence without the anchor's prefix: the tokens ``token_states`` returns rows for."""
    return [ids[n_prefix:] for ids, n_prefix in anchor.prefixed_ids(sentences)]


def token_weights(ids: Sequence[int], idf: Idf | None) -> np.ndarray | None:
    """Idf weights of ``ids`` (None = uniform, also when every idf is 0)."""
    if idf is None:
        return None
    w = idf.weights(ids)
    return w if w.sum() > 0 else None


# --- the cache -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WmdSettings:
    """What a pair's anchor distance depends on besides its texts (``idf`` is the idf table's checksum)."""

    anchor: str
    layer: int
    weighting: str = "uniform"
    solver: str = "emd"
    reg: float = 0.05
    idf: str = ""

    def key(self) -> str:
        """16 hex digits naming the settings' cache folder."""
        fields = asdict(self)
        if self.solver == "emd":
            fields.pop("reg")
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def pair_keys(src: Sequence[str], tgt: Sequence[str]) -> np.ndarray:
    """``(n, 16)`` uint8 keys of the pairs ``(src[i], tgt[i])`` (SHA-256 of the length-prefixed texts)."""
    out = np.zeros((len(src), KEY_BYTES), dtype=np.uint8)
    for i, (s, t) in enumerate(zip(src, tgt, strict=True)):
        h = hashlib.sha256()
        for text in (s, t):
            raw = text.encode("utf-8", "surrogatepass")
            h.update(len(raw).to_bytes(8, "little") + raw)
        out[i] = np.frombuffer(h.digest()[:KEY_BYTES], dtype=np.uint8)
    return out


class WmdCache:
    """A folder of distance shards for one :class:`WmdSettings`.

    >>> import tempfile
    >>> cache = WmdCache(Path(tempfile.mkdtemp()), WmdSettings(anchor="toy@1", layer=3))
    >>> keys = pair_keys(["a", "b"], ["x", "y"])
    >>> _ = cache.add(keys[:1], np.array([0.5]))
    >>> cache.lookup(keys).tolist()
    [0.5, nan]
    """

    def __init__(self, root: Path, settings: WmdSettings) -> None:
        safe = re.sub(r"[^A-Za-z0-9._@-]+", "_", settings.anchor)
        self.directory = Path(root) / safe / settings.key()
        self.settings = settings
        expected = {"format": CACHE_FORMAT, **asdict(settings)}
        info = self.directory / "settings.json"
        if info.is_file():
            stored = json.loads(info.read_text(encoding="utf-8"))
            if stored != expected:
                raise WmdCacheError(f"{info}: holds distances for {stored}, expected {expected}")
        else:
            write_json(info, expected)
        self._known: dict[bytes, float] | None = None

    def _read(self) -> dict[bytes, float]:
        known: dict[bytes, float] = {}
        for shard in sorted(self.directory.glob("*.npz")):
            try:
                with np.load(shard, allow_pickle=False) as npz:
                    keys, values, settings = npz["keys"], npz["distances"], str(npz["settings"])
            except (OSError, KeyError, ValueError) as exc:
                log.warning("ignoring unreadable WMD shard %s (%s)", shard, exc)
                continue
            if settings != self.settings.key() or keys.shape != (len(values), KEY_BYTES):
                log.warning("ignoring WMD shard %s of other settings or shape", shard)
                continue
            known.update(zip((k.tobytes() for k in keys), values.tolist(), strict=True))
        return known

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Cached distances of ``keys`` (float64, NaN where not cached)."""
        if self._known is None:
            self._known = self._read()
        known = self._known
        return np.array([known.get(k.tobytes(), np.nan) for k in keys], dtype=np.float64)

    def add(self, keys: np.ndarray, distances: np.ndarray) -> Path:
        """Write one shard atomically and remember its distances."""
        keys = np.ascontiguousarray(keys, dtype=np.uint8)
        distances = np.asarray(distances, dtype=np.float64)
        path = self.directory / f"{hashlib.sha256(keys.tobytes()).hexdigest()[:20]}.npz"
        with atomic_open(path, "wb") as fh:
            np.savez(fh, keys=keys, distances=distances, settings=np.array(self.settings.key()))
        if self._known is not None:
            self._known.update(zip((k.tobytes() for k in keys), distances.tolist(), strict=True))
        return path


def wmd_root() -> Path:
    """Default cache root: ``$XLSENT_HOME/wmd.<TEXT_READING>`` (:data:`xlsent.encoders.cache.TEXT_READING`: distances
    of token states made from the sentences as read now)."""
    return xlsent_home() / f"wmd.{TEXT_READING}"


# --- distances of many pairs -------------------------------------------------------------------------------------


def _chunk_distances(anchor: TokenAnchor, src: Sequence[str], tgt: Sequence[str], settings: WmdSettings,
                     idf: Idf | None) -> np.ndarray:
    """Distances of a chunk of pairs: one anchor pass over the chunk's distinct sentences."""
    unique = sorted(set(src) | set(tgt))
    index = {s: i for i, s in enumerate(unique)}
    states = [unit_rows(x) for x in anchor.token_states(unique, settings.layer)]
    ids = content_ids(anchor, unique) if idf is not None else [[] for _ in unique]
    weights = [token_weights(i, idf) for i in ids]
    out = np.zeros(len(src), dtype=np.float64)
    for n, (s, t) in enumerate(zip(src, tgt, strict=True)):
        i, j = index[s], index[t]
        out[n] = wmd(states[i], states[j], weights[i], weights[j], solver=settings.solver, reg=settings.reg)
    return out


def pair_distances(anchor: TokenAnchor, src: Sequence[str], tgt: Sequence[str], settings: WmdSettings, *,
                   idf: Idf | None = None, root: Path | None = None, chunk_pairs: int = 2048,
                   progress: bool = False) -> np.ndarray:
    """``d_wmd(src[i], tgt[i])`` for every pair (float32), read from or added to the cache under ``root``.

    Pairs missing from the cache are computed ``chunk_pairs`` at a time in the given order (keep pairs that
    share sentences close together: each chunk runs the anchor once over its distinct sentences). ``idf`` must be
    given exactly when ``settings.weighting == "idf"`` and match ``settings.idf``. Blank sentences, or ones
    longer than the anchor's window, are a ValueError: filter them first.
    """
    if settings.weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, not {settings.weighting!r}")
    if (idf is not None) != (settings.weighting == "idf") or (idf is not None and idf.checksum() != settings.idf):
        raise ValueError("idf weighting needs the idf table whose checksum the settings carry (and only then)")
    if encoder_id(anchor) != settings.anchor:
        raise ValueError(f"settings are for anchor {settings.anchor}, not {getattr(anchor, 'id', anchor.name)}")
    if not 0 <= settings.layer <= anchor.num_layers:
        raise ValueError(f"anchor layer {settings.layer} is not in 0..{anchor.num_layers}")
    cache = WmdCache(root or wmd_root(), settings)
    keys = pair_keys(src, tgt)
    out = cache.lookup(keys)
    todo = np.flatnonzero(np.isnan(out))
    if len(todo):
        log.info("WMD: %d of %d pairs not cached; computing with %s layer %d", len(todo), len(out),
                 settings.anchor, settings.layer)
    bar = tqdm(total=len(todo), disable=not progress or not len(todo), unit="pair", desc="anchor WMD")
    for start in range(0, len(todo), chunk_pairs):
        rows = todo[start : start + chunk_pairs]
        values = _chunk_distances(anchor, [src[i] for i in rows], [tgt[i] for i in rows], settings, idf)
        cache.add(keys[rows], values)
        out[rows] = values
        bar.update(len(rows))
    bar.close()
    return out.astype(np.float32)
