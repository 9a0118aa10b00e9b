"""Model cards: generated from the manifest, compact, with the training data of every method's shape."""

from __future__ import annotations

import json
from pathlib import Path

from xlsent.encoders.model_card import record_metrics, write_card
from xlsent.encoders.model_dir import write_manifest


def _model(tmp_path: Path, training: dict[str, object], config: dict[str, object] | None = None) -> Path:
    directory = tmp_path / "m"
    directory.mkdir(parents=True)
    (directory / "weights.bin").write_bytes(b"w")
    write_manifest(directory, {"type": "laser", "name": "m", "training": training, "metrics": {},
                               **({"config": config} if config else {})})
    return directory


def test_recorded_metrics_keep_big_options_out_of_manifest_and_card(tmp_path: Path) -> None:
    directory = _model(tmp_path, {})
    result = {"task": "intent", "variant": "", "main_metric": "acc@1", "main_score": 81.24, "encoder": "m@1",
              "averages": {"en->xx": 86.1}, "options": {"seed": 0, "tsne": {"points": [[0.5, 1.5]] * 500}}}
    record_metrics(directory, [result])
    manifest = json.loads((directory / "xlsent.json").read_text())
    assert manifest["metrics"]["intent"]["options"] == {"seed": 0}
    card = (directory / "README.md").read_text()
    assert "| intent | 81.24 | acc@1 | en->xx 86.1 |" in card and "points" not in card and len(card) < 2000


def test_card_lists_pairs_steps_and_time_of_a_parallel_corpus(tmp_path: Path) -> None:
    training = {"data": {"pairs": 30, "per_pair": {"de-en": {"pairs": 20}, "de-es": {"pairs": 10}}},
                "steps_done": 12, "seconds": 90}
    card = write_card(_model(tmp_path, training)).read_text()
    assert "- data: 30 pairs in 2 language pairs (de-en 20, de-es 10)" in card
    assert "- steps: 12" in card and "- training time: 1.5 min" in card


def test_card_says_when_validation_did_not_pick_the_model(tmp_path: Path) -> None:
    valid = {"best": {"step": 10, "criterion": "xsim", "score": 90.0}, "last": {"xsim": 91.0}, "pairs": 500}
    kept_last = write_card(_model(tmp_path, {"validation": {**valid, "selection": "none"}})).read_text()
    assert "not used to pick the model" in kept_last and "last xsim 91" in kept_last
    assert "model selection" not in kept_last


def test_card_describes_sampled_pairs_in_many_languages_once(tmp_path: Path) -> None:
    summary = {"pairs": 40, "langs": ["en", "de"], "monolingual": 10, "cross_lingual": 30, "sampled_from": 400}
    data = {"kind": "weakly-supervised XNLI-dev pairs", "src_lang": "en/de", "tgt_lang": "en/de", "summary": summary}
    card = write_card(_model(tmp_path, {"data": data})).read_text()
    assert ("- data: weakly-supervised XNLI-dev pairs: 40 pairs (10 monolingual, 30 cross-lingual) sampled from 400 "
            "in 2 languages (en de)") in card
    assert "en/de-en/de" not in card


def test_card_of_a_resumed_run_gives_the_time_of_every_run(tmp_path: Path) -> None:
    card = write_card(_model(tmp_path, {"steps_done": 12, "seconds": 90, "train_seconds": 600})).read_text()
    assert "- training time: 10.0 min of training steps and validation over resumed runs (the last command: 1.5 min)" \
        in card


def test_card_lists_the_weighted_terms_the_method_recorded(tmp_path: Path) -> None:
    from xlsent.methods.laser.config import loss_terms

    config = {"translate_weight": 1.0, "distill_weight": 30.0, "ranking_weight": 1.0, "teacher_ranking_weight": 0.5}
    teacher = {"id": "t@1", "loss": "mse"}
    training = {"objective": "distill", "teacher": teacher, "loss": loss_terms("distill", config)}
    card = write_card(_model(tmp_path / "d", training, config)).read_text()
    assert ("- objective: distill (teacher t@1, mse onto its vectors of the English side); loss 30 x distillation + "
            "1 x in-batch ranking + 0.5 x teacher ranking\n") in card
    training = {"objective": "translate", "loss": loss_terms("translate", config)}
    card = write_card(_model(tmp_path / "t", training, config)).read_text()
    assert "- objective: translate\n" in card  # one term: no weights to list


def test_card_names_the_sets_the_mining_threshold_was_calibrated_on(tmp_path: Path) -> None:
    model = _model(tmp_path, {})
    assert "Mining threshold" not in write_card(model).read_text()
    manifest = json.loads((model / "xlsent.json").read_text())
    manifest["mining"] = {"threshold": 1.0412345, "margin": "ratio", "k": 4, "sets": ["de-en", "ru-en"],
                          "method": "the dev sets", "date": "2026-11-27"}
    (model / "xlsent.json").write_text(json.dumps(manifest))
    assert ("Mining threshold (`xlsent mine --threshold auto`): 1.0412, ratio margin, k=4, calibrated on de-en, "
            "ru-en by the dev sets (2026-11-27).") in write_card(model).read_text()
