"""The whole research loop on the real single-node Slurm: a sweep naming `backend: slurm`
runs as jobs, a failed job's alert is answered `rerun` (a new job), and the analysis sees
every run's metrics. The loop wakes on each job's exit marker, as on the local backend."""

from __future__ import annotations

from pathlib import Path

from tests.runs.research_support import Agent, project, resolve_tag, run_loop, runs_by_id, sweep_tag
from tests.slurm_harness import SlurmCluster

COMMAND = (
    'if [ "$WILD_PARAM_CRASH" = 1 ] && [ ! -f crashed ]; then touch crashed; exit 3; fi; '
    'echo "{\\"step\\": 1, \\"loss\\": $WILD_PARAM_LR}" >> "$WILD_RUN_DIR/metrics.jsonl"; '
    "true"  # the run's --key=value flags land here
)
SWEEP = {
    "name": "on-slurm",
    "base_command": COMMAND,
    "parameters": {"cfg": [{"lr": 0.1, "crash": 0}, {"lr": 0.2, "crash": 1}]},
    "backend": "slurm",
    "resources": {"cpus": 1, "time": "00:02:00"},
}


def test_a_sweep_on_slurm_runs_reruns_and_is_analysed(slurm: SlurmCluster, tmp_path: Path) -> None:
    paths = project(tmp_path, {})

    def reply(kind: str, work: str, prompt: str) -> str:
        if kind == "planning" and not paths.runs_log.exists():
            return sweep_tag(SWEEP)
        if kind == "alert":
            return resolve_tag(work, "rerun")
        if kind == "analysis":
            assert prompt.count("| finished |") == 2 and "loss=0.2" in prompt
        return "<promise>COMPLETE</promise>\n"

    agent = Agent(reply)
    assert run_loop(paths, agent, max_time_s=240.0).reason == "complete"
    assert agent.kinds() == ["planning", "alert", "analysis", "planning"]
    runs = runs_by_id(paths)
    assert {r["backend"] for r in runs.values()} == {"slurm"}
    crashed = next(r for r in runs.values() if r["params"]["crash"] == 1)
    assert (crashed["status"], crashed["attempt"]) == ("finished", 2)
    assert len({r["job_id"] for r in runs.values()}) == 2 and all(
        str(r["job_id"]).isdigit() for r in runs.values()
    )
