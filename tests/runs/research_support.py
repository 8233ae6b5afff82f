"""An in-process loop over a real project with the real watcher and the real local backend;
only the agent is a Python function of its work and prompt (as a real agent, it reads them)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest
from wild.agents.signals import parse_signals
from wild.agents.sweep_tags import sweeps_in_reply
from wild.barriers.approvals import approve
from wild.commands.init import init_wild
from wild.loop import Loop, LoopOptions, LoopResult
from wild.loop.hooks import Hooks
from wild.paths import WildPaths
from wild.runs.resolve import program

Reply = Callable[[str, str, str], str]  # (work type, work id, prompt) -> the agent's reply


def sweep_tag(spec: Mapping[str, object]) -> str:
    return "<sweep>\n" + json.dumps(spec) + "\n</sweep>\n"


def resolve_tag(alert_id: str, choice: str) -> str:
    return (
        "<resolve_alert>"
        + json.dumps({"alert_id": alert_id, "choice": choice})
        + "</resolve_alert>\n"
    )


def approve_sweeps(paths: WildPaths, text: str) -> None:
    """As a human who read them would (`wild --approve <sweep id>`): each `<sweep>`'s program
    approved for the project, so its runs pass the command gate of the default policy."""
    for spec in sweeps_in_reply(text).specs:
        approve(paths.project, program(spec, python=sys.executable))


class Agent:
    """Calls `reply` with each piece of work; records (work type, prompt) per iteration."""

    def __init__(self, reply: Reply, *, approved: bool = True) -> None:
        self.reply = reply
        self.seen: list[tuple[str, str]] = []
        self.during: Callable[[], None] | None = None  # runs inside the next agent run
        self.approved = approved  # the human approves each sweep's program the agent proposes

    def __call__(self, request: AgentRequest) -> AgentRun:
        kind, prompt = request.env["WILD_WORK_TYPE"], Path(request.env["WILD_PROMPT_FILE"])
        self.seen.append((kind, prompt.read_text()))
        if self.during is not None:
            during, self.during = self.during, None
            during()
        text = self.reply(kind, request.env["WILD_WORK_ID"], self.seen[-1][1])
        if self.approved:
            approve_sweeps(WildPaths(Path(request.env["WILD_DIR"])), text)
        request.log_path.write_text(text)
        return AgentRun(
            exit_code=0, timed_out=False, cancelled=False, duration_s=0.1, final_text=text,
            signals=parse_signals(text), cost_usd=None, input_tokens=None, output_tokens=None,
            rate_limited=False, rate_limit_reset=None, log_path=request.log_path,
            output_bytes=len(text),
        )  # fmt: skip

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.seen]


def project(tmp_path: Path, files: dict[str, str]) -> WildPaths:
    root = tmp_path / "proj"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    return paths


def run_loop(
    paths: WildPaths, agent: Agent, *, slots: int = 2, max_time_s: float = 60.0
) -> LoopResult:
    options = LoopOptions(goal="find the best setting", max_time_s=max_time_s, run_slots=slots)
    hooks = Hooks(barrier_checker=False, signals=False)
    return Loop(paths, options, runner=agent, out=lambda _: None, hooks=hooks).run()


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def runs_by_id(paths: WildPaths) -> dict[str, dict[str, Any]]:
    return {str(r["id"]): r for r in lines(paths.runs_log) if r["kind"] == "run"}
