"""The live status line of `arena match` on a terminal: a real `arena match` process whose
stderr is a pseudo-terminal redraws one line after every pair (pair, LLR, Elo, LOS, rate),
and prints the verdict on stdout once it is done; the pair counting itself (arena.match.ledger)
in schedule order, whatever order the games finish in."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from arena.match.ledger import PairLedger
from arena.match.schedule import pair_at
from arena.match.stats import SequentialTest

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_the_status_line_is_redrawn_on_a_terminal_after_every_pair(tmp_path: Path) -> None:
    main, side = pty.openpty()
    env = {
        **os.environ, "TERM": "xterm-256color", "COLUMNS": "220",
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
    }
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "match", "random", "greedy", "--games", "6", "--results", str(tmp_path / "res"),
         "--sandbox", "none"],
        stdout=subprocess.PIPE, stderr=side, stdin=subprocess.DEVNULL, env=env, cwd=tmp_path,
    )
    os.close(side)
    shown = bytearray()
    end = time.monotonic() + 300
    while time.monotonic() < end:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal's other side is closed: the match is done
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    out = proc.communicate(timeout=60)[0].decode()
    os.close(main)
    assert proc.returncode == 0, shown.decode(errors="replace")
    text = shown.decode(errors="replace")
    assert "\x1b[" in text  # drawn as a terminal is: cursor moves, colour
    plain = ANSI.sub("", text)
    lines = re.findall(r"pair (\d)/3 · LLR [+-]\d+\.\d\d \([+-]\d+\.\d\d, [+-]\d+\.\d\d\) · Elo [+-]\d+\.\d "
                       r"\[[+-]\d+\.\d, [+-]\d+\.\d\] · nElo [+-]\d+\.\d · LOS \d+\.\d% · (H1|H0|none) · "
                       r"\d+\.\d\d pairs/s", plain)
    drawn = [n for i, (n, _) in enumerate(lines) if i == 0 or lines[i - 1][0] != n]  # (redrawn at each tick too)
    assert drawn == ["1", "2", "3"], plain
    assert "∞" not in plain and "nan" not in plain.lower()
    # ("waiting for the first pair" is drawn only if a refresh comes before the first pair
    # is counted, which a fast machine may not give: not asserted.)
    assert "match match-greedy-vs-random-2p-standard-" in plain  # the plan, above the line
    # The result is on stdout (not a terminal here: plain lines), the line is gone from the terminal.
    assert out.splitlines()[1].startswith("verdict ") and "\x1b" not in out


def test_pairs_count_in_schedule_order_whatever_order_their_games_finish() -> None:
    pairs = [pair_at(i, "A", "B", [], players=2, seed=0, key=b"k" * 32) for i in range(3)]
    ids = [(f"a{i}", f"b{i}") for i in range(3)]
    ledger = PairLedger(2, pairs, ids, SequentialTest(2, None, 3))
    win, lose = ((1, 2), (False, False)), ((2, 1), (False, False))
    ledger.record("a1", *win)
    ledger.record("b1", *win)
    assert list(ledger.count_ready()) == []  # pair 1 is whole, but pair 0 is not in yet
    ledger.record("a0", *win)
    assert list(ledger.count_ready()) == []  # never half a pair
    assert [g for _, g, _ in ledger.to_play()] == ["b0", "a2", "b2"]
    ledger.record("b0", *lose)
    counted = list(ledger.count_ready())
    assert [c.pair.index for c in counted] == [0, 1] and ledger.next_pair == 2
    assert ledger.test.pairs == 2 and ledger.missing() == 2
