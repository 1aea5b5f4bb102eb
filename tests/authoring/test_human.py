"""The human seat: a person playing `arena play human BOT` in a terminal.

The end-to-end test drives a real game through a pseudo-terminal, as a person
would; the rest tests the choice dialog (every wrong input is answered with a
reason and asked again) and what the screen shows.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import random
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import msgspec
import pytest
from rich.console import Console
from sdk_helpers import act_message

from arena.authoring.human import (
    CARD_VALUES,
    ChoiceError,
    LeaveTable,
    card_values,
    choose,
    gain_now,
    order_matters,
    parse_numbers,
    round_points,
    tableau_piles,
)
from arena.cli.human_seat import Screen
from arena.engine import GameConfig, Variant, apply_turn, events, new_game
from arena.game.replay import ReplayError, read_replay
from arena.game.verify import verify_replay
from protocol import Act, Card, GameEnd, GameOver, GameStart, Play, Rules, TableauCard, TimeControl

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


# -- a real game in a pseudo-terminal ----------------------------------------------------


class Terminal:
    """A command run on a pseudo-terminal, read and typed into like a person would."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty is its controlling terminal
            try:
                os.chdir(cwd)
                os.environ["TERM"] = "xterm-256color"
                os.execv(argv[0], argv)
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # rows, columns
        self.output = b""  # everything shown, colour codes removed
        self.seen = 0  # how much of it was already matched

    def expect(self, *patterns: bytes, timeout: float = 30.0) -> bytes:
        """Read until one of ``patterns`` appears in new output; return it (b"" at EOF)."""
        deadline = time.monotonic() + timeout
        while True:
            fresh = self.output[self.seen :]
            for p in patterns:
                at = fresh.find(p)
                if at >= 0:
                    self.seen += at + len(p)
                    return p
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"waited for {patterns}; the screen ends with:\n{self.text()[-3000:]}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # EIO: the command has exited and closed the terminal
                data = b""
            if not data:
                return b""
            self.output += ANSI.sub(b"", data)

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\n")

    def wait(self) -> int:
        while self.expect(b"\x00never\x00", timeout=30.0):
            pass
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)

    def text(self) -> str:
        return self.output.decode(errors="replace")


PROMPT = b"help]: "
ORDER = b"Enter = 1]: "


def test_a_person_plays_a_whole_game_against_a_bot_in_a_terminal(tmp_path: Path) -> None:
    replay = tmp_path / "game.json.gz"
    term = Terminal(
        [sys.executable, "-m", "arena", "play", "human", str(ROOT / "example_bots" / "random"),
         "--seed", "1", "--replay", str(replay)],
        cwd=tmp_path,
    )
    # The first screen: the hand, numbered, with names and values.
    assert term.expect(PROMPT) == PROMPT
    first = term.text()
    assert "Your hand" in first and "Round 1 of 3" in first
    assert re.search(r"1 │ \w", first)
    # Wrong input is answered with a reason and asked again; ? shows the help.
    term.type("eleven")
    assert term.expect(PROMPT)
    assert "'eleven' is not a card number" in term.text()
    term.type("42")
    assert term.expect(PROMPT)
    assert "there is no card 42" in term.text()
    term.type("?")
    assert term.expect(PROMPT)
    assert "leave the table" in term.text()
    term.type("1")
    decisions = 1
    while True:
        seen = term.expect(PROMPT, ORDER, b"replay: ")
        if seen in (PROMPT, ORDER):
            term.type("1")
            decisions += seen == PROMPT
        else:
            break
    assert term.wait() == 0
    screen = term.text()
    # Every turn's reveal, every round's scores, the end of the game, then the arena's table.
    assert "Turn 1.1 revealed" in screen and "Turn 3.9 revealed" in screen
    assert all(f"Round {r} scored" in screen for r in (1, 2, 3))
    assert "Last cards of round 3" in screen
    assert "Game over" in screen and "Puddings scored" in screen
    assert screen.index("Game over") < screen.index("by round")  # the arena's result table comes last
    # The game went through the referee like any bot's: a complete, verifiable replay.
    rep = read_replay(replay)
    verify_replay(rep)
    assert rep.status == "complete" and [s.bot for s in rep.seats] == ["human", "random"]
    mine = [a for t in rep.turns for a in t.actions if a.seat == 0]
    assert decisions == len(mine) == 27
    assert all(a.status == "ok" for a in mine)
    assert rep.faults == []


