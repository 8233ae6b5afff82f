"""Whether a sweep's workdir and skill target exist (seed 002 §5.1: reference-only).

The one I/O step of validation, kept apart from the pure wild.parsers.sweeps. A module is
looked up with the import system's path finders and its source read with `ast`, never
imported, so checking a sweep runs none of the agent's code.
"""

from __future__ import annotations

import ast
import importlib.machinery
import sys
from pathlib import Path

from wild.parsers.sweeps import SweepSpec


def _defines(tree: ast.Module, name: str) -> bool:
    """Whether the module's top level binds `name` (def, class, assignment or import)."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound = {node.name}
        elif isinstance(node, ast.Assign):
            bound = {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound = {node.target.id}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound = {(a.asname or a.name).split(".")[0] for a in node.names}
        else:
            continue
        if name in bound:
            return True
    return False


def _module_origin(module: str, workdir: Path) -> str | None:
    """Where `module` would be imported from in `workdir`, found without importing it."""
    search: list[str] | None = [str(workdir), *sys.path]
    origin: str | None = None
    for part in module.split("."):
        found = importlib.machinery.PathFinder.find_spec(part, search)
        if found is None:
            return None
        origin = found.origin
        search = list(found.submodule_search_locations or [])
    return origin or "namespace package"


def _function_problem(target: str, workdir: Path) -> str | None:
    module, _, function = target.partition(":")
    origin = _module_origin(module, workdir)
    if origin is None:
        return f'"skill.target" {target!r}: no module {module!r} importable from {workdir}'
    if not origin.endswith(".py"):
        return None  # a compiled or namespace module: its names cannot be read without importing
    try:
        tree = ast.parse(Path(origin).read_bytes(), filename=origin)
    except (OSError, SyntaxError, ValueError, RecursionError) as error:
        return f'"skill.target" {target!r}: {origin} cannot be read ({error})'
    if not _defines(tree, function):
        return f'"skill.target" {target!r}: {origin} defines no top-level {function!r}'
    return None


def target_problems(spec: SweepSpec, project: Path) -> list[str]:
    """Errors for a workdir or skill target that does not exist; [] when all exist."""
    workdir = project / spec.workdir
    if not workdir.is_dir():
        return [f'"workdir" {spec.workdir!r}: no folder {workdir}; give a folder of the project']
    skill = spec.skill
    if skill is None:
        return []
    if skill.kind == "python_function":
        problem = _function_problem(skill.target, workdir)
        return [problem] if problem else []
    if not (workdir / skill.target).is_file():
        return [
            f'"skill.target" {skill.target!r}: no file {workdir / skill.target}; '
            f"reference an existing {skill.kind.replace('_', ' ')} (relative to the workdir)"
        ]
    return []
