"""The command line every study module has: run its studies, or re-score their saved results.

    python -m xlsent.methods.<method>.study [--studies NAME ...] [--out results] [--rescore] [--retrain]
        [--models DIR] [--data DIR] [--set KEY=VALUE ...] [one option per setting of the module]

``--rescore`` rewrites the summary score and the verdicts of the saved results from their own rows with the
current claims: nothing is trained or evaluated. A module with a ``record(model_dirs, settings)`` function also
gets ``--record MODEL_DIR ...``: score those trained models as its studies do and store the numbers in their cards.
What the user asked that cannot be done (a ``ValueError``, ``FileNotFoundError`` or ``FileExistsError``) is one
``error:`` line on stderr and exit status 2, as in the ``xlsent`` command.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xlsent.evaluation.results import ResultFileError, TaskResult, load_result, load_results
from xlsent.report.formatting import verdict_text
from xlsent.studies.settings import StudySettings, declarations
from xlsent.studies.study import Study, StudyModule, StudyRun, judged, study_result
from xlsent.studies.trained import require_model
from xlsent.training.config import ConfigError

log = logging.getLogger(__name__)

RECORD = "record"


def run_studies(module: StudyModule, names: Sequence[str], settings: StudySettings, out_dir: Path) -> list[Path]:
    """Run the named studies of ``module`` (one run per value of a study's split setting) and save their results,
    and the task results they keep beside them, in ``out_dir``; a study re-run replaces its result as a whole."""
    _check_names(module, names)
    lab = module.setup(settings, out_dir)
    paths = []
    for name in names:
        study = module.STUDIES[name]
        for split in getattr(settings, study.split) if study.split else ("",):
            run = StudyRun(name, settings, out_dir, split)
            run.previous = saved_result(out_dir, module.TASK, run.variant, lab.encoder)
            study.run(lab, run)
            result = study_result(module, run, lab)
            for verdict in result.verdicts:
                log.info("%s %s: %s", module.TASK, run.variant, verdict_text(verdict))
            paths.append(result.save(out_dir, overwrite=True))
            paths += [r.save(out_dir, overwrite=True) for r in run.results]
    return paths


def saved_result(out_dir: Path, task: str, variant: str, encoder: str) -> TaskResult | None:
    """The saved result of ``task``'s study ``variant`` in ``out_dir`` (its file is named by the encoder's name, not
    its weights: the rows it carries are students, whatever the shipped model's weights were), if any."""
    name = TaskResult(task, encoder, "", 0.0, "", {}, variant=variant).file_name()
    return load_result(out_dir / name) if (out_dir / name).is_file() else None


def rescore(module: StudyModule, names: Sequence[str] | None, out_dir: Path) -> list[Path]:
    """Rewrite the summary score and the verdicts of ``module``'s saved study results in ``out_dir`` from their own
    rows (every study with a saved result when ``names`` is None); nothing is trained or evaluated. A named study
    without a saved result is an error, and so is a saved result that cannot be re-scored (its file is named)."""
    _check_names(module, names or ())
    if not out_dir.is_dir():
        raise FileNotFoundError(f"--out {out_dir}: {'is not a folder' if out_dir.exists() else 'no such folder'}: "
                                "name the results folder the studies wrote")
    saved = [r for r in load_results(out_dir) if r.task == module.TASK]
    paths = []
    for name in names or list(module.STUDIES):
        study = module.STUDIES[name]
        mine = [r for r in saved if r.variant == name or (study.split and r.variant.startswith(f"{name}-"))]
        if not mine and names:
            raise FileNotFoundError(f"no saved {module.TASK} '{name}' result in {out_dir}: run the study first")
        paths += [_rescored(r, study, out_dir / r.file_name()).save(out_dir, overwrite=True) for r in mine]
    return paths


def _rescored(result: TaskResult, study: Study, path: Path) -> TaskResult:
    """:func:`judged` ``result``, read from ``path``; :class:`ResultFileError` naming the file and what is wrong
    where its rows cannot be judged."""
    wrong = _unjudgeable(result)
    if wrong is None:
        try:
            return judged(result, study)
        except KeyError as exc:
            wrong = f"it lacks the row or column {exc} that the study's claims read"
    raise ResultFileError(f"{path}: cannot re-score it: {wrong}: restore the file, or run the study again")


def _unjudgeable(result: TaskResult) -> str | None:
    """What keeps a saved study result's rows from being judged (a value that is not a number, its method row gone
    or empty); None where nothing does."""
    wrong = [f"{row!r} / {col!r} is {value!r}, not a number" for row, cols in result.scores.items()
             for col, value in cols.items() if isinstance(value, bool) or not isinstance(value, int | float)]
    method_row = result.options.get("method_row")
    if wrong:
        return "; ".join(wrong)
    if not isinstance(method_row, str) or method_row not in result.scores:
        return f"no row {method_row!r} (its method row)"
    if not result.scores[method_row]:
        return f"its method row {method_row!r} has no column"
    return None


def _check_names(module: StudyModule, names: Sequence[str]) -> None:
    unknown = [n for n in names if n not in module.STUDIES]
    if unknown:
        raise ValueError(f"unknown {module.TASK} studies {unknown}; studies: {', '.join(module.STUDIES)}")


def _field_kind(kind: Any) -> tuple[Any, bool]:
    """The item type of a settings field's annotation, and whether the field holds a tuple of them."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        kind = next(k for k in typing.get_args(kind) if k is not type(None))
    if typing.get_origin(kind) is tuple:
        return typing.get_args(kind)[0], True
    return kind, False


def _setting_options(parser: argparse.ArgumentParser, settings: type[StudySettings]) -> None:
    """One option per field of ``settings``, as :func:`xlsent.studies.settings.option` declares it."""
    hints = typing.get_type_hints(settings)
    for f, meta in declarations(settings):
        default: Any = f.default
        flag = meta.get("flag") or "--" + f.name.replace("_", "-")
        text = meta.get("help", "").replace("%", "%%")
        kind, many = _field_kind(hints[f.name])
        if kind is bool:
            parser.add_argument(f"--no-{flag[2:]}" if default else flag, dest=f.name,
                                help=f"do not {text}" if default else text,
                                action="store_false" if default else "store_true")
            continue
        shown = " ".join(map(str, default)) if many else default
        if "default" not in text:
            text += f" (default: {shown or 'none'})"
        extra: dict[str, Any] = {"choices": meta["choices"]} if meta.get("choices") else {}
        if meta.get("metavar"):
            extra["metavar"] = meta["metavar"]
        if many and meta.get("repeat"):
            extra["action"] = "append"
        elif many:
            extra["nargs"] = meta.get("nargs") or "+"
        parser.add_argument(flag, dest=f.name, type=meta.get("type") or kind, default=None, help=text, **extra)


def _settings(args: argparse.Namespace, settings: type[StudySettings]) -> StudySettings:
    values: dict[str, Any] = {}
    for f in dataclasses.fields(settings):
        value = getattr(args, f.name)
        if value is not None:
            values[f.name] = tuple(value) if isinstance(value, list) else value
    return settings(**values)


def parser_for(module: StudyModule) -> argparse.ArgumentParser:
    """The command line of ``module``'s studies."""
    parser = argparse.ArgumentParser(description=module.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = [name for name, study in module.STUDIES.items() if study.default]
    parser.add_argument("--studies", nargs="+", choices=list(module.STUDIES),
                        help=f"the studies to run (default: {' '.join(defaults)}) or, with --rescore, to re-score "
                             "(default: every study with a saved result)")
    parser.add_argument("--out", type=Path, default=Path("results"), metavar="DIR",
                        help="results folder (default: results)")
    parser.add_argument("--rescore", action="store_true", help="rewrite the summary score and verdicts of the saved "
                        "results from their own rows; nothing is trained or evaluated")
    if hasattr(module, RECORD):
        parser.add_argument("--record", nargs="+", metavar="MODEL_DIR", help="instead of studies: score these "
                            "trained models as the studies do and store the numbers in their xlsent.json and card")
    _setting_options(parser, module.Settings)
    return parser


def main(module: StudyModule, argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run, re-score or record as it asks; print every file written. What cannot be done as
    asked is an ``error:`` line on stderr: exit status 2 (1 where the machine failed the run: permissions, a full
    disk)."""
    parser = parser_for(module)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        if args.rescore:
            paths = rescore(module, args.studies, args.out)
        elif getattr(args, RECORD, None):
            for folder in args.record:
                require_model(Path(folder), "--record")
            getattr(module, RECORD)(args.record, _settings(args, module.Settings))
            return 0
        else:
            names = args.studies or [name for name, study in module.STUDIES.items() if study.default]
            paths = run_studies(module, names, _settings(args, module.Settings), args.out)
    except ConfigError as exc:
        parser.error(f"a model's configuration is invalid: {exc} (check --set and the study's own options)")
    except (FileNotFoundError, ValueError, FileExistsError) as exc:  # what was asked for cannot be done: usage
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine failed the run
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(f"wrote {path}")
    return 0