def test_leaving_the_table_puts_the_seat_on_autopilot(tmp_path: Path) -> None:
    replay = tmp_path / "game.json.gz"
    term = Terminal(
        [sys.executable, "-m", "arena", "play", "human", str(ROOT / "example_bots" / "random"),
         "--seed", "2", "--replay", str(replay)],
        cwd=tmp_path,
    )
    assert term.expect(PROMPT)
    term.type("1")
    assert term.expect(PROMPT)
    term.type("q")
    assert term.wait() == 0
    screen = " ".join(term.text().split())
    assert "You left the table (recorded as resigned)" in screen
    # The arena's result table says resigned, not crash.
    table = screen[screen.index("seeded random cards to the end of the game.") :]
    assert "│ resigned" in table and "crash" not in screen
    rep = read_replay(replay)
    assert rep.status == "complete" and rep.result is not None
    assert rep.result.autopilot == [True, False]
    assert [(f.kind, f.seat, f.round, f.turn) for f in rep.faults] == [("resigned", 0, 1, 2)]
    assert rep.faults[0].message == "left the table: seeded random plays for the rest of the game"
    mine = [a.status for t in rep.turns for a in t.actions if a.seat == 0]
    assert mine[:3] == ["ok", "resigned", "autopilot"] and set(mine[2:]) == {"autopilot"}
    # The resignation re-simulates like any outcome: `arena verify` accepts the replay.
    verify_replay(rep)
    verified = subprocess.run(
        [sys.executable, "-m", "arena", "verify", str(replay)], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))},
        check=False,
    )
    assert verified.returncode == 0 and "1 replay(s) verified" in verified.stdout, verified.stderr


def test_a_resignation_in_a_replay_is_only_for_a_seat_that_left(tmp_path: Path) -> None:
    """Verification holds a resigned seat to what resigning means: its play that turn is the
    seeded fallback and it plays no more; a replay edited to say otherwise is refused."""
    replay = tmp_path / "game.json.gz"
    term = Terminal(
        [sys.executable, "-m", "arena", "play", "human", str(ROOT / "example_bots" / "random"),
         "--seed", "3", "--replay", str(replay)],
        cwd=tmp_path,
    )
    assert term.expect(PROMPT)
    term.type("q")
    assert term.wait() == 0
    rep = read_replay(replay)
    assert [f.kind for f in rep.faults] == ["resigned"]
    verify_replay(rep)
    # The resignation relabelled as any other fault, or as a crash, no longer matches the plays.
    for kind in ("crash", "timeout"):
        edited = msgspec.structs.replace(rep, faults=[msgspec.structs.replace(rep.faults[0], kind=kind)])
        with pytest.raises(ReplayError):
            verify_replay(edited)
    # A resigned seat that plays on is refused.
    turns = [msgspec.structs.replace(t) for t in rep.turns]
    later = turns[1]
    actions = [msgspec.structs.replace(a, status="ok") if a.seat == 0 else a for a in later.actions]
    edited = msgspec.structs.replace(rep, turns=[turns[0], msgspec.structs.replace(later, actions=actions), *turns[2:]])
    with pytest.raises(ReplayError):
        verify_replay(edited)


def test_ctrl_c_at_the_prompt_ends_the_game_with_a_clear_line(tmp_path: Path) -> None:
    term = Terminal(
        [sys.executable, "-m", "arena", "play", "human", str(ROOT / "example_bots" / "random"),
         "--replay", str(tmp_path / "game.json.gz")],
        cwd=tmp_path,
    )
    assert term.expect(PROMPT)
    os.write(term.fd, b"\x03")  # the terminal turns it into SIGINT for the arena
    assert term.wait() == 130
    assert "interrupted: the game was not finished" in term.text()
    assert "Traceback" not in term.text()
    assert not (tmp_path / "game.json.gz").exists()


