"""`wild "GOAL" …`: apply the starting policy, then run the loop until it ends."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path

from wild.agents import orphans, sandbox
from wild.agents.registry import CUSTOM, agent_program, agent_spec, cannot_start
from wild.agents.runner import run_agent
from wild.clock import Clock
from wild.commands.approval_guard import guarding, remove_void_approvals
from wild.commands.human_acts import HumanGate
from wild.commands.init import init_wild
from wild.errors import UsageError, WildError
from wild.loop import Loop, LoopOptions, LoopResult
from wild.parsers.state import Unreadable, parse_state
from wild.parsers.totals import Totals, from_events
from wild.paths import WildPaths
from wild.store import totals_ledger
from wild.store.events_log import read_events
from wild.store.files import read_text
from wild.wake import WakeReason
from wild.workspace import record_trust

# Documented in docs/cli.md: the cases a script running wild must tell apart.
EXIT_CODES = {
    "complete": 0,
    "once": 0,
    "no-plan": 1,
    "max-iterations": 4,
    "max-time": 4,
    "max-cost": 4,
    "max-tokens": 4,
    "waiting-human": 5,
    "stopped": 130,
}


def start_policy(
    paths: WildPaths,
    clock: Clock,
    *,
    policy: str | None,
    duration: timedelta | None,
    policy_file: Path | None,
) -> None:
    """`--policy-file` replaces human-policy.md; `--policy MODE [--duration]` switches mode."""
    if policy_file is not None:
        if not policy_file.is_file():
            raise WildError(
                f"{policy_file}: no such policy file; check the path given to --policy-file"
            )
        text = read_text(policy_file)
        # Given on the command line by a human: its trust is recorded, as --update-policy's.
        record_trust(paths, clock.now(), lambda _current: text)
    if policy is not None:
        from wild.commands import edits  # noqa: PLC0415 (only with --policy: its presets)

        edits.update_policy(paths, policy, duration=duration, now=clock.now())
    elif duration is not None and policy_file is None:
        raise UsageError("--duration needs --policy MODE (or --update-policy MODE)")


def confirm_a_blank_count(
    paths: WildPaths, options: LoopOptions, out: Callable[[str], None]
) -> None:
    """A cap counts what was spent across restarts. A project that ran agents before (its
    iteration logs are there) whose every count of it is gone (state.json, the ledger outside
    the project and events.log all count nothing) never starts counting from zero silently:
    wild says so and asks the human at the terminal (refused where none is)."""
    caps = [
        flag
        for flag, value in (
            ("--max-cost", options.max_cost_usd),
            ("--max-tokens", options.max_tokens),
            ("--max-iterations", options.max_iterations),
            ("--max-time", options.max_time_s),
        )
        if value is not None
    ]
    if not caps or not _ran_agents_before(paths.logs) or counted_before(paths):
        return
    lost = (
        f"this project ran agents before ({paths.logs}), but state.json, the totals ledger "
        "and events.log count nothing of it"
    )
    out(f"⚠️  {lost}: {', '.join(caps)} would count from zero.")
    HumanGate(on_terminal=True).require(paths, f"start {', '.join(caps)} from zero ({lost})")


def _ran_agents_before(logs: Path) -> bool:
    """Whether an iteration's log is in `logs` (`iteration-*.log`, as `Path.glob` would
    match it; no folder, or none readable: no). A scan of the names, not `glob`: that
    compiles its pattern, ~0.2 ms on every capped launch (issue 22)."""
    with (
        contextlib.suppress(FileNotFoundError, NotADirectoryError, PermissionError),
        os.scandir(logs) as entries,
    ):
        return any(
            entry.name.startswith("iteration-") and entry.name.endswith(".log") for entry in entries
        )
    return False


def counted_before(paths: WildPaths) -> bool:
    """Whether anything records what this project's loops spent (read only: the loop's own
    load sets a broken state.json aside)."""
    totals = totals_ledger.recorded(paths.state)
    if not paths.state.is_symlink():
        with contextlib.suppress(OSError):
            parsed = parse_state(paths.state.read_bytes(), str(paths.state))
            if not isinstance(parsed, Unreadable):
                totals = totals.at_least(Totals.of(parsed.state))
    with contextlib.suppress(OSError):
        totals = totals.at_least(from_events(read_events(paths.events)[0]))
    return totals != Totals()


def _check_agent(options: LoopOptions, project: Path) -> None:
    """Fail before touching any file (before `.wild/` exists, before "Iteration 1") when the
    agent cannot be run at all: no command, or no program to run."""
    if options.agent == CUSTOM:
        if not options.agent_cmd or not options.agent_cmd.strip():
            raise UsageError(
                "--agent custom needs --agent-cmd 'CMD ...' (the prompt comes on stdin)"
            )
    else:
        agent_spec(options.agent)
        if options.agent_cmd:
            raise UsageError(f"--agent-cmd runs its own command; drop --agent {options.agent}")
    program = agent_program(options.agent, options.agent_cmd, os.environ)
    try:
        orphans.find_program(program, project, os.environ.get("PATH"))
    except OSError as error:
        raise WildError(
            cannot_start(options.agent, program, error.strerror or str(error))
        ) from error


def webhook_credentials(
    paths: WildPaths, environ: Mapping[str, str]
) -> tuple[str | None, bytes | None]:
    """`WILD_WEBHOOK_TOKEN` / `WILD_WEBHOOK_SECRET`, else a token kept in `.wild/webhook-token`."""
    token = environ.get("WILD_WEBHOOK_TOKEN") or None
    secret = environ.get("WILD_WEBHOOK_SECRET")
    if token or secret:
        return token, secret.encode() if secret else None
    token_file = paths.root / "webhook-token"
    if not token_file.exists():
        # Private from the first byte: the token is a password for the loopback endpoint.
        import secrets  # noqa: PLC0415 (with --webhook-port only: not on a plain launch's way)

        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(32) + "\n")
    return token_file.read_text().strip(), None


def root_warning(agent: str, euid: int, environ: Mapping[str, str]) -> str | None:
    """Claude Code refuses to skip permissions as root outside a declared sandbox: say so first."""
    if agent != "claude" or euid != 0 or environ.get("IS_SANDBOX"):
        return None
    return (
        "⚠️  Claude Code refuses --dangerously-skip-permissions when run as root; every run "
        "will fail. Run wild as a normal user, or set IS_SANDBOX=1 if this machine is a sandbox."
    )


def run_loop(
    paths: WildPaths,
    options: LoopOptions,
    clock: Clock,
    *,
    policy: str | None = None,
    duration: timedelta | None = None,
    policy_file: Path | None = None,
    webhook_port: int | None = None,
    out: Callable[[str], None] = print,
    notes: Sequence[str] = (),
    on_ready: Callable[[], None] | None = None,
) -> LoopResult:
    """Check, set up and run the loop; `notes` (the `Agent:` line, values taken from the
    record) are printed once everything was checked, just before the loop starts, and
    `on_ready` is called then (`--serve` opens the dashboard beside the loop)."""
    if not options.goal.strip():
        raise UsageError('the goal is empty; say what the agent should achieve: wild "GOAL"')
    _check_agent(options, paths.project)
    if options.sandbox:  # refused here, before .wild/ is made or any agent starts
        sandbox.require_bwrap(os.environ)
    warning = root_warning(options.agent, os.geteuid(), os.environ)
    if warning:
        out(warning)
    init_wild(paths)
    start_policy(paths, clock, policy=policy, duration=duration, policy_file=policy_file)
    confirm_a_blank_count(paths, options, out)
    # A run cut short by a killed loop may have left an approval wild did not write.
    remove_void_approvals(paths, clock.now())
    loop = Loop(paths, options, clock=clock, out=out, runner=guarding(paths, clock, run_agent))
    if on_ready is not None:
        on_ready()
    for note in notes:
        out(note)
    with orphans.guarded(loop.agent_runs):  # no agent process outlives the loop, even a killed one
        return _run(loop, paths, webhook_port, out)


def _run(
    loop: Loop, paths: WildPaths, webhook_port: int | None, out: Callable[[str], None]
) -> LoopResult:
    if webhook_port is None:
        return loop.run()
    # Imported only when asked for: http.server brings ssl and email, ~45 ms a loop without
    # a webhook would pay before its first agent starts.
    from wild.barriers.webhook import WebhookServer  # noqa: PLC0415

    token, secret = webhook_credentials(paths, os.environ)
    # Its writes land in barriers.md and alerts.jsonl, which the watcher sees, but not one that
    # lands after the loop's first read and before its watcher starts: wake the loop directly.
    # A refused client costs one rate-limited line on the terminal, never a traceback.
    server = WebhookServer(
        paths,
        token=token,
        secret=secret,
        port=webhook_port,
        wake=lambda item: loop.waker.wake(WakeReason("rescan", detail=f"webhook: {item}")),
        report=out,
    )
    port = server.start()
    auth = "the token in .wild/webhook-token" if secret is None else "X-Wild-Signature"
    out(f"🔗 Webhook on http://127.0.0.1:{port}/ (POST /barriers/ID/satisfy, POST /alerts; {auth})")
    try:
        return loop.run()
    finally:
        server.stop()
