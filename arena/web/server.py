"""``arena serve``: the web application under uvicorn, and the ladder process beside it.

The web process never plays a game: :class:`LadderChild` starts ``arena ladder`` (the same
results folder and competition file) as a child in a process group of its own, watches it,
starts it again when it dies (waiting longer after each quick death, up to a minute), and on
exit asks it to stop (SIGTERM: it finishes or abandons its games in flight cleanly) and kills
its group if it has not stopped within the grace time.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: How long the ladder has to stop after SIGTERM before its process group is killed.
STOP_GRACE_S = 20.0
#: A ladder that ran this long before it died is started again at once.
HEALTHY_S = 60.0
MAX_BACKOFF_S = 60.0


def is_loopback(host: str) -> bool:
    """Whether ``host`` binds to this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def ladder_command(results: Path, config: Path | None) -> list[str]:
    cmd = [sys.executable, "-m", "arena", "ladder", "--results", str(results)]
    if config is not None:
        cmd += ["--config", str(config)]
    return cmd


class LadderChild:
    """A child process kept running: started by :meth:`start`, watched by a thread, started
    again when it exits without being asked to, stopped by :meth:`stop`."""

    def __init__(self, command: Sequence[str], *, say: Callable[[str], None] = log.warning) -> None:
        self.command = list(command)
        self.say = say
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._spawn()
        self._thread = threading.Thread(target=self._watch, name="ladder-watch", daemon=True)
        self._thread.start()

    def _spawn(self) -> None:
        # Its own session: a Ctrl-C at the terminal reaches the server, which stops the
        # ladder itself, in order; and the ladder's bots die with its group. A server that
        # is killed outright (SIGKILL) takes the ladder with it: the kernel sends it SIGTERM
        # then, so that a restarted server never finds a second ladder on the same store.
        # (The kernel watches the thread that started it: the main one, or this watcher,
        # which lives until the server stops it.)
        self.proc = subprocess.Popen(
            self.command, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_term_with_parent,
        )

    def _watch(self) -> None:
        backoff = 1.0
        while not self._stopping.is_set():
            proc = self.proc
            assert proc is not None
            started = time.monotonic()
            code = proc.wait()
            if self._stopping.is_set():
                return
            ran = time.monotonic() - started
            backoff = 1.0 if ran >= HEALTHY_S else min(MAX_BACKOFF_S, backoff * 2)
            self.say(f"the ladder process (pid {proc.pid}) exited with status {code}; starting it again in {backoff:.0f} s")
            if self._stopping.wait(backoff):
                return
            self._spawn()
            self.restarts += 1

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        self._stopping.set()
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.say(f"the ladder process (pid {proc.pid}) did not stop within {grace_s:.0f} s: killed")
        # Whatever is left of its group (bots it started) goes with it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)


_PR_SET_PDEATHSIG = 1


def _term_with_parent() -> None:
    """In the child, before it runs: SIGTERM when the parent dies (Linux; elsewhere nothing)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def serve(
    app: Any,
    *,
    host: str,
    port: int,
    ladder: LadderChild | None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``app`` with uvicorn until SIGINT or SIGTERM, with ``ladder`` running beside it."""
    import uvicorn

    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, proxy_headers=True,
        forwarded_allow_ips="127.0.0.1", timeout_graceful_shutdown=3, lifespan="on", server_header=False,
        limit_concurrency=1000, timeout_keep_alive=5,
    )
    server = uvicorn.Server(config)
    if ladder is not None:
        ladder.start()
    try:
        if on_ready is not None:
            threading.Thread(target=_announce, args=(server, host, port, on_ready), daemon=True).start()
        server.run()
    finally:
        if ladder is not None:
            ladder.stop()


def _announce(server: Any, host: str, port: int, on_ready: Callable[[str], None]) -> None:
    while not server.started and not server.should_exit:
        time.sleep(0.05)
    if server.started:
        shown = f"[{host}]" if ":" in host else host
        on_ready(f"http://{shown}:{port}/")
