"""The options that several commands take, each defined once (flag names, help texts,
limits), and what turns their values into the settings the commands pass on."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from arena.cli.console import err
from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.bots.sandbox import SandboxSettings

JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]

ResultsArgument = Annotated[Path, typer.Argument(help="The results folder.", metavar="RESULTS")]
TournamentOption = Annotated[
    str | None, typer.Option("--tournament", "-t", help="Which tournament (default: the latest).")
]

BotArgument = Annotated[Path, typer.Argument(help="A folder with bot.toml, an executable, or a .py/.js file.", metavar="BOT")]
BuildResultsOption = Annotated[
    Path,
    typer.Option("--results", "-r", help="The results folder whose build/ holds the bot's build (as `arena run --results`)."),
]
RunConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c",
        help="A run's TOML file: its sandbox level, [sandbox] expose folders and build limits apply, as in that run.",
    ),
]

SandboxOption = Annotated[
    str | None,
    typer.Option(
        "--sandbox",
        help="How bots are confined: none, limits (resource limits) or strict (also no network, a read-only view "
        "of the system, own process namespace). Default: strict where the machine supports it, else limits.",
        metavar="none|limits|strict",
    ),
]


def sandbox_settings(level: str | None) -> SandboxSettings:
    """The run's sandbox for a ``--sandbox`` value: a bad value or an unavailable
    ``strict`` is an error; falling back from the default prints one warning."""
    from arena.bots.sandbox import SandboxSettings
    from arena.bots.strict import resolve_level

    try:
        resolved, warning = resolve_level(level)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    if warning:
        err.print(f"[yellow]warning:[/yellow] {escape(str(warning))}", highlight=False)
    return SandboxSettings(resolved)


# The time options of a command that plays a game at once (play, validate, submit), with
# their defaults: `arena run` has its own, unset unless given, for its --config file.
_TIME_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    ("hello_ms", Annotated[int, typer.Option("--hello-ms", min=1, help="Start-up budget per bot (hello), ms.")], 10_000),
    ("turn_ms", Annotated[int, typer.Option("--turn-ms", min=1, help="Time per decision, ms.")], 1_000),
    ("bank_ms", Annotated[int, typer.Option("--bank-ms", min=0, help="Extra time per game any decision may draw on, ms.")], 10_000),
    ("time_scale", Annotated[float, typer.Option("--time-scale", min=0.001, help="Multiply every time budget by this.")], 1.0),
    ("no_timeout", Annotated[bool, typer.Option("--no-timeout", help="Never time a bot out (for debugging a bot).")], False),
)


def with_time_options(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with the time options (--hello-ms, --turn-ms, --bank-ms, --time-scale,
    --no-timeout) in the place of its ``times`` parameter, which receives them as one
    :class:`~arena.game.players.TimeSettings`."""
    # The command imports TimeSettings for type checkers only (arena.game.players is too heavy to
    # load at start-up), and the parameter annotated with it is replaced: any stand-in does.
    hints = typing.get_type_hints(command, localns={"TimeSettings": object}, include_extras=True)
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in inspect.signature(command).parameters.values()]
    at = next(i for i, p in enumerate(params) if p.name == "times")
    timed = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=default)
             for name, kind, default in _TIME_OPTIONS]
    params[at:at + 1] = timed
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]

    @functools.wraps(command)
    def with_times(**given: Any) -> None:
        from arena.game.players import TimeSettings

        times = TimeSettings(**{name: given.pop(name) for name, _, _ in _TIME_OPTIONS})
        return command(**given, times=times)

    with_times.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    with_times.__annotations__ = {p.name: p.annotation for p in params}
    del with_times.__wrapped__  # typer reads the signature above, not the command's own
    return with_times


def parse_anchor(value: str | None) -> tuple[str, float] | None:
    """``--anchor BOT=ELO`` as a pair; an error saying the form otherwise."""
    if value is None:
        return None
    bot, sep, elo = value.partition("=")
    try:
        if not sep or not bot:
            raise ValueError
        return bot, float(elo)
    except ValueError:
        raise ArenaError(f"--anchor takes BOT=ELO, e.g. greedy=1500; not {value!r}") from None
