"""A deterministic failure in a real loop (issue 23 item 4): a real script that always exits 3
with the same message, an agent that answers every run alert with `rerun` — the run gets at
most its sweep's `max_attempts`, its alerts say `deterministic failure` from the second on,
and the last offers no `rerun`, so the agent's `rerun` is refused and the alert stays open."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.runs.research_support import (
    Agent,
    lines,
    project,
    resolve_tag,
    run_loop,
    runs_by_id,
    sweep_tag,
)
from wild.commands.runs_cmds import act_on_run, runs_listing
from wild.errors import WildError
from wild.paths import WildPaths
from wild.store.events_log import read_events

pytestmark = pytest.mark.timeout(120)

ALWAYS_3 = (
    "import sys\n"
    "print('loading config', flush=True)\n"
    "print('ValueError: lr must be positive', file=sys.stderr)\n"
    "sys.exit(3)\n"
)


def sweep(max_attempts: int | None) -> dict[str, object]:
    spec: dict[str, object] = {
        "name": "broken",
        "base_command": "python train.py",
        "parameters": {"lr": [-1]},
    }
    if max_attempts is not None:
        spec["max_attempts"] = max_attempts
    return spec


@pytest.mark.parametrize("max_attempts", [None, 2])
def test_a_deterministic_failure_is_rerun_at_most_max_attempts_times(
    tmp_path: Path, max_attempts: int | None
) -> None:
    paths = project(tmp_path, {"train.py": ALWAYS_3})
    answered: list[str] = []

    def reply(kind: str, work: str, prompt: str) -> str:
        if kind == "planning" and not paths.runs_log.exists():
            return sweep_tag(sweep(max_attempts))
        if kind == "alert" and work not in answered:
            answered.append(work)
            return resolve_tag(work, "rerun")  # blindly, every time it is asked
        if kind == "alert":  # its `rerun` was refused: the alert came back
            return resolve_tag(work, "ignore")
        return "<promise>COMPLETE</promise>\n"

    assert run_loop(paths, Agent(reply)).reason == "complete"
    limit = max_attempts or 3
    (run,) = runs_by_id(paths).values()
    assert (run["attempt"], run["status"], run["exit_code"]) == (limit, "failed", 3)
    alerts: dict[str, dict[str, object]] = {}
    for alert in lines(paths.alerts):
        alerts[str(alert["id"])] = alert
    assert len(alerts) == limit  # one per failed attempt
    raised = list(alerts.values())  # in the order raised: ids made in one second sort by chance
    assert ["deterministic failure" in str(a["description"]) for a in raised] == [
        False,
        *([True] * (limit - 1)),
    ]
    assert [a["choices"] for a in raised] == [
        *([["rerun", "ignore", "stop_sweep"]] * (limit - 1)),
        ["ignore", "stop_sweep"],
    ]
    assert f"no attempts left (max_attempts): {run['id']}" in str(raised[-1]["description"])
    refused = [e for e in read_events(paths.events)[0] if e["kind"] == "resolve-refused"]
    assert [e["alert"] for e in refused] == [raised[-1]["id"]]
    # A human's `wild --rerun` is refused too, in one line saying why and what to do.
    with pytest.raises(WildError) as error:
        act_on_run(WildPaths(paths.root), str(run["id"]), stop=False)
    assert str(error.value) == (
        f"run {run['id']} has used {limit} of its {limit} attempts (max_attempts of sweep "
        f'{run["sweep"]}), so it is not rerun; to allow more, raise "max_attempts" in the '
        "sweep file and record it again (wild --sweep FILE)"
    )
    listing = runs_listing(WildPaths(paths.root), None, datetime.now(UTC), as_json=False)
    assert "failed (deterministic failure)" in listing
