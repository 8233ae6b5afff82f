"""What `wild --sweep` reads: a sweep file (`-`: stdin) in wild's JSON or YAML or as a W&B
sweep, or a Hydra multirun command line (`wild --sweep -- python train.py -m lr=0.1,0.01`);
validated into one `SweepSpec`, or refused listing every problem (nothing recorded)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from wild.errors import UsageError
from wild.parsers.hydra_multirun import from_hydra
from wild.parsers.sweep_formats import SweepFile, parse_sweep_file
from wild.parsers.sweeps import SweepSpec, validate_sweep
from wild.paths import WildPaths
from wild.store.files import decode

COMMAND = "--"  # `wild --sweep -- CMD…`: the sweep is the command line after it


def _source_text(source: str, stdin: TextIO) -> str:
    if source == "-":
        return stdin.read()
    try:
        # Not `read_text`: a missing state file reads as "", a missing sweep file is an error.
        return decode(Path(source).read_bytes())
    except FileNotFoundError:
        raise UsageError(
            f"--sweep {source}: no such file; give a sweep file (JSON, YAML or W&B) or -"
        ) from None


def refused(source: str, errors: Sequence[str]) -> UsageError:
    shown = {"-": "standard input", COMMAND: "the command line"}.get(source, source)
    listed = "\n".join(f"  - {error}" for error in errors)
    return UsageError(f"the sweep in {shown} launched nothing; fix these and run again:\n{listed}")


def _program_problem(paths: WildPaths, parsed: SweepFile) -> str | None:
    """A W&B `program` is a file reference, as a skill's target: it must exist."""
    if parsed.program is None:
        return None
    path = paths.project / parsed.spec.workdir / parsed.program
    if path.is_file():
        return None
    return f"W&B program {parsed.program!r}: no file {path}; name a file of the project"


def read_sweep(
    paths: WildPaths, source: str, stdin: TextIO, command: Sequence[str] | None = None
) -> SweepSpec:
    """The sweep `source` gives (with `--`: the Hydra `command`), or a usage error listing
    every problem."""
    if source == COMMAND:
        data = from_hydra(command or ())
        spec = data if isinstance(data, list) else validate_sweep(data)
        if isinstance(spec, list):
            raise refused(source, spec)
        return spec
    parsed = parse_sweep_file(_source_text(source, stdin), python=sys.executable)
    if isinstance(parsed, list):
        raise refused(source, parsed)
    problem = _program_problem(paths, parsed)
    if problem is not None:
        raise refused(source, [problem])
    return parsed.spec
