"""``xlsent align --pairs LIST --engine ray`` on one local 2-CPU Ray session: the local engine's bytes, pair by pair,
and a resumed run aligns only the pairs not written."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.align.config import AlignConfig

ray = pytest.importorskip("ray")

WORDS = ["the dog", "the cat", "barks", "runs", "der hund", "bellt", "a", "b"]


def _pairs(folder: Path, count: int) -> list[tuple[Path, Path]]:
    """``count`` document pairs of 30 to 40 lines, the targets with a line merged and one dropped now and then."""
    out = []
    for k in range(count):
        src = [f"{WORDS[(i + k) % 8]} {WORDS[(i * 3) % 8]} {i}" for i in range(30 + 5 * k)]
        tgt = [*src[:5], f"{src[5]} {src[6]}", *src[7:20], *src[21:]]
        paths = folder / f"doc{k}.src.txt", folder / f"doc{k}.tgt.txt"
        for path, lines in zip(paths, (src, tgt), strict=True):
            path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        out.append(paths)
    return out


def _list(folder: Path, pairs: list[tuple[Path, Path]], engine: str) -> Path:
    listing = folder / f"{engine}.tsv"
    listing.write_text("".join(f"{s.name}\t{t.name}\t{engine}-{k}.beads\n" for k, (s, t) in enumerate(pairs)),
                       encoding="utf-8")
    return listing


def test_ray_writes_the_local_engines_bytes_and_resumes(local_ray: None, tmp_path: Path,
                                                       tiny_model_dir: Path) -> None:
    import xlsent.api
    from xlsent.cluster import RayConfig

    pairs = _pairs(tmp_path, 3)
    cfg = AlignConfig(max_beads=4)
    options = {"model": str(tiny_model_dir), "backend": "torch", "config": cfg, "fmt": "tsv", "progress": False}
    xlsent.api.align(pairs=_list(tmp_path, pairs, "local"), **options)
    summary = xlsent.api.align(pairs=_list(tmp_path, pairs, "ray"), engine="ray", ray=RayConfig(), **options)
    assert (summary.documents, summary.skipped) == (3, 0)
    for k in range(3):
        assert (tmp_path / f"ray-{k}.beads").read_bytes() == (tmp_path / f"local-{k}.beads").read_bytes()

    (tmp_path / "ray-1.beads").unlink()  # as a run killed before its second pair was written
    again = xlsent.api.align(pairs=tmp_path / "ray.tsv", engine="ray", ray=RayConfig(), resume=True, **options)
    assert (again.documents, again.skipped) == (1, 2)
    assert (tmp_path / "ray-1.beads").read_bytes() == (tmp_path / "local-1.beads").read_bytes()


def test_ray_needs_a_list_of_pairs(tmp_path: Path) -> None:
    import xlsent.api

    (src, tgt), = _pairs(tmp_path, 1)
    with pytest.raises(ValueError, match="--pairs"):
        xlsent.api.align(src, tgt, str(tmp_path / "out.beads"), engine="ray", progress=False)


def test_the_aligner_actors_warnings_are_logged_on_the_driver(local_ray: None, tmp_path: Path, tiny_model_dir: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """A line longer than the model's window is split into windows with a warning; on Ray it was logged in the
    aligner actor's process only."""
    import logging

    import xlsent.api
    from xlsent.cluster import RayConfig

    long = "".join(f"{'the dog barks ' * 40}{i}\n" for i in range(3))
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(long, encoding="utf-8")
    (tmp_path / "list.tsv").write_text("a.txt\tb.txt\tab.beads\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="xlsent"):
        xlsent.api.align(pairs=tmp_path / "list.tsv", model=str(tiny_model_dir), backend="torch", engine="ray",
                         ray=RayConfig(), progress=False)
    assert "longer than 64 tokens were split into windows and averaged" in caplog.text
