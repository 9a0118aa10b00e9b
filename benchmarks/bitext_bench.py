"""A user's first ``xlsent train distill --bitext`` on a fresh machine: seconds of the whole command, teacher included.

The user's file is README's stand-in (``xlsent.studies.new_language``: ``--pairs`` pairs of ``qaa``, Turkish with
its vowels permuted, a language me5-small handles poorly). The command runs as README gives it, in a subprocess
whose ``$XLSENT_HOME`` is an empty folder: no exported graph, no measured backend, no teacher vector cached, as on a
machine that never ran xlsent. Its seconds are from the command's start to its exit (model loads, the data read,
the teacher's vectors, the training steps, both validations and the model directory written); the details split
them with the training record. The check is the new language's retrieval error on its 997 test pairs (never in the
user's file) of the student against me5-small's, measured in the same run. Written to ``<--out>/bitext.json`` for
``xlsent report``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import DEFAULT_OUT, OUT_HELP, BenchRow, start_record, timed  # noqa: E402

import xlsent.api as api  # noqa: E402
from xlsent.paths import data_root  # noqa: E402
from xlsent.studies.new_language import SIMULATED, evaluation_error, user_pairs, write_pairs  # noqa: E402

PACKAGES = ("numpy", "torch", "openvino", "onnxruntime")
LANG = SIMULATED["qaa"]


def train_fresh(pairs: Path, out: Path, home: Path) -> float:
    """Seconds of README's ``xlsent train distill --bitext qaa=PAIRS --out OUT`` with ``$XLSENT_HOME`` = ``home``."""
    command = [str(Path(sys.executable).with_name("xlsent")), "train", "distill", "--bitext",
               f"{LANG.code}={pairs}", "--out", str(out)]
    start = time.perf_counter()
    subprocess.run(command, check=True, env={**os.environ, "XLSENT_HOME": str(home)})
    return time.perf_counter() - start


def measure(pairs: int) -> BenchRow:
    """README's first ``--bitext`` run with a user file of ``pairs`` pairs, timed on an empty cache, and its check."""
    root = data_root()
    with tempfile.TemporaryDirectory() as tmp:
        user_file = write_pairs(Path(tmp) / f"{LANG.code}-en.tsv", *user_pairs(LANG, pairs, root))
        model = Path(tmp) / "models" / f"me5-{LANG.code}"
        seconds = train_fresh(user_file, model, Path(tmp) / "home")
        training = json.loads((model / "xlsent.json").read_text(encoding="utf-8"))["training"]
        student = api.load(str(model), "auto")
        errors = {name: round(evaluation_error(encoder, LANG, root), 2)
                  for name, encoder in (("student", student), ("me5-small", api.load("me5-small", "auto")))}
    return BenchRow(
        f"xlsent train distill --bitext {LANG.code}=FILE ({pairs} pairs), empty $XLSENT_HOME", "s", seconds,
        checks={f"{LANG.code} test retrieval error %, {name}": error for name, error in errors.items()},
        details={"training record s (data, steps, validations)": training["seconds"],
                 "steps and validations s": training["train_seconds"], "steps": training["steps_done"],
                 "pairs seen": training["pairs_seen"],
                 "teacher sentences encoded": training["teacher_sentences_encoded"]},
        **timed(student))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=300, help="pairs in the user's file (default 300, README's)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    record = start_record("bitext", "The first xlsent train distill --bitext on a fresh machine",
                          __file__, argv, args, PACKAGES)
    row = measure(args.pairs)
    record.rows.append(row)
    record.notes.append(f"{LANG.code}: {LANG.what}; the command as README gives it, defaults of configs/distill.toml "
                        "(the training record's seconds exclude the process start and model loads)")
    print(f"first --bitext run: {row.ours / 60:.1f} min; " + "; ".join(f"{k} {v}" for k, v in row.checks.items()))
    print(f"wrote {record.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
