"""The ``xlsent`` command line: parse arguments, call the API, print. No logic lives here."""

from __future__ import annotations

import argparse
import logging
import math
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from xlsent.version import __version__

MODEL_HELP = "encoder: a registered name (me5-small, muse), a model directory, or module:function (default me5-small)"
Handler = Callable[[argparse.Namespace], int]
log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from xlsent.data.text_input import InputSpec
    from xlsent.encoders.base import Encoder
    from xlsent.mining.pipeline import MineConfig


def _positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def _positive_float(text: str) -> float:
    """argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, not {text!r}")
    return value


def _threshold(text: str) -> float | str:
    """argparse type of ``--threshold``: ``auto`` or a finite number."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number or 'auto', not {text!r}")
    return value


def _input_spec(path: str, args: argparse.Namespace) -> InputSpec:
    from xlsent.data.text_input import InputSpec

    return InputSpec(Path(path), args.format, args.column, args.field, args.header)


def _cmd_models(args: argparse.Namespace) -> int:
    from xlsent.encoders.registry import REGISTERED

    if args.prepare:
        from xlsent.encoders.me5_convert import prepare_default_model

        print(f"default model ready in {prepare_default_model(force=args.force)}")
        return 0
    print(f"{'name':<11} {'dim':>4}  {'languages':<24} description")
    for info in REGISTERED.values():
        print(f"{info.name:<11} {info.dim:>4}  {info.languages:<24} {info.description}")
    print("\nAny directory written by `xlsent train` or `xlsent export` works wherever a name does.")
    return 0


