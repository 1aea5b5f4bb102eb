"""What a bot's author is told when a bot cannot get going: a start-up that misses its
budget names the budget and the flag, a program without its execute bit gets the
`chmod +x` to type (once per bot), and counts are spelt right ("1 symbol"). Real bot
processes and real files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.authoring.human import gain_now
from arena.game.replay import read_replay
from arena.text import plural
from protocol import TableauCard

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200",
       "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
RANDOM = ROOT / "example_bots" / "random"


def arena(*args: str, cwd: Path) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, env=ENV, cwd=cwd, timeout=300,
                          check=False)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def flat(text: str) -> str:
    """Console output with its wrapping and table borders undone, for phrase matching."""
    return " ".join(text.replace("│", " ").split())


def silent_bot(folder: Path) -> Path:
    folder.mkdir(parents=True)
    shutil.copyfile(ROOT / "tests" / "data" / "bots" / "testbot.py", folder / "testbot.py")
    (folder / "bot.toml").write_text(f'name = "{folder.name}"\nrun = ["{{python}}", "testbot.py", "--mode", "hello_silent"]\n')
    return folder


def unexecutable_bot(folder: Path, *, manifest: bool = True) -> Path:
    """A bot whose program is a script that lost its execute bit (as a zip or a copy loses it)."""
    folder.mkdir(parents=True)
    (folder / "bot").write_text("#!/usr/bin/env python3\n" + (RANDOM / "bot.py").read_text())
    (folder / "bot").chmod(0o644)
    if manifest:
        (folder / "bot.toml").write_text(f'name = "{folder.name}"\nrun = ["./bot"]\n')
    return folder


HINT = "its program './bot' is a file without the execute bit: `chmod +x ./bot` in the bot's folder"


# -- the start-up budget -----------------------------------------------------------------


def test_a_bot_that_misses_the_start_up_budget_is_told_the_budget_and_the_flag(tmp_path: Path) -> None:
    bot = silent_bot(tmp_path / "silent")
    told = "hello: no reply before the deadline (the start-up budget is 300 ms: raise it with --hello-ms)"
    code, out, _ = arena("validate", str(bot), "--hello-ms", "300", cwd=tmp_path)
    assert code == 1 and told in flat(out)
    # In a game: the fault in the replay says so too, with the time scale that made the budget.
    replay = tmp_path / "game.json.gz"
    code, out, err = arena("play", str(bot), str(RANDOM), "--hello-ms", "300", "--time-scale", "2",
                           "--replay", str(replay), cwd=tmp_path)
    assert code == 0, err
    (fault,) = [f for f in read_replay(replay).faults if f.kind == "timeout"]
    assert fault.message == (
        "game_start: hello: no reply before the deadline (the start-up budget is 600 ms: --hello-ms 300 × time scale 2: "
        "raise it with --hello-ms)"
    )
    code, out, _ = arena("replay", str(replay), cwd=tmp_path)
    assert "raise it with --hello-ms" in flat(out)


def test_a_run_names_the_budget_in_the_skipped_bots_reason(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    silent_bot(bots / "silent")
    for name in ("random", "greedy"):
        shutil.copytree(ROOT / "example_bots" / name, bots / name)
    code, out, err = arena("run", "--bots", str(bots), "--results", str(tmp_path / "res"), "--hello-ms", "3000",
                           "--no-report", cwd=tmp_path)
    assert code == 0, err
    assert (
        "skipped silent: cannot start (timeout): hello: no reply before the deadline (the start-up budget is 3000 ms: "
        "raise it with --hello-ms)"
    ) in flat(out)


# -- the execute bit ---------------------------------------------------------------------


@pytest.mark.parametrize("sandbox", ["none", "strict"])
def test_a_program_without_the_execute_bit_gets_the_chmod_hint_once(tmp_path: Path, sandbox: str) -> None:
    from proc_helpers import STRICT

    if sandbox == "strict" and not STRICT.ok:
        pytest.skip(f"strict sandbox unavailable: {STRICT.missing}")
    bots = tmp_path / "bots"
    unexecutable_bot(bots / "noexec")
    for name in ("random", "greedy", "minimal"):
        shutil.copytree(ROOT / "example_bots" / name, bots / name)
    code, out, err = arena("run", "--bots", str(bots), "--results", str(tmp_path / "res"), "--sandbox", sandbox,
                           "--no-report", "--deals", "2", cwd=tmp_path)
    assert code == 0, err
    # Said once on each stream (the skip as it happens, and under the final table), not once per game.
    assert flat(out).count("chmod +x") == 1 and HINT in flat(out)
    assert flat(err).count("chmod +x") == 1
    # `arena play`: the crash at start-up is one fault, with the hint.
    replay = tmp_path / "game.json.gz"
    code, out, err = arena("play", str(bots / "noexec"), str(RANDOM), "--sandbox", sandbox, "--replay", str(replay),
                           cwd=tmp_path)
    assert code == 0, err
    hinted = [f for f in read_replay(replay).faults if "chmod +x" in f.message]
    assert len(hinted) == 1 and hinted[0].kind == "crash"
    # `arena validate`: the hello check says it; the checks it stops say only "no handshake".
    code, out, _ = arena("validate", str(bots / "noexec"), "--sandbox", sandbox, cwd=tmp_path)
    assert code == 1 and HINT in flat(out)
    assert flat(out).count("chmod +x") <= 2  # the hello row, and its detail below the table


def test_a_folder_whose_bot_file_lacks_the_execute_bit_is_told_so(tmp_path: Path) -> None:
    bot = unexecutable_bot(tmp_path / "plain", manifest=False)
    code, out, err = arena("validate", str(bot), cwd=tmp_path)
    assert code == 1
    assert "chmod +x ./bot" in flat(out + err)


# -- "1 symbol" --------------------------------------------------------------------------


def test_counts_are_spelt_with_their_number() -> None:
    assert plural(1, "symbol") == "1 symbol"
    assert plural(0, "symbol") == "0 symbols"
    assert plural(3, "symbol") == "3 symbols"
    assert plural(2, "match", "matches") == "2 matches"


def test_the_human_seat_says_1_symbol_for_a_first_maki_roll() -> None:
    assert gain_now("maki1", []) == "maki 0 → 1 symbol"
    assert gain_now("maki2", []) == "maki 0 → 2 symbols"
    assert gain_now("maki1", [TableauCard(id=5, card="maki2")]) == "maki 2 → 3 symbols"
