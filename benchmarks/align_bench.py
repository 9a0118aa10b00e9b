"""Document alignment speed (``xlsent align``): seconds to align document pairs of 1k, 10k and 100k lines a side
with the shipped settings, embedding included, against embedding their lines once (the cost of the adaptive
spans), and the alignment's own seconds on planted embeddings at sizes too large to embed here.

The documents are NTREX-128 English and German news lines, repeated to the size asked (numbered so no two lines
are alike) and perturbed as the alignment dev sets are (lines merged, split, dropped, inserted). Sizes above
``--embed-max`` lines are aligned on planted embeddings (a target's span = its source's plus noise) so the
programme can be timed at sizes whose embedding would take hours on a small machine; the row says which.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_record import (  # noqa: E402
    DEFAULT_OUT,
    OUT_HELP,
    BenchRecord,
    BenchRow,
    load_model,
    start_record,
    timed,
)

from xlsent.arg_types import non_negative, positive_int  # noqa: E402

if TYPE_CHECKING:
    from xlsent.encoders.base import Encoder

PACKAGES = ("numpy", "numba", "torch")


def documents(lines: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``lines`` parallel news lines a side (NTREX eng/deu repeated and numbered), perturbed."""
    from xlsent.data.doc_perturb import Perturbation, perturb
    from xlsent.data.parallel import load_ntrex

    en, de = load_ntrex("eng", "deu")
    src = [f"{en[i % len(en)]} ({i // len(en)})" for i in range(lines)]
    tgt = [f"{de[i % len(de)]} ({i // len(de)})" for i in range(lines)]
    return perturb(src, tgt, en[:100], de[:100], Perturbation(), seed)[:2]


