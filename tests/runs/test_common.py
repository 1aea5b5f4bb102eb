"""What a tournament and a match share (arena.runs.common): a bot that cannot start is one
error naming it, with no process of it left; a real SIGINT stops the block, hurries the
executor and is reported; the writer records what it was handed, in the store."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
import trio

from arena.bots.manifest import find_bot
from arena.bots.sandbox import Level, SandboxSettings
from arena.executors.local import open_local_executor
from arena.game.players import TimeSettings
from arena.runs.common import BotEntryError, enter_bot, stop_on_signals
from arena.store.opening import open_store

ROOT = Path(__file__).resolve().parents[2]


def _bot(folder: Path, name: str, mode: str) -> Path:
    folder.mkdir(parents=True)
    shutil.copyfile(ROOT / "tests" / "data" / "bots" / "testbot.py", folder / "testbot.py")
    (folder / "bot.toml").write_text(f'name = "{name}"\nrun = ["{{python}}", "testbot.py", "--mode", "{mode}"]\n')
    return folder


def test_a_bot_that_cannot_start_is_one_error_naming_it(tmp_path: Path) -> None:
    silent = find_bot(_bot(tmp_path / "silent", "silent", "hello_silent"))
    results = tmp_path / "res"
    results.mkdir()

    async def main() -> None:
        with open_store(results) as store:
            async with open_local_executor() as local:
                with pytest.raises(BotEntryError) as info:
                    await enter_bot(
                        local, store, silent, results=results, sandbox=SandboxSettings(Level.NONE),
                        time=TimeSettings(hello_ms=300),
                    )
                assert local.idle == {}  # nothing kept of it
        exc = info.value
        assert str(exc).startswith(f"silent ({silent.path}): cannot start (timeout)") and exc.reason.startswith("cannot")
        assert "\n" not in str(exc)

    trio.run(main)


def test_a_good_bot_enters_registered_and_kept_for_its_first_game(tmp_path: Path) -> None:
    good = find_bot(ROOT / "example_bots" / "random")
    results = tmp_path / "res"
    results.mkdir()

    async def main() -> None:
        with open_store(results) as store:
            async with open_local_executor() as local:
                seat, entrant = await enter_bot(
                    local, store, good, results=results, sandbox=SandboxSettings(Level.NONE), time=TimeSettings()
                )
                assert seat.manifest == good and entrant.name == "random" and entrant.startup_ms > 0
                assert [len(p) for p in local.idle.values()] == [1]
            assert store.find_bots([("random", good.content_hash)])[("random", good.content_hash)] == entrant.row

    trio.run(main)


class _Executor:
    def __init__(self) -> None:
        self.hurried = 0

    def hurry(self) -> None:
        self.hurried += 1


def test_a_real_sigint_stops_the_block_and_hurries_the_executor() -> None:
    executor = _Executor()

    async def main() -> tuple[bool, bool]:
        reached_end = False
        async with stop_on_signals(executor) as stop:  # type: ignore[arg-type]
            os.kill(os.getpid(), signal.SIGINT)
            await trio.sleep_forever()
            reached_end = True
        return stop.interrupted, reached_end

    assert trio.run(main) == (True, False)
    assert executor.hurried == 1


def test_a_block_that_ends_by_itself_is_not_interrupted() -> None:
    executor = _Executor()

    async def main() -> bool:
        async with stop_on_signals(executor) as stop:  # type: ignore[arg-type]
            await trio.sleep(0)
        return stop.interrupted

    assert trio.run(main) is False and executor.hurried == 0
