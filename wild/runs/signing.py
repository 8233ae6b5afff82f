"""Which run lines wild wrote itself: an HMAC over each queued run, keyed by a secret kept
outside `.wild/`, next to the human's approvals.

runs.jsonl is in `.wild/`, where an agent can append. A run line it appends with
`"status": "queued"` would otherwise be started like one of wild's: a command nobody
approved. So every queued line wild writes (a recorded sweep's runs, a rerun's next attempt)
carries `signature`, an HMAC-SHA256 over what the run executes and where (`substance`), and
the supervisor starts only a queued run whose signature checks. The key is
`$XDG_CONFIG_HOME/wild/runs.key` (created on first use, mode 600); a line signed under
another key, or changed after signing, is refused.

A signed line also carries `command`, the sweep's program (`wild.runs.resolve.program`): the
one text a human approves for all the sweep's runs (the command gate's hash).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import types
from pathlib import Path

import orjson

from wild.errors import WildError
from wild.parsers.runs import RunIndex, RunRecord
from wild.paths import approvals_path
from wild.record import replace

KEY_FILE = "runs.key"
SIGNATURE_FIELD = "signature"
COMMAND_FIELD = "command"
SLURM_FIELD = "slurm"  # the sweep's "slurm" object, copied on each run line it queues
_KEY_HEX = 64  # 32 random bytes, as hex


def key_path() -> Path:
    """The signing key's file, beside the approval store (outside every project)."""
    return approvals_path().with_name(KEY_FILE)


def load_key(path: Path | None = None) -> bytes:
    """The signing key, made on first use (published whole by a hard link, so two wild
    processes making it at once agree on one key)."""
    path = path or key_path()
    try:
        text = path.read_bytes().strip()
    except FileNotFoundError:
        text = _create(path)
    if len(text) != _KEY_HEX:
        raise WildError(
            f"{path}: not a wild run-signing key ({_KEY_HEX} hex digits); delete it and "
            "queue the waiting runs again (`wild --rerun ID`)"
        )
    return text


def _create(path: Path) -> bytes:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = os.urandom(_KEY_HEX // 2).hex().encode()
    temp = path.with_name(f".{KEY_FILE}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, key + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temp, path)
    except FileExistsError:  # another process made it first: theirs is the key
        key = path.read_bytes().strip()
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return key


def substance(run: RunRecord) -> bytes:
    """What a signature covers: the run's identity and attempt, what it executes, where, with
    which parameters, resources and batch options, and the program a human approves. Not its
    status: the attempt's claim file (wild.runs.attempts) keeps one attempt from starting
    twice."""
    fields = {
        "id": run.id,
        "sweep": run.sweep,
        "attempt": run.attempt,
        "resolved_instruction": run.resolved_instruction,
        "workdir": run.workdir,
        "backend": run.backend,
        "resources": run.resources.to_json(),
        "params": dict(run.params),
        "command": run.raw.get(COMMAND_FIELD),
        # A batch backend's options (sbatch arguments) shape what runs as much as the command.
        "slurm": run.raw.get(SLURM_FIELD),
    }
    return orjson.dumps(fields, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def signature(key: bytes, run: RunRecord) -> str:
    return hmac.new(key, substance(run), hashlib.sha256).hexdigest()


def sign(key: bytes, run: RunRecord) -> RunRecord:
    """The run with its signature (and no stale one) on its line."""
    signed = {**run.raw, SIGNATURE_FIELD: signature(key, run)}
    return replace(run, raw=types.MappingProxyType(signed))


def written_by_wild(key: bytes, run: RunRecord) -> bool:
    """Whether the run's line carries wild's signature over what it executes now."""
    found = run.raw.get(SIGNATURE_FIELD)
    return isinstance(found, str) and hmac.compare_digest(found, signature(key, run))


def with_command(run: RunRecord, command: str, slurm: object = None) -> RunRecord:
    """The run with its sweep's program and `"slurm"` options on its own line (signed with
    it; a backend then never reads them from the sweep's unsigned line)."""
    fields = {**run.raw, COMMAND_FIELD: command, SLURM_FIELD: slurm}
    return replace(run, raw=types.MappingProxyType(fields))


def command_to_approve(run: RunRecord) -> str:
    """The text the command gate asks about for this run: its sweep's program (one approval
    for every run of the sweep); a line without one asks about its whole instruction."""
    command = run.raw.get(COMMAND_FIELD)
    return command if isinstance(command, str) and command.strip() else run.resolved_instruction


def sweep_programs(index: RunIndex, key: bytes, *, queued_only: bool) -> dict[str, str]:
    """Each sweep's program as the runs wild signed give it (only its queued runs', if asked):
    what `wild --approve <sweep id>` approves. A line wild did not write names none."""
    programs: dict[str, str] = {}
    for run in index.runs.values():
        if (run.status == "queued" or not queued_only) and written_by_wild(key, run):
            programs.setdefault(run.sweep, command_to_approve(run))
    return programs
