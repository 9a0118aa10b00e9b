"""Dev simulations of a user teaching an encoder a language it handles poorly with ``--bitext``.

A simulated language is held back from the shipped bitext and given to the student through a user file of ``n``
pairs; its error is measured on test pairs never given. Each comes from NTREX-128 (1997 lines, multi-way parallel):
lines 0-999 are the pool the user's pairs are drawn from (seeded), lines 1000-1996 the test pairs. Beyond 1000 pairs
the pool continues with Tatoeba-Challenge pairs of the same language (none sharing a sentence with the test pairs).

- ``qaa`` (an ISO 639 code reserved for local use): Turkish with its vowels permuted (a -> i, e -> a, i -> e,
  o -> u, u -> o), a language me5-small handles poorly (a pilot on 500 of its lines: 47% retrieval error), much as
  FLORES-200's Kabyle or Aymara: familiar consonants, names and numbers, unknown words;
- ``qab``: Indonesian, vowels permuted the same way;
- ``ug``: Uyghur itself (Arabic script), me5-small's weakest NTREX language on this data.

None of these test pairs is a reported test set (NTREX and Tatoeba-Challenge are training corpora here), so a recipe
can be chosen on them. ``python -m xlsent.studies.new_language qaa --pairs 300 --out qaa-en.tsv --test qaa-test.tsv``
writes a stand-in for a user's file.

>>> vowel_cipher("Kremlin, Washington")
'Kramlen, Wishengtun'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.atomic import atomic_open
from xlsent.data.parallel import load_ntrex, load_tatoeba_challenge
from xlsent.data.tsv_field import clean_cell
from xlsent.encoders.base import Encoder
from xlsent.evaluation.selection import retrieval_criterion

POOL_LINES = 1000
"""NTREX lines the user's pairs are drawn from; the rest are the test pairs."""
_VOWELS = str.maketrans("aeiouAEIOU", "iaeuoIAEUO")


def vowel_cipher(text: str) -> str:
    """``text`` with the Latin vowels permuted (a->i, e->a, i->e, o->u, u->o), case kept."""
    return text.translate(_VOWELS)


@dataclass(frozen=True)
class Simulated:
    """A simulated new language: its code, the shipped language it is held back as, its NTREX and
    Tatoeba-Challenge codes and whether its text is ciphered."""

    code: str
    shipped: str
    ntrex: str
    challenge: str | None
    cipher: bool
    what: str

    def text(self, sentences: Sequence[str]) -> list[str]:
        return [vowel_cipher(s) for s in sentences] if self.cipher else list(sentences)


SIMULATED = {s.code: s for s in (
    Simulated("qaa", "tr", "tur", "tur", True, "Turkish, vowels permuted"),
    Simulated("qab", "id", "ind", "ind", True, "Indonesian, vowels permuted"),
    Simulated("ug", "ug", "uig", None, False, "Uyghur"),
)}


def simulated_run(spec: str, variants: Sequence[str] = ()) -> tuple[Simulated, int, str]:
    """``LANG:PAIRS`` (``LANG:PAIRS[:VARIANT]`` where ``variants`` are named) -> the simulated language, the pairs
    given (at least 1) and the variant ('' for none).

    >>> lang, n, variant = simulated_run("qaa:300:share0", ["share0"]); (lang.code, n, variant)
    ('qaa', 300, 'share0')
    """
    code, _, rest = spec.partition(":")
    pairs, _, variant = rest.partition(":")
    if code not in SIMULATED or not pairs.isdecimal() or int(pairs) < 1 or (variant and variant not in variants):
        shape = "LANG:PAIRS[:VARIANT]" if variants else "LANG:PAIRS"
        raise ValueError(f"{spec!r}: expected {shape} with LANG one of {', '.join(SIMULATED)} and PAIRS a whole "
                         "number of at least 1" + (f", VARIANT one of {', '.join(variants)}" if variants else ""))
    return SIMULATED[code], int(pairs), variant


def evaluation_pairs(lang: Simulated, root: str | Path | None) -> tuple[list[str], list[str]]:
    """The simulated language's test pairs (NTREX lines from :data:`POOL_LINES` on) and their English."""
    xx, en = load_ntrex(lang.ntrex, "eng", root)
    return lang.text(xx[POOL_LINES:]), en[POOL_LINES:]


