"""Lost updates: wild, a human editor and an agent writing one tasks.md at once, round by round.

Run: `python bench/bench_lost_updates.py [--rounds N] [--jitter-ms MS] [--late-editor-check]`.
Three processes share one `.wild/`. Each round they meet at a barrier, each waits a random
0..MS ms and makes that round's edit, so their read-to-write windows overlap:

* wild ticks `task-NNNN` through the real `store.update_text` + `tasks.set_status` (its lock,
  compare-and-swap re-check, temp file + fsync + atomic swap);
* the editor (like vim) reads the file, appends `- [ ] [P2] note-<i>: human note <i>`, re-reads
  to check nothing changed since its read (else starts over: vim's "file changed since
  reading it"), then writes a temp file, fsyncs it and renames it over tasks.md; no wild lock.
  `--late-editor-check` moves that check after the fsync, right before the rename;
* the agent (like Claude Code's Edit) reads the file, ticks `  - [ ] step-<i>`, re-reads to
  check nothing changed (else starts over), then rewrites the file in place (truncate + write).

When all three are done the parent compares tasks.md with what it must hold: the round's
three changes and every earlier one. A missing line is a lost update; the file is then put
right, so each round is a trial of its own and one loss does not spill into later rounds.
Every write is logged with the hashes of the text it was computed from and of what it wrote,
and the clock times of its last check and around its commit, which traces each loss to the
write that erased it. wild's edit is wrapped to count compare-and-swap re-applications; the
editor and the agent count how often their check made them redo the edit.
Target (SPEC §10): 0 lost updates in ≥ 1,000 rounds.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path
from unittest import mock

import orjson
from figures import report as figure

from wild.errors import ConflictError
from wild.parsers import tasks as tasks_md
from wild.parsers.lines import append_lines, split_lines
from wild.paths import WildPaths
from wild.store import files as store
from wild.store.files import atomic_write, decode, encode, read_bytes, update_text
from wild.store.self_writes import content_hash

ROUNDS = 1000
JITTER_MS = 3.0
BARRIER_TIMEOUT_S = 120.0  # a crashed process breaks the barrier instead of hanging the rest
REDO_LIMIT = 1000  # the editor and the agent give up on a round after this many tries
ACTORS = ("wild", "editor", "agent")
EXAMPLES = 3  # losses printed in full per kind, unless --every-loss
NOT_WRITTEN = "nobody (never written)"


@dataclass(frozen=True)
class Setup:
    """One run's settings, handed to every process."""

    folder: str
    rounds: int
    jitter_s: float
    late_editor_check: bool
    every_loss: bool

    @property
    def paths(self) -> WildPaths:
        return WildPaths(Path(self.folder) / ".wild")


@dataclass(frozen=True)
class Write:
    """One write that reached tasks.md: the text it was computed from and what it left."""

    actor: str
    round: int
    base: str  # hash of the bytes the edit was computed from
    base_len: int
    new: str  # hash of the bytes written
    checked_ns: int  # when its last read of the file before committing ended
    # The commit happened between these instants (monotonic clock, shared by all processes):
    # around os.replace for wild and the editor, from open to the end of the write for the agent.
    t0_ns: int
    t1_ns: int


@dataclass(frozen=True)
class Attempts:
    """One actor's round: how often it computed its edit, and why it wrote nothing if so."""

    round: int
    attempts: int
    failure: str  # "" when the actor wrote


@dataclass(frozen=True)
class ActorLog:
    """Everything one actor process reports back."""

    actor: str
    rounds: tuple[Attempts, ...]
    writes: tuple[Write, ...]


@dataclass(frozen=True)
class Check:
    """What the referee found after one round."""

    round: int
    start: str  # hash of the file as the round began
    lost: tuple[tuple[str, int], ...]  # (actor, round) of every update missing
    seed_lines_lost: int  # original lines gone too (the file was cut short)


@dataclass(frozen=True)
class Loss:
    """One update missing after a round, and the write that erased it."""

    victim: str
    of_round: int  # the round the update was made in
    in_round: int  # the round after which it was missing
    eraser: str  # an actor, NOT_WRITTEN or "?" (not traced)
    how: str


def wild_line(i: int, box: str) -> str:
    return f"- [{box}] [P2] task-{i:04d}: wild round {i}\n"


def note_line(i: int) -> str:
    return f"- [ ] [P2] note-{i}: human note {i}"


def step_line(i: int, box: str) -> str:
    return f"  - [{box}] step-{i}\n"


