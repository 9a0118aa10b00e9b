"""The one command line of every study: settings as options, runs, splits, and --rescore from saved rows."""

from __future__ import annotations

import json
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from xlsent.arg_types import positive_int
from xlsent.studies.command import main
from xlsent.studies.numbers import versus
from xlsent.studies.settings import StudySettings, option
from xlsent.studies.study import Rows, Study, StudyRun
from xlsent.studies.verdict import Verdict


@dataclass(frozen=True)
class ToySettings(StudySettings):
    models_dir: Path = Path("models/toy")
    steps: int = option(3, "steps of every model", type=positive_int)
    langs: tuple[str, ...] = option(("de",), "languages")
    splits: tuple[str, ...] = option(("a", "b"), "one result each", choices=("a", "b"))
    plots: bool = option(True, "draw the plots")
    cap: int | None = option(None, "a cap")


class ToyLab:
    encoder = "toy@1"

    def notes(self, run: StudyRun[ToySettings]) -> list[str]:
        return [f"lab note of {run.variant}"]


def study_x(lab: ToyLab, run: StudyRun[ToySettings]) -> None:
    """The x study."""
    run.rows.update({"base": {"score": 4.0}, "method": {"score": float(run.settings.steps)}})
    run.notes.append("run note")


def study_y(lab: ToyLab, run: StudyRun[ToySettings]) -> None:
    """The y study."""
    run.rows["method"] = {"score": 1.0, "other": 2.0}


def claims_x(rows: Rows, metric: str, method_row: str) -> list[Verdict]:
    return [Verdict("the method beats the base", rows[method_row][metric] > rows["base"][metric],
                    versus(rows[method_row][metric], rows["base"][metric]))]


TOY = types.SimpleNamespace(
    __doc__="Toy studies.", TASK="toy", DATASET="none", Settings=ToySettings, setup=lambda settings, out: ToyLab(),
    STUDIES={"x": Study(study_x, "method", claims=claims_x), "y": Study(study_y, "method", split="splits",
                                                                        default=False)})


def _saved(out: Path, name: str) -> dict:
    return json.loads((out / f"{name}__toy.json").read_text(encoding="utf-8"))


def test_every_setting_is_an_option_and_is_recorded_in_the_result(tmp_path: Path) -> None:
    argv = ["--out", str(tmp_path), "--models", str(tmp_path / "m"), "--steps", "5", "--langs", "fr", "it",
            "--set", "lr=1", "--set", "seed=2", "--no-plots", "--cap", "7", "--data", "somewhere", "--retrain"]
    assert main(TOY, argv) == 0
    saved = _saved(tmp_path, "toy-x")
    assert not (tmp_path / "toy-y-a__toy.json").exists()  # not a default study
    assert saved["options"] == {"method_row": "method", "models_dir": str(tmp_path / "m"), "sets": ["lr=1", "seed=2"],
                                "steps": 5, "langs": ["fr", "it"], "splits": ["a", "b"], "plots": False, "cap": 7}
    assert saved["main_score"] == 5.0 and saved["main_metric"] == "score, row 'method'"
    assert saved["notes"] == ["The x study.", "run note", "lab note of x"]
    assert saved["verdicts"] == [{"claim": "the method beats the base", "held": True, "evidence": "5.0 vs 4.0",
                                  "source": "paper"}]


def test_a_split_setting_gives_one_result_per_value(tmp_path: Path) -> None:
    main(TOY, ["--out", str(tmp_path), "--studies", "y", "--splits", "b", "a"])
    assert [_saved(tmp_path, f"toy-y-{s}")["options"]["splits"] for s in ("a", "b")] == ["a", "b"]
    assert _saved(tmp_path, "toy-y-a")["notes"] == ["The y study.", "lab note of y-a"]
    with pytest.raises(SystemExit):
        main(TOY, ["--out", str(tmp_path), "--studies", "y", "--splits", "c"])


