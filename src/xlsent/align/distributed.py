"""Many document pairs on Ray (``xlsent align --pairs LIST --engine ray``): one aligner actor per task slot loads the
encoder once and aligns whole pairs (:func:`~xlsent.align.job.align_pair`, the local engine's function, so a pair's
output is the same bytes); the driver writes each pair's output as it arrives (:func:`~xlsent.align.job.write_pair`),
so a killed run keeps the pairs it finished and ``--resume`` aligns the rest.

The workers read the documents themselves: on a cluster of several machines, the paths of the list must name the
same files on every node (a shared file system). Standard input and pipes are copied to a temporary file on the
driver first, which only workers on the driver's machine can read: use files on a cluster.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from xlsent.align.job import DocPair, PairOutput, PairOutputs, PairRoute, align_pair
from xlsent.cluster import RayConfig, Warnings, captured_warnings, log_again, ray_session, task_cpus
from xlsent.threads import limit_threads

log = logging.getLogger(__name__)


class _Aligner:
    """Ray actor: loads the encoder once and aligns one document pair per call within its CPU reservation."""

    def __init__(self, model: str, backend: str) -> None:
        from xlsent.encoders.registry import load_encoder

        self.encoder = load_encoder(model, backend)

    def align(self, index: int, pair: DocPair, route: PairRoute) -> tuple[int, PairOutput, Warnings]:
        """The pair's output, and the warnings logged while it was made (the driver logs them, as a local run)."""
        with limit_threads(task_cpus()), captured_warnings() as warnings:
            return index, align_pair(pair, self.encoder.encode, route), warnings


def ray_outputs(model: str, route: PairRoute, cfg: RayConfig | None = None) -> PairOutputs:
    """The :data:`~xlsent.align.job.PairOutputs` of Ray: Ray joined at ``cfg.address`` or started here for the run,
    as many aligner actors as task slots (``cpus_per_task`` CPUs each; at most one per pair), each loading ``model``
    on ``cfg.backend`` (``auto``: resolved on the actor's CPU) and aligning one pair at a time, the next as it
    finishes."""
    cfg = cfg or RayConfig()

    def outputs(pairs: Sequence[DocPair]) -> Iterator[tuple[DocPair, PairOutput]]:
        if not pairs:
            return
        import ray
        from ray.util import ActorPool

        with ray_session(cfg) as cpus:
            slots = max(1, min(len(pairs), cpus // cfg.cpus_per_task))
            actor = ray.remote(num_cpus=cfg.cpus_per_task)(_Aligner)
            actors: list[Any] = [actor.remote(model, cfg.backend) for _ in range(slots)]
            log.info("aligning %d document pair(s) on Ray: %d aligner actor(s), %d CPUs", len(pairs), slots, cpus)
            try:
                pool = ActorPool(actors)

                def submit(handle: Any, index: int) -> Any:
                    return handle.align.remote(index, pairs[index], route)

                for index, output, warnings in pool.map_unordered(submit, list(range(len(pairs)))):
                    log_again(warnings)
                    yield pairs[index], output
            finally:
                for handle in actors:
                    ray.kill(handle)

    return outputs
