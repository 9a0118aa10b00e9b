"""Write LASER's training corpus (:mod:`xlsent.methods.laser.data`) as files, from the command line: one file per
pair and side (line i translates line i) and the counts per pair and source in ``counts.json``.

    python -m xlsent.methods.laser.corpus --config src/xlsent/configs/laser-small.toml --out laser-corpus
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Sequence
from pathlib import Path

from xlsent.methods.laser import METHOD
from xlsent.methods.laser.config import LaserConfig
from xlsent.methods.laser.data import build_corpus, corpus_counts, write_corpus


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", action="append", default=[], help="TOML layer over configs/laser.toml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    parser.add_argument("--out", required=True, help="folder for the corpus files and counts.json")
    parser.add_argument("--data", help="benchmark data folder (default: $XLSENT_DATA or ../shared/data)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    cfg = METHOD.config(args.config, args.set)
    assert isinstance(cfg, LaserConfig)
    corpus = build_corpus(cfg.languages, cfg.targets, args.data, max_pairs=cfg.max_pairs, seed=cfg.seed,
                          dev_held_out=cfg.dev_mining)
    path = write_corpus(corpus, Path(args.out))
    print(json.dumps({"out": str(path), "pairs": corpus_counts(corpus)["pairs"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
