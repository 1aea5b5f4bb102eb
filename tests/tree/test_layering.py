"""Data flows one way: command line -> tournament -> executors -> one game (the referee) ->
engine and bots -> protocol, with the store and the ratings beside the tournament. Every
import counts, a lazy one inside a function too: the whole syntax tree of every module is
walked. docs/architecture.md draws the same picture."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The part each top-level name under ``arena`` belongs to.
PART_OF = {
    "engine": "engine",
    "bots": "bots",
    "game": "game",
    "store": "store",
    "report": "report",
    "authoring": "authoring",
    "bench": "bench",
    "text": "basics",
    "errors": "basics",
    "tournament": "tournament",
    "runs": "runs",
    "match": "match",
    "competition": "competition",
    "web": "web",
    "executors": "executors",
    "env": "env",
    "cli": "cli",
    "__main__": "main",
}

_BELOW_GAME = {"engine", "bots", "protocol", "basics"}
#: What each part may import besides itself (the Python standard library aside).
ALLOWED = {
    "protocol": set(),
    "basics": set(),
    "engine": set(),
    "bots": {"engine", "protocol", "basics"},
    "game": _BELOW_GAME,
    "store": {"game"} | _BELOW_GAME,
    "executors": {"game"} | _BELOW_GAME,
    # What a tournament and a match share around their games, below both.
    "runs": {"executors", "store", "game"} | _BELOW_GAME,
    "tournament": {"runs", "executors", "store", "game"} | _BELOW_GAME,
    # Beside the tournament: of it, only its settings (test_match_takes_only_the_tournaments_settings).
    "match": {"tournament", "runs", "executors", "store", "game"} | _BELOW_GAME,
    "report": {"tournament", "store", "game"} | _BELOW_GAME,
    "authoring": {"game"} | _BELOW_GAME,
    # Reinforcement-learning environments: the engine, and the referee's bot layer for opponents.
    "env": {"game"} | _BELOW_GAME,
    "bench": {"tournament", "match", "runs", "executors", "store", "game", "env"} | _BELOW_GAME,
    # The competition server's core: it plays through the tournament and validates through authoring.
    "competition": {"tournament", "runs", "executors", "store", "game", "authoring"} | _BELOW_GAME,
    # The web application: it reads the store and the competition, and never plays a game.
    "web": {"competition", "tournament", "store", "report", "game"} | _BELOW_GAME,
    "cli": {"tournament", "match", "runs", "executors", "store", "game", "report", "authoring", "bench", "competition", "web"} | _BELOW_GAME,
    "main": {"cli"},
}
#: The third-party packages a part may import (any part: msgspec).
THIRD_PARTY = {
    "engine": {"msgspec"},
    "protocol": {"msgspec"},
    "cli": {"msgspec", "trio", "typer", "rich", "dask", "distributed"},
    "tournament": {"msgspec", "trio", "dask", "distributed", "numpy"},  # numpy: the ratings' algebra
    "competition": {"msgspec", "trio", "argon2"},  # argon2: team tokens (the `serve` extra)
    "env": {"msgspec", "trio", "numpy", "gymnasium", "pettingzoo"},  # the rl extra
    "web": {"msgspec", "litestar", "jinja2", "uvicorn", "httpx"},  # the `serve` extra
    # numpy: `arena bench env`'s random masked actions; httpx: `arena bench serve`'s clients (it starts the server as a subprocess, importing none of it).
    "bench": {"msgspec", "trio", "dask", "distributed", "numpy", "httpx"},
}
THIRD_PARTY_DEFAULT = {"msgspec", "trio", "dask", "distributed"}

#: Rules a part does not meet yet, by part, with the reason: each is a strict xfail, so a
#: rule met at last fails until it is taken off this list (none is pending today).
PENDING_IMPORTS: dict[str, str] = {}
PENDING_CYCLES: dict[str, str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for top in ("arena", "protocol") for p in sorted((ROOT / top).rglob("*.py"))}


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module of ours that an imported dotted name is (a name of a module: that
    module's package), or None for a module that is not ours."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> Iterator[tuple[int, str]]:
    """(line, imported name) for every import of ``module``, however deep in a function;
    ``from X import y`` yields ``X.y`` (a submodule, or a name of ``X``)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # ``from package import submodule`` depends on the submodule, not on the
            # package's __init__ (which every submodule's import runs first anyway).
            names = [f"{source}.{alias.name}" for alias in node.names]
            if not all(name in MODULES for name in names):
                yield node.lineno, source
            for name in names:
                if name in MODULES:
                    yield node.lineno, name


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        deps = {_resolve(name) for _, name in _imports(module)}
        graph[module] = {d for d in deps if d is not None and d != module}
    return graph


