"""Which run backend a name means: the built-in `local` and `slurm`, imported here (so the
import contracts see them: backend.py, the interface they implement, imports neither), and
a site's own among the `wild.run_backends` entry points, so a site adds PBS, LSF or
Kubernetes without forking wild: `[project.entry-points."wild.run_backends"]
pbs = "site_wild.pbs:PbsBackend"`. A built-in name is not taken over by a plug-in.
"""

from __future__ import annotations

from collections.abc import Callable

from wild.errors import WildError
from wild.runs.backend import BackendContext, RunBackend

ENTRY_POINT_GROUP = "wild.run_backends"
BUILT_IN = ("local", "slurm")


def _built_in(name: str) -> Callable[[BackendContext], RunBackend]:
    # Imported when a run first names it: a loop that starts no run loads no backend.
    if name == "local":
        from wild.runs.local import LocalBackend  # noqa: PLC0415

        return LocalBackend
    from wild.runs.slurm import SlurmBackend  # noqa: PLC0415

    return SlurmBackend


def load_backend(name: str, context: BackendContext) -> RunBackend:
    """The backend registered under `name`; WildError naming the ones that exist."""
    if name in BUILT_IN:
        return _built_in(name)(context)
    # Imported here: importlib.metadata brings email and zipfile (~15 ms), which a loop that
    # starts no run must not pay before its first agent starts.
    from importlib.metadata import entry_points  # noqa: PLC0415

    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if name not in found:
        known = ", ".join(sorted({*BUILT_IN, *found}))
        raise WildError(
            f'no run backend "{name}" (installed: {known}); pick one of them, or install '
            f'the package that registers "{name}" under the {ENTRY_POINT_GROUP} entry points'
        )
    factory = found[name].load()
    backend: RunBackend = factory(context)
    return backend