def user_pairs(lang: Simulated, n: int, root: str | Path | None, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` pairs a user would bring: seeded from the NTREX pool, then Tatoeba-Challenge pairs sharing no sentence
    with the test pairs; an error when the language has fewer."""
    xx, en = load_ntrex(lang.ntrex, "eng", root)
    order = np.random.default_rng(seed).permutation(POOL_LINES)
    out_xx, out_en = [xx[i] for i in order[:n]], [en[i] for i in order[:n]]
    if n > POOL_LINES and lang.challenge is not None:
        test = set(xx[POOL_LINES:]) | set(en[POOL_LINES:])
        more = [(x, e) for x, e in zip(*load_tatoeba_challenge(lang.challenge, root), strict=True)
                if x not in test and e not in test]
        picked = np.random.default_rng(seed).permutation(len(more))[: n - POOL_LINES]
        out_xx += [more[i][0] for i in picked]
        out_en += [more[i][1] for i in picked]
    if len(out_xx) < n:
        raise ValueError(f"{lang.code}: only {len(out_xx)} pairs to simulate a user's {n}")
    return lang.text(out_xx), out_en


def write_pairs(path: Path, xx: Sequence[str], en: Sequence[str]) -> Path:
    """``xx`` and ``en`` as a TSV (``text TAB english``), written atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as fh:
        fh.writelines(f"{clean_cell(x)}\t{clean_cell(e)}\n" for x, e in zip(xx, en, strict=True))
    return path


def write_user_file(lang: Simulated, n: int, folder: Path, root: str | Path | None, seed: int = 0) -> Path:
    """The TSV of :func:`user_pairs`, written once into ``folder``."""
    path = folder / f"{lang.code}-{n}.tsv"
    return path if path.is_file() else write_pairs(path, *user_pairs(lang, n, root, seed))


def evaluation_error(encoder: Encoder, lang: Simulated, root: str | Path | None) -> float:
    """Retrieval error (%, mean of both directions) of ``encoder`` on the language's test pairs."""
    xx, en = evaluation_pairs(lang, root)
    return 100.0 - retrieval_criterion(np.asarray(encoder.encode(xx, lang=None)),
                                       np.asarray(encoder.encode(en, lang="en")))


def evaluation_mining_f1(encoder: Encoder, lang: Simulated, root: str | Path | None) -> float:
    """F1 (%) of mining the language's test lines against all their English lines (ratio margin, k = 4), at the
    threshold that is best on the gold pairs: how well the pairs can be mined, not a calibrated threshold."""
    from xlsent.encoders.base import l2_normalize
    from xlsent.mining.threshold_search import mine_and_score

    xx, en = evaluation_pairs(lang, root)
    src = l2_normalize(np.asarray(encoder.encode(xx, lang=None), dtype=np.float32))
    tgt = l2_normalize(np.asarray(encoder.encode(en, lang="en"), dtype=np.float32))
    return mine_and_score(src, tgt, {(i, i) for i in range(len(xx))})["f1"]


def main(argv: Sequence[str] | None = None) -> int:
    """Write a simulated language's user pairs (and its test pairs) as TSV files, a stand-in for a user's bitext."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m xlsent.studies.new_language", description=main.__doc__)
    parser.add_argument("lang", choices=sorted(SIMULATED), help="the simulated language")
    parser.add_argument("--pairs", type=int, default=300, help="how many user pairs (default: 300)")
    parser.add_argument("--out", required=True, type=Path, help="the user pairs' TSV (text TAB english)")
    parser.add_argument("--test", type=Path, help="also write the test pairs (never in --out) to this TSV")
    parser.add_argument("--data", help="benchmark data folder (default: $XLSENT_DATA or ../shared/data)")
    args = parser.parse_args(argv)
    lang = SIMULATED[args.lang]
    for path, (xx, en) in ((args.out, user_pairs(lang, args.pairs, args.data)),
                           *([(args.test, evaluation_pairs(lang, args.data))] if args.test else [])):
        print(f"wrote {len(xx)} {lang.code}-en pairs to {write_pairs(path, xx, en)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
