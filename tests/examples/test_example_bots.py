"""Every example bot, as a real subprocess, plays scripted engine games in every
variant and answers every act with one of its legal plays.

The C bot is built into a temporary copy of its folder (example_bots/ is never
written to). The Node test is skipped only when `node` is missing, the C test only
when `cc` is missing.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import msgspec
import pytest
from sdk_helpers import ROOT, InProcess, act_message, hello_message, play_game

from arena.engine import GameConfig, new_game, result
from protocol import Action, HelloReply, Play, Reply, Request, Shutdown, decode_reply, encode_line
from protocol.sdk import Bot

BOTS_DIR = ROOT / "example_bots"
BOTS = ["random", "greedy", "mcts", "minimal", "js-greedy", "c-greedy"]
# mcts in its deterministic mode (a fixed number of playouts): fast, and replayable.
TEST_ENV = {"mcts": {"MCTS_ITERATIONS": "60"}}
REPLY_TIMEOUT_S = 10.0

# One process per bot plays all of these in a row (processes are reused across games).
GAMES = [
    (GameConfig(2), 0),
    (GameConfig(4), 2),
    (GameConfig(5, "alternate"), 4),
    (GameConfig(3, "alternate"), 1),
    (GameConfig(2, "dummy"), 0),
    (GameConfig(2, "dummy"), 1),
]


def manifest(name: str) -> dict:
    return tomllib.loads((BOTS_DIR / name / "bot.toml").read_text(encoding="utf-8"))


def argv(value: list[str]) -> list[str]:
    return [a.replace("{python}", sys.executable) for a in value]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The working folder of every bot: its own folder, or a built temporary copy."""
    folders: dict[str, Path] = {}
    for name in BOTS:
        folder = BOTS_DIR / name
        spec = manifest(name)
        if "build" in spec:
            tool = spec["build"][0]
            if shutil.which(tool) is None:
                continue
            folder = tmp_path_factory.mktemp(name) / name
            shutil.copytree(BOTS_DIR / name, folder)
            subprocess.run(argv(spec["build"]), cwd=folder, check=True, capture_output=True, timeout=120)
        folders[name] = folder
    return folders


def require(name: str, built: dict[str, Path]) -> Path:
    tool = manifest(name)["run"][0]
    if name == "c-greedy" and shutil.which("cc") is None:
        pytest.skip("cc is not installed")
    if tool == "node" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    return built[name]


