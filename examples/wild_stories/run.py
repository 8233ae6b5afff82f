"""What each `examples/<story>/run.sh` runs: the story copied into a temporary folder, then
the loop with the scripted story agent (or `--agent NAME`), or `--direct` without the loop.

`--direct` runs the sweep's grid in subprocesses (wild_stories.direct) and the scripted
agent's analysis step, so the runs and the report are real even where no loop is wanted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wild.commands.demo import copy_story, goal_of
from wild.parsers import human as human_md
from wild.paths import WildPaths
from wild.runs.local import nvidia_smi_gpus, parse_visible_devices
from wild.store.files import read_text
from wild.store.self_writes import SelfWrites
from wild.wake import FolderWatcher, Waker
from wild_stories.agent import story_step
from wild_stories.direct import run_sweep

# A story's GPU size, if it has one: the sweep `--scale gpu` runs instead of sweep.json.
GPU_SWEEP = "sweep-gpu.json"


def human_answer(story: Path) -> str | None:
    """The story's scripted human's answer (its `Human answer:` line in story.md), if any."""
    for line in (story / "story.md").read_text().splitlines():
        if line.startswith("Human answer:"):
            return line.split(":", 1)[1].strip()
    return None


def use_scale(story: Path, project: Path, scale: str) -> None:
    """`--scale gpu`: the story's sweep-gpu.json becomes the project's sweep.json."""
    if scale == "gpu" and (story / GPU_SWEEP).is_file():
        spec = json.loads((story / GPU_SWEEP).read_text())
        gpus = visible_gpus()
        (project / "sweep.json").write_text(json.dumps(gpu_sweep(spec, gpus), indent=2) + "\n")
        where = f"GPU {', '.join(gpus)}" if gpus else "the CPU (no GPU found)"
        print(f"The {story.name} story runs its GPU size ({GPU_SWEEP}) on {where}", flush=True)
    elif scale == "gpu":
        print(f"The {story.name} story has no GPU size: running its CPU sweep", flush=True)


def visible_gpus() -> tuple[str, ...]:
    """The GPUs runs here may use: CUDA_VISIBLE_DEVICES when set, else nvidia-smi's."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return parse_visible_devices(visible) if visible is not None else nvidia_smi_gpus()


def gpu_sweep(spec: dict[str, Any], gpus: Sequence[str]) -> dict[str, Any]:
    """The GPU sweep as run here: with no GPU its runs ask for none (the skill then runs
    its GPU size on the CPU), where a GPU request would leave them waiting forever."""
    if gpus:
        return spec
    return {**spec, "resources": {**spec.get("resources", {}), "gpus": 0}}


def run_direct(project: Path) -> int:
    spec = json.loads((project / "sweep.json").read_text())
    run_sweep(project, spec, slots=os.cpu_count() or 2)  # a GPU story's runs share the GPU
    reply = story_step("Analyze the finished sweep.", project, work_type="analysis")
    print(reply, end="")
    return 0


def run_loop(project: Path, goal: str, agent: str | None, answer: str | None) -> int:
    """The loop on the story; with the scripted agent, `answer` stands in for the human: it
    is given (as `wild --human-input`) when wild asks a question, as you would from your
    editor. With a real agent, you answer yourself."""
    paths = WildPaths(project / ".wild")
    command = [sys.executable, "-m", "wild", goal, "--dir", str(paths.root)]
    if agent:
        command += ["--agent", agent]
    else:
        command += ["--agent-cmd", f"{sys.executable} -m wild_stories.agent"]
    command += ["--policy", "autonomous", "--max-iterations", "40"]
    print("running:", " ".join(command), flush=True)
    if answer is not None and agent is None:  # the folder the simulated human watches
        init = [sys.executable, "-m", "wild", "--init", "--dir", str(paths.root)]
        subprocess.run(init, cwd=project, check=True, stdout=subprocess.DEVNULL)
    loop = subprocess.Popen(command, cwd=project)
    if answer is not None and agent is None:
        answer_when_asked(paths, answer, loop)
    return loop.wait()


def answer_when_asked(paths: WildPaths, answer: str, loop: subprocess.Popen[bytes]) -> None:
    """Wait on the folder's file events until wild asks (a QUESTION in human.md), answer once."""
    with FolderWatcher(paths.root, Waker(), SelfWrites()) as watcher:
        while loop.poll() is None:
            doc = human_md.parse(read_text(paths.human))
            if any(entry.status == "question" for entry in doc.inputs):
                print(f'🧑 (the human answers) wild --human-input "{answer}"', flush=True)
                human = [sys.executable, "-m", "wild", "--human-input", answer]
                subprocess.run([*human, "--dir", str(paths.root)], check=True)
                return
            watcher.wait_for_work(1.0)  # a file event, or a second to see the loop ended


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="run.sh", description=__doc__.splitlines()[0])
    parser.add_argument("story", type=Path)
    parser.add_argument("--agent", help="run the story with this agent (e.g. claude)")
    parser.add_argument("--direct", action="store_true", help="run the sweep without the loop")
    parser.add_argument("--keep-in", type=Path, help="a folder to use instead of a temporary one")
    parser.add_argument(
        "--scale",
        choices=("cpu", "gpu"),
        default="cpu",
        help="cpu (default): minutes on a laptop's CPU; gpu: the story's larger sweep-gpu.json "
        "(CUDA when present), or its CPU sweep where it has none",
    )
    args = parser.parse_args(argv)
    story = args.story.resolve()
    project = args.keep_in or Path(tempfile.mkdtemp(prefix=f"wild-{story.name}-"))
    project.mkdir(parents=True, exist_ok=True)
    copy_story(story, project)
    use_scale(story, project, args.scale)
    print(f"The {story.name} story runs in {project}", flush=True)
    answer = human_answer(story)
    code = (
        run_direct(project)
        if args.direct
        else run_loop(project, goal_of(story), args.agent, answer)
    )
    print(f"\nArtifacts: {project / 'results'} (runs: {WildPaths(project / '.wild').runs})")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
