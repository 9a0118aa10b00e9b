"""The joint subword vocabulary of a LASER model: one SentencePiece model trained on all training corpora.

Sentences are drawn per language in turn (a seeded sample of at most ``per_lang`` sentences of each language,
both sides of every pair), so a big corpus does not crowd a small language's pieces out. The ids of padding,
unknown, begin and end are fixed (:data:`xlsent.encoders.bilstm.PAD_ID` and the rest). The paper uses BPE with
50k merges; ``vocab_size`` is a config key.

>>> import sentencepiece as spm, tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / "spm.model"
>>> train_vocab({"en": ["a cat sat", "a dog ran"] * 20, "de": ["eine Katze", "ein Hund"] * 20}, path,
...             vocab_size=30, per_lang=100) == path
True
>>> spm.SentencePieceProcessor(model_file=str(path)).get_piece_size()
30
"""

from __future__ import annotations

import io
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlsent.atomic import atomic_path
from xlsent.encoders.bilstm import BOS_ID, EOS_ID, PAD_ID, UNK_ID

log = logging.getLogger(__name__)


def sample_sentences(per_language: Mapping[str, Sequence[str]], per_lang: int, seed: int = 0) -> list[str]:
    """At most ``per_lang`` distinct non-empty sentences of each language (seeded), languages interleaved."""
    samples = []
    for i, (_, sentences) in enumerate(sorted(per_language.items())):
        unique = sorted({s for s in sentences if s.strip()})
        if len(unique) > per_lang:
            rows = np.random.default_rng([seed, i]).choice(len(unique), per_lang, replace=False)
            unique = [unique[r] for r in np.sort(rows)]
        samples.append(unique)
    longest = max((len(s) for s in samples), default=0)
    return [s[j] for j in range(longest) for s in samples if j < len(s)]


def covering_chars(sentences: Sequence[str], coverage: float, limit: int) -> str:
    """The most frequent characters of ``sentences`` (not whitespace) that together make up ``coverage`` of them, at
    most ``limit``: what a vocabulary must hold so that a small language's script is not lost to the coverage of
    all languages together.

    >>> covering_chars(["aab", "ab c"], coverage=0.5, limit=10)
    'a'
    >>> covering_chars(["aab", "ab c"], coverage=1.0, limit=10)
    'abc'
    """
    counts = Counter(ch for s in sentences for ch in s if not ch.isspace())
    total, kept, out = sum(counts.values()), 0, list[str]()
    for ch, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if kept >= coverage * total or len(out) >= limit:
            break
        out.append(ch)
        kept += n
    return "".join(sorted(out))


def train_vocab(per_language: Mapping[str, Sequence[str]], path: Path, *, vocab_size: int, per_lang: int,
                model_type: str = "bpe", character_coverage: float = 0.9995, seed: int = 0,
                required_chars: str = "") -> Path:
    """Train a SentencePiece model on a per-language sample and write it atomically to ``path``; every character of
    ``required_chars`` gets a piece whatever its frequency (:func:`covering_chars` of a user's languages)."""
    import sentencepiece as spm

    sentences = sample_sentences(per_language, per_lang, seed)
    if not sentences:
        raise ValueError("no sentences to train the vocabulary on")
    log.info("training a %d-piece %s vocabulary on %d sentences of %d languages", vocab_size, model_type,
             len(sentences), len(per_language))
    model = io.BytesIO()
    options: dict[str, Any] = {"required_chars": required_chars} if required_chars else {}
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences), model_writer=model, vocab_size=vocab_size, model_type=model_type,
            character_coverage=character_coverage, pad_id=PAD_ID, unk_id=UNK_ID, bos_id=BOS_ID, eos_id=EOS_ID,
            input_sentence_size=0, shuffle_input_sentence=False, hard_vocab_limit=False, num_threads=1,
            minloglevel=2, **options)
    except RuntimeError as exc:  # SentencePiece reports bad settings as RuntimeError
        raise ValueError(f"SentencePiece cannot train a {vocab_size}-piece vocabulary here: {exc} "
                         "(set vocab_size or character_coverage in the config)") from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(model.getvalue())
    return path


def teacher_embeddings(sp: Any, tokenizer: Any, table: torch.Tensor, specials: dict[int, int]) -> torch.Tensor:
    """Initial subword embeddings ``(pieces, dim)`` from a teacher's input embeddings ``table``: each piece of the
    SentencePiece model ``sp`` gets the mean of the teacher's embeddings of its text's pieces (a word-start piece
    ``▁x`` is the text `` x``; a continuation piece loses the teacher's lone word-start piece where it adds one);
    our special ids take the teacher's ids in ``specials`` (pad, unknown, begin, end)."""
    space = tokenizer.token_to_id("▁")
    out = torch.empty(sp.get_piece_size(), table.shape[1], dtype=table.dtype)
    for i in range(sp.get_piece_size()):
        if i in specials:
            out[i] = table[specials[i]]
            continue
        piece = sp.id_to_piece(i)
        ids = tokenizer.encode(piece.replace("▁", " "), add_special_tokens=False).ids
        if not piece.startswith("▁") and len(ids) > 1 and ids[0] == space:
            ids = ids[1:]
        out[i] = table[ids].mean(dim=0) if ids else table[specials[UNK_ID]]
    return out
