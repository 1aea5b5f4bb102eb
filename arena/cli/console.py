"""Where the command line writes: the stdout and stderr consoles every command prints
through, and the plain help layout of every command group."""

from __future__ import annotations

import os
import sys
from contextlib import AbstractContextManager, nullcontext

from rich.markup import escape
from typer.core import TyperGroup

from arena.cli.render import SafeConsole


class HelpGroup(TyperGroup):
    """A command group whose help lists each command with its whole first paragraph,
    wrapped, where click cuts it to one line ending in "..."."""

    def format_commands(self, ctx, formatter) -> None:  # noqa: ANN001  (typer's own click types)
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            text = command.short_help or (command.help or "").split("\n\n")[0]
            rows.append((name, " ".join(text.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


# Help is click's plain layout, not typer's rich panels: typer 0.29 shows every flag with a
# `<bool>` placeholder there, and every version cuts a long word in the narrow help column
# with "…"; the plain layout shows flags as flags and wraps whole words at any width.
HELP = {"rich_markup_mode": None, "cls": HelpGroup}


# Piped or redirected output has no terminal width to follow: tables are laid out for a
# wide one rather than rich's 80 columns, so that they keep every column (COLUMNS, when
# set, still wins), and every other line is printed whole, never wrapped (soft wrap: a
# path or a game's line is for copying and grepping; rich's padding of a wrapped line
# to the width is gone with it). Everything is printed through these two, which show any
# control character in what they print (a bot's words, a file's) as a visible escape.
_PIPE_WIDTH = None if os.environ.get("COLUMNS") else 132


def _console(*, stderr: bool) -> SafeConsole:
    terminal = (sys.stderr if stderr else sys.stdout).isatty()
    return SafeConsole(stderr=stderr, width=None if terminal else _PIPE_WIDTH, soft_wrap=not terminal)


out = _console(stderr=False)
err = _console(stderr=True)


def say_waiting(message: str) -> None:
    """How a command that writes a results folder says that it waits for another's lock."""
    err.print(f"[yellow]{escape(message)}[/yellow]", highlight=False)


def busy(message: str, *, shown: bool = True) -> AbstractContextManager[object]:
    """A spinner on stderr saying ``message`` while the work inside goes on: on a terminal
    only, and only when ``shown`` (not while a person plays, nor under --json)."""
    return err.status(message, spinner="dots") if shown and err.is_terminal else nullcontext()
