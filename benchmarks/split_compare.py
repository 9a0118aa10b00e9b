"""Sentence splitters compared on paragraphs with known sentence boundaries: how ``xlsent split``'s segmenter was
chosen (see ``xlsent.data.sentence_split``). Not part of ``make bench``: the contenders other than sentencex are not
xlsent dependencies; install the ones to compare first (``pip install pysbd sentence-splitter``); those missing are
skipped.

Paragraphs: ``--paragraphs`` per language, each 2 to 5 consecutive NTREX-128 lines (news, document order) joined by
a space (without one for Chinese, Japanese and Thai); a line boundary is a gold sentence boundary (an NTREX line
of two sentences counts against every splitter alike). Prints each splitter's boundary F1 per language, their mean
and the seconds taken.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from xlsent.arg_types import positive_int
from xlsent.data.parallel import load_ntrex
from xlsent.languages import ntrex_code

Split = Callable[[str], list[str]]
LANGS = ("en", "de", "fr", "ru", "ar", "hi", "zh", "ja", "th", "es", "tr", "ko", "fa", "el", "he", "vi", "sw", "ta",
         "uk", "pl")
NO_SPACE = ("zh", "ja", "th")


def paragraphs(lang: str, n: int, seed: int = 0) -> list[list[str]]:
    """``n`` paragraphs of ``lang`` as lists of their gold sentences (NTREX lines)."""
    lines = load_ntrex("eng", "deu")[0] if lang == "en" else load_ntrex(ntrex_code(lang), "eng")[0]
    rng = random.Random(seed)
    out, i = [], 0
    while len(out) < n and i < len(lines) - 6:
        k = rng.randint(2, 5)
        out.append([line.strip() for line in lines[i:i + k] if line.strip()])
        i += k
    return out


def splitters() -> dict[str, Callable[[str], Split]]:
    """Each installed contender: a function from a language code to a splitter of that language."""
    from xlsent.data.sentence_split import sentence_spans

    found: dict[str, Callable[[str], Split]] = {
        "xlsent split (sentencex, quotes and brackets hidden)":
            lambda lang: lambda text: [text[a:b] for a, b in sentence_spans(text, lang)]}
    try:
        import sentencex

        found["sentencex"] = lambda lang: lambda text: list(sentencex.segment(lang, text))
    except ImportError:
        pass
    try:
        import pysbd

        def pysbd_for(lang: str) -> Split:
            try:
                seg = pysbd.Segmenter(language=lang, clean=False)
            except ValueError:  # a language pysbd lacks: its English rules
                seg = pysbd.Segmenter(language="en", clean=False)
            return lambda text: list(seg.segment(text))

        found["pysbd"] = pysbd_for
    except ImportError:
        pass
    try:
        from sentence_splitter import SentenceSplitter

        def moses_for(lang: str) -> Split:
            try:
                splitter = SentenceSplitter(language=lang)
            except Exception:  # noqa: BLE001 -- it raises its own error type for a language without prefixes
                splitter = SentenceSplitter(language="en")
            return lambda text: list(splitter.split(text))

        found["moses (sentence-splitter)"] = moses_for
    except ImportError:
        pass
    return found


def boundary_counts(pred: Sequence[str], gold: Sequence[str]) -> tuple[int, int, int]:
    """Boundaries found right, found, and in the gold, as character offsets of the text without spaces."""
    def bounds(sentences: Sequence[str]) -> set[int]:
        out, pos = set(), 0
        for sentence in sentences[:-1]:
            pos += len("".join(sentence.split()))
            out.add(pos)
        return out

    g, p = bounds(gold), bounds([s for s in pred if s.strip()])
    return len(g & p), len(p), len(g)


def build_parser() -> argparse.ArgumentParser:
    """The bench's options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paragraphs", type=positive_int, default=150, help="paragraphs per language (default 150)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    data = {lang: paragraphs(lang, args.paragraphs) for lang in LANGS}
    for name, make in splitters().items():
        start, f1s = time.perf_counter(), {}
        for lang, paras in data.items():
            split, found = make(lang), [0, 0, 0]
            for gold in paras:
                counts = boundary_counts(split(("" if lang in NO_SPACE else " ").join(gold)), gold)
                found = [a + b for a, b in zip(found, counts, strict=True)]
            precision, recall = found[0] / max(found[1], 1), found[0] / max(found[2], 1)
            f1s[lang] = 200 * precision * recall / max(precision + recall, 1e-9)
        per_lang = " ".join(f"{lang} {f1:.1f}" for lang, f1 in f1s.items())
        print(f"{name}: mean boundary F1 {sum(f1s.values()) / len(f1s):.1f} in {time.perf_counter() - start:.1f}s; "
              f"{per_lang}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
