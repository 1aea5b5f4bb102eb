"""Capture a real protocol-v1 exchange between the referee and one bot.

    python3 tests/bench/tools/capture_exchange.py [--seed N] [--out FILE] [--markdown]
    python3 tests/bench/tools/capture_exchange.py --find-seed [--tries N]

Plays one real two-player game with :func:`arena.game.referee.play_game` between two
copies of the test bot (``tests/data/bots/testbot.py``: seeded random legal plays).
Seat 0 answers its act of round 1, turn 3 with an illegal card, so that its next
act's ``last_action`` shows the fault. Seat 0's bot is started through this very
script in ``--tee`` mode, which passes every line through unchanged and copies it
to a transcript: one JSON object per line, ``{"dir": "referee->bot" | "bot->referee",
"line": <the line as sent, without its newline>}``.

``--markdown`` prints the transcript as fenced ```json blocks (pretty-printed, one
message per block, each preceded by its direction), the form used in
protocol/PROTOCOL.md's example exchange. ``--find-seed`` looks for a seed where
seat 0 plays chopsticks (an action with two cards) in round 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, BinaryIO

ROOT = Path(__file__).resolve().parents[3]  # the repository: tests/bench/tools/ is three below it
TESTBOT = ROOT / "tests" / "data" / "bots" / "testbot.py"
DEFAULT_SEED = 6  # seat 0 plays chopsticks in round 1 (see --find-seed)
DUMMY_SEED = 3
FAULT_AT = "1.3"
NAMES = ("mybot", "rival")


# -- the tee: a transparent pass-through that records every line -----------------------


def tee(transcript: Path, argv: list[str]) -> int:
    """Run ``argv``; copy our stdin to its stdin and its stdout to our stdout, line by
    line, flushing each, and append every line to ``transcript``. stderr is inherited."""
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lock = threading.Lock()
    out = transcript.open("a", encoding="utf-8")

    def record(direction: str, line: bytes) -> None:
        text = line.decode("utf-8", "backslashreplace").rstrip("\r\n")
        with lock:
            out.write(json.dumps({"dir": direction, "line": text}) + "\n")
            out.flush()

    def pump(src: BinaryIO, dst: BinaryIO, direction: str) -> None:
        try:
            for line in iter(src.readline, b""):
                record(direction, line)
                dst.write(line)
                dst.flush()
        except OSError:  # a broken pipe: the other side is gone
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.close()

    assert child.stdin is not None and child.stdout is not None
    to_bot = threading.Thread(target=pump, args=(sys.stdin.buffer, child.stdin, "referee->bot"), daemon=True)
    to_bot.start()
    pump(child.stdout, sys.stdout.buffer, "bot->referee")
    code = child.wait()
    out.close()
    return code


# -- the game ---------------------------------------------------------------------------


def play(seed: int, transcript: Path | None, variant: str = "standard") -> Any:
    """Play the game; returns the referee's GameRecord. Seat 0 is teed into ``transcript``."""
    import trio

    from arena.bots import BotSpec
    from arena.engine import GameConfig, Variant
    from arena.game.players import open_pool
    from arena.game.referee import play_game

    bot0 = [sys.executable, str(TESTBOT), "--mode", "illegal", "--at", FAULT_AT, "--name", NAMES[0]]
    bot1 = [sys.executable, str(TESTBOT), "--name", NAMES[1]]
    if transcript is not None:
        bot0 = [sys.executable, str(Path(__file__).resolve()), "--tee", str(transcript), "--", *bot0]

    async def main() -> Any:
        async with open_pool() as pool:
            players = [
                pool.player(BotSpec(name=NAMES[0], argv=tuple(bot0), cwd=ROOT)),
                pool.player(BotSpec(name=NAMES[1], argv=tuple(bot1), cwd=ROOT)),
            ]
            return await play_game(players, GameConfig(2, Variant(variant)), seed)

    return trio.run(main)


def capture(seed: int = DEFAULT_SEED, variant: str = "standard") -> tuple[Any, list[dict[str, str]]]:
    """Play the game with seat 0 teed; returns the GameRecord and the transcript entries."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "transcript.jsonl"
        path.touch()
        record = play(seed, path, variant)
        entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return record, entries


def chopsticks_turns(record: Any, seat: int = 0) -> list[tuple[int, int]]:
    """The (round, turn)s where ``seat`` took two cards with chopsticks (and meant to)."""
    return [
        (t.round, t.turn)
        for t in record.replay.turns
        for a in t.actions
        if a.seat == seat and a.status == "ok" and len(a.cards) == 2
    ]


# -- printing ---------------------------------------------------------------------------


def pretty(value: Any, indent: int = 0, width: int = 92, lead: int = 0) -> str:
    """JSON for reading: indented by two, a value that fits on its line kept on one line,
    and a list of short items (cards, plays) packed several to a line. ``lead`` is how
    much of the first line a key already takes."""
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if len(flat) + indent + lead <= width or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {pretty(v, indent + 2, width, len(json.dumps(k)) + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    parts = [pretty(v, indent + 2, width) for v in value]
    if all("\n" not in p and len(p) <= 40 for p in parts):
        lines, line = [], ""
        for p in parts:
            if line and len(pad) + len(line) + len(p) + 2 > width:
                lines.append(line + ",")
                line = ""
            line = f"{line}, {p}" if line else p
        lines.append(line)
        return "[\n" + "\n".join(pad + ln for ln in lines) + "\n" + " " * indent + "]"
    return "[\n" + ",\n".join(pad + p for p in parts) + "\n" + " " * indent + "]"


def markdown(entries: list[dict[str, str]]) -> str:
    blocks = []
    for n, entry in enumerate(entries, 1):
        arrow = "referee → bot" if entry["dir"] == "referee->bot" else "bot → referee"
        try:
            body = pretty(json.loads(entry["line"]))
        except ValueError:
            body = entry["line"]
        blocks.append(f"<!-- line {n} -->\n**{arrow}**\n\n```json\n{body}\n```\n")
    return "\n".join(blocks)


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--tee":
        sep = sys.argv.index("--")
        return tee(Path(sys.argv[2]), sys.argv[sep + 1 :])
    sys.path.insert(0, str(ROOT))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the game's seed")
    parser.add_argument("--out", type=Path, help="write the transcript (JSON lines) here")
    parser.add_argument("--markdown", action="store_true", help="print it as annotated-ready markdown blocks")
    parser.add_argument("--find-seed", action="store_true", help="find a seed with a chopsticks play by seat 0 in round 1")
    parser.add_argument("--tries", type=int, default=50)
    parser.add_argument("--variant", default="standard", choices=["standard", "alternate", "dummy"])
    args = parser.parse_args()

    if args.find_seed:
        for seed in range(args.tries):
            turns = chopsticks_turns(play(seed, None, args.variant))
            if any(r == 1 for r, _ in turns):
                print(f"seed {seed}: seat 0 plays chopsticks at {turns}")
                return 0
        print("no seed found", file=sys.stderr)
        return 1

    record, entries = capture(args.seed, args.variant)
    if record.status != "complete":
        print(f"the game was void: {record.void_reason}", file=sys.stderr)
        return 1
    text = "\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n"
    if str(ROOT) in text or tempfile.gettempdir() in text:
        print("warning: the transcript contains a local path", file=sys.stderr)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    if args.markdown:
        print(markdown(entries))
    elif not args.out:
        sys.stdout.write(text)
    print(
        f"seed {args.seed}: {len(entries)} lines; scores {record.scores}, ranks {record.ranks}, "
        f"faults {record.faults}; seat 0 chopsticks at {chopsticks_turns(record)}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
