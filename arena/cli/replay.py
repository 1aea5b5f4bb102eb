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
    from arena.game.replay import ReplayError, iter_replays

    try:
        files = iter_replays(target)
    except ReplayError as exc:
        raise ArenaError(str(exc)) from None
    store = _verify_store(target)
    results: list[Verified] = []
    try:
        for file in files:
            results.append((str(file), *_verify_one(file, store)))
            if not json_output:
                print_verified(out, err, results[-1])
    finally:
        if store is not None:
            store[0].close()
    print_verify_end(out, err, results, in_store=store is not None, json_output=json_output)
    if any(kind for _, kind, _, _ in results):
        raise typer.Exit(1)


def _verify_store(target: Path):  # noqa: ANN202
    """The results store ``target`` lies in (the folder itself, or the one holding its
    ``replays/``), with every game row by id; None outside a results folder."""
    from arena.store.database import DB_NAME
    from arena.store.errors import StoreError
    from arena.store.opening import open_store

    here = target.absolute() if target.is_dir() else target.absolute().parent
    for root in (here, *list(here.parents)[:3]):
        if (root / DB_NAME).is_file():
            try:
                store = open_store(root, create=False, read_only=True)
            except StoreError as exc:
                raise ArenaError(str(exc)) from None
            return store, {g.id: g for g in store.games(status=None)}
    return None


def _verify_one(file: Path, store) -> tuple[str, str, str]:  # noqa: ANN001
    """``("", "", note)`` for a replay that verifies (and matches its store row, if any);
    else the failure's kind (unreadable or differs) and its message naming the file."""
    from arena.game.replay import ReplayError, fault_counts, read_replay
    from arena.game.verify import check_game_id, check_recorded_game, verify_replay

    try:
        rep = read_replay(file)
    except ReplayError as exc:
        return "unreadable", str(exc), ""
    try:
        verify_replay(rep, name=str(file))
        row = None if store is None else store[1].get(rep.game_id)
        if row is None:
            check_game_id(rep, str(file))
            return "", "", "" if store is None else "no row in the store (a game a killed run left)"
        st = store[0]
        kept = (st.root / "replays").absolute()
        if file.absolute().is_relative_to(kept) and (st.root / row.replay).absolute() != file.absolute():
            raise ReplayError(f"{file}: holds game {rep.game_id}, whose replay the store has at {row.replay}")
        label = f"{file} (store: game {row.id})"
        bots = [(s.bot.name, s.bot.version, s.bot.hash) for s in row.seats]
        check_recorded_game(rep, label=label, seed=row.seed, players=row.players, variant=row.variant, bots=bots)
        if row.status != rep.status:
            raise ReplayError(f"{label}: the store has it {row.status}, the replay {rep.status}")
        if rep.result is not None and row.status == "complete":
            counts = fault_counts(rep)
            for s in row.seats:
                stored = (s.points, s.puddings, s.rank, s.autopilot, {k: v for k, v in s.faults.items() if v})
                res = rep.result
                recorded = (res.scores[s.seat], res.puddings[s.seat], res.ranks[s.seat], res.autopilot[s.seat],
                            {k: v for k, v in counts[s.seat].items() if v})
                if stored != recorded:
                    raise ReplayError(
                        f"{label}: seat {s.seat}: the store has points, puddings, rank, autopilot, faults {stored}, "
                        f"the replay {recorded}"
                    )
        check_game_id(rep, label)
    except ReplayError as exc:
        return "differs", str(exc), ""
    return "", "", ""


#: The commands of this module by name, for the app to register.
COMMANDS = {"replay": replay_command, "verify": verify_command}
