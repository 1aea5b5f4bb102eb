"""`arena store`: rebuild the results store from the replay files, and move its secret
deal key (export, import); the store package (its opening, lock and rebuild) does the work."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.cli.console import HELP, busy, err, out, say_waiting
from arena.cli.options import JsonOption, ResultsArgument

store_app = typer.Typer(
    help="The results store (RESULTS/arena.db): rebuild it from the replay files, or move its secret deal key.",
    no_args_is_help=True,
    **HELP,
)
store_key_app = typer.Typer(
    help="The store's secret deal key: every deal, set id and card id of its games is keyed with it.",
    no_args_is_help=True,
    **HELP,
)
store_app.add_typer(store_key_app, name="key")


@store_app.command("rebuild")
def store_rebuild_command(
    results: ResultsArgument = Path("results"),
    json_output: JsonOption = False,
) -> None:
    """Make RESULTS/arena.db again from the replay files (every replay re-simulated), e.g.
    after it was damaged: the old file is moved aside, never deleted; what could not be
    recovered is listed. Holds the results folder like a run (waits for one going on)."""
    from arena.cli.render_lines import print_interrupted, print_rebuilt
    from arena.store.rebuild import rebuild_store

    try:
        with busy("rebuilding the store from the replays…", shown=not json_output):
            report = rebuild_store(results, on_wait=say_waiting)
    except KeyboardInterrupt:
        print_interrupted(err, "the store")
        raise typer.Exit(130) from None
    print_rebuilt(out, err, report, json_output=json_output)
    if report.not_recovered or report.lost:  # (a lost meta table is said above: the games are all there)
        raise typer.Exit(1)


@store_key_app.command("export")
def store_key_export_command(
    results: ResultsArgument = Path("results"),
) -> None:
    """Print the store's deal key (64 hex digits). Keep it secret: whoever has it can compute every
    deal of the store's games. `arena store key import` puts it into a fresh results folder, whose
    runs then play the very same games with the same --seed."""
    from arena.cli.render_lines import print_deal_key
    from arena.store.opening import open_store

    # Read-only first (a read-only folder's key can be exported too); a store without a key
    # yet is opened to make one.
    with open_store(results, create=False, read_only=True) as store:
        key = store.stored_deal_key()
    if key is None:
        with open_store(results, create=False) as store:
            key = store.deal_key()
    print_deal_key(key)


@store_key_app.command("import")
def store_key_import_command(
    key: Annotated[str, typer.Argument(help="A deal key, as `arena store key export` printed it.", metavar="KEY")],
    results: Annotated[Path, typer.Argument(help="The results folder (made if missing).", metavar="RESULTS")] = Path("results"),
) -> None:
    """Make KEY the deal key of the store in RESULTS: only a store with no games yet (or a new one).
    Holds the results folder like a run (waits for one going on, then checks its games)."""
    from arena.cli.render_lines import print_interrupted, print_key_imported
    from arena.store.database import parse_deal_key
    from arena.store.lock import results_lock
    from arena.store.opening import open_store

    parse_deal_key(key, "the key to import")  # checked before any folder is made
    # A run reads the key once, under this lock, and deals every game with it: replacing it
    # under a run would record games dealt with a key gone from the store.
    try:
        with results_lock(results, "arena store key import", on_wait=say_waiting), open_store(results) as store:
            store.import_deal_key(key)
    except KeyboardInterrupt:
        print_interrupted(err, "the deal key")
        raise typer.Exit(130) from None
    print_key_imported(err, store.path)