def part_of(module: str) -> str:
    if module == "protocol" or module.startswith("protocol."):
        return "protocol"
    if module == "arena":
        return "basics"  # the package itself holds only the version
    return PART_OF[module.split(".")[1]]


def _parts(pending: dict[str, str] | None = None) -> list[object]:
    pending = pending or {}
    return [
        pytest.param(part, marks=pytest.mark.xfail(strict=True, reason=pending[part])) if part in pending else part
        for part in ALLOWED
    ]


def test_every_module_belongs_to_a_part() -> None:
    """A new module goes into one of the parts (or a new part gets its rules here)."""
    unplaced = [m for m in MODULES if m.startswith("arena.") and m.split(".")[1] not in PART_OF]
    assert not unplaced, f"modules of no part: {unplaced}"
    assert {part_of(m) for m in MODULES} <= set(ALLOWED)


@pytest.mark.parametrize("part", _parts(PENDING_IMPORTS))
def test_part_imports_only_what_it_may(part: str) -> None:
    graph = _graph()
    wrong = [
        f"{module} imports {dep} ({part_of(dep)})"
        for module, deps in graph.items()
        if part_of(module) == part
        for dep in sorted(deps)
        if part_of(dep) != part and part_of(dep) not in ALLOWED[part]
    ]
    assert not wrong, f"{part} may import only {sorted(ALLOWED[part])}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("part", _parts())
def test_part_imports_no_third_party_package_beyond_its_own(part: str) -> None:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    allowed = THIRD_PARTY.get(part, THIRD_PARTY_DEFAULT)
    wrong = [
        f"{module}:{line} imports {name}"
        for module in MODULES
        if part_of(module) == part
        for line, name in _imports(module)
        if _resolve(name) is None
        and name.split(".")[0] not in stdlib | allowed | {"arena", "protocol"}
    ]
    assert not wrong, "\n".join(wrong)


def test_match_takes_only_the_tournaments_settings() -> None:
    """A match sits beside the tournament, not on it: of the tournament it shares only the
    settings' helpers (default jobs and sandbox), never the runner, schedule or ratings."""
    graph = _graph()
    wrong = [
        f"{module} imports {dep}"
        for module, deps in graph.items()
        if part_of(module) == "match"
        for dep in sorted(deps)
        if part_of(dep) == "tournament" and dep != "arena.tournament.settings"
    ]
    assert not wrong, "\n".join(wrong)


def test_engine_does_no_io() -> None:
    """The rules engine is pure: no processes, sockets, files of the OS or clock."""
    names = {name.split(".")[0] for m in MODULES if part_of(m) == "engine" for _, name in _imports(m)}
    assert not names & {"os", "subprocess", "time", "socket", "trio"}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative: the graph is deep enough for recursion to be a worry)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("part", _parts(PENDING_CYCLES))
def test_no_import_cycle_touches_part(part: str) -> None:
    """No circle of imports, lazy ones included, runs through a module of this part."""
    cycles = [c for c in _cycles(_graph()) if any(part_of(m) == part for m in c)]
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_package_inits_say_what_lives_there() -> None:
    """Every package of the arena opens with a docstring; the packages of the layout keep
    theirs to two lines (what lives there, what it may import) and import nothing heavy."""
    for module, path in MODULES.items():
        if path.name != "__init__.py":
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc, f"{module} has no docstring"
        if module.count(".") == 1 and part_of(module) not in {"engine", "bots", "env"}:  # (public APIs of their own)
            assert len(doc.splitlines()) == 2, f"{module}: {doc!r}"
            assert "import" in doc.splitlines()[1], f"{module}: its second line says what it may import"
            if part_of(module) != "cli":  # the command's entry point may live there
                assert not list(_imports(module)), f"{module} imports at package import time"
