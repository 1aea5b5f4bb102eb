"""The `arena` command line. Commands gather options and call one function that does
the work; output formats (tables, --json) stay apart from computing."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from arena import __version__
from arena.cli_render import ConsoleLogHandler, SafeConsole
from arena.engine import Variant
from arena.errors import ArenaError


class _HelpGroup(TyperGroup):
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
_HELP = {"rich_markup_mode": None, "cls": _HelpGroup}
app = typer.Typer(
    name="arena",
    help="Sushi Go! Arena: run bot tournaments with an exact rules engine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    **_HELP,
)
bench_app = typer.Typer(
    help="Benchmarks, each reported as a ratio against a baseline measured in the same run.",
    no_args_is_help=True,
    **_HELP,
)
app.add_typer(bench_app, name="bench")
store_app = typer.Typer(
    help="The results store (RESULTS/arena.db): rebuild it from the replay files, or move its secret deal key.",
    no_args_is_help=True,
    **_HELP,
)
app.add_typer(store_app, name="store")
store_key_app = typer.Typer(
    help="The store's secret deal key: every deal, set id and card id of its games is keyed with it.",
    no_args_is_help=True,
    **_HELP,
)
store_app.add_typer(store_key_app, name="key")

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


def _version(value: bool) -> None:
    if value:
        from arena.engine import RULES_VERSION

        out.print(f"arena {__version__} (rules {RULES_VERSION})", highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Sushi Go! Arena: run bot tournaments with an exact rules engine."""


JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]


def say_waiting(message: str) -> None:
    """How a command that writes a results folder says that it waits for another's lock."""
    err.print(f"[yellow]{escape(message)}[/yellow]", highlight=False)


