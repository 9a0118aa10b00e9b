"""The dual-pivot study: claim verdicts on rows with known answers, and a tiny end-to-end run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from xlsent.methods.dual_pivot import study
from xlsent.methods.dual_pivot.study import (
    Settings,
    claims_layers,
    claims_losses,
    claims_main,
    claims_pairs,
    record,
)
from xlsent.studies.command import main, run_studies
from xlsent.studies.study import StudyRun, study_result
from xlsent.studies.trained import StaleModelError
from xlsent.testing import dataset_or_skip

M = "tatoeba 2 langs"


def _row(acc: float, transfer: float | None = None) -> dict[str, float]:
    return {M: acc} | ({} if transfer is None else {"tatoeba transfer": transfer})


def test_main_claims_compare_modules_with_both_baselines() -> None:
    rows = {"me5 (own output)": _row(80, 79), "layer 9 boe (best single layer)": _row(60),
            "unsupervised de-en": _row(70, 78), "supervised de-en": _row(85, 84)}
    verdicts = claims_main(rows, M, "unsupervised de-en")
    assert [v.held for v in verdicts] == [True, False, True, True]
    assert "70.0 vs 60.0" in verdicts[0].evidence and "78.0 vs 79.0" in verdicts[1].evidence


def test_loss_claims_follow_table_4() -> None:
    paper_like = {"adv, mix": 40, "adv, map": 45, "adv, mix+map": 47, "cycle, mix": 60, "cycle, map": 72,
                  "cycle, mix+map": 70, "adv+cycle, mix": 62, "adv+cycle, map": 73, "adv+cycle, mix+map": 74}
    rows = {k: _row(v) for k, v in paper_like.items()}
    assert all(v.held for v in claims_losses(rows, M, "adv+cycle, mix+map"))
    rows["adv, map"] = _row(74)
    assert claims_losses(rows, M, "adv+cycle, mix+map")[0].held is False


def test_layer_and_pair_claims() -> None:
    rows = {"mix of all layers module": _row(85)} | {f"layer {i} module": _row(50 + 5 * min(i, 12 - i))
                                                       for i in range(13)}
    rows |= {f"layer {i} boe": _row(10) for i in range(13)}
    middle, as_good = claims_layers(rows, M, "mix of all layers module")
    assert middle.held and "layer 6" in middle.evidence
    assert as_good.held is False
    assert claims_pairs({"1 pair(s): de-en": _row(70), "8 pair(s): x": _row(72)}, M, "1 pair(s): de-en")[0].held


def test_summary_is_the_declared_method_row_and_selection_effects_are_verdicts(tmp_path: Path) -> None:
    rows = {"me5 (own output)": _row(80, 79), "layer 9 boe (best single layer)": _row(60),
            "unsupervised de-en": _row(70, 78), "unsupervised de-en (last step, no selection)": _row(50, 77),
            "supervised de-en": _row(85, 84)}

    class Lab:
        encoder = "me5@x"

        def notes(self, run: StudyRun[Settings]) -> list[str]:
            return []

    run = StudyRun("main", Settings(langs=("deu", "fra")), tmp_path, rows=rows)
    result = study_result(study, run, Lab())
    assert result.main_score == 70 and "unsupervised de-en" in result.main_metric  # not the best row (85)
    effects = [v for v in result.verdicts if v["claim"].endswith("on the last-step weights")]
    assert len(result.verdicts) == 8 and len(effects) == 4
    assert effects[0]["evidence"].endswith("model selection changed this verdict") and "50.0 vs 60.0" in effects[0][
        "evidence"]
    assert effects[2]["evidence"].endswith("model selection did not change this verdict")
    plain = {k: v for k, v in rows.items() if "last step" not in k}
    run = StudyRun("main", Settings(langs=("deu",)), tmp_path, rows=plain)
    assert len(study_result(study, run, Lab()).verdicts) == 4


@pytest.mark.data
def test_every_study_runs_end_to_end_on_a_tiny_backbone(tmp_path: Path, tiny_model_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    base = dataset_or_skip("tatoeba_v1")
    dataset_or_skip("parallel")
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    settings = Settings(langs=("deu", "fra"), bucc_sets=(), max_pairs=64, steps=3, ablation_steps=2,
                        models_dir=tmp_path / "models", data=str(base), backbone=str(tiny_model_dir))
    paths = run_studies(study, ["main", "losses", "layers", "pairs"], settings, tmp_path / "results")
    assert [p.name for p in paths] == [f"dual-pivot-{s}__tiny.json" for s in ("main", "losses", "layers", "pairs")]
    main = json.loads(paths[0].read_text(encoding="utf-8"))
    assert {"unsupervised de-en", "supervised ar-en", "supervised de-fr"} <= set(main["scores"])
    assert {v["claim"] for v in main["verdicts"][:4]} == {v.claim for v in claims_main(main["scores"], M, "")}
    record([tmp_path / "models" / "super-de-en"], settings)
    card = json.loads((tmp_path / "models" / "super-de-en" / "xlsent.json").read_text(encoding="utf-8"))
    assert card["metrics"]["tatoeba"]["main_score"] == pytest.approx(main["scores"]["supervised de-en"][M], abs=1e-6)
    with pytest.raises(StaleModelError, match="unsup-de-en holds a model of another configuration .*steps: 3 in the "
                                              "model, 4 wanted"):  # the study never scores a model of other settings
        run_studies(study, ["main"], dataclasses.replace(settings, steps=4), tmp_path / "results")


def test_record_refuses_a_folder_without_a_model_before_the_backbone_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def no_backbone(name: str) -> None:
        raise AssertionError("the backbone was loaded")

    monkeypatch.setattr(study, "_backbone", no_backbone)
    assert main(study, ["--record", str(tmp_path / "nosuchdir")]) == 2
    err = capsys.readouterr().err
    assert f"error: --record {tmp_path / 'nosuchdir'}: no model there" in err and "Traceback" not in err
