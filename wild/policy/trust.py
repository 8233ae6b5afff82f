"""Whose word loosens what runs: the trust a human recorded holds back a human-policy.md that
an agent loosened.

An agent can edit `human-policy.md`, so the file alone may not widen what wild runs without a
human's per-command approval. Two settings do: `Command Approval` (resolved from the Mode when
the line is missing: barrier checks, the Notify Command and, later, completion checks) and the
Mode itself (every mode but interactive lets the agent skip its permission prompts). The trust
last set by a human is kept in the approval store outside `.wild/`; without one, the default
policy's is assumed. A human sets it through the CLI (`wild --update-policy`, `--policy`,
`--policy-file`, `wild --approve @policy`) or in their editor: a file whose last change was
made while no agent of wild ran (`made_during_agent_run`, judged from events.log and the
file's time) is the human's, and becomes the record as it stands (a folder's first loop
included). The file may be stricter (that applies at once and becomes the record) but a
loosening made during an agent's run is held back until a human approves it.

Pure: the driver reads the store, the file and events.log, this module decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from wild.clock import iso, parse_time
from wild.parsers.alert_types import POLICY_LOOSENED
from wild.parsers.policy import CommandApproval, Mode, read_approval, read_mode
from wild.policy.model import DEFAULT_MODE, HumanPolicy, default_policy
from wild.record import record, replace

if TYPE_CHECKING:  # events.log is read only when a change to the policy must be dated
    from wild.parsers.events_log import AgentSpan

# `wild --approve @policy` accepts a looser human-policy.md; `@notify` approves its Notify
# Command (no barrier id has an "@").
POLICY_APPROVAL_ID = "@policy"
NOTIFY_APPROVAL_ID = "@notify"
# The alert that says a looser human-policy.md was held back.
POLICY_LOOSENED_TYPE = POLICY_LOOSENED
# How near an agent's recorded run a change still counts as the agent's: a file's time comes
# from the kernel's coarse clock and a run's from wild's, taken just before and after it.
DATING_SLACK = timedelta(seconds=2)


@record
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


@record
class HeldPolicy:
    """The policy wild acts on, and what the file asked for that was held back."""

    policy: HumanPolicy  # the file's policy with every loosening beyond the record undone
    loosened: tuple[str, ...]  # each loosening held back, in words; empty: the file is in force
    # The trust to record now: the file's when it is stricter than the record, or when it is
    # looser but the human's own edit (`by_human`); None: the record stands.
    to_record: RecordedTrust | None


def made_during_agent_run(changed_at: datetime | None, spans: Iterable[AgentSpan]) -> bool:
    """Whether a change made at `changed_at` (a file's modification time) is an agent's: it
    falls inside one of wild's agent runs (`DATING_SLACK` either side; a run with no recorded
    end goes on). No time known (the file is missing): nobody's change to hold."""
    if changed_at is None:
        return False
    return any(
        span.start - DATING_SLACK <= changed_at
        and (span.end is None or changed_at <= span.end + DATING_SLACK)
        for span in spans
    )


def hold_policy(
    policy: HumanPolicy, recorded: RecordedTrust | None, now: datetime, *, by_human: bool = False
) -> HeldPolicy:
    """`policy` (the file's, as in force at `now`) held to the trust a human recorded. With
    `by_human` (its last change was made while no agent ran), a looser file is taken as it
    stands: the human's editor sets the policy as well as the CLI does."""
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
    if loosened and by_human:
        return HeldPolicy(policy, (), trust_of(policy))
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
        f"{policy_file} was loosened during an agent's run ({'; '.join(loosened)}); wild keeps "
        f"the stricter trust a human last set. If you made this change, run "
        f"`wild --approve {POLICY_APPROVAL_ID}` to accept it"
    )
