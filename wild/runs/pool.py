"""The local backend's slots as decisions: which queued runs fit, and which GPUs each one gets.

Pure: the pool, the queued runs in order and the active runs in; the runs to start now and
their GPU ids out. An active run's GPUs are the `gpu_ids` recorded on its line (so a
restarted loop knows which are taken); one without them (adopted after a crash before its
line was written) holds as many of the wholly free GPUs as it asked for (a fraction: one).

A run may ask for a fraction of a GPU (`resources.gpus` 0.25: four such runs share one, as
in Ray Tune). Fractional runs are packed onto the GPU already shared that they fit best, so
whole GPUs stay free for whole runs; a whole-GPU run only ever gets GPUs no run touches, and
a GPU held whole is never offered to a fraction.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

from wild.parsers.runs import RunRecord
from wild.record import record

GPU_FIELD = "gpu_ids"  # on a run's line: the CUDA_VISIBLE_DEVICES ids the run was given
WHOLE = Fraction(1)


@record
class Pool:
    """What the machine offers: CPU slots and the GPU ids runs may be given."""

    cpus: int
    gpus: tuple[str, ...] = ()


@record
class Free:
    """The CPUs not taken by active runs, and each GPU id (in pool order) with the part of it
    no active run holds (1: untouched, 0: full or held whole)."""

    cpus: int
    shares: tuple[tuple[str, Fraction], ...]

    @property
    def gpus(self) -> tuple[str, ...]:
        """The GPU ids no active run touches: the ones a whole-GPU run may get."""
        return tuple(gpu for gpu, left in self.shares if left == WHOLE)


def gpu_share(gpus: float) -> Fraction:
    """A request as an exact fraction, so ten runs of 0.1 fill one GPU exactly, not 0.9999…."""
    return Fraction(gpus).limit_denominator(1000)


def is_fraction(gpus: float) -> bool:
    """Whether the request is part of one GPU (shared) rather than whole GPUs."""
    return 0 < gpus < 1


def gpu_ids_of(run: RunRecord) -> tuple[str, ...] | None:
    """The GPU ids recorded on the run's line; None when none were recorded."""
    value = run.raw.get(GPU_FIELD)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def free(pool: Pool, active: Sequence[RunRecord]) -> Free:
    """The CPU slots and the parts of each GPU the active runs leave free."""
    used = dict.fromkeys(pool.gpus, Fraction(0))
    anonymous = 0
    for run in active:
        ids = gpu_ids_of(run)
        if ids is None:
            anonymous += math.ceil(run.resources.gpus)
            continue
        held = gpu_share(run.resources.gpus) if is_fraction(run.resources.gpus) else WHOLE
        for gpu in ids:
            if gpu in used:
                used[gpu] += held
    left = {gpu: max(Fraction(0), WHOLE - taken) for gpu, taken in used.items()}
    # An adopted run with no recorded ids holds untouched GPUs, counted from the end.
    for gpu in reversed(pool.gpus):
        if anonymous == 0:
            break
        if left[gpu] == WHOLE:
            left[gpu] = Fraction(0)
            anonymous -= 1
    cpus = pool.cpus - sum(run.resources.cpus for run in active)
    return Free(max(0, cpus), tuple((gpu, left[gpu]) for gpu in pool.gpus))


def pack(shares: Sequence[tuple[str, Fraction]], gpus: float) -> tuple[str, ...] | None:
    """The GPU ids a run asking for `gpus` gets from these free shares; None if it must wait.

    Whole runs get untouched GPUs, first in order. A fraction goes to the shared GPU it fits
    most tightly (best fit keeps GPUs whole for whole runs), else to the first untouched one.
    """
    if gpus <= 0:
        return ()
    if not is_fraction(gpus):
        untouched = [gpu for gpu, left in shares if left == WHOLE]
        count = math.ceil(gpus)
        return tuple(untouched[:count]) if len(untouched) >= count else None
    need = gpu_share(gpus)
    shared = [(left, gpu) for gpu, left in shares if need <= left < WHOLE]
    if shared:
        return (min(shared)[1],)
    untouched = [gpu for gpu, left in shares if left == WHOLE]
    return (untouched[0],) if untouched else None


def take(
    shares: Sequence[tuple[str, Fraction]], given: tuple[str, ...], gpus: float
) -> tuple[tuple[str, Fraction], ...]:
    """The free shares once a run asking for `gpus` holds the GPU ids `given`."""
    held = gpu_share(gpus) if is_fraction(gpus) else WHOLE
    return tuple((gpu, left - held if gpu in given else left) for gpu, left in shares)


def never_fits(pool: Pool, run: RunRecord) -> str | None:
    """Why the run can never start on this pool, or None if it can once slots free up."""
    need = run.resources
    if need.cpus > pool.cpus:
        return (
            f"needs {need.cpus} CPUs but the local pool has {pool.cpus} slots; "
            "raise --run-slots or lower the sweep's resources.cpus"
        )
    if math.ceil(need.gpus) > len(pool.gpus):
        return (
            f"needs {need.gpus} GPUs but the local pool has {len(pool.gpus)} "
            "(CUDA_VISIBLE_DEVICES or nvidia-smi -L); lower resources.gpus or use another backend"
        )
    return None


def plan(
    pool: Pool, queued: Iterable[RunRecord], active: Sequence[RunRecord]
) -> list[tuple[RunRecord, tuple[str, ...]]]:
    """The queued runs to start now, in queue order, with the GPU ids each gets.

    First fit: a run that does not fit now waits and the ones behind it may still start (a
    big run can wait behind many small ones; sweeps are usually uniform). A run that can
    never fit is admitted with no GPUs as soon as the scan reaches it (the scan stops when
    no CPU slot is left), so `submit` refuses it with the reason and it fails instead of
    holding the queue forever.
    """
    left = free(pool, active)
    cpus, shares = left.cpus, left.shares
    chosen: list[tuple[RunRecord, tuple[str, ...]]] = []
    for run in queued:
        if cpus == 0:
            break  # every run needs a CPU slot: the rest wait (and this keeps a step flat)
        if never_fits(pool, run) is not None:
            chosen.append((run, ()))
            continue
        need = run.resources
        if need.cpus > cpus:
            continue
        given = pack(shares, need.gpus)
        if given is None:
            continue
        shares = take(shares, given, need.gpus)
        cpus -= need.cpus
        chosen.append((run, given))
    return chosen