def test_without_a_terminal_the_human_seat_fails_at_once_saying_why(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "play", "human", str(ROOT / "example_bots" / "random")],
        cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        start_new_session=True,  # no controlling terminal
    )
    assert proc.returncode == 1
    assert "human seat needs a terminal" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "results" / "play").exists()


def test_only_one_human_seat(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "play", "human", "human"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 1
    assert "only one human seat" in proc.stderr


# -- the choice dialog -------------------------------------------------------------------


def card(i: int, kind: str) -> Card:
    return Card(id=i, card=kind)


def make_act(
    hand: list[str],
    tableau: list[str] = (),  # type: ignore[assignment]
    *,
    chopsticks_usable: bool | None = None,
    dummy: bool = False,
) -> Act:
    """An act for seat 0 of two: ``hand`` (ids 100…), ``tableau`` (ids 1…), and the legal
    plays R8/R15 allow: single cards, ordered pairs with chopsticks, a dummy card last."""
    cards = [card(100 + i, k) for i, k in enumerate(hand)]
    tab = [TableauCard(id=1 + i, card=k) for i, k in enumerate(tableau)]
    if chopsticks_usable is None:
        chopsticks_usable = "chopsticks" in tableau and len(hand) >= (3 if dummy else 2)
    own: list[list[int]] = [[c.id] for c in cards]
    if chopsticks_usable:
        own += [[a.id, b.id] for a in cards for b in cards if a.id != b.id]
    if dummy:
        legal = [Play(cards=o, dummy_card=c.id) for o in own for c in cards if c.id not in o]
    else:
        legal = [Play(cards=o) for o in own]
    return Act(
        id=5, game_id="g", seat=0, round=1, turn=1, direction="left", time_ms=0, hand=cards, legal=legal,
        dummy=dummy, controller=0 if dummy else None, tableaus=[tab, []], puddings=[0, 0], scores=[0, 0],
        hand_sizes=[len(hand), len(hand)], banks_ms=[0, 0], last_action=None, events=[],
    )


class Person:
    """Scripted answers, one per prompt; records every prompt and every message."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.told: list[str] = []

    def ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.answers:
            raise AssertionError(f"asked once more than scripted: {prompt!r}; told {self.told}")
        return self.answers.pop(0) + "\n"

    def tell(self, message: str) -> None:
        self.told.append(message)


def test_a_card_is_chosen_by_its_number() -> None:
    act = make_act(["tempura", "squid_nigiri", "dumpling"])
    person = Person("2")
    assert choose(act, person.ask, person.tell) == Play(cards=[101])
    assert person.told == []


@pytest.mark.parametrize(
    ("typed", "reason"),
    [
        ("", "type the number of a card, 1 to 3"),
        ("abc", "'abc' is not a card number"),
        ("0", "there is no card 0: your hand has cards 1 to 3"),
        ("4", "there is no card 4"),
        ("-1", "there is no card -1"),
        ("1 2", "two cards need chopsticks on your table"),
        ("1 1", "card 1 is named twice"),
    ],
)
def test_wrong_input_is_answered_with_the_reason_and_asked_again(typed: str, reason: str) -> None:
    act = make_act(["tempura", "squid_nigiri", "dumpling"])
    person = Person(typed, "3")
    assert choose(act, person.ask, person.tell) == Play(cards=[102])
    assert len(person.prompts) == 2
    assert len(person.told) == 1 and reason in person.told[0]


def test_help_is_shown_and_the_question_asked_again() -> None:
    act = make_act(["tempura", "pudding"])
    person = Person("?", "2")
    assert choose(act, person.ask, person.tell) == Play(cards=[101])
    assert "chopsticks" in person.told[0] and "Pudding" in person.told[0]


@pytest.mark.parametrize("typed", ["q", "quit", " Q "])
def test_q_leaves_the_table(typed: str) -> None:
    act = make_act(["tempura", "pudding"])
    with pytest.raises(LeaveTable):
        choose(act, Person(typed).ask, Person().tell)


def test_two_cards_with_chopsticks_in_the_order_typed() -> None:  # R8
    act = make_act(["tempura", "squid_nigiri", "dumpling"], ["chopsticks"])
    person = Person("3 1")
    assert choose(act, person.ask, person.tell) == Play(cards=[102, 100])
    assert "two with chopsticks" in person.prompts[0]


def test_more_than_two_cards_is_refused() -> None:
    act = make_act(["tempura", "squid_nigiri", "dumpling"], ["chopsticks"])
    person = Person("1,2,3", "2")
    assert choose(act, person.ask, person.tell) == Play(cards=[101])
    assert "not more" in person.told[0]


def test_chopsticks_with_too_few_cards_say_so() -> None:  # R8, R15
    act = make_act(["tempura", "squid_nigiri"], ["chopsticks"], chopsticks_usable=False, dummy=True)
    person = Person("1 2", "1", "2")
    assert choose(act, person.ask, person.tell) == Play(cards=[100], dummy_card=101)
    assert "chopsticks need at least 3 cards" in person.told[0]


@pytest.mark.parametrize(("typed", "order", "expected"), [
    ("1 2", "", [100, 101]),  # Enter: wasabi first, the nigiri goes on it
    ("2 1", "1", [100, 101]),
    ("1 2", "2", [101, 100]),
])
def test_the_order_is_asked_for_a_wasabi_and_a_nigiri(typed: str, order: str, expected: list[int]) -> None:  # R7a
    act = make_act(["wasabi", "squid_nigiri", "dumpling"], ["chopsticks"])
    person = Person(typed, order)
    assert choose(act, person.ask, person.tell) == Play(cards=expected)
    assert "9 points" in person.told[0] and "3 points" in person.told[0]


def test_a_wrong_order_answer_is_asked_again() -> None:
    act = make_act(["wasabi", "egg_nigiri"], ["chopsticks"])
    person = Person("1 2", "3", "2")
    assert choose(act, person.ask, person.tell) == Play(cards=[101, 100])
    assert "type 1 or 2" in person.told[1]


def test_the_order_is_not_asked_when_it_cannot_matter() -> None:  # R7: an older empty wasabi takes the nigiri anyway
    assert not order_matters(card(1, "wasabi"), card(2, "salmon_nigiri"), [TableauCard(id=9, card="wasabi")])
    assert order_matters(card(1, "wasabi"), card(2, "salmon_nigiri"), [])
    assert not order_matters(card(1, "wasabi"), card(2, "tempura"), [])
    act = make_act(["wasabi", "squid_nigiri"], ["chopsticks", "wasabi"])
    person = Person("2 1")
    assert choose(act, person.ask, person.tell) == Play(cards=[101, 100])
    assert person.told == []


def test_the_dummys_controller_gives_the_dummy_a_card() -> None:  # R15
    act = make_act(["tempura", "squid_nigiri", "dumpling"], dummy=True)
    person = Person("1", "1", "x", "1 2", "3")
    assert choose(act, person.ask, person.tell) == Play(cards=[100], dummy_card=102)
    assert "then the dummy's" in person.prompts[0]
    assert "Card for the dummy" in person.prompts[1]
    assert "you are taking that card yourself" in person.told[0]
    assert "not a card number" in person.told[1]
    assert "exactly one card" in person.told[2]


def test_the_controller_may_go_back_to_their_own_card() -> None:
    act = make_act(["tempura", "squid_nigiri", "dumpling"], dummy=True)
    person = Person("1", "b", "2", "1")
    assert choose(act, person.ask, person.tell) == Play(cards=[101], dummy_card=100)


def test_parse_numbers_accepts_spaces_commas_and_plus() -> None:
    hand = [card(7, "tempura"), card(8, "wasabi"), card(9, "egg_nigiri")]
    assert parse_numbers("3,1", hand) == [hand[2], hand[0]]
    assert parse_numbers(" 2 + 3 ", hand) == [hand[1], hand[2]]
    with pytest.raises(ChoiceError, match="your hand has cards 1 to 3"):
        parse_numbers("9", hand)


JUNK = ["", "x", "0", "99", "1 1", "1 2 3", "?", "2,1", "-3", "1.5", "b", "2 1", "３"]


class Clumsy:
    """A person who types junk a few times at every prompt, then something sensible."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.asked = 0

    def ask(self, prompt: str) -> str:
        self.asked += 1
        assert self.asked < 200, "the dialog never ends"
        if self.rng.random() < 0.6:
            return self.rng.choice(JUNK)
        if "dummy" in prompt and "Take" not in prompt:
            return "2"
        return "1"

    def tell(self, message: str) -> None:
        pass


@pytest.mark.parametrize(("players", "variant"), [(2, Variant.STANDARD), (4, Variant.STANDARD), (2, Variant.DUMMY)])
def test_any_input_in_any_real_turn_ends_in_a_legal_play(players: int, variant: Variant) -> None:
    """Whole games through the engine, every seat a clumsy person: never a crash, always legal."""
    for seed in range(3):
        rng = random.Random(seed)
        state = new_game(GameConfig(players, variant), seed)
        while not state.over:
            plays = []
            for seat in range(players):
                act = act_message(state, seat, [], None)
                if not act.legal:
                    plays.append(None)
                    continue
                person = Clumsy(rng)
                play = choose(act, person.ask, person.tell)
                assert play in act.legal
                plays.append(play.ids(dummy=act.dummy))
            apply_turn(state, plays)


# -- what the screen shows -------------------------------------------------------------


def test_values_at_a_glance() -> None:
    tab = [TableauCard(id=1, card="tempura"), TableauCard(id=2, card="wasabi"), TableauCard(id=3, card="dumpling"),
           TableauCard(id=4, card="sashimi"), TableauCard(id=5, card="sashimi"), TableauCard(id=6, card="maki2")]
    assert gain_now("tempura", tab) == "+5: completes a pair"
    assert gain_now("sashimi", tab) == "+10: completes a set"
    assert gain_now("dumpling", tab) == "+2"
    assert gain_now("squid_nigiri", tab) == "+9 on your wasabi"
    assert gain_now("squid_nigiri", []) == "+3"
    assert gain_now("maki3", tab) == "maki 2 → 5 symbols"


def test_tableau_shows_nigiri_on_wasabi_sets_and_puddings() -> None:
    tab = [
        TableauCard(id=1, card="wasabi"), TableauCard(id=2, card="salmon_nigiri", wasabi=1),
        TableauCard(id=3, card="tempura"), TableauCard(id=4, card="tempura"), TableauCard(id=5, card="wasabi"),
        TableauCard(id=6, card="egg_nigiri"), TableauCard(id=7, card="pudding"), TableauCard(id=8, card="chopsticks"),
    ]
    texts = [p.text for p in tableau_piles(tab)]
    assert texts == ["tempura ×2 (5)", "wasabi+salmon (6)", "egg (1)", "wasabi (empty)", "chopsticks ×1", "pudding ×1"]
    assert round_points(tab) == 5 + 6 + 1


def _screen() -> tuple[Screen, io.StringIO]:
    buffer = io.StringIO()
    screen = Screen(io.StringIO(""), buffer, fd=-1)
    screen.console = Console(file=buffer, width=120, color_system=None, highlight=False)
    return screen, buffer


def test_the_screen_shows_names_hands_tableaus_and_the_reveal() -> None:
    state = new_game(GameConfig(3, Variant.STANDARD), 5)
    for _ in range(3):
        apply_turn(state, [act_message(state, s, [], None).legal[0].ids() for s in range(3)])
    act = act_message(state, 1, events(state), None)
    screen, buffer = _screen()
    screen.welcome(
        GameStart(
            id=2, game_id="g", seat=1, players=3, seats=3, names=["greedy", "human", "random"],
            rules=Rules(rules_version="r", variant="standard", hand_size=9, rounds=3,
                        directions=["left", "left", "left"], deck={}),
            time=TimeControl(turn_ms=0, bank_ms=0), seed=1,
        )
    )
    screen.show_act(act)
    shown = buffer.getvalue()
    assert "you are seat 1, playing greedy, random" in shown
    assert "Turn 1.3 revealed" in shown and "greedy (seat 0)" in shown and "random (seat 2)" in shown
    assert "Your hand" in shown
    for number, c in enumerate(act.hand, 1):
        assert re.search(rf"\b{number} │ [A-Z]", shown), c
    assert "Round 1, turn 4" in shown


def test_the_end_of_the_game_shows_puddings_and_the_place() -> None:
    screen, buffer = _screen()
    screen.names, screen.seat, screen.players, screen.seats = ["human", "greedy"], 0, 2, 2
    over = GameOver(
        id=30, game_id="g", scores=[40, 41], puddings=[3, 1], ranks=[2, 1], faults={}, reason="complete",
        last_action=None,
        events=[GameEnd(pudding_points=[6, 0], scores=[40, 41], puddings=[3, 1], ranks=[2, 1])],
    )
    screen.game_over(over)
    shown = buffer.getvalue()
    assert "You placed 2 of 2" in shown
    assert "you 3 (+6)" in shown and "no -6 with two players" in shown


# -- puddings in the help: right for the table at hand (R12, R15) ---------------------------


def test_the_pudding_value_says_what_puddings_are_worth_at_this_table() -> None:  # R12, R15
    assert card_values(4, 4)["pudding"] == "at the end: most +6, fewest -6"
    assert card_values(2, 2)["pudding"] == "at the end: most +6 (no -6 with two players)"
    # The dummy variant: two players, but the dummy is a third seat for puddings, penalty included.
    assert card_values(2, 3)["pudding"] == "at the end: most +6, fewest -6 (the dummy counts as a third player)"
    assert {k: v for k, v in card_values(2, 3).items() if k != "pudding"} == {
        k: v for k, v in CARD_VALUES.items() if k != "pudding"
    }


def test_the_help_in_the_dummy_variant_gives_the_dummys_pudding_rule() -> None:  # R15
    state = new_game(GameConfig(2, Variant.DUMMY), 4)
    act = act_message(state, 0, [], None)
    assert act.controller is not None and len(act.tableaus) == 3
    person = Person("?", "q")
    with pytest.raises(LeaveTable):
        choose(act, person.ask, person.tell)
    assert "the dummy counts as a third player" in person.told[0]
    assert "no -6 with two players" not in person.told[0]
    # Two players without a dummy: no penalty.
    plain = act_message(new_game(GameConfig(2, Variant.STANDARD), 4), 0, [], None)
    person = Person("?", "q")
    with pytest.raises(LeaveTable):
        choose(plain, person.ask, person.tell)
    assert "no -6 with two players" in person.told[0]


def test_the_end_of_a_dummy_game_scores_puddings_with_the_penalty() -> None:  # R12, R15
    screen, buffer = _screen()
    screen.names, screen.seat, screen.players, screen.seats = ["human", "greedy", "dummy"], 0, 2, 3
    over = GameOver(
        id=30, game_id="g", scores=[40, 41, 20], puddings=[3, 1, 0], ranks=[2, 1, 3], faults={}, reason="complete",
        last_action=None,
        events=[GameEnd(pudding_points=[6, 0, -6], scores=[40, 41, 20], puddings=[3, 1, 0], ranks=[2, 1, 3])],
    )
    screen.game_over(over)
    shown = " ".join(buffer.getvalue().split())
    assert "Puddings scored (most +6, fewest -6 (the dummy counts as a third player))" in shown
