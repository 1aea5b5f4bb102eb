"""How `arena run` shows its progress: on a terminal a progress bar and a live leaderboard,
otherwise a plain line per finished game."""

from __future__ import annotations

import time
from typing import Any

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

from arena.cli.console import err
from arena.cli.render_results import quoted_reason, rows_table
from arena.text import LINE_LIMIT, NAME_LIMIT, printable
from arena.tournament.ratings import GameResult, Tally


class ConsoleReporter:
    """Progress of a run: a rich progress bar and a live leaderboard on a terminal,
    plain lines otherwise: one per finished game, each whole on its line."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.fancy = err.is_terminal and not quiet
        self.quiet = quiet
        self.live: Live | None = None
        self.progress: Progress | None = None
        self.task: Any = None
        # The games of this run as aggregates (flat memory however long the run: no per-game
        # list), and the last live fit, the next one's warm start.
        self.tally = Tally(by_set=False)
        self.elo: dict[str, float] = {}
        self.names: dict[str, str] = {}
        self.total = 0
        self.last_table = 0.0
        # What the live table cost last time: it is redrawn only after 20 times that, so that
        # it never takes more than about 5% of the run, however many bots and games.
        self.table_cost = 0.0
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
            err.print(f"[bold red]✗ {name}[/bold red] skipped: {quoted_reason(skipped.reason)}", highlight=False)

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

    @property
    def played(self) -> int:
        """The complete games of this run so far."""
        return self.tally.games

    def game_done(self, game: Any, record: Any, done: int, total: int) -> None:
        n = record.config.players
        if record.status == "complete":
            self.tally.add(
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
        rate = self.played / elapsed if elapsed > 0 else 0.0
        if self.progress is not None and self.live is not None:
            left = max(0, total - done)
            eta = time.strftime("%H:%M:%S", time.gmtime(left / rate)).removeprefix("0") if rate > 0 and left / rate < 86_400 else "-:--:--"
            self.progress.update(self.task, completed=done, rate=f"{rate:.1f}/s", eta=eta)
            now = time.monotonic()
            if now - self.last_table > max(1.0, 20.0 * self.table_cost) or done == total:
                table = self._live_table(done, total)
                self.last_table = time.monotonic()
                self.table_cost = self.last_table - now
                self.live.update(Group(self.progress, table))
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

    def live_rows(self) -> list[dict[str, Any]]:
        """The live leaderboard's rows: the fit and statistics of this run's games so far,
        refitted from the last fit (the same ratings as a cold fit, sooner)."""
        elo = self.tally.fit(start=self.elo or None)
        self.elo = elo
        stats = self.tally.stats()
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
        return rows

    def _live_table(self, done: int, total: int) -> Table:
        return rows_table(self.live_rows(), title=f"live: {self.played} games played this run ({done}/{total})", live=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
