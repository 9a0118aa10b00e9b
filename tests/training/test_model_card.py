"""Model cards: generated from the manifest and its typed training record, compact."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from xlsent.encoders.model_dir import write_manifest
from xlsent.training.loop import TrainResult
from xlsent.training.model_card import record_metrics, write_card
from xlsent.training.record import DataRecord, ObjectiveRecord, TeacherRecord, TrainingRecord, ValidationRecord

TOY = DataRecord("toy", "toy pairs")


def _model(tmp_path: Path, training: TrainingRecord | None = None) -> Path:
    directory = tmp_path / "m"
    directory.mkdir(parents=True)
    (directory / "weights.bin").write_bytes(b"w")
    write_manifest(directory, {"type": "laser", "name": "m", "metrics": {},
                               **({"training": training.to_json()} if training else {})})
    return directory


def test_recorded_metrics_keep_big_options_out_of_manifest_and_card(tmp_path: Path) -> None:
    directory = _model(tmp_path)
    result = {"task": "intent", "variant": "", "main_metric": "acc@1", "main_score": 81.24, "encoder": "m@1",
              "averages": {"en->xx": 86.1}, "options": {"seed": 0, "tsne": {"points": [[0.5, 1.5]] * 500}}}
    record_metrics(directory, [result])
    manifest = json.loads((directory / "xlsent.json").read_text())
    assert manifest["metrics"]["intent"]["options"] == {"seed": 0}
    card = (directory / "README.md").read_text()
    assert "| intent | 81.24 | acc@1 | en->xx 86.1 |" in card and "points" not in card and len(card) < 2000


def test_card_lists_pairs_steps_and_time_of_a_parallel_corpus(tmp_path: Path) -> None:
    training = TrainingRecord(DataRecord.language_pairs("bitext", {"de-en": 20, "de-es": 10}), 90.0, steps_done=12)
    card = write_card(_model(tmp_path, training)).read_text()
    assert "- data: bitext: 30 pairs in 2 language pairs (de-en 20, de-es 10)" in card
    assert "- steps: 12" in card and "- training time: 1.5 min" in card


def test_card_says_when_validation_did_not_pick_the_model(tmp_path: Path) -> None:
    valid = ValidationRecord("xsim", 500, "none", {"step": 10, "criterion": "xsim", "score": 90.0}, {"xsim": 91.0})
    kept_last = write_card(_model(tmp_path / "a", TrainingRecord(TOY, 1.0, validation=valid))).read_text()
    assert "not used to pick the model" in kept_last and "last xsim 91" in kept_last
    assert "model selection" not in kept_last
    picked = replace(valid, criterion="mean F1 % of mining the dev sets", selection="mining")
    card = write_card(_model(tmp_path / "b", TrainingRecord(TOY, 1.0, validation=picked))).read_text()
    assert "- model selection: mean F1 % of mining the dev sets on 500 held-out pairs, best 90 at step 10\n" in card


def test_card_says_whether_the_kept_step_held_english_stsb_dev(tmp_path: Path) -> None:
    valid = ValidationRecord("selection", 50, "selection", {"step": 100, "criterion": "selection", "score": 80.0},
                             details={"stsb_dev_change_kept": -1.58, "stsb_dev_tolerance": 0.5, "stsb_dev_held": False})
    lost = write_card(_model(tmp_path / "a", TrainingRecord(TOY, 1.0, validation=valid))).read_text()
    assert ("- English STS-B dev at the kept step: -1.58 points against the backbone (beyond the tolerance 0.5: no "
            "validated step held it;") in lost
    held = replace(valid, details={"stsb_dev_change_kept": 0.02, "stsb_dev_tolerance": 0.5, "stsb_dev_held": True})
    card = write_card(_model(tmp_path / "b", TrainingRecord(TOY, 1.0, validation=held))).read_text()
    assert "at the kept step: +0.02 points against the backbone (within the tolerance 0.5)\n" in card
    scaled = replace(valid, details={**held.details, "adapter_scale": 0.75})
    card = write_card(_model(tmp_path / "d", TrainingRecord(TOY, 1.0, validation=scaled))).read_text()
    assert "(within the tolerance 0.5), its LoRA updates scaled by 0.75 (adapter_scales)\n" in card
    older = write_card(_model(tmp_path / "c", TrainingRecord(TOY, 1.0, validation=replace(valid, details={}))))
    assert "English STS-B" not in older.read_text()


def test_card_describes_sampled_pairs_in_many_languages_once(tmp_path: Path) -> None:
    data = DataRecord.multilingual("weakly-supervised XNLI-dev pairs", 40, ["en", "de"],
                                   parts={"monolingual": 10, "cross-lingual": 30}, sampled_from=400)
    card = write_card(_model(tmp_path, TrainingRecord(data, 1.0))).read_text()
    assert ("- data: weakly-supervised XNLI-dev pairs: 40 pairs (10 monolingual, 30 cross-lingual) sampled from 400 "
            "in 2 languages (en de)") in card
    assert "en/de-en/de" not in card


def test_card_of_a_resumed_run_gives_the_time_of_every_run(tmp_path: Path) -> None:
    card = write_card(_model(tmp_path, TrainingRecord(TOY, 90.0, steps_done=12, train_seconds=600.0))).read_text()
    assert "- training time: 10.0 min of training steps and validation over resumed runs (the last command: 1.5 min)" \
        in card


def test_card_lists_the_weighted_terms_the_method_recorded(tmp_path: Path) -> None:
    from xlsent.methods.laser.config import loss_terms

    config = {"translate_weight": 1.0, "distill_weight": 30.0, "ranking_weight": 1.0, "teacher_ranking_weight": 0.5}
    objective = ObjectiveRecord("distill", loss_terms("distill", config), TeacherRecord("t", "t@1", "mse"))
    card = write_card(_model(tmp_path / "d", TrainingRecord(TOY, 1.0, objective=objective))).read_text()
    assert ("- objective: distill (teacher t@1, mse onto its vectors of the English side); loss 30 x distillation + "
            "1 x in-batch ranking + 0.5 x teacher ranking\n") in card
    objective = ObjectiveRecord("translate", loss_terms("translate", config))
    card = write_card(_model(tmp_path / "t", TrainingRecord(TOY, 1.0, objective=objective))).read_text()
    assert "- objective: translate\n" in card  # one term: no weights to list


def test_card_names_the_sets_the_mining_threshold_was_calibrated_on(tmp_path: Path) -> None:
    model = _model(tmp_path)
    assert "Mining threshold" not in write_card(model).read_text()
    manifest = json.loads((model / "xlsent.json").read_text())
    manifest["mining"] = {"threshold": 1.0412345, "margin": "ratio", "k": 4, "sets": ["de-en", "ru-en"],
                          "method": "the dev sets", "date": "2026-11-27"}
    (model / "xlsent.json").write_text(json.dumps(manifest))
    assert ("Mining threshold (`xlsent mine --threshold auto`): 1.0412, ratio margin, k=4, calibrated on de-en, "
            "ru-en by the dev sets (2026-11-27).") in write_card(model).read_text()


def test_a_training_record_survives_the_manifest_and_keeps_the_validation_history(tmp_path: Path) -> None:
    validations = [{"step": s, "validation": {"mining": f, "xsim": 3.0}, "criterion": "mining"}
                   for s, f in ((100, 40.0), (200, 55.5))]
    run = TrainResult([{"loss": 0.5}], 0, 200, 12.0, {"step": 200, "criterion": "mining", "score": 55.5}, validations)
    valid = ValidationRecord.of_run("mining F1", 30, "mining", run, restored=run.best, langs=["de"])
    assert valid.history == ((100, 40.0), (200, 55.5)) and valid.last == {"mining": 55.5, "xsim": 3.0}
    assert valid.last_gain() == 15.5 and replace(valid, history=valid.history[:1]).last_gain() is None
    objective = ObjectiveRecord("distill", "1 x distill", TeacherRecord("t", "t@1", "cosine"))
    record = TrainingRecord(DataRecord.two_sides("bitext", "de", "en", 4, 4, key="abc"), 12.34, validation=valid,
                            steps_done=200, objective=objective,
                            user_bitext=({"lang": "qaa", "pairs": 3, "held_out": 1, "sha256": {"q.tsv": "f" * 64}},),
                            final={"loss": 0.5}, details={"device": "cpu"})
    directory = _model(tmp_path, record)
    raw = json.loads((directory / "xlsent.json").read_text())["training"]
    assert raw["seconds"] == 12.3 and raw["device"] == "cpu" and raw["data"]["key"] == "abc"
    assert TrainingRecord.from_json(raw) == replace(record, seconds=12.3)
    card = write_card(directory).read_text()
    assert "- data: bitext de-en, 4 source / 4 target sentences\n" in card
    assert "- user bitext qaa-en: 3 training pairs, 1 held out (q.tsv sha256 ffffffffffff)" in card



def test_a_new_record_names_the_machine_and_an_older_one_reads_without_it(tmp_path: Path) -> None:
    from xlsent.machine_measures import cpu_model

    new = TrainingRecord(TOY, 60.0, steps_done=3)
    assert new.machine == {"cpu": cpu_model(), "cores": new.machine["cores"]} and new.machine["cores"] >= 1
    card = write_card(_model(tmp_path / "new", new)).read_text()
    assert f"- machine: {cpu_model()}, {new.machine['cores']} cores" in card
    raw = new.to_json()
    assert raw["machine"] == new.machine and "machine" not in TrainingRecord.from_json(raw).details
    old = {k: v for k, v in raw.items() if k != "machine"}  # written before the machine was kept
    read = TrainingRecord.from_json(old)
    assert read.machine is None and "machine" not in read.to_json()  # never the reader's machine
    assert "- machine:" not in write_card(_model(tmp_path / "old", read)).read_text()
