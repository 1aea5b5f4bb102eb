"""The human seat's process: a protocol-v1 bot whose decisions a person makes.

    python -m arena.cli.human_seat --tty /dev/pts/3

``arena play human BOT…`` starts it like any bot: it answers the referee on
stdin/stdout (through the Python SDK, :mod:`protocol.sdk`) and shows the game to
the person, and reads their choices, on the terminal named by ``--tty``. Before
each choice it shows what happened since the last one (everyone's revealed
cards, round scores), every seat's tableau, and the person's hand, numbered,
with what each card is worth. The choice dialog itself is
:func:`arena.authoring.human.choose`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import IO

from rich.table import Table
from rich.text import Text

from arena.authoring.human import (
    LeaveTable,
    card_name,
    card_values,
    choose,
    gain_now,
    maki_symbols,
    pudding_value,
    round_points,
    tableau_piles,
)
from arena.cli.render import STYLE, SafeConsole
from arena.game.replay import RESIGN_STATUS
from arena.text import LINE_LIMIT, NAME_LIMIT, printable
from protocol import Act, Card, GameEnd, GameOver, GameStart, LastCard, Reveal, RoundEnd, RoundStart
from protocol.sdk import Bot, View, run

YOU = "bold"


class Screen:
    """The person's terminal: a rich console writing to it (through which nothing the
    referee passes on from the bots, their names, drives the terminal), and its input lines."""

    def __init__(self, reader: IO[str], writer: IO[str], fd: int) -> None:
        self.reader = reader
        self.fd = fd
        self.console = SafeConsole(file=writer, highlight=False, soft_wrap=False)
        self.names: list[str] = []
        self.seat = 0
        self.players = 0
        self.seats = 0

    # -- talking to the person -----------------------------------------------------
    def fit(self) -> None:
        """Follow the terminal's size (the person may resize it between turns)."""
        try:
            columns, lines = os.get_terminal_size(self.fd)
        except OSError:
            return
        if columns > 0 and lines > 0:
            self.console.size = (columns, lines)

    def ask(self, prompt: str) -> str:
        self.console.print(Text(prompt, style="bold"), end="")
        self.console.file.flush()
        line = self.reader.readline()
        if not line:  # the end of the terminal's input (Ctrl-D): leave the table
            self.console.print()
            raise LeaveTable
        return line

    def tell(self, message: str) -> None:
        style = "red" if message.startswith("✗") else ""
        self.console.print(Text(message, style=style))

    # -- names ---------------------------------------------------------------------
    def who(self, seat: int) -> Text:
        if seat == self.seat:
            return Text("you", style=YOU)
        name = self.names[seat] if seat < len(self.names) else f"seat {seat}"
        return Text(f"{name} (seat {seat})")

    # -- screens -------------------------------------------------------------------
    def welcome(self, game: GameStart) -> None:
        self.fit()
        self.names = [printable(n, limit=NAME_LIMIT) for n in game.names]
        self.seat, self.players, self.seats = game.seat, game.players, game.seats
        others = ", ".join(n for i, n in enumerate(self.names) if i != game.seat)
        self.console.rule(Text(f"Sushi Go! · you are seat {game.seat}, playing {others}", style="bold"))
        rules = game.rules
        extra = ""
        if rules.variant == "dummy":
            extra = " · with a dummy seat: each turn one of you controls it (R15)"
        elif rules.variant == "alternate":
            extra = " · round 2 passes right"
        self.console.print(
            f"{game.players} players · {rules.hand_size} cards a hand · 3 rounds{extra}.\n"
            "Each turn: pick a card by its number; ? at any prompt shows the help and the card values, "
            "q leaves the table."
        )

    def show_events(self, events: Sequence[object]) -> None:
        for event in events:
            if isinstance(event, RoundStart):
                self.console.rule(
                    f"Round {event.round} of 3 · {event.hand_size} cards · hands pass {event.direction}"
                )
            elif isinstance(event, Reveal):
                title = f"Turn {event.round}.{event.turn} revealed:"
                if event.controller is not None:
                    title += f" ({self.who(event.controller).plain} controlled the dummy)"
                self.console.print(Text(title, style="dim"))
                on_wasabi = {w.nigiri for w in event.wasabi}
                for play in event.plays:
                    line = Text("  ").append_text(_pad(self.who(play.seat), 22))
                    line.append_text(cards_line(play.cards, on_wasabi))
                    if play.chopsticks_returned is not None:
                        line.append("  (used chopsticks: they go back into the hand)", style="dim")
                    self.console.print(line)
            elif isinstance(event, LastCard):
                self.console.print(Text(f"Last cards of round {event.round}, played for everyone:", style="dim"))
                on_wasabi = {w.nigiri for w in event.wasabi}
                for seat_card in event.cards:
                    line = Text("  ").append_text(_pad(self.who(seat_card.seat), 22))
                    line.append_text(cards_line([Card(id=seat_card.id, card=seat_card.card)], on_wasabi))
                    self.console.print(line)
            elif isinstance(event, RoundEnd):
                self.console.print(self.round_table(event))

    def round_table(self, event: RoundEnd) -> Table:
        table = Table(title=f"Round {event.round} scored", title_justify="left", title_style="bold")
        for col, justify in (("", "left"), ("points", "right"), ("maki symbols", "right"),
                             ("maki points", "right"), ("total", "right")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for seat, points in enumerate(event.points):
            table.add_row(
                self.who(seat), f"{points:+d}", str(event.maki_symbols[seat]),
                f"{event.maki_points[seat]:+d}" if event.maki_points[seat] else "", str(event.scores[seat]),
            )
        return table

    def show_table(self, act: Act) -> None:
        table = Table(
            title=f"Round {act.round}, turn {act.turn} · hands pass {act.direction}",
            title_justify="left",
            title_style="bold",
            caption="round: this round's points so far, maki and puddings aside",
            caption_justify="left",
        )
        table.add_column("")
        table.add_column("score", justify="right")
        table.add_column("round", justify="right")
        table.add_column("maki", justify="right", style=STYLE["maki2"])
        table.add_column("puddings", justify="right", style=STYLE["pudding"])
        table.add_column("tableau")
        for seat, tableau in enumerate(act.tableaus):
            piles = Text()
            for pile in tableau_piles(tableau):
                if piles:
                    piles.append(" · ", style="dim")
                piles.append(pile.text, style=STYLE.get(pile.kind, ""))
            who = self.who(seat)
            if act.controller == seat:
                who.append(" ◆ dummy", style="dim")
            table.add_row(
                who, str(act.scores[seat]), str(round_points(tableau)), str(maki_symbols(tableau)),
                str(act.puddings[seat]), piles,
            )
        self.console.print(table)

    def show_hand(self, act: Act) -> None:
        mine = act.tableaus[act.seat]
        table = Table(title="Your hand", title_justify="left", title_style="bold", show_edge=False)
        table.add_column("#", justify="right", style="bold")
        table.add_column("card")
        table.add_column("worth")
        table.add_column("for you now")
        for number, card in enumerate(act.hand, 1):
            table.add_row(
                str(number), Text(card_name(card.card), style=STYLE.get(card.card, "")),
                card_values(self.players, self.seats).get(card.card, ""), gain_now(card.card, mine),
            )
        self.console.print(table)
        notes = []
        if any(len(p.cards) == 2 for p in act.legal):
            notes.append("You have chopsticks: you may take two cards (two numbers).")
        if act.dummy:
            notes.append("You control the dummy this turn: take your card, then give the dummy one.")
        last = act.last_action
        if last is not None and last.status != "ok":
            notes.append(f"Your last choice was not applied ({last.status}): {printable(last.message, limit=LINE_LIMIT)}")
        for note in notes:
            self.console.print(Text(note, style="cyan"))

    def show_act(self, act: Act) -> None:
        self.fit()
        self.show_events(act.events)
        self.show_table(act)
        self.show_hand(act)

    def game_over(self, over: GameOver) -> None:
        self.fit()
        self.show_events(over.events)
        self.console.rule(Text("Game over", style="bold"))
        table = Table(title_justify="left")
        for col, justify in (("place", "right"), ("", "left"), ("points", "right"), ("puddings", "right")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        order = sorted(range(len(over.scores)), key=lambda s: (over.ranks[s], s))
        for seat in order:
            table.add_row(str(over.ranks[seat]), self.who(seat), str(over.scores[seat]), str(over.puddings[seat]))
        self.console.print(table)
        end = next((e for e in over.events if isinstance(e, GameEnd)), None)
        if end is not None:
            parts = [f"{self.who(s).plain} {end.puddings[s]} ({end.pudding_points[s]:+d})" for s in range(len(end.puddings))]
            rule = pudding_value(self.players, self.seats).removeprefix("at the end: ")
            self.console.print(f"Puddings scored ({rule}): " + " · ".join(parts))
        if len({over.scores[s] for s in range(self.players)}) < self.players:
            self.console.print(Text("Equal points are ranked by puddings, then shared (R13).", style="dim"))
        place = over.ranks[self.seat] if self.seat < len(over.ranks) else 0
        winners = sum(1 for s in range(self.players) if over.ranks[s] == 1)
        if place == 1:
            self.console.print(Text("You win!" if winners == 1 else "You share the win!", style="bold green"))
        else:
            self.console.print(Text(f"You placed {place} of {self.players}.", style="bold"))


def cards_line(cards: Sequence[Card], on_wasabi: set[int]) -> Text:
    """Revealed cards by name; a nigiri that went onto a wasabi says so."""
    out = Text()
    for i, card in enumerate(cards):
        if i:
            out.append(", ")
        out.append(card_name(card.card), style=STYLE.get(card.card, ""))
        if card.id in on_wasabi:
            out.append(" on wasabi", style=STYLE["wasabi"])
    return out


def _pad(text: Text, width: int) -> Text:
    text = text.copy()
    if len(text) < width:
        text.append(" " * (width - len(text)))
    return text


class HumanBot(Bot):
    """The SDK bot whose :meth:`act` asks the person."""

    name = "human"
    version = "1"

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.screen = screen

    def on_game_start(self, game: GameStart) -> None:
        self.screen.welcome(game)

    def act(self, view: View) -> object:
        screen = self.screen
        screen.show_act(view.act)
        try:
            return choose(view.act, screen.ask, screen.tell)
        except LeaveTable:
            screen.tell("You left the table (recorded as resigned): your seat plays seeded random cards to the end of the game.")
            raise SystemExit(RESIGN_STATUS) from None  # the referee records it as resigned

    def on_game_over(self, over: GameOver) -> None:
        self.screen.game_over(over)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m arena.cli.human_seat", description=__doc__.splitlines()[0])
    parser.add_argument("--tty", required=True, help="the terminal device the person plays on")
    args = parser.parse_args(argv)
    try:
        fd = os.open(args.tty, os.O_RDWR | os.O_NOCTTY)
    except OSError as exc:
        print(f"human seat: cannot open the terminal {args.tty}: {exc.strerror or exc}", file=sys.stderr)
        raise SystemExit(2) from None
    with open(fd, encoding="utf-8", errors="replace", closefd=False) as reader, open(  # noqa: SIM117
        os.dup(fd), "w", encoding="utf-8", buffering=1
    ) as writer:
        run(HumanBot(Screen(reader, writer, fd)))


if __name__ == "__main__":
    main()
