"""Run a shipped check script as a real process, with fake commands (squeue, nvidia-smi …)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from wild.paths import CHECK_SCRIPTS_DIR

# What the fakes stand in for: a real one installed on the machine (CI installs Slurm for
# tests/slurm) must stay out of sight, or "without sacct" would find /usr/bin/sacct.
STOOD_IN = frozenset({"squeue", "sacct", "sbatch", "scancel", "scontrol", "sinfo", "nvidia-smi"})


def _system_bin(folder: Path) -> Path:
    """/usr/bin and /bin as links in one folder, without the commands the fakes stand in for."""
    folder.mkdir()
    for source in (Path("/usr/bin"), Path("/bin")):
        for entry in source.iterdir():
            link = folder / entry.name
            if entry.name not in STOOD_IN and not link.exists() and not link.is_symlink():
                link.symlink_to(entry)
    return folder


@dataclass(frozen=True)
class Ran:
    code: int
    line: str  # the one line the script printed, on stdout or (usage errors) stderr


class Scripts:
    """A project folder and a PATH of fakes; `run` executes a script through its shebang."""

    def __init__(self, root: Path, system: Path) -> None:
        self.project = root / "project"
        self.project.mkdir()
        self.bin = root / "bin"
        self.bin.mkdir()
        # `#!/usr/bin/env python3` finds this interpreter; PATH is this folder, then /usr/bin and
        # /bin without what the fakes stand in for.
        (self.bin / "python3").symlink_to(sys.executable)
        self.system = system

    def fake(self, name: str, stdout: str = "", *, stderr: str = "", code: int = 0) -> Path:
        """A fake command printing `stdout`/`stderr` and exiting `code`; its argv goes to a log."""
        (self.bin / f"{name}.out").write_text(stdout)
        (self.bin / f"{name}.err").write_text(stderr)
        script = self.bin / name
        script.write_text(
            "#!/bin/sh\n"
            'printf "%s\\n" "$*" >> "$0.argv"\n'
            'cat "$0.out"\n'
            'cat "$0.err" >&2\n'
            f"exit {code}\n"
        )
        script.chmod(0o755)
        return script

    def argv(self, name: str) -> list[str]:
        path = self.bin / f"{name}.argv"
        return path.read_text().splitlines() if path.exists() else []

    def run(self, script: str, *args: str) -> Ran:
        env = {"PATH": f"{self.bin}:{self.system}", "HOME": str(self.project)}
        done = subprocess.run(
            [str(CHECK_SCRIPTS_DIR / script), *args],
            cwd=self.project,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        printed = done.stdout if done.returncode != 2 else done.stderr
        assert (done.stdout if done.returncode == 2 else done.stderr) == ""
        assert printed.endswith("\n") and printed.count("\n") == 1, printed  # one line
        return Ran(done.returncode, printed.rstrip("\n"))


@pytest.fixture(scope="session")
def system_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _system_bin(tmp_path_factory.mktemp("system") / "bin")


@pytest.fixture
def scripts(tmp_path: Path, system_bin: Path) -> Scripts:
    return Scripts(tmp_path, system_bin)