def seed_text(rounds: int) -> str:
    """One agent task holding a subtask per round, then one wild task per round."""
    agent = ["- [/] [P1] agent-work: the agent's checklist\n"]
    agent += [step_line(i, " ") for i in range(rounds)]
    return "# Tasks\n\n" + "".join(agent) + "".join(wild_line(i, " ") for i in range(rounds))


def expected_after(text: str, i: int) -> str:
    """`text` with round i's three changes made."""
    text = text.replace(wild_line(i, " "), wild_line(i, "x"), 1)
    text = text.replace(step_line(i, " "), step_line(i, "x"), 1)
    return append_lines(text, [note_line(i)])


# The lines that record an update, and whose update each is.
OWNERS = (
    (re.compile(r"- \[x\] \[P2\] task-([0-9]+): wild round [0-9]+\n"), "wild"),
    (re.compile(r"  - \[x\] step-([0-9]+)\n"), "agent"),
    (re.compile(r"- \[ \] \[P2\] note-([0-9]+): human note [0-9]+\n"), "editor"),
)


def owner_of(line: str) -> tuple[str, int] | None:
    """(actor, round) of the update a line records, or None for a line of the seed file."""
    for pattern, actor in OWNERS:
        match = pattern.fullmatch(line)
        if match is not None:
            return actor, int(match.group(1))
    return None


def _now() -> int:
    return time.monotonic_ns()


class Actor:
    """What the three writers share: the round loop and the log of their writes."""

    def __init__(self, name: str, setup: Setup) -> None:
        self.name = name
        self.setup = setup
        self.path = setup.paths.tasks
        self.random = random.Random(ACTORS.index(name))
        self.writes: list[Write] = []

    def run(self, barrier: Barrier, edit_round: Callable[[Actor, int], Attempts]) -> ActorLog:
        done: list[Attempts] = []
        for i in range(self.setup.rounds):
            barrier.wait(BARRIER_TIMEOUT_S)
            if self.setup.jitter_s > 0:
                time.sleep(self.random.uniform(0, self.setup.jitter_s))
            done.append(edit_round(self, i))
            barrier.wait(BARRIER_TIMEOUT_S)  # the referee checks the file meanwhile
            barrier.wait(BARRIER_TIMEOUT_S)
        return ActorLog(self.name, tuple(done), tuple(self.writes))

    def record(self, i: int, before: bytes, after: bytes, times: tuple[int, int, int]) -> None:
        """Log a write; `times` are (last check read ended, commit began, commit ended)."""
        base, new = content_hash(before), content_hash(after)
        self.writes.append(Write(self.name, i, base, len(before), new, *times))


def wild_round(actor: Actor, i: int) -> Attempts:
    """`update_text(set_status)`, counting how often compare-and-swap re-applied the edit."""
    bases: list[bytes] = []
    reads: list[int] = []
    commits: list[tuple[int, int, int]] = []
    real_read, real_exchange = store.read_bytes, store._exchange

    def edit(text: str) -> str:
        bases.append(encode(text))
        return tasks_md.set_status(text, f"task-{i:04d}", "complete")

    # Instrumentation only: update_text's own reads and its atomic swap, timed.
    def timed_read(path: Path) -> bytes:
        data = real_read(path)
        reads.append(_now())
        return data

    def timed_exchange(
        tmp: Path,
        target: Path,
        *,
        must_exist: bool,
        checked: tuple[int, int, int] | None = None,
    ) -> bytes | None:
        t0 = _now()
        displaced = real_exchange(tmp, target, must_exist=must_exist, checked=checked)
        commits.append((reads[-1], t0, _now()))
        return displaced

    try:
        with (
            mock.patch.object(store, "read_bytes", timed_read),
            mock.patch.object(store, "_exchange", timed_exchange),
        ):
            text = update_text(actor.path, edit, actor.setup.paths.lock)
    except ConflictError as error:
        return Attempts(i, len(bases), str(error))
    if not commits:  # the edit changed nothing, so update_text wrote nothing
        return Attempts(i, len(bases), f"found no task-{i:04d} in a {len(bases[-1])}-byte read")
    actor.record(i, bases[-1], encode(text), commits[0])
    return Attempts(i, len(bases), "")


