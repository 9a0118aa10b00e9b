"""The dual-pivot study: claim verdicts on rows with known answers, and a tiny end-to-end run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlsent.methods.dual_pivot.study import (
    StudySettings,
    claims_layers,
    claims_losses,
    claims_main,
    claims_pairs,
    record_models,
    run_studies,
    study_result,
)
from xlsent.testing import dataset_or_skip

M = "tatoeba 2 langs"


def _row(acc: float, transfer: float | None = None) -> dict[str, float]:
    return {M: acc} | ({} if transfer is None else {"tatoeba transfer": transfer})


def test_main_claims_compare_modules_with_both_baselines() -> None:
    rows = {"me5 (own output)": _row(80, 79), "layer 9 boe (best single layer)": _row(60),
            "unsupervised de-en": _row(70, 78), "supervised de-en": _row(85, 84)}
    verdicts = claims_main(rows, M)
    assert [v.startswith("HELD") for v in verdicts] == [True, False, True, True]
    assert "70.0 vs 60.0" in verdicts[0] and "78.0 vs 79.0" in verdicts[1]


def test_loss_claims_follow_table_4() -> None:
    paper_like = {"adv, mix": 40, "adv, map": 45, "adv, mix+map": 47, "cycle, mix": 60, "cycle, map": 72,
                  "cycle, mix+map": 70, "adv+cycle, mix": 62, "adv+cycle, map": 73, "adv+cycle, mix+map": 74}
    rows = {k: _row(v) for k, v in paper_like.items()}
    assert all(v.startswith("HELD") for v in claims_losses(rows, M))
    rows["adv, map"] = _row(74)
    assert claims_losses(rows, M)[0].startswith("DID NOT HOLD")


def test_layer_and_pair_claims() -> None:
    rows = {"mix of all layers module": _row(85)} | {f"layer {i} module": _row(50 + 5 * min(i, 12 - i))
                                                       for i in range(13)}
    rows |= {f"layer {i} boe": _row(10) for i in range(13)}
    middle, as_good = claims_layers(rows, M)
    assert middle.startswith("HELD") and "layer 6" in middle
    assert as_good.startswith("DID NOT HOLD")
    assert claims_pairs({"1 pair(s): de-en": _row(70), "8 pair(s): x": _row(72)}, M)[0].startswith("HELD")


def test_summary_is_the_declared_method_row_and_selection_effects_are_reported() -> None:
    rows = {"me5 (own output)": _row(80, 79), "layer 9 boe (best single layer)": _row(60),
            "unsupervised de-en": _row(70, 78), "unsupervised de-en (last step, no selection)": _row(50, 77),
            "supervised de-en": _row(85, 84)}
    result = study_result("main", rows, StudySettings(("deu", "fra")), "me5@x", 1.0)
    assert result.main_score == 70 and "unsupervised de-en" in result.main_metric  # not the best row (85)
    effects = [n for n in result.notes if n.startswith("model selection")]
    assert len(effects) == 4
    assert effects[0].startswith("model selection changed this verdict") and "50.0 vs 60.0" in effects[0]
    assert effects[2].startswith("model selection did not change")
    plain = {k: v for k, v in rows.items() if "last step" not in k}
    assert not [n for n in study_result("main", plain, StudySettings(("deu",)), "m", 1.0).notes
                if n.startswith("model selection")]


def test_every_study_runs_end_to_end_on_a_tiny_backbone(tmp_path: Path, tiny_model_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    base = dataset_or_skip("tatoeba_v1")
    dataset_or_skip("parallel")
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    settings = StudySettings(("deu", "fra"), bucc_sets=(), max_pairs=64, steps=3, ablation_steps=2,
                             models_dir=tmp_path / "models", data=str(base))
    paths = run_studies(["main", "losses", "layers", "pairs"], settings, tmp_path / "results",
                        backbone_name=str(tiny_model_dir))
    assert [p.name for p in paths] == [f"dual-pivot-{s}__tiny.json" for s in ("main", "losses", "layers", "pairs")]
    main = json.loads(paths[0].read_text(encoding="utf-8"))
    assert {"unsupervised de-en", "supervised ar-en", "supervised de-fr"} <= set(main["scores"])
    assert sum(n.startswith(("HELD", "DID NOT HOLD")) for n in main["notes"]) == 4
    record_models([tmp_path / "models" / "super-de-en"], settings, backbone_name=str(tiny_model_dir))
    card = json.loads((tmp_path / "models" / "super-de-en" / "xlsent.json").read_text(encoding="utf-8"))
    assert card["metrics"]["tatoeba"]["main_score"] == pytest.approx(main["scores"]["supervised de-en"][M], abs=1e-6)
