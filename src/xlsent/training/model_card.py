"""Model cards: a trained model directory carries its own evaluation numbers and a README that says what it is.

``record_metrics`` stores each evaluation's main score (and averages) under ``metrics`` in ``xlsent.json``
(the file checksums, hence the model id, do not change) and rewrites ``README.md`` from the manifest: what the
model is, its backbone, training data and time, model selection, the command that retrains it, and the metrics.

>>> import tempfile
>>> from pathlib import Path
>>> from xlsent.encoders.model_dir import write_manifest
>>> d = Path(tempfile.mkdtemp()) / "m"; d.mkdir()
>>> _ = (d / "config.toml").write_text('steps = 5\\n')
>>> _ = write_manifest(d, {"type": "dual-pivot", "name": "m", "config": {"steps": 5}, "training": {"seconds": 2}})
>>> record_metrics(d, [{"task": "tatoeba", "variant": "", "main_metric": "mean", "main_score": 91.25,
...                     "averages": {}, "options": {}, "encoder": "m@1", "created": "2026-11-23T00:00:00Z"}])
>>> print((d / "README.md").read_text().splitlines()[0])
# m (dual-pivot)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xlsent.atomic import atomic_open, write_json
from xlsent.encoders.model_dir import MANIFEST, read_manifest
from xlsent.training.record import TrainingRecord, ValidationRecord

CARD = "README.md"


OPTION_CHARS = 200
"""Options whose JSON is longer (a t-SNE map, a list of files) stay in the result file, out of the manifest."""


def compact_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a result short enough for a manifest and a card.

    >>> compact_options({"seed": 0, "tsne": {"points": [[0.0, 1.0]] * 100}})
    {'seed': 0}
    """
    return {k: v for k, v in options.items() if len(json.dumps(v)) <= OPTION_CHARS}


def _metric_entry(result: Mapping[str, Any]) -> dict[str, Any]:
    return {"main_metric": result["main_metric"], "main_score": round(float(result["main_score"]), 4),
            "averages": {k: round(float(v), 4) for k, v in result.get("averages", {}).items()},
            "options": compact_options(result.get("options", {})), "encoder": result["encoder"],
            "created": result.get("created", ""), "subsets": sorted(result.get("scores", {}))}


def check_not_fuller(directory: Path, key: str, recorded: Mapping[str, Any] | None, subsets: Sequence[str]) -> None:
    """Raise ValueError unless a partial run scoring ``subsets`` may replace the entry ``recorded`` of task ``key``:
    there is none, or it scores no subset that the run lacks (an older entry does not say what it scores, so it is
    kept).

    >>> check_not_fuller(Path("m"), "tatoeba", {"subsets": ["deu", "fra"]}, ["deu"])
    Traceback (most recent call last):
    ...
    ValueError: m/xlsent.json records tatoeba over 2 subset(s); this run scores 1, and replacing it would lose fra. \
Not recorded: record a run of the whole task (without --langs), or replace it with --overwrite
    """
    if recorded is None:
        return
    lost = sorted(set(recorded.get("subsets", ())) - set(subsets))
    if lost or "subsets" not in recorded:
        covered = f"over {len(recorded['subsets'])} subset(s)" if "subsets" in recorded else "from a full run"
        shown = ", ".join(lost[:10]) + (f" and {len(lost) - 10} more" if len(lost) > 10 else "") or "its scores"
        raise ValueError(f"{directory / MANIFEST} records {key} {covered}; this run scores {len(subsets)}, and "
                         f"replacing it would lose {shown}. Not recorded: record a run of the whole task "
                         "(without --langs), or replace it with --overwrite")


def _metric_key(result: Mapping[str, Any]) -> str:
    """The manifest ``metrics`` key of a TaskResult dict: its task, and its variant where it has one."""
    return result["task"] + (f"-{result['variant']}" if result.get("variant") else "")


def check_recordable(model_dir: str | Path, results: Sequence[Mapping[str, Any]], *, partial: bool) -> None:
    """Raise ValueError where :func:`record_metrics` would refuse ``results``: a ``partial`` run (some of a task's
    subsets, e.g. ``--langs deu``) never replaces a fuller entry (:func:`check_not_fuller`). Nothing is written."""
    if partial:
        directory = Path(model_dir)
        metrics = read_manifest(directory, verify="none").get("metrics", {})
        for result in results:
            key = _metric_key(result)
            check_not_fuller(directory, key, metrics.get(key), sorted(result.get("scores", {})))


def record_metrics(model_dir: str | Path, results: Sequence[Mapping[str, Any]], *, partial: bool = False) -> None:
    """Store ``results`` (TaskResult dicts) in the manifest's ``metrics`` and rewrite the model card, unless
    :func:`check_recordable` refuses them."""
    check_recordable(model_dir, results, partial=partial)
    directory = Path(model_dir)
    manifest = read_manifest(directory, verify="none")
    metrics = dict(manifest.get("metrics", {}))
    for result in results:
        metrics[_metric_key(result)] = _metric_entry(result)
    manifest["metrics"] = dict(sorted(metrics.items()))
    write_json(directory / MANIFEST, manifest)
    write_card(directory)


def _english_line(valid: ValidationRecord) -> list[str]:
    """The English STS-B dev change of the kept step, and whether it held the tolerance, where the method recorded
    them (``distill``)."""
    change, tolerance = valid.details.get("stsb_dev_change_kept"), valid.details.get("stsb_dev_tolerance")
    if change is None or tolerance is None:
        return []
    held = valid.details.get("stsb_dev_held")
    scale = valid.details.get("adapter_scale", 1.0)
    return [f"- English STS-B dev at the kept step: {change:+.2f} points against the backbone ("
            + (f"within the tolerance {tolerance:g})" if held else
               f"beyond the tolerance {tolerance:g}: no validated step held it; ranking_targets = \"teacher\" or "
               "adapter_scales below 1 keep English)")
            + (f", its LoRA updates scaled by {scale:g} (adapter_scales)" if scale != 1.0 else "")]