def _editor_save(path: Path, after: bytes, still: Callable[[], bool]) -> tuple[int, int] | None:
    """Temp file, fsync, rename; None when `still()` (checked before the rename) says no."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".swp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(after)
        handle.flush()
        os.fsync(handle.fileno())  # vim's 'fsync' option is on by default
    if not still():
        os.unlink(tmp)
        return None
    t0 = _now()
    os.replace(tmp, path)
    return t0, _now()


def editor_round(actor: Actor, i: int) -> Attempts:
    """Read, append a note, check the file is unchanged since the read, save by rename."""
    path = actor.path
    for attempt in range(1, REDO_LIMIT + 1):
        before = read_bytes(path)
        after = encode(append_lines(decode(before), [note_line(i)]))

        checks: list[int] = []

        def unchanged(before: bytes = before, checks: list[int] = checks) -> bool:
            same = read_bytes(path) == before
            checks.append(_now())
            return same

        late = actor.setup.late_editor_check
        # "The file has changed since reading it": reload and redo the edit.
        if not late and not unchanged():
            continue
        commit = _editor_save(path, after, unchanged if late else lambda: True)
        if commit is None:
            continue
        actor.record(i, before, after, (checks[-1], *commit))
        return Attempts(i, attempt, "")
    return Attempts(i, REDO_LIMIT, "the file never held still")


def agent_round(actor: Actor, i: int) -> Attempts:
    """Read, tick step-i, check the file is unchanged since the read, rewrite it in place."""
    path = actor.path
    old, new = step_line(i, " "), step_line(i, "x")
    for attempt in range(1, REDO_LIMIT + 1):
        before = read_bytes(path)
        text = decode(before)
        if old not in text:
            continue  # "string to replace not found": the read caught a write half done
        after = encode(text.replace(old, new, 1))
        if read_bytes(path) != before:
            continue  # "file modified since read": read it again
        checked = t0 = _now()
        with path.open("wb") as handle:  # truncates first: the file is briefly short
            handle.write(after)
        actor.record(i, before, after, (checked, t0, _now()))
        return Attempts(i, attempt, "")
    return Attempts(i, REDO_LIMIT, f"never found step-{i} in a read that held still")


ROUND_OF: dict[str, Callable[[Actor, int], Attempts]] = {
    "wild": wild_round,
    "editor": editor_round,
    "agent": agent_round,
}


def run_actor(name: str, setup: Setup, barrier: Barrier) -> None:
    """The body of one actor process; its log goes to `<folder>/<name>.json`."""
    log = Actor(name, setup).run(barrier, ROUND_OF[name])
    (Path(setup.folder) / f"{name}.json").write_bytes(orjson.dumps(asdict(log)))


def load_log(path: Path) -> ActorLog:
    raw = orjson.loads(path.read_bytes())
    return ActorLog(
        raw["actor"],
        tuple(Attempts(**entry) for entry in raw["rounds"]),
        tuple(Write(**entry) for entry in raw["writes"]),
    )


def check_round(path: Path, i: int, start: bytes, expected: bytes) -> Check:
    """Compare the file with what round i must leave; put it right if anything is missing."""
    found = read_bytes(path)
    lost: list[tuple[str, int]] = []
    seed_lines_lost = 0
    if found != expected:
        missing = Counter(split_lines(decode(expected))) - Counter(split_lines(decode(found)))
        for line, count in missing.items():
            owner = owner_of(line)
            if owner is None:
                seed_lines_lost += count
            else:
                lost.append(owner)
        atomic_write(path, expected)  # a fresh start for the next round
    return Check(i, content_hash(start), tuple(sorted(lost)), seed_lines_lost)


def referee(setup: Setup, barrier: Barrier, seed: bytes) -> list[Check]:
    """The parent's part of each round: wait for the three edits, then check the file."""
    checks: list[Check] = []
    text = decode(seed)
    for i in range(setup.rounds):
        start = encode(text)
        barrier.wait(BARRIER_TIMEOUT_S)
        barrier.wait(BARRIER_TIMEOUT_S)
        text = expected_after(text, i)
        checks.append(check_round(setup.paths.tasks, i, start, encode(text)))
        barrier.wait(BARRIER_TIMEOUT_S)
    return checks


def _states_after(write: Write, writes: list[Write]) -> set[str]:
    """Hashes of every text that still holds `write`'s change: its own, and edits built on it."""
    states = {write.new}
    grew = True
    while grew:
        grew = False
        for other in writes:
            if other.base in states and other.new not in states:
                states.add(other.new)
                grew = True
    return states


def _states_before(write: Write, writes: list[Write]) -> set[str]:
    """Hashes of the texts `write` was (transitively) computed from: written before it."""
    by_new = {other.new: other for other in writes}
    states: set[str] = set()
    base = write.base
    while base in by_new and base not in states:
        states.add(base)
        base = by_new[base].base
    return states


