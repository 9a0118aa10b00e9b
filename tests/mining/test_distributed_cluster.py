"""The Ray engine on a local multi-node cluster (two nodes of one CPU each, in this machine) writes exactly the
single-process pipeline's output."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from xlsent.data.text_input import InputSpec
from xlsent.mining.config import MineConfig
from xlsent.testing import mine_on_ray

ray = pytest.importorskip("ray")


def test_local_ray_is_started_beside_a_running_cluster_not_joined() -> None:
    # A cluster on this machine writes Ray's "current cluster" address (as `ray start` does); ray.init() with CPUs
    # and no address joined it and failed ("num_cpus ... must not be provided"): the suite's flake under xdist.
    from ray.cluster_utils import Cluster

    from xlsent.cluster import RayConfig, ray_session

    assert not ray.is_initialized()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        with ray_session(RayConfig(num_cpus=2)) as cpus:
            assert cpus == 2
        assert not ray.is_initialized()
    finally:
        cluster.shutdown()


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[None]:
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        yield
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_two_node_cluster_output_equals_single_process(
        two_nodes: None, tmp_path: Path, tiny_model_dir: Path, distinct_lines: tuple[list[str], list[str]],
        ray_chunk_rows: int, write_corpus: Callable[[Path, list[str], list[str]], tuple[Path, Path]],
        single_process: Callable[[Path, Path, Path, MineConfig], bytes]) -> None:
    from xlsent.mining.distributed import RayConfig

    assert len([node for node in ray.nodes() if node["Alive"]]) == 2
    src_lines, tgt_lines = distinct_lines
    src, tgt = write_corpus(tmp_path, src_lines + src_lines[5:9], tgt_lines)
    cfg = MineConfig(k=3, shard_rows=10, with_ids=True)
    out = tmp_path / "pairs.tsv"
    summary = mine_on_ray(InputSpec(src), InputSpec(tgt), out, str(tiny_model_dir), cfg,
                             RayConfig(chunk_rows=ray_chunk_rows), progress=False)
    assert summary.src_distinct == 40
    assert out.read_bytes() == single_process(src, tgt, tmp_path / "single.tsv", cfg)
