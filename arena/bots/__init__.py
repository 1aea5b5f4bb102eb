"""Bot processes: spawning, bounded line reading, deadlines, and ending process trees.

The referee's view of a bot::

    async with open_bot(spec) as bot:
        reply = await request(bot, hello_line, timeout_s=budget.hello_timeout_s)
        ...

or, for a process that lives across games, ``bot = await nursery.start(serve_bot, spec)``
and later ``await bot.aclose()``. To ask several bots at once from one task (every
request written, then every reply read as it comes, each against its own deadline)::

    with BotGroup() as group:
        answers = await group.exchange([Question(bot, line, timeout_s) ...], accept)

Everything public is re-exported here; the ``_modules`` are private.
"""

from ._errors import (
    BotCrashed,
    BotError,
    BotStartError,
    BotTimeout,
    BotWriteTimeout,
    LineTooLong,
    describe_returncode,
    lone_errors_unwrapped,
)
from ._group import (
    MAX_STALE_BYTES,
    MAX_STALE_LINES,
    Answer,
    BotGroup,
    Question,
    StaleCount,
    StaleFlood,
)
from ._linereader import BoundedLineReader
from ._process import DEFAULT_MAX_LINE, DEFAULT_STDERR_CAP, BotProcess, open_bot, serve_bot
from ._spec import BotSpec, minimal_env
from ._timing import Bank, Budget, Reply, await_reply, request, send_request

__all__ = [
    "DEFAULT_MAX_LINE",
    "DEFAULT_STDERR_CAP",
    "MAX_STALE_BYTES",
    "MAX_STALE_LINES",
    "Answer",
    "Bank",
    "Budget",
    "BotCrashed",
    "BotError",
    "BotGroup",
    "BotProcess",
    "BotSpec",
    "BotStartError",
    "BotTimeout",
    "BotWriteTimeout",
    "BoundedLineReader",
    "LineTooLong",
    "Question",
    "Reply",
    "StaleCount",
    "StaleFlood",
    "await_reply",
    "describe_returncode",
    "lone_errors_unwrapped",
    "minimal_env",
    "open_bot",
    "request",
    "send_request",
    "serve_bot",
]
