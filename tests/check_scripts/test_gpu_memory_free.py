"""gpu_memory_free.py: some GPU (or the named one) has MIB free, as nvidia-smi reports it."""

from __future__ import annotations

import pytest

from tests.check_scripts.conftest import Ran, Scripts

SCRIPT = "gpu_memory_free.py"
QUERY = "--query-gpu=index,memory.free --format=csv,noheader,nounits"


def test_any_gpu_with_enough_free(scripts: Scripts) -> None:
    scripts.fake("nvidia-smi", "0, 1024\n1, 20480\n2, [N/A]\n")
    assert scripts.run(SCRIPT, "16000") == Ran(0, "GPU 1 has 20480 MiB free (need 16000)")
    assert scripts.argv("nvidia-smi") == [QUERY]
    assert scripts.run(SCRIPT, "30000") == Ran(1, "at most 20480 MiB free, on GPU 1 (need 30000)")


def test_only_the_named_gpu_counts(scripts: Scripts) -> None:
    scripts.fake("nvidia-smi", "0, 1024\n1, 20480\n2, [N/A]\n")
    assert scripts.run(SCRIPT, "16000", "0") == Ran(
        1, "at most 1024 MiB free, on GPU 0 (need 16000)"
    )
    assert scripts.run(SCRIPT, "16000", "2") == Ran(
        1, "nvidia-smi reported no free memory for GPU 2"
    )
    assert scripts.run(SCRIPT, "16000", "1").code == 0


def test_a_failing_nvidia_smi_is_not_yet(scripts: Scripts) -> None:
    scripts.fake(
        "nvidia-smi",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        code=9,
    )
    assert scripts.run(SCRIPT, "1") == Ran(
        1,
        "nvidia-smi failed (exit 9): NVIDIA-SMI has failed because it couldn't communicate "
        "with the NVIDIA driver.",
    )
    scripts.fake("nvidia-smi", "")
    assert scripts.run(SCRIPT, "1") == Ran(1, "nvidia-smi reported no free memory for any GPU")


def test_without_nvidia_smi_it_is_a_usage_error(scripts: Scripts) -> None:
    assert scripts.run(SCRIPT, "1") == Ran(2, "gpu_memory_free.py: nvidia-smi is not on PATH")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ((), "usage: gpu_memory_free.py MIB [GPU_INDEX]"),
        (("lots",), "gpu_memory_free.py: MIB must be a whole number, not 'lots'"),
        (("1", "GPU-3"), "gpu_memory_free.py: GPU_INDEX must be a whole number, not 'GPU-3'"),
    ],
)
def test_usage_errors(scripts: Scripts, args: tuple[str, ...], line: str) -> None:
    scripts.fake("nvidia-smi", "0, 1024\n")
    assert scripts.run(SCRIPT, *args) == Ran(2, line)
    assert scripts.argv("nvidia-smi") == []
