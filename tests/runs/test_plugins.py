"""Run backends are found by name: registered in setup.cfg, built in as well."""

from __future__ import annotations

import configparser
from importlib.metadata import EntryPoint
from pathlib import Path

import grimp
import pytest

from tests.runs.helpers import project
from wild.errors import WildError
from wild.runs.backend import BackendContext
from wild.runs.local import LocalBackend
from wild.runs.registry import load_backend

SETUP_CFG = Path(__file__).resolve().parents[2] / "setup.cfg"


def _registered(group: str) -> dict[str, EntryPoint]:
    config = configparser.ConfigParser()
    config.read(SETUP_CFG)
    lines = config["options.entry_points"][group].strip().splitlines()
    pairs = [line.split("=", 1) for line in lines]
    return {name.strip(): EntryPoint(name.strip(), value.strip(), group) for name, value in pairs}


def test_setup_cfg_registers_the_local_backend() -> None:
    assert _registered("wild.run_backends")["local"].load() is LocalBackend


def test_the_local_backend_is_found_by_name(tmp_path: Path) -> None:
    context = BackendContext(project(tmp_path), "tag", {"run_slots": "3"})
    backend = load_backend("local", context)
    assert isinstance(backend, LocalBackend) and backend.pool.cpus == 3
    with pytest.raises(WildError, match='no run backend "pbs"'):
        load_backend("pbs", context)


def test_the_import_graph_sees_the_loop_reach_the_built_in_backends() -> None:
    """Loaded by a string, a backend hid its imports from the contracts (and a cycle:
    backend.py named local.py, which imports backend.py). They are imported by the registry,
    and the interface imports no backend."""
    graph = grimp.build_graph("wild")
    for backend in ("wild.runs.local", "wild.runs.slurm"):
        assert graph.find_shortest_chain("wild.loop.runs_effect", backend) is not None
        assert graph.find_shortest_chain("wild.runs.backend", backend) is None
