"""A labelled noisy dev bitext for tuning and measuring ``xlsent filter``, built from ``parallel/``.

Clean pairs come from NTREX-128 (news, document order) and the Tatoeba-Challenge test pairs (short everyday lines,
Tatoeba v1 test sentences removed); every noise kind is made from other rows of the same sources, deterministically
from ``seed``:

- ``misaligned``: a source with the target of a random other row; ``shifted``: with the target of the next NTREX row
  (a bad aligner's neighbour);
- ``wrong_language``: the target replaced by the same NTREX row in a third language (a correct translation in the
  wrong language);
- ``untranslated``: the source copied as the target, or the English target as the source, sometimes with its
  punctuation or case changed;
- ``half_translated``: the target's first half followed by the source's second half (words; characters for
  scripts without spaces);
- ``partial``: one side cut to a part (35% to 65% of its words, its beginning or its end) of a line of at least
  :data:`PARTIAL_MIN_WORDS` words, so that the other side translates more than it says;
- ``boilerplate``: URLs, e-mail addresses, numbers, prices, dates and menus, on both sides;
- ``duplicate``: a later copy of a clean pair, exact or with its case, spacing or punctuation changed (the first
  copy stays ``clean``).

>>> from xlsent.data.noisy_bitext import NOISE_KINDS
>>> NOISE_KINDS[:3]
('misaligned', 'shifted', 'wrong_language')
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from xlsent.atomic import atomic_open
from xlsent.data._files import dataset_path
from xlsent.data.parallel import load_ntrex, load_tatoeba_challenge
from xlsent.data.tsv_field import clean_cell
from xlsent.languages import TATOEBA_CHALLENGE, ntrex_code

NOISE_KINDS = ("misaligned", "shifted", "wrong_language", "untranslated", "half_translated", "partial", "boilerplate",
               "duplicate")
DEV_PAIRS = ("de-en", "zh-en", "ru-en", "ar-en", "hi-en", "de-fr")
"""The language pairs of the dev bitext: Latin, Han (no spaces), Cyrillic, Arabic (right to left) and Devanagari
scripts with English, and one pair without English."""
PARTIAL_MIN_WORDS = 6
"""The least words (characters: twice as many, for scripts without spaces) of a line that a ``partial`` pair cuts."""
THIRD_LANGUAGES = ("es", "it", "nl", "pt", "pl", "sv", "fr", "ru", "ja")
"""The languages a ``wrong_language`` target is taken from (never the pair's own)."""
MENU_WORDS = {
    "en": ["Home", "About us", "Contact", "Products", "Login", "Search", "News", "Help", "Imprint", "Cart"],
    "de": ["Startseite", "Über uns", "Kontakt", "Produkte", "Anmelden", "Suche", "Aktuelles", "Hilfe", "Impressum",
           "Warenkorb"],
    "zh": ["首页", "关于我们", "联系我们", "产品", "登录", "搜索", "新闻", "帮助", "版权声明", "购物车"],
}
"""Menu items by language (row i of each list translates row i of the others)."""
NO_SPACES = ("zh", "ja", "th")
SPLITS = ("tune", "test")
"""The two halves of the dev data: tune the defaults on one, measure them on the other."""


@dataclass(frozen=True)
class NoisyBitext:
    """Pairs (``src[i]``, ``tgt[i]``) each labelled ``clean`` or a kind of :data:`NOISE_KINDS` (``kind[i]``)."""

    pair: str
    src: list[str]
    tgt: list[str]
    kind: list[str]
    description: str = ""
    files: list[Path] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Pairs per label."""
        return {label: self.kind.count(label) for label in ("clean", *NOISE_KINDS) if label in self.kind}

    def write(self, pairs: str | Path, labels: str | Path | None = None) -> None:
        """Write the pairs as a TSV (``src TAB tgt``, no header) and, with ``labels``, their labels one a line."""
        with atomic_open(pairs) as fh:
            fh.writelines(f"{clean_cell(s)}\t{clean_cell(t)}\n" for s, t in zip(self.src, self.tgt, strict=True))
        if labels is not None:
            with atomic_open(labels) as fh:
                fh.writelines(f"{kind}\n" for kind in self.kind)


def _words(text: str, lang: str) -> list[str]:
    return list(text) if lang in NO_SPACES else text.split()


def _join(words: list[str], lang: str) -> str:
    return ("" if lang in NO_SPACES else " ").join(words)


def _boilerplate(rng: random.Random, src_lang: str, tgt_lang: str) -> tuple[str, str]:
    """One boilerplate pair: the same URL, address, number or date on both sides, or a menu in both languages."""
    n = rng.randrange(1, 9999)
    day, month, year = rng.randrange(1, 29), rng.randrange(1, 13), rng.randrange(1995, 2030)
    site = rng.choice(["example", "shop-online", "news24", "travelguide", "meinverein"])
    menu = rng.sample(range(len(MENU_WORDS["en"])), rng.randrange(2, 6))
    sep = rng.choice([" | ", " • ", " » ", " · ", " > ", "\u00a0|\u00a0"])
    kinds = {
        "url": (f"https://www.{site}.com/{rng.choice(['de', 'en', 'zh'])}/page{n}.html",) * 2,
        "mail": (f"info{n}@{site}.org",) * 2,
        "number": (f"{n:,}".replace(",", "."), f"{n:,}"),
        "price": (f"{n},{day:02d} €", f"€{n}.{day:02d}"),
        "phone": (f"Tel. +49 {n} {rng.randrange(100000, 999999)}", f"Phone +49 {n} {rng.randrange(100000, 999999)}"),
        "date": (f"{day:02d}.{month:02d}.{year}", f"{month:02d}/{day:02d}/{year}"),
        "menu": (sep.join(MENU_WORDS.get(src_lang, MENU_WORDS["en"])[i] for i in menu),
                 sep.join(MENU_WORDS.get(tgt_lang, MENU_WORDS["en"])[i] for i in menu)),
    }
    return kinds[rng.choice(sorted(kinds))]


def _variant(text: str, rng: random.Random) -> str:
    """``text`` with its case, spacing or final punctuation changed (a normalised duplicate or near copy)."""
    change = rng.randrange(3)
    if change == 0:
        return text.lower() if text != text.lower() else text.upper()
    if change == 1:
        return "  " + text.replace(" ", "  ") + " "
    return text.rstrip(".!?。") + rng.choice(["", " .", "!"])


def _partial(s: str, t: str, src_lang: str, tgt_lang: str, rng: random.Random) -> tuple[str, str] | None:
    """The pair with one side cut to its beginning or its end (35% to 65% of its words), None when neither side
    has :data:`PARTIAL_MIN_WORDS` words."""
    sides = [(side, lang) for side, lang in ((0, src_lang), (1, tgt_lang))
             if len(_words((s, t)[side], lang)) >= PARTIAL_MIN_WORDS * (2 if lang in NO_SPACES else 1)]
    if not sides:
        return None
    side, lang = rng.choice(sides)
    words = _words((s, t)[side], lang)
    keep = max(1, round(len(words) * rng.uniform(0.35, 0.65)))
    cut = _join(words[:keep] if rng.random() < 0.5 else words[-keep:], lang)
    return (cut, t) if side == 0 else (s, cut)


def build_noisy_bitext(pair: str, root: str | Path | None = None, *, split: str = "test", clean: int = 400,
                       per_kind: int = 40, seed: int = 0) -> NoisyBitext:
    """The labelled dev bitext of ``pair`` (any two NTREX-128 languages, e.g. ``de-en``, ``de-fr``): ``clean``
    clean pairs (half NTREX, half Tatoeba-Challenge where the pair is X-en and Tatoeba-Challenge has X; else all
    NTREX) and ``per_kind`` pairs of each noise kind, shuffled with ``seed``; duplicates come after their first
    copy. ``split`` is ``tune`` (where the defaults and the filter's cut are chosen) or ``test`` (where they are
    measured): each draws its rows from its own half of the shuffled sources, so no clean pair is in both."""
    src_lang, tgt_lang = pair.split("-")
    news_src, news_tgt = load_ntrex(ntrex_code(src_lang), ntrex_code(tgt_lang), root)
    challenge = TATOEBA_CHALLENGE.get(src_lang) if tgt_lang == "en" else None
    tato = load_tatoeba_challenge(challenge, root) if challenge else ([], [])
    thirds = [lang for lang in THIRD_LANGUAGES if lang not in (src_lang, tgt_lang)]
    third = {lang: load_ntrex(ntrex_code(lang), "eng", root)[0] for lang in thirds}
    bitext = noisy_from_rows(pair, (news_src, news_tgt), tato, third, split=split, clean=clean, per_kind=per_kind,
                             seed=seed)
    corpora = "NTREX-128 and Tatoeba-Challenge test" if challenge else "NTREX-128"
    description = (f"noisy {pair} dev bitext, {split} split (xlsent.data.noisy_bitext, seed {seed}): up to {clean} "
                   f"clean pairs from {corpora}, {per_kind} of each noise kind")
    files = _source_files(root, [lang for lang in (src_lang, tgt_lang, *thirds) if lang != "en"], challenge)
    return NoisyBitext(pair, bitext.src, bitext.tgt, bitext.kind, description, files)


def noisy_from_rows(pair: str, ordered: tuple[list[str], list[str]], extra: tuple[list[str], list[str]],
                    third: dict[str, list[str]], *, split: str, clean: int, per_kind: int, seed: int) -> NoisyBitext:
    """A labelled noisy bitext of ``pair`` from clean rows: ``ordered`` pairs in document order (each row's
    neighbour is the next row; the noise is made from them) and ``extra`` clean pairs in any order; ``third``
    holds lines in other languages (a ``wrong_language`` target is one of them). Half of the shuffled rows belong
    to each ``split``; ``clean`` and ``per_kind`` shrink to what the rows allow."""
    src_lang, tgt_lang = pair.split("-")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    rng = random.Random(f"{pair}-{seed}")
    news_src, news_tgt = ordered
    tato_src, tato_tgt = extra
    thirds = sorted(third)
    news = [i for i in range(len(news_src) - 1) if news_src[i].strip() and news_tgt[i].strip()]
    tato = [i for i in range(len(tato_src)) if tato_src[i].strip() and tato_tgt[i].strip()]
    rng.shuffle(news)
    rng.shuffle(tato)
    half = SPLITS.index(split)
    news, tato = news[half::2], tato[half::2]
    seen: set[tuple[str, str]] = set()
    rows: list[tuple[str, str, str]] = []
    from_news = min(clean // 2 if tato else clean, len(news) // 2)
    per_kind = min(per_kind, (len(news) - from_news) // 3)
    for s, t in [(news_src[i], news_tgt[i]) for i in news[:from_news]] + [(tato_src[i], tato_tgt[i])
                                                                         for i in tato[:clean - from_news]]:
        if (s.lower(), t.lower()) not in seen:
            seen.add((s.lower(), t.lower()))
            rows.append((s.strip(), t.strip(), "clean"))
    spare = news[from_news:]
    long_enough = iter(spare[per_kind:len(spare) - per_kind])
    for j in range(per_kind):
        i, other = spare[j], spare[-1 - j]
        s, t = news_src[i].strip(), news_tgt[i].strip()
        rows.append((s, news_tgt[other].strip(), "misaligned"))
        rows.append((s, news_tgt[i + 1].strip(), "shifted"))
        if thirds:
            lines = third[rng.choice(thirds)]
            rows.append((s, lines[i % len(lines)].strip(), "wrong_language"))
        copy = (s, s) if j % 2 else (t, t)
        rows.append((copy[0], copy[1] if j % 3 else _variant(copy[1], rng), "untranslated"))
        ws, wt = _words(s, src_lang), _words(t, tgt_lang)
        rows.append((s, _join(wt[:len(wt) // 2], tgt_lang) + " " + _join(ws[len(ws) // 2:], src_lang),
                     "half_translated"))
        cut = next(filter(None, (_partial(news_src[r].strip(), news_tgt[r].strip(), src_lang, tgt_lang, rng)
                                 for r in long_enough)), None)
        if cut is not None:
            rows.append((*cut, "partial"))
        rows.append((*_boilerplate(rng, src_lang, tgt_lang), "boilerplate"))
    rng.shuffle(rows)
    clean_rows = [r for r in rows if r[2] == "clean"]
    for j in range(min(per_kind, len(clean_rows))):
        s, t, _ = clean_rows[j]
        at = rng.randrange(rows.index(clean_rows[j]) + 1, len(rows) + 1)
        rows.insert(at, (s, t, "duplicate") if j % 2 else (_variant(s, rng), _variant(t, rng), "duplicate"))
    return NoisyBitext(pair, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])


def _source_files(root: str | Path | None, ntrex_langs: list[str], challenge: str | None) -> list[Path]:
    """The data files a dev bitext is read from: the NTREX-128 files of ``ntrex_langs`` and English, and the
    Tatoeba-Challenge test folder of ``challenge`` (None: none)."""
    ntrex = dataset_path(root, "parallel", "ntrex128", "NTREX-128")
    files = [ntrex / "newstest2019-src.eng.txt", *(ntrex / f"newstest2019-ref.{ntrex_code(lang)}.txt"
                                                   for lang in ntrex_langs)]
    if challenge is None:
        return files
    base = dataset_path(root, "parallel", "tatoeba_challenge_test")
    folder = base / f"{challenge}-eng" if (base / f"{challenge}-eng").is_dir() else base / f"eng-{challenge}"
    return [*files, *sorted(folder.iterdir())]
