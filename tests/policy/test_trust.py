"""The trust rule, pure: a policy file is held to the trust a human recorded through the CLI."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.events_log import AgentSpan, agent_spans
from wild.parsers.policy import APPROVALS, MODES
from wild.policy.model import MODE_PRESETS
from wild.policy.trust import (
    DATING_SLACK,
    DEFAULT_TRUST,
    RecordedTrust,
    hold_policy,
    made_during_agent_run,
    skips_permissions,
    trust_at,
    trust_from_json,
    trust_of,
    trust_to_json,
)

T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)
records = st.builds(
    RecordedTrust,
    st.sampled_from(MODES),
    st.sampled_from(APPROVALS),
    st.one_of(st.none(), st.integers(-3, 3).map(lambda h: T0 + timedelta(hours=h))),
)


@given(
    mode=st.sampled_from(MODES),
    approval=st.sampled_from(APPROVALS),
    recorded=st.one_of(st.none(), records),
)
def test_the_held_policy_is_never_looser_than_the_file_or_the_record(
    mode: str, approval: str, recorded: RecordedTrust | None
) -> None:
    policy = replace(MODE_PRESETS[mode], command_approval=approval)  # type: ignore[arg-type]
    held = hold_policy(policy, recorded, T0)
    base = trust_at(recorded, T0)
    trusted = approval == "trusted" and base.command_approval == "trusted"
    assert (held.policy.command_approval == "trusted") == trusted
    skips = skips_permissions(policy.mode) and base.skips_permissions
    assert skips_permissions(held.policy.mode) == skips
    # Held back exactly when something was loosened; nothing else of the file changes.
    assert (held.policy == policy) == (held.loosened == ())
    assert replace(held.policy, mode=policy.mode, command_approval=approval) == policy  # type: ignore[arg-type]
    # A stricter file becomes the record; recording it changes nothing that runs now.
    if held.to_record is not None:
        again = hold_policy(policy, held.to_record, T0)
        assert (again.policy, again.to_record) == (held.policy, None)


def test_no_record_means_the_default_policy_and_an_expired_one_too() -> None:
    trusted = RecordedTrust("autonomous", "trusted", T0 + timedelta(hours=1))
    assert trust_at(None, T0) == DEFAULT_TRUST
    assert trust_at(trusted, T0) == trusted
    assert trust_at(trusted, T0 + timedelta(hours=1)) == DEFAULT_TRUST


@given(records)
def test_the_record_round_trips_through_json(recorded: RecordedTrust) -> None:
    assert trust_from_json(trust_to_json(recorded)) == recorded


@given(st.recursive(st.none() | st.text() | st.integers(), lambda c: st.dictionaries(st.text(), c)))
def test_an_unreadable_record_reads_as_none(data: object) -> None:
    found = trust_from_json(data)
    assert found is None or isinstance(found, RecordedTrust)


def test_an_unreadable_expiry_is_no_record_at_all() -> None:
    data = {"mode": "hands-off", "commandApproval": "trusted", "expiresAt": "someday"}
    assert trust_from_json(data) is None


# ---------------------------------- issue 20 item 8: the human's own edits are the baseline


@given(
    mode=st.sampled_from(MODES),
    approval=st.sampled_from(APPROVALS),
    recorded=st.one_of(st.none(), records),
)
def test_the_humans_own_edit_is_taken_as_it_stands_and_recorded(
    mode: str, approval: str, recorded: RecordedTrust | None
) -> None:
    policy = replace(MODE_PRESETS[mode], command_approval=approval)  # type: ignore[arg-type]
    held = hold_policy(policy, recorded, T0, by_human=True)
    assert held.policy == policy and held.loosened == ()
    if hold_policy(policy, recorded, T0).loosened:
        assert held.to_record == trust_of(policy)
        assert hold_policy(policy, held.to_record, T0).loosened == ()


def test_a_change_is_the_agents_only_inside_a_recorded_run() -> None:
    end = T0 + timedelta(minutes=5)
    run = AgentSpan(T0, end)
    during = T0 + timedelta(minutes=1)
    assert made_during_agent_run(during, [run])
    assert made_during_agent_run(T0 - DATING_SLACK, [run])  # the coarse file clock
    assert not made_during_agent_run(T0 - DATING_SLACK - timedelta(seconds=1), [run])
    assert made_during_agent_run(end + DATING_SLACK, [run])
    assert not made_during_agent_run(end + timedelta(minutes=1), [run])
    assert not made_during_agent_run(during, [])  # no agent ever ran: a first loop
    assert made_during_agent_run(T0 + timedelta(days=9), [AgentSpan(T0, None)])  # runs on
    assert not made_during_agent_run(None, [run])


def _event(kind: str, minute: int, event_id: str, cause: str | None = None) -> dict[str, object]:
    ts = (T0 + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {"id": event_id, "ts": ts, "kind": kind, "cause": cause}


def test_agent_runs_are_read_from_events_log_a_killed_one_ending_at_the_next_loop() -> None:
    events: list[dict[str, object]] = [
        _event("loop-start", 0, "e1"),
        _event("agent-start", 1, "e2"),
        _event("wake", 2, "e3"),
        _event("agent-end", 3, "e4", cause="e2"),
        _event("agent-start", 4, "e5"),  # the loop was killed during this run
        _event("loop-start", 30, "e6"),
        _event("agent-start", 31, "e7"),  # running now
        {"kind": "agent-end", "ts": "garbage", "cause": "e7"},
    ]
    at = [T0 + timedelta(minutes=m) for m in (1, 3, 4, 30, 31)]
    assert agent_spans(events) == (
        AgentSpan(at[0], at[1]),
        AgentSpan(at[2], at[3]),
        AgentSpan(at[4], None),
    )
