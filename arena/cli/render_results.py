"""How the commands on results print them: the leaderboard (fitted to the width), the head
to head, the list of games, the end of a run, a rebuilt store, a written report."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from arena.cli.render import name_text
from arena.text import LINE_LIMIT, NAME_LIMIT, printable


def quoted_reason(text: str) -> str:
    """A message that quotes a bot or a file (a skip or void reason), as one line of
    markup-escaped, printable text."""
    return escape(printable(text, limit=LINE_LIMIT))


def leaderboard_table(st: Any, width: int | None = None) -> Table:  # noqa: ANN401 - a Standings
    """The rich table of a :class:`~arena.tournament.standings.Standings`, with as many of its
    columns as ``width`` (default: all) holds: on a narrow terminal the least needed
    ones go first (peak MB, CPU ms, the version, the interval), never a number cut short."""
    title = Text(printable(f"{st.tournament or 'all games'} · {st.players} players, {st.variant} · {st.games} games"))
    return rows_table(st.rows, title=title, width=width)


#: The leaderboard's optional columns, in the order they are given up when space is short.
_OPTIONAL = ("peak MB", "CPU ms", "ver", "95% CI")


def rows_table(rows: list[dict[str, Any]], *, title: str | Text, live: bool = False, width: int | None = None) -> Table:
    """Leaderboard rows as a table; ``live`` rows (during a run) have no interval,
    version or usage yet. With ``width``, optional columns are left out until it fits."""
    dropped: set[str] = set() if not live else set(_OPTIONAL)
    table = _build_rows_table(rows, title, dropped, live)
    for col in _OPTIONAL:
        if width is None or table_width(table) <= width:
            break
        if col not in dropped:
            dropped.add(col)
            table = _build_rows_table(rows, title, dropped, live)
    return table


def table_width(table: Table) -> int:
    from rich.console import Console
    from rich.measure import Measurement

    console = Console(width=10_000, file=io.StringIO())
    return Measurement.get(console, console.options, table).maximum


def _build_rows_table(rows: list[dict[str, Any]], title: str | Text, dropped: set[str], live: bool) -> Table:
    from arena.tournament.standings import fault_summary

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
    los = st.h2h_los() if st.h2h is not None else {}
    table = Table(
        title="Head to head: wins–draws–losses of the row bot against the column bot, and the likelihood "
        "that the row bot is the better (LOS)",
        title_justify="left",
    )
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
            cells.append(Text(f"{w:g}–{d:g}–{lo:g}\nLOS {100 * los[a][b]:.0f}%", style=style))
        table.add_row(name_text(labels[a]), *cells)
    return table


def print_skipped(console: Console, skipped: list[dict[str, Any]]) -> None:
    """A line per bot the tournament left out, and why."""
    for sk in skipped:
        console.print(
            f"[red]{sk.get('status', 'skipped')}[/red] {escape(printable(sk['bot'], limit=NAME_LIMIT))}: {quoted_reason(sk['reason'])}",
            highlight=False,
        )


def print_leaderboard(console: Console, st: Any, *, h2h: bool) -> None:  # noqa: ANN401 - a Standings
    """`arena leaderboard`: the table (as wide as the console), the head to head, the bots left out."""
    if not st.rows:
        console.print(f"no games yet in {st.tournament or 'this format'}", highlight=False)
    else:
        console.print(leaderboard_table(st, width=console.width))
    if h2h and st.rows:
        console.print(h2h_table(st))
    print_skipped(console, st.skipped)


def print_run(out: Console, err: Console, st: Any, summary: Any, results: Path, report: Any, *, as_json: bool) -> None:  # noqa: ANN401
    """The end of `arena run`: the leaderboard (or the standings and the run as one JSON
    object), then on ``err`` what was played, where the results are, the void games."""
    if as_json:
        doc = st.to_dict()
        doc["run"] = {
            "played": summary.played, "already": summary.already, "recovered": summary.recovered,
            "total": summary.total, "void": summary.void,
            "interrupted": summary.interrupted, "seconds": round(summary.seconds, 3), "games_note": summary.games_note,
            "results": str(results), "report": str(report.index) if report else None,
        }
        print(json.dumps(doc))
        return
    out.print(leaderboard_table(st, width=out.width))
    print_skipped(out, st.skipped)
    err.print(
        f"{summary.played} game(s) played, {summary.already} already in the store"
        + (f" ({summary.recovered} recovered from the replay files of a killed run)" if summary.recovered else "")
        + f", {summary.void} void, "
        f"in {summary.seconds:.1f} s · results in {escape(str(results))}/ (leaderboard.md, leaderboard.json, replays/)",
        highlight=False,
    )
    if report is not None:
        err.print(f"report: {escape(str(report.index))}", highlight=False)
    for reason in summary.void_reasons[:5]:
        err.print(f"[yellow]void[/yellow] {quoted_reason(reason)}", highlight=False)


def print_games(console: Console, rows: list[Any], results: Path, *, bot: str | None, as_json: bool) -> None:
    """`arena games`: a table of the games with their replays' paths (or a game per line
    when the table does not fit), or one JSON object."""
    if as_json:
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
    if table_width(table) <= console.width:
        console.print(table)
        return
    # Too narrow for the table: a game per line, its replay's path under it, never broken
    # (a path longer than the terminal is left to the terminal to wrap, so it copies whole).
    console.print(Text(f"{title.plain} (* won, ! ended on autopilot)", style="bold"))
    for g, path in zip(rows, paths, strict=True):
        line = Text(printable(g.id, limit=NAME_LIMIT), style="yellow" if g.status == "void" else "")
        if g.status == "void":
            line.append(" void", style="yellow")
        line.append("  ")
        line.append_text(_seats_text(g))
        faults = sum(sum(s.faults.values()) for s in g.seats)
        line.append(f"  faults {faults}", style="red" if faults else "dim")
        console.print(line)
        console.print(Text("  " + printable(path), style="dim"), soft_wrap=True)


def print_report_summary(err: Console, summary: object, *, quiet: bool = False) -> None:
    """The lines every command that writes a report prints: problems, then where it is."""
    for problem in summary.problems:  # type: ignore[attr-defined]
        err.print(f"[yellow]warning:[/yellow] {escape(printable(str(problem), limit=LINE_LIMIT))}", highlight=False)
    if not quiet:
        err.print(
            f"report: {summary.index} ({summary.games} games, {summary.files} files, "  # type: ignore[attr-defined]
            f"{summary.bytes / 1024:,.0f} KB, {summary.seconds:.1f} s)",  # type: ignore[attr-defined]
            highlight=False,
        )


def print_rebuild(out: Console, err: Console, r: Any) -> None:  # noqa: ANN401 - a RebuildReport
    """What `arena store rebuild` did: the new database on ``out``, what was moved aside, kept,
    guessed, left out or lost on ``err``."""
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
