"""Approving a command and loosening the policy are the human's acts, never an agent's.

Two locks, each of which an agent started by wild fails:
- the calling process must not be inside an agent's process tree: its session, group and
  parent chain are checked against the agent and loop that state.json records (and the
  environment each ancestor was started with), not against the caller's own environment,
  which it can clear (`wild.agents.tree`);
- the CLI asks on the human's terminal, `/dev/tty`, which a process without a controlling
  terminal (an agent: wild starts it in a session of its own) cannot open. `--yes` skips the
  question only where that terminal can be opened.

The dashboard asks no question (the click on the page, behind its token, is the human's
answer) but makes the same tree check: a dashboard an agent started itself refuses too.
"""

from __future__ import annotations

import os

from wild.agents import tree
from wild.errors import UsageError, WildError
from wild.parsers.state import LoadedState, parse_state
from wild.paths import WildPaths
from wild.record import record
from wild.store.files import read_bytes

TERMINAL = "/dev/tty"


def inside_agent_tree(paths: WildPaths) -> str | None:
    """Why this process is inside an agent's process tree, or None when it is not."""
    try:
        loaded = parse_state(read_bytes(paths.state), str(paths.state))
    except OSError:
        loaded = None
    agent = loop = None
    if isinstance(loaded, LoadedState):
        agent, loop = loaded.state.agent_process, loaded.state.loop_process
    return tree.inside_reason(tree.chain(os.getpid()), agent, loop)


def terminal_attached() -> bool:
    """Whether this process has a controlling terminal it can open (a human's, not an agent's)."""
    try:
        os.close(os.open(TERMINAL, os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


def ask_terminal(question: str) -> bool:
    """Ask `question` on the controlling terminal; True when the human answers yes."""
    try:
        fd = os.open(TERMINAL, os.O_RDWR | os.O_NOCTTY)
    except OSError as error:
        raise WildError(
            f"cannot ask for confirmation: {TERMINAL} does not open ({error.strerror}); "
            "approving and loosening the policy need a human at a terminal"
        ) from None
    with open(fd, "r+b", buffering=0) as terminal:
        terminal.write(f"{question} [y/N] ".encode("utf-8", "replace"))
        answer = terminal.readline(64)
    return answer.strip().lower() in (b"y", b"yes")


@record
class HumanGate:
    """How a human's act is confirmed: on the terminal (the CLI; `yes`: `--yes` was given),
    or not asked (`on_terminal` False: the dashboard's click, or a loop a human started)."""

    on_terminal: bool = True
    yes: bool = False

    def require(self, paths: WildPaths, act: str) -> None:
        """Raise WildError unless a human does `act` (for example "approve `make test`")."""
        reason = inside_agent_tree(paths)
        if reason is not None:
            raise WildError(
                f"refused to {act}: that is the human's act, and this process is inside an "
                f"agent's process tree ({reason}); run it from your own terminal"
            )
        if not self.on_terminal:
            return
        if self.yes:
            if not terminal_attached():
                raise UsageError(
                    f"--yes needs a terminal ({TERMINAL} does not open here); "
                    "approving and loosening the policy are done by a human at a terminal"
                )
            return
        if not ask_terminal(f"wild: {act}?"):
            raise WildError(f"not done: you did not confirm ({act})")


# The dashboard's actions and a loop a human started: the tree check only.
NOT_ASKED = HumanGate(on_terminal=False)
