"""Helpers of the tests that run real bots: finding processes in /proc (no bot is left
behind), and the mark of the tests that need the strict sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.bots.strict import strict_support


def processes_in(folder: Path) -> dict[int, str]:
    """Live processes (not zombies) whose working folder is ``folder`` or inside it:
    pid -> command line. A process that ends while it is being looked at is gone."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "Z" or not (cwd == str(folder) or cwd.startswith(str(folder) + "/")):
                continue
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # (ProcessLookupError included) it ended while we looked
            continue
        found[int(entry)] = cmd
    return found


#: Whether the strict sandbox works here (probed once for the whole test run), and the
#: mark of the tests that need it: they run as root in CI, where bubblewrap is installed.
STRICT = strict_support()
needs_strict = pytest.mark.skipif(not STRICT.ok, reason=f"strict sandbox unavailable: {STRICT.missing}")
