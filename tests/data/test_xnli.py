"""XNLI reader: dev labels from the files, test labels joined by row from the labelled sw/ur copies."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from xlsent.data.xnli import XNLI_LABELS, XNLI_LANGS, load_xnli
from xlsent.testing import dataset_or_skip


@pytest.fixture(scope="module")
def root() -> Path:
    return dataset_or_skip("xnli")


@pytest.mark.data
def test_languages_match_the_folder(root: Path) -> None:
    assert {p.name[len("dev-"):-len(".tsv")] for p in (root / "xnli" / "xtreme").glob("dev-*.tsv")} == set(XNLI_LANGS)


@pytest.mark.data
def test_dev_is_labelled_and_balanced_in_every_language(root: Path) -> None:
    english = load_xnli("en", "dev", root)
    assert english.premises[0] == "And he said, Mama, I'm home." and english.labels[:2] == ["neutral", "contradiction"]
    for lang in XNLI_LANGS:
        dev = load_xnli(lang, "dev", root)
        assert len(dev.premises) == len(dev.hypotheses) == len(dev.labels) == 2490
        assert Counter(dev.labels) == {label: 830 for label in XNLI_LABELS}
        assert dev.labels == english.labels  # the same items in the same order in every language
        assert not any(h.endswith("\r") for h in dev.hypotheses)


@pytest.mark.data
def test_test_has_a_label_for_every_row(root: Path) -> None:
    for lang in XNLI_LANGS:
        test = load_xnli(lang, "test", root)
        assert (test.lang, test.split) == (lang, "test")
        assert len(test.premises) == len(test.hypotheses) == len(test.labels) == 5010
        assert Counter(test.labels) == {label: 1670 for label in XNLI_LABELS}
    english = load_xnli("en", "test", root)
    assert english.hypotheses[:2] == ["I havent spoken to him again.",
                                      "I was so upset that I just started talking to him again."]
    assert english.labels[:2] == ["contradiction", "entailment"]


def fake_xnli(root: Path, ur_hypothesis_0: str = "h0") -> None:
    xtreme = root / "xnli" / "xtreme"
    xtreme.mkdir(parents=True)
    labels = [XNLI_LABELS[i % 3] for i in range(5010)]
    for lang in ("en", "sw", "ur"):
        (xtreme / f"test-{lang}.tsv").write_text("".join(f"p{i}\th{i}\r\n" for i in range(5010)), encoding="utf-8")
        if lang == "en":
            continue
        folder = root / "xnli" / "labels_en_sw_ur" / "output" / lang
        folder.mkdir(parents=True)
        rows = [f"genre\t{label}\t p{i}\t{ur_hypothesis_0 if (i, lang) == (0, 'ur') else f'h{i}'}\n"
                for i, label in enumerate(labels)]
        (folder / f"{lang}.genre.test.tsv").write_text("genre\tlabel\ts1\ts2\n" + "".join(rows), encoding="utf-8")
    (xtreme / "dev-en.tsv").write_text("p\th\tneutral\np\th\tmaybe\n", encoding="utf-8")


def test_test_labels_are_joined_by_row_and_checked_on_text(tmp_path: Path) -> None:
    fake_xnli(tmp_path / "good")
    test = load_xnli("en", "test", tmp_path / "good")
    assert test.labels[:4] == ["contradiction", "entailment", "neutral", "contradiction"]
    assert test.hypotheses[0] == "h0"
    fake_xnli(tmp_path / "bad", ur_hypothesis_0="something else")
    with pytest.raises(ValueError, match=r"ur\.genre\.test\.tsv:2: text differs from .*test-ur\.tsv:1"):
        load_xnli("en", "test", tmp_path / "bad")


def test_errors_name_file_line_and_choices(tmp_path: Path) -> None:
    fake_xnli(tmp_path)
    with pytest.raises(ValueError, match=r"dev-en\.tsv:2: label 'maybe', expected one of contradiction"):
        load_xnli("en", "dev", tmp_path)
    with pytest.raises(ValueError, match="unknown XNLI language 'xx'; valid: ar bg de"):
        load_xnli("xx", "dev", tmp_path)
    with pytest.raises(ValueError, match="unknown XNLI split 'train'; valid: dev test"):
        load_xnli("en", "train", tmp_path)
    (tmp_path / "xnli" / "xtreme" / "test-en.tsv").write_text("p\th\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"test-en\.tsv: 1 rows, expected the 5010"):
        load_xnli("en", "test", tmp_path)
    with pytest.raises(FileNotFoundError, match="dev-de.tsv"):
        load_xnli("de", "dev", tmp_path)
