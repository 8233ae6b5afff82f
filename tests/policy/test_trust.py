"""The trust rule, pure: a policy file is held to the trust a human recorded through the CLI."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.policy import APPROVALS, MODES
from wild.policy.model import MODE_PRESETS
from wild.policy.trust import (
    DEFAULT_TRUST,
    RecordedTrust,
    hold_policy,
    skips_permissions,
    trust_at,
    trust_from_json,
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
    if held.stricter is not None:
        again = hold_policy(policy, held.stricter, T0)
        assert (again.policy, again.stricter) == (held.policy, None)


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