def test_rescore_rewrites_score_and_verdicts_from_the_saved_rows_only(tmp_path: Path) -> None:
    main(TOY, ["--out", str(tmp_path), "--studies", "x", "y", "--steps", "5"])
    path = tmp_path / "toy-x__toy.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    saved["scores"]["method"]["score"] = 3.0
    saved["main_metric"] = "old wording"
    path.write_text(json.dumps(saved), encoding="utf-8")
    y_before = (tmp_path / "toy-y-a__toy.json").read_text(encoding="utf-8")
    assert main(TOY, ["--out", str(tmp_path), "--rescore", "--studies", "x"]) == 0
    again = _saved(tmp_path, "toy-x")
    assert again["main_score"] == 3.0 and again["main_metric"] == "score, row 'method'"
    assert again["verdicts"][0]["held"] is False and again["verdicts"][0]["evidence"] == "3.0 vs 4.0"
    assert {k: again[k] for k in ("notes", "options", "created", "seconds")} == {
        k: saved[k] for k in ("notes", "options", "created", "seconds")}
    assert (tmp_path / "toy-y-a__toy.json").read_text(encoding="utf-8") == y_before  # not asked for
    main(TOY, ["--out", str(tmp_path), "--rescore"])  # every study with a saved result
    empty = tmp_path / "empty"
    empty.mkdir()
    main(TOY, ["--out", str(empty), "--rescore"])  # nothing saved, nothing asked: no error



def test_an_invalid_model_configuration_is_a_one_line_usage_error(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from xlsent.training.config import ConfigError

    def broken(lab: ToyLab, run: StudyRun[ToySettings]) -> None:
        raise ConfigError("steps must be >= 1")

    module = types.SimpleNamespace(**{**vars(TOY), "STUDIES": {"x": Study(broken, "method")}})
    with pytest.raises(SystemExit) as exit_info:
        main(module, ["--out", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "steps must be >= 1" in capsys.readouterr().err


def _refused(module: types.SimpleNamespace, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What ``main`` prints on stderr when it refuses ``argv`` as a usage error (exit 2, no traceback)."""
    assert main(module, argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("error: ") == 1
    return err


def test_an_error_of_what_was_asked_is_one_line_on_stderr_and_exit_2(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    def wrong(lab: ToyLab, run: StudyRun[ToySettings]) -> None:
        raise ValueError("unknown language 'xyz'")

    module = types.SimpleNamespace(**{**vars(TOY), "STUDIES": {"x": Study(wrong, "method")}})
    assert "error: unknown language 'xyz'" in _refused(module, ["--out", str(tmp_path)], capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    err = _refused(TOY, ["--out", str(empty), "--rescore", "--studies", "x"], capsys)
    assert "no saved toy 'x' result" in err and "run the study first" in err


def test_a_bad_option_value_is_refused_before_anything_runs(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(TOY, ["--out", str(tmp_path), "--steps", "-5"])
    assert exit_info.value.code == 2
    assert "argument --steps: must be a whole number of at least 1, not '-5'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_rescore_refuses_an_out_that_is_not_a_folder(kind: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "afile.txt"
    if kind == "file":
        out.write_text("not a folder", encoding="utf-8")
    err = _refused(TOY, ["--out", str(out), "--rescore"], capsys)
    assert f"--out {out}" in err and ("is not a folder" if kind == "file" else "no such folder") in err


@pytest.mark.parametrize(("damage", "wrong"), [
    (lambda saved: saved.update(scores={}), "no row 'method' (its method row)"),
    (lambda saved: saved["scores"]["method"].update(score="x"), "'method' / 'score' is 'x', not a number"),
    (lambda saved: saved["scores"].pop("base"), "lacks the row or column 'base'"),
])
def test_rescore_names_the_damaged_result_file_and_what_is_wrong(damage: Any, wrong: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    main(TOY, ["--out", str(tmp_path), "--studies", "x"])
    path = tmp_path / "toy-x__toy.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    damage(saved)
    path.write_text(json.dumps(saved), encoding="utf-8")
    err = _refused(TOY, ["--out", str(tmp_path), "--rescore"], capsys)
    assert f"{path}: cannot re-score it: " in err and wrong in err
    assert json.loads(path.read_text(encoding="utf-8")) == saved  # left as it was


def test_rescore_names_a_file_that_is_not_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    assert f"{tmp_path / 'broken.json'}: not a readable result JSON" in _refused(
        TOY, ["--out", str(tmp_path), "--rescore"], capsys)


def test_record_refuses_a_folder_without_a_model_before_loading_anything(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    recorded: list[object] = []
    module = types.SimpleNamespace(**vars(TOY), record=lambda dirs, settings: recorded.append(dirs))
    err = _refused(module, ["--record", str(tmp_path / "nosuch")], capsys)
    assert f"--record {tmp_path / 'nosuch'}: no model there" in err and not recorded
