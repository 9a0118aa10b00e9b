"""Build a Hugging Face ``tokenizers`` Unigram tokenizer from a vocabulary, scores and a normalisation map.

The normalisation map (one code point -> replacement string) is compiled into SentencePiece's
``precompiled_charsmap`` with SentencePiece's own trainer, so the resulting ``tokenizer.json`` is
self-contained and behaves like XLM-R's fast tokenizer (Precompiled + collapse spaces + Metaspace).
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors


def compile_charsmap(normalization: Mapping[int, str]) -> bytes:
    """Compile a code point -> string map into SentencePiece's precompiled charsmap bytes."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules.tsv"
        rules.write_text(
            "".join(
                f"{cp:X}\t{' '.join(f'{ord(c):X}' for c in out)}\n" for cp, out in sorted(normalization.items())
            ),
            encoding="utf-8",
        )
        corpus = Path(tmp) / "corpus.txt"
        corpus.write_text("a b c\n" * 20, encoding="utf-8")
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(
            input=str(corpus),
            model_writer=buf,
            vocab_size=8,
            hard_vocab_limit=False,
            model_type="unigram",
            normalization_rule_tsv=str(rules),
            minloglevel=2,
        )
    proto = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
    proto.ParseFromString(buf.getvalue())
    return bytes(proto.normalizer_spec.precompiled_charsmap)


def build_unigram_tokenizer(
    pieces: Sequence[str],
    scores: Sequence[float],
    *,
    charsmap: bytes | None,
    bos: int = 0,
    pad: int = 1,
    eos: int = 2,
    unk: int = 3,
) -> Tokenizer:
    """An XLM-R style tokenizer: ``<s> pieces </s>``, Metaspace with a prepended ``▁``.

    >>> tok = build_unigram_tokenizer(["<s>", "<pad>", "</s>", "<unk>", "▁a", "▁b"],
    ...                               [0, 0, 0, 0, -1.0, -2.0], charsmap=None)
    >>> tok.encode("a b").tokens
    ['<s>', '▁a', '▁b', '</s>']
    """
    vocab = [(p, float(s)) for p, s in zip(pieces, scores, strict=True)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=unk, byte_fallback=False))
    steps: list[normalizers.Normalizer] = []
    if charsmap is not None:
        steps.append(normalizers.Precompiled(charsmap))
    steps.append(normalizers.Replace(Regex(" {2,}"), " "))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{pieces[bos]} $A {pieces[eos]}",
        pair=f"{pieces[bos]} $A {pieces[eos]} {pieces[eos]} $B {pieces[eos]}",
        special_tokens=[(pieces[bos], bos), (pieces[eos], eos)],
    )
    tok.add_special_tokens([pieces[i] for i in (bos, pad, eos, unk)])
    return tok
