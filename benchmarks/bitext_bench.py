"""README's ``--bitext`` route on a fresh machine: the first ``xlsent train distill --bitext`` (teacher included), then
``xlsent calibrate`` and ``xlsent mine --threshold auto``, each timed, each with its check.

The user's file is README's stand-in (``xlsent.studies.new_language``: ``--pairs`` pairs of ``qaa``, Turkish with
its vowels permuted, a language me5-small handles poorly). The commands run as README gives them, in subprocesses
whose ``$XLSENT_HOME`` is an empty folder: no exported graph, no measured backend, no teacher vector cached, as on a
machine that never ran xlsent. The training's seconds are from the command's start to its exit (model loads, the
data read, the teacher's vectors, the training steps, both validations and the model directory written); the details
split them with the training record. Its check is the new language's retrieval error on its 997 test pairs (never in
the user's file) of the student against me5-small's, measured in the same run. The second row mines those test
lines against their English at the calibrated threshold: the mined pairs' F1 beside the F1 at the threshold that is
best on the gold pairs (an oracle no user has). Written to ``<--out>/bitext.json`` for ``xlsent report``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import DEFAULT_OUT, OUT_HELP, ROOT, BenchRow, start_record, timed  # noqa: E402

import xlsent.api as api  # noqa: E402
from xlsent.arg_types import positive_int  # noqa: E402
from xlsent.encoders.model_dir import read_manifest  # noqa: E402
from xlsent.paths import data_root  # noqa: E402
from xlsent.studies.new_language import (  # noqa: E402
    SIMULATED,
    evaluation_error,
    evaluation_mining_f1,
    evaluation_pairs,
    user_pairs,
    write_pairs,
)
from xlsent.training.record import read_training  # noqa: E402

PACKAGES = ("numpy", "torch", "openvino", "onnxruntime")
LANG = SIMULATED["qaa"]


def run_fresh(args: Sequence[str], home: Path) -> float:
    """Seconds of ``xlsent ARGS`` in a subprocess whose ``$XLSENT_HOME`` is ``home``, run from the repository root
    as README runs it (the distill config's ``bitext_start`` names ``models/...`` from there), wherever the bench
    was started."""
    start = time.perf_counter()
    subprocess.run([str(Path(sys.executable).with_name("xlsent")), *args], check=True,
                   env={**os.environ, "XLSENT_HOME": str(home)}, cwd=ROOT)
    return time.perf_counter() - start


def from_root(path: str) -> str:
    """``path`` as the commands of :func:`run_fresh` read it (a relative path from the repository root)."""
    return str(ROOT / path)


def train_command(pairs: Path, out: Path) -> list[str]:
    """README's ``xlsent train distill --bitext qaa=PAIRS --out OUT`` (its arguments)."""
    return ["train", "distill", "--bitext", f"{LANG.code}={pairs}", "--out", str(out)]


def mined_scores(pairs_tsv: Path, gold: dict[str, str]) -> dict[str, float]:
    """Precision, recall and F1 (%) of the ``score TAB src TAB tgt`` lines of ``pairs_tsv`` against ``gold``
    (each source line's translation)."""
    rows = [line.rstrip("\n").split("\t") for line in pairs_tsv.read_text(encoding="utf-8").splitlines()]
    right = sum(gold.get(src) == tgt for _, src, tgt in rows)
    precision, recall = 100 * right / max(len(rows), 1), 100 * right / len(gold)
    f1 = 2 * precision * recall / (precision + recall) if right else 0.0
    return {"precision": round(precision, 2), "recall": round(recall, 2), "f1": round(f1, 2)}


def measure(pairs: int) -> list[BenchRow]:
    """README's ``--bitext`` route with a user file of ``pairs`` pairs on an empty cache: the first training run,
    timed, with the new language's test retrieval error; then ``calibrate`` and ``mine --threshold auto`` on the test
    lines, timed, with the mined pairs' F1 against the F1 at the best threshold on gold (an oracle)."""
    root = data_root()
    xx, en = evaluation_pairs(LANG, root)
    with tempfile.TemporaryDirectory() as tmp:
        folder, home = Path(tmp), Path(tmp) / "home"
        user_file = write_pairs(folder / f"{LANG.code}-en.tsv", *user_pairs(LANG, pairs, root))
        model = folder / "models" / f"me5-{LANG.code}"
        seconds = run_fresh(train_command(user_file, model), home)
        training = read_training(model)
        start = (str(read_manifest(model, verify="none")["config"].get("bitext_start", ""))
                 if training.details.get("started_from") else "")
        calibrate_s = run_fresh(["calibrate", "--model", str(model)], home)
        for name, lines in (("xx.txt", xx), ("en.txt", en)):
            (folder / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        mine_s = run_fresh(["mine", str(folder / "xx.txt"), str(folder / "en.txt"), "-o", str(folder / "pairs.tsv"),
                            "--model", str(model), "--threshold", "auto"], home)
        mined = mined_scores(folder / "pairs.tsv", dict(zip(xx, en, strict=True)))
        student = api.load(str(model), "auto")
        oracle = evaluation_mining_f1(student, LANG, root)
        starts = (("its start, " + start, api.load(from_root(start), "auto")),) if start else ()
        errors = {name: round(evaluation_error(encoder, LANG, root), 2)
                  for name, encoder in (("student", student), ("me5-small", api.load("me5-small", "auto")), *starts)}
    return [
        BenchRow(f"xlsent train distill --bitext {LANG.code}=FILE ({pairs} pairs), empty $XLSENT_HOME", "s", seconds,
                 checks={**{f"{LANG.code} test retrieval error %, {name}": error for name, error in errors.items()},
                         "s before the first training step, at most (the command's seconds less its steps and "
                         "validations; target 360)": round(seconds - (training.train_seconds or 0.0), 1)},
                 details={"training record s (data, steps, validations)": training.seconds,
                          "steps and validations s": training.train_seconds or 0.0,
                          "steps": training.steps_done or 0, "pairs seen": training.details["pairs_seen"],
                          "teacher sentences encoded": training.details["teacher_sentences_encoded"]},
                 **timed(student)),
        BenchRow(f"then xlsent calibrate and xlsent mine --threshold auto on the {len(xx)} {LANG.code} test lines "
                 "against their English", "s", calibrate_s + mine_s,
                 checks={f"mined F1 % at --threshold auto (precision {mined['precision']}, recall "
                         f"{mined['recall']})": mined["f1"],
                         "mined F1 % at the best threshold on gold (oracle)": round(oracle, 2)},
                 details={"calibrate s": calibrate_s, "mine s": mine_s}, **timed(student)),
    ]


def build_parser() -> argparse.ArgumentParser:
    """The bench's options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=positive_int, default=300,
                        help="pairs in the user's file (default 300, README's)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    record = start_record("bitext", "README's --bitext route on a fresh machine: train, calibrate, mine",
                          __file__, argv, args, PACKAGES)
    record.rows.extend(measure(args.pairs))
    record.notes.append(f"{LANG.code}: {LANG.what}; the commands as README gives them, defaults of "
                        "configs/distill.toml (the training record's seconds exclude process start and model loads); "
                        "the run starts from the shipped student where bitext_start names it, and that student saw "
                        "Turkish bitext, so its own error on qaa is the baseline to beat")
    record.notes.append("--threshold auto is the margin `xlsent calibrate` finds best on BUCC-style newstest sets of "
                        "the shipped languages (gold pairs hidden among distractors); here every test line has its "
                        "translation on the other side")
    for row in record.rows:
        print(f"{row.case}: {row.ours / 60:.1f} min; " + "; ".join(f"{k} {v}" for k, v in row.checks.items()))
    print(f"wrote {record.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
