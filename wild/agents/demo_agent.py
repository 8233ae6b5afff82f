"""The scripted agent `wild demo` runs: a real subprocess that reads its work from the
environment and edits `.wild/` files the way a coding agent would.

Run as `python -m wild.agents.demo_agent`; the prompt arrives on stdin (custom-agent style).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from wild.parsers import human as human_md

JOB = """\
import subprocess, sys, time
from pathlib import Path
time.sleep(0.5)
subprocess.run([sys.executable, "-m", "wild", "--alert", "--severity", "warning",
    "--source", "train-job-1", "--type", "loss-spike",
    "--description", "loss jumped from 2.1 to 9.8 at step 300",
    "--choice", "lower the learning rate", "--choice", "ignore"], check=True,
    stdout=subprocess.DEVNULL)
time.sleep(1.5)
Path("results").mkdir(exist_ok=True)
Path("results/metrics.json").write_text('{"lr_3e-4": 1.92, "lr_1e-3": 1.92}')
Path("results/train.done").write_text("ok")
"""

BARRIER = """
## [WAITING] train-done
- Type: file-exists
- File: results/train.done
- Interval: 1s
- Blocks: task-003
"""


def say(text: str) -> None:
    print(text, flush=True)


def tick(wild_dir: Path, task_id: str) -> None:
    """Tick a task's box in tasks.md, as an agent editing the file would."""
    path = wild_dir / "tasks.md"
    text = path.read_text()
    path.write_text(text.replace(f"- [/] [P1] {task_id}:", f"- [x] [P1] {task_id}:"))


def human_answered(wild_dir: Path) -> bool:
    doc = human_md.parse((wild_dir / "human.md").read_text())
    return any(h.status == "processed" and "keep" in h.content.lower() for h in doc.inputs)


def main() -> int:
    wild_dir = Path(os.environ["WILD_DIR"])
    work_type = os.environ["WILD_WORK_TYPE"]
    work_id = os.environ["WILD_WORK_ID"]
    sys.stdin.read()  # the prompt; this agent's script does not need to read it
    if work_type == "human-input":
        say("Read the human's input and updated the plan.")
        say("<promise>HUMAN_INPUT_PROCESSED</promise>")
    elif work_type == "alert":
        say("Lowered the learning rate in config.yaml after the loss spike.")
        resolution = orjson.dumps({"id": work_id, "choice": "lower the learning rate"}).decode()
        say(f"<resolve_alert>{resolution}</resolve_alert>")
    elif work_type == "monitoring":
        say("The training job is still running; nothing to fix.")
        say("<promise>MONITORING_COMPLETE</promise>")
    elif work_type == "planning":
        say("Checked the goal once more: the model is trained and the report is written.")
        say("<promise>COMPLETE</promise>")
    elif work_id == "task-001":
        Path("data").mkdir(exist_ok=True)
        Path("data/train.csv").write_text("x,y\n1,2\n")
        say("Preprocessed the data into data/train.csv.")
        say("<promise>TASK_COMPLETE</promise>")
    elif work_id == "task-002":
        subprocess.Popen(  # the training job outlives this agent run, as a real job would
            [sys.executable, "-c", JOB],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open(wild_dir / "barriers.md", "a") as handle:
            handle.write(BARRIER)
        tick(wild_dir, "task-002")
        say("Launched the training job and added barrier train-done; ticked task-002 myself.")
    elif work_id == "task-003" and not human_answered(wild_dir):
        metrics = orjson.loads(Path("results/metrics.json").read_bytes())
        say(f"Both runs reached the same loss: {metrics}.")
        say("<promise>NEED_HUMAN_INPUT</promise>")
        say("<reason>Both learning rates tie at loss 1.92; which run should I keep?</reason>")
        say("<urgency>medium</urgency>")
    elif work_id == "task-003":
        Path("results/report.md").write_text("Kept the 3e-4 run as the human asked.\n")
        say("Wrote results/report.md.")
        say("<promise>TASK_COMPLETE</promise>")
    else:
        say(f"Nothing scripted for {work_type} {work_id}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
