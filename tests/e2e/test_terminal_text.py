"""Text from bots and files cannot drive the terminal.

Real bots (folders written here, run in the strict sandbox) put escape sequences in their
bot.toml version and description, their stderr, their build log and their replies; a real
replay file is given seat names that carry them. Every command that shows such text runs
as a real subprocess, piped and on a pseudo-terminal (the rich, coloured path), and no
sequence of the bots' reaches its output or leaderboard.md raw: the visible escape is
there instead, so the user still sees what the bot wrote.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import logging
import os
import pty
import re
import select
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from proc_helpers import STRICT, needs_strict

from arena.text import NAME_LIMIT, printable, visible_json

ROOT = Path(__file__).resolve().parents[2]

#: What a hostile bot writes: a window title, the clipboard (OSC 52), a cleared screen,
#: a C1 CSI (colours on some terminals) and a right-to-left override.
EVIL = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x9b31m\u202e"
#: Rich markup in a bot's words: were it read as markup, it would make a hyperlink (OSC 8).
LINK = "[link=https://evil.example]here[/link]"
#: None of these may reach an output raw. (The arena's own colour codes on a terminal
#: are ESC [ ... m: they are not among them.)
RAW = ("\x1b]0;pwned", "\x1b]52;", "\x1b[2J", "\x07", "\x9b", "\u202e", "\x1b]8;")
#: ... and this is how the user sees the window title the bot tried to set.
SHOWN = "\\x1b]0;pwned\\x07"

BOT = r'''
import json, os, sys

EVIL = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x9b31m\u202e"
MODE = os.environ.get("MODE", "plain")


def send(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


if MODE == "start_crash":
    sys.stderr.write("starting " + EVIL + "\n")
    sys.stderr.flush()
    sys.exit(1)
for line in sys.stdin:
    msg = json.loads(line)
    kind, mid = msg["type"], msg.get("id")
    if kind == "hello":
        sys.stderr.write("hello " + EVIL + "\n")
        sys.stderr.flush()
        send({"type": "hello", "re": mid, "version": 1, "name": EVIL, "bot_version": EVIL})
    elif kind == "game_start":
        send({"type": "ready", "re": mid})
    elif kind == "act":
        sys.stderr.write("thinking " + EVIL + " </script><!-- \n")
        sys.stderr.flush()
        where = (msg["round"], msg["turn"])
        if MODE == "evil_reply" and where == (1, 1):
            send({"type": "\x9b31m\u202e", "re": mid})  # raw C1 and bidi in a JSON string
        elif MODE == "evil_reply" and where == (1, 2):
            sys.stdout.write("not json " + EVIL + "\n")  # raw ESC and BEL: not even JSON
            sys.stdout.flush()
        else:
            send({"type": "action", "re": mid, **msg["legal"][0]})
    elif kind == "game_over":
        send({"type": "ack", "re": mid})
    elif kind == "shutdown":
        break
'''

# In TOML: the same sequences, as escapes in basic strings.
TOML_EVIL = "\\u001b]0;pwned\\u0007\\u001b]52;c;cHduZWQ=\\u0007\\u001b[2J\\u009b31m\\u202e"


def _bot(folder: Path, name: str, mode: str, *, build: str | None = None, version: str = f"1 {TOML_EVIL}") -> Path:
    bot = folder / name
    bot.mkdir(parents=True)
    (bot / "bot.py").write_text(BOT, encoding="utf-8")
    lines = [
        f'name = "{name}"',
        f'version = "{version}"',
        f'description = "{TOML_EVIL}"',
        f'author = "{TOML_EVIL}"',
        'run = ["{python}", "bot.py"]',
        f'env = {{ MODE = "{mode}" }}',
    ]
    if build is not None:
        lines.append(f"build = {build}")
    (bot / "bot.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return bot


def _failing_build() -> str:
    script = "import sys; sys.stdout.write('compiling ' + chr(27) + ']0;pwned' + chr(7) + chr(0x9b) + '31m' + chr(0x202e)); sys.exit(1)"
    return json.dumps(["{python}", "-c", script])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")  # this tree's arena
    env["COLUMNS"] = "160"
    env.pop("NO_COLOR", None)
    return env


def arena(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m arena ARGS`` piped, its output decoded."""
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=cwd, env=_env(), capture_output=True,
        text=True, encoding="utf-8", errors="replace", timeout=timeout,
    )