class Tracer:
    """Finds, from the writes' logs, which write dropped each missing update."""

    def __init__(self, logs: dict[str, ActorLog]) -> None:
        self.attempts = {(log.actor, a.round): a for log in logs.values() for a in log.rounds}
        self.writes: dict[int, list[Write]] = {}
        for log in logs.values():
            for write in log.writes:
                self.writes.setdefault(write.round, []).append(write)

    def trace(self, check: Check) -> list[Loss]:
        writes = self.writes.get(check.round, [])
        known = {check.start: "the file as the round began"}
        known.update({w.new: f"the file as {w.actor}'s write left it" for w in writes})
        losses = []
        for victim, of_round in check.lost:
            if of_round < check.round:  # an update of an earlier round: the file was cut short
                eraser, how = self.cut_short(writes, known)
            else:
                eraser, how = self._eraser(victim, check.round, writes, known)
            losses.append(Loss(victim, of_round, check.round, eraser, how))
        return losses

    @staticmethod
    def cut_short(writes: list[Write], known: dict[str, str]) -> tuple[str, str]:
        torn = [w for w in writes if w.base not in known]
        if not torn:
            return "?", "an earlier line vanished but no write of the round read a torn file"
        w = torn[0]
        return w.actor, f"erased by {w.actor}'s write, computed from a torn {w.base_len}-byte read"

    def _eraser(
        self, victim: str, i: int, writes: list[Write], known: dict[str, str]
    ) -> tuple[str, str]:
        """The write that replaced a text holding the victim's change with one without it.

        It was computed from a text without the change, was not read by the victim (so not
        before it), and did not finish before the victim's commit began. Of those, the
        first to commit; when commits overlap in time, the order is uncertain and said so.
        """
        mine = [w for w in writes if w.actor == victim]
        if not mine:
            return NOT_WRITTEN, f"never written: {self.attempts[(victim, i)].failure}"
        lost = mine[0]
        holding, before = _states_after(lost, writes), _states_before(lost, writes)
        suspects = sorted(
            (
                w
                for w in writes
                if w is not lost
                and w.base not in holding
                and w.new not in before
                and w.t1_ns > lost.t0_ns
            ),
            key=lambda w: w.t1_ns,
        )
        if not suspects:
            return "?", "not traced: no write of the round could have dropped it"
        first = suspects[0]
        source = known.get(first.base, f"a torn {first.base_len}-byte read")
        how = f"erased by {first.actor}'s write, computed from {source}: " + _window(lost, first)
        rivals = [w.actor for w in suspects[1:] if w.t0_ns < first.t1_ns]
        if rivals:
            how += f" (or by {', '.join(rivals)}'s: their commits overlap)"
        return first.actor, how


# What each actor's commit interval (t0..t1) covers, for the timing line.
COMMIT_OF = {
    "wild": "os.replace",
    "editor": "os.replace",
    "agent": "truncate + write (the file is short meanwhile)",
}


def _window(lost: Write, eraser: Write) -> str:
    """When the erased write committed, relative to the eraser's last check and its commit."""
    if lost.t0_ns < eraser.t1_ns <= lost.t1_ns:
        return f"{eraser.actor} committed while {lost.actor} was still writing"
    if lost.t1_ns < eraser.checked_ns:
        return f"it landed while {eraser.actor}'s check read the file (the read saw the old file)"
    gap_ms = (eraser.t1_ns - eraser.checked_ns) / 1e6
    return f"it landed inside {eraser.actor}'s {gap_ms:.2f} ms from last check to commit"


def print_actor(log: ActorLog, own_lost: int) -> None:
    extra = sum(a.attempts - 1 for a in log.rounds)
    redone = sum(a.attempts > 1 for a in log.rounds)
    most = max(a.attempts for a in log.rounds)
    what = "compare-and-swap re-applications" if log.actor == "wild" else "edits redone"
    print(
        f"  {log.actor:<6} {len(log.writes):>6,} writes {own_lost:>5} lost   "
        f"{what}: {extra:,} (in {redone:,} rounds; at most {most} tries in one)"
    )
    took = sorted((w.t1_ns - w.t0_ns) / 1e6 for w in log.writes)
    if took:
        print(
            f"         {COMMIT_OF[log.actor]}: median {statistics.median(took):.3f} ms, "
            f"p99 {took[max(0, math.ceil(0.99 * len(took)) - 1)]:.3f} ms, max {took[-1]:.3f} ms"
        )


