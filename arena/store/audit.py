"""The audit of replay files (`arena verify`): each re-simulated from its seed and plays, and,
in a results folder, checked against the game's row in the store (seats, bots, outcome)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from arena.errors import ArenaError
from arena.game.replay import ReplayError, fault_counts, iter_replays, read_replay
from arena.game.verify import check_game_id, check_recorded_game, verify_replay
from arena.store.database import DB_NAME, GameRow, Store
from arena.store.errors import StoreError
from arena.store.opening import open_store

#: One file's verdict: the file, the failure's kind ("" when it verifies, "unreadable" or
#: "differs"), the failure's message naming the file, and a note.
Verdict = tuple[str, str, str, str]


class Audit:
    """The replay files under a target, each verified as it is iterated (:func:`verify_file`);
    ``in_store`` says whether they lie in a results folder, whose rows they are checked against."""

    def __init__(self, files: list[Path], store: tuple[Store, dict[str, GameRow]] | None) -> None:
        self.files = files
        self.store = store
        self.in_store = store is not None

    def __iter__(self) -> Iterator[Verdict]:
        for file in self.files:
            yield (str(file), *verify_file(file, self.store))


@contextlib.contextmanager
def open_audit(target: Path) -> Iterator[Audit]:
    """The audit of ``target`` (a replay file, or a folder searched recursively), with the
    results store it lies in opened read-only, closed on exit. Raises :class:`ArenaError`
    for a target that holds no replay or a store that cannot be read."""
    try:
        files = iter_replays(target)
    except ReplayError as exc:
        raise ArenaError(str(exc)) from None
    store = _results_store_of(target)
    try:
        yield Audit(files, store)
    finally:
        if store is not None:
            store[0].close()


def _results_store_of(target: Path) -> tuple[Store, dict[str, GameRow]] | None:
    """The results store ``target`` lies in (the folder itself, or the one holding its
    ``replays/``), with every game row by id; None outside a results folder."""
    here = target.absolute() if target.is_dir() else target.absolute().parent
    for root in (here, *list(here.parents)[:3]):
        if (root / DB_NAME).is_file():
            try:
                store = open_store(root, create=False, read_only=True)
            except StoreError as exc:
                raise ArenaError(str(exc)) from None
            return store, {g.id: g for g in store.games(status=None)}
    return None


def verify_file(file: Path, store: tuple[Store, dict[str, GameRow]] | None) -> tuple[str, str, str]:
    """``("", "", note)`` for a replay that verifies (and matches its store row, if any);
    else the failure's kind (unreadable or differs) and its message naming the file."""
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
