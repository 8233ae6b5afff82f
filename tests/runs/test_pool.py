"""The local pool's decisions: which queued runs fit, and which GPUs each one gets."""

from __future__ import annotations

import types

import pytest

from wild.errors import WildError
from wild.parsers.runs import Resources, RunRecord
from wild.runs.local import parse_nvidia_smi, parse_visible_devices, run_slots
from wild.runs.pool import Pool, free, never_fits, plan


def run(run_id: str, cpus: int = 1, gpus: int = 0, gpu_ids: list[str] | None = None) -> RunRecord:
    raw = {"gpu_ids": gpu_ids} if gpu_ids is not None else {}
    return RunRecord(
        id=run_id,
        sweep="s",
        params={},
        resolved_instruction="true",
        status="queued",
        resources=Resources(cpus=cpus, gpus=gpus),
        raw=types.MappingProxyType(raw),
    )


def test_gpus_are_given_out_once_each_and_the_taken_ones_are_known() -> None:
    pool = Pool(cpus=8, gpus=("0", "1", "2"))
    active = [run("a", gpus=1, gpu_ids=["1"])]
    chosen = plan(pool, [run("b", gpus=1), run("c", gpus=1), run("d", gpus=1)], active)
    assert [(r.id, gpus) for r, gpus in chosen] == [("b", ("0",)), ("c", ("2",))]


def test_an_active_gpu_run_without_recorded_ids_still_holds_its_count() -> None:
    pool = Pool(cpus=8, gpus=("0", "1"))
    assert free(pool, [run("adopted", gpus=1)]).gpus == ("0",)


def test_runs_wait_for_cpu_slots_first_fit_in_queue_order() -> None:
    pool = Pool(cpus=3)
    queued = [run("a", cpus=2), run("b", cpus=2), run("c", cpus=1)]
    assert [r.id for r, _ in plan(pool, queued, [run("x")])] == ["a"]
    assert [r.id for r, _ in plan(pool, queued, [])] == ["a", "c"]


def test_a_run_that_can_never_fit_is_handed_on_to_be_refused() -> None:
    pool = Pool(cpus=2, gpus=("0",))
    assert "needs 4 CPUs" in (never_fits(pool, run("big", cpus=4)) or "")
    assert "needs 2 GPUs" in (never_fits(pool, run("gpu", gpus=2)) or "")
    chosen = plan(pool, [run("big", cpus=4), run("ok")], [])
    assert [(r.id, gpus) for r, gpus in chosen] == [("big", ()), ("ok", ())]


def test_gpu_and_slot_sources_parse() -> None:
    assert parse_visible_devices("0, 2") == ("0", "2")
    assert parse_visible_devices("") == () and parse_visible_devices("-1") == ()
    smi = "GPU 0: NVIDIA A100 (UUID: GPU-1)\nGPU 1: NVIDIA A100 (UUID: GPU-2)\nnoise\n"
    assert parse_nvidia_smi(smi) == ("0", "1")
    assert run_slots({"run_slots": "3"}) == 3 and run_slots({}) >= 1


def test_bad_run_slots_are_refused_with_the_flag_named() -> None:
    for bad in ("0", "many", "-2"):
        with pytest.raises(WildError, match="--run-slots"):
            run_slots({"run_slots": bad})
