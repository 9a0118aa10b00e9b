"""``xlsent mine`` and ``xlsent calibrate``: mine translation pairs, calibrate the threshold that mining uses."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from xlsent.cli.commands import Commands
from xlsent.cli.options import (
    add_data,
    add_input_options,
    add_model,
    add_output,
    input_spec,
    positive_float,
    positive_int,
)


def add_commands(sub: Commands) -> None:
    """Add ``mine`` and ``calibrate``."""
    _add_mine(sub)
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


def _langs_list(text: str) -> list[str]:
    """argparse type of a comma-separated list of language codes."""
    codes = [code.strip() for code in text.split(",") if code.strip()]
    if not codes:
        raise argparse.ArgumentTypeError(f"must name at least one language code, e.g. de,fr, not {text!r}")
    return codes


def _add_mine(sub: Commands) -> None:
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
    add_output(p, "output TSV (.tsv or .txt); - writes the pairs to standard output (not resumable)")
    add_model(p)
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
    p.add_argument("-k", "--k", type=positive_int, default=4, help="neighbours in the margin (default 4)")
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
    p.add_argument("--nprobe", type=positive_int,
                   help="with an IVF --index: lists searched per query (default: the smallest power of two that finds "
                   "95%% of a sample's exact nearest neighbours)")
    p.add_argument("--ef-search", type=positive_int,
                   help="with --index hnsw: efSearch, the search's candidate list (default: tuned as --nprobe)")
    p.add_argument("--max-memory", type=positive_float, default=1.0,
                   help="GiB for the similarity blocks (default 1)")
    p.add_argument("--with-ids", action="store_true",
                   help="append the 1-based line numbers of both sides (a TSV header is line 1); a repeated sentence "
                   "lists all its lines, comma-separated, e.g. 3,17")
    p.add_argument("--engine", default="local", choices=["local", "ray"],
                   help="local: one process (default); ray: encoder actors and one k-NN task per shard on a Ray "
                   "cluster (see --address); both resumable")
    p.add_argument("--address", help="with --engine ray: join this Ray cluster (default: start Ray locally)")
    p.add_argument("--num-cpus", type=positive_int,
                   help="with --engine ray and no --address: CPUs for local Ray (default: all cores)")
    p.add_argument("--cpus-per-task", type=positive_int, default=1,
                   help="with --engine ray: CPUs each embedding actor and k-NN task reserves, and the BLAS, OpenMP "
                   "and torch threads it runs with (default 1)")
    add_input_options(p)
    p.set_defaults(func=_mine, writes=("output",))


def _add_calibrate_arguments(p: argparse.ArgumentParser) -> None:
    """``xlsent calibrate``'s arguments (the calibration module is imported only for this command)."""
    from xlsent.mining.calibration import CALIBRATION_SETS

    add_model(p)
    add_data(p)
    p.add_argument("--langs", type=_langs_list, default=list(CALIBRATION_SETS), metavar="CODES",
                   help=f"the LANG-en newstest sets to calibrate on, comma-separated (default "
                   f"{','.join(CALIBRATION_SETS)})")
    p.add_argument("--ship", action="store_true",
                   help="also write the record into the thresholds shipped with xlsent (the package's "
                   "mining/thresholds.json; registered encoders only, for maintainers) (default: off)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_calibrate, writes=())


def _check_mine_options(args: argparse.Namespace) -> None:
    """Refuse option combinations that do not go together, naming the options."""
    if args.nprobe and args.ef_search:
        raise ValueError("--nprobe is for IVF indexes, --ef-search for HNSW: give one of them")
    if (args.index == "hnsw" and args.nprobe) or (args.index != "hnsw" and args.ef_search):
        raise ValueError(f"--index {args.index} takes {'--ef-search' if args.index == 'hnsw' else '--nprobe'}")


def _mine(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from xlsent.api import load
    from xlsent.mining.auto_threshold import auto_threshold
    from xlsent.mining.pipeline import STDOUT, MineConfig, check_mine_paths, mine_files
    from xlsent.store import read_metadata

    _check_mine_options(args)
    cfg = MineConfig(k=args.k, margin=args.margin, mode=args.mode,
                     threshold=args.threshold if isinstance(args.threshold, float) else None, unify=args.unify,
                     dedup=not args.no_dedup, one_to_one=args.one_to_one, index=args.index,
                     effort=args.nprobe or args.ef_search,
                     max_memory=int(args.max_memory * 2**30), with_ids=args.with_ids)
    src, tgt = input_spec(args.src, args), input_spec(args.tgt, args)
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
    encoder = load(args.model, args.backend) if needs_encoder else None
    if args.threshold == "auto" and encoder is not None:
        calibrated = auto_threshold(encoder, margin=cfg.margin, k=cfg.k)
        if not args.quiet:
            print(calibrated.describe(), file=sys.stderr)
        cfg = replace(cfg, threshold=calibrated.threshold)
    if args.engine == "ray":
        from xlsent.mining.distributed import RayConfig, mine_files_ray

        ray_cfg = RayConfig(address=args.address, num_cpus=args.num_cpus, cpus_per_task=args.cpus_per_task,
                            backend=args.backend)
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


def _calibrate(args: argparse.Namespace) -> int:
    from xlsent.api import load
    from xlsent.mining.calibration import calibrate, calibration_path, save_threshold, ship_threshold
    from xlsent.output_lock import exclusive_outputs

    encoder = load(args.model, args.backend)
    # What calibrate writes is named by the encoder, so its outputs are locked here, not through `writes`.
    with exclusive_outputs([calibration_path(encoder), *([args.model] if Path(args.model).is_dir() else [])]):
        record = calibrate(encoder, langs=args.langs, root=args.data, progress=not args.quiet)
        path = save_threshold(encoder, record)
        print(f"{args.model}: ratio-margin threshold {record['threshold']:.4f} (saved in {path})")
        if args.ship:
            print(f"shipped with xlsent: {ship_threshold(encoder, record)}")
    return 0
