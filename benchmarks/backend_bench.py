"""Which backend ``auto`` runs on this kind of CPU: each backend's speed and accuracy guard on a model of a family.

Speed: the backends take turns (A B C ... A B C ...) for ``--rounds`` rounds on the same ``--sentences`` Tatoeba
sentences, each in its own worker process (as ``embed_bench.py``); a backend's figure is its median sentences/s.

Accuracy guard: per backend, Tatoeba accuracy (mean of both directions) over the XTREME-36 languages and STS17
Spearman (mean of the tracks, 4b aside) of ``--model`` (me5-small; ``models/laser-small`` for LASER models, which
run on ``torch`` and ``torch-bf16``), encoded on that backend without the encoding cache, against the same on
PyTorch fp32. A backend that loses more than ``--max-loss`` points (0.5) on either may not be ``auto``'s choice.
Then ``src/xlsent/encoders/backend_table.json`` gets this CPU class's row for the model's family (the backends
fastest first, each with whether it held the guard; other CPU classes' and families' rows are kept): ``auto`` takes
the first that held (:func:`xlsent.encoders.backends.backend_choice`). Written to ``<--out>/backends.json``
(``backends-laser.json`` for a LASER model) for ``xlsent report``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_record, also when this file is loaded by path
from bench_record import (  # noqa: E402
    DEFAULT_OUT,
    OUT_HELP,
    BenchRecord,
    BenchRow,
    load_model,
    start_record,
)
from embed_bench import Contender, Measured, bench_sentences, run_case  # noqa: E402

from xlsent.arg_types import non_negative, positive_int  # noqa: E402
from xlsent.atomic import write_json  # noqa: E402

PACKAGES = ("numpy", "torch", "onnxruntime", "openvino", "nncf")
REFERENCE = "torch"


def accuracy(model: str, backend: str, data: str | None) -> dict[str, float]:
    """Tatoeba XTREME-36 mean accuracy and STS17 mean Spearman of ``model`` on ``backend`` (no encoding cache)."""
    from xlsent.data.sts import STS17_TRACKS
    from xlsent.data.tatoeba import XTREME36
    from xlsent.encoders.registry import load_encoder
    from xlsent.evaluation import sts, tatoeba

    encoder = load_encoder(model, backend)

    def embed(sentences: Sequence[str], lang: str | None) -> Any:
        return encoder.encode(sentences, lang)

    tat = tatoeba.evaluate(embed, encoder_id=f"{model} {backend}", langs=list(XTREME36), root=data)
    sim = sts.evaluate(embed, encoder_id=f"{model} {backend}", langs=[f"sts17-{t}" for t in STS17_TRACKS],
                       root=data)
    return {"tatoeba xtreme-36": tat.averages["xtreme-36"], "sts17": sim.averages["sts17 (without 4b)"]}


def table_rows(measured: Sequence[Measured], scores: dict[str, dict[str, float]], max_loss: float
               ) -> list[dict[str, Any]]:
    """This CPU class's rows of the backend table: fastest first, each with its figures and whether its guard held.

    >>> m = [Measured(Contender("a", "xlsent", backend="torch"), [100.0]),
    ...      Measured(Contender("b", "xlsent", backend="onnx-int8"), [150.0])]
    >>> s = {"torch": {"tatoeba xtreme-36": 80.0, "sts17": 70.0}, "onnx-int8": {"tatoeba xtreme-36": 79.0,
    ...      "sts17": 70.0}}
    >>> [(r["backend"], r["guard"]) for r in table_rows(m, s, 0.5)]
    [('onnx-int8', False), ('torch', True)]
    """
    ref = scores[REFERENCE]
    rows = []
    for m in sorted((m for m in measured if m.rates and m.contender.backend in scores), key=lambda m: -m.median):
        own = scores[m.contender.backend]
        losses = {k: round(ref[k] - own[k], 3) for k in ref}
        rows.append({"backend": m.contender.backend, "sentences/s": round(m.median, 1),
                     **{k: round(v, 3) for k, v in own.items()}, "loss": losses,
                     "guard": all(loss <= max_loss for loss in losses.values())})
    return rows


def write_table(path: Path, key: str, rows: list[dict[str, Any]]) -> None:
    """``path`` with the rows of ``key`` (a CPU class, or ``family:class``) replaced (other keys kept)."""
    table = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    table[key] = rows
    write_json(path, dict(sorted(table.items())))


def build_parser() -> argparse.ArgumentParser:
    """The bench's options (README quotes the guard's default; ``tests/test_readme.py`` reads it here)."""
    from xlsent.encoders.backends import TABLE
    from xlsent.inference import BACKENDS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="me5-small", help="the model whose family's row is measured: me5-small "
                        "(transformers, the default) or a LASER model directory (models/laser-small)")
    parser.add_argument("--sentences", type=positive_int, default=2000,
                        help="sentences of the speed rounds (default 2000)")
    parser.add_argument("--rounds", type=positive_int, default=5, help="timed rounds of every backend (default 5)")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS),
                        help="backends (default all; torch is always measured: it is the reference)")
    parser.add_argument("--max-loss", type=non_negative(float), default=0.5,
                        help="most points a backend may lose on either guard score (default %(default)g)")
    parser.add_argument("--table", type=Path, default=TABLE, help=f"backend table to update (default {TABLE})")
    parser.add_argument("--data", help="benchmark data folder (default: $XLSENT_DATA or ../shared/data)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    return parser


def family_of(model: str) -> tuple[str, tuple[str, ...]]:
    """The backend-table family of ``model`` ("" for transformers, ``laser``) and the backends it runs on, from its
    manifest (the model itself loads in the workers that time it)."""
    from xlsent.encoders.bilstm import MODEL_TYPE, OWN_BACKENDS
    from xlsent.encoders.model_dir import MANIFEST, read_manifest
    from xlsent.inference import BACKENDS

    laser = (Path(model) / MANIFEST).is_file() and read_manifest(model, verify="none").get("type") == MODEL_TYPE
    return (MODEL_TYPE, OWN_BACKENDS) if laser else ("", BACKENDS)


def main(argv: Sequence[str] | None = None) -> int:
    from xlsent.encoders.backends import backend_choice, cpu_class, physical_cores, table_key

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    load_model(parser, args.model, REFERENCE)  # a model that does not load: an error now, not in every worker
    family, runs_on = family_of(args.model)
    backends = [b for b in dict.fromkeys([REFERENCE, *args.backends]) if b in runs_on]
    klass, threads = cpu_class(), physical_cores()
    key = table_key(klass, family)
    record: BenchRecord = start_record("-".join(filter(None, ("backends", family))),
                                       f"Backends on this CPU class ({key}): speed and accuracy guard", __file__,
                                       argv, args, PACKAGES, hidden=("table", "data"))
    sentences, source = bench_sentences(args.sentences)
    print(f"speed: {len(sentences)} sentences of {source}, {args.rounds} rounds", flush=True)
    measured = run_case([Contender(f"xlsent {b}", "xlsent", model=args.model, backend=b) for b in backends],
                        sentences, args.rounds, "", threads)
    scores = {}
    for m in measured:
        if m.rates:
            print(f"accuracy guard: {m.contender.backend}", flush=True)
            scores[m.contender.backend] = accuracy(args.model, m.contender.backend, args.data)
    rows = table_rows(measured, scores, args.max_loss)
    write_table(args.table, key, rows)
    ref = next(r for r in rows if r["backend"] == REFERENCE)
    models = {m.contender.backend: m.model for m in measured}
    for r in rows:
        record.rows.append(BenchRow(
            f"{r['backend']} ({len(sentences)} sentences)", "sentences/s", r["sentences/s"], ref["sentences/s"],
            "xlsent torch (fp32) in the same rounds",
            checks={f"Tatoeba XTREME-36 loss <= {args.max_loss:g}": r["loss"]["tatoeba xtreme-36"] <= args.max_loss,
                    f"STS17 loss <= {args.max_loss:g}": r["loss"]["sts17"] <= args.max_loss},
            details={"Tatoeba XTREME-36": r["tatoeba xtreme-36"], "STS17": r["sts17"]}, **models[r["backend"]]))
    choice, reason = backend_choice({key: rows}, klass, family)
    record.notes += [f"CPU class {klass}; {threads} threads per backend; speed on {source}.",
                     f"auto on {key}: {choice} ({reason}).",
                     f"Accuracy: {args.model} on each backend without the encoding cache; guard = at most "
                     f"{args.max_loss:g} points below torch on both Tatoeba XTREME-36 (mean of both directions) and "
                     "STS17 (mean Spearman x 100 of the tracks, 4b aside).",
                     *[f"{m.contender.name} not measured: {m.error}" for m in measured if not m.rates]]
    print(f"auto on {key}: {choice}")
    print(f"wrote {record.write(args.out)} and {args.table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