def planted(n: int, m: int, overlaps: int, dim: int = 384, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Span embeddings of ``n`` and ``m`` lines where target span ``s`` is source span ``s * n // m`` plus noise."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((overlaps, n, dim)).astype(np.float32)
    y = x[:, (np.arange(m) * n // m)] + 0.7 * rng.standard_normal((overlaps, m, dim)).astype(np.float32)
    for v in (x, y):
        v /= np.linalg.norm(v, axis=2, keepdims=True)
    return x, y


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def case_row(lines: int, embed_max: int, model: str, encoder: Encoder | None, repeats: int) -> BenchRow:
    """Align one document pair of ``lines`` lines a side as ``xlsent align`` does (adaptive spans): embedding
    included, with ``encoder`` (``model`` loaded), against embedding the lines of both documents once, alternating,
    best of ``repeats``; above ``embed_max`` lines on planted embeddings, the alignment's own seconds alone."""
    from xlsent.align.aligner import Doc, align_documents, array_source, search_band, text_source
    from xlsent.align.config import AlignConfig

    cfg = AlignConfig()
    src_lines, tgt_lines = documents(lines)
    src, tgt = Doc.of(src_lines, cfg.overlaps), Doc.of(tgt_lines, cfg.overlaps)
    embedded = lines <= embed_max
    encoder = encoder if embedded else None
    embed_s = [0.0]

    def embed(texts: Sequence[str], lang: str | None) -> np.ndarray:
        start = time.perf_counter()
        assert encoder is not None
        out = encoder.encode(texts, lang)
        embed_s[0] += time.perf_counter() - start
        return out

    lines_s, align_s, align_embed_s = [], [], []
    for _ in range(repeats if embedded else 1):
        if embedded:
            embed_s[0] = 0.0
            embed(src.texts, "en"), embed(tgt.texts, "de")
            lines_s.append(embed_s[0])
            embed_s[0] = 0.0
            sources = text_source(embed, src, "en"), text_source(embed, tgt, "de")
        else:
            x, y = planted(len(src.ids), len(tgt.ids), cfg.overlaps)
            sources = array_source(x), array_source(y)
        start = time.perf_counter()
        beads, count = align_documents(src, tgt, *sources, cfg)
        align_s.append(time.perf_counter() - start)
        align_embed_s.append(embed_s[0])
    best = int(np.argmin(align_s))
    ours, dp_s = align_s[best], align_s[best] - align_embed_s[best]
    cells = None if embedded else search_band(x[0], y[0], cfg).cells
    baseline = min(lines_s) if lines_s else None
    print(f"  {lines} lines: align {ours:.2f}s (programme {dp_s:.2f}s), lines once "
          f"{baseline if baseline is not None else 'not run'}", flush=True)
    case = (f"align {lines} x {lines} lines, embedding included" if embedded else
            f"align {lines} x {lines} lines: pooled first path, spans, dynamic programme (planted embeddings)")
    details = {"source lines": len(src_lines), "target lines": len(tgt_lines),
               "multi-line spans embedded": count.embedded, "multi-line spans": count.possible,
               "span characters skipped %": round(100 * count.skipped, 1),
               "programme s (alignment less embedding)": round(dp_s, 3), "peak RSS GiB": round(peak_rss_gib(), 2)}
    if cells is not None:
        details["band cells"] = cells
    return BenchRow(case, "s", round(ours, 3), None if baseline is None else round(baseline, 2),
                    f"embedding the lines of both documents once ({model})" if embedded else "",
                    checks={"every line in one bead": sum(len(b.src) for b in beads) == len(src_lines)
                            and sum(len(b.tgt) for b in beads) == len(tgt_lines)},
                    details=details, **(timed(encoder) if encoder is not None else {}))


def command_row(model: str, encoder: Encoder, repeats: int, workdir: Path) -> BenchRow | None:
    """``xlsent align`` of the Text+Berg de-fr dev document pair against ``xlsent embed`` of its two documents, as
    commands (model loads included, as issue 59 times them), alternating, best of ``repeats``, the row naming
    ``encoder`` (``model`` loaded); None without the data."""
    import subprocess

    from xlsent.data.align_sets import load_textberg

    try:
        data = load_textberg()
    except FileNotFoundError as exc:
        print(f"  Text+Berg dev not found ({exc}): its row is left out", flush=True)
        return None
    de, fr = data.files[0], data.files[1]
    xlsent = str(Path(sys.executable).with_name("xlsent"))
    commands = {"embed": [[xlsent, "embed", str(de), "-o", str(workdir / "de.npy"), "--lang", "de", "-q",
                           "--model", model],
                          [xlsent, "embed", str(fr), "-o", str(workdir / "fr.npy"), "--lang", "fr", "-q",
                           "--model", model]],
                "align": [[xlsent, "align", str(de), str(fr), "-o", str(workdir / "de-fr.beads"), "--src-lang",
                           "de", "--tgt-lang", "fr", "-q", "--model", model]]}
    seconds: dict[str, list[float]] = {"embed": [], "align": []}
    for _ in range(repeats):
        for name, runs in commands.items():
            start = time.perf_counter()
            for command in runs:
                subprocess.run(command, check=True, capture_output=True)
            seconds[name].append(time.perf_counter() - start)
    ours, baseline = min(seconds["align"]), min(seconds["embed"])
    beads = (workdir / "de-fr.beads").read_text(encoding="utf-8").splitlines()
    print(f"  Text+Berg dev as commands: align {ours:.1f}s, embed both documents {baseline:.1f}s", flush=True)
    return BenchRow("xlsent align, Text+Berg de-fr dev document pair (command, model load included)", "s",
                    round(ours, 2), round(baseline, 2),
                    f"xlsent embed of both documents, two commands, model loads included ({model})",
                    checks={"beads written": len(beads) > 0},
                    details={"source lines": len(data.src), "target lines": len(data.tgt), "beads": len(beads)},
                    **timed(encoder))


def build_parser() -> argparse.ArgumentParser:
    """The bench's options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=positive_int, nargs="+", default=[1000, 10_000, 100_000],
                        help="lines a side of each case (default 1000 10000 100000)")
    parser.add_argument("--embed-max", type=non_negative(int), default=1000,
                        help="embed documents up to this many lines; larger ones use planted embeddings (default "
                        "1000; 0: every size on planted embeddings)")
    parser.add_argument("--model", default="me5-small", help="encoder (default me5-small)")
    parser.add_argument("--repeats", type=positive_int, default=2,
                        help="rounds of embedding the lines once and aligning, alternating; the best of each counts "
                        "(default 2)")
    parser.add_argument("--no-textberg", dest="textberg", action="store_false",
                        help="leave out the Text+Berg dev pair timed as commands (xlsent align against xlsent embed "
                        "of both documents, model loads included)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=OUT_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    encoder = (load_model(parser, args.model, "auto") if args.textberg or min(args.sizes) <= args.embed_max
               else None)
    record: BenchRecord = start_record("align", "Document alignment: the dynamic programme against embedding",
                                       __file__, argv, args, PACKAGES)
    from xlsent.align.aligner import align_texts

    align_texts(["warm"], ["up"], lambda t, lang: np.ones((len(t), 4), dtype=np.float32) / 2)  # numba compiles
    record.rows += [case_row(n, args.embed_max, args.model, encoder, args.repeats) for n in args.sizes]
    if encoder is not None and args.textberg:
        with tempfile.TemporaryDirectory() as workdir:
            row = command_row(args.model, encoder, args.repeats, Path(workdir))
        record.rows += [row] if row is not None else []
    record.notes += ["ours = seconds of xlsent align's alignment with its shipped settings (adaptive spans: the lines "
                     "embedded once, a first path with spans pooled from them, the spans embedded where it is "
                     "unsure, the dynamic programme with its band search); baseline = embedding the lines of both "
                     "documents once, in the same run, alternating: the ratio is the alignment's cost in units of "
                     "one embedding of the documents (issue 59's bar: at most 3); the model's load is in neither",
                     "planted rows: the span embeddings are given (a target's span = its source's plus noise), so "
                     "they time the alignment's own work at sizes whose embedding would take hours on a small "
                     "machine; span characters skipped: the share of the multi-line spans' characters not embedded"]
    print(f"wrote {record.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
