"""What each action flag does: one small handler per action, and the table that picks it.

`wild/cli.py` parses the command line, decides which action was chosen and calls
`HANDLERS[action]` with a `Call`. A handler calls one core function and prints its result
through `call.out`, so click stays in the CLI layer.

Each handler imports what it uses, inside the handler: `wild --status` then loads the
parsers and the status code, not the loop, the webhook, the demo or filelock (issue 8).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wild.commands import durations
from wild.errors import UsageError, WildError
from wild.record import record

if TYPE_CHECKING:
    from wild.clock import Clock
    from wild.commands.human_acts import HumanGate
    from wild.paths import WildPaths
    from wild.workspace_view import Workspace

# The loop is chosen by a goal rather than by a flag; it is dispatched like the actions.
LOOP = "loop"
# `--serve` alone, or beside the loop; `wild.cli` dispatches it (the dashboard sits above
# this layer, since it calls these commands).
SERVE = "serve"


@record
class Call:
    """One action's inputs: the state folder, every option's value, and where output goes."""

    paths: WildPaths
    opts: Mapping[str, Any]
    clock: Clock
    out: Callable[[str], None]
    clear: Callable[[], None]
    out_bytes: Callable[[bytes], None]  # output kept as bytes (UTF-8), printed as they are

    @property
    def as_json(self) -> bool:
        return bool(self.opts["as_json"])


def _init(call: Call) -> None:
    from wild.commands.init import init_wild

    created, kept = init_wild(call.paths)
    call.out(
        f"Initialised {call.paths.root}: created {', '.join(created) or 'nothing'}"
        + (f"; kept existing {', '.join(kept)}" if kept else "")
    )


def _status(call: Call) -> None:
    from wild.commands.status_text import format_status
    from wild.output import to_json, to_json_line

    if call.opts["watch"]:
        from wild.commands.status import status_data
        from wild.commands.watch import watch_status

        def redraw(ws: Workspace) -> None:
            data = status_data(ws, call.clock.now())
            if call.as_json:  # JSON lines: one status object per change, for a script to read
                call.out(to_json_line(data))
                return
            call.clear()
            call.out(format_status(data))

        watch_status(call.paths, call.clock, redraw)
        return
    from wild.commands.status_cache import status_now

    data = status_now(call.paths, call.clock.now())
    call.out(to_json(data) if call.as_json else format_status(data))


def _list_work(call: Call) -> None:
    from wild.commands.status_cache import work_now
    from wild.commands.status_text import format_work
    from wild.output import to_json

    items = work_now(call.paths, call.clock.now())
    call.out(to_json(items) if call.as_json else format_work(items))


def _show_policy(call: Call) -> None:
    from wild.commands.policy_show import format_policy, policy_json
    from wild.output import to_json
    from wild.workspace import load_workspace

    ws = load_workspace(call.paths, call.clock.now())
    call.out(to_json(policy_json(ws)) if call.as_json else format_policy(ws))


def _human_input(call: Call) -> None:
    from wild.commands import edits

    urgent = call.opts["urgent"]
    key = edits.add_human_input(
        call.paths, call.opts["human_input"], urgent=urgent, now=call.clock.now()
    )
    kind = "urgent human input" if urgent else "human input"
    call.out(f"Queued {kind} {key} in {call.paths.human}")


def _update_policy(call: Call) -> None:
    from wild.commands import edits

    mode, given = call.opts["update_policy"], call.opts["duration"]
    duration = durations.flag_duration("--duration", given)
    now = call.clock.now()
    edits.update_policy(call.paths, mode, duration=duration, now=now, human=_on_terminal(call))
    suffix = f" for {given}" if given else ""
    call.out(f"Policy is now {mode}{suffix} ({call.paths.policy})")


def _add_task(call: Call) -> None:
    from wild.commands import edits

    task_id = edits.add_task(
        call.paths,
        call.opts["add_task"],
        priority=call.opts["priority"],
        depends_on=call.opts["depends_on"],
        blocked_by=call.opts["blocked_by"],
    )
    call.out(f"Added {task_id}: {call.opts['add_task']}")


# `--alert` needs these four; the CLI spells the option for `alert_type` as --type.
ALERT_NEEDS = {
    "severity": "--severity",
    "source": "--source",
    "alert_type": "--type",
    "description": "--description",
}


def _alert(call: Call) -> None:
    from wild.commands import edits

    opts = call.opts
    missing = [flag for name, flag in ALERT_NEEDS.items() if not opts[name]]
    if missing:
        raise UsageError(f"--alert also needs {', '.join(missing)}")
    alert_id = edits.raise_alert(
        call.paths,
        severity=opts["severity"],
        source=opts["source"],
        alert_type=opts["alert_type"],
        description=opts["description"],
        context=edits.parse_context(opts["context"]),
        choices=opts["choice"],
        now=call.clock.now(),
    )
    call.out(alert_id)


def _wait_alert(call: Call) -> None:
    from wild.commands.wait_alert import wait_alert

    timeout = call.opts["timeout"]
    call.out(wait_alert(call.paths, call.opts["wait_alert"], timeout).text())


def _satisfy(call: Call) -> None:
    from wild.commands import edits

    barrier_id = call.opts["satisfy"]
    changed = edits.satisfy_barrier(call.paths, barrier_id, now=call.clock.now())
    state = "is now satisfied" if changed else "was already satisfied"
    call.out(f"Barrier {barrier_id} {state}")


def _check_barriers(call: Call) -> None:
    from wild.commands import barrier_cmds
    from wild.output import to_json

    rows = barrier_cmds.check_barriers(call.paths, call.clock)
    call.out(to_json(rows) if call.as_json else barrier_cmds.format_checks(rows))


def _run_checks(call: Call) -> None:
    from wild.commands.completion_checks import checks_json, format_checks_run, run_checks
    from wild.output import to_json

    run = run_checks(call.paths, call.clock)
    call.out(to_json(checks_json(run)) if call.as_json else format_checks_run(run))
    if not run.verdict.holds:
        sys.exit(1)


def _on_terminal(call: Call) -> HumanGate:
    """The CLI's confirmation of a human's act: asked on /dev/tty unless `--yes`."""
    from wild.commands.human_acts import HumanGate

    return HumanGate(on_terminal=True, yes=bool(call.opts["yes"]))


def _approve(call: Call) -> None:
    from wild.commands import barrier_cmds, completion_checks
    from wild.policy.checks_trust import CHECKS_APPROVAL_ID
    from wild.policy.trust import POLICY_APPROVAL_ID

    name, human = call.opts["approve"], _on_terminal(call)
    if name == CHECKS_APPROVAL_ID:
        accepted = barrier_cmds.approve_checks(call.paths, call.clock.now(), human=human)
        call.out(
            f"Approved {call.paths.checks} as it stands: {len(accepted.checks)} checks, "
            f"strategy {accepted.strategy}, mode {accepted.mode}"
        )
        return
    if name == POLICY_APPROVAL_ID:
        policy = barrier_cmds.approve_policy(call.paths, call.clock.now(), human=human)
        call.out(
            f"Approved {call.paths.policy} as it stands: mode {policy.mode}, "
            f"command approval {policy.command_approval}"
        )
        return
    if name:
        is_barrier = name in barrier_cmds.barrier_ids(call.paths)
        found = None if is_barrier else completion_checks.approve_check(call.paths, name, human)
        if found is None:
            found = barrier_cmds.approve_barrier(call.paths, name, call.clock.now(), human=human)
        command, digest = found
        call.out(f"Approved {name}: {command} (sha256 {digest[:12]})")
        return
    waiting = barrier_cmds.unapproved(call.paths, call.clock.now())
    waiting += completion_checks.unapproved_checks(call.paths)
    if not waiting:
        call.out("No barrier or check commands await approval.")
        return
    call.out("Commands awaiting approval (run wild --approve ID for each you trust):")
    for name, command in waiting:
        call.out(f"  {name}: {command}")


def _generate_check(call: Call) -> None:
    from wild.commands import barrier_cmds

    script = barrier_cmds.generate_check(call.paths, call.opts["generate_check"])
    call.out(f"Wrote {script}")


def _control(request: str) -> Callable[[Call], None]:
    def handler(call: Call) -> None:
        from wild import control
        from wild.store.loop_lock import loop_running

        if call.paths.root.is_dir() and not loop_running(call.paths.root):
            # A request no loop reads would be ignored (a loop starting later skips it): say so.
            raise WildError(
                f"{call.paths.root}: no wild loop is running here, so there is nothing to"
                f" {request}; nothing was written (start one with `wild`)"
            )
        control.request(call.paths, request, call.clock)
        call.out(f"Asked the loop in {call.paths.root} to {request}")

    return handler


def _migrate(call: Call) -> None:
    from pathlib import Path

    from wild.migrate import migrate_ralph
    from wild.output import plural

    report = migrate_ralph(
        Path(call.opts["from_dir"]), call.paths, force=call.opts["force"], clock=call.clock
    )
    call.out(
        f"Migrated {report.source} into {report.target}: {plural(report.tasks, 'task')}"
        f" ({plural(report.subtasks, 'subtask')}),"
        f" {plural(report.pending_inputs, 'pending input')}"
    )
    for note in report.notes:
        call.out(f"  note: {note}")


def _loop(call: Call) -> None:
    # The launch (issue 22 item 8): the loop's imports and its first read make ~100,000
    # objects and free almost none, so the collector's ~60 passes over them before the first
    # agent's go (~4 ms) find nothing to free. It is held off until the loop starts watching
    # its files (`wild.loop.driver`: once the first agent runs, or before any other first
    # action), and back on here whatever happens.
    gc.disable()
    try:
        from wild.commands.loop_action import run_goal

        run_goal(call.paths, call.opts, call.clock, call.out)
    finally:
        gc.enable()


def _sweeps_and_runs(call: Call) -> None:
    from wild.commands.runs_cmds import run_action, watch_listing

    if call.opts["sweep"] is not None and call.opts["run"] and not call.opts["runs"]:
        _record_and_run(call)
        return

    if call.opts["runs"] and call.opts["watch"]:
        watch_listing(call.paths, call.opts["sweep"], call.clock, call.clear, call.out)
        return
    shown = run_action(call.paths, call.opts, call.clock.now(), as_json=call.as_json)
    if isinstance(shown, bytes):
        call.out_bytes(shown)
    else:
        call.out(shown)


def _record_and_run(call: Call) -> None:
    """`wild --sweep FILE --run`: record the sweep, then run it to the end with no agent."""
    from wild.commands.runs_cmds import format_sweep, submit_sweep, sweep_summary
    from wild.commands.sweep_run import run_sweeps, terminal
    from wild.store.loop_lock import loop_running

    if loop_running(call.paths.root):  # refused before anything is recorded
        raise WildError(
            f"{call.paths.root}: a wild loop runs on this folder and runs its sweeps itself; "
            f"give the sweep without --run (`wild --sweep {call.opts['sweep']}`)"
        )
    sweep = submit_sweep(
        call.paths, call.opts["sweep"], now=call.clock.now(), run_backend=call.opts["run_backend"]
    )
    call.out(format_sweep(sweep_summary(sweep)))
    # Only its id goes on: the recorded sweep's record (its spec, every run id) is not held
    # while it runs (the runner reads the sweep from runs.jsonl): ~0.1 KB a run.
    sweep_id = sweep.id
    del sweep
    run_sweeps(
        call.paths,
        call.clock,
        terminal(call.out),
        sweeps=(sweep_id,),
        run_slots=call.opts["run_slots"],
    )


def _run_sweeps(call: Call) -> None:
    from wild.commands.sweep_run import run_sweeps, terminal
    from wild.workspace import require_initialised

    require_initialised(call.paths)
    run_sweeps(call.paths, call.clock, terminal(call.out), run_slots=call.opts["run_slots"])


def _compare(call: Call) -> None:
    from wild.commands.compare import compare_action

    call.out(compare_action(call.paths, call.opts, as_json=call.as_json))


# Each action flag (by its click parameter name), in the order `--help` lists them.
HANDLERS: dict[str, Callable[[Call], None]] = {
    "init": _init,
    "status": _status,
    "list_work": _list_work,
    "human_input": _human_input,
    "update_policy": _update_policy,
    "show_policy": _show_policy,
    "add_task": _add_task,
    "alert": _alert,
    "wait_alert": _wait_alert,
    "satisfy": _satisfy,
    "migrate": _migrate,
    "check_barriers": _check_barriers,
    "run_checks": _run_checks,
    "approve": _approve,
    "generate_check": _generate_check,
    "sweep": _sweeps_and_runs,
    "runs": _sweeps_and_runs,
    "compare": _compare,
    "run_sweeps": _run_sweeps,
    "stop_run": _sweeps_and_runs,
    "rerun": _sweeps_and_runs,
    "pause": _control("pause"),
    "resume": _control("resume"),
    "stop": _control("stop"),
    LOOP: _loop,
}

# The flags that each select one action; at most one may be given.
ACTIONS = tuple(name for name in HANDLERS if name != LOOP)
EVERY = (*ACTIONS, LOOP, SERVE)


def action_words(params: Iterable[tuple[str | None, Sequence[str], bool]]) -> dict[str, str]:
    """Each action's word (`status`, `list-work`, `list_work`, `help`) -> its flag (`--status`),
    from the command's own parameters: (name, flags, whether it acts alone and ends, as
    `--help` and `--version` do). So a goal naming a new action is refused too."""
    words: dict[str, str] = {}
    for name, flags, alone in params:
        for flag in flags if name in (*ACTIONS, SERVE) or alone else ():
            if flag.startswith("--"):
                words[flag[2:]] = words[flag[2:].replace("-", "_")] = flag
    return words


def misplaced_option(
    action: str,
    given: Iterable[str],
    owners: Mapping[str, Sequence[str]],
    flags: Mapping[str, str],
) -> str | None:
    """The usage error for the first option in `given` that does nothing with `action`.

    `owners` names the actions each option goes with (the CLI's declaration of each option
    says so); `flags` spells each parameter name as the user typed it (`alert_type` -> `--type`).
    """

    def name(owner: str) -> str:
        return 'the loop (wild "GOAL")' if owner == LOOP else flags[owner]

    for option in given:
        if action not in owners[option]:
            names = [name(owner) for owner in owners[option]]
            belongs = " or ".join(filter(None, (", ".join(names[:-1]), names[-1])))
            return f"{flags[option]} belongs to {belongs}; it does nothing with {name(action)}"
    return None
