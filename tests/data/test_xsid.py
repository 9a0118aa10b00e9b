"""xSID reader: ids shared across languages, aligned on the English text."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.data.xsid import XSID_LANGS, IntentSet, load_xsid
from xlsent.testing import dataset_or_skip


@pytest.fixture(scope="module")
def root() -> Path:
    return dataset_or_skip("xsid")


def agreement(a: IntentSet, b: IntentSet) -> tuple[int, int]:
    """(ids in common, of which with the same intent)."""
    intents = dict(zip(b.ids, b.intents, strict=True))
    common = [(i, intent) for i, intent in zip(a.ids, a.intents, strict=True) if i in intents]
    return len(common), sum(intent == intents[i] for i, intent in common)


@pytest.mark.data
def test_languages_are_those_with_a_test_file(root: Path) -> None:
    assert {p.name.removesuffix(".test.conll") for p in (root / "xsid").glob("*.test.conll")} == set(XSID_LANGS)


@pytest.mark.data
def test_english_test_and_valid(root: Path) -> None:
    en = load_xsid("en", "test", root)
    assert len(en.ids) == len(en.texts) == len(en.intents) == 500
    assert en.ids == [str(i) for i in range(1, 501)] and en.texts_en == en.texts
    assert en.texts[0] == "show all reminders" and en.intents[0] == "reminder/show_reminders"
    assert len(load_xsid("en", "valid", root).ids) == 300


@pytest.mark.data
def test_german_ids_match_english_with_the_same_intents(root: Path) -> None:
    en, de = load_xsid("en", "test", root), load_xsid("de", "test", root)
    assert de.ids == en.ids and de.texts_en == en.texts
    common, same = agreement(de, en)
    assert common == 500 and same >= 0.95 * common
    assert de.texts[0] == "Zeige alle Erinnerungen"


@pytest.mark.data
@pytest.mark.parametrize("split", ["test", "valid"])
def test_every_language_aligns_with_english(root: Path, split: str) -> None:
    en = load_xsid("en", split, root)
    for lang in XSID_LANGS:
        data = load_xsid(lang, split, root)
        assert len(set(data.ids)) == len(data.ids) == len(data.texts) == len(data.texts_en)
        assert data.ids == sorted(data.ids, key=int)
        common, same = agreement(data, en)
        assert common == len(data.ids) == (len(en.ids) // 2 if lang == "ja" else len(en.ids))
        if lang == "ar" and split == "test":
            assert common - same == 26  # labelling quirk of the source, documented in the data README
        else:
            assert same >= 0.99 * common, lang


@pytest.mark.data
def test_shuffled_and_badly_numbered_files_are_aligned(root: Path) -> None:
    # lt's own "# id" lines repeat; de-ba is in another order, with 3 edited "# text-en" lines.
    en = load_xsid("en", "test", root)
    for lang in ("lt", "de-ba"):
        data = load_xsid(lang, "test", root)
        assert agreement(data, en) == (500, 500)
    de_ba = load_xsid("de-ba", "test", root)
    assert de_ba.texts_en == en.texts


@pytest.mark.data
def test_norwegian_is_the_bokmaal_version(root: Path) -> None:
    no = load_xsid("no", "test", root)
    assert no.ids == [str(i) for i in range(1, 501)]
    assert no.texts[0] == "Vis alle påminnelser" and no.texts_en[0] == "show all reminders"


def write(root: Path, name: str, text: str) -> None:
    (root / "xsid").mkdir(parents=True, exist_ok=True)
    (root / "xsid" / name).write_text(text, encoding="utf-8")


EN = ("# text = hello\n# intent = greet\n# slots: \n1\thello\tgreet\tO\n\n"
      "# text = bye\n# intent = leave\n1\tbye\tleave\tO\n\n"
      "# text = hello\n# intent = greet\n1\thello\tgreet\tO\n")


def test_synthetic_alignment_by_english_text(tmp_path: Path) -> None:
    write(tmp_path, "en.test.conll", EN)
    write(tmp_path, "de.test.conll",
          "# id = 9\n# text-en = bye\n# text = tschüss\n# intent = leave\n\n"
          "# id = 9\n# text-en = hello\n# text = hallo\n# intent = greet\n\n"
          "# id = 9\n# text-en = hello!\n# text = hallo!\n# intent = greet\n")
    de = load_xsid("de", "test", tmp_path)
    assert de.ids == ["1", "2", "3"] and de.texts == ["hallo", "tschüss", "hallo!"]
    assert de.texts_en == ["hello", "bye", "hello"]


def test_malformed_files_name_the_line(tmp_path: Path) -> None:
    write(tmp_path, "en.test.conll", EN)
    write(tmp_path, "de.test.conll", "# text-en = bye\n# text = tschüss\n# intent = leave\n\n"
                                     "\n# text-en = hello\n# text = hallo\n1\thallo\tx\tO\n")
    with pytest.raises(ValueError, match=r"de\.test\.conll:6: utterance without a '# intent = \.\.\.' line"):
        load_xsid("de", "test", tmp_path)
    write(tmp_path, "it.test.conll", "# text-en = something else entirely\n# text = x\n# intent = y\n")
    with pytest.raises(ValueError, match="matches no English utterance"):
        load_xsid("it", "test", tmp_path)
    with pytest.raises(ValueError, match="unknown xSID language 'fr'; valid: ar da de"):
        load_xsid("fr", "test", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"nl\.test\.conll"):
        load_xsid("nl", "test", tmp_path)
