"""The alert types wild itself raises that only a human can resolve, named in one place.

An approval, a loosened policy or a weakened completion check is the human's act: the agent
may not approve its own commands, so such an alert is never handed to it. Selection holds
these alerts for the human (`wild.selection.inbox`), the loop announces each once
(`wild.loop.decide`), and `wild --list-work` shows them waiting for the human.
"""

from __future__ import annotations

# A barrier's, check's or the policy's Notify Command waits for `wild --approve ID`.
UNAPPROVED_COMMAND = "unapproved-command"
# human-policy.md was loosened during an agent's run: `wild --approve @policy`.
POLICY_LOOSENED = "policy-loosened"
# checks.md was weakened during an agent's run: `wild --approve @checks`.
CHECKS_WEAKENED = "checks-weakened"
# An approval appeared in the store while an agent ran, not written by wild: it was voided,
# and the human should know an agent tried (`wild.commands.approval_guard`).
UNRECORDED_APPROVAL = "unrecorded-approval"

HUMAN_ONLY: frozenset[str] = frozenset(
    {UNAPPROVED_COMMAND, POLICY_LOOSENED, CHECKS_WEAKENED, UNRECORDED_APPROVAL}
)


def human_only(alert_type: str) -> bool:
    """Whether only a human can resolve an alert of this type (never given to the agent)."""
    return alert_type in HUMAN_ONLY
