"""SIGTERM stops `arena run` as Ctrl-C does at every moment, before the games too."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import proc_helpers

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}


def test_sigterm_while_bots_start_exits_130_saying_so_and_leaves_no_process(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    for name in ("random", "greedy"):
        shutil.copytree(ROOT / "example_bots" / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    silent = bots / "silent"  # never answers hello: the run waits for it (10 s by default)
    silent.mkdir()
    shutil.copyfile(ROOT / "tests" / "data" / "bots" / "testbot.py", silent / "testbot.py")
    (silent / "bot.toml").write_text('name = "silent"\nrun = ["{python}", "testbot.py", "--mode", "hello_silent"]\n')
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", "--bots", str(bots), "--results", str(results), "--players", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=tmp_path,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "silent" not in " ".join(proc_helpers.processes_in(tmp_path).values()):
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err.decode()
    assert "interrupted" in err.decode() and "Traceback" not in err.decode()
    time.sleep(0.5)
    assert proc_helpers.processes_in(tmp_path) == {}
