"""The local backend's slots as decisions: which queued runs fit, and which GPUs each one gets.

Pure: the pool, the queued runs in order and the active runs in; the runs to start now and
their GPU ids out. An active run's GPUs are the `gpu_ids` recorded on its line (so a
restarted loop knows which are taken); one without them (adopted after a crash before its
line was written) holds as many of the free GPUs as it asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wild.parsers.runs import RunRecord

GPU_FIELD = "gpu_ids"  # on a run's line: the CUDA_VISIBLE_DEVICES ids the run was given


@dataclass(frozen=True)
class Pool:
    """What the machine offers: CPU slots and the GPU ids runs may be given."""

    cpus: int
    gpus: tuple[str, ...] = ()


@dataclass(frozen=True)
class Free:
    """The CPUs and GPU ids not taken by active runs."""

    cpus: int
    gpus: tuple[str, ...]


def gpu_ids_of(run: RunRecord) -> tuple[str, ...] | None:
    """The GPU ids recorded on the run's line; None when none were recorded."""
    value = run.raw.get(GPU_FIELD)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def free(pool: Pool, active: Sequence[RunRecord]) -> Free:
    """The CPU slots and GPU ids the active runs leave free."""
    taken: set[str] = set()
    anonymous = 0
    for run in active:
        ids = gpu_ids_of(run)
        if ids is None:
            anonymous += run.resources.gpus
        else:
            taken.update(ids)
    gpus = tuple(gpu for gpu in pool.gpus if gpu not in taken)
    gpus = gpus[: max(0, len(gpus) - anonymous)]
    cpus = pool.cpus - sum(run.resources.cpus for run in active)
    return Free(max(0, cpus), gpus)


def never_fits(pool: Pool, run: RunRecord) -> str | None:
    """Why the run can never start on this pool, or None if it can once slots free up."""
    need = run.resources
    if need.cpus > pool.cpus:
        return (
            f"needs {need.cpus} CPUs but the local pool has {pool.cpus} slots; "
            "raise --run-slots or lower the sweep's resources.cpus"
        )
    if need.gpus > len(pool.gpus):
        return (
            f"needs {need.gpus} GPUs but the local pool has {len(pool.gpus)} "
            "(CUDA_VISIBLE_DEVICES or nvidia-smi -L); lower resources.gpus or use another backend"
        )
    return None


def plan(
    pool: Pool, queued: Sequence[RunRecord], active: Sequence[RunRecord]
) -> list[tuple[RunRecord, tuple[str, ...]]]:
    """The queued runs to start now, in queue order, with the GPU ids each gets.

    First fit: a run that does not fit now waits and the ones behind it may still start (a
    big run can wait behind many small ones; sweeps are usually uniform). A run that can
    never fit is admitted with no GPUs as soon as the scan reaches it (the scan stops when
    no CPU slot is left), so `submit` refuses it with the reason and it fails instead of
    holding the queue forever.
    """
    left = free(pool, active)
    cpus, gpus = left.cpus, list(left.gpus)
    chosen: list[tuple[RunRecord, tuple[str, ...]]] = []
    for run in queued:
        if cpus == 0:
            break  # every run needs a CPU slot: the rest wait (and this keeps a step flat)
        if never_fits(pool, run) is not None:
            chosen.append((run, ()))
            continue
        need = run.resources
        if need.cpus <= cpus and need.gpus <= len(gpus):
            given = tuple(gpus[: need.gpus])
            del gpus[: need.gpus]
            cpus -= need.cpus
            chosen.append((run, given))
    return chosen
