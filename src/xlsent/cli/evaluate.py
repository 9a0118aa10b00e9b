"""``xlsent eval``: score an encoder on the papers' benchmarks."""

from __future__ import annotations

import argparse
from pathlib import Path

from xlsent.arg_types import positive_int
from xlsent.cli.commands import Commands
from xlsent.cli.options import add_data, add_model, add_output


def add_commands(sub: Commands) -> None:
    """Add ``eval`` (its options, which name the tasks, are built only when it is used)."""
    sub.add_lazy("eval", _add_arguments, help="evaluate an encoder on the papers' benchmarks, writing results/*.json")


class _Langs(argparse.Action):
    """``--langs``: codes separated by commas or spaces, repeatable; task names among them are ``eval``'s tasks,
    so ``--langs`` may come before the tasks."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from xlsent.evaluation.runner import TASKS

        items = [code for value in (values if isinstance(values, list) else [values]) for code in str(value).split(",")
                 if code]
        if not items:
            raise argparse.ArgumentError(self, "needs at least one code, e.g. --langs kat,swh")
        namespace.langs = [*(namespace.langs or []), *(x for x in items if x not in TASKS)] or None
        namespace.more_tasks = [*namespace.more_tasks, *(x for x in items if x in TASKS)]


def _add_arguments(p: argparse.ArgumentParser) -> None:
    """``xlsent eval``'s arguments (the task registry is imported only for this command)."""
    from xlsent.evaluation.runner import TASKS

    p.description = ("Evaluate --model on each TASK and write one result JSON per task into -o/--output. A result "
                     "covering fewer subsets (languages, pairs) than the file it would replace is not saved unless "
                     "--overwrite: a run on a few languages never clobbers the full one. Nor is the result of another "
                     "model of the same name (other weights) replaced: that is refused before the tasks run. Tasks: "
                     + "; ".join(f"{k}: {v}" for k, v in TASKS.items()))
    p.add_argument("tasks", nargs="*", metavar="TASK", help=" | ".join(TASKS))
    add_model(p)
    p.add_argument("--langs", nargs="+", action=_Langs, metavar="CODE",
                   help="restrict to these languages / subsets (task-specific codes), separated by commas or "
                   "spaces, e.g. --langs kat,swh (default: all of the task's)")
    add_output(p, "folder for the result JSON (default results)", default="results")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a result file (and with --record, the model's recorded score) even if it covers "
                   "subsets this run lacks or is another model's of the same name")
    add_data(p)
    p.add_argument("--margin-k", type=positive_int,
                   help="tatoeba: ratio-margin retrieval with this k, e.g. 4 (default: cosine retrieval)")
    p.add_argument("--record", action="store_true",
                   help="with a model directory as --model: store the scores in its xlsent.json and model card")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_eval, writes=("output",), more_tasks=[], langs=None)


def _eval(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.atomic import check_folder_output
    from xlsent.evaluation.runner import TASKS, check_task_data, run_task
    from xlsent.evaluation.task import UnknownSubsetError

    tasks = list(dict.fromkeys([*args.tasks, *args.more_tasks]))
    unknown = [task for task in tasks if task not in TASKS]
    if not tasks or unknown:
        problem = f"unknown task(s) {', '.join(unknown)}" if unknown else "name at least one TASK"
        raise ValueError(f"{problem}; tasks: {' | '.join(TASKS)}")
    check_folder_output(args.output, "-o")
    if args.record:
        _check_record_target(args.model)
    options = {task: {"margin_k": args.margin_k} if task == "tatoeba" else {} for task in tasks}
    for task in tasks:  # every task's data found before the model loads
        try:
            check_task_data(task, langs=args.langs, root=args.data, **options[task])
        except UnknownSubsetError as exc:
            if len(tasks) == 1:
                raise
            raise UnknownSubsetError(f"{task}: {exc}. --langs applies to every task named ({', '.join(tasks)}): run "
                                     "the tasks one by one, each with --langs of its own subsets") from exc
    encoder = load(args.model, args.backend)
    from xlsent.encoders.cache import encoder_id
    from xlsent.evaluation.results import check_saveable

    for task in tasks:  # a folder or another model's result in the way is refused before the tasks run
        check_saveable(args.output, task, encoder_id(encoder), overwrite=args.overwrite)
    from dataclasses import asdict

    from xlsent.training.model_card import check_recordable, record_metrics

    partial = args.langs is not None and not args.overwrite
    for task in tasks:
        result = run_task(task, encoder, langs=args.langs, root=args.data, progress=not args.quiet, **options[task])
        if args.record:  # a score --record would refuse is refused before its result file is written
            check_recordable(args.model, [asdict(result)], partial=partial)
        path = result.save(args.output, overwrite=args.overwrite)
        averages = ", ".join(f"{k} {v:.1f}" for k, v in result.averages.items())
        print(f"{task}: {result.main_metric} {result.main_score:.2f}{f' ({averages})' if averages else ''} -> {path}")
        if args.record:
            record_metrics(args.model, [asdict(result)], partial=partial)
            print(f"recorded in {args.model}/xlsent.json and its model card {args.model}/README.md")
    return 0


def _check_record_target(model: str) -> None:
    """``ValueError`` unless ``model`` (``--model`` of a ``--record`` run) is an xlsent model directory, whose
    ``xlsent.json`` can take the scores: checked before the model loads."""
    from xlsent.encoders.model_dir import read_manifest

    if not Path(model).is_dir():
        raise ValueError(f"--record needs an xlsent model directory as --model, not {model!r}: drop --record, or "
                         "name the model's folder")
    read_manifest(model, verify="none")

