from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from xlsent.evaluation import tatoeba
from xlsent.evaluation.retrieval import ratio_margin, retrieval_accuracy
from xlsent.evaluation.runner import evaluate_task, run_task
from xlsent.testing import LookupEncoder


def fake_tatoeba(tmp_path: Path, langs: dict[str, int]) -> Path:
    root = tmp_path / "data"
    (root / "tatoeba_v1").mkdir(parents=True)
    for lang, n in langs.items():
        (root / "tatoeba_v1" / f"tatoeba.{lang}-eng.{lang}").write_text(
            "".join(f"{lang} sentence {i}\n" for i in range(n)), encoding="utf-8")
        (root / "tatoeba_v1" / f"tatoeba.{lang}-eng.eng").write_text(
            "".join(f"english {lang} {i}\n" for i in range(n)), encoding="utf-8")
    return root


def one_hot_encoder(langs: dict[str, int], shuffle: bool = False) -> LookupEncoder:
    rng = np.random.default_rng(0)
    dim = max(langs.values())
    table = {}
    for lang, n in langs.items():
        perm = rng.permutation(n) if shuffle else np.arange(n)
        for i in range(n):
            table[f"{lang} sentence {i}"] = np.eye(dim)[i]
            table[f"english {lang} {i}"] = np.eye(dim)[perm[i]]
    return LookupEncoder(table, name="onehot-shuffled" if shuffle else "onehot")


def test_one_hot_line_encoder_is_perfect_and_shuffled_is_not(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    langs = {"deu": 30, "fra": 20}
    root = fake_tatoeba(tmp_path, langs)
    perfect = run_task("tatoeba", one_hot_encoder(langs), root=root)
    assert perfect.scores["deu"] == {"xx->en": 100.0, "en->xx": 100.0, "mean": 100.0, "pairs": 30.0}
    shuffled = run_task("tatoeba", one_hot_encoder(langs, shuffle=True), root=root)
    assert shuffled.main_score < 15
    with pytest.raises(ValueError, match="unknown Tatoeba language"):
        run_task("tatoeba", one_hot_encoder(langs), root=root, langs=["xyz"])


def test_any_embedding_function_is_scored_as_the_encoder_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            recording_embed: Any) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    langs = {"deu": 12, "fra": 8}
    root = fake_tatoeba(tmp_path, langs)
    table = one_hot_encoder(langs).table
    encoder = LookupEncoder(table | {"english deu 0": table["english deu 1"], "english deu 1": table["english deu 0"]},
                            name="swapped")
    embed = recording_embed(encoder)
    result = tatoeba.evaluate(embed, encoder_id="fn", langs=["deu"], root=root)
    assert embed.calls == [(12, "deu"), (12, "eng")]
    assert result.scores["deu"] == pytest.approx({"xx->en": 1000 / 12, "en->xx": 1000 / 12, "mean": 1000 / 12,
                                                  "pairs": 12.0})
    assert result.encoder == "fn" and list(result.scores) == ["deu"]
    assert result.scores == run_task("tatoeba", encoder, langs=["deu"], root=root).scores
    assert result.scores == evaluate_task("tatoeba", recording_embed(encoder), encoder_id="fn", langs=["deu"],
                                          root=root, margin_k=None).scores
    assert all(any(fnmatch.fnmatch(f, p) for p in tatoeba.METADATA.data_files) for f in result.dataset_files)
    margin = run_task("tatoeba", one_hot_encoder(langs), root=root, margin_k=2)
    assert margin.variant == "margin" and margin.main_score == 100.0 and margin.options["main"] == "langs"


def test_margin_matches_direct_formula() -> None:
    rng = np.random.default_rng(1)
    sims = rng.uniform(-1, 1, size=(6, 5))
    scores = ratio_margin(sims, k=2)
    for i in range(6):
        for j in range(5):
            fwd = np.sort(sims[i])[-2:].mean()
            bwd = np.sort(sims[:, j])[-2:].mean()
            assert scores[i, j] == pytest.approx(sims[i, j] / ((fwd + bwd) / 2))
    with pytest.raises(ValueError, match="same shape"):
        retrieval_accuracy(np.eye(3), np.eye(4))


def test_cli_evaluates_a_module_function_encoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from xlsent.cli import main
    from xlsent.data.tatoeba import load_tatoeba
    from xlsent.testing import dataset_or_skip

    base = dataset_or_skip("tatoeba_v1")
    xx, en = load_tatoeba("deu", base)
    (tmp_path / "lines.json").write_text(json.dumps([xx, en]), encoding="utf-8")
    (tmp_path / "toy_encoders.py").write_text(
        "import json\nimport numpy as np\nfrom xlsent.testing import LookupEncoder\n\n\ndef line_one_hot():\n"
        f"    sides = json.load(open({str(tmp_path / 'lines.json')!r}, encoding='utf-8'))\n"
        "    eye = np.eye(len(sides[0]))\n"
        "    return LookupEncoder({s: eye[i] for side in sides for i, s in enumerate(side)}, name='toy')\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    assert main(["eval", "tatoeba", "--model", "toy_encoders:line_one_hot", "--langs", "deu", "--out",
                 str(tmp_path / "results"), "--data", str(base), "-q"]) == 0
    result = json.loads((tmp_path / "results" / "tatoeba__toy.json").read_text(encoding="utf-8"))
    assert result["scores"]["deu"]["mean"] == pytest.approx(100.0)


def test_a_margin_k_larger_than_a_set_records_the_k_used_and_notes_the_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    langs = {"deu": 12, "fra": 3}
    result = run_task("tatoeba", one_hot_encoder(langs), root=fake_tatoeba(tmp_path, langs), margin_k=4)
    assert result.scores["deu"]["margin_k"] == 4.0 and result.scores["fra"]["margin_k"] == 3.0
    assert "fra: margin k 3, not 4: the set has 3 pairs" in result.notes
    assert not any(note.startswith("deu:") for note in result.notes)
    assert "fra: margin k 3, not 4" in caplog.text


def test_a_tatoeba_language_missing_from_the_folder_is_named_with_its_files(tmp_path: Path) -> None:
    """`eval tatoeba --langs fra` on a folder holding deu alone said "unknown Tatoeba language(s) ['fra']"."""
    from xlsent.evaluation.task import NoDataError, UnknownSubsetError

    root = fake_tatoeba(tmp_path, {"deu": 3})
    with pytest.raises(NoDataError, match=r"the files of Tatoeba language\(s\) \['fra'\] are not under "
                                          r".*tatoeba_v1/tatoeba.fra-eng.fra, tatoeba_v1/tatoeba.fra-eng.eng missing"):
        tatoeba.Tatoeba.check_data(langs=["fr"], root=root)
    with pytest.raises(UnknownSubsetError, match=r"unknown Tatoeba language\(s\) \['zzz'\]; known: afr amh .* "
                                                 r"\(with files under .*: deu\)"):
        tatoeba.Tatoeba.check_data(langs=["zzz"], root=root)


def test_the_release_languages_are_those_of_the_shared_data() -> None:
    from xlsent.data.tatoeba import LANGUAGES, RELEASE_LANGUAGES, tatoeba_languages
    from xlsent.testing import dataset_or_skip

    assert len(RELEASE_LANGUAGES) == LANGUAGES == len(set(RELEASE_LANGUAGES))
    assert list(RELEASE_LANGUAGES) == tatoeba_languages(dataset_or_skip("tatoeba_v1"))
