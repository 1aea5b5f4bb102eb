"""The top of the repository shows the parts and nothing else (the package, the protocol,
the example bots, the tests, the docs, where results go), and the developer tools kept
beside the benchmark tests (tests/bench/tools/) are scripts that say how to run them,
never collected by pytest as tests."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tests" / "bench" / "tools"
TOP = {
    "pyproject.toml", "README.md", "arena", "protocol", "example_bots", "tests", "results", "docs",
    ".ci", ".gitignore",
}


def test_the_top_of_the_repository_is_the_parts_only() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: what is committed cannot be listed")
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    top = {line.split("/", 1)[0] for line in listed.splitlines() if line}
    assert top <= TOP, sorted(top - TOP)


def test_each_developer_tool_says_what_it_measures_and_how_to_run_it() -> None:
    tools = sorted(TOOLS.glob("*.py"))
    assert [t.name for t in tools] == ["capture_exchange.py", "hostile_table.py", "strength.py"]
    for tool in tools:
        doc = ast.get_docstring(ast.parse(tool.read_text(encoding="utf-8")))
        assert doc, tool.name
        assert f"python3 tests/bench/tools/{tool.name}" in doc, tool.name
        assert tool.name in (TOOLS / "README.md").read_text(encoding="utf-8"), tool.name


def test_pytest_collects_no_developer_tool_as_a_test() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(TOOLS)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 5, out.stdout + out.stderr  # pytest's "no tests were collected"
    assert "no tests collected" in out.stdout, out.stdout