def _cmd_embed(args: argparse.Namespace) -> int:
    from xlsent.api import EmbedOptions, embed_file, load
    from xlsent.data.text_input import check_options_apply
    from xlsent.embed_job import check_job

    spec = _input_spec(args.input, args)
    check_options_apply([spec])
    opts = EmbedOptions(chunk_rows=args.chunk_rows, batch_tokens=args.batch_tokens, strict=args.strict,
                        resume=args.resume, progress=not args.quiet, lang=args.lang)
    check_job(spec, args.output)
    summary = embed_file(spec, args.output, load(args.model), opts)
    print(summary.describe())
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from xlsent.api import export_sentence_transformers

    out = export_sentence_transformers(args.model, args.sentence_transformers)
    print(f"wrote sentence-transformers folder {out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.demo import run_demo

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    run_demo(load(args.model), out)
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.evaluation.runner import TASKS, run_task

    tasks = list(dict.fromkeys([*args.tasks, *args.more_tasks]))
    unknown = [task for task in tasks if task not in TASKS]
    if not tasks or unknown:
        problem = f"unknown task(s) {', '.join(unknown)}" if unknown else "name at least one TASK"
        raise ValueError(f"{problem}; tasks: {' | '.join(TASKS)}")
    encoder = load(args.model)
    for task in tasks:
        options = {"margin_k": args.margin_k} if task == "tatoeba" else {}
        result = run_task(task, encoder, langs=args.langs, root=args.data, progress=not args.quiet, **options)
        path = result.save(args.output, overwrite=args.overwrite)
        averages = ", ".join(f"{k} {v:.1f}" for k, v in result.averages.items())
        print(f"{task}: {result.main_metric} {result.main_score:.2f} ({averages}) -> {path}")
        if args.record:
            from dataclasses import asdict

            from xlsent.encoders.model_card import record_metrics

            if not Path(args.model).is_dir():
                raise ValueError(f"--record needs a model directory as --model, not {args.model!r}")
            record_metrics(args.model, [asdict(result)])
            print(f"recorded in {args.model}/xlsent.json and its model card {args.model}/README.md")
    return 0


def _cmd_mine(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from xlsent.api import load
    from xlsent.mining.pipeline import STDOUT, MineConfig, check_mine_paths, mine_files
    from xlsent.store import read_metadata

    threshold = args.threshold if isinstance(args.threshold, float) else None
    if args.nprobe and args.ef_search:
        raise ValueError("--nprobe is for IVF indexes, --ef-search for HNSW: give one of them")
    if (args.index == "hnsw" and args.nprobe) or (args.index != "hnsw" and args.ef_search):
        raise ValueError(f"--index {args.index} takes {'--ef-search' if args.index == 'hnsw' else '--nprobe'}")
    cfg = MineConfig(k=args.k, margin=args.margin, mode=args.mode, threshold=threshold, unify=args.unify,
                     dedup=not args.no_dedup, one_to_one=args.one_to_one, index=args.index,
                     effort=args.nprobe or args.ef_search,
                     max_memory=int(args.max_memory * 2**30), with_ids=args.with_ids)
    src, tgt = _input_spec(args.src, args), _input_spec(args.tgt, args)
    check_mine_paths(src, tgt, args.output)
    if args.output == STDOUT and args.engine == "ray":
        raise ValueError("-o - (pairs to standard output) needs --engine local")
    if args.engine == "ray" and (args.src_emb or args.tgt_emb):
        raise ValueError("--src-emb/--tgt-emb need --engine local")
    for given in (args.src_emb, args.tgt_emb):
        if given:
            read_metadata(given)
    # The driver encodes nothing on Ray, nor when both sides' embeddings are given: then the encoder is loaded
    # only for --threshold auto.
    needs_encoder = args.threshold == "auto" or (args.engine == "local" and not (args.src_emb and args.tgt_emb))
    encoder = load(args.model) if needs_encoder else None
    if args.threshold == "auto" and encoder is not None:
        cfg = replace(cfg, threshold=_auto_threshold(encoder, cfg, quiet=args.quiet))
    if args.engine == "ray":
        from xlsent.mining.distributed import RayConfig, mine_files_ray

        ray_cfg = RayConfig(address=args.address, num_cpus=args.num_cpus, cpus_per_task=args.cpus_per_task)
        summary = mine_files_ray(src, tgt, args.output, args.model, cfg, ray_cfg, src_lang=args.src_lang,
                                 tgt_lang=args.tgt_lang, progress=not args.quiet)
    else:
        summary = mine_files(
            src, tgt, args.output, encoder, cfg, src_lang=args.src_lang, tgt_lang=args.tgt_lang,
            src_emb=Path(args.src_emb) if args.src_emb else None,
            tgt_emb=Path(args.tgt_emb) if args.tgt_emb else None, progress=not args.quiet,
        )
    print(summary.describe(), file=sys.stderr)
    return 0


def _auto_threshold(encoder: Encoder, cfg: MineConfig, *, quiet: bool) -> float:
    """``--threshold auto``: the encoder's calibrated threshold, saying where it comes from (standard error)."""
    from xlsent.mining.calibration import load_calibration

    record, found = load_calibration(encoder)
    threshold = float(record["threshold"])
    how = {key: record.get(key) for key in ("margin", "k")}
    if how != {"margin": cfg.margin, "k": cfg.k}:
        log.warning(
            "--threshold auto: the threshold was calibrated with margin=%s, k=%s; this run uses margin=%s, k=%d",
            how["margin"], how["k"], cfg.margin, cfg.k)
    if not quiet:
        sets = ", ".join(record.get("sets", [])) or "unrecorded sets"
        print(f"--threshold auto: {threshold:.6g}, calibrated on {sets} ({record.get('date', 'undated')}; from "
              f"{found})", file=sys.stderr)
    return threshold


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.mining.calibration import calibrate, save_threshold, ship_threshold

    encoder = load(args.model)
    record = calibrate(encoder, langs=args.langs, root=args.data, progress=not args.quiet)
    path = save_threshold(encoder, record)
    print(f"{args.model}: ratio-margin threshold {record['threshold']:.4f} (saved in {path})")
    if args.ship:
        print(f"shipped with xlsent: {ship_threshold(encoder, record)}")
    return 0


def _langs_list(text: str) -> list[str]:
    """argparse type of a comma-separated list of language codes."""
    codes = [code.strip() for code in text.split(",") if code.strip()]
    if not codes:
        raise argparse.ArgumentTypeError(f"must name at least one language code, e.g. de,fr, not {text!r}")
    return codes


def _cmd_index(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.data.text_input import check_options_apply, readable
    from xlsent.mining.search_index import build_sentence_index

    spec = _input_spec(args.input, args)
    spec.check()
    check_options_apply([spec])
    out = Path(args.output)
    if args.output == "-" or (out.exists() and not out.is_dir()):
        raise ValueError(f"-o {args.output}: an index is a folder; name a new or existing folder")
    encoder = load(args.model)
    with readable(spec) as spec:
        out = build_sentence_index(spec, out, encoder, args.model, kind=args.kind, progress=not args.quiet)
    print(f"wrote index {out}")
    return 0


def _cmd_search(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.data.text_input import InputSpec, iter_rows, readable
    from xlsent.encoders.cache import encoder_id
    from xlsent.mining.search_index import SentenceIndex

    queries = list(args.query)
    if args.file:
        with readable(InputSpec(Path(args.file))) as spec:
            queries += list(iter_rows(spec))
    if not queries:
        raise ValueError("give at least one QUERY or --file")
    index = SentenceIndex.open(args.index)
    encoder = load(index.model)
    if encoder_id(encoder) != index.encoder:
        raise ValueError(f"{args.index} was built with {index.encoder}, but {index.model} is now "
                         f"{encoder_id(encoder)}; rebuild the index")
    for query, hits in zip(queries, index.search(encoder.encode(queries), args.k), strict=True):
        print(f"query: {query}")
        for hit in hits:
            print(f"  {hit.rank}. {hit.score:.4f}  [{hit.row + 1}] {hit.text}")
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    from xlsent.api import train

    sets = list(args.set or [])
    sets += [f"{key}={value}" for key in ("seed", "device") if (value := getattr(args, key)) is not None]
    out = train(args.method, args.out, config_files=args.config or (), sets=sets, mode=args.mode,
                resume=args.resume, data=args.data, progress=not args.quiet)
    print(f"wrote model directory {out}")
    print(f"to mine with it at a calibrated threshold (`xlsent mine --threshold auto`), calibrate it (slow on CPU, so "
          f"not run here):\n  xlsent calibrate --model {shlex.quote(str(out))}")
    return 0


class _TrainHelp(argparse.Action):
    """``xlsent train --help``: the options, then every registered method (with METHOD: its config keys)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show this help (with METHOD: its config keys)")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from xlsent.training.method import available_methods, get_method

        parser.print_help()
        method = getattr(namespace, "method", None)
        if method:
            print(f"\nconfig keys of {method} (packaged defaults; override with --config FILE or --set key=value):\n")
            print(get_method(method).defaults_text())
        else:
            print("\nmethods:")
            for name, m in available_methods().items():
                modes = f" (modes: {', '.join(m.modes)})" if m.modes else ""
                print(f"  {name:<12} {m.summary}{modes}")
            print("\n`xlsent train METHOD --help` lists a method's config keys with their defaults and meaning.")
        parser.exit()


def _cmd_report(args: argparse.Namespace) -> int:
    from xlsent.evaluation.report import write_report

    write_report(Path(args.results), Path(args.docs), Path(args.plots),
                 bench_dir=Path(args.bench) if args.bench else None, train_logs=args.train_logs or None)
    print(f"wrote {args.docs} and plots in {args.plots}")
    return 0


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


class _Commands(argparse._SubParsersAction):
    """Sub-commands; those added with :meth:`add_lazy` get their arguments only when they are parsed, so that
    ``xlsent --help``, ``--version`` and the other commands skip the imports one command's options need."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pending: dict[str, Callable[[argparse.ArgumentParser], None]] = {}

    def add_lazy(self, name: str, add_arguments: Callable[[argparse.ArgumentParser], None], **kwargs: Any) -> None:
        self.add_parser(name, **kwargs)
        self.pending[name] = add_arguments

    def build(self, name: str) -> argparse.ArgumentParser:
        """The complete parser of command ``name``."""
        parser: argparse.ArgumentParser = self.choices[name]
        if name in self.pending:
            self.pending.pop(name)(parser)
        return parser

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if values and values[0] in self.choices:
            self.build(values[0])
        super().__call__(parser, namespace, values, option_string)


def _add_output(p: argparse.ArgumentParser, help: str, default: str | None = None) -> None:
    """``-o/--output``, the one spelling of every command's output (``--out`` still accepted where it was)."""
    p.add_argument("-o", "--output", required=default is None, default=default, help=help)
    if default is not None:
        p.add_argument("--out", dest="output", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def _add_input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default="auto", choices=["auto", "txt", "tsv", "jsonl", "parquet"],
                   help="input format (default auto: from the extension; - and names without one are txt)")
    p.add_argument("--column", help="TSV: 0-based column index or header name (default 0); Parquet: column name "
                   "(default text)")
    p.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                   help="TSV: line 1 is a header and is skipped (--header) or is data (--no-header); required for "
                   "TSV input unless --column names a header column (default: none, so TSV input must say)")
    p.add_argument("--field", help="JSONL: field holding the text (default text)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")


def _add_eval_arguments(p: argparse.ArgumentParser) -> None:
    """``xlsent eval``'s arguments (the task registry is imported only for this command)."""
    from xlsent.evaluation.runner import TASKS

    p.description = ("Evaluate --model on each TASK and write one result JSON per task into -o/--output. A result "
                     "covering fewer subsets (languages, pairs) than the file it would replace is not saved unless "
                     "--overwrite: a run on a few languages never clobbers the full one. Tasks: "
                     + "; ".join(f"{k}: {v}" for k, v in TASKS.items()))
    p.add_argument("tasks", nargs="*", metavar="TASK", help=" | ".join(TASKS))
    p.add_argument("--model", default="me5-small", help=MODEL_HELP)
    p.add_argument("--langs", nargs="+", action=_Langs, metavar="CODE",
                   help="restrict to these languages / subsets (task-specific codes), separated by commas or "
                   "spaces, e.g. --langs kat,swh (default: all of the task's)")
    _add_output(p, "folder for the result JSON (default results)", default="results")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a result file even if it covers subsets this run lacks")
    p.add_argument("--data", help="benchmark data folder (default $XLSENT_DATA or ../shared/data)")
    p.add_argument("--margin-k", type=_positive_int,
                   help="tatoeba: ratio-margin retrieval with this k, e.g. 4 (default: cosine retrieval)")
    p.add_argument("--record", action="store_true",
                   help="with a model directory as --model: store the scores in its xlsent.json and model card")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_eval, more_tasks=[], langs=None)


def _add_train_arguments(p: argparse.ArgumentParser) -> None:
    """``xlsent train``'s arguments (the registered methods are looked up only for this command)."""
    from xlsent.training.method import method_names

    p.add_argument("-h", "--help", action=_TrainHelp)
    p.add_argument("method", choices=method_names(), metavar="METHOD", help=" | ".join(method_names()))
    p.add_argument("--out", "-o", required=True, help="model directory to write")
    p.add_argument("--config", action="append", metavar="FILE", help="TOML file overriding the defaults (repeatable)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override one config key, e.g. --set steps=2000 --set pairs=de-en,ar-en (repeatable)")
    p.add_argument("--mode", help="the method's mode (picks the [MODE] table of the config), e.g. supervised")
    p.add_argument("--resume", action="store_true", help="continue a killed run from its last checkpoint")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], help="where to train (default: config, auto)")
    p.add_argument("--seed", type=int, help="random seed (default: config, 0)")
    p.add_argument("--data", help="benchmark data folder (default $XLSENT_DATA or ../shared/data)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_train)


def _add_calibrate_arguments(p: argparse.ArgumentParser) -> None:
    """``xlsent calibrate``'s arguments (the calibration module is imported only for this command)."""
    from xlsent.mining.calibration import CALIBRATION_SETS

    p.add_argument("--model", default="me5-small", help=MODEL_HELP)
    p.add_argument("--data", help="benchmark data folder (default $XLSENT_DATA or ../shared/data)")
    p.add_argument("--langs", type=_langs_list, default=list(CALIBRATION_SETS), metavar="CODES",
                   help=f"the LANG-en newstest sets to calibrate on, comma-separated (default "
                   f"{','.join(CALIBRATION_SETS)})")
    p.add_argument("--ship", action="store_true",
                   help="also write the record into the thresholds shipped with xlsent (the package's "
                   "mining/thresholds.json; registered encoders only, for maintainers) (default: off)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_calibrate)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every ``xlsent`` command."""
    parser = argparse.ArgumentParser(
        prog="xlsent",
        description="Cross-lingual sentence embeddings: embed text, mine translations, train and evaluate.",
    )
    parser.add_argument("--version", action="version", version=f"xlsent {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging: -v info, -vv debug (default: warnings only)")
    parser.register("action", "parsers", _Commands)
    sub = cast(_Commands, parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))

    p = sub.add_parser("models", help="list the available encoders, or prepare the default one")
    p.add_argument("--prepare", action="store_true", help="convert the default model into the cache now")
    p.add_argument("--force", action="store_true", help="with --prepare: convert again even if cached")
    p.set_defaults(func=_cmd_models)

    p = sub.add_parser(
        "embed", help="embed a text file (one sentence a row) into .npy + .json sidecar or .parquet",
        description="Embed every row of INPUT. Row i of OUTPUT is the vector of row i of INPUT; empty rows "
        "become zero vectors (counted in the summary) unless --strict. A killed run continues with --resume. "
        "Paths and options are checked before anything is computed; a failed run leaves nothing behind but "
        "finished chunks that --resume can reuse (OUTPUT.parts/, and it says so).",
    )
    p.add_argument("input", help="input file: .txt (a sentence a line), .tsv, .jsonl or .parquet; - for standard "
                   "input (also /dev/stdin and other pipes)")
    _add_output(p, "output file: .npy (with a .npy.json sidecar) or .parquet, chosen by the extension")
    p.add_argument("--model", default="me5-small", help=MODEL_HELP)
    _add_input_options(p)
    p.add_argument("--lang", help="language code of the input, for encoders that use it (default: none)")
    p.add_argument("--batch-tokens", type=_positive_int, default=2048, help="padded tokens per batch (default 2048)")
    p.add_argument("--chunk-rows", type=_positive_int, default=50_000,
                   help="rows per resumable chunk (default 50000; resuming needs the same value)")
    p.add_argument("--resume", action="store_true", help="reuse the chunks a killed run already finished "
                   "(without it, finished chunks of an earlier run are discarded, with a warning)")
    p.add_argument("--strict", action="store_true", help="make empty rows an error (default: zero vectors)")
    p.set_defaults(func=_cmd_embed)

    p = sub.add_parser("export", help="export a model for other libraries")
    p.add_argument("model", help="encoder: a registered name (me5-small, muse) or a model directory")
    p.add_argument("--sentence-transformers", required=True, metavar="OUT",
                   help="write a folder that SentenceTransformer(OUT) loads with the same vectors")
    p.set_defaults(func=_cmd_export)

    sub.add_lazy("eval", _add_eval_arguments,
                 help="evaluate an encoder on the papers' benchmarks, writing results/*.json")

    p = sub.add_parser(
        "mine", help="mine translation pairs out of two monolingual files (margin-based, resumable)",
        description="Embed SRC and TGT (or reuse --src-emb/--tgt-emb made by `xlsent embed` from the same "
        "files), find the k nearest neighbours in both directions, score with the margin of Artetxe & Schwenk "
        "(2019) and write `score TAB src TAB tgt` lines, best first. A sentence on several lines is searched and "
        "scored once (see --unify). The last line, on standard error, says how many pairs were written, out of "
        "how many candidates, at which threshold. Re-running after a kill resumes. Paths "
        "and options are checked before anything is computed; a failed run leaves nothing behind but the "
        "finished stages that a re-run reuses (OUTPUT.work/, and it says so).",
    )
    p.add_argument("src", help="source sentences (one a line; or TSV/JSONL/Parquet with --column/--field); - for "
                   "standard input")
    p.add_argument("tgt", help="target sentences (as SRC; at most one of them can be -)")
    _add_output(p, "output TSV (.tsv or .txt); - writes the pairs to standard output (not resumable)")
    p.add_argument("--model", default="me5-small", help=MODEL_HELP)
    p.add_argument("--src-lang", help="source language code (default: none)")
    p.add_argument("--tgt-lang", help="target language code (default: none)")
    p.add_argument("--src-emb", help="embeddings of SRC from `xlsent embed`, checked against SRC (default: embed SRC)")
    p.add_argument("--tgt-emb", help="embeddings of TGT from `xlsent embed`, checked against TGT (default: embed TGT); "
                   "with both --src-emb and --tgt-emb the encoder is not loaded (but for --threshold auto)")
    p.add_argument("--margin", default="ratio", choices=["ratio", "distance", "absolute"],
                   help="how a pair's cosine is compared with its neighbourhoods' mean: ratio (cos / mean), distance "
                   "(cos - mean) or absolute (cos alone) (default ratio)")
    p.add_argument("--mode", default="max", choices=["forward", "backward", "max", "intersect"],
                   help="candidate generation (default max: best of both directions, greedy 1:1)")
    p.add_argument("-k", "--k", type=_positive_int, default=4, help="neighbours in the margin (default 4)")
    p.add_argument("--threshold", type=_threshold,
                   help="keep pairs scoring at least this; 'auto' = the encoder's calibrated threshold: its model "
                   "directory's, your `xlsent calibrate` run's, or the one shipped for a registered encoder "
                   "(default: keep every candidate, which makes a candidate list, not a mined bitext)")
    p.add_argument("--unify", action=argparse.BooleanOptionalAction, default=True,
                   help="search and score each distinct sentence once, lines equal after stripping surrounding "
                   "whitespace being one sentence (LASER's --unify): a sentence repeated k times would otherwise fill "
                   "a neighbourhood of k and lose its pairs; each pair is one row, --with-ids lists all its lines "
                   "(default: on; --no-unify scores every line on its own)")
    p.add_argument("--no-dedup", action="store_true",
                   help="let one source or target text be in several pairs (default: each in the best-scoring pair "
                   "only)")
    p.add_argument("--one-to-one", action="store_true", help="each sentence used at most once (default: off)")
    p.add_argument("--index", default="exact",
                   choices=["exact", "flat", "ivf", "ivfpq", "ivfsq", "ivfpqfs", "hnsw", "auto"],
                   help="k-NN search: exact blocked (default) or a FAISS approximate index, trained once and "
                   "searched by shards (resumable; on the workers with --engine ray); auto: exact while both sides "
                   "have under 200k distinct sentences, else ivfpqfs, printing the choice and its expected recall")
    p.add_argument("--nprobe", type=_positive_int,
                   help="with an IVF --index: lists searched per query (default: the smallest power of two that finds "
                   "95%% of a sample's exact nearest neighbours)")
    p.add_argument("--ef-search", type=_positive_int,
                   help="with --index hnsw: efSearch, the search's candidate list (default: tuned as --nprobe)")
    p.add_argument("--max-memory", type=_positive_float, default=1.0,
                   help="GiB for the similarity blocks (default 1)")
    p.add_argument("--with-ids", action="store_true",
                   help="append the 1-based line numbers of both sides (a TSV header is line 1); a repeated sentence "
                   "lists all its lines, comma-separated, e.g. 3,17")
    p.add_argument("--engine", default="local", choices=["local", "ray"],
                   help="local: one process (default); ray: encoder actors and one k-NN task per shard on a Ray "
                   "cluster (see --address); both resumable")
    p.add_argument("--address", help="with --engine ray: join this Ray cluster (default: start Ray locally)")
    p.add_argument("--num-cpus", type=_positive_int,
                   help="with --engine ray and no --address: CPUs for local Ray (default: all cores)")
    p.add_argument("--cpus-per-task", type=_positive_int, default=1,
                   help="with --engine ray: CPUs each embedding actor and k-NN task reserves, and the BLAS, OpenMP "
                   "and torch threads it runs with (default 1)")
    _add_input_options(p)
    p.set_defaults(func=_cmd_mine)

    p = sub.add_parser("index", help="embed a text file into a saved FAISS index for `xlsent search`")
    p.add_argument("input", help="sentences (one a line; or TSV/JSONL/Parquet with --column/--field); - for "
                   "standard input")
    _add_output(p, "index folder to write")
    p.add_argument("--model", default="me5-small", help=MODEL_HELP)
    p.add_argument("--kind", default="auto", choices=["flat", "ivf", "ivfpq", "ivfsq", "ivfpqfs", "hnsw", "auto"],
                   help="FAISS index type (default auto: exact below ~200k rows, IVF above)")
    _add_input_options(p)
    p.set_defaults(func=_cmd_index)

    p = sub.add_parser("search", help="nearest sentences of a saved index for each query")
    p.add_argument("index", help="index folder from `xlsent index`")
    p.add_argument("query", nargs="*", help="query sentences")
    p.add_argument("--file", help="more queries, one a line; - for standard input (default: none)")
    p.add_argument("-k", "--k", type=_positive_int, default=5, help="results per query (default 5)")
    p.set_defaults(func=_cmd_search)

    sub.add_lazy("train", _add_train_arguments, help="train or adapt an encoder with one of the papers' methods",
                 add_help=False,
                 description="Train METHOD into the model directory --out. The configuration is the method's "
                 "packaged defaults, overridden by each --config TOML file, then by each --set key=value (any config "
                 "key; values are typed and checked). A killed run continues with --resume; resuming with another "
                 "configuration is an error. The result loads with `xlsent.load(OUT)` and works with every --model "
                 "option. Mining with it at `--threshold auto` needs its threshold calibrated: that takes about a "
                 "quarter of an hour on CPU, so it is not run here; the `xlsent calibrate` command is printed at "
                 "the end.")

    sub.add_lazy(
        "calibrate", _add_calibrate_arguments,
        help="calibrate an encoder's mining threshold on BUCC-style sets (for mine --threshold auto)",
        description="Find the ratio-margin threshold (k=4, max retrieval) that maximises F1 on BUCC-style sets "
        "built from WMT newstest (gold pairs hidden among distractors), average it over the sets and save it with "
        "how it was obtained: in $XLSENT_HOME/calibration/ and in the model directory's xlsent.json. `xlsent mine "
        "--threshold auto` reads it from there, else from the thresholds shipped with xlsent for the registered "
        "encoders. Encodings are cached, so a second run (or one after `xlsent eval bucc`) encodes nothing. "
        "Slow on CPU: about a quarter of an hour for me5-small.",
    )

    p = sub.add_parser("report", help="render docs/results.md and plots from results, benchmarks and training logs")
    p.add_argument("--results", default="results", help="folder of result JSON (default results/)")
    p.add_argument("--bench", help="folder of benchmark JSON written by `make bench` (default RESULTS/bench)")
    p.add_argument("--train-logs", default="models/*/train.jsonl", metavar="GLOB",
                   help="training logs to plot, ** matching any folders (default models/*/train.jsonl: the shipped "
                        "models; '' for none)")
    p.add_argument("--docs", default="docs/results.md", help="markdown to write (default docs/results.md)")
    p.add_argument("--plots", default="docs/plots", help="folder for PNG plots (default docs/plots)")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("demo", help="embed the shipped German-English example and pair it up (make run)")
    p.add_argument("--model", default="me5-small", help=MODEL_HELP)
    _add_output(p, "where the embeddings go (default out/demo)", default="out/demo")
    p.set_defaults(func=_cmd_demo)
    return parser


def _stdout_closed() -> int:
    """Point standard output at /dev/null so the interpreter's final flush does not fail again; exit 1."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``xlsent`` console script."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse has printed (exit code 2)
        return exc.code if isinstance(exc.code, int) else 2
    except BrokenPipeError:  # help read by a pipe that closed early, e.g. `xlsent train dual-pivot --help | head`
        return _stdout_closed()
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        handler: Handler = args.func
        return handler(args)
    except BrokenPipeError:  # standard output closed early, e.g. `xlsent mine a b -o - | head`
        return _stdout_closed()
    except (FileNotFoundError, ValueError, FileExistsError) as exc:  # what was asked for cannot be done: usage
        print(f"xlsent: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine failed the run (permissions, a full disk)
        print(f"xlsent: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("xlsent: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
