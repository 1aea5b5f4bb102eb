"""`arena serve`'s watch over the ladder process (a real child: killed with SIGKILL, it is
started again; stopped, its whole process group goes) and the loopback check behind the
warning for --host."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from arena.web.server import LadderChild, is_loopback

# A child that starts a grandchild in its group, then waits: both must go when it is stopped.
CHILD = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); time.sleep(120)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_killed_ladder_is_started_again_and_stop_ends_its_group() -> None:
    said: list[str] = []
    child = LadderChild([sys.executable, "-c", CHILD], say=said.append)
    child.start()
    try:
        first = child.proc
        assert first is not None
        time.sleep(0.5)
        os.kill(first.pid, signal.SIGKILL)
        give_up = time.monotonic() + 20
        while child.restarts == 0 and time.monotonic() < give_up:
            time.sleep(0.1)
        assert child.restarts == 1 and child.proc is not None and child.proc.pid != first.pid
        assert said and f"pid {first.pid}" in said[0] and "-9" in said[0]
        second = child.proc
        time.sleep(0.5)
        group = [int(p) for p in os.listdir("/proc") if p.isdigit() and _pgid(int(p)) == second.pid]
        assert len(group) >= 2  # the child and its grandchild
    finally:
        child.stop(grace_s=5)
    assert second.poll() is not None
    time.sleep(0.2)
    assert not any(_alive(pid) for pid in group)
    time.sleep(2.5)
    assert child.restarts == 1  # a ladder asked to stop is not started again


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.8.0.1", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("example.org", False),
])
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
