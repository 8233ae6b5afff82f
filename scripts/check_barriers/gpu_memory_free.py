#!/usr/bin/env python3
"""Barrier check: a GPU has at least MIB mebibytes of memory free (asks `nvidia-smi`).

usage: gpu_memory_free.py MIB [GPU_INDEX]

Without GPU_INDEX any GPU will do; with it, only that one counts. Exit 0 when a GPU has at
least MIB free, 1 when none has (or nvidia-smi failed this time), 2 on a usage error or when
`nvidia-smi` is not on PATH; one line of output says why.
"""

from __future__ import annotations

import subprocess
import sys

USAGE = "usage: gpu_memory_free.py MIB [GPU_INDEX]"
QUERY = ["nvidia-smi", "--query-gpu=index,memory.free", "--format=csv,noheader,nounits"]
TIMEOUT_S = 60


def free_by_gpu(output: str) -> dict[str, int]:
    """{index: free MiB} from nvidia-smi's CSV lines; lines it could not measure are left out."""
    free = {}
    for line in output.splitlines():
        index, _, mib = (part.strip() for part in line.partition(","))
        if index and mib.isdigit():  # `[N/A]` or `[Unknown Error]` measure nothing
            free[index] = int(mib)
    return free


def judge(argv: list[str]) -> tuple[int, str]:
    if argv[:1] in (["-h"], ["--help"]):
        return 0, USAGE
    if len(argv) not in (1, 2):
        return 2, USAGE
    if not argv[0].isdigit():
        return 2, f"gpu_memory_free.py: MIB must be a whole number, not {argv[0]!r}"
    need = int(argv[0])
    gpu = argv[1] if len(argv) == 2 else None
    if gpu is not None and not gpu.isdigit():
        return 2, f"gpu_memory_free.py: GPU_INDEX must be a whole number, not {gpu!r}"
    try:
        done = subprocess.run(QUERY, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except FileNotFoundError:
        return 2, "gpu_memory_free.py: nvidia-smi is not on PATH"
    except subprocess.TimeoutExpired:
        return 1, f"nvidia-smi gave no answer within {TIMEOUT_S}s"
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return 1, f"nvidia-smi failed (exit {done.returncode})" + (f": {said[0]}" if said else "")
    free = free_by_gpu(done.stdout)
    if gpu is not None:
        free = {gpu: free[gpu]} if gpu in free else {}
    if not free:
        which = f"GPU {gpu}" if gpu is not None else "any GPU"
        return 1, f"nvidia-smi reported no free memory for {which}"
    best = max(free, key=lambda index: free[index])
    if free[best] >= need:
        return 0, f"GPU {best} has {free[best]} MiB free (need {need})"
    return 1, f"at most {free[best]} MiB free, on GPU {best} (need {need})"


if __name__ == "__main__":
    code, line = judge(sys.argv[1:])
    print(line, file=sys.stderr if code == 2 else sys.stdout)
    sys.exit(code)
