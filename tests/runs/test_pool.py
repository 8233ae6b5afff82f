"""The local pool's decisions: which queued runs fit, and which GPUs each one gets."""

from __future__ import annotations

import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wild.errors import WildError
from wild.parsers.runs import Resources, RunRecord
from wild.runs.local import parse_nvidia_smi, parse_visible_devices, run_slots
from wild.runs.pool import Pool, free, never_fits, plan


def run(run_id: str, cpus: int = 1, gpus: float = 0, gpu_ids: list[str] | None = None) -> RunRecord:
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


def test_fractional_runs_pack_onto_one_gpu_and_whole_runs_keep_whole_gpus() -> None:
    pool = Pool(cpus=16, gpus=("0", "1"))
    quarters = [run(f"q{i}", gpus=0.25) for i in range(5)]
    chosen = plan(pool, quarters, [])
    assert [gpus for _r, gpus in chosen] == [("0",)] * 4 + [("1",)]
    # A whole run never lands on a GPU a fraction uses, and a fraction never on a whole one.
    active = [run("q0", gpus=0.25, gpu_ids=["0"])]
    whole_then_quarter = [run("w", gpus=1), run("w2", gpus=1), run("q", gpus=0.25)]
    chosen = plan(pool, whole_then_quarter, active)
    assert [(r.id, gpus) for r, gpus in chosen] == [("w", ("1",)), ("q", ("0",))]
    assert free(pool, active).gpus == ("1",)


def test_tenths_fill_a_gpu_exactly() -> None:
    pool = Pool(cpus=32, gpus=("0",))
    chosen = plan(pool, [run(f"t{i}", gpus=0.1) for i in range(11)], [])
    assert len(chosen) == 10


_REQUESTS = st.one_of(
    st.integers(min_value=0, max_value=2).map(float),
    st.sampled_from([0.1, 0.2, 0.25, 0.3, 0.5, 0.75, 0.9]),
)


@settings(max_examples=200, deadline=None)
@given(
    gpu_count=st.integers(min_value=0, max_value=3),
    first=st.lists(_REQUESTS, max_size=12),
    second=st.lists(_REQUESTS, max_size=12),
)
def test_no_gpu_is_ever_over_full_and_whole_runs_never_share(
    gpu_count: int, first: list[float], second: list[float]
) -> None:
    pool = Pool(cpus=64, gpus=tuple(str(i) for i in range(gpu_count)))
    active: list[RunRecord] = []
    for batch, requests in enumerate((first, second)):  # a second step sees the first's runs
        queued = [run(f"{batch}-{i}", gpus=g) for i, g in enumerate(requests)]
        for chosen, ids in plan(pool, queued, active):
            if never_fits(pool, chosen) is None:
                active.append(run(chosen.id, gpus=chosen.resources.gpus, gpu_ids=list(ids)))
    load: dict[str, float] = {}
    holders: dict[str, list[RunRecord]] = {}
    for held in active:
        ids = held.raw["gpu_ids"]
        need = held.resources.gpus
        assert len(ids) == (0 if need == 0 else max(1, int(need)))
        for gpu in ids:
            load[gpu] = load.get(gpu, 0.0) + (need if need < 1 else 1.0)
            holders.setdefault(gpu, []).append(held)
    assert all(total <= 1.0 + 1e-9 for total in load.values())
    for runs_on_gpu in holders.values():
        if any(held.resources.gpus >= 1 for held in runs_on_gpu):
            assert len(runs_on_gpu) == 1
