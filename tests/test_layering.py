"""Data flows one way (CLI -> tournament -> referee -> engine, bots -> protocol): check imports."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imports(package: Path) -> set[str]:
    names: set[str] = set()
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def test_engine_is_pure() -> None:
    """The rules engine does no I/O and knows nothing above it: stdlib and msgspec only."""
    imported = _imports(ROOT / "arena" / "engine")
    assert not imported & {"trio", "typer", "rich", "protocol", "arena", "os", "subprocess", "time", "socket"}


def test_protocol_is_light() -> None:
    """Python bots import `protocol`: it must not pull in the arena or its heavy dependencies."""
    imported = _imports(ROOT / "protocol")
    assert not imported & {"arena", "trio", "typer", "rich"}


def test_only_the_cli_imports_typer_and_rich() -> None:
    for path in (ROOT / "arena").rglob("*.py"):
        if path.relative_to(ROOT / "arena").parts[0] == "cli":  # the CLI and its renderers
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
        }
        assert not imported & {"typer", "rich"}, path
