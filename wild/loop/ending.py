"""When no work is left: whether the loop may end (SPEC §8), pure.

The loop ends when the goal is confirmed and the completion checks allow it, by the mode of
checks.md: `verify` needs the agent's COMPLETE (a planning or checks run) and the checks;
`override` the checks alone; `assist` the agent's COMPLETE alone, the checks informing its
prompt. Checks run again after every agent run, so a verdict never outlives the work it
judged; a failing verdict gives the agent a `checks` run with the goal and what failed.
Each checks run after which they still fail counts as a failed attempt; past the policy's
Repeated Failures rule the loop asks the human and holds that work: it neither ends nor spins.
"""

from __future__ import annotations

from wild.completion.verdict import judge
from wild.loop import work
from wild.loop.judge import failed_attempt
from wild.loop.model import Action, Ask, ChecksFinished, Log, LoopModel, Moment, RunChecks, Say
from wild.loop.work import CHECKS
from wild.policy.model import HumanPolicy
from wild.record import replace


def confirmed(model: LoopModel) -> bool:
    """The last run, a planning or checks run, said COMPLETE with no work left (or planning
    is off)."""
    return not model.options.plan or model.confirmed_at == model.state.iteration


def next_at_end(model: LoopModel, at: Moment) -> tuple[LoopModel, tuple[Action, ...]] | None:
    """With no work left: run the checks, or start the agent on the goal or on the failing
    checks; None when the loop may end (or must plan: the caller's planning step)."""
    doc = model.ws.checks
    if not doc.checks:
        return None
    if model.checks_ran_at != model.state.iteration or model.verdict is None:
        return model, (RunChecks(),)
    waiting = [o.id for o in model.verdict.failing if o.unapproved]
    if waiting and doc.mode != "assist":
        return _ask_approval(model, waiting)
    if model.verdict.holds or doc.mode == "assist":
        return None  # may_end decides: the checks pass, or the agent's word is enough
    return work.start_checks(model, model.verdict, at)


def _ask_approval(model: LoopModel, waiting: list[str]) -> tuple[LoopModel, tuple[Action, ...]]:
    """Commands no human approved: only the human can help, so ask them and hold the checks
    (`wild --approve CHECK` makes the loop run them again)."""
    reason = f"completion check commands await your approval: {', '.join(waiting)}"
    ids = " ".join(waiting)
    body = f"Read them in .wild/checks.md, then run `wild --approve ID` for each ({ids})."
    ask = Ask(CHECKS, reason, body, model.agent_event)
    return model.with_book(model.book.hold(CHECKS, reason)), (ask, Say(f"⏸️  {reason}"))


def may_end(model: LoopModel) -> bool:
    """No work is left and nothing else is needed: the loop ends now."""
    doc = model.ws.checks
    if doc.checks and doc.mode == "override":
        return model.verdict is not None and model.verdict.holds
    return confirmed(model)


def checks_finished(
    model: LoopModel, event: ChecksFinished, policy: HumanPolicy
) -> tuple[LoopModel, tuple[Action, ...]]:
    """Keep the verdict; count a checks run that did not fix them, and escalate as the
    policy says when they keep failing."""
    verdict = judge(model.ws.checks.strategy, event.outcomes)
    model = replace(model, verdict=verdict, checks_ran_at=model.state.iteration)
    failing = [o.id for o in verdict.failing]
    passed = len(verdict.outcomes) - len(failing)
    actions: list[Action] = [
        Log("checks", model.agent_event, {"passed": verdict.holds, "failing": failing}),
        Say(
            f"{'✅' if verdict.holds else '❌'} Completion checks: {passed}/{len(verdict.outcomes)}"
            f" passing ({model.ws.checks.strategy})"
            + (f"; failing: {', '.join(failing)}" if failing else "")
        ),
    ]
    if verdict.holds:
        return model.with_book(model.book.succeeded(CHECKS)), tuple(actions)
    if model.last_work_type != CHECKS:  # not yet the agent's failure to fix them
        return model, tuple(actions)
    body = "Failing: " + ", ".join(failing) + "\nSee .wild/checks.md and `wild --run-checks`."
    book, escalated = failed_attempt(model, CHECKS, body, policy)
    return model.with_book(book), (*actions, *escalated)
