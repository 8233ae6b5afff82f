"""The loop's side of the trust rule (`wild.policy.trust`): after each read of the files, a
stricter policy file becomes the record, and what the file asks but wild holds back (a looser
policy, an unapproved Notify Command) is raised once as an alert for the human."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from wild.barriers.approvals import UNAPPROVED_TYPE, command_hash
from wild.barriers.command_gate import may_run
from wild.clock import Clock
from wild.errors import WildError
from wild.loop.decide import policy_at
from wild.loop.model import LoopModel, Moment
from wild.parsers.alerts import make_alert
from wild.paths import WildPaths
from wild.policy.trust import (
    NOTIFY_APPROVAL_ID,
    POLICY_APPROVAL_ID,
    POLICY_LOOSENED_TYPE,
    loosened_message,
)
from wild.store.alerts_log import append_alert
from wild.workspace import Workspace, settle_trust


def approval_required(model: LoopModel | None, at: Moment) -> bool:
    """What the barrier checker asks before each pass: the policy in force now, held to the
    recorded trust (approval is required before the loop has read the files)."""
    return model is None or policy_at(model, at).command_approval == "required"


def loosened_key(loosened: tuple[str, ...]) -> str:
    """One key per distinct loosening, so it is alerted once, not once per read."""
    return hashlib.sha256("\n".join(loosened).encode()).hexdigest()


class TrustGuard:
    """Acts on what `hold_policy` found in the loop's latest read of the files."""

    def __init__(self, paths: WildPaths, clock: Clock, out: Callable[[str], None]) -> None:
        self._paths = paths
        self._clock = clock
        self._out = out
        self._raised: set[tuple[str, str]] = set()  # (alert type, key) raised by this loop
        self._store_failed = False

    def observe(self, ws: Workspace) -> None:
        held = ws.held
        if held is None:
            return
        loosened = held.loosened
        if held.stricter is not None or (loosened and not self._known(loosened)):
            # Read the file and the record again under the store's lock: what this view saw
            # may be half of a `wild --update-policy`, and a stricter file is recorded there.
            loosened = self._settle(loosened)
        if loosened:
            self._raise(
                ws,
                POLICY_LOOSENED_TYPE,
                loosened_key(loosened),
                loosened_message(loosened, str(self._paths.policy)),
                {"loosened": list(loosened), "approve": POLICY_APPROVAL_ID},
            )
        command = ws.policy.notify_command
        required = ws.policy.command_approval == "required"
        if command and not may_run(command, approval_required=required, approvals=ws.approvals):
            self._raise(
                ws,
                UNAPPROVED_TYPE,
                command_hash(command),
                f"The policy's Notify Command is not approved, so it is not run; read it in "
                f"{self._paths.policy} and run `wild --approve {NOTIFY_APPROVAL_ID}`",
                {"barrier": NOTIFY_APPROVAL_ID, "command": command},
            )

    def _known(self, loosened: tuple[str, ...]) -> bool:
        return (POLICY_LOOSENED_TYPE, loosened_key(loosened)) in self._raised

    def _settle(self, seen: tuple[str, ...]) -> tuple[str, ...]:
        try:
            return settle_trust(self._paths, self._clock.now()).loosened
        except (OSError, WildError) as error:  # what this view holds back stays held back
            if not self._store_failed:
                self._store_failed = True
                self._out(f"⚠️  could not read or update the approval store: {error}")
            return seen

    def _raise(
        self, ws: Workspace, kind: str, key: str, description: str, context: dict[str, object]
    ) -> None:
        if (kind, key) in self._raised:
            return
        self._raised.add((kind, key))
        key_field = "commandHash" if kind == UNAPPROVED_TYPE else "key"
        if any(a.type == kind and a.context.get(key_field) == key for a in ws.open_alerts):
            return  # raised before (by an earlier loop) and still open
        record = make_alert(
            now=self._clock.now(),
            severity="warning",
            source="wild",
            type=kind,
            description=description,
            context={**context, key_field: key},
        )
        append_alert(self._paths.alerts, record)
