"""The loop's side of the trust rule (`wild.policy.trust`): after each read of the files, a
stricter policy file, or one the human loosened while no agent ran, becomes the record (and
the loop views the files again), and what the file asks but wild holds back (a loosening
made during an agent's run, an unapproved Notify Command) is raised once as an alert for the
human."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from wild.barriers.approval_set import command_hash
from wild.barriers.approvals import UNAPPROVED_TYPE
from wild.barriers.command_gate import may_run
from wild.clock import Clock
from wild.digest import sha256_hex
from wild.errors import WildError
from wild.loop.decide import policy_at
from wild.loop.files import LoopFiles
from wild.loop.model import LoopModel, Moment
from wild.parsers.alert_types import CHECKS_WEAKENED
from wild.parsers.alerts import make_alert, status_update
from wild.paths import WildPaths
from wild.policy.checks_trust import CHECKS_APPROVAL_ID, HeldChecks, weakened_message
from wild.policy.trust import (
    NOTIFY_APPROVAL_ID,
    POLICY_APPROVAL_ID,
    POLICY_LOOSENED_TYPE,
    HeldPolicy,
    loosened_message,
)
from wild.store.alerts_log import append_alert
from wild.workspace import settle_checks, settle_trust
from wild.workspace_view import Workspace

_Held = TypeVar("_Held", HeldPolicy, HeldChecks)


def approval_required(model: LoopModel | None, at: Moment) -> bool:
    """What the barrier checker asks before each pass: the policy in force now, held to the
    recorded trust (approval is required before the loop has read the files)."""
    return model is None or policy_at(model, at).command_approval == "required"


def loosened_key(loosened: tuple[str, ...]) -> str:
    """One key per distinct loosening, so it is alerted once, not once per read."""
    return sha256_hex("\n".join(loosened).encode())


class TrustGuard:
    """Acts on what `hold_policy` found in the loop's latest read of the files."""

    def __init__(self, paths: WildPaths, clock: Clock, out: Callable[[str], None]) -> None:
        self._paths = paths
        self._clock = clock
        self._out = out
        self._raised: set[tuple[str, str]] = set()  # (alert type, key) raised by this loop
        self._store_failed = False
        # The policy and checks documents last judged under the store's lock.
        self._judged: object = None
        self._judged_checks: object = None
        self._closed: set[str] = set()  # alert ids this loop resolved

    def view(self, files: LoopFiles, *, again: bool = False) -> Workspace:
        """The files as one workspace, observed; viewed again when that recorded a trust
        (`again`: `LoopFiles.view`'s, for the first look only)."""
        ws = files.view(self._clock.now(), again=again)
        return files.view(self._clock.now()) if self.observe(ws) else ws

    def observe(self, ws: Workspace) -> bool:
        """Act on `ws`; True when a trust was recorded (the view holds the policy to the old)."""
        held = ws.held
        loosened, recorded = held.loosened, False
        if held.to_record is not None or (loosened and ws.policy_doc is not self._judged):
            # Read the file and the record again under the store's lock: what this view saw
            # may be half of a `wild --update-policy`. A stricter file, or one the human
            # loosened while no agent ran, is recorded there; each version is judged once.
            self._judged = ws.policy_doc
            settled = self._settle(lambda: settle_trust(self._paths, self._clock.now()))
            if settled is not None:
                loosened, recorded = settled.loosened, settled.to_record is not None
        recorded = self._observe_checks(ws) or recorded
        if not loosened:
            self._close(ws, POLICY_LOOSENED_TYPE, f"{self._paths.policy} no longer asks for it")
        else:
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
        return recorded

    def _observe_checks(self, ws: Workspace) -> bool:
        """checks.md as the policy file: the first checks seen, a new check or the human's
        own edit is recorded; a weakening made during an agent's run is raised once."""
        held = ws.held_checks
        if held is None:
            return False
        weakened, recorded = held.weakened, False
        if held.to_record is not None or (weakened and held.file is not self._judged_checks):
            self._judged_checks = held.file
            settled = self._settle(lambda: settle_checks(self._paths))
            if settled is not None:
                weakened, recorded = settled.weakened, settled.to_record is not None
        if not weakened:
            self._close(ws, CHECKS_WEAKENED, f"{self._paths.checks} no longer asks for it")
        else:
            self._raise(
                ws,
                CHECKS_WEAKENED,
                loosened_key(weakened),
                weakened_message(weakened, str(self._paths.checks)),
                {"weakened": list(weakened), "approve": CHECKS_APPROVAL_ID},
            )
        return recorded

    def _close(self, ws: Workspace, kind: str, note: str) -> None:
        """Nothing of `kind` is held back any more (the file was put back, or taken as the
        human's own edit): its open alerts are resolved, so the human is not left waiting on
        them, and a later weakening is raised again."""
        self._raised = {raised for raised in self._raised if raised[0] != kind}
        for alert in ws.open_alerts:
            if alert.type == kind and alert.source == "wild" and alert.id not in self._closed:
                self._closed.add(alert.id)  # this view may not have read the resolution yet
                resolution = {"choice": None, "note": note}
                now = self._clock.now()
                append_alert(
                    self._paths.alerts, status_update(alert, "resolved", now, resolution=resolution)
                )

    def _settle(self, settle: Callable[[], _Held]) -> _Held | None:
        """`settle()`, or None when the store cannot be read or written (what this view holds
        back stays held back)."""
        try:
            return settle()
        except (OSError, WildError) as error:
            if not self._store_failed:
                self._store_failed = True
                self._out(f"⚠️  could not read or update the approval store: {error}")
            return None

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