@bench_app.command("engine")
def bench_engine_command(
    players: Annotated[
        list[int] | None,
        typer.Option("--players", "-p", min=2, max=5, help="Player counts to measure (repeatable). Default: 2 to 5."),
    ] = None,
    seconds: Annotated[float, typer.Option("--seconds", "-s", min=0.1, help="Seconds per player count.")] = 2.0,
    variant: Annotated[Variant, typer.Option(help="Rules variant (dummy: 2 players).")] = Variant.STANDARD,
    json_output: JsonOption = False,
) -> None:
    """Random games through the engine's public API vs a plain 60-line random playout."""
    from arena.bench.engine import bench_engine

    chosen = variant
    counts = players or ([2] if chosen is Variant.DUMMY else [2, 3, 4, 5])
    if chosen is Variant.DUMMY and counts != [2]:
        raise ArenaError("--variant dummy is a two-player variant: use --players 2")
    results = []
    with err.status("benchmarking the engine…", spinner="dots") if err.is_terminal else nullcontext():
        for n in counts:
            results.append(bench_engine(n, seconds, chosen.value))
    headline = next((r for r in results if r.players == 4), results[0])
    if json_output:
        print(
            json.dumps(
                {
                    "benchmark": "engine",
                    "players": headline.players,
                    "games_per_s": headline.games_per_s,
                    "us_per_decision": headline.us_per_decision,
                    "ratio": headline.ratio,
                    "per_players": {str(r.players): r.to_dict() for r in results},
                }
            )
        )
        return
    table = Table(title=f"Engine: random {chosen.value} games through the public API", title_justify="left")
    for col in ("players", "games/s", "µs/decision", "baseline games/s", "ratio"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(
            str(r.players), f"{r.games_per_s:,.0f}", f"{r.us_per_decision:.2f}", f"{r.baseline_games_per_s:,.0f}", f"{r.ratio:.2f}"
        )
    out.print(table)
    out.print("[dim]ratio = engine games/s ÷ plain-playout games/s, measured interleaved in this run.[/dim]")


@bench_app.command("referee")
def bench_referee_command(
    seconds: Annotated[
        float, typer.Option("--seconds", "-s", min=0.1, help="Seconds of measuring, shared by the referee and the raw baseline.")
    ] = 2.0,
    pin: Annotated[
        bool, typer.Option("--pin/--no-pin", help="Run it all on one CPU, so that where the OS puts the bots cannot sway the baseline.")
    ] = True,
    json_output: JsonOption = False,
) -> None:
    """The referee's cost per 4-seat decision cycle with four instant C bots (needs `cc`)
    vs the same bytes over plain blocking pipes."""
    from arena.bench.referee import bench_referee

    with err.status("benchmarking the referee…", spinner="dots") if err.is_terminal else nullcontext():
        r = bench_referee(seconds, pin=pin)
    if json_output:
        print(json.dumps({"benchmark": "referee", "players": 4, **r.to_dict()}))
        return
    table = Table(title="Referee: 4-player games among four instant C bots", title_justify="left")
    for col in ("", "games", "cycles", "games/s", "µs/cycle"):
        table.add_column(col, justify="right")
    table.add_row("referee", f"{r.games:,}", f"{r.cycles:,}", f"{r.games_per_s:,.0f}", f"{r.referee_us_per_cycle:.1f}")
    raw_games_per_s = r.raw_games / r.raw_seconds
    table.add_row("raw pipes", f"{r.raw_games:,}", f"{r.raw_cycles:,}", f"{raw_games_per_s:,.0f}", f"{r.raw_us_per_cycle:.1f}")
    out.print(table)
    out.print(f"overhead ratio: {r.overhead_ratio:.2f}", highlight=False)
    out.print(
        "[dim]cycle = four acts written, four replies read (plus each game's game_start and game_over, "
        "spread over its 21 cycles); ratio = referee µs/cycle ÷ raw µs/cycle (the same bytes, "
        f"blocking os.write/os.read, no decoding), measured interleaved in {r.slices} slices in this run"
        + (f", everything on CPU {r.pinned_cpu}.[/dim]" if r.pinned_cpu is not None else ", CPUs not pinned.[/dim]")
    )


@bench_app.command("sandbox")
def bench_sandbox_command(
    starts: Annotated[int, typer.Option("--starts", min=1, help="Bot starts per level.")] = 20,
    games: Annotated[int, typer.Option("--games", min=1, help="4-player games per level, for the cost per decision.")] = 20,
    json_output: JsonOption = False,
) -> None:
    """What each sandbox level costs: ms to start a bot (spawn to hello reply) and µs per
    4-seat decision cycle, with the instant C bot (needs `cc`)."""
    from arena.bench.sandbox import bench_sandbox

    with err.status("benchmarking the sandbox levels…", spinner="dots") if err.is_terminal else nullcontext():
        costs, missing = bench_sandbox(starts, games)
    if json_output:
        print(json.dumps({"benchmark": "sandbox", "levels": [c.to_dict() for c in costs], "strict_missing": missing}))
        return
    table = Table(title="Sandbox levels: an instant C bot", title_justify="left")
    for col in ("level", "start ms (median)", "start ms (min)", "µs/cycle"):
        table.add_column(col, justify="right")
    for c in costs:
        table.add_row(c.level, f"{c.start_ms:.1f}", f"{c.start_min_ms:.1f}", f"{c.cycle_us:.0f}")
    out.print(table)
    if missing:
        err.print(f"[yellow]strict not measured:[/yellow] {escape(str(missing))}", highlight=False)
    out.print(
        "[dim]unconfined = no sandbox object at all; start = spawn to the hello reply, levels interleaved; "
        "cycle = four acts written and four replies read, in whole games.[/dim]"
    )


# -- playing games ------------------------------------------------------------------

HelloMs = Annotated[int, typer.Option("--hello-ms", min=1, help="Start-up budget per bot (hello), ms.")]
TurnMs = Annotated[int, typer.Option("--turn-ms", min=1, help="Time per decision, ms.")]
BankMs = Annotated[int, typer.Option("--bank-ms", min=0, help="Extra time per game any decision may draw on, ms.")]
TimeScale = Annotated[float, typer.Option("--time-scale", min=0.001, help="Multiply every time budget by this.")]
NoTimeout = Annotated[bool, typer.Option("--no-timeout", help="Never time a bot out (for debugging a bot).")]


SandboxOption = Annotated[
    str | None,
    typer.Option(
        "--sandbox",
        help="How bots are confined: none, limits (resource limits) or strict (also no network, a read-only view "
        "of the system, own process namespace). Default: strict where the machine supports it, else limits.",
        metavar="none|limits|strict",
    ),
]


def sandbox_settings(level: str | None):  # noqa: ANN201
    """The run's sandbox for a ``--sandbox`` value: a bad value or an unavailable
    ``strict`` is an error; falling back from the default prints one warning."""
    from arena.bots.sandbox import SandboxSettings, resolve_level

    try:
        resolved, warning = resolve_level(level)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    if warning:
        err.print(f"[yellow]warning:[/yellow] {escape(str(warning))}", highlight=False)
    return SandboxSettings(resolved)


def _time_settings(hello_ms: int, turn_ms: int, bank_ms: int, time_scale: float, no_timeout: bool):  # noqa: ANN202
    from arena.game.players import TimeSettings

    return TimeSettings(hello_ms=hello_ms, turn_ms=turn_ms, bank_ms=bank_ms, time_scale=time_scale, no_timeout=no_timeout)


def _parse_turn(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        rnd, turn = (int(x) for x in value.split("."))
    except ValueError:
        raise ArenaError(f"--turn takes ROUND.TURN, e.g. 2.3; not {value!r}") from None
    return rnd, turn


@app.command("play")
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
    hello_ms: HelloMs = 10_000,
    turn_ms: TurnMs = 1_000,
    bank_ms: BankMs = 10_000,
    time_scale: TimeScale = 1.0,
    no_timeout: NoTimeout = False,
    sandbox: SandboxOption = None,
    json_output: JsonOption = False,
) -> None:
    """Play one game among the given bots (or you and bots: `arena play human BOT`) and print it."""
    from arena.authoring.play import is_human, play_one
    from arena.cli_render import render_game, replay_summary
    from arena.engine import GameConfig

    if not 2 <= len(bots) <= 5:
        raise ArenaError(f"a game needs 2 to 5 bots, {len(bots)} given")
    try:
        config = GameConfig(len(bots), variant)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    ts = _time_settings(hello_ms, turn_ms, bank_ms, time_scale, no_timeout)
    confined = sandbox_settings(sandbox)
    results = Path("results")
    human = any(is_human(b) for b in bots)
    # No spinner when a person plays: the game itself is on the terminal.
    spinner = err.is_terminal and not json_output and not human
    try:
        with err.status("playing…", spinner="dots") if spinner else nullcontext():
            outcome = play_one(
                bots, config, seed, ts, replay_path=None, build_cache=results / "build", sandbox=confined,
                key=play_key(results),
            )
    except KeyboardInterrupt as exc:
        by = f" ({exc})" if str(exc) else ""
        err.print(f"interrupted: the game was not finished and no replay was written; every bot was stopped{by}", highlight=False)
        raise typer.Exit(130) from None
    path = replay or results / "play" / f"{outcome.record.game_id}.json.gz"
    from arena.game.replay import write_replay

    write_replay(path, outcome.record.replay)
    if json_output:
        summary = replay_summary(outcome.record.replay)
        summary["replay"] = str(path)
        print(json.dumps(summary))
    else:
        render_game(out, outcome.record.replay, verbose=verbose)
        err.print(f"replay: {path}", highlight=False)
    if outcome.record.status == "void":
        raise typer.Exit(1)


def _check_turn_shown(replay, only: tuple[int, int], file: Path) -> None:  # noqa: ANN001
    """An :class:`ArenaError` naming the file, the turn and the turns the game has,
    unless ``arena replay --turn`` can show turn ``only`` of ``replay``."""
    from arena.cli_render import shown_turns

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


@app.command("replay")
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
    from arena.cli_render import render_ask, render_game, replay_summary
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
            by = f" ({exc})" if str(exc) else ""
            err.print(f"interrupted: the bot was stopped before it answered{by}", highlight=False)
            raise typer.Exit(130) from None
        if json_output:
            print(json.dumps(report.to_dict()))
        else:
            render_ask(out, report)
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

        err.print(f"replay viewer: {write_replay_page(rep, html)}", highlight=False)
        return
    if json_output:
        print(json.dumps(replay_summary(rep)))
        return
    render_game(out, rep, verbose=True, only=only)


@app.command("verify")
def verify_command(
    target: Annotated[Path, typer.Argument(help="A replay file, or a folder searched recursively for *.json.gz.", metavar="FILE|DIR")],
    json_output: JsonOption = False,
) -> None:
    """Re-simulate replays from their seeds and plays and re-derive every recorded outcome;
    in a results folder, check each game's seats against the store too. Every file is
    listed, good or bad; fail on any difference."""
    from arena.game.replay import ReplayError, iter_replays

    try:
        files = iter_replays(target)
    except ReplayError as exc:
        raise ArenaError(str(exc)) from None
    store = _verify_store(target)
    # A file that cannot be read as a replay is not counted with the replays that differ
    # from the engine: a stray file in a folder of replays is not a tampered game.
    failures: list[tuple[str, str, str]] = []  # file, message, "unreadable" or "differs"
    listed: list[dict[str, str]] = []
    try:
        for file in files:
            kind, message, note = _verify_one(file, store)
            if kind:
                failures.append((str(file), message, kind))
                listed.append({"file": str(file), "status": kind, "error": message})
                if not json_output:
                    err.print(f"[bold red]✗[/bold red] {escape(message)}", highlight=False)
            else:
                listed.append({"file": str(file), "status": "ok", **({"note": note} if note else {})})
                if not json_output:
                    out.print(f"[green]✓[/green] {escape(str(file))}" + (f" [dim]({escape(note)})[/dim]" if note else ""),
                              highlight=False)
    finally:
        if store is not None:
            store[0].close()
    if json_output:
        print(
            json.dumps(
                {
                    "checked": len(files),
                    "failed": len(failures),
                    "failures": [{"file": f, "error": e, "kind": k} for f, e, k in failures],
                    "files": listed,
                }
            )
        )
    elif not failures:
        out.print(f"[green]✓[/green] {len(files)} replay(s) verified: every game re-simulates exactly", highlight=False)
    if failures and not json_output:
        err.print(_verify_summary(len(files), failures), highlight=False)
    if store is None and not json_output:
        err.print("[dim](not in a results folder: seats, versions and hashes not checked against a store)[/dim]", highlight=False)
    if failures:
        raise typer.Exit(1)


def _verify_store(target: Path):  # noqa: ANN202
    """The results store ``target`` lies in (the folder itself, or the one holding its
    ``replays/``), with every game row by id; None outside a results folder."""
    from arena.store.database import DB_NAME, StoreError, open_store

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


def _verify_summary(checked: int, failures: list[tuple[str, str, str]]) -> str:
    """The last line of a failed ``arena verify``: the files that are not readable
    replays apart from the replays that differ from the engine."""
    unreadable = sum(1 for *_, kind in failures if kind == "unreadable")
    differ = len(failures) - unreadable
    replays = checked - unreadable
    parts = []
    if unreadable:
        parts.append(f"{unreadable} file is not a readable replay" if unreadable == 1
                     else f"{unreadable} files are not readable replays")
    if differ:
        parts.append(f"{differ} of {replays} replay(s) differ from the engine")
    elif replays:
        parts.append(f"the other {replays} replay(s) verified: every game re-simulates exactly")
    return "; ".join(parts) if checked == 1 else f"{checked} files checked: " + "; ".join(parts)


# -- the results store ----------------------------------------------------------------


@store_app.command("rebuild")
def store_rebuild_command(
    results: Annotated[Path, typer.Argument(help="The results folder.", metavar="RESULTS")] = Path("results"),
    json_output: JsonOption = False,
) -> None:
    """Make RESULTS/arena.db again from the replay files (every replay re-simulated), e.g.
    after it was damaged: the old file is moved aside, never deleted; what could not be
    recovered is listed. Holds the results folder like a run (waits for one going on)."""
    from arena.store.rebuild import rebuild_store

    spinner = err.is_terminal and not json_output
    try:
        with err.status("rebuilding the store from the replays…", spinner="dots") if spinner else nullcontext():
            report = rebuild_store(results, on_wait=say_waiting)
    except KeyboardInterrupt:
        err.print("\n[yellow]interrupted[/yellow]: the store was not changed.", highlight=False)
        raise typer.Exit(130) from None
    if json_output:
        print(json.dumps(report.to_dict()))
    else:
        _print_rebuild(report)
    if report.not_recovered or report.lost:  # (a lost meta table is said above: the games are all there)
        raise typer.Exit(1)


def _print_rebuild(r) -> None:  # noqa: ANN001 - a RebuildReport
    db = r.root / "arena.db"
    if r.moved_to is not None:
        said = "damaged" if r.old_damaged else "the old database"
        err.print(f"{escape(str(db))}: {said}, moved aside to {escape(str(r.moved_to))}", highlight=False)
    out.print(
        f"[green]✓[/green] {escape(str(db))} rebuilt: {r.games} game(s) from their replays, {r.tournaments} tournament(s), "
        f"in {r.seconds:.1f} s",
        highlight=False,
    )
    if r.kept_meta:
        err.print(f"kept from the old database: {escape(', '.join(r.kept_meta))}", highlight=False)
    if r.meta_lost:
        err.print(
            "[yellow]warning:[/yellow] the old database's settings (its meta table) could not be read in full: "
            "a key the store held (e.g. its deal key) is lost; import it again (`arena store key import`)",
            highlight=False,
        )
    if r.unreadable_tables:
        err.print(
            f"[yellow]warning:[/yellow] the old database could be read only in part ({escape(', '.join(r.unreadable_tables))})",
            highlight=False,
        )
    if r.unlinked:
        err.print(
            f"[yellow]warning:[/yellow] {r.unlinked} game(s) recorded without their tournament (its rows were lost): "
            "run the same `arena run` again, it counts them in again without playing them",
            highlight=False,
        )
    if r.guessed_sets:
        err.print(f"{r.guessed_sets} game(s) put in a duplicate set by their deal (their set's row was lost)", highlight=False)
    if r.void:
        err.print(f"{r.void} void game(s) left out: the next run plays them again", highlight=False)
    for _, reason in r.not_recovered[:20]:
        err.print(f"[bold red]✗[/bold red] not recovered: {escape(reason)}", highlight=False)
    if len(r.not_recovered) > 20:
        err.print(f"… and {len(r.not_recovered) - 20} more replay file(s) not recovered", highlight=False)
    if r.lost:
        shown = ", ".join(r.lost[:10]) + (f" and {len(r.lost) - 10} more" if len(r.lost) > 10 else "")
        err.print(
            f"[bold red]✗[/bold red] {len(r.lost)} game(s) of the old database have no usable replay: {shown} "
            "(the next run plays them again)",
            highlight=False,
        )

# -- arena store key ---------------------------------------------------------------------


@store_key_app.command("export")
def store_key_export_command(
    results: Annotated[Path, typer.Argument(help="The results folder.", metavar="RESULTS")] = Path("results"),
) -> None:
    """Print the store's deal key (64 hex digits). Keep it secret: whoever has it can compute every
    deal of the store's games. `arena store key import` puts it into a fresh results folder, whose
    runs then play the very same games with the same --seed."""
    from arena.store.database import open_store

    # Read-only first (a read-only folder's key can be exported too); a store without a key
    # yet is opened to make one.
    with open_store(results, create=False, read_only=True) as store:
        key = store.stored_deal_key()
    if key is None:
        with open_store(results, create=False) as store:
            key = store.deal_key()
    print(key.hex())


@store_key_app.command("import")
def store_key_import_command(
    key: Annotated[str, typer.Argument(help="A deal key, as `arena store key export` printed it.", metavar="KEY")],
    results: Annotated[Path, typer.Argument(help="The results folder (made if missing).", metavar="RESULTS")] = Path("results"),
) -> None:
    """Make KEY the deal key of the store in RESULTS: only a store with no games yet (or a new one).
    Holds the results folder like a run (waits for one going on, then checks its games)."""
    from arena.store.database import open_store, parse_deal_key, results_lock

    parse_deal_key(key, "the key to import")  # checked before any folder is made
    # A run reads the key once, under this lock, and deals every game with it: replacing it
    # under a run would record games dealt with a key gone from the store.
    try:
        with results_lock(results, "arena store key import", on_wait=say_waiting), open_store(results) as store:
            store.import_deal_key(key)
    except KeyboardInterrupt:
        err.print("\n[yellow]interrupted[/yellow]: the deal key was not changed.", highlight=False)
        raise typer.Exit(130) from None
    err.print(f"deal key imported into {escape(str(store.path))}", highlight=False)


def play_key(results: Path) -> bytes:
    """The deal key of a single game (`arena play`): the store's in ``results`` if there is
    one (made now if it has none yet), so that the same seed replays the same game next to
    it; else a fresh random one."""
    import secrets

    from arena.store.database import DB_NAME, open_store, read_deal_key

    key = read_deal_key(results)
    if key is None and (results / DB_NAME).is_file():
        with open_store(results, create=False) as store:
            key = store.deal_key()
    return key or secrets.token_bytes(32)


@app.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of every protocol message (referee to bot and back)."""
    from protocol import schema_json

    print(schema_json())


def main() -> None:
    """Console entry point: user errors print one clear line and exit 1, no traceback."""
    # Warnings logged below the CLI (a replay not recovered, a sandbox fallback) quote
    # files and bots: they are printed through the stderr console too, not raw.
    logging.basicConfig(level=logging.WARNING, handlers=[ConsoleLogHandler(err)])
    # SIGTERM stops a command as Ctrl-C does, at every moment: while games are played the
    # tournament listens for both itself; before (bots building or starting) and after,
    # it is turned into the SIGINT that every command already handles (exit 130).
    signal.signal(signal.SIGTERM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
    try:
        app()
    except ArenaError as exc:
        err.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False)
        sys.exit(1)


from arena import cli_doctor as _cli_doctor  # noqa: E402,F401  (registers doctor)
from arena import cli_new as _cli_new  # noqa: E402,F401  (registers new)
from arena import cli_report as _cli_report  # noqa: E402,F401  (registers report)
from arena import cli_run as _cli_run  # noqa: E402,F401  (registers run, leaderboard, games)
from arena import cli_validate as _cli_validate  # noqa: E402,F401  (registers validate, submit)
