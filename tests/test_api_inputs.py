"""What the library functions of :mod:`xlsent.api` take: every one reachable as ``xlsent.NAME``, and the sentences
of ``encode`` checked before any model loads (a str is not a list of its characters; a pandas Series is read by
position); a settings object of another kind refused before any work."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import xlsent
from xlsent import api
from xlsent.align.config import AlignConfig
from xlsent.mining.config import MineConfig, SearchConfig
from xlsent.mining.filter_config import FilterConfig


def test_every_api_function_is_reached_from_the_package() -> None:
    public = {name for name in dir(api) if callable(getattr(api, name)) and not name.startswith("_")
              and getattr(getattr(api, name), "__module__", "") == "xlsent.api"}
    assert public - set(xlsent.API) == {"align"}  # xlsent.align is the alignment package
    assert all(getattr(xlsent, name) is getattr(api, name) for name in xlsent.API)


@pytest.mark.parametrize(("given", "error", "message"), [
    ("abc", TypeError, "not one str (it would embed each character)"),
    (b"abc", TypeError, "not one bytes"),
    (["a", 5], TypeError, "sentence 1 (0-based) is int, not str"),
    (["a", None], TypeError, "sentence 1 (0-based) is NoneType"),
    (["a", "b\ud800"], ValueError, "sentence 1 (0-based) holds a lone surrogate (U+D800)"),
])
def test_encode_refuses_what_is_no_list_of_sentences_before_loading(given: object, error: type[Exception],
                                                                     message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        xlsent.encode(given, model="toy:never-loaded")  # type: ignore[arg-type]


def test_encode_refuses_a_name_that_is_no_language_code() -> None:
    with pytest.raises(ValueError, match="'German' is not a language code"):
        xlsent.encode(["a"], model="toy:never-loaded", lang="German")


def test_encode_reads_a_series_by_position(tiny_model_dir: Path) -> None:
    pd = pytest.importorskip("pandas")
    texts = ["the dog barks", "a cat runs", "der hund bellt"]
    plain = xlsent.encode(texts, model=tiny_model_dir)
    shuffled = pd.Series(texts, index=[2, 1, 0])
    assert np.array_equal(xlsent.encode(shuffled, model=tiny_model_dir), plain)
    assert np.array_equal(xlsent.encode(pd.Series(texts, index=[10, 11, 12]), model=tiny_model_dir), plain)
    assert np.array_equal(xlsent.encode(iter(texts), model=tiny_model_dir), plain)  # type: ignore[arg-type]



def test_a_loaded_encoders_encode_reads_its_sentences_as_xlsent_encode_does(tiny_model_dir: Path) -> None:
    """``xlsent.load(...).encode`` (README's route) read ``sentences[i]``: a sorted Series came back with its rows in
    the order of its index labels, a filtered one raised KeyError, and a str embedded its characters."""
    pd = pytest.importorskip("pandas")
    encoder = xlsent.load(tiny_model_dir)
    texts = ["the dog barks", "a cat runs", "der hund bellt"]
    plain = encoder.encode(texts)
    assert np.array_equal(encoder.encode(pd.Series(texts, index=[2, 0, 1])), plain)
    assert np.array_equal(encoder.encode(pd.Series(texts, index=[10, 11, 12])), plain)
    assert np.array_equal(encoder.encode(t for t in texts), plain)
    with pytest.raises(TypeError, match="not one str"):
        encoder.encode("abc")
    with pytest.raises(TypeError, match=re.escape("sentence 1 (0-based) is NoneType")):
        encoder.encode(["a", None])  # type: ignore[list-item]


def test_align_says_what_is_missing() -> None:
    with pytest.raises(ValueError, match=re.escape("give SRC TGT -o OUTPUT (all three), or --pairs LIST.tsv")):
        api.align("de.txt", "fr.txt")
    with pytest.raises(ValueError, match="not both"):
        api.align("de.txt", "fr.txt", "out.beads", pairs="list.tsv")


def test_index_refuses_an_unknown_kind_before_any_work(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the dog barks\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown index kind 'bogus'"):
        api.index(corpus, tmp_path / "idx", model="toy:never-loaded", kind="bogus")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]


@pytest.mark.parametrize(("call", "message"), [
    (lambda p: xlsent.mine(p / "de.txt", p / "en.txt", p / "o.tsv", config=SearchConfig()),
     "config= takes a MineConfig, not a SearchConfig"),
    (lambda p: xlsent.score(p / "de.txt", p / "en.txt", p / "o.tsv", config=FilterConfig()),
     "config= takes a SearchConfig, not a FilterConfig"),
    (lambda p: xlsent.filter(p / "de.txt", p / "en.txt", p / "o.tsv", config=SearchConfig()),
     "config= takes a FilterConfig, not a SearchConfig"),
    (lambda p: xlsent.filter(p / "de.txt", p / "en.txt", p / "o.tsv", search=FilterConfig()),
     "search= takes a SearchConfig, not a FilterConfig"),
    (lambda p: api.align(p / "de.txt", p / "en.txt", str(p / "o.beads"), config=MineConfig()),
     "config= takes an AlignConfig, not a MineConfig"),
    (lambda p: xlsent.embed(p / "de.txt", p / "o.npy", options=AlignConfig()),
     "options= takes an EmbedOptions, not an AlignConfig"),
], ids=["mine", "score", "filter-config", "filter-search", "align", "embed"])
def test_a_settings_object_of_another_kind_is_refused_before_any_work(tmp_path: Path, call: Callable[[Path], object],
                                                                       message: str) -> None:
    for name in ("de.txt", "en.txt"):
        (tmp_path / name).write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(TypeError, match=re.escape(message)):
        call(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["de.txt", "en.txt"]


def test_an_input_spec_takes_a_str_path_and_an_int_column(tiny_model_dir: Path, tmp_path: Path) -> None:
    """A str path or an int column in an InputSpec (as the functions take a str path) failed deep in the run with
    AttributeError; they are taken as a Path and a column index, and another type is a TypeError naming the field."""
    from xlsent.api import EmbedOptions
    from xlsent.data.text_input import InputSpec

    (tmp_path / "in.tsv").write_text("id\ttext\n1\tthe dog\n2\ta cat\n", encoding="utf-8")
    quiet = EmbedOptions(progress=False)
    by_str = xlsent.embed(InputSpec(str(tmp_path / "in.tsv"), column="text"), tmp_path / "a.npy",  # type: ignore
                          model=tiny_model_dir, options=quiet)
    by_int = xlsent.embed(InputSpec(tmp_path / "in.tsv", column=1, header=True), tmp_path / "b.npy",  # type: ignore
                          model=tiny_model_dir, options=quiet)
    assert by_str.rows == by_int.rows == 2
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))
    with pytest.raises(TypeError, match="InputSpec path takes Path, not int"):
        InputSpec(3)  # type: ignore[arg-type]


def test_a_table_a_code_of_another_type_and_a_word_threshold_are_refused_by_name() -> None:
    pd = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match=re.escape("not a DataFrame (it would embed its column names)")):
        xlsent.encode(pd.DataFrame({"text": ["a", "b"]}), model="toy:never-loaded")
    with pytest.raises(TypeError, match=re.escape("a language code is a str (de, deu, zh-Hant), not int 3")):
        xlsent.encode(["a"], model="toy:never-loaded", lang=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("threshold='high': give a finite number or 'auto'")):
        xlsent.mine("de.txt", "en.txt", "o.tsv", model="toy:never-loaded", threshold="high")
