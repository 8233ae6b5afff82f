"""A throw-away single-node Slurm (munged, slurmctld, slurmd) in one temp folder, for the tests.

Everything lives under one short folder (`/tmp/wslurm.XXXX`): config, munge key and socket,
state, spool, logs. Clients find it through `SLURM_CONF`. The daemons are our children
(`Popen`), started with a tag in their environment that slurmstepd and the jobs inherit, so
`stop` ends every one of them by pid (never by name: other sessions on this machine run
`sleep` too) and proves nothing is left. Lessons from ../shared/research/slurm/NOTES.md:
the folder must be 0755 for munged, AF_UNIX paths stay under 108 bytes, the daemons' stdio
never points at a caller's pipe, `batch_sched_delay=0` starts a job in about a second, and a
SIGTERMed slurmd leaves its jobs running (hence scancel first, then the tagged sweep).
Installs nothing: `slurm_missing()` says why a test must skip.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

TOOLS = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo")
INSTALL = "apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge"
TAG_VAR = "WILD_TEST_SLURM_CLUSTER"
NODE = "localhost"
START_TIMEOUT_S = 30.0
STOP_GRACE_S = 10.0


def slurm_missing() -> str | None:
    """Why a real Slurm cannot start here (None: it can)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"Slurm is not installed (missing {', '.join(missing)}); run: {INSTALL}"
    if os.geteuid() != 0:
        return "a test Slurm needs root (slurmd runs jobs as their user)"
    return None


def _alive(pid: int) -> bool:
    """Exists and is not a zombie (kill -0 succeeds on zombies)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _free_port(taken: set[int]) -> int:
    """A port nothing listens on, below the ephemeral range (20000-32767)."""
    for _ in range(200):
        port = random.randint(20000, 32767)
        if port in taken:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("0.0.0.0", port))  # noqa: S104 - only probing that it is free
            except OSError:
                continue
        taken.add(port)
        return port
    raise RuntimeError("no free port in 20000-32767")


def _config(folder: Path, ports: tuple[int, int], cpus: int, memory_mb: int) -> str:
    ctld, slurmd = ports
    return f"""# written by tests/slurm_harness.py: a single-node test cluster
ClusterName=wildtest
SlurmctldHost={NODE}
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={folder}/munge/munge.socket
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/run/slurmctld.pid
SlurmdPidFile={folder}/run/slurmd.pid
SlurmctldLogFile={folder}/log/slurmctld.log
SlurmdLogFile={folder}/log/slurmd.log
PlugStackConfig={folder}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
# More CPUs than the machine has (jobs here are tiny); without it the node would be INVAL.
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=30
# Longer than the wrapper's own grace, so a cancelled run still writes its marker.
KillWait=15
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
MailProg=/bin/true
NodeName={NODE} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName=debug Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
"""


@dataclass
class SlurmCluster:
    """One running test cluster; `env` is what a client needs (SLURM_CONF)."""

    folder: Path
    cpus: int
    daemons: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def client(self, *argv: str, timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
        """A Slurm client command against this cluster (never waits forever)."""
        return subprocess.run(
            list(argv), env=self.env, capture_output=True, text=True, timeout=timeout_s, check=False
        )

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = (self.folder / "log" / f"{name}.out").open("wb")
        with log:
            self.daemons[name] = subprocess.Popen(
                argv,
                env={**self.env, TAG_VAR: str(self.folder)},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def _wait(self, name: str, ready: list[str], expect: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                if expect in self.client(*ready, timeout_s=5).stdout:
                    return
            if self.daemons[name].poll() is not None:
                raise RuntimeError(f"{name} exited at start: {self._log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{name} not ready after {START_TIMEOUT_S:g}s: {self._log_tail()}"
                )
            time.sleep(0.1)

    def _log_tail(self) -> str:
        tails = []
        for log in sorted((self.folder / "log").iterdir()):
            with contextlib.suppress(OSError):
                tails.append(f"== {log.name}\n" + "\n".join(log.read_text().splitlines()[-10:]))
        return "\n".join(tails)

    def start(self, memory_mb: int = 4096) -> None:
        """munged, then slurmctld, then slurmd, each waited for; the node is idle on return."""
        munge = self.folder / "munge"
        key = munge / "munge.key"
        subprocess.run(["mungekey", "--create", f"--keyfile={key}", "--force"], check=True)
        key.chmod(0o600)
        socket_path = munge / "munge.socket"
        self._spawn(
            "munged",
            [
                "munged",
                "--foreground",
                "--force",
                f"--key-file={key}",
                f"--socket={socket_path}",
                f"--pid-file={self.folder}/run/munged.pid",
                f"--seed-file={munge}/munged.seed",
                f"--log-file={self.folder}/log/munged.log",
            ],
        )
        probe = f"munge -n -S {socket_path} | unmunge -S {socket_path}"
        self._wait("munged", ["/bin/sh", "-c", probe], "STATUS")
        taken: set[int] = set()
        ports = (_free_port(taken), _free_port(taken))
        self.conf.write_text(_config(self.folder, ports, self.cpus, memory_mb))
        (self.folder / "plugstack.conf").write_text("")  # keep /etc/slurm's plugins out
        self._spawn("slurmctld", ["slurmctld", "-D", "-f", str(self.conf)])
        self._wait("slurmctld", ["scontrol", "ping"], "is UP")
        self._spawn("slurmd", ["slurmd", "-D", "-N", NODE, "-f", str(self.conf)])
        self._wait("slurmd", ["sinfo", "--noheader", "-n", NODE, "-o", "%t"], "idle")

    def _cancel_all(self) -> None:
        """scancel every job while the controller is up, and wait for the queue to empty."""
        if "slurmctld" not in self.daemons or self.daemons["slurmctld"].poll() is not None:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.client("scancel", "--full", "--user=root", timeout_s=10)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if not self.client("squeue", "--noheader", "-o", "%A", timeout_s=10).stdout.strip():
                    return
                time.sleep(0.2)

    def leftovers(self) -> list[int]:
        """Live processes of this cluster: tagged daemons and slurmstepd, or its jobs."""
        tag = f"{TAG_VAR}={self.folder}".encode()
        conf = f"SLURM_CONF={self.conf}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            job = conf in environ and any(v.startswith(b"SLURM_JOB_ID=") for v in environ)
            if (tag in environ or job) and _alive(int(entry.name)):
                found.append(int(entry.name))
        return found

    def stop(self) -> None:
        """Cancel the jobs, stop the daemons by pid, SIGKILL tagged leftovers, remove the folder."""
        self._cancel_all()
        for name in ("slurmd", "slurmctld", "munged"):
            daemon = self.daemons.get(name)
            if daemon is None or daemon.poll() is not None:
                continue
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        for _ in range(20):
            left = self.leftovers()
            if not left:
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        left = self.leftovers()
        if left:
            raise RuntimeError(f"test Slurm left processes running: {left}")
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def running_slurm(cpus: int = 8, memory_mb: int = 4096) -> Iterator[SlurmCluster]:
    """A started cluster; stopped (nothing left running) however the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="wslurm.", dir="/tmp"))
    folder.chmod(0o755)  # munged wants o+x on every folder above its socket
    for sub in ("munge", "state", "spool", "log", "run"):
        (folder / sub).mkdir(mode=0o755)
    (folder / "munge").chmod(0o755)
    cluster = SlurmCluster(folder, cpus)
    try:
        cluster.start(memory_mb)
        yield cluster
    finally:
        cluster.stop()
