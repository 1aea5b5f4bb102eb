"""`arena replay` and `arena verify`: show a recorded game (or put one of its decisions to
a bot), and re-simulate replays against the engine and the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.cli.console import err, out
from arena.cli.options import JsonOption, SandboxOption, sandbox_settings
from arena.errors import ArenaError


def _parse_turn(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        rnd, turn = (int(x) for x in value.split("."))
    except ValueError:
        raise ArenaError(f"--turn takes ROUND.TURN, e.g. 2.3; not {value!r}") from None
    return rnd, turn



def _check_turn_shown(replay, only: tuple[int, int], file: Path) -> None:  # noqa: ANN001
    """An :class:`ArenaError` naming the file, the turn and the turns the game has,
    unless ``arena replay --turn`` can show turn ``only`` of ``replay``."""
    from arena.cli.render import shown_turns

    turns = shown_turns(replay)
    rnd, turn = only
    if turn in turns.get(rnd, ()):
        return
    if not turns:
        held = "it has no turns: the game was void before its first one"
    else:
        rounds = sorted(turns)
        held = f"rounds {rounds[0]} to {rounds[-1]}" if len(rounds) > 1 else f"round {rounds[0]} only"
        if rnd in turns:
            held = f"round {rnd} has turns {min(turns[rnd])} to {max(turns[rnd])}"
        elif len({(min(t), max(t)) for t in turns.values()}) == 1:
            first = turns[rounds[0]]
            held += f", each with turns {min(first)} to {max(first)}"
    raise ArenaError(f"{file}: no turn {rnd}.{turn} in this game ({held})")


def replay_command(
    file: Annotated[Path, typer.Argument(help="A replay file (*.json.gz).", metavar="FILE")],
    turn: Annotated[str | None, typer.Option("--turn", help="Show only turn ROUND.TURN, e.g. 2.3.")] = None,
    ask: Annotated[
        Path | None,
        typer.Option(
            "--ask",
            help="Send BOT the act that --seat received at --turn (after hello and game_start) "
            "and show its answer, whether it is legal, what was played then, and its time. "
            "Exit code 1 unless the answer is legal.",
            metavar="BOT",
        ),
    ] = None,
    seat: Annotated[int | None, typer.Option("--seat", min=0, help="With --ask: the seat whose act to send.")] = None,
    no_timeout: Annotated[
        bool, typer.Option("--no-timeout", help="With --ask: wait for the answer however long it takes.")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Write the game as one self-contained HTML page (the report's viewer) to OUT.", metavar="OUT"),
    ] = None,
    sandbox: SandboxOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show a recorded game turn by turn: hands, plays, tableaus, scores and faults;
    or, with --ask, put one seat's recorded decision to a bot."""
    from arena.cli.render_lines import print_asked, print_replay, print_stopped, print_viewer
    from arena.game.replay import ReplayError, read_replay

    if ask is not None:
        from arena.authoring.ask import ask_bot, parse_turn

        if seat is None or turn is None:
            raise ArenaError("--ask needs --seat S and --turn ROUND.TURN: the seat and the turn whose act to send")
        rnd, turn_no = parse_turn(turn)
        try:
            report = ask_bot(
                file, ask, seat, rnd, turn_no, build_cache=Path("results") / "build", no_timeout=no_timeout,
                sandbox=sandbox_settings(sandbox),
            )
        except KeyboardInterrupt as exc:
            print_stopped(err, "the bot was stopped before it answered", exc)
            raise typer.Exit(130) from None
        print_asked(out, report, json_output=json_output)
        if not report.legal:
            raise typer.Exit(1)
        return
    if seat is not None or no_timeout or sandbox is not None:
        raise ArenaError("--seat, --no-timeout and --sandbox go with --ask BOT")
    only = _parse_turn(turn)
    try:
        rep = read_replay(file)
    except ReplayError as exc:
        raise ArenaError(str(exc)) from None
    if only is not None:
        _check_turn_shown(rep, only, file)
    if html is not None:
        from arena.report.site import write_replay_page

        print_viewer(err, write_replay_page(rep, html))
        return
    print_replay(out, rep, only=only, json_output=json_output)


def verify_command(
    target: Annotated[Path, typer.Argument(help="A replay file, or a folder searched recursively for *.json.gz.", metavar="FILE|DIR")],
    json_output: JsonOption = False,
) -> None:
    """Re-simulate replays from their seeds and plays and re-derive every recorded outcome;
    in a results folder, check each game's seats against the store too. Every file is
    listed, good or bad; fail on any difference."""
    from arena.cli.render_lines import Verified, print_verified, print_verify_end
    from arena.store.audit import open_audit

    results: list[Verified] = []
    with open_audit(target) as audit:
        for result in audit:
            results.append(result)
            if not json_output:
                print_verified(out, err, result)
    print_verify_end(out, err, results, in_store=audit.in_store, json_output=json_output)
    if any(kind for _, kind, _, _ in results):
        raise typer.Exit(1)


#: The commands of this module by name, for the app to register.
COMMANDS = {"replay": replay_command, "verify": verify_command}
