"""A user's bitext for ``--bitext``: the three file forms, what is left out and logged, the held-out split, the
errors that name file and line, the checksum record ``--resume`` checks, and the config keys that carry it."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from xlsent.data.user_bitext import (
    MIN_HELD_OUT,
    RECORD_FILE,
    BitextError,
    BitextFile,
    check_unchanged,
    held_out_count,
    load_user_bitext,
    parse_bitext_option,
    read_user_bitext,
    shipped_without,
    split_user_pairs,
)
from xlsent.training.config import ConfigError, build_config, to_toml
from xlsent.training.method import get_method, with_user_bitext


def pairs_tsv(path: Path, n: int, prefix: str = "x") -> Path:
    path.write_text("".join(f"{prefix} sentence {i}\tenglish {i}\n" for i in range(n)), encoding="utf-8")
    return path


def test_the_three_forms_read_the_same_pairs(tmp_path: Path) -> None:
    tsv = tmp_path / "kab.tsv"
    tsv.write_text(" a 1 \tone\nb 2\t two\n", encoding="utf-8")
    jsonl = tmp_path / "kab.jsonl"
    jsonl.write_text('{"kab": "a 1", "en": "one"}\n{"text": "b 2", "english": "two"}\n', encoding="utf-8")
    (tmp_path / "x.txt").write_text("a 1\nb 2\n", encoding="utf-8")
    (tmp_path / "e.txt").write_text("one\r\ntwo\r\n", encoding="utf-8")
    two = parse_bitext_option(f"kab={tmp_path / 'x.txt'},{tmp_path / 'e.txt'}")
    for spec in (BitextFile("kab", str(tsv)), BitextFile("kab", str(jsonl)), two):
        data = read_user_bitext(spec)
        assert (data.xx, data.en) == (["a 1", "b 2"], ["one", "two"])
        assert set(data.sha256) == {str(p) for p in spec.files}


def test_a_jsonl_with_two_fields_one_english_needs_no_names(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"quechua": "allillanchu", "eng": "hello"}\n', encoding="utf-8")
    assert read_user_bitext(BitextFile("qu", str(path))).xx == ["allillanchu"]


def test_empty_sides_and_repeats_are_left_out_counted_and_logged(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("a\tone\n\u200b\ttwo\nb\t \na\tone\nc\tthree\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        data = read_user_bitext(BitextFile("kab", str(path)))
    assert data.xx == ["a", "c"] and data.empty_lines == [2, 3] and data.repeated == 1
    assert "2 pair(s) with an empty side left out (line 2, 3)" in caplog.text


@pytest.mark.parametrize(("content", "message"), [
    (b"a\tb\nno tab here\n", "p.tsv:2: 0 tab(s)"),
    (b"a\tb\tc\n", "p.tsv:1: 2 tab(s)"),
    (b"a\tb\nbad \xff\tx\n", "p.tsv:2: invalid UTF-8"),
])
def test_malformed_tsv_lines_are_named(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "p.tsv").write_bytes(content)
    with pytest.raises(BitextError, match=re.escape(message)):
        read_user_bitext(BitextFile("kab", str(tmp_path / "p.tsv")))


@pytest.mark.parametrize(("name", "content"), [("p.tsv", "a 1\tone\n"), ("p.jsonl", '{"kab": "a 1", "en": "one"}\n')])
def test_a_leading_bom_is_not_text(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + content.encode("utf-8"))  # as Windows editors save UTF-8
    assert read_user_bitext(BitextFile("kab", str(path))).xx == ["a 1"]


def test_jsonl_without_the_fields_is_named(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text('{"kab": "a", "en": "b"}\n{"src": "a", "tgt": "b"}\n', encoding="utf-8")
    with pytest.raises(BitextError, match=r"p.jsonl:2: expected the text under 'kab' or 'text'"):
        read_user_bitext(BitextFile("kab", str(tmp_path / "p.jsonl")))


def test_two_files_of_other_lengths_and_missing_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "e.txt").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(BitextError, match="x.txt has 3 lines but .*e.txt has 2"):
        read_user_bitext(BitextFile("kab", str(tmp_path / "x.txt"), str(tmp_path / "e.txt")))
    with pytest.raises(BitextError, match="nope.tsv: no such file"):
        read_user_bitext(BitextFile("kab", str(tmp_path / "nope.tsv")))


def test_a_name_that_is_no_language_code_is_refused_one_outside_the_table_warned(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = pairs_tsv(tmp_path / "p.tsv", 10)
    with pytest.raises(ValueError, match="'Kabyle' is not a language code"):
        load_user_bitext([BitextFile("Kabyle", str(path))], hold_out=False, seed=0)
    with caplog.at_level(logging.WARNING):
        user = load_user_bitext([BitextFile("qaa", str(path))], hold_out=False, seed=0)
    assert user.languages == ["qaa"] and "'qaa' is not in xlsent's language table" in caplog.text
    assert user.records[0]["in_language_table"] is False and user.records[0]["pairs"] == 10


def test_the_same_file_or_language_twice_is_refused(tmp_path: Path) -> None:
    a, b = pairs_tsv(tmp_path / "a.tsv", 10), pairs_tsv(tmp_path / "b.tsv", 10)
    with pytest.raises(BitextError, match="a.tsv given more than once"):
        load_user_bitext([BitextFile("kab", str(a)), BitextFile("qu", str(a))], hold_out=False, seed=0)
    with pytest.raises(BitextError, match="language.s. kab given more than once"):
        load_user_bitext([BitextFile("kab", str(a)), BitextFile("kab", str(b))], hold_out=False, seed=0)
    with pytest.raises(BitextError, match=r"language.s. de, deu given more than once \(codes of one language"):
        load_user_bitext([BitextFile("de", str(a)), BitextFile("deu", str(b))], hold_out=False, seed=0)
    with pytest.raises(BitextError, match="eng is English, the other side of every pair"):
        load_user_bitext([BitextFile("eng", str(a))], hold_out=False, seed=0)


def test_a_folder_given_as_the_pairs_is_named_as_a_folder(tmp_path: Path) -> None:
    with pytest.raises(BitextError, match="is a directory .given with --bitext.; give the file of pairs"):
        read_user_bitext(BitextFile("kab", str(tmp_path)))


def test_a_user_language_replaces_the_shipped_pairs_under_any_of_its_codes(tmp_path: Path) -> None:
    user = load_user_bitext([BitextFile("deu", str(pairs_tsv(tmp_path / "a.tsv", 10)))], hold_out=False, seed=0)
    assert shipped_without(["de", "fr", "zh"], user) == ["fr", "zh"]


def test_the_held_out_split_is_seeded_and_shares_no_sentence_with_training(tmp_path: Path) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("".join(f"x {i % 400}\te {i}\n" for i in range(600)), encoding="utf-8")  # x sides repeat
    data = read_user_bitext(BitextFile("kab", str(path)))
    a = split_user_pairs(data, hold_out=True, seed=0, index=0)
    assert a == split_user_pairs(data, hold_out=True, seed=0, index=0)
    assert a != split_user_pairs(data, hold_out=True, seed=1, index=0)
    assert len(a.valid_xx) == held_out_count(600) == 60
    assert not (set(a.valid_xx) & set(a.xx)) and not (set(a.valid_en) & set(a.en))
    assert len(a.xx) < 600 - 60  # the training pairs repeating a held-out sentence are left out too


def test_too_few_pairs_for_the_held_out_split_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = pairs_tsv(tmp_path / "few.tsv", 2 * MIN_HELD_OUT - 1)
    data = read_user_bitext(BitextFile("kab", str(path)))
    with pytest.raises(BitextError, match=f"few.tsv: {2 * MIN_HELD_OUT - 1} usable pair.s.; at least "
                                          f"{2 * MIN_HELD_OUT} are needed"):
        split_user_pairs(data, hold_out=True, seed=0, index=0)
    assert len(split_user_pairs(data, hold_out=False, seed=0, index=0).xx) == 2 * MIN_HELD_OUT - 1


def test_resume_refuses_a_changed_file_naming_it(tmp_path: Path) -> None:
    path = pairs_tsv(tmp_path / "p.tsv", 10)
    run = tmp_path / "run"
    records = load_user_bitext([BitextFile("kab", str(path))], hold_out=False, seed=0).records
    check_unchanged(run, records, resume=False)
    assert json.loads((run / RECORD_FILE).read_text())[0]["sha256"] == records[0]["sha256"]
    check_unchanged(run, records, resume=True)
    pairs_tsv(path, 11)
    changed = load_user_bitext([BitextFile("kab", str(path))], hold_out=False, seed=0).records
    with pytest.raises(BitextError, match=r"--resume with changed --bitext file\(s\): .*p.tsv"):
        check_unchanged(run, changed, resume=True)


def test_bitext_tables_in_a_toml_config_round_trip_through_the_config() -> None:
    method = get_method("distill")
    layers = [method.defaults_text(), '[[bitext]]\nlang = "kab"\npath = "kab.tsv"\n\n[[bitext]]\nlang = "qu"\n'
                                      'path = "qu.txt"\nenglish = "en.txt"\n']
    cfg = build_config(method.config_class, layers)
    assert cfg.bitext == [BitextFile("kab", "kab.tsv"), BitextFile("qu", "qu.txt", "en.txt")]  # type: ignore[attr-defined]
    assert build_config(method.config_class, [to_toml(cfg)]) == cfg
    with pytest.raises(ConfigError, match="bitext: bitext entry .*expected a table with lang, path"):
        build_config(method.config_class, [method.defaults_text(), '[[bitext]]\nlanguage = "kab"\n'])


def test_the_option_joins_the_config_and_only_methods_that_learn_from_bitext_take_it() -> None:
    cfg = with_user_bitext(get_method("laser").config(sets=['bitext=["de=a.tsv"]']), ["kab=k.tsv"], True)
    assert [b.lang for b in cfg.bitext] == ["de", "kab"] and cfg.bitext_only  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="takes no user bitext"):
        with_user_bitext(get_method("dual-pivot").config(), ["kab=k.tsv"], False)
    with pytest.raises(ConfigError, match="bitext_only needs at least one --bitext"):
        with_user_bitext(get_method("distill").config(), [], True)


def test_the_shipped_models_keep_their_fingerprints() -> None:
    """The new keys at their defaults are left out of the fingerprint (models trained before them still resume)."""
    root = Path(__file__).resolve().parents[2] / "models"
    for name, method in (("me5-distill", "distill"), ("laser-small", "laser")):
        manifest = json.loads((root / name / "xlsent.json").read_text(encoding="utf-8"))
        config = build_config(get_method(method).config_class, [{k: v for k, v in manifest["config"].items()}])
        assert config.fingerprint() == manifest["fingerprint"], name


def test_a_run_started_without_resume_leaves_the_earlier_runs_record(tmp_path: Path) -> None:
    path = pairs_tsv(tmp_path / "p.tsv", 10)
    first = load_user_bitext([BitextFile("kab", str(path))], hold_out=False, seed=0).records
    check_unchanged(tmp_path / "run", first, resume=False)
    pairs_tsv(path, 12)
    check_unchanged(tmp_path / "run", load_user_bitext([BitextFile("kab", str(path))], hold_out=False,
                                                       seed=0).records, resume=False)
    assert json.loads((tmp_path / "run" / RECORD_FILE).read_text())[0]["sha256"] == first[0]["sha256"]