def report(logs: dict[str, ActorLog], checks: list[Check], every: bool) -> None:
    """Per-actor counts, then who erased whom with examples (every loss when `every`)."""
    tracer = Tracer(logs)
    losses = [loss for check in checks for loss in tracer.trace(check)]
    own = [loss for loss in losses if loss.of_round == loss.in_round]
    for name in ACTORS:
        print_actor(logs[name], sum(loss.victim == name for loss in own))
    bad = sum(bool(check.lost or check.seed_lines_lost) for check in checks)
    print(
        f"lost updates: {len(own):,} of {len(checks) * len(ACTORS):,} "
        f"(rounds with a loss: {bad:,} of {len(checks):,}; target: 0)"
    )
    by_wild = sum(loss.eraser == "wild" for loss in own)
    figure(
        "loop + editor + agent writing one file: updates erased by wild's writes",
        f"{by_wild} in {len(checks):,} rounds ({len(own):,} lost overall, erased by the "
        "simulated editor and agent)",
        "0 in ≥ 1,000 rounds (SPEC §10; the editor's and agent's own losses are theirs)",
        by_wild == 0 and len(checks) >= 1000,
    )
    shown = None if every else EXAMPLES
    by_pair: dict[tuple[str, str], list[Loss]] = {}
    for loss in own:
        by_pair.setdefault((loss.victim, loss.eraser), []).append(loss)
    for (victim, eraser), found in sorted(by_pair.items()):
        print(f"  {victim}'s updates erased by {eraser}: {len(found):,}, e.g.")
        for loss in found[:shown]:
            print(f"    round {loss.in_round}: {loss.how}")
    cut = [c for c in checks if c.seed_lines_lost or any(r < c.round for _, r in c.lost)]
    if cut:
        print_cut_short(cut, [loss for loss in losses if loss.of_round < loss.in_round], shown)


def print_cut_short(cut: list[Check], earlier: list[Loss], shown: int | None) -> None:
    """The rounds where a write from a torn read dropped most of the file."""
    lines = sum(check.seed_lines_lost for check in cut)
    print(
        f"the file was cut short in {len(cut):,} rounds, erasing {len(earlier):,} updates of "
        f"earlier rounds and {lines:,} original lines (the referee restored them each time):"
    )
    first_loss = {loss.in_round: loss for loss in reversed(earlier)}
    by_eraser: dict[str, list[Check]] = {}
    for check in cut:
        loss = first_loss.get(check.round)
        by_eraser.setdefault("?" if loss is None else loss.eraser, []).append(check)
    for eraser, rounds in sorted(by_eraser.items()):
        erased = sum(loss.eraser == eraser for loss in earlier)
        print(f"  by {eraser}: {len(rounds):,} rounds, {erased:,} earlier updates, e.g.")
        for check in rounds[:shown]:
            loss = first_loss.get(check.round)
            print(
                f"    round {check.round}: {check.seed_lines_lost} original lines gone, "
                f"{'not traced' if loss is None else loss.how}"
            )


def run(setup: Setup) -> None:
    setup.paths.root.mkdir()
    seed = encode(seed_text(setup.rounds))
    setup.paths.tasks.write_bytes(seed)
    barrier = multiprocessing.Barrier(len(ACTORS) + 1)  # the three actors and the referee
    processes = [
        multiprocessing.Process(target=run_actor, args=(name, setup, barrier), name=name)
        for name in ACTORS
    ]
    start = time.perf_counter()
    for process in processes:
        process.start()
    checks = referee(setup, barrier, seed)
    for process in processes:
        process.join()
    seconds = time.perf_counter() - start
    failed = [process.name for process in processes if process.exitcode != 0]
    if failed:
        raise SystemExit(f"actor process {', '.join(failed)} failed; see its traceback above")
    logs = {name: load_log(Path(setup.folder) / f"{name}.json") for name in ACTORS}
    check = "after its fsync, just before" if setup.late_editor_check else "before writing"
    print(
        f"{setup.rounds:,} rounds in {seconds:.1f} s: wild, an editor and an agent each made "
        f"one edit per round to one tasks.md ({len(seed):,} bytes at the start), "
        f"jitter 0-{setup.jitter_s * 1000:g} ms; editor checks {check} its rename"
    )
    report(logs, checks, setup.every_loss)


def main() -> None:
    parser = argparse.ArgumentParser(description="wild + editor + agent writing one tasks.md")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--jitter-ms", type=float, default=JITTER_MS)
    parser.add_argument(
        "--late-editor-check",
        action="store_true",
        help="the editor re-checks after writing and fsyncing its temp file, not before",
    )
    parser.add_argument("--every-loss", action="store_true", help="print every lost update")
    parser.add_argument("--folder", default=None, help="where to make the temporary .wild/")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder, prefix="bench-lost-") as folder:
        run(
            Setup(
                folder, args.rounds, args.jitter_ms / 1000, args.late_editor_check, args.every_loss
            )
        )


if __name__ == "__main__":
    main()