def arena_on_pty(cwd: Path, *args: str, timeout: float = 120) -> tuple[int, str]:
    """``python -m arena ARGS`` with stdin, stdout and stderr on a pseudo-terminal (so rich
    draws for a terminal: colours, live progress); its exit code and all it wrote."""
    master, slave = pty.openpty()
    env = _env()
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", *args], cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"arena {' '.join(args)} did not end in {timeout} s")
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError as exc:  # EIO: every end of the terminal's other side is closed
                if exc.errno == errno.EIO:
                    break
                raise
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        code = proc.wait(timeout=30)
    return code, b"".join(chunks).decode("utf-8", errors="replace")


def assert_clean(text: str, where: str) -> None:
    for raw in RAW:
        assert raw not in text, f"{where}: the bot's {raw!r} reached the output raw:\n{text[-3000:]}"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One tournament among hostile bots: two that play (one of them sends bad replies
    quoting escape sequences) and two that cannot take part (one crashes at start with
    them on stderr, one has them in its build log)."""
    if not STRICT.ok:
        pytest.skip(f"strict sandbox unavailable: {STRICT.missing}")
    work = tmp_path_factory.mktemp("text")
    bots = work / "bots"
    _bot(bots, "plain", "plain")
    _bot(bots, "faulty", "evil_reply", version=f"{LINK} {TOML_EVIL}")
    _bot(bots, "crasher", "start_crash")
    _bot(bots, "badbuild", "plain", build=_failing_build())
    (bots / f"file{EVIL}.py").write_text(BOT, encoding="utf-8")  # a bot whose very file name is hostile
    results = work / "results"
    run = arena(work, "run", "--bots", str(bots), "--results", str(results), "--players", "2", "--seed", "1")
    return {"work": work, "bots": bots, "results": results, "run": run}


# -- printable itself --------------------------------------------------------------------------


def test_every_control_bidi_and_separator_becomes_a_visible_escape() -> None:
    assert printable(EVIL) == "\\x1b]0;pwned\\x07\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\x9b31m\\u202e"
    for char in ("\x00", "\x08", "\x0b", "\x7f", "\x85", "\x9f", "\u061c", "\u200e", "\u200f", "\u202a",
                 "\u2066", "\u2069", "\u2028", "\u2029", "\ufeff", "\U000e0041", "\ud800"):
        assert printable(f"a{char}b") == f"a{printable(char)}b" and printable(char).startswith("\\"), repr(char)
    assert printable("tab\tstays, newline does not\n") == "tab\tstays, newline does not\\n"
    assert printable("two\nlines\r\n", multiline=True) == "two\nlines\\r\n"
    assert printable("naïve 寿司 🍣 chop\u00adsticks") == "naïve 寿司 🍣 chop\u00adsticks"  # printable stays as it is


def test_a_short_field_is_cut_at_a_whole_escape() -> None:
    long = "v" * 200
    assert printable(long, limit=NAME_LIMIT) == "v" * (NAME_LIMIT - 1) + "…"
    assert printable("ab\x1b[2J", limit=6) == "ab…"  # never half an escape
    assert printable("ab\x1b[2J", limit=20) == "ab\\x1b[2J"
    assert len(printable("\x1b" * 10_000, limit=NAME_LIMIT)) <= NAME_LIMIT


def _shown_raw(text: str, *, multiline: bool) -> list[str]:
    bad = []
    for c in text:
        if c == "\t" or (multiline and c == "\n"):
            continue
        if unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or unicodedata.bidirectional(c) in (
            "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI", "LRM", "RLM", "ALM"
        ):
            bad.append(c)
    return bad


@given(st.text(), st.booleans(), st.one_of(st.none(), st.integers(1, 40)))
def test_printable_leaves_no_control_and_is_stable(text: str, multiline: bool, limit: int | None) -> None:
    shown = printable(text, multiline=multiline, limit=limit)
    assert _shown_raw(shown, multiline=multiline) == []
    assert printable(shown, multiline=multiline) == shown
    if limit is not None:
        assert len(shown) <= limit


@given(st.recursive(st.none() | st.integers() | st.text(), lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids)))
def test_visible_json_shows_every_string_as_printable_does(value: object) -> None:
    def expected(v: object) -> object:
        if isinstance(v, str):
            return printable(v, multiline=True)
        if isinstance(v, list):
            return [expected(x) for x in v]
        if isinstance(v, dict):
            return {printable(k, multiline=True): expected(x) for k, x in v.items()}
        return v

    for ensure_ascii in (True, False):
        encoded = visible_json(json.dumps(value, ensure_ascii=ensure_ascii))
        assert json.loads(encoded) == expected(value)
        assert _shown_raw(encoded, multiline=False) == []


_SGR = re.compile(r"\x1b\[[0-9;]*m")  # the console's own colours and styles


@settings(max_examples=60, deadline=None)
@given(st.text(), st.text())
def test_the_console_prints_nothing_raw_whatever_the_text(plain: str, styled: str) -> None:
    """Through every way the CLI hands text to its console (a string with markup escaped,
    a table cell, a styled Text, a rule's title, a log record), nothing but the console's
    own styles reaches a terminal raw."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from arena.cli.render import ConsoleLogHandler, SafeConsole

    screen = io.StringIO()
    console = SafeConsole(file=screen, force_terminal=True, color_system="standard", width=80)
    console.print(f"[red]x[/red] {escape(plain)}")
    table = Table("a", "b")
    table.add_row(plain, Text(styled, style="bold"))
    console.print(table)
    line = Text("seat ")
    line.append(styled, style="red")
    console.print(line)
    console.rule(plain)
    logger = logging.getLogger("arena.test_terminal_text")
    handler = ConsoleLogHandler(console)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("%s: %s", plain, styled)
    finally:
        logger.removeHandler(handler)
    assert _shown_raw(_SGR.sub("", screen.getvalue()), multiline=True) == []


def test_an_escape_in_a_table_cell_is_laid_out_whole() -> None:
    from rich.table import Table

    from arena.cli.render import SafeConsole, name_text

    screen = io.StringIO()
    console = SafeConsole(file=screen, width=100)
    table = Table("bot", "version")
    table.add_row("plain", name_text("1 \x1b]52;c;cHduZWQ=\x07"))
    console.print(table)
    assert "1 \\x1b]52;c;cHduZWQ=\\x07" in screen.getvalue()  # all of it: the column fits what is shown


# -- the terminal: piped -----------------------------------------------------------------------


@needs_strict
def test_run_shows_versions_stderr_and_build_logs_as_escapes(played: dict) -> None:
    run = played["run"]
    assert run.returncode == 0, run.stderr
    for stream in ("stdout", "stderr"):
        assert_clean(getattr(run, stream), f"arena run ({stream})")
    assert f"1 {SHOWN}" in run.stderr  # the version, on the line saying the bot started
    assert f"{LINK} {SHOWN}" in run.stderr  # markup in it is text, not a hyperlink
    # The bots that could not take part are skipped with what they wrote, shown.
    assert "crasher" in run.stderr and "starting \\x1b]0;pwned" in run.stderr
    assert "badbuild" in run.stderr and "compiling \\x1b]0;pwned" in run.stderr
    assert f"file{SHOWN}" in run.stderr  # the file whose name is no bot's name, named
    assert "plain" in run.stdout and "faulty" in run.stdout  # the leaderboard: nothing else was lost


@needs_strict
def test_leaderboard_md_and_json_carry_no_raw_sequence(played: dict) -> None:
    results = played["results"]
    md = (results / "leaderboard.md").read_text(encoding="utf-8")
    assert_clean(md, "leaderboard.md")
    assert SHOWN in md and "starting \\x1b]0;pwned" in md
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(rows) == 3 and all(line.count(" | ") == 11 for line in rows), md  # no cell broken
    doc = (results / "leaderboard.json").read_text(encoding="utf-8")
    assert_clean(doc, "leaderboard.json")
    versions = {row["bot"]: row["version"] for row in json.loads(doc)["rows"]}
    assert versions["plain"] == "1 " + EVIL  # the data itself, escaped by the JSON encoder


@needs_strict
def test_leaderboard_games_and_report_commands_piped(played: dict) -> None:
    work, results = played["work"], played["results"]
    board = arena(work, "leaderboard", str(results), "--h2h")
    assert board.returncode == 0, board.stderr
    assert_clean(board.stdout + board.stderr, "arena leaderboard")
    assert "\\x1b]0;pwned" in board.stdout and "starting \\x1b]0;pwned" in board.stdout
    board_json = arena(work, "leaderboard", str(results), "--json")
    assert_clean(board_json.stdout, "arena leaderboard --json")
    assert json.loads(board_json.stdout)["rows"]
    games = arena(work, "games", str(results))
    assert games.returncode == 0 and "faulty" in games.stdout, games.stderr
    assert_clean(games.stdout + games.stderr, "arena games")
    report = arena(work, "report", str(results))
    assert report.returncode == 0, report.stderr
    assert_clean(report.stdout + report.stderr, "arena report")


@needs_strict
def test_report_data_shows_the_escapes_and_cannot_leave_its_script(played: dict) -> None:
    site = next(played["results"].glob("*/report"))
    data = [site / "data.js", *sorted((site / "games").glob("*.js"))]
    assert len(data) == 3
    for file in data:
        text = file.read_text(encoding="utf-8")
        assert_clean(text, file.name)
        assert "</script" not in text.lower() and "<!--" not in text
    game = data[1].read_text(encoding="utf-8")
    assert "thinking \\\\x1b]0;pwned\\\\x07" in game  # the stderr tail, its escapes shown as text
    assert "\\\\x9b31m" in game  # the fault message quoting the bad reply


def _replay_of_faulty(played: dict) -> Path:
    return sorted(played["results"].glob("replays/*/*.json.gz"))[0]


@needs_strict
def test_replay_and_play_show_the_fault_messages_quoting_the_bot(played: dict) -> None:
    work = played["work"]
    shown = arena(work, "replay", str(_replay_of_faulty(played)))
    assert shown.returncode == 0, shown.stderr
    assert_clean(shown.stdout + shown.stderr, "arena replay")
    assert "\\x9b31m\\u202e" in shown.stdout and SHOWN in shown.stdout
    bots = played["bots"]
    play = arena(work, "play", str(bots / "faulty"), str(bots / "plain"), "--verbose", "--replay", str(work / "p.json.gz"))
    assert play.returncode == 0, play.stderr
    assert_clean(play.stdout + play.stderr, "arena play --verbose")
    assert SHOWN in play.stdout
    page = work / "game.html"
    html = arena(work, "replay", str(_replay_of_faulty(played)), "--html", str(page))
    assert html.returncode == 0, html.stderr
    text = page.read_text(encoding="utf-8")
    assert_clean(text, "arena replay --html")
    assert text.lower().count("</script") == text.lower().count("<script") == 3  # the page's own only
    assert "<!--" not in text


@needs_strict
def test_ask_shows_the_bots_stderr_as_escapes(played: dict) -> None:
    asked = arena(played["work"], "replay", str(_replay_of_faulty(played)), "--ask", str(played["bots"] / "plain"),
                  "--seat", "0", "--turn", "1.3")
    assert asked.returncode == 0, asked.stderr
    assert_clean(asked.stdout + asked.stderr, "arena replay --ask")
    assert "the bot's stderr" in asked.stdout and SHOWN in asked.stdout


@needs_strict
def test_validate_shows_what_the_bot_sent_as_escapes(played: dict) -> None:
    work, bots = played["work"], played["bots"]
    faulty = arena(work, "validate", str(bots / "faulty"))
    assert faulty.returncode == 1  # its faults fail checks
    assert_clean(faulty.stdout + faulty.stderr, "arena validate faulty")
    assert "\\x9b31m" in faulty.stdout and "\\x1b]0;pwned" in faulty.stdout
    for name, said in (("crasher", "starting"), ("badbuild", "compiling")):  # its stderr; its build log
        failed = arena(work, "validate", str(bots / name))
        assert failed.returncode != 0
        text = failed.stdout + failed.stderr
        assert_clean(text, f"arena validate {name}")
        assert said in text and SHOWN in text, text


# -- a replay file crafted by hand -------------------------------------------------------------


def _crafted_replay(played: dict) -> Path:
    with gzip.open(_replay_of_faulty(played), "rt", encoding="utf-8") as f:
        doc = json.load(f)
    for seat in doc["seats"]:
        seat["bot"] = f"{seat['bot']}{EVIL}{LINK}"
        seat["version"] = EVIL
    path = played["work"] / "crafted.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    return path


@needs_strict
def test_seat_names_of_a_crafted_replay_are_shown_as_escapes(played: dict) -> None:
    crafted = _crafted_replay(played)
    shown = arena(played["work"], "replay", str(crafted))
    assert_clean(shown.stdout + shown.stderr, "arena replay of a crafted file")
    if shown.returncode == 0:  # shown: the names with their escapes
        assert "plain\\x1b]0;pwned" in shown.stdout
    else:  # refused: one clear message naming the file
        assert str(crafted) in shown.stderr and "Traceback" not in shown.stderr
    verify = arena(played["work"], "verify", str(crafted))
    assert_clean(verify.stdout + verify.stderr, "arena verify of a crafted file")
    page = arena(played["work"], "replay", str(crafted), "--html", str(played["work"] / "crafted.html"))
    if page.returncode == 0:
        assert_clean((played["work"] / "crafted.html").read_text(encoding="utf-8"), "crafted replay page")


# -- the terminal: a pseudo-terminal -----------------------------------------------------------


@needs_strict
def test_on_a_terminal_nothing_of_the_bots_drives_it(played: dict, tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    _bot(bots, "plain", "plain")
    _bot(bots, "faulty", "evil_reply", version=f"{LINK} {TOML_EVIL}")
    _bot(bots, "crasher", "start_crash")
    results = tmp_path / "results"
    code, text = arena_on_pty(tmp_path, "run", "--bots", str(bots), "--results", str(results), "--players", "2")
    assert code == 0, text
    assert "\x1b[" in text  # drawn for a terminal: the arena's own colours
    assert_clean(text, "arena run on a terminal")
    assert SHOWN in text and "starting \\x1b]0;pwned" in text
    shows = "\\x1b]0;pwned"  # what each shows of the bots (the games list has only their names)
    for args, shown in ((("leaderboard", str(results)), shows), (("games", str(results)), "faulty"),
                        (("replay", str(_replay_of_faulty(played))), shows), (("replay", str(_crafted_replay(played))), shows),
                        (("validate", str(played["bots"] / "faulty")), shows), (("report", str(results)), "report")):
        code, text = arena_on_pty(tmp_path, *args)
        assert code in (0, 1), text
        assert_clean(text, f"arena {args[0]} on a terminal")
        assert shown in text, text


def test_the_human_seat_shows_bot_names_and_messages_as_escapes() -> None:
    """The person's screen (``arena play human``) is a console too: the names of the bots
    at the table and the referee's messages reach it through the same function."""
    from arena.cli.human_seat import Screen
    from arena.engine import GameConfig
    from arena.game.players import DEFAULT_TIME
    from arena.game.referee import game_start_message

    screen_out = io.StringIO()
    screen = Screen(io.StringIO(""), screen_out, fd=-1)
    screen.console.size = (120, 40)
    start = game_start_message(GameConfig(2, "standard"), 0, ["human", f"x{EVIL}"], "g", DEFAULT_TIME, 1, 2)
    screen.welcome(start)
    screen.tell(f"✗ {EVIL}")
    text = screen_out.getvalue()
    assert_clean(text, "the human seat's screen")
    assert "x\\x1b]0;pwned" in text
