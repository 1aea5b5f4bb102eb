"""`arena play`: one game among bots, or a person and bots (`arena play human BOT`);
arena.authoring.play plays it, and it is printed here (the game, or one JSON object)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena.cli.console import busy, err, out
from arena.cli.options import JsonOption, SandboxOption, sandbox_settings, with_time_options
from arena.engine import Variant
from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.game.players import TimeSettings


@with_time_options
def play_command(
    bots: Annotated[
        list[str],
        typer.Argument(
            help="2 to 5 bots: folders with bot.toml, executables, .py or .js files; "
            "the word human seats you, playing in this terminal (no time limit).",
            metavar="BOT",
        ),
    ],
    seed: Annotated[
        int,
        typer.Option(
            min=0,
            help="The game's seed: same seed and bots, same game, with the deal key of the results store in "
            "results/ (without a store, a fresh key each run: the deal differs).",
        ),
    ] = 0,
    variant: Annotated[Variant, typer.Option(help="Rules variant (dummy: 2 players and a dummy seat).")] = Variant.STANDARD,
    replay: Annotated[Path | None, typer.Option(help="Where to write the replay (default: results/play/GAME.json.gz).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Print every turn.")] = False,
    *,
    times: TimeSettings,  # --hello-ms … --no-timeout (with_time_options)
    sandbox: SandboxOption = None,
    json_output: JsonOption = False,
) -> None:
    """Play one game among the given bots (or you and bots: `arena play human BOT`) and print it."""
    from arena.authoring.play import is_human, play_one
    from arena.cli.render_lines import print_played, print_stopped
    from arena.engine import GameConfig

    if not 2 <= len(bots) <= 5:
        raise ArenaError(f"a game needs 2 to 5 bots, {len(bots)} given")
    try:
        config = GameConfig(len(bots), variant)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    confined = sandbox_settings(sandbox)
    results = Path("results")
    human = any(is_human(b) for b in bots)
    try:
        # No spinner when a person plays: the game itself is on the terminal.
        with busy("playing…", shown=not json_output and not human):
            outcome = play_one(
                bots, config, seed, times, replay_path=None, build_cache=results / "build", sandbox=confined,
                key=play_key(results),
            )
    except KeyboardInterrupt as exc:
        print_stopped(err, "the game was not finished and no replay was written; every bot was stopped", exc)
        raise typer.Exit(130) from None
    path = replay or results / "play" / f"{outcome.record.game_id}.json.gz"
    from arena.game.replay import write_replay

    write_replay(path, outcome.record.replay)
    print_played(out, err, outcome.record.replay, path, verbose=verbose, json_output=json_output)
    if outcome.record.status == "void":
        raise typer.Exit(1)


def play_key(results: Path) -> bytes:
    """The deal key of a single game (`arena play`): the store's in ``results`` if there is
    one (made now if it has none yet), so that the same seed replays the same game next to
    it; else a fresh random one."""
    import secrets

    from arena.store.database import DB_NAME
    from arena.store.opening import open_store, read_deal_key

    key = read_deal_key(results)
    if key is None and (results / DB_NAME).is_file():
        with open_store(results, create=False) as store:
            key = store.deal_key()
    return key or secrets.token_bytes(32)


#: The commands of this module by name, for the app to register.
COMMANDS = {"play": play_command}
