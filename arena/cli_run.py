"""`arena run`, `arena leaderboard`, `arena games`: the tournament commands.

Registered on the app of :mod:`arena.cli` (imported at its end)."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.live import Live
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from arena.cli import (
    JsonOption,
    SandboxOption,
    app,
    bench_app,
    err,
    out,
    sandbox_settings,
    say_waiting,
)
from arena.cli_render import name_text
from arena.engine import Variant
from arena.errors import ArenaError
from arena.text import LINE_LIMIT, NAME_LIMIT, printable


def _said(text: str) -> str:
    """A message that quotes a bot or a file (a skip or void reason), as one line of
    markup-escaped, printable text."""
    return escape(printable(text, limit=LINE_LIMIT))


def _anchor(value: str | None) -> tuple[str, float] | None:
    if value is None:
        return None
    bot, sep, elo = value.partition("=")
    try:
        if not sep or not bot:
            raise ValueError
        return bot, float(elo)
    except ValueError:
        raise ArenaError(f"--anchor takes BOT=ELO, e.g. greedy=1500; not {value!r}") from None


# -- the leaderboard table -------------------------------------------------------------------


def leaderboard_table(st: Any, width: int | None = None) -> Table:
    """The rich table of a :class:`~arena.standings.Standings`, with as many of its
    columns as ``width`` (default: the output's) holds: on a narrow terminal the least
    needed ones go first (peak MB, CPU ms, the version, the interval), never a number
    cut short."""
    title = Text(printable(f"{st.tournament or 'all games'} · {st.players} players, {st.variant} · {st.games} games"))
    return _rows_table(st.rows, title=title, width=out.width if width is None else width)


#: The leaderboard's optional columns, in the order they are given up when space is short.
_OPTIONAL = ("peak MB", "CPU ms", "ver", "95% CI")


def _rows_table(rows: list[dict[str, Any]], *, title: str | Text, live: bool = False, width: int | None = None) -> Table:
    """Leaderboard rows as a table; ``live`` rows (during a run) have no interval,
    version or usage yet. With ``width``, optional columns are left out until it fits."""
    dropped: set[str] = set() if not live else set(_OPTIONAL)
    table = _build_rows_table(rows, title, dropped, live)
    for col in _OPTIONAL:
        if width is None or _table_width(table) <= width:
            break
        if col not in dropped:
            dropped.add(col)
            table = _build_rows_table(rows, title, dropped, live)
    return table


def _table_width(table: Table) -> int:
    from rich.console import Console
    from rich.measure import Measurement

    console = Console(width=10_000, file=io.StringIO())
    return Measurement.get(console, console.options, table).maximum


def _build_rows_table(rows: list[dict[str, Any]], title: str | Text, dropped: set[str], live: bool) -> Table:
    from arena.standings import fault_summary

    def shown(col: str) -> bool:
        return col not in dropped

    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("bot", style="bold cyan", no_wrap=True)
    if shown("ver"):
        table.add_column("ver", style="dim", no_wrap=True, max_width=12)
    table.add_column("Elo", justify="right", style="bold", no_wrap=True)
    if shown("95% CI"):
        table.add_column("95% CI", justify="right", style="dim", no_wrap=True)
    for col in ("games", "wins", "pts", "rank"):
        table.add_column(col, justify="right", no_wrap=True)
    if shown("CPU ms"):
        table.add_column("CPU ms", justify="right", style="dim", no_wrap=True)  # per game, the mean
    if shown("peak MB"):
        table.add_column("peak MB", justify="right", style="dim", no_wrap=True)
    table.add_column("faults", justify="right")
    for r in rows:
        cells: list[Any] = [str(r["rank"]), name_text(r["label"])]
        if shown("ver"):
            cells.append(name_text(r["version"] or r["hash"][:8]))
        cells.append(f"{r['elo']:.0f}")
        if shown("95% CI"):
            cells.append(f"{r['elo_low'] - r['elo']:+.0f} {r['elo_high'] - r['elo']:+.0f}")
        cells += [str(r["games"]), f"{r['wins']:g}", f"{r['mean_points']:.1f}", f"{r['mean_rank']:.2f}"]
        if shown("CPU ms"):
            cells.append(_num(r.get("cpu_ms")))
        if shown("peak MB"):
            cells.append(_num(r.get("peak_mb")))
        faults = sum(r["faults"].values())
        cells.append(Text(fault_summary(r["faults"]) if not live else str(faults), style="red" if faults else "dim"))
        table.add_row(*cells)
    return table


def _seats_text(g: Any) -> Text:
    seats = Text()
    for s in g.seats:
        if s.seat:
            seats.append(" · ")
        mark = ("*" if s.rank == 1 else "") + ("!" if s.autopilot else "")
        seats.append(f"{printable(s.bot.name, limit=NAME_LIMIT)} {s.points}{mark}", style="bold green" if s.rank == 1 else "")
    return seats


def _games_table(rows: list[Any], paths: list[str], title: Text) -> Table:
    """The games with their replays' paths (never broken: a path is for copying)."""
    table = Table(title=title, title_justify="left")
    table.add_column("game", no_wrap=True)
    table.add_column("seats: points (* won, ! ended on autopilot)")
    table.add_column("faults", justify="right", no_wrap=True)
    table.add_column("replay", no_wrap=True)
    for g, path in zip(rows, paths, strict=True):
        faults = sum(sum(s.faults.values()) for s in g.seats)
        gid = Text(printable(g.id, limit=NAME_LIMIT) + (" void" if g.status == "void" else ""), style="yellow" if g.status == "void" else "")
        table.add_row(gid, _seats_text(g), Text(str(faults), style="red" if faults else "dim"), Text(printable(path)))
    return table


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def h2h_table(st: Any) -> Table:
    keys = [r["key"] for r in st.rows]
    labels = {r["key"]: r["label"] for r in st.rows}
    table = Table(title="Head to head: wins–draws–losses of the row bot against the column bot", title_justify="left")
    table.add_column("")
    for k in keys:
        table.add_column(name_text(labels[k]), justify="center")
    for a in keys:
        cells: list[Any] = []
        for b in keys:
            if a == b or st.h2h is None or b not in st.h2h.get(a, {}):
                cells.append(Text("·", style="dim"))
                continue
            w, d, lo = st.h2h[a][b]
            style = "green" if w > lo else "red" if lo > w else ""
            cells.append(Text(f"{w:g}–{d:g}–{lo:g}", style=style))
        table.add_row(name_text(labels[a]), *cells)
    return table


# -- progress ----------------------------------------------------------------------------


class ConsoleReporter:
    """Progress of a run: a rich progress bar and a live leaderboard on a terminal,
    plain lines otherwise: one per finished game, each whole on its line."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.fancy = err.is_terminal and not quiet
        self.quiet = quiet
        self.live: Live | None = None
        self.progress: Progress | None = None
        self.task: Any = None
        self.results: list[Any] = []
        self.names: dict[str, str] = {}
        self.total = 0
        self.last_table = 0.0
        self.table: Table | None = None
        self.faults = 0
        self.t0 = time.monotonic()

    def bot_ready(self, entrant: Any) -> None:
        if not self.quiet:
            version = printable(entrant.manifest.version or entrant.row.hash[:8], limit=NAME_LIMIT)
            name = printable(entrant.name, limit=NAME_LIMIT)
            err.print(
                f"[green]✓[/green] {escape(name)} [dim]{escape(version)} · started in {entrant.startup_ms:.0f} ms[/dim]",
                highlight=False,
            )

    def bot_skipped(self, skipped: Any) -> None:
        if not self.quiet:
            name = escape(printable(skipped.name, limit=NAME_LIMIT))
            err.print(f"[bold red]✗ {name}[/bold red] skipped: {_said(skipped.reason)}", highlight=False)

    def planned(self, plan: Any) -> None:
        self.total = plan.total
        self.t0 = time.monotonic()  # the games start now: their rate counts from here
        if self.quiet:
            return
        todo = plan.total - plan.already
        err.print(
            f"tournament [bold]{escape(plan.tournament_id)}[/bold]: {plan.players} players, {plan.variant}, "
            f"{plan.total} games ({plan.already} already played, {todo} to play), {plan.jobs} at a time",
            highlight=False,
        )
        if getattr(plan, "games_note", ""):
            err.print(f"[yellow]note:[/yellow] {escape(plan.games_note)}", highlight=False)
        if self.fancy and todo:
            self.progress = Progress(
                TextColumn("[bold]games"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                # The whole run's rate, not rich's recent-samples one: games of fast and slow
                # bots come mixed, and a few quick ones in a row made it promise seconds.
                TextColumn("eta {task.fields[eta]}"),
                console=err,
            )
            self.task = self.progress.add_task("games", total=plan.total, completed=plan.already, rate="", eta="-:--:--")
            self.live = Live(self.progress, console=err, refresh_per_second=4, transient=True)
            self.live.start()

    def cluster_ready(self, info: Any) -> None:
        if self.quiet:
            return
        seats = sum(w.seats for w in info.workers)
        err.print(
            f"cluster [bold]{info.target}[/bold]: {len(info.workers)} worker(s), {seats:g} seats, "
            f"{info.seats_per_game} seat(s) a game, {info.slots} game(s) at once"
            + (f" · dashboard {info.dashboard}" if info.dashboard else ""),
            highlight=False,
        )
        for w in info.oversubscribed:
            err.print(
                f"[yellow]note:[/yellow] worker {w.address} declares {w.seats:g} seats for {w.cores} cores: "
                "its bots may lose time to each other",
                highlight=False,
            )

    def game_done(self, game: Any, record: Any, done: int, total: int) -> None:
        from arena.ratings import GameResult

        n = record.config.players
        if record.status == "complete":
            self.results.append(
                GameResult(
                    game_id=record.game_id,
                    set_id=game.set_id,
                    seats=tuple(game.seats),
                    ranks=tuple(record.ranks[:n]),
                    points=tuple(record.scores[:n]),
                    autopilot=tuple(record.autopilot[:n]),
                    faults=tuple(record.faults[:n]),
                )
            )
        self.faults += sum(sum(f.values()) for f in record.faults)
        elapsed = time.monotonic() - self.t0
        rate = len(self.results) / elapsed if elapsed > 0 else 0.0
        if self.progress is not None and self.live is not None:
            left = max(0, total - done)
            eta = time.strftime("%H:%M:%S", time.gmtime(left / rate)).removeprefix("0") if rate > 0 and left / rate < 86_400 else "-:--:--"
            self.progress.update(self.task, completed=done, rate=f"{rate:.1f}/s", eta=eta)
            now = time.monotonic()
            if now - self.last_table > 1.0 or done == total:
                self.last_table = now
                self.live.update(Group(self.progress, self._live_table(done, total)))
        elif not self.quiet:
            # Every finished game gets its line, however long the run: a log is read with
            # grep and tail, and a game left out of it cannot be found there.
            marks = [
                ("*" if rank == 1 else "") + ("!" if auto else "")
                for rank, auto in zip(record.ranks, record.autopilot, strict=False)
            ]
            scores = " ".join(
                f"{printable(b, limit=NAME_LIMIT)}:{p}{m}" for b, p, m in zip(game.seats, record.scores, marks, strict=False)
            )
            reason = (record.void_reason.splitlines() or [""])[0]
            status = "" if record.status == "complete" else f" VOID ({printable(reason, limit=LINE_LIMIT)})"
            err.print(Text(f"[{done}/{total}] game {record.game_id} {scores}{status}"), highlight=False)

    def _live_table(self, done: int, total: int) -> Table:
        from arena.ratings import bot_stats, fit_elo

        elo = fit_elo(self.results)
        stats = bot_stats(self.results)
        rows = []
        for i, key in enumerate(sorted(elo, key=lambda k: -elo[k]), 1):
            s = stats[key]
            rows.append(
                {
                    "rank": i,
                    "label": key,
                    "elo": elo[key],
                    "games": s.games,
                    "wins": s.wins,
                    "mean_points": s.mean_points,
                    "mean_rank": s.mean_rank,
                    "faults": s.faults,
                }
            )
        return _rows_table(rows, title=f"live: {len(self.results)} games played this run ({done}/{total})", live=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


# -- commands ----------------------------------------------------------------------------


@app.command("run")
def run_command(
    bots: Annotated[Path | None, typer.Option("--bots", "-b", help="The folder of bots: every bot in it plays.")] = None,
    players: Annotated[int | None, typer.Option("--players", "-p", min=2, max=5, help="Seats per table (default: 4, or the number of bots if fewer).")] = None,
    deals: Annotated[int | None, typer.Option(min=1, help="Duplicate deals per table (default 1).")] = None,
    seatings: Annotated[str | None, typer.Option(help="rotations (each deal under every rotation of the seats) or all (every permutation).")] = None,
    games: Annotated[int | None, typer.Option(min=1, help="Cap on the number of games: a balanced design instead of every table (whole duplicate sets, never fewer than seat every bot).")] = None,
    variant: Annotated[Variant | None, typer.Option(help="Rules variant (default standard).")] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="The tournament's seed: same seed and bots, same games (default 0).")] = None,
    gauntlet: Annotated[str | None, typer.Option(help="Only the tables of this bot: that bot against the field.")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="Games at once (default: cores ÷ seats, at least 1).")] = None,
    cluster: Annotated[str | None, typer.Option(help="Play the games on a Dask cluster: tcp://HOST:8786, or local:N worker processes here (needs the `cluster` extra; see docs/cluster.md).")] = None,
    results: Annotated[Path | None, typer.Option("--results", "-r", help="The results folder (default results/).")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="A TOML file holding any of these settings.")] = None,
    name: Annotated[str | None, typer.Option(help="The tournament's id (default: from the folder and the settings).")] = None,
    anchor: Annotated[str | None, typer.Option(help="BOT=ELO: fix that bot's rating instead of the pool mean at 1500.")] = None,
    hello_ms: Annotated[int | None, typer.Option("--hello-ms", min=1, help="Start-up budget per bot (hello), ms (default 10000).")] = None,
    turn_ms: Annotated[int | None, typer.Option("--turn-ms", min=1, help="Time per decision, ms (default 1000).")] = None,
    bank_ms: Annotated[int | None, typer.Option("--bank-ms", min=0, help="Extra time per game, ms (default 10000).")] = None,
    time_scale: Annotated[float | None, typer.Option("--time-scale", min=0.001, help="Multiply every time budget by this.")] = None,
    no_timeout: Annotated[bool | None, typer.Option("--no-timeout", help="Never time a bot out.")] = None,
    sandbox: SandboxOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    no_report: Annotated[bool, typer.Option("--no-report", help="Do not write the HTML report (RESULTS/<tournament>/report/).")] = False,
    json_output: JsonOption = False,
) -> None:
    """Play a round-robin of every bot in a folder (resumable), then print the leaderboard
    and write the HTML report."""
    from arena.standings import standings, write_leaderboard_files
    from arena.store.database import open_store
    from arena.tournament import RunSettings, load_config, run_tournament, settings_from

    options: dict[str, Any] = load_config(config) if config is not None else {}
    given = {
        "bots": bots, "players": players, "deals": deals, "seatings": seatings, "games": games,
        "variant": variant.value if variant is not None else None, "seed": seed, "gauntlet": gauntlet, "jobs": jobs,
        "results": results, "name": name, "anchor": anchor, "hello_ms": hello_ms, "turn_ms": turn_ms,
        "bank_ms": bank_ms, "time_scale": time_scale, "no_timeout": no_timeout, "cluster": cluster,
        "sandbox": sandbox,
    }
    options.update({k: v for k, v in given.items() if v is not None})
    options["sandbox"] = sandbox_settings(options.get("sandbox")).level.value  # the one warning, if any
    if options.get("bots") is None:
        raise ArenaError("which bots? give --bots DIR (or `bots = \"DIR\"` in the --config file)")
    settings = settings_from(options, base=RunSettings(bots_dir=Path(options["bots"])))
    anchor_pair = _anchor(options.get("anchor"))
    reporter = ConsoleReporter(quiet=quiet or json_output)
    # The results folder's lock stays held from the first game to the report (a second run waits).
    with contextlib.ExitStack() as held:
        try:
            summary = run_tournament(settings, reporter, hold=held, on_wait=say_waiting)
        except KeyboardInterrupt:
            reporter.close()
            err.print("\n[yellow]interrupted[/yellow] before the games started; nothing was lost.", highlight=False)
            raise typer.Exit(130) from None
        finally:
            reporter.close()
        report = None
        with open_store(settings.results, create=False) as store:
            st = standings(store, summary.tournament_id, anchor=anchor_pair)
            write_leaderboard_files(st, settings.results)
            if not no_report:
                from arena.cli_report import print_report_summary
                from arena.report.site import write_report

                report = write_report(store, summary.tournament_id, table=st)
                print_report_summary(report, quiet=True)
    if json_output:
        doc = st.to_dict()
        doc["run"] = {
            "played": summary.played, "already": summary.already, "recovered": summary.recovered,
            "total": summary.total, "void": summary.void,
            "interrupted": summary.interrupted, "seconds": round(summary.seconds, 3), "games_note": summary.games_note,
            "results": str(settings.results), "report": str(report.index) if report else None,
        }
        print(json.dumps(doc))
    else:
        out.print(leaderboard_table(st))
        for sk in st.skipped:
            out.print(f"[red]{sk.get('status', 'skipped')}[/red] {escape(printable(sk['bot'], limit=NAME_LIMIT))}: {_said(sk['reason'])}", highlight=False)
        err.print(
            f"{summary.played} game(s) played, {summary.already} already in the store"
            + (f" ({summary.recovered} recovered from the replay files of a killed run)" if summary.recovered else "")
            + f", {summary.void} void, "
            f"in {summary.seconds:.1f} s · results in {escape(str(settings.results))}/ (leaderboard.md, leaderboard.json, replays/)",
            highlight=False,
        )
        if report is not None:
            err.print(f"report: {escape(str(report.index))}", highlight=False)
        for reason in summary.void_reasons[:5]:
            err.print(f"[yellow]void[/yellow] {_said(reason)}", highlight=False)
    if summary.interrupted:
        err.print(
            f"[yellow]interrupted:[/yellow] {summary.done} of {summary.total} games are safe in the store; "
            "run the same command again to play the rest.",
            highlight=False,
        )
        raise typer.Exit(130)


@app.command("leaderboard")
def leaderboard_command(
    results: Annotated[Path, typer.Argument(help="The results folder.", metavar="RESULTS")] = Path("results"),
    tournament: Annotated[str | None, typer.Option("--tournament", "-t", help="Which tournament (default: the latest).")] = None,
    all_games: Annotated[bool, typer.Option("--all", help="Every game of the format in the store (all tournaments, all versions).")] = False,
    players: Annotated[int | None, typer.Option("--players", "-p", min=2, max=5, help="The format's player count (default: the tournament's).")] = None,
    variant: Annotated[Variant | None, typer.Option(help="The format's variant (default: the tournament's).")] = None,
    h2h: Annotated[bool, typer.Option("--h2h", help="Also the head-to-head matrix.")] = False,
    anchor: Annotated[str | None, typer.Option(help="BOT=ELO: fix that bot's rating instead of the pool mean.")] = None,
    json_output: JsonOption = False,
) -> None:
    """The leaderboard of a tournament: Elo with 95% intervals, games, wins, points, faults."""
    from arena.standings import standings
    from arena.store.database import open_store

    with open_store(results, create=False, read_only=True) as store:
        st = standings(
            store, tournament, all_games=all_games, players=players,
            variant=variant.value if variant else None, h2h=h2h, anchor=_anchor(anchor),
        )
    if json_output:
        print(json.dumps(st.to_dict()))
        return
    if not st.rows:
        out.print(f"no games yet in {st.tournament or 'this format'}", highlight=False)
    else:
        out.print(leaderboard_table(st))
    if h2h and st.rows:
        out.print(h2h_table(st))
    for sk in st.skipped:
        out.print(f"[red]{sk.get('status', 'skipped')}[/red] {escape(printable(sk['bot'], limit=NAME_LIMIT))}: {_said(sk['reason'])}", highlight=False)


@app.command("games")
def games_command(
    results: Annotated[Path, typer.Argument(help="The results folder.", metavar="RESULTS")] = Path("results"),
    tournament: Annotated[str | None, typer.Option("--tournament", "-t", help="Only this tournament's games (default: all).")] = None,
    bot: Annotated[str | None, typer.Option("--bot", help="Only games where this bot (name, or name@hash) sat.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the last N games.")] = None,
    json_output: JsonOption = False,
) -> None:
    """The list of recorded games, with the paths of their replays."""
    from arena.store.database import open_store

    with open_store(results, create=False, read_only=True) as store:
        if tournament is not None and store.get_tournament(tournament) is None:
            raise ArenaError(f"{store.path}: no tournament {tournament!r}")
        rows = store.games(tournament, bot=bot, status=None)
    if limit is not None:
        rows = rows[-limit:]
    if json_output:
        print(
            json.dumps(
                {
                    "games": [
                        {
                            "id": g.id, "status": g.status, "set_id": g.set_id, "seed": g.seed, "players": g.players,
                            "variant": g.variant, "finished": g.finished, "duration_s": g.duration_s,
                            "replay": str(results / g.replay),
                            "seats": [
                                {"seat": s.seat, "bot": s.bot.name, "key": s.bot.key, "points": s.points,
                                 "rank": s.rank, "faults": s.faults}
                                for s in g.seats
                            ],
                        }
                        for g in rows
                    ]
                }
            )
        )
        return
    paths = [str(results / g.replay) for g in rows]
    title = Text(printable(f"{len(rows)} game(s)" + (f" with {bot}" if bot else "")))
    table = _games_table(rows, paths, title)
    if _table_width(table) <= out.width:
        out.print(table)
        return
    # Too narrow for the table: a game per line, its replay's path under it, never broken
    # (a path longer than the terminal is left to the terminal to wrap, so it copies whole).
    out.print(Text(f"{title.plain} (* won, ! ended on autopilot)", style="bold"))
    for g, path in zip(rows, paths, strict=True):
        line = Text(printable(g.id, limit=NAME_LIMIT), style="yellow" if g.status == "void" else "")
        if g.status == "void":
            line.append(" void", style="yellow")
        line.append("  ")
        line.append_text(_seats_text(g))
        faults = sum(sum(s.faults.values()) for s in g.seats)
        line.append(f"  faults {faults}", style="red" if faults else "dim")
        out.print(line)
        out.print(Text("  " + printable(path), style="dim"), soft_wrap=True)


@bench_app.command("tournament")
def bench_tournament_command(
    games: Annotated[
        int,
        typer.Option("--games", "-g", min=60, help="About this many 4-player games per configuration (whole rounds of 60 games, one deal of every table)."),
    ] = 180,
    rounds: Annotated[int, typer.Option(min=1, help="Interleaved rounds the games are split over.")] = 3,
    scratch: Annotated[
        Path | None,
        typer.Option(help="Where to make the (temporary) results folders: a folder on the disk your results go to. [default: the current directory]"),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Whole tournaments of six instant C bots (needs `cc`) with --jobs 1, --jobs 2, and
    --jobs 2 recording nothing: games/s, the scaling, and what the store costs."""
    from contextlib import nullcontext

    from arena.bench.tournament import bench_tournament

    with err.status("benchmarking tournaments…", spinner="dots") if err.is_terminal else nullcontext():
        r = bench_tournament(games, rounds, scratch)
    if json_output:
        print(json.dumps({"benchmark": "tournament", "players": 4, **r.to_dict()}))
        return
    table = Table(title=f"Tournament: four-player games among six instant C bots, {r.rounds} rounds", title_justify="left")
    for col in ("configuration", "games", "games/s"):
        table.add_column(col, justify="right")
    table.add_row("--jobs 1", f"{r.games:,}", f"{r.games_per_s_jobs1:,.1f}")
    table.add_row("--jobs 2", f"{r.games:,}", f"{r.games_per_s:,.1f}")
    table.add_row("--jobs 2, nothing recorded", f"{r.games:,}", f"{r.games_per_s_unrecorded:,.1f}")
    out.print(table)
    out.print(
        f"scaling (2 jobs ÷ 1): {r.scaling:.2f} · store share of the time: {100 * r.store_share:.1f}% "
        f"(1 − recorded ÷ unrecorded games/s) · store writer: {r.store_ms_per_game:.2f} ms CPU per game, "
        f"{100 * r.store_cpu_share:.1f}% of the arena's CPU · results written under {r.scratch} "
        f"(creating a file there: {r.file_create_us:.0f} µs)",
        highlight=False,
    )


@bench_app.command("cluster")
def bench_cluster_command(
    deals: Annotated[int, typer.Option(min=1, help="Duplicate deals: 60 four-player games each, per side.")] = 1,
    json_output: JsonOption = False,
) -> None:
    """The same tournament of instant C bots (needs `cc` and the `cluster` extra) with
    --jobs 2 and with --cluster local:2: games/s side by side, and what Dask costs per game."""
    from contextlib import nullcontext

    from arena.bench.cluster import SLOTS, bench_cluster

    with err.status("benchmarking the cluster path…", spinner="dots") if err.is_terminal else nullcontext():
        r = bench_cluster(deals)
    if json_output:
        print(json.dumps({"benchmark": "cluster", "players": 4, "slots": SLOTS, **r.to_dict()}))
        return
    table = Table(title=f"{r.games} four-player games among six instant C bots, {SLOTS} at a time", title_justify="left")
    table.add_column("executor")
    table.add_column("games/s", justify="right")
    table.add_row(f"local, --jobs {SLOTS}", f"{r.local_games_per_s:,.1f}")
    table.add_row(f"Dask, --cluster local:{SLOTS}", f"{r.cluster_games_per_s:,.1f}")
    out.print(table)
    out.print(
        f"cluster path: +{r.overhead_ms_per_game:,.0f} ms per game per slot = Dask task {r.dask_task_ms:.1f} + "
        f"game process start {r.game_process_ms:.0f} + fresh bots and the rest {r.bots_and_rest_ms:.0f}; "
        f"cluster start {r.cluster_setup_s:.1f} s (not in games/s); the arena process: {r.coordinator_cpu_ms:.1f} ms CPU "
        "per game (client, writer, scheduler)",
        highlight=False,
    )
