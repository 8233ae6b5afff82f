"""Whose word loosens what runs: the trust a human recorded through the CLI holds back a looser
human-policy.md.

An agent can edit `human-policy.md`, so the file alone may not widen what wild runs without a
human's per-command approval. Two settings do: `Command Approval` (resolved from the Mode when
the line is missing: barrier checks, the Notify Command and, later, completion checks) and the
Mode itself (every mode but interactive lets the agent skip its permission prompts). The trust
last set by a human through the CLI (`wild --update-policy`, `--policy`, `--policy-file`,
`wild --approve @policy`) is kept in the approval store outside `.wild/`; without one, the
default policy's is assumed. The file may be stricter (that applies at once and becomes the
record) but never looser: a looser file is held back until a human approves it.

Pure: the driver reads the store and the file, this module decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from wild.clock import iso, parse_time
from wild.parsers.alert_types import POLICY_LOOSENED
from wild.parsers.policy import CommandApproval, Mode, read_approval, read_mode
from wild.policy.model import DEFAULT_MODE, HumanPolicy, default_policy

# `wild --approve @policy` accepts a looser human-policy.md; `@notify` approves its Notify
# Command (no barrier id has an "@").
POLICY_APPROVAL_ID = "@policy"
NOTIFY_APPROVAL_ID = "@notify"
# The alert that says a looser human-policy.md was held back.
POLICY_LOOSENED_TYPE = POLICY_LOOSENED


@dataclass(frozen=True)
class RecordedTrust:
    """The settings that loosen what runs, as a human last set them through the CLI."""

    mode: Mode
    command_approval: CommandApproval
    expires_at: datetime | None = None  # a timed policy's trust ends with it

    @property
    def skips_permissions(self) -> bool:
        return skips_permissions(self.mode)


DEFAULT_TRUST = RecordedTrust(DEFAULT_MODE, default_policy().command_approval)


def skips_permissions(mode: Mode) -> bool:
    """Whether the agent runs with its permission-skipping flag (every mode but interactive)."""
    return mode != "interactive"


def trust_of(policy: HumanPolicy) -> RecordedTrust:
    """What a policy a human chose through the CLI records."""
    return RecordedTrust(policy.mode, policy.command_approval, policy.expires_at)


def trust_to_json(trust: RecordedTrust) -> dict[str, str | None]:
    return {
        "mode": trust.mode,
        "commandApproval": trust.command_approval,
        "expiresAt": iso(trust.expires_at) if trust.expires_at is not None else None,
    }


def trust_from_json(data: object) -> RecordedTrust | None:
    """The recorded trust, or None (read as the default: fail closed) when it is unreadable."""
    if not isinstance(data, Mapping):
        return None
    mode, approval, expires = data.get("mode"), data.get("commandApproval"), data.get("expiresAt")
    read_m = read_mode(mode) if isinstance(mode, str) else None
    read_a = read_approval(approval) if isinstance(approval, str) else None
    if read_m is None or read_a is None:
        return None
    expires_at = parse_time(expires) if isinstance(expires, str) else None
    if expires is not None and expires_at is None:
        return None  # an expiry we cannot read must not make the trust last for ever
    return RecordedTrust(read_m, read_a, expires_at)


def trust_at(recorded: RecordedTrust | None, now: datetime) -> RecordedTrust:
    """The recorded trust in force at `now`: the default with none, or once it expired."""
    if recorded is None or (recorded.expires_at is not None and now >= recorded.expires_at):
        return DEFAULT_TRUST
    return recorded


@dataclass(frozen=True)
class HeldPolicy:
    """The policy wild acts on, and what the file asked for that was held back."""

    policy: HumanPolicy  # the file's policy with every loosening beyond the record undone
    loosened: tuple[str, ...]  # each loosening held back, in words; empty: the file is in force
    stricter: RecordedTrust | None  # the file is stricter than the record: record this


def hold_policy(policy: HumanPolicy, recorded: RecordedTrust | None, now: datetime) -> HeldPolicy:
    """`policy` (the file's, as in force at `now`) held to the trust a human recorded."""
    base = trust_at(recorded, now)
    loosened: list[str] = []
    held = policy
    if policy.command_approval == "trusted" and base.command_approval == "required":
        loosened.append("Command Approval: trusted (wild keeps required)")
        held = replace(held, command_approval="required")
    if skips_permissions(policy.mode) and not base.skips_permissions:
        loosened.append(
            f"Mode: {policy.mode} (wild keeps interactive: the agent keeps its permission prompts)"
        )
        held = replace(held, mode="interactive")
    tighter = RecordedTrust(
        base.mode if skips_permissions(policy.mode) else policy.mode,
        "required" if policy.command_approval == "required" else base.command_approval,
        base.expires_at,
    )
    return HeldPolicy(held, tuple(loosened), tighter if _stricter(tighter, base) else None)


def _stricter(new: RecordedTrust, old: RecordedTrust) -> bool:
    return (new.command_approval == "required" and old.command_approval == "trusted") or (
        old.skips_permissions and not new.skips_permissions
    )


def loosened_message(loosened: tuple[str, ...], policy_file: str) -> str:
    """The one line that says a loosening was held back and how a human accepts it."""
    return (
        f"{policy_file} was loosened by hand ({'; '.join(loosened)}); wild keeps the stricter "
        f"trust last set with wild --update-policy. If you made this change, run "
        f"`wild --approve {POLICY_APPROVAL_ID}` to accept it"
    )
