"""The one rule for every command wild runs from a file an agent can edit.

Barrier checks, the policy's Notify Command, completion checks and task checks all ask
`may_run`: a command runs when the policy in force trusts commands, or when a human approved
its exact text (its hash is in the approval store outside `.wild/`). "The policy in force" is
the one `wild.policy.trust.hold_policy` gives: a looser human-policy.md than a human set
through the CLI does not count. Pure: the callers read the store and the policy.
"""

from __future__ import annotations

from collections.abc import Callable

from wild.barriers.approval_set import Approvals


def may_run(command: str, *, approval_required: bool, approvals: Approvals) -> bool:
    """Whether `command` may run, given the policy in force and this project's approvals."""
    return not approval_required or approvals.allows(command)


def gate(approvals: Approvals, *, approval_required: bool) -> Callable[[str], bool]:
    """`may_run` for one snapshot of the approvals and the policy: what a run of checks asks."""
    return lambda command: may_run(
        command, approval_required=approval_required, approvals=approvals
    )
