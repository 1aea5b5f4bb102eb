"""A stand-in arena for tests: opens the stubborn bot (which ignores its stdin and
SIGTERM), prints its pid, then idles.

Killing this process with SIGKILL must take the bot with it (parent-death signal).
"""

import sys
from pathlib import Path

import trio

from arena.bots import BotSpec, open_bot


async def main() -> None:
    here = Path(__file__).parent
    spec = BotSpec(name="hosted", argv=(sys.executable, str(here / "stubborn.py")), cwd=here)
    async with open_bot(spec) as bot:
        assert await bot.receive_line() == b"ready"  # past start-up: it writes no more
        print(bot.pid, flush=True)
        await trio.sleep_forever()


trio.run(main)
