"""Whose word weakens the definition of done: checks.md held to the checks a human last
accepted, as `wild.policy.trust` holds human-policy.md.

An agent can edit `checks.md`, so deleting a check, changing what it runs or looks at
(`Type`, `Command`, `File`, `Pattern`), or loosening the file's `Strategy` (all → any) or
`Mode` (to anything but verify) while an agent runs must not let the loop end early: the old
check stands until a human accepts the change with `wild --approve @checks`. The accepted
checks are kept in the approval store outside `.wild/`. A change made while no agent of wild
ran is the human's (`by_human`) and becomes the record as it stands; a new check, a stricter
strategy or mode applies at once and joins the record.

Pure: the driver reads the store, the file and events.log, this module decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from wild.parsers.checks import MODES, STRATEGIES, Check, CheckList, Mode, Strategy
from wild.parsers.lines import Span
from wild.record import record, replace

# `wild --approve @checks` accepts checks.md as it stands (no check id has an "@").
CHECKS_APPROVAL_ID = "@checks"


@record
class CheckTerms:
    """What one check demands; its status, result and timing are not terms."""

    id: str
    type: str
    command: str | None
    file: str | None
    pattern: str | None


@record
class ChecksBaseline:
    """The checks a human last accepted."""

    strategy: Strategy
    mode: Mode
    checks: tuple[CheckTerms, ...]


def terms_of(check: Check) -> CheckTerms:
    return CheckTerms(check.id, check.type, check.command, check.file, check.pattern)


def baseline_of(doc: CheckList) -> ChecksBaseline:
    return ChecksBaseline(doc.strategy, doc.mode, tuple(terms_of(c) for c in doc.checks))


def baseline_to_json(baseline: ChecksBaseline) -> dict[str, object]:
    return {
        "strategy": baseline.strategy,
        "mode": baseline.mode,
        "checks": [
            {"id": t.id, "type": t.type, "command": t.command, "file": t.file, "pattern": t.pattern}
            for t in baseline.checks
        ],
    }


def baseline_from_json(data: object) -> ChecksBaseline | None:
    """The recorded checks, or None when there are none or they are unreadable."""
    if not isinstance(data, Mapping):
        return None
    strategy, mode, checks = data.get("strategy"), data.get("mode"), data.get("checks")
    if strategy not in STRATEGIES or mode not in MODES or not isinstance(checks, list):
        return None
    terms = []
    for raw in checks:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
            return None
        values = [raw.get(k) for k in ("type", "command", "file", "pattern")]
        if not isinstance(values[0], str) or not all(
            v is None or isinstance(v, str) for v in values
        ):
            return None
        terms.append(CheckTerms(raw["id"], values[0], values[1], values[2], values[3]))
    return ChecksBaseline(strategy, mode, tuple(terms))


@record
class HeldChecks:
    """The checks wild judges completion by, and what the file asked for that was held."""

    file: CheckList  # checks.md as it stands
    checks: CheckList  # the file with every weakening beyond the record undone
    weakened: tuple[str, ...]  # each weakening held back, in words; empty: the file is in force
    to_record: ChecksBaseline | None  # the record to keep now; None: it stands


def _stricter_mode(file: Mode, recorded: Mode) -> bool:
    """verify needs both the agent's word and the checks: the strictest."""
    return file in (recorded, "verify")


def _restored(terms: CheckTerms, like: Check | None) -> Check:
    """The recorded check, standing in for the one the file changed or dropped."""
    if like is not None:
        return replace(
            like, type=terms.type, command=terms.command, file=terms.file, pattern=terms.pattern
        )
    return Check(
        id=terms.id,
        status="pending",
        type=terms.type,
        command=terms.command,
        timeout_s=600.0,
        file=terms.file,
        pattern=terms.pattern,
        last_run=None,
        result=None,
        fields=MappingProxyType({}),
        span=Span(0, 0),
    )


def hold_checks(
    doc: CheckList, recorded: ChecksBaseline | None, *, by_human: bool = False
) -> HeldChecks:
    """`doc` (checks.md) held to the checks a human accepted. With none recorded, or with
    `by_human` (its last change was made while no agent ran), the file is taken as it stands."""
    stated = baseline_of(doc)
    if recorded is None or by_human:
        return HeldChecks(doc, doc, (), None if stated == recorded else stated)
    found = {c.id: c for c in doc.checks}
    weakened: list[str] = []
    held: list[Check] = []
    for terms in recorded.checks:
        check = found.get(terms.id)
        if check is None:
            weakened.append(f"check {terms.id} removed")
            held.append(_restored(terms, None))
        elif terms_of(check) != terms:
            weakened.append(f"check {terms.id} changed")
            held.append(_restored(terms, check))
        else:
            held.append(check)
    known = {t.id for t in recorded.checks}
    added = [c for c in doc.checks if c.id not in known]
    strategy, mode = doc.strategy, doc.mode
    if doc.strategy == "any" and recorded.strategy == "all":
        weakened.append("Strategy: any (wild keeps all)")
        strategy = "all"
    if not _stricter_mode(doc.mode, recorded.mode):
        weakened.append(f"Mode: {doc.mode} (wild keeps {recorded.mode})")
        mode = recorded.mode
    checks = (*held, *added)
    record = ChecksBaseline(strategy, mode, tuple(terms_of(c) for c in checks))
    in_force = replace(doc, strategy=strategy, mode=mode, checks=checks) if weakened else doc
    return HeldChecks(doc, in_force, tuple(weakened), None if record == recorded else record)


def weakened_message(weakened: tuple[str, ...], checks_file: str) -> str:
    """The one line that says a weakening was held back and how a human accepts it."""
    return (
        f"{checks_file} was weakened during an agent's run ({'; '.join(weakened)}); wild keeps "
        f"the checks a human last accepted. If you made this change, run "
        f"`wild --approve {CHECKS_APPROVAL_ID}` to accept it"
    )
