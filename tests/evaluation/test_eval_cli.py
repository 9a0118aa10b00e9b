"""``xlsent eval`` refuses what it cannot save or record before the tasks run, and saves nothing then."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from xlsent.cli import main

TOY_MODULE = '''import numpy as np
from xlsent.testing import LookupEncoder


def onehot():
    eye = np.eye(3)
    return LookupEncoder({s: eye[i] for lang in ("deu", "fra") for i in range(3)
                          for s in (f"{lang} sentence {i}", f"english {lang} {i}")}, name="toy")


def unloadable():
    raise RuntimeError("the encoder was loaded: the input should have been refused before any work")
'''


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` with Tatoeba data of deu and fra (3 pairs each) under ``data`` and the module ``evaltoy``."""
    folder = tmp_path / "data" / "tatoeba_v1"
    folder.mkdir(parents=True)
    for lang in ("deu", "fra"):
        (folder / f"tatoeba.{lang}-eng.{lang}").write_text("".join(f"{lang} sentence {i}\n" for i in range(3)))
        (folder / f"tatoeba.{lang}-eng.eng").write_text("".join(f"english {lang} {i}\n" for i in range(3)))
    (tmp_path / "evaltoy.py").write_text(TOY_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    return tmp_path


def test_record_with_a_model_that_is_no_model_directory_is_refused_before_it_loads(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "tatoeba", "--model", "evaltoy:unloadable", "--data", str(work / "data"), "-o",
                 str(work / "results"), "--record", "-q"]) == 2
    assert "--record needs an xlsent model directory as --model, not 'evaltoy:unloadable'" in capsys.readouterr().err
    assert not list(work.glob("results/*.json"))


def test_partial_run_whose_record_is_refused_writes_no_result(work: Path, tiny_model_dir: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    model = Path(shutil.copytree(tiny_model_dir, work / "model"))
    manifest = json.loads((model / "xlsent.json").read_text(encoding="utf-8"))
    manifest["metrics"] = {"tatoeba": {"main_metric": "mean", "main_score": 50.0, "subsets": ["deu", "fra"]}}
    (model / "xlsent.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["eval", "tatoeba", "--langs", "deu", "--model", str(model), "--data", str(work / "data"), "-o",
                 str(work / "results"), "--record", "-q"]) == 2
    assert "records tatoeba over 2 subset(s); this run scores 1" in capsys.readouterr().err
    assert not list(work.glob("results/*.json"))


def test_a_folder_where_the_result_file_goes_is_refused_before_the_tasks_run(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "results" / "tatoeba__toy.json").mkdir(parents=True)
    assert main(["eval", "tatoeba", "--model", "evaltoy:onehot", "--data", str(work / "data"), "-o",
                 str(work / "results"), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"{work / 'results' / 'tatoeba__toy.json'}: is a folder" in err and "Errno" not in err


def test_a_language_whose_files_the_data_lack_is_named_missing_not_unknown(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`eval tatoeba --langs kat` on data holding deu and fra said "unknown Tatoeba language(s) ['kat']"."""
    assert main(["eval", "tatoeba", "--langs", "kat", "--model", "evaltoy:unloadable", "--data", str(work / "data"),
                 "-o", str(work / "results"), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"the files of Tatoeba language(s) ['kat'] are not under {work / 'data'}: tatoeba_v1/tatoeba.kat-eng.kat" \
        in err and "unknown" not in err


def test_langs_unknown_to_one_of_several_tasks_says_langs_applies_to_every_task(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`eval sts tatoeba --langs stsb-en,deu` said "unknown STS subset(s) ['deu']" alone."""
    (work / "data" / "stsb_multi_mt" / "data").mkdir(parents=True)
    (work / "data" / "stsb_multi_mt" / "data" / "stsb-en-test.csv").write_text("", encoding="utf-8")
    assert main(["eval", "sts", "tatoeba", "--langs", "stsb-en,deu", "--model", "evaltoy:unloadable", "--data",
                 str(work / "data"), "-o", str(work / "results"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "sts: unknown STS subset(s) ['deu']" in err
    assert "--langs applies to every task named (sts, tatoeba): run the tasks one by one" in err
    assert main(["eval", "sts", "--langs", "deu", "--model", "evaltoy:unloadable", "--data", str(work / "data"),
                 "-o", str(work / "results"), "-q"]) == 2
    assert "every task named" not in capsys.readouterr().err