def _training_lines(record: TrainingRecord) -> list[str]:
    lines = [f"- data: {record.data.description}"] if record.data.description else []
    for user in record.user_bitext:
        sums = ", ".join(f"{Path(p).name} sha256 {h[:12]}" for p, h in user["sha256"].items())
        lines.append(f"- user bitext {user['lang']}-en: {user['pairs']} training pairs, {user['held_out']} held "
                     f"out ({sums})")
    if record.details.get("started_from"):
        lines.append(f"- started from the trained student {record.details['started_from']} (bitext_start), new "
                     "adapters over it trained on the data above")
    valid = record.validation
    if valid is not None and valid.best and valid.selection == "none":
        last = valid.last or {}
        lines.append(f"- validation (logged, not used to pick the model: the last step is kept): "
                     f"{valid.criterion} on {valid.pairs} held-out pairs, last "
                     + ", ".join(f"{k} {v:.4g}" for k, v in last.items()))
    elif valid is not None and valid.best:
        lines.append(f"- model selection: {valid.criterion} on {valid.pairs} held-out pairs, best "
                     f"{valid.best['score']:.4g} at step {valid.best['step']}")
        lines += _english_line(valid)
    objective = record.objective
    if objective is not None:
        teacher = objective.teacher
        lines.append(f"- objective: {objective.name}"
                     + (f" (teacher {teacher.id}, {teacher.loss} onto its vectors of the English side)"
                        if teacher else "")
                     + (f"; loss {objective.loss}" if objective.loss else "")
                     + ("; subword embeddings initialised from the teacher's input embeddings"
                        if objective.embed_init == "teacher" else ""))
    if record.steps_done is not None:
        lines.append(f"- steps: {record.steps_done}")
    if record.train_seconds is not None and record.train_seconds > record.seconds:
        # the steps and validations of earlier, interrupted runs count too
        lines.append(f"- training time: {record.train_seconds / 60:.1f} min of training steps and validation "
                     f"over resumed runs (the last command: {record.seconds / 60:.1f} min)")
    else:
        lines.append(f"- training time: {record.seconds / 60:.1f} min (the whole training command: data and "
                     "cached features prepared, training, validation)")
    if record.machine:
        lines.append(f"- machine: {record.machine.get('cpu', '?')}, {record.machine.get('cores', '?')} cores (the "
                     "training time depends on it)")
    if record.time_budget_minutes:
        lines.append(f"- time budget: {record.time_budget_minutes:g} min of training steps and validation "
                     f"(`minutes`; {(record.train_seconds or 0) / 60:.1f} min used)")
    return lines


def _mining_lines(record: Mapping[str, Any] | None) -> list[str]:
    """The card's line on the calibrated mining threshold (``xlsent mine --threshold auto``) and the sets it was
    calibrated on; none without a calibration."""
    if not record:
        return []
    return [f"Mining threshold (`xlsent mine --threshold auto`): {record['threshold']:.4f}, {record.get('margin')} "
            f"margin, k={record.get('k')}, calibrated on {', '.join(record.get('sets', []))} by "
            f"{record.get('method', 'an unrecorded method')} ({record.get('date', 'undated')}).", ""]


def write_card(model_dir: str | Path) -> Path:
    """Render ``README.md`` of a model directory from its ``xlsent.json``."""
    directory = Path(model_dir)
    m = read_manifest(directory, verify="none")
    name = m.get("name", directory.name)
    lines = [f"# {name} ({m['type']})", "", "_Generated from `xlsent.json` by xlsent; do not edit by hand._", ""]
    backbone = m.get("backbone", {})
    if backbone:
        lines.append(f"- backbone: `{backbone.get('ref', backbone.get('name'))}` ({backbone.get('id', '')})")
    if m.get("fingerprint"):
        lines.append(f"- config fingerprint: `{m['fingerprint']}` (full configuration: `config.toml`)")
    if "training" in m:
        lines += _training_lines(TrainingRecord.from_json(m["training"]))
    if (directory / "config.toml").is_file():
        lines += ["", "Retrain with:", "", "```bash",
                  f"xlsent train {m['type']} --config {directory.name}/config.toml --out {directory.name}-again",
                  "```"]
    lines += ["", "Load with `xlsent.load(\"" + directory.name + "\")` or `--model " + directory.name + "`.", ""]
    lines += _mining_lines(m.get("mining"))
    metrics = m.get("metrics", {})
    lines += ["## Evaluation", ""]
    if not metrics:
        lines.append("Not evaluated yet: `xlsent eval TASK --model DIR --record` adds numbers here.")
    else:
        lines += ["| task | main score | metric | averages | evaluated |", "|---|---|---|---|---|"]
        for task, e in metrics.items():
            averages = ", ".join(f"{k} {v:.1f}" for k, v in e.get("averages", {}).items())
            lines.append(f"| {task} | {e['main_score']:.2f} | {e['main_metric']} | {averages} | "
                         f"{e.get('created', '')[:10]} |")
        options = {t: compact_options(e["options"]) for t, e in metrics.items() if e.get("options")}
        if options:
            lines += ["", "Options: " + "; ".join(f"{t}: {json.dumps(o, sort_keys=True)}" for t, o in options.items())]
    path = directory / CARD
    with atomic_open(path) as fh:
        fh.write("\n".join(lines) + "\n")
    return path