class BotProcess:
    """A bot subprocess spoken to line by line, with a timeout on every answer."""

    def __init__(self, name: str, folder: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.update(TEST_ENV.get(name, {}))
        self.proc = subprocess.Popen(
            argv(manifest(name)["run"]), cwd=folder, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr: list[bytes] = []
        self.next_id = 0
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _pump(stream, put) -> None:  # type: ignore[no-untyped-def]
        for line in iter(stream.readline, b""):
            put(line)
        put(b"")

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def read_reply(self) -> Reply:
        try:
            line = self.lines.get(timeout=REPLY_TIMEOUT_S)
        except queue.Empty:
            raise AssertionError(f"no answer within {REPLY_TIMEOUT_S} s; stderr: {self.err()}") from None
        assert line, f"the bot closed its stdout; stderr: {self.err()}"
        assert len(line) <= 65536
        return decode_reply(line)

    def ask(self, request: Request) -> Reply | None:
        self.next_id += 1
        self.send_line(encode_line(msgspec.structs.replace(request, id=self.next_id)))
        if isinstance(request, Shutdown):
            return None
        reply = self.read_reply()
        assert reply.re == self.next_id
        return reply

    def err(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")[-2000:]

    def close(self) -> int:
        """Shutdown, then the exit status (the bot must exit by itself, promptly)."""
        self.ask(Shutdown(id=0, reason="test over"))
        try:
            return self.proc.wait(timeout=REPLY_TIMEOUT_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.mark.parametrize("name", BOTS)
def test_bot_plays_legally_in_every_variant(name: str, built: dict[str, Path]) -> None:
    bot = BotProcess(name, require(name, built))
    try:
        hello = bot.ask(hello_message())
        assert isinstance(hello, HelloReply) and hello.version == 1 and hello.name
        decisions = 0
        for seed, (config, seat) in enumerate(GAMES):
            _, transcript = play_game(config, seed, {seat: bot})
            decisions += len(transcript)
            if config.variant == "dummy":
                assert any(act.dummy for act, _ in transcript)  # it controlled the dummy
        assert decisions > 50
        assert bot.close() == 0, bot.err()
    finally:
        if bot.proc.poll() is None:
            bot.proc.kill()


@pytest.mark.parametrize("name", BOTS)
def test_bot_plays_the_same_game_the_same_way(name: str, built: dict[str, Path]) -> None:
    """Seeded by game_start (or deterministic): a replayed game gets the same answers."""
    folder = require(name, built)
    runs = []
    for _ in range(2):
        bot = BotProcess(name, folder)
        bot.ask(hello_message())
        _, transcript = play_game(GameConfig(4, "alternate"), 11, {1: bot})
        assert bot.close() == 0, bot.err()
        runs.append([reply for _, reply in transcript])
    assert runs[0] == runs[1]


@pytest.mark.parametrize("name", BOTS)
def test_bot_reads_a_line_longer_than_64_KiB(name: str, built: dict[str, Path]) -> None:
    """Unknown fields are ignored (protocol v1), whatever their size."""
    bot = BotProcess(name, require(name, built))
    try:
        bot.ask(hello_message())
        state = new_game(GameConfig(2, "dummy"), 3)
        act = act_message(state, 0, [], None)
        bot.next_id += 1
        message = msgspec.to_builtins(msgspec.structs.replace(act, id=bot.next_id))
        message["padding"] = "x" * 200_000
        message["more_padding"] = [{"cards": [1, 2], "id": 7, "s": "]}\\\"{"}] * 2000
        message = {"notes": {"legal": [], "type": "nope"}, **message}  # a decoy before the real fields
        bot.send_line(json.dumps(message).encode() + b"\n")
        reply = bot.read_reply()
        assert isinstance(reply, Action) and reply.re == bot.next_id
        assert Play(cards=reply.cards, dummy_card=reply.dummy_card) in act.legal
        assert act.dummy and reply.dummy_card is not None
        assert bot.close() == 0, bot.err()
    finally:
        if bot.proc.poll() is None:
            bot.proc.kill()


def test_c_bot_compiles_without_warnings(tmp_path: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("cc is not installed")
    out = subprocess.run(
        ["cc", "-O2", "-Wall", "-Wextra", "-o", str(tmp_path / "bot"), str(BOTS_DIR / "c-greedy" / "main.c")],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0 and not out.stderr.strip(), out.stderr


@pytest.mark.parametrize("name", BOTS)
def test_manifest_has_the_fields_the_arena_reads(name: str) -> None:
    spec = manifest(name)
    assert spec["name"] == name and isinstance(spec["version"], str)
    assert isinstance(spec["run"], list) and all(isinstance(a, str) for a in spec["run"])
    assert set(spec) <= {"name", "version", "run", "build", "description"}
    assert "build" not in spec or "bot.toml" not in spec["build"]


def _load_sdk_bot(name: str) -> type[Bot]:
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"example_{name}", BOTS_DIR / name / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return next(v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Bot) and v is not Bot)


def test_greedy_outscores_random() -> None:
    """The heuristic is worth having: over fixed seeds, greedy at one seat of a 4-player
    table scores more on average than random at the same seat of the same deals."""
    greedy, random_bot = _load_sdk_bot("greedy"), _load_sdk_bot("random")
    totals = {}
    for cls in (greedy, random_bot):
        scores = []
        for seed in range(12):
            state, _ = play_game(GameConfig(4), seed, {seed % 4: InProcess(cls())})
            scores.append(result(state).scores[seed % 4])
        totals[cls.name] = sum(scores) / len(scores)
    assert totals["greedy"] > totals["random"] + 5, totals
