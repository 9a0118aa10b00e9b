"""xSID 0.7 intent detection: the same utterances in English and 18 other languages and dialects.

Utterances get the same id in every language: the 1-based position of the utterance in the English file of the
split, which is also the ``# id`` of most files (de, da, ...). A query's own translation can thus be found, or
removed from a pool, by id.
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass
from pathlib import Path

from xlsent.data._files import check_choice, dataset_path, read_lines

logger = logging.getLogger(__name__)

XSID_LANGS: tuple[str, ...] = (
    "ar", "da", "de", "de-ba", "de-muc", "de-st", "en", "gsw", "id", "it", "ja", "kk", "lt", "nap", "nl", "no",
    "sr", "tr", "zh",
)
"""Languages and dialects with a test (and valid) file."""

XSID_SPLITS: tuple[str, ...] = ("valid", "test")

# A ``# text-en`` line not found verbatim in the English file is matched to the most similar unused English
# utterance if at least this similar (difflib ratio); at most this share of a file (or 3 lines) may need it.
_MIN_SIMILARITY = 0.6
_MAX_INEXACT_SHARE = 0.05
_MAX_INEXACT_LINES = 3


@dataclass(frozen=True)
class IntentSet:
    """Utterances with their intent labels, ids shared across languages, and the English utterance of each id."""

    lang: str
    split: str
    ids: list[str]
    texts: list[str]
    intents: list[str]
    texts_en: list[str]


@dataclass(frozen=True)
class _Block:
    line_no: int
    comments: dict[str, str]

    def get(self, key: str, path: Path) -> str:
        if key not in self.comments:
            raise ValueError(f"{path}:{self.line_no}: utterance without a '# {key} = ...' line")
        return self.comments[key]


def load_xsid(lang: str, split: str = "test", root: str | Path | None = None) -> IntentSet:
    """The xSID ``split`` (``valid`` or ``test``) utterances in ``lang``, ordered by id.

    Ids come from matching each utterance's ``# text-en`` to the English file (the file's own ``# id`` is not
    used: lt's ids are not unique and de-ba's follow another order); English sentences repeated in the file are
    matched in order, and the few ``# text-en`` lines edited in the source (3 in de-ba test, 1 in de-muc valid)
    to the most similar remaining English utterance. ``texts_en`` is the English file's text of each id.
    Norwegian (``no``) has no ``# text-en`` but 11 versions of each utterance (ids ``N/B`` and ``N/1``..``N/10``):
    the Bokmål version ``N/B`` is returned with id ``N``. Japanese has the first half of the utterances only.
    """
    check_choice(lang, XSID_LANGS, "xSID language")
    check_choice(split, XSID_SPLITS, "xSID split")
    en_path = dataset_path(root, "xsid", f"en.{split}.conll")
    english = _read_blocks(en_path)
    english_texts = [b.get("text", en_path) for b in english]
    if lang == "en":
        positions = list(range(len(english)))
        blocks = english
        path = en_path
    else:
        path = dataset_path(root, "xsid", f"{lang}.{split}.conll")
        blocks = _read_blocks(path)
        if lang == "no":
            blocks = [b for b in blocks if b.get("id", path).endswith("/B")]
            positions = _positions_from_ids(blocks, len(english), path)
        else:
            positions = _align([b.get("text-en", path) for b in blocks], english_texts, path)
    rows = sorted(zip(positions, blocks, strict=True), key=lambda row: row[0])
    return IntentSet(
        lang=lang, split=split, ids=[str(p + 1) for p, _ in rows], texts=[b.get("text", path) for _, b in rows],
        intents=[b.get("intent", path) for _, b in rows], texts_en=[english_texts[p] for p, _ in rows],
    )


def _read_blocks(path: Path) -> list[_Block]:
    """The utterances of a CoNLL file: the ``# key = value`` comments of each blank-line separated block."""
    blocks: list[_Block] = []
    comments: dict[str, str] = {}
    start = 0
    for n, line in enumerate([*read_lines(path), ""], 1):
        if not line.strip():
            if comments:
                blocks.append(_Block(start, comments))
            comments = {}
            continue
        if not comments:
            start = n
        if line.startswith("# ") and " = " in line:
            key, _, value = line[2:].partition(" = ")
            comments.setdefault(key, value)
    return blocks


def _positions_from_ids(blocks: list[_Block], n_english: int, path: Path) -> list[int]:
    """0-based English positions from ``# id = N/variant`` comments."""
    positions = []
    for block in blocks:
        number = block.get("id", path).partition("/")[0]
        if not number.isdecimal() or not 1 <= int(number) <= n_english:
            raise ValueError(f"{path}:{block.line_no}: id {block.get('id', path)!r}, expected N/variant with N "
                             f"in 1..{n_english}")
        positions.append(int(number) - 1)
    if len(set(positions)) != len(positions):
        raise ValueError(f"{path}: repeated utterance ids; expected one version per id")
    return positions


def _align(texts_en: list[str], english: list[str], path: Path) -> list[int]:
    """The 0-based position in ``english`` of each of ``texts_en``, each position used at most once."""
    if len(texts_en) > len(english):
        raise ValueError(f"{path}: {len(texts_en)} utterances, more than the {len(english)} English ones")
    positions: list[int | None] = [None] * len(texts_en)
    used: set[int] = set()
    for j, text in enumerate(texts_en):  # same text at the same position
        if j < len(english) and english[j] == text:
            positions[j] = j
            used.add(j)
    by_text: dict[str, list[int]] = {}
    for i, text in enumerate(english):
        if i not in used:
            by_text.setdefault(text, []).append(i)
    for j, text in enumerate(texts_en):  # same text elsewhere: repeated sentences in order
        if positions[j] is None and by_text.get(text):
            position = by_text[text].pop(0)
            positions[j] = position
            used.add(position)
    left = [j for j, p in enumerate(positions) if p is None]
    if len(left) > max(_MAX_INEXACT_LINES, _MAX_INEXACT_SHARE * len(texts_en)):
        raise ValueError(f"{path}: {len(left)} '# text-en' lines not found in the English file; expected the same "
                         "utterances in every language")
    for j in left:
        free = [i for i in range(len(english)) if i not in used]
        scores = [difflib.SequenceMatcher(None, texts_en[j], english[i]).ratio() for i in free]
        best = max(range(len(free)), key=scores.__getitem__)
        if scores[best] < _MIN_SIMILARITY:
            raise ValueError(f"{path}: '# text-en = {texts_en[j]}' matches no English utterance")
        logger.warning("%s: '# text-en = %s' matched to English utterance %d %r (similarity %.2f)", path,
                       texts_en[j], free[best] + 1, english[free[best]], scores[best])
        positions[j] = free[best]
        used.add(free[best])
    return [p for p in positions if p is not None]
